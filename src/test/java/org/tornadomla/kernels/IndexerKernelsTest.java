package org.tornadomla.kernels;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The indexer's kernels ({@link Indexer}, {@link TopK}) against references written here from the definitions, in
 * double precision where a formula has one: LayerNorm's formula, rotate-half RoPE, the Sylvester Hadamard matrix, the
 * e4m3 grid enumerated from the format (4 exponent bits, bias 7, 3 mantissa bits, no infinities) with
 * round-to-nearest-even, fp8_index's sum, a full sort for the top-k.
 */
class IndexerKernelsTest {
    static final float[] POW2 = Bf16.pow2();

    static float[] gaussians(SplittableRandom r, int n, double std) {
        float[] a = new float[n];
        for (int i = 0; i < n; i++) a[i] = (float) (std * Math.sqrt(-2 * Math.log(1 - r.nextDouble())) * Math.cos(2 * Math.PI * r.nextDouble()));
        return a;
    }

    // ------------------------------------------------------------------ e4m3 from the format's definition

    /** The 127 finite non-negative e4m3 values by code 0 … 0x7E: m·2^−9 for e = 0, (1 + m/8)·2^(e−7) otherwise. */
    static final double[] GRID = grid();

    private static double[] grid() {
        double[] g = new double[127];
        for (int code = 0; code < 127; code++) {
            int e = code >> 3, m = code & 7;
            g[code] = e == 0 ? m * Math.pow(2, -9) : (1 + m / 8.0) * Math.pow(2, e - 7);
        }
        return g;
    }

    /** The e4m3 code of x: the nearest grid value, a tie to the even code (mantissa LSB 0), saturating at ±448. */
    static byte e4m3(double x) {
        double a = Math.abs(x);
        int best = 0;
        for (int c = 1; c < 127; c++) {
            double d = Math.abs(GRID[c] - a), bd = Math.abs(GRID[best] - a);
            if (d < bd || (d == bd && (c & 1) == 0)) best = c;
        }
        if (a >= 448) best = 0x7E;
        return (byte) (x < 0 || (x == 0 && 1 / x < 0) ? best | 0x80 : best);
    }

    static double decode(byte b) {
        double v = GRID[b & 0x7F];
        return (b & 0x80) != 0 ? -v : v;
    }

    @Test
    void theGridHasTheFormatsLandmarks() {
        assertEquals(448, GRID[126]);
        assertEquals(Math.pow(2, -9), GRID[1]);
        assertEquals(Math.pow(2, -6), GRID[8]);        // the smallest normal
        assertEquals(1, GRID[0x38]);
        for (int c = 1; c < 127; c++) assertTrue(GRID[c] > GRID[c - 1]);
        for (int c = 0; c < 256; c++) if ((c & 0x7F) != 0x7F) assertEquals(decode((byte) c), Fp8.decode((byte) c, POW2), "code " + c);
        // ties: 1 + 1/16 lies between 1 (even) and 1.125 (odd): to 1; 1 + 3/16 between 1.125 and 1.25 (even): to 1.25
        assertEquals(0x38, e4m3(1 + 1 / 16.0));
        assertEquals(0x3A, e4m3(1 + 3 / 16.0));
        assertEquals((byte) 0xFE, e4m3(-1000));
    }

    // ------------------------------------------------------------------ LayerNorm

    @Test
    void layerNormIsTheFormulaWithWeightAndBias() {
        SplittableRandom r = new SplittableRandom(1);
        int rows = 5, dim = 128;
        float[] x = gaussians(r, rows * dim, 3), w = gaussians(r, dim, 1), b = gaussians(r, dim, 1), out = new float[rows * dim];
        for (int i = 0; i < dim; i++) x[i] += 40;        // a row with a large mean: centring matters
        Indexer.layerNorm(x, w, b, out, rows, dim, 1e-6f);
        for (int row = 0; row < rows; row++) {
            double mean = 0, var = 0;
            for (int i = 0; i < dim; i++) mean += x[row * dim + i] / (double) dim;
            for (int i = 0; i < dim; i++) var += Math.pow(x[row * dim + i] - mean, 2) / dim;
            for (int i = 0; i < dim; i++) {
                double expected = (x[row * dim + i] - mean) / Math.sqrt(var + 1e-6) * w[i] + b[i];
                assertEquals(expected, out[row * dim + i], 2e-5 * (1 + Math.abs(expected)), "row " + row + " i " + i);
            }
        }
        // in place gives the same
        float[] y = x.clone();
        Indexer.layerNorm(y, w, b, y, rows, dim, 1e-6f);
        assertArrayEquals(out, y, 0f);
        // a constant row is the bias (variance 0, eps keeps it finite)
        float[] c = new float[dim];
        Arrays.fill(c, 2.5f);
        Indexer.layerNorm(c, w, b, c, 1, dim, 1e-6f);
        assertArrayEquals(b, c, 1e-6f);
    }

