package org.tornadomla.benchmarks.djl;

import ai.djl.Device;
import ai.djl.engine.Engine;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.index.NDIndex;
import ai.djl.ndarray.types.Shape;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.bench.DecodeBench;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.fast.FastExecutor;
import org.tornadomla.graph.GraphExecutor;
import org.tornadomla.graph.JvmExecutor;
import org.tornadomla.internal.Gaussians;
import org.tornadomla.weights.MlaWeights;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * One decode step of the MLA attention core as DeepSeek-V3's inference/model.py computes it with
 * attn_impl = "absorb", in libtorch 2.7.1 through DJL 0.36 (CPU, f32): the libtorch yardstick for java-fast.
 * benchmarks/vs-libtorch.sh alternates it with {@code ./mla bench} and prints the ratios.
 *
 * <p>The data are {@code ./mla bench}'s own: the generator DecodeBench draws from (seed 42), replayed in the
 * same order (cache, query, kv_b_proj), so both sides attend over the same numbers; {@code --check} proves it
 * by comparing this step's output with java-fast's and the reference kernels' on the same shape. DJL has no
 * einsum, so each of model.py's einsums is the batched product torch.einsum reduces it to (the batch letter
 * first, then torch.bmm/matmul over views, no copies of the cache or the weights):
 * <pre>
 *   q      = einsum("bshd,hdc->bshc", q_nope, wkv_b[:, :dn])         bmm over h
 *   scores = (einsum("bshc,btc->bsht", q, kv_cache)                  bmm over b, kv_cache transposed
 *           + einsum("bshr,btr->bsht", q_pe, pe_cache)) * scale       bmm over b
 *   scores = scores.softmax(dim=-1, dtype=float32)
 *   x      = einsum("bsht,btc->bshc", scores, kv_cache)              bmm over b
 *   o      = einsum("bshc,hdc->bshd", x, wkv_b[:, -dv:])              bmm over h, W^UV transposed
 * </pre>
 * Timing as benchmarks/pytorch/absorb_decode.py: a warm-up of max(0.5 s, seconds / 5), then steps timed one
 * by one for the given seconds (at least 5); the mean is reported (as {@code ./mla bench}), median and best too.
 */
public final class TorchAbsorb {
    static final int DC = 512, DR = 64, DN = 128, DV = 128;
    /** DecodeBench.EXACT_FILL_LIMIT and FILL_BLOCK (package-private there): how it fills a cache. */
    static final long EXACT_FILL_LIMIT = 1L << 26;
    static final int FILL_BLOCK = 1024;
    /** The seed ./mla bench gives DecodeBench. */
    static final long BENCH_SEED = 42;

    private TorchAbsorb() {
    }

    record Options(List<int[]> shapes, int threads, double seconds, Path csv, boolean check, double tolerance, boolean infoOnly) {
    }

    public static void main(String[] args) throws Exception {
        Options o = parse(args);
        System.setProperty("ai.djl.pytorch.num_threads", Integer.toString(o.threads()));
        System.setProperty("ai.djl.pytorch.num_interop_threads", "1");
        if (System.getProperty("ai.djl.offline") == null) System.setProperty("ai.djl.offline", "true");
        Engine engine = Engine.getEngine("PyTorch");
        try (NDManager manager = engine.newBaseManager(Device.cpu())) {
            printSetup(engine, manager, o.threads());
            if (o.infoOnly()) return;
            List<String[]> rows = new ArrayList<>();
            boolean ok = true;
            for (int[] s : o.shapes()) {
                try (Step step = new Step(manager, s[0], s[1], s[2])) {
                    if (o.check()) ok &= step.check(o.tolerance());
                    else rows.add(step.time(o.seconds(), device(engine, o.threads())));
                }
            }
            if (o.csv() != null && !rows.isEmpty()) appendCsv(o.csv(), rows);
            if (!ok) System.exit(1);
        }
    }

