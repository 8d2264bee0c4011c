package org.tornadomla.cli;

import org.tornadomla.MlaException;
import picocli.CommandLine;
import picocli.CommandLine.Command;

import java.io.PrintWriter;

/** The {@code mla} command line. Exit codes: 0 success, 2 bad input or usage (one line on stderr). */
@Command(name = "mla", mixinStandardHelpOptions = true, version = "TornadoMLA 0.1.0",
        description = "DeepSeek-V3 Multi-head Latent Attention on the JVM and on TornadoVM devices.",
        subcommands = {DemoCommand.class, RunLayerCommand.class, BenchCommand.class, KvMemoryCommand.class, CacheErrorCommand.class, RankCommand.class, LadderCommand.class, DevicesCommand.class, CheckCommand.class, GpuReportCommand.class, CommandLine.HelpCommand.class})
public final class MlaCommand implements Runnable {
    /** Exit code for bad input: wrong shapes, missing tensors, invalid configs, bad options. */
    public static final int BAD_INPUT = 2;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /** A command line whose errors end as one "mla: error: ..." line and exit code 2. */
    public static CommandLine commandLine(PrintWriter out, PrintWriter err) {
        CommandLine cl = new CommandLine(new MlaCommand());
        cl.setOut(out);
        cl.setErr(err);
        cl.setExecutionExceptionHandler((ex, cmd, parsed) -> {
            if (ex instanceof MlaException) {
                cmd.getErr().println("mla: error: " + ex.getMessage());
                cmd.getErr().flush();
                return BAD_INPUT;
            }
            throw ex;
        });
        cl.setParameterExceptionHandler((ex, args) -> {
            ex.getCommandLine().getErr().println("mla: error: " + ex.getMessage() + " (see: mla " 
                    + ex.getCommandLine().getCommandName() + " --help)");
            return BAD_INPUT;
        });
        return cl;
    }

    public static void main(String[] args) {
        PrintWriter out = new PrintWriter(System.out, true);
        PrintWriter err = new PrintWriter(System.err, true);
        System.exit(commandLine(out, err).execute(args));
    }
}