    // ------------------------------------------------------------------ RoPE in halves

    @Test
    void ropeHalvesIsRotateHalf() {
        SplittableRandom r = new SplittableRandom(2);
        int rows = 4, heads = 3, hd = 128, dr = 64;
        float[] invFreq = new float[dr / 2];
        for (int i = 0; i < dr / 2; i++) invFreq[i] = (float) Math.pow(10000, -2.0 * i / dr);
        int[] meta = {0, 0, 1, 0, 37, 0, 300, 0};
        float[] x = gaussians(r, rows * heads * hd, 1), y = x.clone();
        Indexer.ropeHalves(y, heads * hd, heads, hd, 0, dr, meta, rows, invFreq, 0.75f);
        for (int row = 0; row < rows; row++) {
            for (int h = 0; h < heads; h++) {
                int base = (row * heads + h) * hd;
                for (int i = 0; i < hd; i++) {
                    double expected;
                    if (i >= dr) {
                        expected = x[base + i];                             // the nope part is untouched
                    } else {
                        // HF: x·cos + rotate_half(x)·sin, cos/sin of [f_0 … f_{d/2−1}, f_0 … f_{d/2−1}], angle as float p·f
                        int f = i % (dr / 2);
                        double angle = (float) (meta[2 * row] * invFreq[f]);
                        double rot = i < dr / 2 ? -x[base + i + dr / 2] : x[base + i - dr / 2];
                        expected = 0.75 * (x[base + i] * Math.cos(angle) + rot * Math.sin(angle));
                    }
                    assertEquals(expected, y[base + i], 1e-5, "row " + row + " head " + h + " i " + i);
                }
            }
        }
        // halves on x are the interleaved rotation of x permuted to (x_0, x_{d/2}, x_1, x_{d/2+1}, …)
        float[] perm = x.clone();
        for (int v = 0; v < rows * heads; v++) {
            for (int i = 0; i < dr / 2; i++) {
                perm[v * hd + 2 * i] = x[v * hd + i];
                perm[v * hd + 2 * i + 1] = x[v * hd + dr / 2 + i];
            }
        }
        Rope.rotatePairs(perm, heads * hd, heads, hd, 0, dr, meta, rows, invFreq, 0.75f);
        for (int v = 0; v < rows * heads; v++) {
            for (int i = 0; i < dr / 2; i++) {
                assertEquals(perm[v * hd + 2 * i], y[v * hd + i], 0f);
                assertEquals(perm[v * hd + 2 * i + 1], y[v * hd + dr / 2 + i], 0f);
            }
        }
        // and it is not the interleaved rotation of x itself (the porting bug DeepSeek fixed on 2025-11-17)
        float[] inter = x.clone();
        Rope.rotatePairs(inter, heads * hd, heads, hd, 0, dr, meta, rows, invFreq, 0.75f);
        assertTrue(Arrays.stream(new int[] {1, 2, 3}).anyMatch(row -> Math.abs(inter[row * heads * hd + 1] - y[row * heads * hd + 1]) > 1e-3));
    }

    // ------------------------------------------------------------------ Hadamard

    @Test
    void hadamardIsTheSylvesterMatrixTimesTheScale() {
        SplittableRandom r = new SplittableRandom(3);
        for (int n = 1; n <= 256; n *= 2) {
            int vectors = 3;
            float[] x = gaussians(r, vectors * n, 1), y = x.clone();
            float scale = (float) (1 / Math.sqrt(n));
            Indexer.hadamard(y, vectors, n, scale);
            for (int v = 0; v < vectors; v++) {
                double norm = 0, normY = 0;
                for (int i = 0; i < n; i++) {
                    double acc = 0;
                    for (int j = 0; j < n; j++) acc += (Integer.bitCount(i & j) % 2 == 0 ? 1 : -1) * (double) x[v * n + j];
                    assertEquals(acc * scale, y[v * n + i], 1e-5 * Math.sqrt(n), "n " + n + " v " + v + " i " + i);
                    norm += x[v * n + i] * (double) x[v * n + i];
                    normY += y[v * n + i] * (double) y[v * n + i];
                }
                assertEquals(norm, normY, 1e-4 * norm, "orthonormal with scale n^-1/2");
            }
        }
        // an arbitrary scale multiplies
        float[] e = new float[8];
        e[0] = 1;
        Indexer.hadamard(e, 1, 8, 2f);
        assertArrayEquals(new float[] {2, 2, 2, 2, 2, 2, 2, 2}, e);
    }

