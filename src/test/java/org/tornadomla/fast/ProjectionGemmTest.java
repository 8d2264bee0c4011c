package org.tornadomla.fast;

import org.junit.jupiter.api.Test;
import org.tornadomla.TestData;

/** java-fast's projections of many token rows ({@link ProjectionGemm}) against the product in double precision. */
class ProjectionGemmTest {
    @Test
    void blockedProjectionEqualsTheProductInDoublePrecision() {
        // rows below MIN_ROWS (the streaming kernel), at it, and past a block of 8; inputs within one chunk of 256,
        // several, and with a remainder; outputs below one block of 48, whole blocks, and a remainder
        int m = ProjectionGemm.MIN_ROWS;
        // and tasks of several output blocks (1000 outputs: 21 blocks) over more than one pass of MC = 128 rows
        for (int[] shape : new int[][] {{m - 1, 100, 30}, {m, 256, 48}, {m + 9, 257, 49}, {40, 1000, 200}, {m + 1, 1536, 97}, {m + 3, 300, 1000},
                {200, 300, 500}}) {
            int rows = shape[0], in = shape[1], out = shape[2];
            float[] x = TestData.gaussian(1, rows * in), w = TestData.gaussian(2, out * in);
            float[] y = new float[rows * out], expected = new float[rows * out];
            java.util.Arrays.fill(y, Float.NaN);                  // every output must be written
            FastProjections.matMul(x, w, y, rows, in, out);
            for (int r = 0; r < rows; r++) {
                for (int o = 0; o < out; o++) {
                    double s = 0;
                    for (int i = 0; i < in; i++) s += (double) x[r * in + i] * w[o * in + i];
                    expected[r * out + o] = (float) s;
                }
            }
            // f32 sums of `in` products of N(0, 1) numbers: errors of a few ulps of sqrt(in), far below 1e-5 of the largest
            WeightKernelsTest.assertClose(expected, y, 1e-5, rows + "x" + in + "->" + out);
            // both register files' micro-kernels (8 × 3 and 3 × 3 token rows × vectors), whichever this JVM chose
            for (boolean regs32 : new boolean[] {false, true}) {
                float[] z = new float[rows * out];
                java.util.Arrays.fill(z, Float.NaN);
                ProjectionGemm.multiply(ProjectionGemm.f32(w, in), x, z, rows, in, out, regs32);
                WeightKernelsTest.assertClose(expected, z, 1e-5, rows + "x" + in + "->" + out + (regs32 ? " 32" : " 16") + " registers");
            }
        }
    }
    @Test
    void fewRowsAndOneRowEqualTheProductInDoublePrecision() {
        // below MIN_ROWS: four weight rows against every token row, two against four token rows at a time (with rows
        // and outputs left over), and matVec's four weight rows at a time; inputs a multiple of the vector length or
        // not (then a token row at a time, with a scalar tail).
        // Tolerance 1e-4·sqrt(in): f32 sums of `in` products of N(0, 1) numbers. (Not bits: the Vector API's
        // reduceLanes may add the lanes in another order once the JIT compiles a kernel.)
        int l = Vec.L;
        for (int rows : new int[] {1, 3, 6, 15}) {
            for (int in : new int[] {16 * l, 32 * l, 100}) {
                for (int out : new int[] {47, 16, 33}) {
                    String what = rows + "x" + in + "->" + out;
                    float[] x = TestData.gaussian(3, rows * in), w = TestData.gaussian(4, out * in);
                    float[] y = new float[rows * out];
                    java.util.Arrays.fill(y, Float.NaN);
                    FastProjections.matMul(x, w, y, rows, in, out);
                    for (int r = 0; r < rows; r++) {
                        for (int o = 0; o < out; o++) {
                            double s = 0;
                            for (int i = 0; i < in; i++) s += (double) x[r * in + i] * w[o * in + i];
                            float want = (float) s;
                            if (!(Math.abs(want - y[r * out + o]) <= 1e-4 * Math.sqrt(in))) {
                                throw new AssertionError(what + " r" + r + " o" + o + ": " + y[r * out + o] + " against " + want);
                            }
                        }
                    }
                    float[] v = new float[out];
                    java.util.Arrays.fill(v, Float.NaN);
                    FastProjections.matVec(x, w, v, in, out);
                    for (int o = 0; o < out; o++) {
                        double s = 0;
                        for (int i = 0; i < in; i++) s += (double) x[i] * w[o * in + i];
                        if (!(Math.abs(s - v[o]) <= 1e-4 * Math.sqrt(in))) throw new AssertionError(what + " matVec o" + o + ": " + v[o] + " against " + s);
                    }
                }
            }
        }
    }
}
