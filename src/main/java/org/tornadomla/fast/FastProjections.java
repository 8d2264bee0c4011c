package org.tornadomla.fast;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;

import static org.tornadomla.fast.Vec.F;
import static org.tornadomla.fast.Vec.L;

/**
 * java-fast's {@link org.tornadomla.kernels.Projections}: y = x·Wᵀ with W [out, in]. At batch 1 a projection
 * reads its whole weight matrix once for a few FLOPs per number: bandwidth-bound, so the point is to keep several
 * weight streams in flight; blocks of 16 rows are spread over the threads.
 *
 * <p>Versions: 1. a dot product per (row, output), blocks of 16 outputs per task; the JMH LayerBenchmark times
 * it inside the whole layer (docs/benchmarks.md). At batch 1 a row is one weight stream (taken then to be at
 * the read bandwidth; version 3 measured otherwise). 2. from 8 token rows on, {@link ProjectionGemm}'s register-blocked product over packed
 * chunks of Wᵀ. 3. below that, four weight rows at a time against one token row (matVec) and two against four
 * token rows (matMul): several weight streams and FMA chains in flight (the whole layer, see docs/benchmarks.md).
 */
public final class FastProjections {
    private FastProjections() {
    }

    public static void matVec(float[] x, float[] w, float[] y, int in, int out) {
        Parallel.forEach((out + 15) / 16, blk -> {
            int o = blk * 16, end = Math.min(out, blk * 16 + 16);
            for (; o + 4 <= end && in % L == 0; o += 4) dot4x1(w, o, in, x, 0, y, o);
            for (; o < end; o++) y[o] = Vec.dot(w, o * in, x, 0, in);
        });
    }

    /**
     * From {@link ProjectionGemm#MIN_ROWS} token rows on, the blocked product of {@link ProjectionGemm}; below,
     * each weight row is read once and dotted with every token row.
     */
    public static void matMul(float[] x, float[] w, float[] y, int rows, int in, int out) {
        if (rows >= ProjectionGemm.MIN_ROWS) {
            ProjectionGemm.multiply(ProjectionGemm.f32(w, in), x, y, rows, in, out);
            return;
        }
        Parallel.forEach((out + 15) / 16, blk -> {
            int o = blk * 16, end = Math.min(out, blk * 16 + 16);
            for (; o + 2 <= end && in % L == 0; o += 2) {
                int r = 0;
                for (; r + 4 <= rows; r += 4) dot2x4(w, o * in, in, x, r, y, o, out);
                for (; r < rows; r++) {
                    y[r * out + o] = Vec.dot(w, o * in, x, r * in, in);
                    y[r * out + o + 1] = Vec.dot(w, (o + 1) * in, x, r * in, in);
                }
            }
            for (; o < end; o++) {
                for (int r = 0; r < rows; r++) y[r * out + o] = Vec.dot(w, o * in, x, r * in, in);
            }
        });
    }

    /**
     * y[yo + i] = W row (o + i) · x[xo …] for i &lt; 4 (in a multiple of L): four weight streams in flight and one load
     * of x for four FMAs, where a dot product at a time kept one stream and waited on its FMA chain (version 3).
     * Each sum taken as {@link Vec#dot} takes it (one accumulator, in order).
     */
    private static void dot4x1(float[] w, int o, int in, float[] x, int xo, float[] y, int yo) {
        int w0 = o * in;
        FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0;
        for (int i = 0; i < in; i += L) {
            FloatVector xv = FloatVector.fromArray(F, x, xo + i);
            a0 = FloatVector.fromArray(F, w, w0 + i).fma(xv, a0);
            a1 = FloatVector.fromArray(F, w, w0 + in + i).fma(xv, a1);
            a2 = FloatVector.fromArray(F, w, w0 + 2 * in + i).fma(xv, a2);
            a3 = FloatVector.fromArray(F, w, w0 + 3 * in + i).fma(xv, a3);
        }
        y[yo] = a0.reduceLanes(VectorOperators.ADD);
        y[yo + 1] = a1.reduceLanes(VectorOperators.ADD);
        y[yo + 2] = a2.reduceLanes(VectorOperators.ADD);
        y[yo + 3] = a3.reduceLanes(VectorOperators.ADD);
    }

    /**
     * y[(r0 + r)·out + o + i] = (w[w0 + i·in …] · x row r0 + r) for i &lt; 2, r &lt; 4 (in a multiple of L): 8 FMA chains
     * for 6 loads, where one dot product at a time waited on a single chain (version 3); the same sums as
     * {@link Vec#dot}'s. Also {@link WeightKernels}' on rows of bf16 or FP8 weights decoded into a buffer.
     */
    static void dot2x4(float[] w, int w0, int in, float[] x, int r0, float[] y, int o, int out) {
        int x0 = r0 * in;
        FloatVector a00 = FloatVector.zero(F), a01 = a00, a02 = a00, a03 = a00, a10 = a00, a11 = a00, a12 = a00, a13 = a00;
        for (int i = 0; i < in; i += L) {
            FloatVector w0v = FloatVector.fromArray(F, w, w0 + i), w1v = FloatVector.fromArray(F, w, w0 + in + i);
            FloatVector x0v = FloatVector.fromArray(F, x, x0 + i);
            a00 = w0v.fma(x0v, a00); a10 = w1v.fma(x0v, a10);
            FloatVector x1v = FloatVector.fromArray(F, x, x0 + in + i);
            a01 = w0v.fma(x1v, a01); a11 = w1v.fma(x1v, a11);
            FloatVector x2v = FloatVector.fromArray(F, x, x0 + 2 * in + i);
            a02 = w0v.fma(x2v, a02); a12 = w1v.fma(x2v, a12);
            FloatVector x3v = FloatVector.fromArray(F, x, x0 + 3 * in + i);
            a03 = w0v.fma(x3v, a03); a13 = w1v.fma(x3v, a13);
        }
        int y0 = r0 * out + o;
        y[y0] = a00.reduceLanes(VectorOperators.ADD); y[y0 + 1] = a10.reduceLanes(VectorOperators.ADD);
        y[y0 + out] = a01.reduceLanes(VectorOperators.ADD); y[y0 + out + 1] = a11.reduceLanes(VectorOperators.ADD);
        y[y0 + 2 * out] = a02.reduceLanes(VectorOperators.ADD); y[y0 + 2 * out + 1] = a12.reduceLanes(VectorOperators.ADD);
        y[y0 + 3 * out] = a03.reduceLanes(VectorOperators.ADD); y[y0 + 3 * out + 1] = a13.reduceLanes(VectorOperators.ADD);
    }
}
