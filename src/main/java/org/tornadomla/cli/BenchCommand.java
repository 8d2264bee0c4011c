package org.tornadomla.cli;

import org.tornadomla.MlaException;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.bench.BenchChart;
import org.tornadomla.bench.DecodeBench;
import org.tornadomla.bench.Roofline;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.fast.FastExecutor;
import org.tornadomla.graph.GraphExecutor;
import org.tornadomla.graph.JvmExecutor;
import org.tornadomla.io.OutputFiles;
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
 */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = "Time one decode step of the MLA attention core (absorb_q … unabsorb_v over the latent cache) "
                + "on each backend and shape; print a table, optionally write a CSV and a chart, and compare with "
                + "this machine's measured FMA throughput and memory bandwidth (--roofline).")
public final class BenchCommand implements Callable<Integer> {
    static final String CSV_HEADER = "backend,path,dtype,batch,heads,context,ms_per_step,gb_per_s,gflop_per_s";

    @Option(names = "--quick", description = "a small grid and short timings: under 3 minutes on 2 cores")
    boolean quick;

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

    @Option(names = "--csv", description = "write the results as CSV (" + CSV_HEADER + ")")
    Path csv;

    @Option(names = "--chart", description = "write a PNG chart: bars per backend per shape, measured limits as lines")
    Path chart;

    @Option(names = "--roofline", description = "measure FMA throughput and memory bandwidth and print each result as a percentage")
    boolean roofline;

    @Option(names = "--budget-ms", description = "timed milliseconds per backend and shape (default: 400 with --quick, 2000 without)")
    Double budgetMs;

    @Option(names = "--breakdown", description = "also print the mean ms of each task of the step (java backends)")
    boolean breakdown;

    @Option(names = "--reference-limit", defaultValue = "1.5", description = "run java-reference only on shapes of at most "
            + "this many GFLOP per step (default: ${DEFAULT-VALUE}); larger shapes are checked against java-fast")
    double referenceLimit;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        List<DecodeBench.Shape> shapes = shapes();
        Map<String, GraphExecutor> executors = executors(out);
        double budget = budgetMs != null ? budgetMs : quick ? 400 : 2000;
        if (!(budget >= 0) || budget > 3.6e6) throw new MlaException("--budget-ms must be in 0 … 3600000, found " + budget);
        if (!(referenceLimit >= 0) || Double.isInfinite(referenceLimit)) {
            throw new MlaException("--reference-limit must be a finite number >= 0, found " + referenceLimit);
        }
        if (csv != null) OutputFiles.check(csv, List.of());
        if (chart != null) OutputFiles.check(chart, csv == null ? List.of() : List.of(csv));
        if (csv != null && chart != null && csv.toAbsolutePath().normalize().equals(chart.toAbsolutePath().normalize())) {
            throw new MlaException("--csv and --chart name the same file " + csv);
        }

        Roofline.Limits limits = null;
        if (roofline || chart != null) {
            out.printf("measuring this machine's limits (FMA throughput, memory read bandwidth) ...%n");
            out.flush();
            limits = Roofline.measure();
            out.printf("limits: %.1f GFLOP/s FMA peak (%d threads, %d-bit vectors), %.1f GB/s memory read%n%n",
                    limits.gflopPerS(), limits.threads(), limits.vectorBits(), limits.gbPerS());
        }
        out.printf("decode step of the attention core, DeepSeek-V3 latent (d_c 512, d_r 64, d_n = d_v 128); %d shapes × %d backends%n",
                shapes.size(), executors.size());
        out.printf("GB/s counts the latent cache once per step: B·T·576·bytes; GFLOP/s per docs/design.md §1.3%n%n");
        String header = String.format("%-16s %-36s %11s %9s %11s %12s", "backend", "shape", "ms/step", "GB/s", "GFLOP/s", "max|Δ| ref");
        if (limits != null) header += String.format(" %8s %8s", "%BW", "%FMA");
        out.println(header);
        out.flush();

