package org.tornadomla.bench;

import org.tornadomla.MlaException;
import org.tornadomla.attention.AttentionOptions;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.attention.MlaLayer;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.graph.GraphExecutor;
import org.tornadomla.graph.JvmExecutor;
import org.tornadomla.graph.KernelGraph;
import org.tornadomla.weights.MlaWeights;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The whole layer on a device against the JVM reference executor ({@link JvmExecutor}) in the same process:
 * a prefill and a few decode steps for one path and cache dtype, every output compared (the cache itself is
 * not: a quantised cache may legitimately differ by one code where device and JVM round differently, and a
 * wrongly written cache shows in every later decode output). This is what
 * {@code mla check} (and the GPU kit's check.txt) runs for every path × dtype × kernel set.
 *
 * <p>The batch holds sequences of different lengths: before the prefill, sequence b already holds
 * {@link #prefix(int)} tokens (the same random latents in both caches), so every step attends over a
 * different context per sequence. The device's output buffer is filled with NaN before each device
 * execution, so an output the device never wrote cannot pass.
 *
 * <p>Error per element: |device − reference| / max(1, |reference|) (as the tests' assertClose); a case
 * passes when the largest is at most {@link #tolerance(CacheDtype)}.
 */
public final class LayerCheck {
    /** Relative tolerance, f32 cache: fast-math and fused multiply-adds on the device (TornadoLayerTest's 1e-4). */
    public static final double TOL_F32 = 1e-4;
    /**
     * Quantised caches: a device value a few ulps off the JVM's can round to the neighbouring code when it is
     * written to the cache (one code: bf16 up to 2^-7 relative, int8 1/127 of the token's largest number, e4m3 up
     * to 2^-3 relative). Such a flip moves the output more the coarser the dtype, yet far less than a wrong
     * kernel does, so the coarser dtypes get larger tolerances.
     */
    public static final double TOL_BF16 = 5e-4, TOL_INT8 = 1e-3, TOL_FP8 = 3e-3;

    /** One case's outcome. {@code note} says what went wrong when the device run threw. */
    public record Result(AttentionPath path, CacheDtype dtype, String kernels, double maxAbsErr, double maxRelErr,
                         double tol, String note) {
        public boolean pass() {
            return note == null && maxRelErr <= tol;            // NaN compares false: a poisoned output fails
        }

        /** {@code PASS|FAIL <path> <dtype> <kernels> max_abs_err=… max_rel_err=… tol=…}. */
        public String line() {
            String s = String.format(Locale.ROOT, "%s %s %s %s max_abs_err=%.3e max_rel_err=%.3e tol=%.0e",
                    pass() ? "PASS" : "FAIL", path, dtype, kernels, maxAbsErr, maxRelErr, tol);
            return note == null ? s : s + " error=" + note;
        }
    }

    /** What the layer is asked to do: tokens per sequence in the prefill, decode steps after it. */
    public record Workload(int batch, int prefill, int steps, long seed) {
        public Workload {
            if (batch < 1 || prefill < 1 || steps < 0) {
                throw new MlaException("check needs batch >= 1, prefill >= 1 and steps >= 0, found " + batch + ", " + prefill + ", " + steps);
            }
        }
    }

    private final MlaConfig config;
    private final MlaWeights weights;
    private final Workload work;
    private final int tile, splits;
    private final Map<String, List<float[]>> reference = new HashMap<>();

    /**
     * @param tile   tiled path: tile size; small so a few tiles and empty splits occur at test lengths
     * @param splits tiled path: KV splits
     */
    public LayerCheck(MlaConfig config, Workload work, int tile, int splits) {
        this.config = config;
        this.work = work;
        this.weights = MlaWeights.random(config, work.seed());
        this.tile = tile;
        this.splits = splits;
    }

    public static double tolerance(CacheDtype dtype) {
        return switch (dtype) {
            case F32 -> TOL_F32;
            case BF16 -> TOL_BF16;
            case INT8 -> TOL_INT8;
            case FP8 -> TOL_FP8;
        };
    }

    /** Tokens sequence b holds before the prefill: 0, 3, 6, 2, 5, 1, 4, … (different lengths in one batch). */
    public static int prefix(int b) {
        return 3 * b % 7;
    }

    /** Cache capacity: the longest sequence after prefill and decode steps, plus 2 unused slots. */
    int capacity() {
        int maxPrefix = 0;
        for (int b = 0; b < work.batch(); b++) maxPrefix = Math.max(maxPrefix, prefix(b));
        return maxPrefix + work.prefill() + work.steps() + 2;
    }

    /** Runs one case on {@code device} and compares it with the reference (computed once per path and dtype). */
    public Result check(GraphExecutor device, String kernels, AttentionPath path, CacheDtype dtype) {
        List<float[]> expected = reference.computeIfAbsent(path + "/" + dtype, k -> run(new JvmExecutor(), path, dtype, false));
        List<float[]> actual;
        try {
            actual = run(device, path, dtype, true);
        } catch (RuntimeException e) {
            String msg = String.valueOf(e.getMessage()).lines().findFirst().orElse("").strip();
            return new Result(path, dtype, kernels, Double.NaN, Double.NaN, tolerance(dtype), e.getClass().getSimpleName() + ": " + msg);
        }
        double abs = 0, rel = 0;
        for (int i = 0; i < expected.size(); i++) {
            float[] e = expected.get(i), a = actual.get(i);
            for (int j = 0; j < e.length; j++) {
                double err = Math.abs((double) a[j] - e[j]);
                if (Double.isNaN(err)) return new Result(path, dtype, kernels, Double.NaN, Double.NaN, tolerance(dtype), null);
                abs = Math.max(abs, err);
                rel = Math.max(rel, err / Math.max(1, Math.abs(e[j])));
            }
        }
        return new Result(path, dtype, kernels, abs, rel, tolerance(dtype), null);
    }

    /** Every case for one executor: paths × dtypes. */
    public List<Result> checkAll(GraphExecutor device, String kernels) {
        List<Result> out = new ArrayList<>();
        for (AttentionPath p : AttentionPath.values()) {
            for (CacheDtype d : CacheDtype.values()) out.add(check(device, kernels, p, d));
        }
        return out;
    }

    /**
     * Prefix, prefill, decode steps on {@code executor}; returns the prefill output and each decode output.
     */
    private List<float[]> run(GraphExecutor executor, AttentionPath path, CacheDtype dtype, boolean poison) {
        int d = config.hiddenSize(), dc = config.kvLoraRank(), dr = config.qkRopeHeadDim();
        SplittableRandom rnd = new SplittableRandom(work.seed() + 1);
        List<float[]> outputs = new ArrayList<>();
        try (MlaLayer layer = new MlaLayer(weights, executor)) {
            LatentCache cache = layer.newCache(work.batch(), capacity(), dtype);
            for (int b = 0; b < work.batch(); b++) {
                int n = prefix(b);
                cache.write(b, MlaWeights.gaussians(rnd, n * dc, 1), MlaWeights.gaussians(rnd, n * dr, 1));
            }
            AttentionOptions opt = new AttentionOptions(path, tile, splits);
            float[] x = MlaWeights.gaussians(rnd, work.batch() * work.prefill() * d, 1);
            outputs.add(forward(layer, cache, x, work.prefill(), opt, poison));
            for (int s = 0; s < work.steps(); s++) {
                outputs.add(forward(layer, cache, MlaWeights.gaussians(rnd, work.batch() * d, 1), 1, opt, poison));
            }
        }
        return outputs;
    }

    private static float[] forward(MlaLayer layer, LatentCache cache, float[] x, int tokens, AttentionOptions opt, boolean poison) {
        float[] y = new float[x.length];
        if (poison) {
            // the graph's own output buffer: NaN, so a result the device did not compute and copy back cannot pass
            KernelGraph g = layer.graph(cache, tokens, opt);
            for (KernelGraph.Buffer b : g.buffers()) {
                if (b.role() == KernelGraph.Role.OUTPUT && b.array() instanceof float[] f) Arrays.fill(f, Float.NaN);
            }
            Arrays.fill(y, Float.NaN);
        }
        layer.forward(cache, x, tokens, opt, y);
        return y;
    }
}
