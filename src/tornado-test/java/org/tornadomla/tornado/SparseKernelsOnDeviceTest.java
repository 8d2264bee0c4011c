package org.tornadomla.tornado;

import org.junit.jupiter.api.Test;
import org.tornadomla.graph.GraphExecutor;
import org.tornadomla.graph.JvmExecutor;
import org.tornadomla.graph.KernelGraph;
import org.tornadomla.kernels.Bf16;
import org.tornadomla.kernels.SparseAttention;
import org.tornadomla.kernels.TopK;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Sparse attention's selection kernels alone on TornadoVM's default device against the JVM, bit for bit (integer
 * outputs): {@link TopK#selectTopK} over rows that see fewer, as many and more positions than k, with ties, negative
 * scores, zeros of both signs and padding rows; {@link SparseAttention#maskUnselected} over that selection. With the
 * KernelContext kernels on (the executor's default) the top-k is {@link GpuTopK}, a work-group per row: long rows
 * with many ties spread over its threads' chunks check its passes and its writing order.
 */
class SparseKernelsOnDeviceTest {
    static final int ROWS = 9, POSITIONS = 40, K = 8, HEADS = 2;
    static final int[] POS = {0, 3, 7, 8, 12, 39, -1, 25, 31};

    static float[] scores(long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        float[] s = new float[ROWS * POSITIONS];
        for (int i = 0; i < s.length; i++) {
            int kind = rnd.nextInt(10);
            s[i] = kind == 0 ? 0f : kind == 1 ? -0f : kind == 2 ? 0.5f : (float) (rnd.nextGaussian() * Math.pow(10, rnd.nextInt(-3, 4)));
        }
        return s;
    }

    static int[] meta() {
        int[] m = new int[2 * ROWS];
        for (int r = 0; r < ROWS; r++) m[2 * r] = POS[r];
        return m;
    }

    /** The selection, then the mask of dense scores [rows, heads, positions] over it. */
    static Object[] run(GraphExecutor ex, float[] sc, float[] dense) {
        KernelGraph g = new KernelGraph("topk_" + ex.getClass().getSimpleName());
        float[] s = g.input("scores", sc.clone());
        int[] meta = g.input("attnMeta", meta());
        float[] pow2 = g.weight("pow2", Bf16.pow2());
        int[] keys = g.scratch("keys", new int[ROWS * POSITIONS]), hist = g.scratch("hist", new int[ROWS * TopK.BINS]);
        int[] out = g.output("out", new int[ROWS * K]);
        float[] in = g.input("dense", dense.clone());
        float[] masked = g.output("masked", new float[dense.length]);
        g.task("topk", TopK::selectTopK, s, keys, hist, out, meta, ROWS, POSITIONS, K, pow2);
        g.task("copy", NumericEdgesOnDeviceTest::copy, in, masked, in.length);   // an output is not copied in
        g.task("mask", SparseAttention::maskUnselected, masked, out, meta, ROWS, POSITIONS, HEADS, K);
        ex.execute(g);
        return new Object[] {out.clone(), masked.clone()};
    }

    /** Long rows (thousands of positions, k from 1 to past half the row), scores on a coarse grid: ties across chunks. */
    @Test
    void aWorkGroupPerRowSelectsAsTheJvm() {
        int rows = 6, positions = 3000;
        int[] pos = {2999, 2048, 1499, 100, -1, 2999};
        for (int k : new int[] {1, 64, 2048}) {
            SplittableRandom rnd = new SplittableRandom(k);
            float[] sc = new float[rows * positions];
            for (int i = 0; i < sc.length; i++) {
                int r = i / positions;
                // row 0: few distinct values (ties everywhere); row 5: one value (all tied); the rest: a coarse grid
                sc[i] = r == 0 ? rnd.nextInt(5) - 2f : r == 5 ? 1.5f : (float) Math.rint(rnd.nextGaussian() * 40) / 8f;
            }
            int[] meta = new int[2 * rows];
            for (int r = 0; r < rows; r++) meta[2 * r] = pos[r];
            int[][] got = new int[2][];
            try (JvmExecutor j = new JvmExecutor(); TornadoExecutor dev = new TornadoExecutor(null, null)) {
                GraphExecutor[] ex = {j, dev};
                for (int e = 0; e < 2; e++) {
                    KernelGraph g = new KernelGraph("topk_long_" + k + "_" + e);
                    float[] s = g.input("scores", sc.clone());
                    int[] m = g.input("attnMeta", meta.clone());
                    int[] keys = g.scratch("keys", new int[rows * positions]), hist = g.scratch("hist", new int[rows * TopK.BINS]);
                    int[] out = g.output("out", new int[rows * k]);
                    g.task("topk", TopK::selectTopK, s, keys, hist, out, m, rows, positions, k, g.weight("pow2", Bf16.pow2()));
                    ex[e].execute(g);
                    got[e] = out.clone();
                    if (e == 1) assertEquals(GpuTopK.class, dev.kernelOf(g, "topk").getDeclaringClass(), "the work-group top-k ran");
                }
            }
            assertArrayEquals(got[0], got[1], "top " + k);
        }
    }

    @Test
    void topKAndMaskEqualTheJvm() {
        for (long seed = 1; seed <= 3; seed++) {
            float[] sc = scores(seed);
            float[] dense = new float[ROWS * HEADS * POSITIONS];
            for (int i = 0; i < dense.length; i++) dense[i] = 0.25f * (i % 17) - 1f;
            Object[] jvm;
            try (JvmExecutor j = new JvmExecutor()) {
                jvm = run(j, sc, dense);
            }
            try (TornadoExecutor dev = new TornadoExecutor(null, null)) {
                Object[] d = run(dev, sc, dense);
                assertArrayEquals((int[]) jvm[0], (int[]) d[0], "selectTopK, seed " + seed);
                float[] mj = (float[]) jvm[1], md = (float[]) d[1];
                for (int i = 0; i < mj.length; i++) {
                    if (Float.compare(mj[i], md[i]) != 0) throw new AssertionError("maskUnselected, seed " + seed + ", element " + i + ": " + mj[i] + " vs " + md[i]);
                }
            }
        }
    }
}