    // ------------------------------------------------------------------ FP8 block quantisation

    /** act_quant from its definition; q = x / s in float, as the kernel (and the device) divide. */
    static void quantizeReference(float[] x, byte[] codes, float[] scales, int rows, int dim, boolean ue8m0) {
        for (int row = 0; row < rows; row++) {
            for (int b = 0; b < dim / 128; b++) {
                int base = row * dim + b * 128;
                float amax = 1e-4f;
                for (int i = 0; i < 128; i++) amax = Math.max(amax, Math.abs(x[base + i]));
                float s = amax * (float) (1.0 / 448);
                if (ue8m0) {
                    // 2^ceil(log2 s): s itself when a power of two, else the next one up
                    int e = Math.getExponent(s);
                    s = Math.scalb(1f, s == Math.scalb(1f, e) ? e : e + 1);
                }
                scales[row * (dim / 128) + b] = s;
                for (int i = 0; i < 128; i++) codes[base + i] = e4m3(Math.max(-448, Math.min(448, x[base + i] / s)));
            }
        }
    }

    @Test
    void quantizeBlocksIsActQuant() {
        SplittableRandom r = new SplittableRandom(4);
        int rows = 6, dim = 256;
        float[] x = gaussians(r, rows * dim, 2);
        for (int i = 0; i < 128; i++) x[i] = 0;                          // amax floor 1e-4
        for (int i = 128; i < 256; i++) x[i] = x[i] * 1e-6f;            // below the floor too
        x[2 * 256 + 5] = 3e4f;                                          // one outlier sets its block's scale
        for (int i = 0; i < 128; i++) x[3 * 256 + i] = (float) (Math.pow(-1, i) * Math.scalb(1.0, i % 20 - 10));
        for (boolean ue8m0 : new boolean[] {true, false}) {
            byte[] codes = new byte[rows * dim], expectedCodes = new byte[rows * dim];
            float[] scales = new float[rows * 2], expectedScales = new float[rows * 2];
            Indexer.quantizeBlocks(x, codes, scales, rows, dim, ue8m0 ? 1 : 0, POW2);
            quantizeReference(x, expectedCodes, expectedScales, rows, dim, ue8m0);
            assertArrayEquals(expectedScales, scales, 0f, "ue8m0 " + ue8m0);
            assertArrayEquals(expectedCodes, codes, "ue8m0 " + ue8m0);
            for (float s : scales) {
                assertTrue(s > 0);
                if (ue8m0) assertEquals(s, Math.scalb(1f, Math.getExponent(s)), "a power of two");
            }
            // the block's largest magnitude is (about) 448: the grid's top is used
            assertEquals(448, Math.abs(decode(codes[2 * 256 + 5])), ue8m0 ? 224 : 0);
        }
        // ue8m0 values are exact midpoints of the grid when x = midpoint·s: ties go to the even code
        float[] ties = new float[128];
        ties[0] = 448;                                                  // amax 448: s = 1 under ue8m0
        for (int i = 1; i < 128; i++) {
            int c = 8 + (i % 100);                                      // normal codes 8 … 107
            ties[i] = (float) ((GRID[c] + GRID[c + 1]) / 2);
        }
        byte[] codes = new byte[128];
        float[] s = new float[1];
        Indexer.quantizeBlocks(ties, codes, s, 1, 128, 1, POW2);
        assertEquals(1f, s[0]);
        for (int i = 1; i < 128; i++) {
            int c = 8 + (i % 100);
            assertEquals((c & 1) == 0 ? c : c + 1, codes[i], "midpoint of codes " + c + " and " + (c + 1));
        }
        // ue8m0 rounds up: amax 449 gives 449/448 > 1, so s = 2 and 449 encodes as 224.5 → 224
        ties[0] = 449;
        Indexer.quantizeBlocks(ties, codes, s, 1, 128, 1, POW2);
        assertEquals(2f, s[0]);
        assertEquals(224, decode(codes[0]));
        // without ue8m0, s = 449·(1/448) and 449/s rounds to 448 (clamped if a hair above)
        Indexer.quantizeBlocks(ties, codes, s, 1, 128, 0, POW2);
        assertEquals(449f * (float) (1.0 / 448), s[0]);
        assertEquals(448, decode(codes[0]));
    }

