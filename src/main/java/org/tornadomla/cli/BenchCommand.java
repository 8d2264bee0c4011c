package org.tornadomla.cli;

import org.tornadomla.MlaException;
import org.tornadomla.backends.Backends;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.bench.BenchChart;
import org.tornadomla.bench.DecodeBench;
import org.tornadomla.bench.LayerBench;
import org.tornadomla.bench.Roofline;
import org.tornadomla.bench.Timing;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.internal.CacheStorage;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.fast.FastExecutor;
import org.tornadomla.graph.GraphExecutor;
import org.tornadomla.graph.JvmExecutor;
import org.tornadomla.io.OutputFiles;
import org.tornadomla.weights.WeightDtype;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * A quick cross-device comparison of one decode step of the attention core (DeepSeek-V3 latent geometry):
 * ms per step, GB/s of latent read and GFLOP/s per backend and shape, each backend's output checked
 * against the reference kernels. For publication-grade numbers use the JMH benchmarks in benchmarks/.
 * {@code --sparse} times DeepSeek-V3.2's sparse attention against dense on the whole layer instead ({@link org.tornadomla.bench.SparseBench}).
 */
@Command(name = "bench", mixinStandardHelpOptions = true,
        customSynopsis = {"mla bench [--backend B,...] [--heads H,...] [--batch B,...] [--context T,...]",
                "          [--path P,...] [--dtype D,...] [OPTION...]"},
        description = "Time one decode step of the MLA attention core (absorb_q … unabsorb_v over the latent cache) "
                + "on each backend and shape; print a table, optionally write a CSV and a chart, and compare with "
                + "this machine's measured FMA throughput and memory bandwidth (--roofline).",
        footerHeading = "%nExamples:%n",
        footer = {
                "  every backend, a few shapes (minutes on 2 cores):",
                "    mla bench --quick",
                "  one shape, each task's time and its %% of this CPU's FMA peak:",
                "    mla bench --backend java-fast --heads 128 --batch 1 --context 4096 \\",
                "        --path absorbed --roofline --breakdown",
                "  a CSV and a chart:",
                "    mla bench --quick --csv out.csv --chart out.png",
                "  DeepSeek-V3.2's sparse attention against dense:",
                "    mla bench --sparse --quick"})
public final class BenchCommand implements Callable<Integer> {
    /** --help's headings and the options under each (GroupedHelp); an option not named here shows under "Other options:". */
    static final Map<String, List<String>> HELP_GROUPS = groups(
            "What to time (the attention core's shapes: every combination of the lists):",
            List.of("--backend", "--device", "--heads", "--batch", "--context", "--path", "--dtype", "--weights-dtype", "--paged", "--block-size",
                    "--quick", "--grid"),
            "How long and what is checked:",
            List.of("--budget-ms", "--time-limit-s", "--check-limit", "--reference-limit", "--roofline", "--breakdown"),
            "Output:",
            List.of("--csv", "--chart", "--transfers-csv"),
            "The whole layer as well (DeepSeek-V3 geometry):",
            List.of("--layer-csv", "--layer-only", "--layer-hidden", "--layer-batch", "--layer-context", "--layer-dtype", "--layer-path"),
            "Other modes, instead of the attention core's shapes:",
            List.of("--sparse", "--preset", "--topk", "--mixed", "--offload", "--compare-paged"),
            "Help:",
            List.of("--help", "--version"));

    private static Map<String, List<String>> groups(Object... headingThenNames) {
        Map<String, List<String>> m = new LinkedHashMap<>();
        for (int i = 0; i < headingThenNames.length; i += 2) {
            @SuppressWarnings("unchecked") List<String> names = (List<String>) headingThenNames[i + 1];
            m.put((String) headingThenNames[i], names);
        }
        return m;
    }

    /**
     * The CSV's columns: the first nine are {@link #CSV_HEADER_SHORT}'s; then the median step (the mean is ms_per_step),
     * where it ran (the CPU and executor, or the TornadoVM device; commas written as semicolons), the day (UTC), and
     * whether the JIT was waited for ({@code no} with a --budget-ms below 100: such a row checks that the shape runs).
     */
    static final String CSV_HEADER = org.tornadomla.bench.GpuReport.BENCH_HEADER_SHORT + org.tornadomla.bench.GpuReport.BENCH_HEADER_MORE;
    /** The nine columns of bench's CSV before 2026-12-07, which the GPU kit's PyTorch and libtorch CSVs keep (GpuReport reads both). */
    static final String CSV_HEADER_SHORT = org.tornadomla.bench.GpuReport.BENCH_HEADER_SHORT;
    /** Seconds between the lines that say a shape is still being timed (a step of the reference at a large shape takes seconds). */
    private static final double PROGRESS_S = 15;

    static final String TRANSFERS_HEADER = "backend,path,dtype,batch,heads,context,kernel_ms,bytes_to_device,bytes_to_host";

    @Option(names = "--quick", description = "a small grid and short timings: about 2 minutes on 2 cores, 4 with TornadoVM on PoCL")
    boolean quick;

    @Option(names = "--grid", description = "flashmla: FlashMLA's decode benchmark shapes, widened as the GPU kit runs them: batch "
            + "1,2,4,8,16,32,64,128 x context 1024,2048,4096,8192,16384 x heads 128,16 x bf16,f32 caches, tiled path, 100 ms per shape "
            + "(with --quick: batch 1,2 x context 256,1024); --batch/--context/--heads/--dtype/--path still override")
    String grid;

    @Option(names = "--time-limit-s", description = "start no new shape after this many seconds from the command's start (measuring --roofline's limits, about 7 s, counts); the rest is listed as skipped, and the CSV holds what ran (its header alone if nothing did)")
    Double timeLimitS;

    @Option(names = "--check-limit", description = "check outputs only on shapes of at most this many GFLOP per step "
            + "(default: every shape; 20 with --grid)")
    Double checkLimit;

    @Option(names = "--transfers-csv", description = "also run one step per shape with TornadoVM's profiler and write its kernel ms and "
            + "bytes copied in and out (" + TRANSFERS_HEADER + ")")
    Path transfersCsv;

    @Option(names = "--layer-csv", description = "also time the decode step of the whole layer (DeepSeek-V3 geometry) and write "
            + LayerBench.CSV_HEADER)
    Path layerCsv;

    @Option(names = "--layer-only", description = "time only the whole layer (needs --layer-csv): no attention-core shapes")
    boolean layerOnly;

    @Option(names = "--layer-hidden", description = "whole layer: hidden size (default: 7168, DeepSeek-V3's; 1024 with --quick)")
    Integer layerHidden;

    @Option(names = "--layer-batch", split = ",", description = "whole layer: batches (default: 1,32,128; 1,2 with --quick)")
    List<Integer> layerBatches;

    @Option(names = "--layer-context", split = ",", description = "whole layer: contexts (default: 1024,4096,16384; 64,256 with --quick)")
    List<Integer> layerContexts;

    @Option(names = "--layer-dtype", split = ",", description = "whole layer: cache dtypes (default: bf16,f32; f32 with --quick)")
    List<String> layerDtypes;

    @Option(names = "--layer-path", defaultValue = "tiled", description = "whole layer: attention path (default: ${DEFAULT-VALUE})")
    String layerPath;

