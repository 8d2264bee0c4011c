package org.tornadomla.cli;

import org.tornadomla.internal.Messages;
import org.tornadomla.MlaException;
import picocli.CommandLine;
import picocli.CommandLine.Command;

import java.io.PrintWriter;

/**
 * The {@code mla} command line. Exit codes: 0 success, 2 bad input, bad usage or too little memory (one line
 * on stderr), 1 an internal error (a bug: one line too; with MLA_DEBUG=1 in the environment, its stack trace).
 */
@Command(name = "mla", mixinStandardHelpOptions = true, versionProvider = MlaCommand.Version.class,
        description = "DeepSeek-V3 Multi-head Latent Attention on the JVM and on TornadoVM devices.",
        subcommands = {DemoCommand.class, RunLayerCommand.class, ExampleCommand.class, BenchCommand.class, KvMemoryCommand.class, PdDemoCommand.class, PdDecodeCommand.class, StoreBenchCommand.class, CacheErrorCommand.class, RankCommand.class, LadderCommand.class, DevicesCommand.class, CheckCommand.class, GpuReportCommand.class, TuneCommand.class, TuneProbeCommand.class, CommandLine.HelpCommand.class})
public final class MlaCommand implements Runnable {
    /** Exit code for bad input: wrong shapes, missing tensors, invalid configs, bad options. */
    public static final int BAD_INPUT = 2;
    /** Exit code for an unexpected exception: a bug of this program, reported in one line. */
    public static final int INTERNAL_ERROR = 1;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /**
     * A command line whose errors end as one "mla: error: ..." line and exit code 2: messages are made one line
     * of printable text (org.tornadomla.internal.Messages.oneLine), whatever the user typed or a file held.
     */
    public static CommandLine commandLine(PrintWriter out, PrintWriter err) {
        CommandLine cl = new CommandLine(new MlaCommand());
        GroupedHelp.install(cl.getSubcommands().get("bench"), BenchCommand.HELP_GROUPS);
        cl.setOut(out);
        cl.setErr(err);
        cl.setExecutionExceptionHandler((thrown, cmd, parsed) -> {
            cmd.getOut().flush();
            // picocli may hand an Error over wrapped in its ExecutionException; one it lets through, execute() catches
            Throwable ex = thrown instanceof CommandLine.ExecutionException && thrown.getCause() != null ? thrown.getCause() : thrown;
            return failure(cmd.getErr(), ex);
        });
        cl.setParameterExceptionHandler((ex, args) -> fail(ex.getCommandLine().getErr(), "mla: error: " + what(ex)
                + didYouMean(ex) + " (see: " + ex.getCommandLine().getCommandSpec().qualifiedName() + " --help)", BAD_INPUT));
        return cl;
    }

    /**
     * What was wrong, in the project's words where picocli's would show: a first word that is no command says "unknown
     * command 'x'" and lists the commands --help shows (hidden ones not); an option the command does not have, "unknown
     * option '--x'" (picocli would list it with the arguments after it); any other word left over, "unexpected argument
     * 'x'"; required options not given, "missing --x, --y"; an option typed without its value, "--x needs a value"; a
     * value that is not a number of a numeric option, "--x must be a whole number, found 'v'" (or "a number"). Anything
     * else keeps picocli's message.
     */
    static String what(CommandLine.ParameterException ex) {
        if (ex instanceof CommandLine.UnmatchedArgumentException u && !u.getUnmatched().isEmpty()) {
            String first = u.getUnmatched().get(0);
            String msg = String.valueOf(u.getMessage());
            if (ex.getCommandLine().getParent() == null && !ex.getCommandLine().getSubcommands().isEmpty() && !first.startsWith("-")
                    && (msg.contains("at index 0") || msg.contains("from index 0"))) {
                return "unknown command " + Messages.quote(first) + " (commands: " + String.join(", ", commands(ex.getCommandLine())) + ")";
            }
            if (first.startsWith("-") && first.length() > 1 && !isNumber(first)) {
                return "unknown option " + Messages.quote(first.contains("=") ? first.substring(0, first.indexOf('=')) : first);
            }
            return "unexpected argument " + Messages.quote(first);
        }
        if (ex instanceof CommandLine.MissingParameterException m && !m.getMissing().isEmpty()) {
            // an option typed without its value: picocli says "Missing required parameter for option" at the end of the
            // line and "Expected parameter for option" where another option follows
            String msg = String.valueOf(m.getMessage());
            if (msg.startsWith("Missing required parameter for option") || msg.startsWith("Expected parameter for option")) {
                return name(m.getMissing().get(0)) + " needs a value";
            }
            java.util.List<String> names = m.getMissing().stream().map(MlaCommand::name).toList();
            return "missing " + String.join(", ", names);
        }
        if (ex.getArgSpec() != null && ex.getValue() != null && elementType(ex.getArgSpec()) == java.nio.file.Path.class
                && String.valueOf(ex.getMessage()).contains("InvalidPathException")) {
            // a name with é or ü under an ASCII locale (C, POSIX): the JVM encodes file names in the locale's charset
            return name(ex.getArgSpec()) + ": " + Messages.quote(ex.getValue()) + " is not a file name this JVM can encode in its "
                    + "file-name character set (" + System.getProperty("sun.jnu.encoding") + ", from the locale); run it under a UTF-8 "
                    + "locale, e.g. LC_ALL=C.UTF-8 (./mla does where the system has one)";
        }
        String expected = ex.getArgSpec() == null || ex.getValue() == null ? null : expected(elementType(ex.getArgSpec()));
        if (expected != null) {
            return name(ex.getArgSpec()) + " must be " + expected + ", found " + Messages.quote(ex.getValue());
        }
        return ex.getMessage();
    }

