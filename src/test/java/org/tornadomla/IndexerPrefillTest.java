package org.tornadomla;

import org.junit.jupiter.api.Test;
import org.tornadomla.config.IndexerConfig;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.config.RopeScaling;
import org.tornadomla.internal.Gaussians;
import org.tornadomla.weights.MlaWeights;
import org.tornadomla.weights.WeightDtype;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link IndexerReference} (the library's kernels in DeepSeek's order) against an indexer written here in double
 * precision from DeepSeek-V3.2's Indexer.forward: explicit matrix products, RMSNorm and LayerNorm formulas, RoPE on
 * its own YaRN frequencies, the Sylvester Hadamard matrix, act_quant on the e4m3 grid enumerated from the format,
 * fp8_index's sum, and a full sort for the top-k.
 */
class IndexerPrefillTest {
    static final int T = 40;

    static MlaConfig config(boolean ue8m0, boolean interleaved) {
        return new MlaConfig(64, 2, 32, 32, 16, 16, 16, 10000, 1e-6, 4096, 1, new RopeScaling(4, 256, 32, 1, 1, 1), false,
                new IndexerConfig(4, 128, 8, ue8m0, interleaved));
    }

    // ------------------------------------------------------------------ the double-precision indexer

    static final double[] GRID = new double[127];

    static {
        for (int code = 0; code < 127; code++) {
            int e = code >> 3, m = code & 7;
            GRID[code] = e == 0 ? m * Math.pow(2, -9) : (1 + m / 8.0) * Math.pow(2, e - 7);
        }
    }

    /** Signed grid index of the e4m3 value nearest x (ties to even), saturating at 448. */
    static int e4m3(double x) {
        double a = Math.min(Math.abs(x), 448);
        int best = 0;
        for (int c = 1; c < 127; c++) {
            double dc = Math.abs(GRID[c] - a), db = Math.abs(GRID[best] - a);
            if (dc < db || (dc == db && (c & 1) == 0)) best = c;
        }
        return x < 0 ? -best : best;
    }

    static double value(int signedCode) {
        return signedCode < 0 ? -GRID[-signedCode] : GRID[signedCode];
    }

    record Ref(double[] qPre, double[] kPre, int[] qCodes, double[] qScales, int[] kCodes, double[] kScales, double[] scores) {
    }

    static double[] mv(float[] w, double[] x, int out) {
        double[] y = new double[out];
        for (int o = 0; o < out; o++) for (int i = 0; i < x.length; i++) y[o] += w[o * x.length + i] * x[i];
        return y;
    }

    static Ref reference(MlaWeights w, float[] x) {
        return reference(w, x, T);
    }