    private static void printSetup(Engine engine, NDManager manager, int threads) {
        System.out.printf("libtorch %s via DJL %s, %d intra-op threads (1 inter-op); features: %s%n",
                engine.getVersion(), Engine.getDjlVersion(), threads, Libtorch.features());
        System.out.println("libtorch mapped: " + String.join(", ", Libtorch.mappedLibraries()));
        System.out.println("libtorch config: " + Libtorch.showConfig().map(Libtorch::blasSummary)
                .orElse("at::show_config() not reachable"));
        System.out.println("libtorch BLAS: " + Libtorch.mklVersion().orElse("MKL_Get_Version_String not reachable")
                + " (MKL_VERBOSE=1 prints how it sees this CPU)");
        Libtorch.parallelInfo().ifPresent(p -> System.out.println("libtorch threads: " + String.join("; ",
                p.lines().map(String::trim).filter(l -> l.matches("(?i)(at::get_num|omp_get_max|mkl_get_max|at::get_num_interop).*")).toList())));
        System.out.printf("libtorch 2048^3 sgemm: %.1f GFLOP/s%n", gemmGflops(manager, 2048, 5));
        System.out.flush();
    }

    /** The best of {@code reps} n³ f32 products, in GFLOP/s: the proof that the BLAS is an optimised one. */
    static double gemmGflops(NDManager manager, int n, int reps) {
        try (NDManager m = manager.newSubManager()) {
            NDArray x = m.randomNormal(new Shape(n, n)), y = m.randomNormal(new Shape(n, n));
            x.matMul(y).close();
            double best = Double.MAX_VALUE;
            for (int i = 0; i < reps; i++) {
                long t0 = System.nanoTime();
                x.matMul(y).close();
                best = Math.min(best, (System.nanoTime() - t0) * 1e-9);
            }
            return 2.0 * n * n * n / best / 1e9;
        }
    }

    /** The tensors of one shape, drawn as DecodeBench draws them, and the step over them. */
    static final class Step implements AutoCloseable {
        final int batch, heads, context;
        final NDManager m;
        final NDArray qNope, qPe, kv, kvT, peT, wUK, wUVT, scaleT;
        final List<NDArray> temps = new ArrayList<>();

        Step(NDManager manager, int batch, int heads, int context) {
            this.batch = batch;
            this.heads = heads;
            this.context = context;
            this.m = manager.newSubManager();
            scaleT = m.create((float) MlaConfig.deepseekV3().withHeads(heads).softmaxScale());    // a 0-d tensor, made once
            float[][] d = replay(batch, heads, context, BENCH_SEED);
            kv = m.create(d[0], new Shape(batch, context, DC));                        // kv_cache [B, T, d_c]
            NDArray pe = m.create(d[1], new Shape(batch, context, DR));                // pe_cache [B, T, d_r]
            NDArray q = m.create(d[2], new Shape(batch, heads, DN + DR));              // [B, H, d_n + d_r], s = 1
            NDArray wkvB = m.create(d[3], new Shape(heads, DN + DV, DC));              // wkv_b.view(H, -1, d_c)
            qNope = q.get(new NDIndex(":, :, :" + DN)).transpose(1, 0, 2);            // [H, B, d_n]
            qPe = q.get(new NDIndex(":, :, " + DN + ":"));                            // [B, H, d_r]
            kvT = kv.transpose(0, 2, 1);                                              // [B, d_c, T]
            peT = pe.transpose(0, 2, 1);                                              // [B, d_r, T]
            wUK = wkvB.get(new NDIndex(":, :" + DN + ", :"));                         // [H, d_n, d_c]
            wUVT = wkvB.get(new NDIndex(":, " + DN + ":, :")).transpose(0, 2, 1);     // [H, d_c, d_v]
        }

        private NDArray t(NDArray a) {
            temps.add(a);
            return a;
        }

        /** One decode step; returns o [B, H, d_v] (a view; the caller closes it, the step's other temporaries are freed). */
        NDArray run() {
            try {
                NDArray qLat = t(t(qNope.matMul(wUK)).transpose(1, 0, 2));                        // [B, H, d_c]
                NDArray scores = t(t(t(qLat.matMul(kvT)).add(t(qPe.matMul(peT)))).mul(scaleT));   // [B, H, T]
                NDArray p = t(scores.softmax(-1));
                NDArray x = t(t(p.matMul(kv)).transpose(1, 0, 2));                                // [H, B, d_c]
                NDArray o = t(x.matMul(wUVT));                                                    // [H, B, d_v]
                return o.transpose(1, 0, 2);      // a view: it keeps o's storage when o's handle is closed
            } finally {
                temps.forEach(NDArray::close);
                temps.clear();
            }
        }