    @Test
    void pow2CeilIsTheNextPowerOfTwo() {
        for (float v : new float[] {1e-30f, 2.2e-7f, 0.001f, 0.25f, 0.3f, 1f, 1.0000001f, 3f, 448f, 1e30f}) {
            int e = Math.getExponent(v);
            float expected = v == Math.scalb(1f, e) ? v : Math.scalb(1f, e + 1);
            assertEquals(expected, Indexer.pow2Ceil(v, POW2), "v " + v);
        }
    }

    // ------------------------------------------------------------------ scores

    @Test
    void indexScoresAreFp8IndexsSum() {
        SplittableRandom r = new SplittableRandom(5);
        int rows = 4, heads = 3, dim = 128, positions = 9;
        byte[] q = new byte[rows * heads * dim], k = new byte[positions * dim];
        for (int i = 0; i < q.length; i++) q[i] = e4m3(gaussians(r, 1, 40)[0]);
        for (int i = 0; i < k.length; i++) k[i] = e4m3(gaussians(r, 1, 40)[0]);
        float[] w = gaussians(r, rows * heads, 0.01), kScale = new float[positions];
        for (int t = 0; t < positions; t++) kScale[t] = (float) Math.scalb(1.0, t % 5 - 8);
        int[] meta = {0, 0, 3, 0, 8, 0, -1, 0};                          // row 3 is padding
        float[] scores = new float[rows * positions];
        Indexer.indexScores(q, w, k, kScale, scores, meta, rows, heads, dim, positions, POW2);
        for (int row = 0; row < rows; row++) {
            double max = 0;
            double[] expected = new double[positions];
            for (int t = 0; t <= meta[2 * row]; t++) {
                double acc = 0;
                for (int h = 0; h < heads; h++) {
                    double dot = 0;
                    for (int d = 0; d < dim; d++) dot += decode(q[(row * heads + h) * dim + d]) * decode(k[t * dim + d]);
                    acc += Math.max(dot, 0) * w[row * heads + h];
                }
                expected[t] = acc * kScale[t];
                max = Math.max(max, Math.abs(expected[t]));
            }
            for (int t = 0; t < positions; t++) {
                float got = scores[row * positions + t];
                if (t > meta[2 * row]) assertEquals(Float.NEGATIVE_INFINITY, got, "masked: row " + row + " t " + t);
                else assertEquals(expected[t], got, 1e-5 * max, "row " + row + " t " + t);
            }
        }
        // headWeights: proj·n^-1/2·q_scale·d^-1/2
        float[] proj = {2f, -1f, 0.5f}, qs = {0.25f, 4f, 1f}, hw = new float[3];
        Indexer.headWeights(proj, qs, hw, 1, 3, 0.5f, 0.125f);
        assertArrayEquals(new float[] {2 * 0.5f * 0.25f * 0.125f, -0.25f, 0.5f * 0.5f * 0.125f}, hw, 0f);
    }

    // ------------------------------------------------------------------ top-k