    /** The double-precision indexer of a prefill of x [tokens, D] at positions 0 … tokens−1. */
    static Ref reference(MlaWeights w, float[] x, int T) {
        MlaConfig c = w.config();
        IndexerConfig ix = c.indexer();
        int D = c.hiddenSize(), rq = c.qLoraRank(), n = ix.nHeads(), d = ix.headDim(), dr = c.qkRopeHeadDim();
        double[] freq = ReferenceMla.frequencies(c);
        double[][] hadamard = new double[d][d];
        for (int i = 0; i < d; i++) for (int j = 0; j < d; j++) hadamard[i][j] = (Integer.bitCount(i & j) % 2 == 0 ? 1 : -1) / Math.sqrt(d);
        double[] qPre = new double[T * n * d], kPre = new double[T * d];
        float[] qA = w.qA().toFloats(), qANorm = w.qANorm().toFloats(), wqB = w.indexerWqB().toFloats(), wk = w.indexerWk().toFloats();
        float[] g = w.indexerKNorm().toFloats(), b = w.indexerKNormBias().toFloats();
        for (int t = 0; t < T; t++) {
            double[] xt = new double[D];
            for (int i = 0; i < D; i++) xt[i] = x[t * D + i];
            double[] a = mv(qA, xt, rq);
            double ss = 0;
            for (double v : a) ss += v * v / rq;
            double[] qr = new double[rq];
            for (int i = 0; i < rq; i++) qr[i] = a[i] / Math.sqrt(ss + c.rmsNormEps()) * qANorm[i];
            double[] q = mv(wqB, qr, n * d), k = mv(wk, xt, d);
            double mean = Arrays.stream(k).sum() / d, var = 0;
            for (double v : k) var += (v - mean) * (v - mean) / d;
            for (int i = 0; i < d; i++) k[i] = (k[i] - mean) / Math.sqrt(var + 1e-6) * g[i] + b[i];
            for (int h = 0; h <= n; h++) {                              // n query heads, then the key
                double[] v = h < n ? Arrays.copyOfRange(q, h * d, (h + 1) * d) : k;
                for (int i = 0; i < dr / 2; i++) {
                    int i0 = ix.ropeInterleaved() ? 2 * i : i, i1 = ix.ropeInterleaved() ? 2 * i + 1 : i + dr / 2;
                    double cos = Math.cos(t * freq[i]), sin = Math.sin(t * freq[i]), x0 = v[i0], x1 = v[i1];
                    v[i0] = x0 * cos - x1 * sin;
                    v[i1] = x0 * sin + x1 * cos;
                }
                double[] hv = new double[d];
                for (int i = 0; i < d; i++) for (int j = 0; j < d; j++) hv[i] += hadamard[i][j] * v[j];
                if (h < n) System.arraycopy(hv, 0, qPre, (t * n + h) * d, d);
                else System.arraycopy(hv, 0, kPre, t * d, d);
            }
        }
        int[] qCodes = new int[qPre.length], kCodes = new int[kPre.length];
        double[] qScales = quantize(qPre, qCodes, ix.ue8m0()), kScales = quantize(kPre, kCodes, ix.ue8m0());
        float[] wp = w.indexerWeightsProj().toFloats();
        double[] scores = new double[T * T];
        for (int t = 0; t < T; t++) {
            double[] xt = new double[D];
            for (int i = 0; i < D; i++) xt[i] = x[t * D + i];
            double[] proj = mv(wp, xt, n);
            for (int j = 0; j < T; j++) {
                if (j > t) {
                    scores[t * T + j] = Double.NEGATIVE_INFINITY;
                    continue;
                }
                double s = 0;
                for (int h = 0; h < n; h++) {
                    double dot = 0;
                    for (int i = 0; i < d; i++) dot += value(qCodes[(t * n + h) * d + i]) * value(kCodes[j * d + i]);
                    s += proj[h] / Math.sqrt(n) * qScales[t * n + h] / Math.sqrt(d) * Math.max(dot, 0);
                }
                scores[t * T + j] = s * kScales[j];
            }
        }
        return new Ref(qPre, kPre, qCodes, qScales, kCodes, kScales, scores);
    }

    /** act_quant over blocks of 128: amax = max(|v|, 1e-4), s = amax/448 (ue8m0: 2^ceil(log2 s)), code = e4m3(v/s). */
    static double[] quantize(double[] v, int[] codes, boolean ue8m0) {
        double[] scales = new double[v.length / 128];
        for (int blk = 0; blk < scales.length; blk++) {
            double amax = 1e-4;
            for (int i = 0; i < 128; i++) amax = Math.max(amax, Math.abs(v[blk * 128 + i]));
            double s = amax / 448;
            if (ue8m0) s = Math.pow(2, Math.ceil(Math.log(s) / Math.log(2)));
            scales[blk] = s;
            for (int i = 0; i < 128; i++) codes[blk * 128 + i] = e4m3(v[blk * 128 + i] / s);
        }
        return scales;
    }

    /** The top min(k, t+1) positions of row t by (score desc, position asc), in position order. */
    static int[] topK(double[] scores, int t, int k) {
        return topK(scores, t, k, T);
    }

    /** As {@link #topK(double[], int, int)} for scores [T, T]. */
    static int[] topK(double[] scores, int t, int k, int T) {
        List<Integer> ps = new ArrayList<>();
        for (int j = 0; j <= t; j++) ps.add(j);
        ps.sort(Comparator.<Integer>comparingDouble(j -> -scores[t * T + j]).thenComparing(Comparator.naturalOrder()));
        return ps.subList(0, Math.min(k, ps.size())).stream().mapToInt(Integer::intValue).sorted().toArray();
    }

    // ------------------------------------------------------------------ the comparison

    static float[] input(long seed, int D) {
        return Gaussians.floats(new SplittableRandom(seed), T * D, 1);
    }