    @Option(names = {"--backends", "--backend"}, split = ",", description = "java-reference, java-fast, tornado (every TornadoVM device) "
            + "or tornado:B:D (default: all available)")
    List<String> backends;

    @Option(names = "--device", description = "a TornadoVM device B:D: the same as --backend tornado:B:D")
    String device;

    @Option(names = "--heads", split = ",", description = "head counts (default: 16,128)")
    List<Integer> heads;

    @Option(names = "--context", split = ",", description = "cached tokens per sequence (default: 1024,4096; 1024,4096,16384 without --quick)")
    List<Integer> contexts;

    @Option(names = "--batch", split = ",", description = "sequences (default: 1; 1,8 without --quick)")
    List<Integer> batches;

    @Option(names = "--dtype", split = ",", description = "cache dtypes (default: f32,bf16)")
    List<String> dtypes;

    @Option(names = "--path", split = ",", description = "absorbed, tiled (default: both)")
    List<String> paths;

    @Option(names = "--csv", arity = "0..1", fallbackValue = "-", paramLabel = "FILE",
            description = "write the results as CSV (" + CSV_HEADER + ") to FILE (folders made as needed; rewritten after every "
                    + "result, so a run stopped midway keeps what it measured); without FILE (or with -) to standard output "
                    + "once the run ends, the table and progress then going to standard error")
    String csvArg;
    /** --csv's file (null: none, or standard output when {@link #csvToStdout}). */
    private Path csv;
    private boolean csvToStdout;

    @Option(names = "--chart", description = "write a PNG chart: bars per backend per shape, this CPU's measured limits as lines where a JVM "
            + "backend runs (so it measures them, as --roofline does; with TornadoVM devices alone, no lines); folders made as needed")
    Path chart;

    @Option(names = "--roofline", description = "measure this CPU's FMA throughput and memory bandwidth (on the JVM's threads) and print "
            + "each java-reference and java-fast result as a percentage of them (a TornadoVM device has limits of its own: none printed)")
    boolean roofline;

    @Option(names = "--budget-ms", description = "timed milliseconds per backend and shape (default: 400 with --quick, 2000 without, "
            + "100 with --grid, 200 with --grid --quick)")
    Double budgetMs;

    @Option(names = "--paged", description = "attend over a paged cache (blocks handed out in a shuffled order, as in a pool that "
            + "has served many requests) instead of a contiguous one")
    boolean paged;

    @Option(names = "--block-size", description = "with --paged: tokens per block (default: " + LatentCache.DEFAULT_BLOCK_SIZE + ")")
    Integer blockSize;

    @Option(names = "--compare-paged", description = "time each shape over a contiguous and a paged cache (--block-size, "
            + "default 64) in alternating rounds in one process, and print both medians and best times and their ratio")
    boolean comparePaged;

    @Option(names = "--offload", description = "time the host tier instead: offload and restore of one sequence of a paged cache "
            + "(--batch sequences at --context, --dtype, blocks of --block-size): the bytes and GB/s a restore moves and what it adds "
            + "to a decode step of every sequence (docs/paged-cache.md)")
    boolean offload;

    @Option(names = "--mixed", description = "time a continuous-batching step of the whole layer instead: 6 sequences decode at "
            + "the first --context while 2 prompts prefill a chunk of 256 tokens, in one call; then each part alone "
            + "(hidden --layer-hidden, first --dtype, tiled path, fp8 weights)")
    boolean mixed;

    @Option(names = "--sparse", description = "time DeepSeek Sparse Attention instead (docs/sparse-attention.md): a decode step of the whole "
            + "layer of --preset, sparse (the indexer, its top-k, attention over the selected rows) against dense over the same cache, per "
            + "--batch (default 1,8,32; 1 with --quick) and --context (default 8192,16384,32768,65536,131072; 4096,8192 with --quick): ms per "
            + "step, the indexer's share (java backends), bytes read, the context at which sparse wins. Backends: java-fast unless --backend; "
            + "caches: --dtype (default fp8), weights: --weights-dtype (default fp8), path: --path (default tiled), --layer-hidden and "
            + "--heads shrink the layer, --topk sets index_topk, --breakdown lists the sparse step's slowest tasks")
    boolean sparse;

    @Option(names = "--preset", description = "with --sparse: the sparse config (default: deepseek-v3.2; glm-5 also has an indexer)")
    String preset;

    @Option(names = "--topk", description = "with --sparse: index_topk (default: the preset's, 2048 for deepseek-v3.2)")
    Integer topk;

    @Option(names = "--weights-dtype", description = "attention core: how kv_b_proj (read by absorb_q and unabsorb_v) is held: "
            + "f32, bf16 or fp8 (default: f32); other than f32 the CSV's backend reads e.g. java-fast/w-bf16")
    String weightsDtype;

    @Option(names = "--breakdown", description = "also print the mean ms of each task of the step (java backends), over a further set "
            + "of steps, half as many as were timed (at most 200); each task is timed on its own, so on small shapes, where a "
            + "task lasts microseconds, their sum can exceed the step; for the attention core on java-fast with more than one "
            + "thread also each thread's time in a task's parallel loops, so a thread that waited for another shows; with "
            + "--roofline also the GFLOP/s of each product task of the absorbed and tiled paths and its %% of the measured FMA peak")
    boolean breakdown;