        String label() {
            return "B" + batch + " H" + heads + " T" + context;
        }

        DecodeBench.Shape shape() {
            return new DecodeBench.Shape(AttentionPath.ABSORBED, CacheDtype.F32, batch, heads, context);
        }

        String[] time(double seconds, String device) {
            long warmEnd = System.nanoTime() + (long) (Math.max(0.5, seconds / 5) * 1e9);
            while (System.nanoTime() < warmEnd) run().close();
            List<Double> times = new ArrayList<>();
            long end = System.nanoTime() + (long) (seconds * 1e9);
            while (System.nanoTime() < end || times.size() < 5) {
                long t0 = System.nanoTime();
                NDArray o = run();
                times.add((System.nanoTime() - t0) * 1e-6);
                o.close();
            }
            double[] ms = times.stream().mapToDouble(Double::doubleValue).sorted().toArray();
            double mean = Arrays.stream(ms).average().orElseThrow(), median = ms[ms.length / 2], best = ms[0];
            DecodeBench.Shape s = shape();
            double gbs = DecodeBench.latentBytes(s) / (mean * 1e-3) / 1e9, gfs = DecodeBench.flops(s) / (mean * 1e-3) / 1e9;
            System.out.printf("libtorch %s absorbed f32: mean %.3f ms, median %.3f ms, best %.3f ms (%d runs), %.2f GB/s, %.2f GFLOP/s%n",
                    label(), mean, median, best, ms.length, gbs, gfs);
            System.out.flush();
            return new String[] {"libtorch", "absorbed", "f32", "" + batch, "" + heads, "" + context,
                    String.format("%.6f", mean), String.format("%.4f", gbs), String.format("%.4f", gfs), String.format("%.6f", median),
                    device, java.time.LocalDate.now(java.time.ZoneOffset.UTC).toString(), "yes"};
        }

        /**
         * This step's o against java-fast's and the reference kernels' (DecodeBench over the same seed, the
         * graph ./mla bench times): max|Δ| and max|Δ| / max|o|, which must stay within {@code tolerance}.
         */
        boolean check(double tolerance) {
            float[] torch;
            try (NDArray o = run()) {
                torch = o.toFloatArray();
            }
            DecodeBench bench = new DecodeBench(shape(), context, BENCH_SEED, 0);
            boolean ok = true;
            for (GraphExecutor ex : new GraphExecutor[] {new FastExecutor(), new JvmExecutor()}) {
                float[] java = bench.runOnce(ex);
                double maxAbs = 0, maxDiff = 0;
                for (int i = 0; i < java.length; i++) {
                    maxAbs = Math.max(maxAbs, Math.abs(java[i]));
                    maxDiff = Math.max(maxDiff, Math.abs(java[i] - torch[i]));
                }
                double rel = maxDiff / maxAbs;
                boolean pass = java.length == torch.length && rel <= tolerance;
                ok &= pass;
                System.out.printf("check %s absorbed f32: libtorch vs %s: max|Δ| %.3e, max|o| %.3e, max|Δ|/max|o| %.3e (tolerance %.0e) %s%n",
                        label(), ex instanceof FastExecutor ? "java-fast" : "java-reference", maxDiff, maxAbs, rel, tolerance,
                        pass ? "ok" : "FAILED");
            }
            return ok;
        }

        @Override
        public void close() {
            m.close();
        }
    }