    private static void compare(MlaConfig c, long seed) {
        MlaWeights w = MlaWeights.random(c, seed);
        float[] x = input(seed + 1, c.hiddenSize());
        IndexerReference.Result got = IndexerReference.prefill(w, x, T);
        Ref ref = reference(w, x);
        String what = "ue8m0 " + c.indexer().ue8m0() + ", interleaved " + c.indexer().ropeInterleaved();
        // before quantisation: f32 kernels vs double, O(1) values
        for (int i = 0; i < ref.qPre.length; i++) assertEquals(ref.qPre[i], got.qPre()[i], 1e-4, what + ": q " + i);
        for (int i = 0; i < ref.kPre.length; i++) assertEquals(ref.kPre[i], got.kPre()[i], 1e-4, what + ": k " + i);
        // the codes: a value that float and double put on either side of a rounding boundary may differ by one step, rarely
        int differ = 0;
        for (int pass = 0; pass < 2; pass++) {
            int[] expected = pass == 0 ? ref.qCodes : ref.kCodes;
            byte[] actual = pass == 0 ? got.qCodes() : got.kCodes();
            for (int i = 0; i < expected.length; i++) {
                int a = (actual[i] & 0x80) != 0 ? -(actual[i] & 0x7F) : actual[i] & 0x7F;
                if (a != expected[i]) {
                    differ++;
                    assertEquals(1, Math.abs(a - expected[i]), what + ": code " + i + " is " + a + ", expected " + expected[i]);
                }
            }
        }
        assertTrue(differ <= (ref.qCodes.length + ref.kCodes.length) / 1000, what + ": " + differ + " codes differ");
        for (int i = 0; i < ref.qScales.length; i++) assertEquals(ref.qScales[i], got.qScales()[i], 1e-6 * ref.qScales[i], what + ": q scale " + i);
        for (int i = 0; i < ref.kScales.length; i++) assertEquals(ref.kScales[i], got.kScales()[i], 1e-6 * ref.kScales[i], what + ": k scale " + i);
        // scores and selections
        int k = c.indexer().topK(), decided = 0;
        for (int t = 0; t < T; t++) {
            double max = 0;
            for (int j = 0; j <= t; j++) max = Math.max(max, Math.abs(ref.scores[t * T + j]));
            double tol = 1e-4 * max + 1e-12;
            for (int j = 0; j < T; j++) {
                if (j > t) assertEquals(Float.NEGATIVE_INFINITY, got.scores()[t * T + j]);
                else if (differ == 0) assertEquals(ref.scores[t * T + j], got.scores()[t * T + j], tol, what + ": score " + t + ", " + j);
            }
            int[] expected = topK(ref.scores, t, k);
            assertEquals(Math.min(k, t + 1), got.selection(t).length);
            if (t + 1 <= k) {
                assertArrayEquals(expected, got.selection(t));           // everything visible
                continue;
            }
            double[] sorted = new double[t + 1];
            for (int j = 0; j <= t; j++) sorted[j] = -ref.scores[t * T + j];
            Arrays.sort(sorted);
            if (-sorted[k - 1] - -sorted[k] > 0.01 * max) {              // a clear k-th: the sets must agree
                assertArrayEquals(expected, got.selection(t), what + ": row " + t);
                decided++;
            }
        }
        assertTrue(decided >= (T - k) / 2, what + ": only " + decided + " rows had a clear k-th score");
    }

    @Test
    void thePrefillIndexerMatchesTheDoublePrecisionOne() {
        compare(config(true, false), 11);                               // DeepSeek-V3.2: ue8m0, RoPE in halves
        compare(config(false, false), 12);                              // no scale_fmt: amax/448
        compare(config(true, true), 13);                                // indexer_rope_interleave (GLM-5.1)
    }

    @Test
    void selectionsAreCausalSizedAndTheSameForAnyWeightForm() {
        MlaConfig c = config(true, false);
        MlaWeights w = MlaWeights.random(c, 21);
        float[] x = input(22, c.hiddenSize());
        IndexerReference.Result r = IndexerReference.prefill(w, x, T);
        for (int t = 0; t < T; t++) {
            int[] s = r.selection(t);
            assertEquals(Math.min(8, t + 1), s.length);
            for (int j = 0; j < s.length; j++) assertTrue(s[j] >= 0 && s[j] <= t && (j == 0 || s[j] > s[j - 1]), "row " + t);
            for (int j = s.length; j < 8; j++) assertEquals(-1, r.selected()[t * 8 + j]);
        }
        // the kernels take weights as f32; an fp8 copy of the layer dequantises to other values, so it selects from its own scores
        IndexerReference.Result f8 = IndexerReference.prefill(w.to(WeightDtype.FP8), x, T);
        assertEquals(T * 8, f8.selected().length);
        // the key cache the indexer keeps: 128 codes + 1 scale per token (132 bytes)
        assertEquals(T * 128, r.kCodes().length);
        assertEquals(T, r.kScales().length);
        assertEquals(132, c.indexer().cacheBytesPerToken());
        for (float s : r.kScales()) assertEquals(s, Math.scalb(1f, Math.getExponent(s)), "ue8m0 scales are powers of two");
    }
}
