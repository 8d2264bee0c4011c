package org.tornadomla;

import org.junit.jupiter.api.Test;
import org.tornadomla.attention.AttentionOptions;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.attention.MlaLayer;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.cache.PagedCacheSpec;
import org.tornadomla.cache.internal.CacheStorage;
import org.tornadomla.config.IndexerConfig;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.config.RopeScaling;
import org.tornadomla.fast.FastExecutor;
import org.tornadomla.graph.GraphExecutor;
import org.tornadomla.graph.JvmExecutor;
import org.tornadomla.graph.KernelGraph;
import org.tornadomla.internal.Gaussians;
import org.tornadomla.weights.MlaWeights;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A sparse (DeepSeek-V3.2 DSA) layer end to end against independent double-precision references: the indexer of
 * {@link IndexerPrefillTest} (its own matrix products, norms, RoPE, Hadamard matrix, e4m3 grid and a full sort) picks
 * each token's positions, and {@link ReferenceMla} attends to them alone. A prefill then decode steps, on a
 * contiguous cache and on a paged one with a fork (copy-on-write of a partial block, the indexer's keys included),
 * every path, on the reference and java-fast executors.
 */
class SparseLayerTest {
    static final int D_TOPK = 8;
    static final double TOL = 1e-4;
    static final Supplier<GraphExecutor>[] EXECUTORS = executors();

    @SuppressWarnings("unchecked")
    private static Supplier<GraphExecutor>[] executors() {
        return new Supplier[] {JvmExecutor::new, FastExecutor::new};
    }

    static String name(Supplier<GraphExecutor> ex) {
        try (GraphExecutor e = ex.get()) {
            return e.getClass().getSimpleName();
        }
    }

    static MlaConfig config(int topK) {
        return new MlaConfig(64, 2, 32, 32, 16, 16, 16, 10000, 1e-6, 4096, 1, new RopeScaling(4, 256, 32, 1, 1, 1), false,
                new IndexerConfig(4, 128, topK, true, false));
    }

    static AttentionOptions options(AttentionPath path) {
        return path == AttentionPath.TILED ? new AttentionOptions(path, 4, 3) : AttentionOptions.of(path);
    }

    /** The positions the layer's last step selected, per row of its graph ([rows, k]), read from the graph's buffer. */
    static int[] selected(KernelGraph g) {
        for (KernelGraph.Buffer b : g.buffers()) if (b.name().equals("index_topk")) return ((int[]) b.array()).clone();
        throw new AssertionError("graph " + g.name() + " has no index_topk buffer: " + g.buffers().stream().map(KernelGraph.Buffer::name).toList());
    }

    static int[] row(int[] sel, int r, int k) {
        return Arrays.stream(sel, r * k, (r + 1) * k).filter(p -> p >= 0).toArray();
    }

    /**
     * One sequence's tokens and the selections the layer made for them, row by row; {@link #check} compares them with
     * the double-precision indexer and the outputs with the double-precision sparse layer.
     */
    static final class Sequence {
        final List<float[]> x = new ArrayList<>();
        final List<int[]> sel = new ArrayList<>();
        final List<float[]> y = new ArrayList<>();

        void add(float[] xs, int[] s, float[] ys) {
            x.add(xs);
            sel.add(s);
            y.add(ys);
        }

        Sequence copy() {
            Sequence c = new Sequence();
            c.x.addAll(x);
            c.sel.addAll(sel);
            c.y.addAll(y);
            return c;
        }
    }

    /** Counts rows whose k-th score was clearly separated (and so had to match exactly). */
    static int check(MlaWeights w, Sequence s, String what) {
        MlaConfig c = w.config();
        int D = c.hiddenSize(), T = s.x.size(), k = c.indexer().topK();
        float[] x = new float[T * D];
        for (int t = 0; t < T; t++) System.arraycopy(s.x.get(t), 0, x, t * D, D);
        IndexerPrefillTest.Ref ref = IndexerPrefillTest.reference(w, x, T);
        int[][] attend = new int[T][];
        int decided = 0;
        for (int t = 0; t < T; t++) {
            int[] expected = IndexerPrefillTest.topK(ref.scores(), t, k, T), got = s.sel.get(t);
            assertEquals(Math.min(k, t + 1), got.length, what + ": row " + t + " selects " + Arrays.toString(got));
            if (t + 1 <= k) {
                assertArrayEquals(expected, got, what + ": row " + t);
                attend[t] = expected;
                continue;
            }
            double max = 0;
            double[] sorted = new double[t + 1];
            for (int j = 0; j <= t; j++) {
                max = Math.max(max, Math.abs(ref.scores()[t * T + j]));
                sorted[j] = -ref.scores()[t * T + j];
            }
            Arrays.sort(sorted);
            double kth = -sorted[k - 1], margin = 0.01 * max;
            if (kth - -sorted[k] > margin) {                            // a clear k-th: the sets must agree
                assertArrayEquals(expected, got, what + ": row " + t);
                decided++;
                attend[t] = expected;
            } else {                                                     // a near tie at the k-th: any of the tied may be chosen
                for (int j = 0; j <= t; j++) {
                    double sc = ref.scores()[t * T + j];
                    boolean in = Arrays.binarySearch(got, j) >= 0;
                    if (sc > kth + margin && !in) fail(what + ": row " + t + " left out position " + j + ", clearly above the k-th score");
                    if (sc < kth - margin && in) fail(what + ": row " + t + " took position " + j + ", clearly below the k-th score");
                }
                attend[t] = got;
            }
        }
        double[] expectedY = ReferenceMla.prefill(w, x, T, false, attend).y();
        float[] gotY = new float[T * D];
        for (int t = 0; t < T; t++) System.arraycopy(s.y.get(t), 0, gotY, t * D, D);
        TestData.assertClose(expectedY, gotY, TOL, what + ": y");
        return decided;
    }

    static float[] rows(float[] a, int from, int n, int d) {
        return Arrays.copyOfRange(a, from * d, (from + n) * d);
    }

    // ------------------------------------------------------------------ (a) against the double-precision sparse layer

    @Test
    void contiguousPrefillAndDecodeMatchTheDoublePrecisionSparseLayer() {
        MlaConfig c = config(D_TOPK);
        MlaWeights w = MlaWeights.random(c, 31);
        int D = c.hiddenSize(), B = 2, P = 14, steps = 5;
        int decided = 0;
        for (Supplier<GraphExecutor> ex : EXECUTORS) {
            for (AttentionPath path : AttentionPath.values()) {
                AttentionOptions opt = options(path);
                try (GraphExecutor e = ex.get(); MlaLayer layer = new MlaLayer(w, e)) {
                    String what = e.getClass().getSimpleName() + " " + path + " contiguous";
                    LatentCache cache = layer.newCache(B, 32, CacheDtype.F32);
                    SplittableRandom rnd = new SplittableRandom(32);
                    Sequence[] seq = {new Sequence(), new Sequence()};
                    float[] x = Gaussians.floats(rnd, B * P * D, 1);
                    float[] y = layer.prefill(cache, x, P, opt);
                    int k = Math.min(c.indexer().topK(), cache.capacity());
                    int[] sel = selected(layer.graph(cache, P, opt));
                    for (int b = 0; b < B; b++) for (int t = 0; t < P; t++) seq[b].add(rows(x, b * P + t, 1, D), row(sel, b * P + t, k), rows(y, b * P + t, 1, D));
                    for (int s = 0; s < steps; s++) {
                        float[] xd = Gaussians.floats(rnd, B * D, 1);
                        float[] yd = layer.decode(cache, xd, opt);
                        int[] sd = selected(layer.graph(cache, 1, opt));
                        for (int b = 0; b < B; b++) seq[b].add(rows(xd, b, 1, D), row(sd, b, k), rows(yd, b, 1, D));
                    }
                    for (int b = 0; b < B; b++) decided += check(w, seq[b], what + ", sequence " + b);
                }
            }
        }
        assertTrue(decided >= 6 * 2 * 3, "only " + decided + " rows had a clear k-th score");
    }

    @Test
    void pagedPrefillForkAndDecodeMatchTheDoublePrecisionSparseLayer() {
        MlaConfig c = config(D_TOPK);
        MlaWeights w = MlaWeights.random(c, 41);
        int D = c.hiddenSize(), P = 10, steps = 5;                   // 10 tokens in blocks of 4: the fork shares a partial block
        for (Supplier<GraphExecutor> ex : EXECUTORS) {
            for (AttentionPath path : AttentionPath.values()) {
                AttentionOptions opt = options(path);
                try (GraphExecutor e = ex.get(); MlaLayer layer = new MlaLayer(w, e)) {
                    String what = e.getClass().getSimpleName() + " " + path + " paged";
                    LatentCache cache = layer.newPagedCache(PagedCacheSpec.builder().maxSequences(3).maxSequenceLength(32).numBlocks(24).blockSize(4)
                            .dtype(CacheDtype.F32).build());
                    CacheStorage.of(cache).shuffleFreeBlocks(5);
                    int s0 = cache.addSequence();
                    SplittableRandom rnd = new SplittableRandom(42);
                    float[] x = Gaussians.floats(rnd, P * D, 1);
                    float[] y = layer.forward(cache, x, new int[] {s0}, new int[] {P}, opt);
                    int k = Math.min(c.indexer().topK(), cache.capacity());
                    int[] sel = selected(layer.graph(cache, new int[] {s0}, new int[] {P}, opt));
                    Sequence a = new Sequence();
                    for (int t = 0; t < P; t++) a.add(rows(x, t, 1, D), row(sel, t, k), rows(y, t, 1, D));
                    int s1 = cache.fork(s0);
                    Sequence b = a.copy();
                    for (int s = 0; s < steps; s++) {
                        float[] xd = Gaussians.floats(rnd, 2 * D, 1);
                        int[] ids = s % 2 == 0 ? new int[] {s0, s1} : new int[] {s1, s0};       // either order
                        float[] yd = layer.forward(cache, xd, ids, new int[] {1, 1}, opt);
                        int[] sd = selected(layer.graph(cache, ids, new int[] {1, 1}, opt));
                        for (int i = 0; i < 2; i++) (ids[i] == s0 ? a : b).add(rows(xd, i, 1, D), row(sd, i, k), rows(yd, i, 1, D));
                    }
                    assertEquals(P + steps, cache.length(s1));
                    check(w, a, what + ", parent");
                    check(w, b, what + ", fork");
                }
            }
        }
    }

    // ------------------------------------------------------------------ (b) unselected rows are never read

    @Test
    void unselectedCacheRowsPoisonedWithNaNDoNotChangeTheGatheringPaths() {
        MlaConfig c = config(D_TOPK);
        MlaWeights w = MlaWeights.random(c, 51);
        int D = c.hiddenSize(), P = 20;
        for (Supplier<GraphExecutor> ex : EXECUTORS) {
            for (boolean paged : new boolean[] {false, true}) {
                for (AttentionPath path : new AttentionPath[] {AttentionPath.ABSORBED, AttentionPath.TILED}) {
                    AttentionOptions opt = options(path);
                    String what = name(ex) + " " + path + (paged ? " paged" : " contiguous");
                    float[] x = Gaussians.floats(new SplittableRandom(52), P * D, 1), xd = Gaussians.floats(new SplittableRandom(53), 2 * D, 1);
                    float[][] out = new float[2][];
                    int[][] sel = new int[2][];
                    for (int poison = 0; poison < 2; poison++) {
                        try (GraphExecutor e = ex.get(); MlaLayer layer = new MlaLayer(w, e)) {
                            LatentCache cache = paged
                                    ? layer.newPagedCache(PagedCacheSpec.builder().maxSequences(1).maxSequenceLength(32).numBlocks(8).blockSize(4).dtype(CacheDtype.F32).build())
                                    : layer.newCache(1, 32, CacheDtype.F32);
                            if (paged) cache.addSequence();
                            layer.prefill(cache, x, P, opt);
                            layer.decode(cache, rows(xd, 0, 1, D), opt);
                            if (poison == 1) {
                                // every cached row the next step does not select (found by the clean run): its latent and rope key NaN
                                CacheStorage st = CacheStorage.of(cache);
                                float[] floats = st.floats();
                                int wdt = c.kvLoraRank() + c.qkRopeHeadDim(), poisoned = 0;
                                for (int j = 0; j < cache.length(0); j++) {
                                    if (Arrays.binarySearch(sel[0], j) >= 0) continue;
                                    Arrays.fill(floats, st.slot(0, j) * wdt, (st.slot(0, j) + 1) * wdt, Float.NaN);
                                    poisoned++;
                                }
                                assertTrue(poisoned >= P - D_TOPK, what + ": poisoned " + poisoned);
                            }
                            out[poison] = layer.decode(cache, rows(xd, 1, 1, D), opt);
                            sel[poison] = row(selected(layer.graph(cache, 1, opt)), 0, Math.min(D_TOPK, cache.capacity()));
                        }
                    }
                    assertArrayEquals(sel[0], sel[1], what + ": the indexer's keys were not poisoned, so the selection is the same");
                    for (float v : out[1]) assertTrue(Float.isFinite(v), what + ": a poisoned row was read");
                    // the reference executor is deterministic: bit for bit; java-fast may split its sums by thread timing
                    double tol = what.startsWith("Jvm") ? 0 : 1e-5;
                    assertTrue(TestData.maxAbsDiff(out[0], out[1]) <= tol, what + ": poisoning unselected rows changed the output by "
                            + TestData.maxAbsDiff(out[0], out[1]));
                }
            }
        }
    }

    // ------------------------------------------------------------------ (c) top-k covering the context is dense attention

    @Test
    void aTopKThatCoversTheContextEqualsDenseAttention() {
        MlaConfig c = config(64);                                        // more than the capacity: every position selected
        MlaWeights w = MlaWeights.random(c, 61);
        int D = c.hiddenSize(), P = 12;
        for (Supplier<GraphExecutor> ex : EXECUTORS) {
            for (boolean paged : new boolean[] {false, true}) {
                for (AttentionPath path : AttentionPath.values()) {
                    float[][] out = new float[2][];
                    for (int dense = 0; dense < 2; dense++) {
                        AttentionOptions opt = options(path).withDense(dense == 1);
                        try (GraphExecutor e = ex.get(); MlaLayer layer = new MlaLayer(w, e)) {
                            LatentCache cache = paged
                                    ? layer.newPagedCache(PagedCacheSpec.builder().maxSequences(2).maxSequenceLength(32).numBlocks(16).blockSize(4).dtype(CacheDtype.F32).build())
                                    : layer.newCache(2, 32, CacheDtype.F32);
                            if (paged) {
                                cache.addSequence();
                                cache.addSequence();
                            }
                            float[] y = layer.prefill(cache, Gaussians.floats(new SplittableRandom(62), 2 * P * D, 1), P, opt);
                            float[] y2 = layer.decode(cache, Gaussians.floats(new SplittableRandom(63), 2 * D, 1), opt);
                            float[] y3 = layer.decode(cache, Gaussians.floats(new SplittableRandom(64), 2 * D, 1), opt);
                            out[dense] = TestData.concatRows(TestData.concatRows(y, y2), y3);
                            if (dense == 1) {
                                for (KernelGraph.Buffer b : layer.graph(cache, 1, opt).buffers()) {
                                    assertTrue(!b.name().equals("index_topk"), "a dense step computes no selection");
                                }
                            }
                        }
                    }
                    // the reference executor adds the same terms in the same order: equal; java-fast runs Vector API twins for
                    // both (FastAttention, FastSparseAttention), whose sums are cut differently (pieces of the context or of the selection)
                    String what = name(ex) + " " + path + (paged ? " paged" : " contiguous");
                    if (what.startsWith("Jvm")) assertArrayEquals(out[1], out[0], what + ": sparse and dense differ");
                    else TestData.assertClose(out[1], out[0], 1e-6, what + ": sparse against dense");
                }
            }
        }
    }

    @Test
    void theDenseOptionOfASparseLayerIsDenseMla() {
        MlaConfig c = config(D_TOPK);
        MlaWeights w = MlaWeights.random(c, 71);
        int D = c.hiddenSize(), T = 16;
        float[] x = Gaussians.floats(new SplittableRandom(72), T * D, 1);
        double[] expected = ReferenceMla.prefill(w, x, T, false).y();
        for (AttentionPath path : AttentionPath.values()) {
            MlaLayer layer = new MlaLayer(w);
            LatentCache cache = layer.newCache(1, 32, CacheDtype.F32);
            float[] y = TestData.concatRows(layer.prefill(cache, rows(x, 0, T - 2, D), T - 2, options(path).withDense(true)),
                    TestData.concatRows(layer.decode(cache, rows(x, T - 2, 1, D), options(path).withDense(true)),
                            layer.decode(cache, rows(x, T - 1, 1, D), options(path).withDense(true))));
            TestData.assertClose(expected, y, TOL, path + " dense");
            // and the sparse steps that follow a dense one find the keys the dense steps cached
            float[] ys = layer.decode(cache, Gaussians.floats(new SplittableRandom(73), D, 1), options(path));
            for (float v : ys) assertTrue(Float.isFinite(v));
        }
    }
}
