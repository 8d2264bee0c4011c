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
        }
    }
}