    /** An option's longest name (--input), or a positional parameter's label (&lt;dir&gt;). */
    private static String name(CommandLine.Model.ArgSpec a) {
        return a instanceof CommandLine.Model.OptionSpec o ? o.longestName() : a.paramLabel();
    }

    /** The type of one value of the option: an array's or a list's element type, else the option's type. */
    private static Class<?> elementType(CommandLine.Model.ArgSpec a) {
        Class<?> t = a.type();
        if (t.isArray()) return t.getComponentType();
        if (java.util.Collection.class.isAssignableFrom(t) && a.auxiliaryTypes().length > 0) return a.auxiliaryTypes()[0];
        return t;
    }

    /** What a value of this type looks like, for a value picocli could not convert; null for other types. */
    private static String expected(Class<?> type) {
        // the option's own range is checked where it is used, and named there
        if (type == int.class || type == Integer.class || type == long.class || type == Long.class) return "a whole number";
        if (type == double.class || type == Double.class || type == float.class || type == Float.class) return "a number";
        return null;
    }

    /** The commands --help lists, in its order: hidden ones (pd-decode, started by pd-demo) left out. */
    static java.util.List<String> commands(CommandLine cl) {
        java.util.List<String> out = new java.util.ArrayList<>();
        for (var e : cl.getSubcommands().entrySet()) {
            if (!e.getValue().getCommandSpec().usageMessage().hidden()) out.add(e.getKey());
        }
        return out;
    }

    private static boolean isNumber(String s) {
        try {
            Double.parseDouble(s);
            return true;
        } catch (NumberFormatException e) {
            return false;
        }
    }

    /** " (did you mean demo?)" for a mistyped command or option picocli has a near match for, else "". */
    static String didYouMean(CommandLine.ParameterException ex) {
        if (!(ex instanceof CommandLine.UnmatchedArgumentException u) || u.getUnmatched().isEmpty()) return "";
        String typed = u.getUnmatched().get(0);
        java.util.List<String> hidden = new java.util.ArrayList<>(ex.getCommandLine().getSubcommands().keySet());
        hidden.removeAll(commands(ex.getCommandLine()));
        // picocli's candidates, narrowed to those nearest to what was typed (edit distance); never a hidden command
        int best = Integer.MAX_VALUE;
        java.util.List<String> nearest = new java.util.ArrayList<>();
        for (String c : u.getSuggestions()) {
            if (hidden.contains(c)) continue;
            int d = editDistance(typed, c);
            if (d < best) {
                best = d;
                nearest.clear();
            }
            if (d == best) nearest.add(c);
        }
        return nearest.isEmpty() || best > Math.max(2, typed.length() / 3) ? "" : " (did you mean " + String.join(" or ", nearest) + "?)";
    }

    private static int editDistance(String a, String b) {
        int[] prev = new int[b.length() + 1], cur = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) prev[j] = j;
        for (int i = 1; i <= a.length(); i++) {
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                cur[j] = Math.min(Math.min(cur[j - 1], prev[j]) + 1, prev[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1));
            }
            int[] t = prev;
            prev = cur;
            cur = t;
        }
        return prev[b.length()];
    }

    /**
     * The version in the jar's manifest (the POM's version), for {@code mla --version}; on the module path, where a
     * package has no manifest attributes, the module's version (the jar plugin records the POM's version there too).
     */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = MlaCommand.class.getPackage().getImplementationVersion();
            if (v == null && MlaCommand.class.getModule().isNamed()) {
                v = MlaCommand.class.getModule().getDescriptor().rawVersion().orElse(null);
            }
            return new String[] {"TornadoMLA " + (v == null ? "(version unknown: not run from a jar)" : v)};
        }
    }

    private static int fail(PrintWriter err, String line, int code) {
        err.println(Messages.oneLine(line));
        err.flush();
        return code;
    }

    public static void main(String[] args) {
        // numbers print with a dot in every locale, as the CSVs and tables do (a German or Turkish locale printed
        // "20,1 MB" beside a table's "20.1"; PrintWriter.printf follows the default locale, not only its FORMAT
        // category), and text case-folds as in English (Turkish folds "I" to a dotless "ı")
        java.util.Locale.setDefault(java.util.Locale.ROOT);
        PrintWriter out = new PrintWriter(System.out, true);
        PrintWriter err = new PrintWriter(System.err, true);
        System.exit(execute(commandLine(out, err), args));
    }

    /**
     * Runs the command line; an Error that picocli lets through (it wraps Exceptions only) ends as one line
     * too: out of memory as bad input (exit 2), anything else as an internal error (exit 1).
     */
    static int execute(CommandLine cl, String... args) {
        try {
            return cl.execute(args);
        } catch (Error e) {
            return failure(cl.getErr(), e);
        }
    }

    /** One line and an exit code for what a command threw: bad input and too little heap 2, anything else 1. */
    private static int failure(PrintWriter err, Throwable ex) {
        if (ex instanceof MlaException) return fail(err, "mla: error: " + ex.getMessage(), BAD_INPUT);
        if (ex instanceof OutOfMemoryError) {
            return fail(err, "mla: error: out of memory (" + ex.getMessage() + "): give the JVM more heap "
                    + "(MLA_JAVA_OPTS=-Xmx16g for ./mla) or ask for less", BAD_INPUT);
        }
        if (System.getenv("MLA_DEBUG") != null) ex.printStackTrace(err);
        return fail(err, "mla: internal error: " + ex + " (a bug; MLA_DEBUG=1 prints the stack trace)", INTERNAL_ERROR);
    }
}