    @Option(names = "--reference-limit", description = "run java-reference only on shapes of at most "
            + "this many GFLOP per step (default: 1.5; 0.1 with --grid); larger shapes are checked against java-fast")
    Double referenceLimit;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        csvToStdout = "-".equals(csvArg);
        try {
            csv = csvArg == null || csvToStdout ? null : Path.of(csvArg);
        } catch (java.nio.file.InvalidPathException e) {
            throw new MlaException("--csv needs a file path or -, found '" + csvArg + "' (" + e.getReason() + ")");
        }
        // with the CSV on standard output, everything else goes to standard error
        PrintWriter out = csvToStdout ? spec.commandLine().getErr() : spec.commandLine().getOut();
        if (grid != null && !grid.equals("flashmla")) throw new MlaException("--grid must be flashmla, found '" + grid + "'");
        if (layerOnly && layerCsv == null) throw new MlaException("--layer-only needs --layer-csv");
        // 0 is the GPU kit's "no time left": every shape listed as skipped, the CSV its header alone
        if (timeLimitS != null && (!(timeLimitS >= 0) || timeLimitS > 1e7)) {
            throw new MlaException("--time-limit-s must be in 0 … 1e7 seconds, found " + timeLimitS);
        }
        if ((offload ? 1 : 0) + (mixed ? 1 : 0) + (comparePaged ? 1 : 0) > 1) {
            throw new MlaException("--offload, --mixed and --compare-paged each time their own steps: give one of them");
        }
        if (blockSize != null && !paged && !comparePaged && !offload) throw new MlaException("--block-size " + blockSize + " needs --paged");
        if (blockSize != null && (blockSize < 1 || blockSize > (1 << 20))) throw new MlaException("--block-size must be 1 … 1048576 tokens, found " + blockSize);
        if (weightsDtype != null && (mixed || comparePaged || layerOnly)) {
            throw new MlaException("--weights-dtype applies to the attention-core shapes, not to --mixed, --compare-paged or --layer-only");
        }
        if (mixed || comparePaged || offload) {
            String own = mixed ? "--mixed" : comparePaged ? "--compare-paged" : "--offload";
            String[] names = {"--csv", "--chart", "--roofline", "--breakdown", "--grid", "--transfers-csv", "--layer-csv", "--layer-only"};
            boolean[] set = {csvArg != null, chart != null, roofline, breakdown, grid != null, transfersCsv != null, layerCsv != null, layerOnly};
            for (int i = 0; i < names.length; i++) {
                if (set[i]) throw new MlaException(names[i] + " applies to the attention-core shapes, not to " + own + " (which prints its own table)");
            }
        }
        if (layerOnly && grid != null) throw new MlaException("--grid names attention-core shapes, which --layer-only leaves out");
        if (sparse) return runSparse(out);
        if (preset != null || topk != null) throw new MlaException((preset != null ? "--preset" : "--topk") + " applies to --sparse only");
        if (offload) return runOffload(out);
        if (mixed) return runMixed(out);
        if (comparePaged) return runComparePaged(out);
        weights = weightsDtype == null ? WeightDtype.F32 : WeightDtype.parse(weightsDtype);
        boolean isGrid = grid != null;
        List<DecodeBench.Shape> shapes = layerOnly ? List.of() : shapes(isGrid);
        Map<String, GraphExecutor> executors = executors(out);
        double budget = budgetMs != null ? budgetMs : isGrid ? (quick ? 200 : 100) : quick ? 400 : 2000;
        if (!(budget >= 0) || budget > 3.6e6) throw new MlaException("--budget-ms must be in 0 … 3600000, found " + budget);
        double refLimit = referenceLimit != null ? referenceLimit : isGrid ? 0.1 : 1.5;
        if (!(refLimit >= 0) || Double.isInfinite(refLimit)) {
            throw new MlaException("--reference-limit must be a finite number >= 0, found " + refLimit);
        }
        double chkLimit = checkLimit != null ? checkLimit : isGrid ? 20 : Double.POSITIVE_INFINITY;
        checkOutputs(new String[] {"--csv", "--chart", "--transfers-csv", "--layer-csv"}, csv, chart, transfersCsv, layerCsv);
        checkOwnFiles();
        long t0 = System.nanoTime();
        String busy = Timing.busyHost();
        if (busy != null) out.println(busy);
        if (budget < Timing.COLD_MS) {
            out.printf(Locale.ROOT, "note: --budget-ms %.0f is below %.0f: a step is timed without waiting for the JIT, so the figures check "
                    + "that the shapes run rather than time them%n", budget, Timing.COLD_MS);
        }

