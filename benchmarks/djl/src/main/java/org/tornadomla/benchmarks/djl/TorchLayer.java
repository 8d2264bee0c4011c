package org.tornadomla.benchmarks.djl;

import ai.djl.Device;
import ai.djl.engine.Engine;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDArrays;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.index.NDIndex;
import ai.djl.ndarray.types.Shape;
import org.tornadomla.attention.AttentionOptions;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.attention.MlaLayer;
import org.tornadomla.bench.LayerBench;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.config.RopeFrequencies;
import org.tornadomla.fast.FastExecutor;
import org.tornadomla.internal.Gaussians;
import org.tornadomla.weights.MlaWeights;
import org.tornadomla.weights.WeightDtype;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * A decode step of the whole MLA layer at DeepSeek-V3 geometry (hidden 7168, 128 heads), java-fast against
 * libtorch 2.7.1 through DJL, alternating in one JVM: the layer yardstick of issue 23. libtorch runs the steps of
 * DeepSeek-V3's inference/model.py with attn_impl = "absorb" on f32 weights, F.linear as {@code x · Wᵀ}:
 * <pre>
 *   q   = wq_b(q_norm(wq_a(x)))                 [B, H, d_n + d_r]; q_pe = rope(q_pe, pos)
 *   kv  = wkv_a(x); kv_cache[:, pos] = kv_norm(kv[:, :d_c]); pe_cache[:, pos] = rope(kv[:, d_c:], pos)
 *   the attention core as {@link TorchAbsorb} (absorb einsums, softmax over pos + 1 tokens)
 *   y   = wo(o.flatten(1))
 * </pre>
 * java-fast runs {@link LayerBench} (MlaLayer's decode graph, absorbed path, f32 cache) with the same seed's weights
 * held as f32, bf16 or FP8; libtorch always gets them dequantised to f32 (what F.linear on a dequantised
 * checkpoint reads). Before any timing it compares libtorch's y with java-fast's on the same weights (f32), cache
 * and x, within a relative tolerance of 1e-3, and exits 1 if they differ ({@code --no-check} skips that). With
 * {@code --prefill S,...} it times prefills of S tokens instead ({@link #prefills}).
 */
public final class TorchLayer {
    static final long SEED = 42;

    private TorchLayer() {
    }

    public static void main(String[] args) throws Exception {
        List<Integer> batches = List.of(1, 8);
        int context = 4096, threads = Runtime.getRuntime().availableProcessors(), rounds = 2;
        double seconds = 3;
        List<WeightDtype> forms = List.of(WeightDtype.F32, WeightDtype.BF16, WeightDtype.FP8);
        boolean check = true;
        List<Integer> prefill = List.of();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].equals("--no-check") && !args[i].equals("-h") && !args[i].equals("--help") && i + 1 >= args.length) {
                usage(args[i] + " needs a value");
            }
            switch (args[i]) {
                case "--batches" -> batches = ints(args[++i]);
                case "--context" -> context = (int) number(args[++i], false);
                case "--threads" -> threads = (int) number(args[++i], false);
                case "--rounds" -> rounds = (int) number(args[++i], false);
                case "--seconds" -> seconds = number(args[++i], true);
                case "--weights" -> forms = forms(args[++i]);
                case "--no-check" -> check = false;
                case "--prefill" -> prefill = ints(args[++i]);
                case "-h", "--help" -> {
                    System.out.println(USAGE);
                    System.exit(0);
                }
                default -> usage("unknown option " + args[i]);
            }
        }
        if (context < 2 || rounds < 1 || threads < 1 || !(seconds > 0) || batches.stream().anyMatch(b -> b < 1) || prefill.stream().anyMatch(n -> n < 1)) {
            usage("needs --context ≥ 2, --rounds, --threads, --batches and --prefill ≥ 1, --seconds > 0");
        }
        System.setProperty("ai.djl.pytorch.num_threads", Integer.toString(threads));
        System.setProperty("ai.djl.pytorch.num_interop_threads", "1");
        if (System.getProperty("ai.djl.offline") == null) System.setProperty("ai.djl.offline", "true");
        MlaConfig c = MlaConfig.deepseekV3();
        Engine engine = Engine.getEngine("PyTorch");
        System.out.printf("libtorch %s via DJL %s, %d intra-op threads; java-fast %d threads; DeepSeek-V3 layer (hidden %d, %d heads), f32 cache%n",
                engine.getVersion(), Engine.getDjlVersion(), threads, threads, c.hiddenSize(), c.numHeads());
        MlaWeights w32 = MlaWeights.random(c, SEED);
        try (NDManager manager = engine.newBaseManager(Device.cpu())) {
            if (!prefill.isEmpty()) {
                prefills(manager, c, w32, forms, prefill, rounds, threads, check);
                return;
            }
            if (check) {
                if (!new Step(manager, c, w32, 2, 300, SEED).check(1e-3)) System.exit(1);
            }
            List<String> table = new ArrayList<>();
            for (WeightDtype form : forms) {
                MlaWeights wForm = form == WeightDtype.F32 ? w32 : w32.to(form);
                // libtorch reads the form's numbers dequantised: F.linear on a dequantised checkpoint
                MlaWeights wTorch = form == WeightDtype.F32 ? w32 : wForm.to(WeightDtype.F32);
                LayerBench javaBench = new LayerBench(c, SEED, form);
                for (int b : batches) {
                    double bestJava = Double.MAX_VALUE, bestTorch = Double.MAX_VALUE;
                    try (Step step = new Step(manager, c, wTorch, b, context, SEED + b)) {
                        for (int r = 1; r <= rounds; r++) {
                            double jm;
                            try (FastExecutor ex = new FastExecutor(threads)) {
                                jm = javaBench.run("java-fast", ex, AttentionPath.ABSORBED, CacheDtype.F32, b, List.of(context), seconds * 1000, s -> { })
                                        .getFirst().msPerStep();
                            }
                            Thread.sleep(300);
                            double tm = step.time(seconds);
                            Thread.sleep(300);
                            System.out.printf(Locale.ROOT, "round %d/%d weights %s B%d T%d: java-fast %.3f ms, libtorch %.3f ms%n", r, rounds, form.name().toLowerCase(Locale.ROOT), b, context, jm, tm);
                            System.out.flush();
                            bestJava = Math.min(bestJava, jm);
                            bestTorch = Math.min(bestTorch, tm);
                        }
                    }
                    table.add(String.format(Locale.ROOT, "| %s | B%d T%d | %.3f | %.3f | **%.2f×** |", form.name().toLowerCase(Locale.ROOT), b, context, bestJava, bestTorch, bestTorch / bestJava));
                }
            }
            System.out.println("decode step of the layer, ms per step (mean of the timed steps, best round); ratio = libtorch / java-fast");
            System.out.println("| weights (java-fast; libtorch: dequantised f32) | shape | java-fast ms | libtorch ms | libtorch / java-fast |");
            System.out.println("|---|---|---|---|---|");
            table.forEach(System.out::println);
        }
    }

    /**
     * A prefill of S tokens from an empty cache per S and weights form: libtorch runs model.py's absorb path over all
     * S tokens at once with the causal mask (heads in groups when the [S, H, S] scores would pass 512 MB, the same
     * numbers in pieces), java-fast MlaLayer.forward with S tokens on the tiled path (its absorbed path would need
     * the same [S, H, S] scores in one Java array). One timing each per round (a prefill takes seconds), after one
     * untimed run of each; the check compares the two on 64 tokens.
     */
    static void prefills(NDManager manager, MlaConfig c, MlaWeights w32, List<WeightDtype> forms, List<Integer> sizes, int rounds,
                         int threads, boolean check) throws InterruptedException {
        AttentionOptions tiled = AttentionOptions.of(AttentionPath.TILED);
        if (check) {
            try (Prefill p = new Prefill(manager, c, w32, 64, SEED)) {
                if (!p.check(w32, tiled, 1e-3)) System.exit(1);
            }
        }
        List<String> table = new ArrayList<>();
        for (WeightDtype form : forms) {
            MlaWeights wForm = form == WeightDtype.F32 ? w32 : w32.to(form);
            MlaWeights wTorch = form == WeightDtype.F32 ? w32 : wForm.to(WeightDtype.F32);
            for (int n : sizes) {
                double bestJava = Double.MAX_VALUE, bestTorch = Double.MAX_VALUE;
                try (Prefill p = new Prefill(manager, c, wTorch, n, SEED + n);
                     FastExecutor ex = new FastExecutor(threads);
                     MlaLayer layer = new MlaLayer(wForm, ex)) {
                    LatentCache cache = layer.newCache(1, n, CacheDtype.F32);
                    for (int r = 0; r <= rounds; r++) {            // round 0: the untimed first run of each side
                        long t0 = System.nanoTime();
                        layer.forward(cache, p.xs, n, tiled);
                        double jm = (System.nanoTime() - t0) * 1e-6;
                        cache.truncate(0);
                        Thread.sleep(300);
                        t0 = System.nanoTime();
                        p.run().close();
                        double tm = (System.nanoTime() - t0) * 1e-6;
                        Thread.sleep(300);
                        if (r == 0) continue;
                        System.out.printf(Locale.ROOT, "round %d/%d prefill weights %s S%d: java-fast %.1f ms, libtorch %.1f ms%n", r, rounds,
                                form.name().toLowerCase(Locale.ROOT), n, jm, tm);
                        System.out.flush();
                        bestJava = Math.min(bestJava, jm);
                        bestTorch = Math.min(bestTorch, tm);
                    }
                }
                table.add(String.format(Locale.ROOT, "| %s | prefill S%d | %.1f | %.1f | **%.2f×** |", form.name().toLowerCase(Locale.ROOT), n,
                        bestJava, bestTorch, bestTorch / bestJava));
            }
        }
        System.out.println("prefill of the layer (B1, from an empty cache), ms (best round); ratio = libtorch / java-fast");
        System.out.println("| weights (java-fast; libtorch: dequantised f32) | shape | java-fast ms (tiled) | libtorch ms (model.py absorb) | libtorch / java-fast |");
        System.out.println("|---|---|---|---|---|");
        table.forEach(System.out::println);
    }

    /**
     * What a decode step and a prefill share: the layer's weights as libtorch tensors (F.linear's Wᵀ as transposed
     * views), model.py's RMSNorm and RoPE, and the temporaries of one run, freed at its end.
     */
    abstract static class Layer implements AutoCloseable {
        final MlaConfig c;
        final int h, dn, dr, dv, dc;
        final NDManager m;
        final NDArray wqA, qANorm, wqB, wkvA, kvANorm, wUK, wUVT, wo, scale;
        final List<NDArray> temps = new ArrayList<>();

        Layer(NDManager manager, MlaConfig c, MlaWeights w) {
            this.c = c;
            h = c.numHeads();
            dn = c.qkNopeHeadDim();
            dr = c.qkRopeHeadDim();
            dv = c.vHeadDim();
            dc = c.kvLoraRank();
            m = manager.newSubManager();
            int d = c.hiddenSize(), qr = c.qLoraRank();
            wqA = m.create(w.qA().toFloats(), new Shape(qr, d)).transpose();                    // F.linear: x · Wᵀ
            qANorm = m.create(w.qANorm().toFloats(), new Shape(qr));
            wqB = m.create(w.qB().toFloats(), new Shape((long) h * (dn + dr), qr)).transpose();
            wkvA = m.create(w.kvA().toFloats(), new Shape(dc + dr, d)).transpose();
            kvANorm = m.create(w.kvANorm().toFloats(), new Shape(dc));
            NDArray wkvB = m.create(w.kvB().toFloats(), new Shape(h, dn + dv, dc));           // wkv_b.view(H, -1, d_c)
            wUK = wkvB.get(new NDIndex(":, :" + dn + ", :"));                                 // [H, d_n, d_c]
            wUVT = wkvB.get(new NDIndex(":, " + dn + ":, :")).transpose(0, 2, 1);             // [H, d_c, d_v]
            wo = m.create(w.o().toFloats(), new Shape(d, (long) h * dv)).transpose();
            scale = m.create((float) c.softmaxScale());
        }

        /** The layer's output y (the caller closes it); the run's temporaries are freed. */
        abstract NDArray run();

        /** y as numbers. */
        float[] output() {
            try (NDArray y = run()) {
                return y.toFloatArray();
            }
        }

        NDArray t(NDArray a) {
            temps.add(a);
            return a;
        }

        void freeTemps() {
            temps.forEach(NDArray::close);
            temps.clear();
        }

        /** DeepSeek's RMSNorm over the last axis: x · rsqrt(mean(x²) + eps) · weight. */
        NDArray rmsNorm(NDArray v, NDArray weight) {
            NDArray ms = t(t(v.square()).mean(new int[] {-1}, true));
            return t(t(v.div(t(t(ms.add((float) c.rmsNormEps())).sqrt()))).mul(weight));
        }

        /**
         * Interleaved pairs (x[2i], x[2i+1]) of the last axis rotated by angles whose cos and sin broadcast against
         * [..., d_r/2] (DeepSeek's apply_rotary_emb).
         */
        NDArray rope(NDArray v, NDArray cos, NDArray sin) {
            Shape s = v.getShape();
            NDArray pairs = t(v.reshape(s.slice(0, s.dimension() - 1).addAll(new Shape(dr / 2, 2))));
            NDArray x0 = t(pairs.get(new NDIndex("..., 0"))), x1 = t(pairs.get(new NDIndex("..., 1")));
            NDArray r0 = t(t(x0.mul(cos)).sub(t(x1.mul(sin)))), r1 = t(t(x0.mul(sin)).add(t(x1.mul(cos))));
            return t(t(NDArrays.stack(new NDList(r0, r1), -1)).reshape(s));
        }

        /** cos and sin of RoPE at position p, as Rope.rotatePairs: the angle in float, cos/sin in double, HF's multiplier. */
        float[][] angles(int p) {
            float[] inv = RopeFrequencies.inverseFrequencies(c), co = new float[dr / 2], si = new float[dr / 2];
            float k = RopeFrequencies.cosSinScale(c);
            for (int i = 0; i < dr / 2; i++) {
                float angle = p * inv[i];
                co[i] = (float) Math.cos(angle) * k;
                si[i] = (float) Math.sin(angle) * k;
            }
            return new float[][] {co, si};
        }

        @Override
        public void close() {
            m.close();
        }
    }

    /** max|Δ| / max|y| of libtorch's y against java-fast's, printed; whether it is within the tolerance. */
    static boolean compare(String what, float[] torch, float[] fast, double tolerance) {
        double maxAbs = 0, maxDiff = 0;
        for (int i = 0; i < Math.min(fast.length, torch.length); i++) {
            maxAbs = Math.max(maxAbs, Math.abs(fast[i]));
            maxDiff = Math.max(maxDiff, Math.abs(fast[i] - torch[i]));
        }
        double rel = maxDiff / maxAbs;
        boolean ok = fast.length == torch.length && rel <= tolerance;
        System.out.printf(Locale.ROOT, "check %s: max|Δ| %.3e, max|y| %.3e, max|Δ|/max|y| %.3e (tolerance %.0e) %s%n",
                what, maxDiff, maxAbs, rel, tolerance, ok ? "ok" : "FAILED");
        return ok;
    }

    /** libtorch's prefill of S tokens of one sequence: positions 0 … S − 1, causal mask. */
    static final class Prefill extends Layer {
        final int s, group;
        final NDArray x, cos, sin, mask;
        final float[] xs;

        Prefill(NDManager manager, MlaConfig c, MlaWeights w, int s, long seed) {
            super(manager, c, w);
            this.s = s;
            xs = Gaussians.floats(new SplittableRandom(seed), s * c.hiddenSize(), 1);
            x = m.create(xs, new Shape(s, c.hiddenSize()));
            float[] co = new float[s * dr / 2], si = new float[s * dr / 2];
            for (int p = 0; p < s; p++) {
                float[][] a = angles(p);
                System.arraycopy(a[0], 0, co, p * dr / 2, dr / 2);
                System.arraycopy(a[1], 0, si, p * dr / 2, dr / 2);
            }
            cos = m.create(co, new Shape(s, 1, dr / 2));        // [S, 1, d_r/2]: broadcast over heads
            sin = m.create(si, new Shape(s, 1, dr / 2));
            float[] mk = new float[s * s];
            for (int i = 0; i < s; i++) for (int j = i + 1; j < s; j++) mk[i * s + j] = Float.NEGATIVE_INFINITY;
            mask = m.create(mk, new Shape(1, s, s));            // scores [g, S, T] + mask
            long perHead = (long) s * s * 4;
            group = (int) Math.max(1, Math.min(h, (1L << 29) / perHead));   // scores of at most 512 MB per group
        }

        /** The prefill; returns y [S, hidden]. */
        @Override
        NDArray run() {
            try {
                NDArray cq = rmsNorm(t(x.matMul(wqA)), qANorm);
                NDArray q = t(t(cq.matMul(wqB)).reshape(s, h, dn + dr));
                NDArray qNope = t(t(q.get(new NDIndex(":, :, :" + dn))).transpose(1, 0, 2));     // [H, S, d_n]
                NDArray qPe = rope(t(q.get(new NDIndex(":, :, " + dn + ":"))), cos, sin);        // [S, H, d_r]
                NDArray kv = t(x.matMul(wkvA));                                                   // [S, d_c + d_r]
                NDArray kvCache = rmsNorm(t(kv.get(new NDIndex(":, :" + dc))), kvANorm);         // [S, d_c]
                NDArray peCache = t(rope(t(t(kv.get(new NDIndex(":, " + dc + ":"))).reshape(s, 1, dr)), cos, sin).reshape(s, dr));
                NDArray kvT = t(kvCache.transpose()), peT = t(peCache.transpose());
                NDArray qLat = t(qNope.matMul(wUK));                                               // [H, S, d_c]
                NDArray qPeH = t(qPe.transpose(1, 0, 2));                                          // [H, S, d_r]
                NDList parts = new NDList();
                for (int h0 = 0; h0 < h; h0 += group) {
                    NDIndex hs = new NDIndex(h0 + ":" + Math.min(h, h0 + group));
                    // scores [g, S, T] = (q_lat·kvᵀ + q_pe·peᵀ)·scale + mask; softmax over T; x = p·kv. This group's
                    // temporaries (512 MB each at S = 4096) are freed before the next group's
                    List<NDArray> local = new ArrayList<>();
                    try {
                        NDArray a = qLat.get(hs), b = qPeH.get(hs), u = wUVT.get(hs);
                        local.addAll(List.of(a, b, u));
                        NDArray s1 = a.matMul(kvT); local.add(s1);
                        NDArray s2 = b.matMul(peT); local.add(s2);
                        NDArray s3 = s1.add(s2); local.add(s3);
                        NDArray s4 = s3.mul(scale); local.add(s4);
                        NDArray s5 = s4.add(mask); local.add(s5);
                        NDArray p = s5.softmax(-1); local.add(p);
                        NDArray xl = p.matMul(kvCache); local.add(xl);                            // [g, S, d_c]
                        parts.add(t(xl.matMul(u)));                                                // [g, S, d_v]
                    } finally {
                        local.forEach(NDArray::close);
                    }
                }
                NDArray o = t(t(t(NDArrays.concat(parts, 0)).transpose(1, 0, 2)).reshape(s, (long) h * dv));
                return o.matMul(wo);
            } finally {
                freeTemps();
            }
        }

        boolean check(MlaWeights weights, AttentionOptions opt, double tolerance) {
            float[] torch = output(), fast;
            try (FastExecutor ex = new FastExecutor(Runtime.getRuntime().availableProcessors());
                 MlaLayer layer = new MlaLayer(weights, ex)) {
                fast = layer.forward(layer.newCache(1, s, CacheDtype.F32), xs, s, opt);
            }
            return compare("prefill S" + s + " (f32 weights): libtorch (absorb, causal) vs java-fast ("
                    + opt.path().name().toLowerCase(Locale.ROOT) + ")", torch, fast, tolerance);
        }
    }

    static final String USAGE = """
            usage: TorchLayer [--batches 1,8] [--context T] [--weights f32,bf16,fp8] [--rounds N] [--seconds S] [--threads N]
                              [--no-check] [--prefill S,...]
              decode steps of the DeepSeek-V3 layer at each batch and context T (default 4096), or with --prefill a prefill
              of S tokens each; java-fast with the weights held as each form, libtorch on them dequantised to f32""";

    private static List<WeightDtype> forms(String list) {
        List<WeightDtype> out = new ArrayList<>();
        for (String f : list.split(",")) {
            switch (f.trim().toLowerCase(Locale.ROOT)) {
                case "f32" -> out.add(WeightDtype.F32);
                case "bf16" -> out.add(WeightDtype.BF16);
                case "fp8" -> out.add(WeightDtype.FP8);
                default -> usage("weights are f32, bf16 or fp8, found " + f);
            }
        }
        return out;
    }

    private static double number(String s, boolean fraction) {
        try {
            return fraction ? Double.parseDouble(s) : Integer.parseInt(s);
        } catch (NumberFormatException e) {
            usage("a number, found " + s);
            return 0;
        }
    }

    private static void usage(String problem) {
        System.err.println("TorchLayer: " + problem + "\n" + USAGE);
        System.exit(2);
    }

    static List<Integer> ints(String s) {
        try {
            return java.util.Arrays.stream(s.split(",")).map(String::trim).map(Integer::parseInt).toList();
        } catch (NumberFormatException e) {
            usage("a list of whole numbers, found " + s);
            return List.of();
        }
    }

    /** libtorch's tensors for one batch and context and its decode step (the new token at position context − 1). */
    static final class Step extends Layer {
        final MlaWeights weights;
        final int batch, context;
        final NDArray kvCache, peCache, kvT, peT, x, cos, sin;
        final float[] latent, rope, xs;

        Step(NDManager manager, MlaConfig c, MlaWeights w, int batch, int context, long seed) {
            super(manager, c, w);
            this.weights = w;
            this.batch = batch;
            this.context = context;
            int d = c.hiddenSize();
            // the cache's first context − 1 rows (the new token's row is written by each step), and x
            SplittableRandom rnd = new SplittableRandom(seed);
            latent = Gaussians.floats(rnd, batch * (context - 1) * dc, 1);
            rope = Gaussians.floats(rnd, batch * (context - 1) * dr, 1);
            xs = Gaussians.floats(rnd, batch * d, 1);
            float[] kvFull = new float[batch * context * dc], peFull = new float[batch * context * dr];
            for (int b = 0; b < batch; b++) {
                System.arraycopy(latent, b * (context - 1) * dc, kvFull, b * context * dc, (context - 1) * dc);
                System.arraycopy(rope, b * (context - 1) * dr, peFull, b * context * dr, (context - 1) * dr);
            }
            kvCache = m.create(kvFull, new Shape(batch, context, dc));
            peCache = m.create(peFull, new Shape(batch, context, dr));
            kvT = kvCache.transpose(0, 2, 1);
            peT = peCache.transpose(0, 2, 1);
            x = m.create(xs, new Shape(batch, d));
            float[][] a = angles(context - 1);                  // RoPE at the new token's position
            cos = m.create(a[0], new Shape(dr / 2));
            sin = m.create(a[1], new Shape(dr / 2));
        }

        /** One decode step; returns y [B, hidden]. */
        @Override
        NDArray run() {
            try {
                int pos = context - 1;
                NDArray cq = rmsNorm(t(x.matMul(wqA)), qANorm);
                NDArray q = t(t(cq.matMul(wqB)).reshape(batch, h, dn + dr));
                NDArray qNope = t(t(q.get(new NDIndex(":, :, :" + dn))).transpose(1, 0, 2));     // [H, B, d_n]
                NDArray qPe = rope(t(q.get(new NDIndex(":, :, " + dn + ":"))), cos, sin);        // [B, H, d_r]
                NDArray kv = t(x.matMul(wkvA));                                                   // [B, d_c + d_r]
                NDArray ckv = rmsNorm(t(kv.get(new NDIndex(":, :" + dc))), kvANorm);
                NDArray kPe = rope(t(kv.get(new NDIndex(":, " + dc + ":"))), cos, sin);
                kvCache.set(new NDIndex(":, {}", pos), ckv);
                peCache.set(new NDIndex(":, {}", pos), kPe);
                NDArray qLat = t(t(qNope.matMul(wUK)).transpose(1, 0, 2));                       // [B, H, d_c]
                NDArray scores = t(t(t(qLat.matMul(kvT)).add(t(qPe.matMul(peT)))).mul(scale));  // [B, H, T]
                NDArray p = t(scores.softmax(-1));
                NDArray xl = t(t(p.matMul(kvCache)).transpose(1, 0, 2));                          // [H, B, d_c]
                NDArray o = t(t(t(xl.matMul(wUVT)).transpose(1, 0, 2)).reshape(batch, (long) h * dv));
                return o.matMul(wo);
            } finally {
                freeTemps();
            }
        }

        /** Mean ms per step over {@code seconds} after a warm-up of a fifth of that (at least 5 steps). */
        double time(double seconds) {
            long warmEnd = System.nanoTime() + (long) (Math.max(0.5, seconds / 5) * 1e9);
            while (System.nanoTime() < warmEnd) run().close();
            int n = 0;
            long t0 = System.nanoTime(), end = t0 + (long) (seconds * 1e9);
            while (System.nanoTime() < end || n < 5) {
                run().close();
                n++;
            }
            return (System.nanoTime() - t0) * 1e-6 / n;
        }

        /** libtorch's y against java-fast's MlaLayer on the same weights, cache rows and x. */
        boolean check(double tolerance) {
            float[] torch = output(), fast;
            try (FastExecutor ex = new FastExecutor(Runtime.getRuntime().availableProcessors());
                 MlaLayer layer = new MlaLayer(weights, ex)) {
                LatentCache cache = layer.newCache(batch, context, CacheDtype.F32);
                for (int b = 0; b < batch; b++) {
                    cache.write(b, java.util.Arrays.copyOfRange(latent, b * (context - 1) * dc, (b + 1) * (context - 1) * dc),
                            java.util.Arrays.copyOfRange(rope, b * (context - 1) * dr, (b + 1) * (context - 1) * dr));
                }
                fast = layer.forward(cache, xs, 1, AttentionOptions.of(AttentionPath.ABSORBED));
            }
            return compare("layer B" + batch + " T" + context + " (f32 weights): libtorch vs java-fast", torch, fast, tolerance);
        }
    }
}
