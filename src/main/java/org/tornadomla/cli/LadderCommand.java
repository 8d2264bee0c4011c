package org.tornadomla.cli;

import org.tornadomla.MlaException;
import org.tornadomla.backends.Backends;
import org.tornadomla.graph.GraphExecutor;
import org.tornadomla.ladder.LadderSetup;
import org.tornadomla.ladder.LadderDocs;
import org.tornadomla.ladder.LadderRun;
import org.tornadomla.ladder.Steps;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/** Runs the kernel ladder (docs/ladder/): every step on the same problem, checked against step 1, timed. */
@Command(name = "ladder", mixinStandardHelpOptions = true,
        description = "Run the steps of the kernel ladder (docs/ladder/) on the same decode step of the attention core: "
                + "max abs difference from step 1 (step 9, sparse: from step 1 over its selection), ms per decode step, bytes read from the cache.")
public final class LadderCommand implements Callable<Integer> {
    @Option(names = "--step", description = "run only this step (1-9)")
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

    @Option(names = "--docs", description = "measure every backend this JVM has (java-reference, java-fast, tornado) and write "
            + "docs/ladder/measured.csv and the numbers quoted in docs/ladder and the kernel class headers (run from the repository root)")
    boolean docs;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        int steps = Steps.all().size();
        if (step != null && (step < 1 || step > steps)) throw new MlaException("--step must be 1 … " + steps + ", found " + step);
        if (heads < 1 || context < 1) throw new MlaException("--heads and --context must be >= 1");
        if (!(budgetMs >= 0) || budgetMs > 3.6e6) throw new MlaException("--budget-ms must be in 0 … 3600000 (0: no timing), found " + budgetMs);
        LadderSetup s = new LadderSetup(heads, context, 42);
        if (docs) return writeDocs(out, s);
        boolean tornado = KernelOptions.isTornado(backend);
        String name = KernelOptions.withDevice(backend, device);
        if (step != null && !tornado && Steps.all().get(step - 1).tornadoOnly()) {
            throw new MlaException("step " + step + " (" + Steps.all().get(step - 1).title() + ") runs only on TornadoVM: add --backend tornado");
        }
        try (GraphExecutor plain = Backends.create(name, new Backends.Options(0, null, false));
             GraphExecutor kernelContext = tornado ? Backends.create(name, new Backends.Options(0, null, true)) : null) {
            out.printf("kernel ladder: one decode step of the attention core, H=%d, T=%d, d_c 512, d_r 64, on %s%n", heads, context, plain.device());
            out.printf("%-4s %-66s %14s %10s %12s%n", "step", "", "max|Δ| step 1", "ms/step", "bytes read");
            LadderRun.run(name, plain, kernelContext, s, step, budgetMs, r -> print(out, r));
            if (step == null || step == 9) out.printf("(step 9 against its own reference: step 1's kernels with the positions its indexer did not select masked)%n");
        }
        return 0;
    }

    private static void print(PrintWriter out, LadderRun.Result r) {
        String title = Steps.all().get(r.step() - 1).title();
        if (Double.isNaN(r.maxAbsDiff())) {
            out.printf("%-4d %-66s %14s %10s %12s%n", r.step(), title, "-", "tornado only", "-");
        } else {
            out.printf("%-4d %-66s %14.2e %10.3f %,12.0f%n", r.step(), title, r.maxAbsDiff(), r.ms(), r.bytesRead());
        }
        out.flush();
    }

    /** One measured run on every backend, then measured.csv and the regions that quote it ({@link LadderDocs}). */
    private Integer writeDocs(PrintWriter out, LadderSetup s) {
        if (step != null) throw new MlaException("--docs measures every step; leave out --step");
        if (!Files.isRegularFile(LadderDocs.FILES.get(0))) {
            throw new MlaException("--docs writes the repository's docs: run it from the repository root (no " + LadderDocs.FILES.get(0) + " here)");
        }
        // every backend before anything is measured: the pages hold a column per backend, and a run without one would
        // replace its figures (TornadoVM's, measured on another machine) with dashes
        Map<String, GraphExecutor> plain = new LinkedHashMap<>();
        List<LadderRun.Result> results = new ArrayList<>();
        String tornadoDevice = "no TornadoVM";
        try {
            for (String b : LadderDocs.BACKENDS) {
                try {
                    plain.put(b, Backends.create(b, new Backends.Options(0, null, false)));
                } catch (MlaException e) {
                    throw new MlaException("--docs rewrites the figures of every backend (" + String.join(", ", LadderDocs.BACKENDS) + ") and " + b
                            + " cannot run here (" + e.getMessage() + "); nothing was written. Without --docs the ladder runs on one backend");
                }
            }
            for (Map.Entry<String, GraphExecutor> e : plain.entrySet()) {
                String b = e.getKey();
                out.printf("%s: %s%n", b, e.getValue().device());
                if (b.equals("tornado")) {
                    tornadoDevice = e.getValue().device();
                    try (GraphExecutor kernelContext = Backends.create(b, new Backends.Options(0, null, true))) {
                        results.addAll(LadderRun.run(b, e.getValue(), kernelContext, s, null, budgetMs, r -> print(out, r)));
                    }
                } else {
                    results.addAll(LadderRun.run(b, e.getValue(), null, s, null, budgetMs, r -> print(out, r)));
                }
            }
        } finally {
            for (GraphExecutor ex : plain.values()) ex.close();
        }
        String machine = String.format(Locale.ROOT, "%s, %s, %d cores, Java %s, %s; ./mla ladder --docs: H=%d, T=%d, %.0f ms per step, "
                        + "the mean of the timed runs after warm-up", LocalDate.now(ZoneOffset.UTC), org.tornadomla.bench.Charts.cpuModel(), Runtime.getRuntime().availableProcessors(),
                Runtime.version().feature(), tornadoDevice, heads, context, budgetMs);
        for (Path p : LadderDocs.write(Path.of(""), new LadderDocs.Measured(machine, results))) out.printf("wrote %s%n", p);
        return 0;
    }
}