    @Test
    void sortableKeysOrderLikeTheFloats() {
        SplittableRandom r = new SplittableRandom(6);
        List<Float> vs = new ArrayList<>(List.of(0f, -0f, Float.MIN_VALUE, -Float.MIN_VALUE, Float.MIN_NORMAL, 0x1p-127f, Float.MAX_VALUE,
                -Float.MAX_VALUE, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, 1f, -1f, 1.0000001f, 0.99999994f, 3e-39f, 0x1p127f));
        for (int i = 0; i < 2000; i++) vs.add(Float.intBitsToFloat(r.nextInt()));
        for (int i = 0; i < 500; i++) vs.add((float) (r.nextGaussian() * Math.pow(10, r.nextInt(-40, 39))));
        vs.removeIf(f -> f.isNaN());
        for (float v : vs) {
            int key = TopK.sortableKey(v, POW2);
            if (v >= 0 && !Float.isInfinite(v)) assertEquals(Float.floatToIntBits(v + 0f), key, "positive v's key is its bits: " + v);
            if (v < 0) assertEquals(-TopK.sortableKey(-v, POW2), key);
        }
        for (int i = 0; i < 20000; i++) {
            float a = vs.get(r.nextInt(vs.size())), b = vs.get(r.nextInt(vs.size()));
            int ka = TopK.sortableKey(a, POW2), kb = TopK.sortableKey(b, POW2);
            assertEquals((int) Math.signum(a == b ? 0 : Float.compare(a, b)), Integer.signum(Integer.compare(ka, kb)), a + " vs " + b);
        }
        assertTrue(TopK.sortableKey(Float.NaN, POW2) < TopK.sortableKey(Float.NEGATIVE_INFINITY, POW2));
    }

    /** The top min(k, p+1) of row r by (score desc, position asc), by a full sort, in position order, then −1s. */
    static int[] topKBySort(float[] scores, int[] meta, int rows, int positions, int k) {
        int[] out = new int[rows * k];
        Arrays.fill(out, -1);
        for (int row = 0; row < rows; row++) {
            final int rr = row;
            List<Integer> ts = new ArrayList<>();
            for (int t = 0; t <= meta[2 * row]; t++) ts.add(t);
            Comparator<Integer> byScore = (a, b) -> {
                float sa = scores[rr * positions + a], sb = scores[rr * positions + b];
                if (Float.isNaN(sa) || Float.isNaN(sb)) return Boolean.compare(Float.isNaN(sa), Float.isNaN(sb));
                return sa == sb ? 0 : sa > sb ? -1 : 1;
            };
            ts.sort(byScore.thenComparing(Comparator.naturalOrder()));
            List<Integer> chosen = new ArrayList<>(ts.subList(0, Math.min(k, ts.size())));
            chosen.sort(Comparator.naturalOrder());
            for (int j = 0; j < chosen.size(); j++) out[row * k + j] = chosen.get(j);
        }
        return out;
    }

    @Test
    void topKSelectsWhatAFullSortSelects() {
        SplittableRandom r = new SplittableRandom(7);
        for (int trial = 0; trial < 60; trial++) {
            int rows = 1 + r.nextInt(6), positions = 1 + r.nextInt(trial < 50 ? 300 : 3000), k = 1 + r.nextInt(Math.max(1, positions + 3));
            int[] meta = new int[2 * rows];
            for (int row = 0; row < rows; row++) meta[2 * row] = r.nextInt(8) == 0 ? -1 : r.nextInt(positions);
            float[] scores = new float[rows * positions];
            int kind = trial % 4;
            for (int i = 0; i < scores.length; i++) {
                scores[i] = switch (kind) {
                    case 0 -> (float) r.nextGaussian();                                  // distinct
                    case 1 -> (float) r.nextInt(-3, 4);                                  // many ties
                    case 2 -> r.nextBoolean() ? 0f : -0f;                               // all equal (±0)
                    default -> r.nextInt(10) == 0 ? Float.NEGATIVE_INFINITY : (float) (r.nextGaussian() * 1e-40);   // subnormals, −∞
                };
            }
            int[] keys = new int[rows * positions], hist = new int[rows * TopK.BINS], out = new int[rows * k];
            Arrays.fill(out, 12345);
            TopK.selectTopK(scores, keys, hist, out, meta, rows, positions, k, POW2);
            assertArrayEquals(topKBySort(scores, meta, rows, positions, k), out, "trial " + trial + " kind " + kind + " k " + k);
        }
        // the tie rule spelled out: scores 5, 7, 7, 7, 1 with k = 2 select the two lowest positions of the 7s
        int[] out = new int[2];
        TopK.selectTopK(new float[] {5, 7, 7, 7, 1}, new int[5], new int[TopK.BINS], out, new int[] {4, 0}, 1, 5, 2, POW2);
        assertArrayEquals(new int[] {1, 2}, out);
        // k larger than the visible positions: all of them, then −1
        out = new int[4];
        TopK.selectTopK(new float[] {3, 1, 2}, new int[3], new int[TopK.BINS], out, new int[] {1, 0}, 1, 3, 4, POW2);
        assertArrayEquals(new int[] {0, 1, -1, -1}, out);
    }
}