        List<DecodeBench.Result> results = new ArrayList<>();
        int done = 0, total = shapes.size() * executors.size();
        for (DecodeBench.Shape s : shapes) {
            DecodeBench bench = new DecodeBench(s, 42);
            boolean refRuns = DecodeBench.flops(s) <= referenceLimit * 1e9;
            GraphExecutor checker = refRuns ? new JvmExecutor() : fastOrNull();
            float[] expected = checker == null ? null : bench.runOnce(checker);
            String checkedBy = refRuns ? "" : " (vs java-fast)";
            for (Map.Entry<String, GraphExecutor> e : executors.entrySet()) {
                done++;
                if (e.getKey().equals("java-reference") && !refRuns) {
                    out.printf("%-16s %-36s %11s   [%d/%d skipped: %.1f GFLOP per step is over --reference-limit]%n",
                            e.getKey(), s.label(), "-", done, total, DecodeBench.flops(s) / 1e9);
                    continue;
                }
                double[] t = bench.time(e.getValue(), budget, 2);
                float[] got = bench.runOnce(e.getValue());
                // above --reference-limit the check is java-fast's output: no check of java-fast against itself
                boolean selfCheck = !refRuns && e.getKey().equals("java-fast");
                double diff = expected == null || selfCheck ? Double.NaN : maxAbsDiff(expected, got);
                DecodeBench.Result r = new DecodeBench.Result(e.getKey(), s, t[0], (int) t[1], diff);
                results.add(r);
                String line = String.format(Locale.ROOT, "%-16s %-36s %11.3f %9.2f %11.2f %12s", r.backend(), s.label(), r.msPerStep(),
                        r.gbPerS(), r.gflopPerS(), Double.isNaN(diff) ? "-" : String.format(Locale.ROOT, "%.1e%s", diff, checkedBy));
                if (limits != null) {
                    line += String.format(Locale.ROOT, " %7.1f%% %7.1f%%", 100 * r.gbPerS() / limits.gbPerS(), 100 * r.gflopPerS() / limits.gflopPerS());
                }
                out.println(line + String.format("   [%d/%d, %d steps]", done, total, r.iterations()));
                if (breakdown && e.getValue() instanceof JvmExecutor jvm) {
                    int steps = Math.max(2, Math.min(20, r.iterations()));
                    StringBuilder sb = new StringBuilder("    tasks, ms:");
                    bench.breakdown(jvm, steps).forEach((task, ms) -> sb.append(String.format(Locale.ROOT, " %s %.3f", task, ms)));
                    out.println(sb);
                }
                out.flush();
            }
            for (GraphExecutor ex : executors.values()) bench.release(ex);
        }
        if (csv != null) writeCsv(csv, results);
        if (chart != null) {
            BenchChart.write(chart, results, limits, "MLA decode attention core: " + executors.keySet());
            out.printf("wrote %s%n", chart);
        }
        if (csv != null) out.printf("wrote %s%n", csv);
        for (GraphExecutor ex : executors.values()) ex.close();
        return 0;
    }

    private static GraphExecutor fastOrNull() {
        return FastExecutor.available() ? new FastExecutor() : null;
    }

    private List<DecodeBench.Shape> shapes() {
        List<Integer> hs = heads != null ? heads : List.of(16, 128);
        List<Integer> ts = contexts != null ? contexts : quick ? List.of(1024, 4096) : List.of(1024, 4096, 16384);
        List<Integer> bs = batches != null ? batches : quick ? List.of(1) : List.of(1, 8);
        List<String> ds = dtypes != null ? dtypes : List.of("f32", "bf16");
        List<String> ps = paths != null ? paths : List.of("absorbed", "tiled");
        List<DecodeBench.Shape> out = new ArrayList<>();
        for (String p : ps) {
            AttentionPath path = AttentionPath.parse(p);
            if (path == AttentionPath.NAIVE) throw new MlaException("bench times the absorbed and tiled paths, found --path naive");
            for (String d : ds) {
                CacheDtype dt = CacheDtype.parse(d);
                for (int b : bs) for (int h : hs) for (int t : ts) {
                    if (b < 1 || h < 1 || t < 1) throw new MlaException("batch, heads and context must be >= 1, found " + b + ", " + h + ", " + t);
                    out.add(new DecodeBench.Shape(path, dt, b, h, t));
                }
            }
        }
        return out;
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
                case "java-fast" -> ex.put("java-fast", Backends.create("java-fast", null, null, true));
                case "tornado" -> {
                    try {
                        for (String line : Backends.tornadoDevices()) {
                            String dev = line.substring(0, line.indexOf(' '));
                            ex.put("tornado:" + dev, Backends.create("tornado", dev, null, true));
                        }
                    } catch (MlaException e) {
                        if (explicit) throw e;
                        out.printf("(no TornadoVM devices: %s)%n", e.getMessage());
                    }
                }
                default -> {
                    if (!b.startsWith("tornado:")) throw new MlaException("unknown backend '" + b + "' (expected java-reference, java-fast, tornado or tornado:B:D)");
                    ex.put(b, Backends.create("tornado", b.substring("tornado:".length()), null, true));
                }
            }
        }
        return ex;
    }

    private static double maxAbsDiff(float[] a, float[] b) {
        double m = 0;
        for (int i = 0; i < a.length; i++) m = Math.max(m, Math.abs((double) a[i] - b[i]));
        return m;
    }

    static void writeCsv(Path file, List<DecodeBench.Result> results) {
        StringBuilder sb = new StringBuilder(CSV_HEADER).append('\n');
        for (DecodeBench.Result r : results) {
            DecodeBench.Shape s = r.shape();
            sb.append(String.format(Locale.ROOT, "%s,%s,%s,%d,%d,%d,%.6f,%.4f,%.4f%n", r.backend(), s.path(), s.dtype(), s.batch(),
                    s.heads(), s.context(), r.msPerStep(), r.gbPerS(), r.gflopPerS()));
        }
        OutputFiles.write(file, out -> out.write(sb.toString().getBytes(StandardCharsets.UTF_8)));
    }
}
