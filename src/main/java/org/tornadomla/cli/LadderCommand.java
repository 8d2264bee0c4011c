package org.tornadomla.cli;

import org.tornadomla.MlaException;
import org.tornadomla.backends.Backends;
import org.tornadomla.graph.GraphExecutor;
import org.tornadomla.ladder.LadderSetup;
import org.tornadomla.ladder.LadderStep;
import org.tornadomla.ladder.Steps;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintWriter;
import java.util.concurrent.Callable;

/** Runs the kernel ladder (docs/ladder/): every step on the same problem, checked against step 1, timed. */
@Command(name = "ladder", mixinStandardHelpOptions = true,
        description = "Run the steps of the kernel ladder (docs/ladder/) on the same decode step of the attention core: "
                + "max abs difference from step 1, ms per decode step, bytes read from the cache.")
public final class LadderCommand implements Callable<Integer> {
    @Option(names = "--step", description = "run only this step (1-8)")
    Integer step;

    @Option(names = "--backend", defaultValue = "java-reference", description = "java-reference, java-fast or tornado (default: ${DEFAULT-VALUE})")
    String backend;

    @Option(names = "--device", description = "TornadoVM device B:D")
    String device;

    @Option(names = "--heads", defaultValue = "16", description = "heads (default: ${DEFAULT-VALUE})")
    int heads;

    @Option(names = "--context", defaultValue = "1024", description = "cached tokens (default: ${DEFAULT-VALUE})")
    int context;

    @Option(names = "--budget-ms", defaultValue = "500", description = "timed milliseconds per step (default: ${DEFAULT-VALUE})")
    double budgetMs;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        if (step != null && (step < 1 || step > 8)) throw new MlaException("--step must be 1 … 8, found " + step);
        if (heads < 1 || context < 1) throw new MlaException("--heads and --context must be >= 1");
        if (!(budgetMs >= 0) || budgetMs > 3.6e6) throw new MlaException("--budget-ms must be in 0 … 3600000 (0: no timing), found " + budgetMs);
        boolean tornado = backend.equals("tornado");
        if (device != null && !tornado) throw new MlaException("--device " + device + " needs --backend tornado (the " + backend + " backend runs on the JVM)");
        String name = device != null ? "tornado:" + device : backend;
        GraphExecutor plain = Backends.create(name, new Backends.Options(0, null, false));
        GraphExecutor kernelContext = tornado ? Backends.create(name, new Backends.Options(0, null, true)) : null;
        LadderSetup s = new LadderSetup(heads, context, 42);
        out.printf("kernel ladder: one decode step of the attention core, H=%d, T=%d, d_c 512, d_r 64, on %s%n", heads, context, plain.device());
        out.printf("%-4s %-66s %14s %10s %12s%n", "step", "", "max|Δ| step 1", "ms/step", "bytes read");
        float[] reference = run(Steps.all().get(0), s, plain, 0)[0];
        for (LadderStep st : Steps.all()) {
            if (step != null && st.number() != step) continue;
            if (st.tornadoOnly() && !tornado) {
                out.printf("%-4d %-66s %14s %10s %12s%n", st.number(), st.title(), "-", "tornado only", "-");
                continue;
            }
            float[][] r = run(st, s, st.tornadoOnly() ? kernelContext : plain, budgetMs);
            double diff = 0;
            for (int i = 0; i < reference.length; i++) diff = Math.max(diff, Math.abs((double) r[0][i] - reference[i]));
            out.printf("%-4d %-66s %14.2e %10.3f %,12.0f%n", st.number(), st.title(), diff, r[1][0], st.bytesRead(s));
            out.flush();
        }
        plain.close();
        if (kernelContext != null) kernelContext.close();
        return 0;
    }

    /** {output, {ms per step}}: one run for the output, then timed runs for {@code budgetMs} (at least 2). */
    private static float[][] run(LadderStep st, LadderSetup s, GraphExecutor ex, double budgetMs) {
        LadderStep.Built b = st.build(s);
        ex.execute(b.graph());
        float[] out = b.out().clone();
        double ms = Double.NaN;
        if (budgetMs > 0) {
            int n = 0;
            long t0 = System.nanoTime();
            do {
                ex.execute(b.graph());
                n++;
            } while (n < 2 || (System.nanoTime() - t0) / 1e6 < budgetMs);
            ms = (System.nanoTime() - t0) / 1e6 / n;
        }
        ex.release(b.graph());
        return new float[][] {out, {(float) ms}};
    }
}
