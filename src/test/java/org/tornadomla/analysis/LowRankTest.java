package org.tornadomla.analysis;

import org.junit.jupiter.api.Test;
import org.tornadomla.internal.Gaussians;
import org.tornadomla.weights.MlaWeights;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LowRankTest {
    /** A [rows, cols] matrix of rank k plus N(0, noise²). */
    static float[] planted(int rows, int cols, int k, double noise, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        float[] a = Gaussians.floats(rnd, rows * k, 1), b = Gaussians.floats(rnd, k * cols, 1), m = Gaussians.floats(rnd, rows * cols, noise);
        for (int i = 0; i < rows; i++) for (int t = 0; t < k; t++) for (int j = 0; j < cols; j++) m[i * cols + j] += a[i * k + t] * b[t * cols + j];
        return m;
    }

    @Test
    void findsThePlantedRankInBothOrientations() {
        for (int[] shape : new int[][] {{96, 40}, {40, 96}}) {
            float[] m = planted(shape[0], shape[1], 7, 1e-5, 1);
            LowRank lr = new LowRank(m, shape[0], shape[1], s -> { });
            assertEquals(7, lr.effectiveRank(0.999999), "shape " + shape[0] + "×" + shape[1]);
            assertTrue(lr.relativeError(7) < 1e-5 && lr.relativeError(6) > 1e-2, lr.relativeError(7) + " " + lr.relativeError(6));
            // the factors reproduce M to the predicted error: ||M − W_U·W_D|| / ||M|| = relativeError(r)
            for (int r : new int[] {3, 7}) {
                float[][] f = lr.factors(r);
                double num = 0, den = 0;
                for (int i = 0; i < shape[0]; i++) {
                    for (int j = 0; j < shape[1]; j++) {
                        double s = 0;
                        for (int t = 0; t < r; t++) s += (double) f[1][i * r + t] * f[0][t * shape[1] + j];
                        double d = m[i * shape[1] + j] - s;
                        num += d * d;
                        den += (double) m[i * shape[1] + j] * m[i * shape[1] + j];
                    }
                }
                assertEquals(lr.relativeError(r), Math.sqrt(num / den), 1e-4, "rank " + r);
            }
        }
    }

    @Test
    void singularValuesOfADiagonalMatrix() {
        float[] m = new float[4 * 3];
        m[0] = 3;
        m[4] = -5;
        m[8] = 1;
        LowRank lr = new LowRank(m, 4, 3, s -> { });
        assertEquals(5, lr.sigma[0], 1e-9);
        assertEquals(3, lr.sigma[1], 1e-9);
        assertEquals(1, lr.sigma[2], 1e-9);
        assertEquals(Math.sqrt(1.0 / 35), lr.relativeError(2), 1e-9);
    }

    @Test
    void mhaToMlaIsExactAtThePlantedRankAndLossyBelowIt() {
        int hidden = 48, kvHeads = 2, headDim = 8, heads = 4, kv = kvHeads * headDim;
        float[] m = planted(2 * kv, hidden, 10, 0, 3);
        float[] wk = java.util.Arrays.copyOfRange(m, 0, kv * hidden), wv = java.util.Arrays.copyOfRange(m, kv * hidden, m.length);
        LowRank lr = new LowRank(m, 2 * kv, hidden, s -> { });
        float[][] f10 = lr.factors(10), f4 = lr.factors(4);
        double exact = MhaToMla.outputError(wk, wv, f10[0], f10[1], 10, hidden, heads, kvHeads, headDim, 12, 1);
        double lossy = MhaToMla.outputError(wk, wv, f4[0], f4[1], 4, hidden, heads, kvHeads, headDim, 12, 1);
        assertTrue(exact < 1e-5, "rank 10: " + exact);
        assertTrue(lossy > 1e-2, "rank 4: " + lossy);
    }

    @Test
    void plantedRankLayerHasItsRankAndTheFactorHalvesRebuildKeysAndValues() {
        int kvRows = 24, hidden = 40, rank = 6;
        float[][] kv = MhaToMla.plantedRankLayer(kvRows, hidden, rank, 5);
        float[] m = new float[2 * kvRows * hidden];
        System.arraycopy(kv[0], 0, m, 0, kv[0].length);
        System.arraycopy(kv[1], 0, m, kv[0].length, kv[1].length);
        LowRank lr = new LowRank(m, 2 * kvRows, hidden, s -> { });
        // noise 1e-4 against unit-scale entries: rank 6 leaves ~1e-4, rank 5 drops a whole direction (≥ 1e-2)
        assertTrue(lr.relativeError(rank) < 1e-3 && lr.relativeError(rank - 1) > 1e-2, lr.relativeError(rank) + " " + lr.relativeError(rank - 1));
        MhaToMla.Factors f = MhaToMla.factors(lr, rank, kvRows);
        // W_UK·W_DKV ≈ W_K and W_UV·W_DKV ≈ W_V, each to the rank-6 error (double-precision products)
        for (int half = 0; half < 2; half++) {
            float[] up = half == 0 ? f.wUk() : f.wUv(), w = kv[half];
            double num = 0, den = 0;
            for (int i = 0; i < kvRows; i++) {
                for (int j = 0; j < hidden; j++) {
                    double s = 0;
                    for (int t = 0; t < rank; t++) s += (double) up[i * rank + t] * f.wDkv()[t * hidden + j];
                    num += (s - w[i * hidden + j]) * (s - w[i * hidden + j]);
                    den += (double) w[i * hidden + j] * w[i * hidden + j];
                }
            }
            assertTrue(Math.sqrt(num / den) < 1e-3, "half " + half + ": " + Math.sqrt(num / den));
        }
        assertTrue(MhaToMla.outputError(kv[0], kv[1], f, hidden, 6, 3, 8, 10, 2) < 1e-3);
    }
}