    /**
     * latent [B·T·d_c], rope [B·T·d_r], q [B·H·(d_n+d_r)], kv_b_proj [H·(d_n+d_v)·d_c]: the numbers
     * DecodeBench(shape, seed) draws for a contiguous cache of capacity T, in its order.
     */
    static float[][] replay(int batch, int heads, int context, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        float[] latent = new float[Math.multiplyExact(batch * context, DC)], rope = new float[batch * context * DR];
        if ((long) batch * context * (DC + DR) <= EXACT_FILL_LIMIT) {
            for (int b = 0; b < batch; b++) {
                System.arraycopy(Gaussians.floats(rnd, context * DC, 1), 0, latent, b * context * DC, context * DC);
                System.arraycopy(Gaussians.floats(rnd, context * DR, 1), 0, rope, b * context * DR, context * DR);
            }
        } else {                                      // DecodeBench.fillRepeating: one block, each sequence from its own row
            int block = Math.min(FILL_BLOCK, context);
            float[] lb = Gaussians.floats(rnd, block * DC, 1), rb = Gaussians.floats(rnd, block * DR, 1);
            for (int b = 0; b < batch; b++) {
                for (int t = 0; t < context; t++) {
                    int row = (t + 37 * b) % block;
                    System.arraycopy(lb, row * DC, latent, (b * context + t) * DC, DC);
                    System.arraycopy(rb, row * DR, rope, (b * context + t) * DR, DR);
                }
            }
        }
        float[] q = Gaussians.floats(rnd, batch * heads * (DN + DR), 1);
        float[] wkvB = Gaussians.floats(rnd, heads * (DN + DV) * DC, 1 / Math.sqrt(DC));
        return new float[][] {latent, rope, q, wkvB};
    }

    /** The CSV's device column, as ./mla bench writes it for a JVM backend: the CPU, then libtorch and its threads (no commas). */
    static String device(Engine engine, int threads) {
        return (org.tornadomla.bench.Charts.cpu() + "; libtorch " + engine.getVersion() + " (" + threads + " intra-op threads)").replace(',', ';');
    }

    private static void appendCsv(Path csv, List<String[]> rows) throws IOException {
        boolean fresh = !Files.exists(csv);
        if (csv.getParent() != null) Files.createDirectories(csv.getParent());
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(csv, StandardOpenOption.CREATE, StandardOpenOption.APPEND))) {
            if (fresh) w.println("backend,path,dtype,batch,heads,context,ms_per_step,gb_per_s,gflop_per_s,ms_median,device,date,warmed_up");
            rows.forEach(r -> w.println(String.join(",", r)));
        }
    }

    static final String USAGE = """
            usage: TorchAbsorb [--shapes B:H:T,...] [--threads N] [--seconds S] [--csv FILE] [--check [--tolerance R]] [--info]
              --shapes   default 1:128:4096,8:128:4096,1:16:16384
              --threads  libtorch's intra-op threads (default: every core)
              --seconds  timed seconds per shape after the warm-up (default 3)
              --csv      append results in ./mla bench's CSV format (backend libtorch; ms_median, device, date, warmed_up too)
              --check    time nothing: compare the step's output with java-fast's and the reference kernels' on
                         the same data; exit 1 if max|Δ|/max|o| exceeds --tolerance (default 1e-3)
              --info     print libtorch's setup (threads, BLAS, config, a 2048^3 sgemm) and stop""";

    static Options parse(String[] args) {
        String shapes = "1:128:4096,8:128:4096,1:16:16384";
        int threads = Runtime.getRuntime().availableProcessors();
        double seconds = 3, tolerance = 1e-3;
        Path csv = null;
        boolean check = false, info = false;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--shapes" -> shapes = value(args, ++i);
                case "--threads" -> threads = Integer.parseInt(value(args, ++i));
                case "--seconds" -> seconds = Double.parseDouble(value(args, ++i));
                case "--csv" -> csv = Path.of(value(args, ++i));
                case "--tolerance" -> tolerance = Double.parseDouble(value(args, ++i));
                case "--check" -> check = true;
                case "--info" -> info = true;
                case "-h", "--help" -> {
                    System.out.println(USAGE);
                    System.exit(0);
                }
                default -> fail("unknown option " + a);
            }
        }
        List<int[]> list = new ArrayList<>();
        for (String s : shapes.split(",")) {
            String[] p = s.trim().split(":");
            if (p.length != 3) fail("a shape is B:H:T, found " + s);
            list.add(new int[] {Integer.parseInt(p[0]), Integer.parseInt(p[1]), Integer.parseInt(p[2])});
        }
        return new Options(list, threads, seconds, csv, check, tolerance, info);
    }

    private static String value(String[] args, int i) {
        if (i >= args.length) fail(args[i - 1] + " needs a value");
        return args[i];
    }

    private static void fail(String message) {
        System.err.println("TorchAbsorb: " + message + "\n" + USAGE);
        System.exit(2);
    }
}
