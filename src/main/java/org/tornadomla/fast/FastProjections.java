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
 * the read bandwidth; version 3 measured otherwise). 2. from {@link ProjectionGemm#MIN_ROWS} token rows on,
 * {@link ProjectionGemm}'s register-blocked product over packed chunks of Wᵀ. 3. below that, four weight rows at a
 * time against one token row (matVec) and, below MIN_ROWS, four at a time against every token row, two against four
 * token rows from 4 token rows on ({@link #fourRows}): several weight streams and FMA chains in flight (the whole
 * layer, see docs/benchmarks.md).
 */
public final class FastProjections {
    private FastProjections() {
    }

    public static void matVec(float[] x, float[] w, float[] y, int in, int out) {
        Parallel.forEach((out + 15) / 16, blk -> {
            int o = blk * 16, end = Math.min(out, blk * 16 + 16);
            for (; o + 4 <= end; o += 4) dot4(w, o * in, in, x, 0, in, y, o, 1);
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
            for (; o + 4 <= end; o += 4) fourRows(w, o * in, in, x, rows, y, o, out);
            for (; o < end; o++) {
                for (int r = 0; r < rows; r++) y[r * out + o] = Vec.dot(w, o * in, x, r * in, in);
            }
        });
    }

    /**
     * Outputs o … o + 3 of every token row from the four weight rows at w[w0], rows {@code in} apart (W's, or rows
     * of bf16/FP8 weights {@link WeightKernels} decoded into a buffer): four token rows at a time against two weight
     * rows ({@link #dot2x4}: 6 loads per 8 FMAs), the rest a token row at a time against all four ({@link #dot4}).
     */
    static void fourRows(float[] w, int w0, int in, float[] x, int rows, float[] y, int o, int out) {
        int r = 0;
        for (; in % L == 0 && r + 4 <= rows; r += 4) {
            dot2x4(w, w0, in, x, r, y, o, out);
            dot2x4(w, w0 + 2 * in, in, x, r, y, o + 2, out);
        }
        for (; r < rows; r++) dot4(w, w0, in, x, r * in, in, y, r * out + o, 1);
    }

    /**
     * y[yo + k·yStride] = Σ_i w[w0 + k·stride + i]·x[xo + i], k = 0 … 3: four weight rows against one token row,
     * each sum taken as {@link Vec#dot} takes it (one accumulator, in order): four weight streams in flight and one
     * load of x for four FMAs (matVec's version 3; also {@link WeightKernels}' on rows decoded into a buffer).
     */
    static void dot4(float[] w, int w0, int stride, float[] x, int xo, int n, float[] y, int yo, int yStride) {
        FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0;
        int i = 0;
        for (; i <= n - L; i += L) {
            FloatVector xv = FloatVector.fromArray(F, x, xo + i);
            a0 = FloatVector.fromArray(F, w, w0 + i).fma(xv, a0);
            a1 = FloatVector.fromArray(F, w, w0 + stride + i).fma(xv, a1);
            a2 = FloatVector.fromArray(F, w, w0 + 2 * stride + i).fma(xv, a2);
            a3 = FloatVector.fromArray(F, w, w0 + 3 * stride + i).fma(xv, a3);
        }
        float r0 = Vec.sum(a0), r1 = Vec.sum(a1);
        float r2 = Vec.sum(a2), r3 = Vec.sum(a3);
        for (; i < n; i++) {
            float xi = x[xo + i];
            r0 += w[w0 + i] * xi;
            r1 += w[w0 + stride + i] * xi;
            r2 += w[w0 + 2 * stride + i] * xi;
            r3 += w[w0 + 3 * stride + i] * xi;
        }
        y[yo] = r0;
        y[yo + yStride] = r1;
        y[yo + 2 * yStride] = r2;
        y[yo + 3 * yStride] = r3;
    }

    /**
     * y[(r0 + r)·out + o + i] = (w[w0 + i·in …] · x row r0 + r) for i &lt; 2, r &lt; 4 (in a multiple of L): 8 FMA chains
     * for 6 loads, where one dot product at a time waited on a single chain (version 3); the same sums as
     * {@link Vec#dot}'s.
     */
    private static void dot2x4(float[] w, int w0, int in, float[] x, int r0, float[] y, int o, int out) {
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
        y[y0] = Vec.sum(a00); y[y0 + 1] = Vec.sum(a10);
        y[y0 + out] = Vec.sum(a01); y[y0 + out + 1] = Vec.sum(a11);
        y[y0 + 2 * out] = Vec.sum(a02); y[y0 + 2 * out + 1] = Vec.sum(a12);
        y[y0 + 3 * out] = Vec.sum(a03); y[y0 + 3 * out + 1] = Vec.sum(a13);
    }
}