        Roofline.Limits limits = null;
        // a chart draws this CPU's limits as lines beside the JVM backends' bars; with TornadoVM devices alone it has none
        boolean cpuRows = executors.values().stream().anyMatch(BenchCommand::onThisCpu);
        if (roofline || (chart != null && cpuRows)) {
            out.printf("measuring this machine's limits (FMA throughput, memory read bandwidth) ...%n");
            out.flush();
            limits = Roofline.measure();
            out.printf("limits: %.1f GFLOP/s FMA peak (%d threads, %d-bit vectors), %.1f GB/s memory read%n",
                    limits.gflopPerS(), limits.threads(), limits.vectorBits(), limits.gbPerS());
            if (executors.values().stream().anyMatch(ex -> !onThisCpu(ex))) {
                out.printf("  (this CPU's, on the JVM's threads: the TornadoVM rows get no percentage of them)%n");
            }
            out.println();
        }
        if (!shapes.isEmpty()) {
            out.printf("decode step of the attention core, DeepSeek-V3 latent (d_c 512, d_r 64, d_n = d_v 128); %d shape%s × %d backend%s%s%n",
                    shapes.size(), shapes.size() == 1 ? "" : "s", executors.size(), executors.size() == 1 ? "" : "s", isGrid ? " (grid " + grid + ")" : "");
            out.printf("GB/s counts the latent cache once per step: B·T·576·bytes, on every path (the absorbed one reads it twice; "
                    + "mla ladder counts each read); GFLOP/s per docs/design.md §1.3; on TornadoVM a step "
                    + "also copies q in and o out%n");
            if (weights != WeightDtype.F32) out.printf("kv_b_proj held as %s (absorb_q, unabsorb_v)%n", weights);
            if (executors.containsKey("java-fast")) out.printf("%s%n", FastExecutor.kernelChoice());
            out.printf("cache: %s%n%n", paged ? "paged, blocks of " + pagedBlock() + " tokens in shuffled order (block tables read by every kernel)"
                    : "contiguous (one block per sequence)");
            String header = String.format("%-16s %-36s %11s %9s %11s %12s", "backend", "shape", "ms/step", "GB/s", "GFLOP/s", "max|Δ| ref");
            if (limits != null) header += String.format(" %8s %8s", "%BW", "%FMA");
            out.println(header);
            out.flush();
            runShapes(out, shapes, executors, budget, refLimit, chkLimit, limits, t0);
            if (results.stream().anyMatch(r -> Double.isNaN(r.maxAbsDiff()))) {
                out.printf(Locale.ROOT, "max|Δ| ref -: not checked (a shape over --check-limit%s, or java-fast's own output where "
                        + "java-fast is the check above --reference-limit)%n", Double.isInfinite(chkLimit) ? "" : String.format(Locale.ROOT, " %.0f GFLOP per step", chkLimit));
            }
            if (results.isEmpty() && layerCsv == null && !timeLimitReached) {
                // nothing measured: leave any file already at --csv or --chart as it was
                for (GraphExecutor ex : executors.values()) ex.close();
                throw new MlaException("every shape was skipped (the reasons are above): nothing measured, no CSV or chart written");
            }
        }
        if (layerCsv != null) runLayer(out, executors, t0);
        saveCsvs();
        if (chart != null && !results.isEmpty()) {
            BenchChart.write(chart, results, cpuRows ? limits : null, "MLA decode attention core (DeepSeek-V3 latent): " + String.join(", ", executors.keySet())
                    + (isGrid ? ", grid " + grid : ""), "on " + where(executors));
            out.printf("wrote %s%n", chart);
        }
        if (chart != null && results.isEmpty()) out.printf("no chart written to %s: nothing was measured%n", chart);
        for (Path p : new Path[] {csv, transfersCsv, layerCsv}) if (p != null) out.printf("wrote %s%n", p);
        out.printf(Locale.ROOT, "bench done in %.1f s%n", (System.nanoTime() - t0) / 1e9);
        out.flush();
        if (csvToStdout) {
            PrintWriter std = spec.commandLine().getOut();
            std.println(CSV_HEADER);
            results.forEach(r -> std.println(csvLine(r)));
            std.flush();
        }
        for (GraphExecutor ex : executors.values()) ex.close();
        return 0;
    }

    /** Where a chart's figures come from: the CPU, and each device that is not the JVM's (a TornadoVM device), and the date. */
    private static String where(Map<String, GraphExecutor> executors) {
        StringBuilder sb = new StringBuilder(org.tornadomla.bench.Charts.machine());
        for (GraphExecutor ex : executors.values()) if (!(ex instanceof JvmExecutor)) sb.append("; ").append(ex.device());
        return sb.toString();
    }

    private int pagedBlock() {
        return !paged ? 0 : blockSize != null ? blockSize : LatentCache.DEFAULT_BLOCK_SIZE;
    }

    /**
     * --compare-paged: each shape over a contiguous cache and over a paged one (blocks handed out in a shuffled
     * order), timed in alternating rounds so that a busy machine slows both alike; per backend the median of the
     * rounds' medians and the best step of each, and paged / contiguous.
     */
    private int runComparePaged(PrintWriter out) {
        Map<String, GraphExecutor> executors = executors(out);
        int bs = blockSize != null ? blockSize : LatentCache.DEFAULT_BLOCK_SIZE;
        double budget = budgetMs != null ? budgetMs : quick ? 400 : 2000;
        if (!(budget >= 0) || budget > 3.6e6) throw new MlaException("--budget-ms must be in 0 … 3600000, found " + budget);
        int rounds = 5;
        out.printf("paged (blocks of %d, shuffled) against contiguous, %d alternating rounds of %.0f ms each; ms per step of the attention core%n",
                bs, rounds, budget);
        out.printf("%-16s %-36s %12s %12s %12s %12s %8s %8s%n", "backend", "shape", "contig. med", "paged med", "contig. best", "paged best",
                "ratio", "best r.");
        long t0 = System.nanoTime();
        for (DecodeBench.Shape s : shapes(false)) {
            DecodeBench contiguous = new DecodeBench(s, s.context(), 42, 0), paged = new DecodeBench(s, s.context(), 42, bs);
            GraphExecutor checker = fastOrNull() != null ? fastOrNull() : new JvmExecutor();
            float[] expected = contiguous.runOnce(checker);
            for (Map.Entry<String, GraphExecutor> e : executors.entrySet()) {
                double[] med = new double[2], best = {Double.MAX_VALUE, Double.MAX_VALUE};
                double[][] medians = new double[2][rounds];
                // both warmed up first: with --budget-ms 50 the rounds' medians were cold (13.6 ms against a best of 0.19)
                contiguous.warmUp(e.getValue());
                paged.warmUp(e.getValue());
                for (int r = 0; r < rounds; r++) {
                    for (int k = 0; k < 2; k++) {
                        Timing t = (k == 0 ? contiguous : paged).time(e.getValue(), budget, 2);
                        medians[k][r] = t.medianMs();
                        best[k] = Math.min(best[k], t.bestMs());
                    }
                }
                for (int k = 0; k < 2; k++) {
                    java.util.Arrays.sort(medians[k]);
                    med[k] = medians[k][rounds / 2];
                }
                double diff = maxAbsDiff(expected, paged.runOnce(e.getValue()));
                out.printf(Locale.ROOT, "%-16s %-36s %12.3f %12.3f %12.3f %12.3f %8.3f %8.3f   max|paged - contiguous| %.1e%n", e.getKey(), s.label(),
                        med[0], med[1], best[0], best[1], med[1] / med[0], best[1] / best[0], diff);
                out.flush();
            }
            for (GraphExecutor ex : executors.values()) {
                contiguous.release(ex);
                paged.release(ex);
            }
        }
        out.printf(Locale.ROOT, "bench done in %.1f s%n", (System.nanoTime() - t0) / 1e9);
        for (GraphExecutor ex : executors.values()) ex.close();
        return 0;
    }

    static final String SPARSE_CSV_HEADER = org.tornadomla.bench.SparseBench.CSV_HEADER;

    /** --sparse: sparse against dense decode steps of the whole layer of a sparse config, per backend, dtype, batch and context. */
    private int runSparse(PrintWriter out) {
        String[] names = {"--offload", "--mixed", "--compare-paged", "--grid", "--layer-csv", "--layer-only", "--paged", "--transfers-csv",
                "--roofline", "--block-size"};
        boolean[] set = {offload, mixed, comparePaged, grid != null, layerCsv != null, layerOnly, paged, transfersCsv != null, roofline,
                blockSize != null};
        for (int i = 0; i < names.length; i++) {
            if (set[i]) throw new MlaException("--sparse times its own steps (the whole layer, contiguous cache); it does not combine with " + names[i]);
        }
        MlaConfig cfg = MlaConfig.preset(preset != null ? preset : "deepseek-v3.2");
        String presetName = preset != null ? preset : "deepseek-v3.2";
        if (!cfg.sparse()) {
            throw new MlaException("--sparse needs a config with an indexer (DeepSeek Sparse Attention: the presets deepseek-v3.2, glm-5); "
                    + "--preset " + presetName + " is dense");
        }
        if (layerHidden != null) {
            if (layerHidden < 1) throw new MlaException("--layer-hidden must be >= 1, found " + layerHidden);
            cfg = cfg.withHiddenSize(layerHidden);
        }
        if (heads != null) {
            if (heads.size() != 1 || heads.get(0) < 1) throw new MlaException("--sparse takes one head count (--heads H, H >= 1), found " + heads);
            cfg = cfg.withHeads(heads.get(0));
        }
        if (topk != null) {
            if (topk < 1) throw new MlaException("--topk must be >= 1, found " + topk);
            var ix = cfg.indexer();
            cfg = cfg.withIndexer(new org.tornadomla.config.IndexerConfig(ix.nHeads(), ix.headDim(), topk, ix.ue8m0(), ix.ropeInterleaved()));
        }
        List<Integer> ts = contexts != null ? contexts : quick ? List.of(4096, 8192) : List.of(8192, 16384, 32768, 65536, 131072);
        List<Integer> bs = batches != null ? batches : quick ? List.of(1) : List.of(1, 8, 32);
        for (int t : ts) if (t < 2) throw new MlaException("--context must be >= 2 tokens with --sparse (a step attends to the cache and its own token), found " + t);
        for (int b : bs) if (b < 1) throw new MlaException("--batch must be >= 1, found " + b);
        List<CacheDtype> ds = new ArrayList<>();
        for (String d : dtypes != null ? dtypes : List.of("fp8")) ds.add(CacheDtype.parse(d));
        if (paths != null && paths.size() != 1) throw new MlaException("--sparse takes one --path (absorbed or tiled), found " + paths);
        AttentionPath path = AttentionPath.parse(paths != null ? paths.get(0) : "tiled");
        if (path == AttentionPath.NAIVE) throw new MlaException("--sparse times the absorbed and tiled paths, found --path naive");
        WeightDtype wd = weightsDtype == null ? WeightDtype.FP8 : WeightDtype.parse(weightsDtype);
        double budget = budgetMs != null ? budgetMs : quick ? 400 : 2000;
        if (!(budget >= 0) || budget > 3.6e6) throw new MlaException("--budget-ms must be in 0 … 3600000, found " + budget);
        checkOutputs(new String[] {"--csv", "--chart"}, csv, chart);
        checkOwnFiles();
        if (backends == null && device == null) backends = List.of("java-fast");
        Map<String, GraphExecutor> executors = executors(out);
        int k = cfg.indexer().topK();
        out.printf(Locale.ROOT, "sparse (DeepSeek Sparse Attention) against dense: a decode step of the whole layer, preset %s (hidden %d, %d heads, "
                        + "d_c %d, d_r %d; indexer %d heads x %d, top-%d), %s path, %s weights; batches %s, contexts %s, caches %s%n",
                presetName, cfg.hiddenSize(), cfg.numHeads(), cfg.kvLoraRank(), cfg.qkRopeHeadDim(), cfg.indexer().nHeads(), cfg.indexer().headDim(),
                k, path, wd, bs, ts, ds);
        out.printf("bytes read per step: dense B·T latent rows; sparse B·min(k, T) latent rows + B·T indexer keys (%d B each); indexer%%: the "
                + "indexer.* tasks' share of the sparse step's tasks, timed one by one (java backends)%n", cfg.indexer().cacheBytesPerToken());
        for (int t : ts) {
            if (t <= k) {
                out.printf(Locale.ROOT, "note: context %d <= index_topk %d: the indexer selects every position, so sparse attention reads the rows "
                        + "dense reads (plus the indexer's keys) and cannot win there%n", t, k);
            }
        }
        out.println();
        out.println(org.tornadomla.bench.SparseBench.header());
        out.flush();
        long t0 = System.nanoTime();
        org.tornadomla.bench.SparseBench bench = new org.tornadomla.bench.SparseBench(cfg, 42, wd).breakdown(breakdown);
        GraphExecutor filler = fastOrNull();
        List<org.tornadomla.bench.SparseBench.Result> rs = new ArrayList<>();
        List<String> verdicts = new ArrayList<>();
        for (Map.Entry<String, GraphExecutor> e : executors.entrySet()) {
            for (CacheDtype dt : ds) {
                for (int b : bs) {
                    if (pastTimeLimit(t0)) {
                        out.printf(Locale.ROOT, "%-14s %-5s B%-4d skipped: --time-limit-s %.0f reached%n", e.getKey(), dt, b, timeLimitS);
                        continue;
                    }
                    // one contiguous cache per batch, as long as the largest context that fits one Java array per storage part
                    List<Integer> fit = new ArrayList<>();
                    for (int t : ts) if (CacheStorage.largestArray(cfg, dt, (long) b * t) <= CacheStorage.MAX_ARRAY) fit.add(t);
                    for (int t : ts) {
                        if (!fit.contains(t)) {
                            out.printf(Locale.ROOT, "%-14s %-5s B%-4d T%-7d skipped: %d x %d tokens need %d numbers in one %s array, more than a Java array holds (%d)%n",
                                    e.getKey(), dt, b, t, b, t, CacheStorage.largestArray(cfg, dt, (long) b * t), dt, CacheStorage.MAX_ARRAY);
                        }
                    }
                    if (fit.isEmpty()) continue;
                    List<org.tornadomla.bench.SparseBench.Result> got;
                    try {
                        got = bench.run(e.getKey(), e.getValue(), filler, path, dt, b, fit, budget, line -> {
                            out.println(line);
                            out.flush();
                        }, r -> {
                            // rewritten after every point, as the other bench outputs: a run stopped midway keeps what it measured
                            rs.add(r);
                            if (csv != null) writeLines(csv, SPARSE_CSV_HEADER, rs.stream().map(org.tornadomla.bench.SparseBench.Result::csv).toList());
                        });
                    } catch (MlaException ex) {
                        out.printf(Locale.ROOT, "%-14s %-5s B%-4d skipped: %s (the cache alone: %,.0f MB at context %d)%n", e.getKey(), dt, b, ex.getMessage(),
                                org.tornadomla.bench.SparseBench.cacheBytes(cfg, dt, b, fit.getLast()) / 1e6, fit.getLast());
                        out.flush();
                        continue;
                    }
                    int win = org.tornadomla.bench.SparseBench.crossover(got);
                    verdicts.add(String.format(Locale.ROOT, "%s %s B%d: %s", e.getKey(), dt, b, win > 0 ? "sparse wins from context " + win
                            : "sparse does not win within the contexts measured (" + fit.stream().sorted().map(String::valueOf)
                            .collect(java.util.stream.Collectors.joining(", ")) + ")"));
                }
            }
        }
        out.println();
        for (String v : verdicts) out.println(v);
        if (rs.isEmpty()) {
            for (GraphExecutor ex : executors.values()) ex.close();
            if (filler != null) filler.close();
            throw new MlaException("every point was skipped (the reasons are above): nothing measured, no CSV or chart written");
        }
        if (chart != null) {
            org.tornadomla.bench.SparseChart.write(chart, rs, "MLA decode, sparse (DSA) against dense: " + presetName + " (hidden " + cfg.hiddenSize()
                    + ", index_topk " + cfg.indexer().topK() + "), " + String.join(", ", executors.keySet()), "on " + where(executors));
            out.printf("wrote %s%n", chart);
        }
        if (csv != null) out.printf("wrote %s%n", csv);
        out.printf(Locale.ROOT, "bench done in %.1f s%n", (System.nanoTime() - t0) / 1e9);
        out.flush();
        if (csvToStdout) {
            PrintWriter std = spec.commandLine().getOut();
            std.println(SPARSE_CSV_HEADER);
            rs.forEach(r -> std.println(r.csv()));
            std.flush();
        }
        for (GraphExecutor ex : executors.values()) ex.close();
        if (filler != null) filler.close();
        return 0;
    }

    /** --offload: the host tier, offload and restore of one sequence of a paged cache and a decode step after it, per backend. */
    private int runOffload(PrintWriter out) {
        Map<String, GraphExecutor> executors = executors(out);
        int d = layerHidden != null ? layerHidden : 1024;
        int context = contexts != null ? contexts.get(0) : quick ? 1024 : 4096;
        int seqs = batches != null ? batches.get(0) : 8;
        int block = blockSize != null ? blockSize : LatentCache.DEFAULT_BLOCK_SIZE;
        int reps = quick ? 5 : 20;
        long t0 = System.nanoTime();
        for (String dt : dtypes != null ? dtypes : List.of("bf16")) {
            CacheDtype dtype = CacheDtype.parse(dt);
            out.printf(Locale.ROOT, "host tier (DeepSeek-V3 attention geometry, hidden %d, %s cache, %d sequences at context %d, blocks of %d, tiled path): "
                    + "offload and restore of one sequence, medians of %d%n", d, dtype, seqs, context, block, reps);
            for (Map.Entry<String, GraphExecutor> e : executors.entrySet()) {
                org.tornadomla.bench.OffloadBench.Result r = org.tornadomla.bench.OffloadBench.run(MlaConfig.deepseekV3().withHiddenSize(d), e.getValue(),
                        dtype, seqs, context, block, reps, 42);
                out.printf(Locale.ROOT, "%-16s restore %,d bytes in %.3f ms (%.2f GB/s), offload %.3f ms (%.2f GB/s); decode step %.3f ms, "
                                + "restore + step %.3f ms (%+.1f %%)%n", e.getKey(), r.bytes(), r.restoreMs(), r.restoreGBs(), r.offloadMs(), r.offloadGBs(),
                        r.stepMs(), r.restoreAndStepMs(), 100 * (r.restoreAndStepMs() / r.stepMs() - 1));
                out.flush();
            }
        }
        out.printf(Locale.ROOT, "bench done in %.1f s%n", (System.nanoTime() - t0) / 1e9);
        for (GraphExecutor ex : executors.values()) ex.close();
        return 0;
    }

    private int runMixed(PrintWriter out) {
        Map<String, GraphExecutor> executors = executors(out);
        int d = layerHidden != null ? layerHidden : quick ? 1024 : 7168;
        int context = contexts != null ? contexts.get(0) : quick ? 1024 : 4096;
        CacheDtype dtype = dtypes != null ? CacheDtype.parse(dtypes.get(0)) : CacheDtype.F32;
        double budget = budgetMs != null ? budgetMs : quick ? 400 : 2000;
        if (!(budget >= 0) || budget > 3.6e6) throw new MlaException("--budget-ms must be in 0 … 3600000, found " + budget);
        LayerBench lb = new LayerBench(MlaConfig.deepseekV3().withHiddenSize(d), 42, org.tornadomla.weights.WeightDtype.FP8);
        out.printf("mixed step of the whole layer (DeepSeek-V3 attention geometry, hidden %d, fp8 weights as V3 ships them, tiled path, %s cache, %s): "
                + "6 sequences decode at context %d while 2 prompts prefill a chunk of 256 tokens, one variable-length call%n",
                d, dtype, paged ? "paged (blocks of " + pagedBlock() + ")" : "contiguous", context);
        long t0 = System.nanoTime();
        for (Map.Entry<String, GraphExecutor> e : executors.entrySet()) {
            for (LayerBench.Mixed m : lb.mixed(e.getValue(), AttentionPath.TILED, dtype, 6, context, 2, 256, pagedBlock(), budget)) {
                out.printf(Locale.ROOT, "%-16s %-14s %5d tokens %11.3f ms/step   [%d steps]%n", e.getKey(), m.what(), m.tokens(), m.msPerStep(), m.steps());
                out.flush();
            }
        }
        out.printf(Locale.ROOT, "bench done in %.1f s%n", (System.nanoTime() - t0) / 1e9);
        for (GraphExecutor ex : executors.values()) ex.close();
        return 0;
    }

    // what has been measured so far: the CSVs are rewritten after every result, so a run stopped from outside
    // (the GPU kit's timeout) keeps everything measured until then
    private final List<DecodeBench.Result> results = new ArrayList<>();
    private WeightDtype weights = WeightDtype.F32;
    private final List<String> transfers = new ArrayList<>();
    private final List<LayerBench.Result> layerResults = new ArrayList<>();

    private void saveCsvs() {
        if (csv != null) writeLines(csv, CSV_HEADER, results.stream().map(BenchCommand::csvLine).toList());
        if (transfersCsv != null) writeLines(transfersCsv, TRANSFERS_HEADER, transfers);
        if (layerCsv != null) writeLines(layerCsv, LayerBench.CSV_HEADER, layerResults.stream().map(LayerBench.Result::csv).toList());
    }

    /** Whether a shape was skipped for --time-limit-s (the GPU kit's budget: not an error, the CSV says what ran). */
    private boolean timeLimitReached;

    private boolean pastTimeLimit(long t0) {
        boolean past = timeLimitS != null && (System.nanoTime() - t0) / 1e9 > timeLimitS;
        timeLimitReached |= past;
        return past;
    }

    /**
     * Times each shape on each executor. Consecutive tiled shapes that differ only in context share one cache
     * (capacity = their largest context) and so one compiled plan; the context is set per shape.
     */
    private void runShapes(PrintWriter out, List<DecodeBench.Shape> shapes, Map<String, GraphExecutor> executors, double budget,
                           double refLimit, double chkLimit, Roofline.Limits limits, long t0) {
        int done = 0, total = shapes.size() * executors.size();
        for (List<DecodeBench.Shape> shared : groups(shapes)) {
            // a shape too large for one array is skipped alone; the rest of its group shares a cache it can hold
            List<DecodeBench.Shape> group = new ArrayList<>();
            for (DecodeBench.Shape s : shared) {
                String own = DecodeBench.unrepresentable(s.batch(), s.context(), s.heads(), s.path());
                if (own == null) {
                    group.add(s);
                    continue;
                }
                done += executors.size();
                out.printf("%-16s %-36s   [%d/%d skipped: %s]%n", "-", s.label(), done, total, own);
            }
            if (group.isEmpty()) continue;
            DecodeBench.Shape first = group.get(0);
            int capacity = group.stream().mapToInt(DecodeBench.Shape::context).max().orElseThrow();
            String why = DecodeBench.unrepresentable(first.batch(), capacity, first.heads(), first.path());
            if (why != null || pastTimeLimit(t0)) {
                for (DecodeBench.Shape s : group) {
                    done += executors.size();
                    out.printf("%-16s %-36s   [%d/%d skipped: %s]%n", "-", s.label(), done, total,
                            why != null ? why : String.format(Locale.ROOT, "--time-limit-s %.0f reached", timeLimitS));
                }
                out.flush();
                continue;
            }
            long f0 = System.nanoTime();
            DecodeBench bench = new DecodeBench(first, capacity, 42, pagedBlock()).weights(weights);
            double gb = (double) first.batch() * capacity * first.dtype().bytesPerToken(512, 64) / 1e9;
            if (gb > 0.5) out.printf(Locale.ROOT, "  (cache B%d x %d tokens %s: %.1f GB, filled in %.1f s)%n", first.batch(), capacity,
                    first.dtype(), gb, (System.nanoTime() - f0) / 1e9);
            for (DecodeBench.Shape s : group) {
                if (pastTimeLimit(t0)) {
                    done += executors.size();
                    out.printf(Locale.ROOT, "%-16s %-36s   [%d/%d skipped: --time-limit-s %.0f reached]%n", "-", s.label(), done, total, timeLimitS);
                    continue;
                }
                bench.context(s.context());
                double gflop = DecodeBench.flops(s) / 1e9;
                boolean refRuns = gflop <= refLimit;
                GraphExecutor checker = gflop > chkLimit ? null : refRuns ? new JvmExecutor() : fastOrNull();
                float[] expected;
                try (StillRunning p = new StillRunning(out, "computing the reference output of " + s.label(), PROGRESS_S)) {
                    expected = checker == null ? null : bench.runOnce(checker);
                }
                String checkedBy = refRuns ? "" : " (vs java-fast)";
                for (Map.Entry<String, GraphExecutor> e : executors.entrySet()) {
                    done++;
                    if (e.getKey().equals("java-reference") && !refRuns) {
                        out.printf("%-16s %-36s %11s   [%d/%d skipped: %.1f GFLOP per step is over --reference-limit]%n",
                                e.getKey(), s.label(), "-", done, total, gflop);
                        continue;
                    }
                    Timing t;
                    float[] got;
                    try (StillRunning p = new StillRunning(out, "timing " + e.getKey() + " " + s.label(), PROGRESS_S)) {
                        t = bench.time(e.getValue(), budget, 2);
                        got = bench.runOnce(e.getValue());
                    }
                    // above --reference-limit the check is java-fast's output: no check of java-fast against itself
                    boolean selfCheck = !refRuns && e.getKey().equals("java-fast");
                    double diff = expected == null || selfCheck ? Double.NaN : maxAbsDiff(expected, got);
                    String name = weights == WeightDtype.F32 ? e.getKey() : e.getKey() + "/w-" + weights;
                    DecodeBench.Result r = new DecodeBench.Result(name, s, t.meanMs(), t.medianMs(), t.iterations(), diff, deviceOf(e.getValue()),
                            budget >= Timing.COLD_MS);
                    results.add(r);
                    String line = String.format(Locale.ROOT, "%-16s %-36s %11.3f %9.2f %11.2f %12s", r.backend(), s.label(), r.msPerStep(),
                            r.gbPerS(), r.gflopPerS(), Double.isNaN(diff) ? "-" : String.format(Locale.ROOT, "%.1e%s", diff, checkedBy));
                    if (limits != null && onThisCpu(e.getValue())) {
                        line += String.format(Locale.ROOT, " %7.1f%% %7.1f%%", 100 * r.gbPerS() / limits.gbPerS(), 100 * r.gflopPerS() / limits.gflopPerS());
                    } else if (limits != null) {
                        line += String.format(Locale.ROOT, " %8s %8s", "-", "-");   // another device: the CPU's limits are not its own
                    }
                    if (transfersCsv != null) {
                        GraphExecutor.Transfers tr = bench.transfers(e.getValue());
                        transfers.add(String.format(Locale.ROOT, "%s,%s,%s,%d,%d,%d,%s,%d,%d", e.getKey(), s.path(), s.dtype(), s.batch(), s.heads(),
                                s.context(), Double.isNaN(tr.kernelMs()) ? "" : String.format(Locale.ROOT, "%.6f", tr.kernelMs()), tr.toDevice(), tr.toHost()));
                        if (!Double.isNaN(tr.kernelMs())) line += String.format(Locale.ROOT, "  kernels %.3f ms", tr.kernelMs());
                    }
                    out.println(line + String.format("   [%d/%d, %d steps%s]", done, total, r.iterations(), r.warmedUp() ? "" : ", not warmed up"));
                    saveCsvs();
                    if (breakdown && e.getValue() instanceof JvmExecutor jvm) {
                        // half as many steps as were timed (at most 200): 20 steps of a 5 ms step moved by ±15 % between runs
                        int steps = Math.max(2, Math.min(200, r.iterations() / 2));
                        StringBuilder sb = new StringBuilder("    tasks, ms:");
                        List<DecodeBench.TaskTime> times = bench.breakdown(jvm, steps);
                        times.forEach(task -> sb.append(String.format(Locale.ROOT, " %s %.3f", task.task(), task.ms())));
                        out.println(sb);
                        String peak = limits == null ? null : peakLine(times, s, limits.gflopPerS());
                        if (peak != null) out.println(peak);
                        if (jvm.threadsTimed() > 1) out.println(threadsLine(times, jvm.threadsTimed()));
                    }
                    out.flush();
                }
            }
            for (GraphExecutor ex : executors.values()) bench.release(ex);
        }
    }

    /**
     * --breakdown's line, with --roofline, of what each product task of the absorbed and tiled paths did: its GFLOP/s
     * ({@link DecodeBench#taskFlops}) and their share of the FMA peak measured in the same run; null where no task is
     * counted (the naive path).
     */
    static String peakLine(List<DecodeBench.TaskTime> times, DecodeBench.Shape s, double peakGflops) {
        StringBuilder sb = new StringBuilder("    tasks, GFLOP/s and % of the FMA peak:");
        int counted = 0;
        for (DecodeBench.TaskTime task : times) {
            double flops = DecodeBench.taskFlops(s, task.task());
            if (flops == 0 || !(task.ms() > 0)) continue;
            double gflops = flops / task.ms() / 1e6;
            sb.append(String.format(Locale.ROOT, " %s %.1f (%.0f %%)", task.task(), gflops, 100 * gflops / peakGflops));
            counted++;
        }
        return counted > 0 ? sb.toString() : null;
    }

    /**
     * --breakdown's line of each thread's time in a task's parallel loops: main/worker 1/… with up to 4 threads, else
     * the least, the median and the most of them.
     */
    static String threadsLine(List<DecodeBench.TaskTime> times, int threads) {
        StringBuilder th = new StringBuilder(threads <= 4
                ? "    each thread in the task's loops, ms (main/worker 1/…; short of the task's time: it waited, started late or ran serial code):"
                : "    " + threads + " threads in the task's loops, ms (least/median/most; short of the task's time: a thread waited, started late or ran serial code):");
        for (DecodeBench.TaskTime task : times) {
            double[] ms = task.threadMs();
            if (threads > 4) {
                ms = ms.clone();
                java.util.Arrays.sort(ms);
                ms = new double[] {ms[0], ms[ms.length / 2], ms[ms.length - 1]};
            }
            th.append(' ').append(task.task()).append(' ');
            for (int i = 0; i < ms.length; i++) th.append(i > 0 ? "/" : "").append(String.format(Locale.ROOT, "%.3f", ms[i]));
        }
        return th.toString();
    }

    /** Runs of consecutive shapes that can share one cache: tiled, same dtype, batch and heads. */
    static List<List<DecodeBench.Shape>> groups(List<DecodeBench.Shape> shapes) {
        List<List<DecodeBench.Shape>> out = new ArrayList<>();
        for (DecodeBench.Shape s : shapes) {
            List<DecodeBench.Shape> last = out.isEmpty() ? null : out.get(out.size() - 1);
            DecodeBench.Shape p = last == null ? null : last.get(0);
            if (p != null && s.path() == AttentionPath.TILED && p.path() == AttentionPath.TILED && p.dtype() == s.dtype()
                    && p.batch() == s.batch() && p.heads() == s.heads()) {
                last.add(s);
            } else {
                out.add(new ArrayList<>(List.of(s)));
            }
        }
        return out;
    }

    /** The whole layer's decode step on each executor, for each batch, dtype and context. */
    private void runLayer(PrintWriter out, Map<String, GraphExecutor> executors, long t0) {
        int hidden = layerHidden != null ? layerHidden : quick ? 1024 : 7168;
        List<Integer> bs = layerBatches != null ? layerBatches : quick ? List.of(1, 2) : List.of(1, 32, 128);
        List<Integer> ts = layerContexts != null ? layerContexts : quick ? List.of(64, 256) : List.of(1024, 4096, 16384);
        List<String> ds = layerDtypes != null ? layerDtypes : quick ? List.of("f32") : List.of("bf16", "f32");
        AttentionPath path = AttentionPath.parse(layerPath);
        for (int v : bs) if (v < 1) throw new MlaException("--layer-batch must be >= 1, found " + v);
        for (int v : ts) if (v < 1) throw new MlaException("--layer-context must be >= 1, found " + v);
        double budget = budgetMs != null ? budgetMs : quick ? 200 : 300;
        MlaConfig cfg = MlaConfig.deepseekV3().withHiddenSize(hidden);
        out.printf("%nwhole layer, decode step: DeepSeek-V3 attention geometry, hidden %d, path %s; batches %s, contexts %s, caches %s%n",
                hidden, path, bs, ts, ds);
        out.printf("(bytes in/out and kernel ms: one more step with TornadoVM's profiler; the JVM copies nothing)%n");
        out.flush();
        LayerBench bench = new LayerBench(cfg, 42);
        for (Map.Entry<String, GraphExecutor> e : executors.entrySet()) {
            for (String d : ds) {
                CacheDtype dtype = CacheDtype.parse(d);
                for (int b : bs) {
                    if (pastTimeLimit(t0)) {
                        out.printf(Locale.ROOT, "layer %-14s %-8s %-4s B%-4d skipped: --time-limit-s %.0f reached%n", e.getKey(), path, dtype, b, timeLimitS);
                        continue;
                    }
                    String why = DecodeBench.unrepresentable(b, ts.stream().mapToInt(Integer::intValue).max().orElseThrow() + 1, cfg.numHeads(), path);
                    if (why != null) {
                        out.printf("layer %-14s %-8s %-4s B%-4d skipped: %s%n", e.getKey(), path, dtype, b, why);
                        continue;
                    }
                    layerResults.addAll(bench.run(e.getKey(), e.getValue(), path, dtype, b, ts, budget, line -> {
                        out.println(line);
                        out.flush();
                    }));
                    saveCsvs();
                }
            }
        }
    }

    private static GraphExecutor fastOrNull() {
        return FastExecutor.available() ? new FastExecutor() : null;
    }

    private List<DecodeBench.Shape> shapes(boolean isGrid) {
        // the grid runs FlashMLA's own dtype and head count first, so a --time-limit-s cuts the f32 and H16 parts
        List<Integer> hs = heads != null ? heads : isGrid ? List.of(128, 16) : List.of(16, 128);
        List<Integer> ts = contexts != null ? contexts : isGrid ? (quick ? List.of(256, 1024) : List.of(1024, 2048, 4096, 8192, 16384))
                : quick ? List.of(1024, 4096) : List.of(1024, 4096, 16384);
        List<Integer> bs = batches != null ? batches : isGrid ? (quick ? List.of(1, 2) : List.of(1, 2, 4, 8, 16, 32, 64, 128))
                : quick ? List.of(1) : List.of(1, 8);
        List<String> ds = dtypes != null ? dtypes : isGrid ? List.of("bf16", "f32") : List.of("f32", "bf16");
        List<String> ps = paths != null ? paths : isGrid ? List.of("tiled") : List.of("absorbed", "tiled");
        List<DecodeBench.Shape> out = new ArrayList<>();
        for (String p : ps) {
            AttentionPath path = AttentionPath.parse(p);
            if (path == AttentionPath.NAIVE) throw new MlaException("bench times the absorbed and tiled paths, found --path naive");
            for (String d : ds) {
                CacheDtype dt = CacheDtype.parse(d);
                if (isGrid) {
                    for (int h : hs) for (int b : bs) for (int t : ts) out.add(shape(path, dt, b, h, t));
                } else {
                    for (int b : bs) for (int h : hs) for (int t : ts) out.add(shape(path, dt, b, h, t));
                }
            }
        }
        return out;
    }

    private static DecodeBench.Shape shape(AttentionPath path, CacheDtype dt, int b, int h, int t) {
        if (b < 1 || h < 1 || t < 1) throw new MlaException("batch, heads and context must be >= 1, found " + b + ", " + h + ", " + t);
        return new DecodeBench.Shape(path, dt, b, h, t);
    }

    private Map<String, GraphExecutor> executors(PrintWriter out) {
        Map<String, GraphExecutor> ex = new LinkedHashMap<>();
        List<String> wanted = backends != null ? new ArrayList<>(backends)
                : device != null ? new ArrayList<>() : new ArrayList<>(List.of("java-reference", "java-fast", "tornado"));
        if (device != null) {
            wanted.removeIf(b -> b.equals("tornado"));
            wanted.add("tornado:" + device);
        }
        boolean explicit = backends != null || device != null;
        for (String b : wanted) {
            switch (b) {
                case "java-reference", "java" -> ex.put("java-reference", new JvmExecutor());
                case "java-fast" -> ex.put("java-fast", Backends.create("java-fast"));
                case "tornado" -> {
                    try {
                        for (String line : Backends.tornadoDevices()) {
                            String dev = line.substring(0, line.indexOf(' '));
                            ex.put("tornado:" + dev, Backends.create("tornado:" + dev));
                        }
                    } catch (MlaException e) {
                        if (explicit) throw e;
                        out.printf("(no TornadoVM devices: %s)%n", e.getMessage());
                    }
                }
                default -> ex.put(b, Backends.create(b));      // java-fast:N, tornado:B:D, or one line naming the choices
            }
        }
        return ex;
    }

    private static double maxAbsDiff(float[] a, float[] b) {
        double m = 0;
        for (int i = 0; i < a.length; i++) m = Math.max(m, Math.abs((double) a[i] - b[i]));
        return m;
    }

    /** Each output may be written (OutputFiles' rules) and no two of them are the same file. */
    private static void checkOutputs(String[] options, Path... outputs) {
        for (int i = 0; i < outputs.length; i++) {
            if (outputs[i] == null) continue;
            OutputFiles.check(outputs[i], List.of());
            for (int j = 0; j < i; j++) {
                if (outputs[j] != null && OutputFiles.sameTarget(outputs[j], outputs[i])) {
                    throw new MlaException(options[j] + " and " + options[i] + " name the same file " + outputs[i]);
                }
            }
        }
    }

    /**
     * A file already at an output is replaced only if an earlier run wrote it: a CSV with one of this command's
     * headers, a PNG for the chart (a note or a checkpoint named by mistake is refused before anything runs).
     */
    private void checkOwnFiles() {
        if (csv != null) OutputFiles.checkOwn("--csv", csv, "a CSV of mla bench", h -> OutputFiles.startsWithLine(h, CSV_HEADER, CSV_HEADER_SHORT, SPARSE_CSV_HEADER));
        if (transfersCsv != null) {
            OutputFiles.checkOwn("--transfers-csv", transfersCsv, "a CSV of mla bench --transfers-csv", h -> OutputFiles.startsWithLine(h, TRANSFERS_HEADER));
        }
        if (layerCsv != null) OutputFiles.checkOwn("--layer-csv", layerCsv, "a CSV of mla bench --layer-csv", h -> OutputFiles.startsWithLine(h, LayerBench.CSV_HEADER));
        if (chart != null) org.tornadomla.bench.Charts.checkPng("--chart", chart);
    }

    static String csvLine(DecodeBench.Result r) {
        DecodeBench.Shape s = r.shape();
        return String.format(Locale.ROOT, "%s,%s,%s,%d,%d,%d,%.6f,%.6g,%.6g,%s,%s,%s,%s", r.backend(), s.path(), s.dtype(), s.batch(),
                s.heads(), s.context(), r.msPerStep(), r.gbPerS(), r.gflopPerS(),
                Double.isNaN(r.medianMs()) ? "" : String.format(Locale.ROOT, "%.6f", r.medianMs()),
                r.device().replace(',', ';').replace('"', '\''), java.time.LocalDate.now(java.time.ZoneOffset.UTC), r.warmedUp() ? "yes" : "no");
    }

    /** Whether an executor runs on this CPU's JVM threads, so that the limits --roofline measures there are its own. */
    static boolean onThisCpu(GraphExecutor ex) {
        return ex instanceof JvmExecutor || ex instanceof org.tornadomla.fast.FastExecutor;
    }

    /** Where an executor runs, for the CSV: a JVM backend's CPU (model, family and model numbers, CPUs) and itself, else its device. */
    static String deviceOf(GraphExecutor ex) {
        return onThisCpu(ex) ? org.tornadomla.bench.Charts.cpu() + "; " + ex.device() : ex.device();
    }

    /** Writes header and lines atomically (OutputFiles). */
    static void writeLines(Path file, String header, List<String> lines) {
        StringBuilder sb = new StringBuilder(header).append('\n');
        for (String l : lines) sb.append(l).append('\n');
        OutputFiles.write(file, out -> out.write(sb.toString().getBytes(StandardCharsets.UTF_8)));
    }
}
