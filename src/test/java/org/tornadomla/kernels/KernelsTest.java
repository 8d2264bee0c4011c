package org.tornadomla.kernels;

import org.junit.jupiter.api.Test;
import org.tornadomla.TestData;
import org.tornadomla.weights.Bf16Bits;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.tornadomla.TestData.assertClose;
import static org.tornadomla.TestData.gaussian;

/**
 * Each kernel against a straightforward double-precision loop written here. Shapes are small and odd so
 * that index mistakes show: batch 2 with different start positions, 2 tokens per sequence, capacity 7.
 */
public class KernelsTest {
    static final double TOL = 1e-5;
    static final int B = 2, T = 2, CAP = 7, H = 3, DN = 4, DR = 4, DV = 5, DC = 6, W = DC + DR;
    static final int[] SEQ_START = {3, 0};            // sequence 0 appends at 3, 4; sequence 1 at 0, 1
    static final float[] POW2 = Bf16.pow2();
    /** The kernels' metadata for these rows over the contiguous cache [B, CAP] (sequence b = block b of CAP slots). */
    static final int[] META = Meta.contiguous(SEQ_START, B, T, CAP);

    static int len(int r) {
        return SEQ_START[r / T] + r % T + 1;
    }

    /** A filled f32 cache [B, CAP, DC+DR] (every slot valid data, as after the append). */
    static float[] cache() {
        return gaussian(100, B * CAP * W);
    }

    @Test
    void rmsNormReadsStridedRows() {
        int rows = 3, dim = 5, stride = 7;
        float[] x = gaussian(1, rows * stride), g = gaussian(2, dim), out = new float[rows * dim];
        Norms.rmsNorm(x, stride, g, out, rows, dim, 1e-6f);
        double[] e = new double[rows * dim];
        for (int r = 0; r < rows; r++) {
            double ss = 0;
            for (int i = 0; i < dim; i++) ss += (double) x[r * stride + i] * x[r * stride + i];
            for (int i = 0; i < dim; i++) e[r * dim + i] = g[i] * x[r * stride + i] / Math.sqrt(ss / dim + 1e-6);
        }
        assertClose(e, out, TOL, "rmsNorm");
    }

    @Test
    void projections() {
        int rows = 3, in = 9, out = 5;
        float[] x = gaussian(3, rows * in), w = gaussian(4, out * in), y = new float[rows * out], yv = new float[out];
        Projections.matMul(x, w, y, rows, in, out);
        Projections.matVec(x, w, yv, in, out);
        double[] e = new double[rows * out];
        for (int r = 0; r < rows; r++) {
            for (int o = 0; o < out; o++) {
                for (int i = 0; i < in; i++) e[r * out + o] += (double) w[o * in + i] * x[r * in + i];
            }
        }
        assertClose(e, y, TOL, "matMul");
        assertClose(java.util.Arrays.copyOf(e, out), yv, TOL, "matVec");
    }

    @Test
    void ropeRotatesInterleavedPairsAtEachRowsPosition() {
        int stride = H * (DN + DR);
        float[] x = gaussian(5, B * T * stride), x0 = x.clone();
        float[] f = {1f, 0.1f};
        Rope.rotatePairs(x, stride, H, DN + DR, DN, DR, META, B * T, f, 1.5f);
        double[] e = new double[x.length];
        for (int i = 0; i < x.length; i++) e[i] = x0[i];
        for (int r = 0; r < B * T; r++) {
            int pos = SEQ_START[r / T] + r % T;
            for (int h = 0; h < H; h++) {
                for (int i = 0; i < DR / 2; i++) {
                    int k = r * stride + h * (DN + DR) + DN + 2 * i;
                    double a = pos * (double) f[i], re = x0[k], im = x0[k + 1];
                    e[k] = 1.5 * (re * Math.cos(a) - im * Math.sin(a));
                    e[k + 1] = 1.5 * (re * Math.sin(a) + im * Math.cos(a));
                }
            }
        }
        assertClose(e, x, TOL, "rope (nope part untouched, rope part rotated)");
    }

    @Test
    void absorbQueryAndUnabsorbValue() {
        int rows = B * T;
        float[] q = gaussian(6, rows * H * (DN + DR)), wkvB = gaussian(7, H * (DN + DV) * DC);
        float[] qLat = new float[rows * H * DC];
        Absorb.absorbQuery(q, wkvB, qLat, rows, H, DN, DR, DV, DC);
        double[] e = new double[qLat.length];
        for (int r = 0; r < rows; r++)
            for (int h = 0; h < H; h++)
                for (int c = 0; c < DC; c++)
                    for (int d = 0; d < DN; d++)
                        e[(r * H + h) * DC + c] += (double) wkvB[(h * (DN + DV) + d) * DC + c] * q[(r * H + h) * (DN + DR) + d];
        assertClose(e, qLat, TOL, "absorbQuery");

        float[] oLat = gaussian(8, rows * H * DC), o = new float[rows * H * DV];
        Absorb.unabsorbValue(oLat, wkvB, o, rows, H, DN, DV, DC);
        double[] eo = new double[o.length];
        for (int r = 0; r < rows; r++)
            for (int h = 0; h < H; h++)
                for (int v = 0; v < DV; v++)
                    for (int c = 0; c < DC; c++)
                        eo[(r * H + h) * DV + v] += (double) wkvB[(h * (DN + DV) + DN + v) * DC + c] * oLat[(r * H + h) * DC + c];
        assertClose(eo, o, TOL, "unabsorbValue");
    }

    /** The int8 encoding as the cache documents it, in double: scale = max|x|/127 per part, round half away. */
    public static double[] int8Expected(float[] row, int dc) {
        double[] out = new double[row.length];
        for (int part = 0; part < 2; part++) {
            int lo = part == 0 ? 0 : dc, hi = part == 0 ? dc : row.length;
            double max = 0;
            for (int i = lo; i < hi; i++) max = Math.max(max, Math.abs(row[i]));
            double scale = (float) (max / 127);
            for (int i = lo; i < hi; i++) {
                double q = max == 0 ? 0 : Math.max(-127, Math.min(127, Math.signum(row[i]) * Math.floor(Math.abs(row[i]) * 127 / max + 0.5)));
                out[i] = q * scale;
            }
        }
        return out;
    }

    @Test
    void appendWritesOnlyTheNewRowsInEveryDtype() {
        float[] ckv = gaussian(9, B * T * DC), kvA = gaussian(10, B * T * W);
        float[] f32 = new float[B * CAP * W], scales = new float[2 * B * CAP];
        short[] bf16 = new short[B * CAP * W];
        byte[] int8 = new byte[B * CAP * W];
        CacheOps.append(ckv, kvA, f32, new short[1], new byte[1], CacheLayout.F32, META, B * T, CAP, DC, DR);
        CacheOps.append(ckv, kvA, POW2, bf16, new byte[1], CacheLayout.BF16, META, B * T, CAP, DC, DR);
        CacheOps.append(ckv, kvA, scales, new short[1], int8, CacheLayout.INT8, META, B * T, CAP, DC, DR);
        for (int b = 0; b < B; b++) {
            for (int j = 0; j < CAP; j++) {
                int t = j - SEQ_START[b], slot = b * CAP + j;
                float[] row = new float[W];
                for (int i = 0; i < W; i++) row[i] = t < 0 || t >= T ? 0f : i < DC ? ckv[(b * T + t) * DC + i] : kvA[(b * T + t) * W + i];
                double[] q8 = int8Expected(row, DC);
                for (int i = 0; i < W; i++) {
                    int idx = slot * W + i;
                    String at = " at b=" + b + " j=" + j + " i=" + i;
                    assertEquals(row[i], f32[idx], 0f, "f32 cache" + at);
                    assertEquals(Bf16Bits.encode(row[i]), bf16[idx], "bf16 cache" + at);
                    assertEquals(Bf16Bits.decode(bf16[idx]), CacheOps.load(POW2, bf16, new byte[1], CacheLayout.BF16, slot, i, W, DC), 0f, at);
                    assertEquals(q8[i], CacheOps.load(scales, new short[1], int8, CacheLayout.INT8, slot, i, W, DC), 1e-7, "int8 cache" + at);
                }
            }
        }
    }

    /** scores[r, h, j] in double, for both paths' definitions (naive with decompressed K, absorbed with q_lat). */
    @Test
    void naivePathKernels() {
        float[] cache = cache(), wkvB = gaussian(11, H * (DN + DV) * DC), q = gaussian(12, B * T * H * (DN + DR));
        float[] kvFull = new float[B * CAP * H * (DN + DV)];
        NaiveAttention.decompress(cache, new short[1], new byte[1], CacheLayout.F32, wkvB, kvFull, META, B * T, B, CAP, CAP, H, DN, DV, DC, DR);
        int wd = H * (DN + DV);
        for (int b = 0; b < B; b++) {
            for (int j = 0; j < CAP; j++) {
                for (int o = 0; o < wd; o++) {
                    double e = 0;
                    if (j < SEQ_START[b] + T) for (int c = 0; c < DC; c++) e += (double) wkvB[o * DC + c] * cache[(b * CAP + j) * W + c];
                    assertEquals(e, kvFull[(b * CAP + j) * wd + o], TOL * Math.max(1, Math.abs(e)), "decompress b=" + b + " j=" + j);
                }
            }
        }
        float scale = 0.3f;
        float[] scores = new float[B * T * H * CAP];
        NaiveAttention.naiveScores(q, kvFull, cache, new short[1], new byte[1], CacheLayout.F32, scores, META, B * T, CAP, CAP, H, DN, DR, DV, DC, scale);
        double[] p = new double[scores.length];
        for (int r = 0; r < B * T; r++) {
            int b = r / T;
            for (int h = 0; h < H; h++) {
                for (int j = 0; j < len(r); j++) {
                    double s = 0;
                    for (int d = 0; d < DN; d++) s += (double) q[(r * H + h) * (DN + DR) + d] * kvFull[(b * CAP + j) * wd + h * (DN + DV) + d];
                    for (int d = 0; d < DR; d++) s += (double) q[(r * H + h) * (DN + DR) + DN + d] * cache[(b * CAP + j) * W + DC + d];
                    p[(r * H + h) * CAP + j] = s * scale;
                    assertEquals(s * scale, scores[(r * H + h) * CAP + j], TOL, "naive score r=" + r + " h=" + h + " j=" + j);
                }
            }
        }
        softmaxInDouble(p);
        Softmax.softmax(scores, META, B * T, CAP, H);
        for (int r = 0; r < B * T; r++)
            for (int h = 0; h < H; h++)
                for (int j = 0; j < len(r); j++)
                    assertEquals(p[(r * H + h) * CAP + j], scores[(r * H + h) * CAP + j], TOL, "softmax");
        float[] o = new float[B * T * H * DV];
        NaiveAttention.naiveValues(scores, kvFull, o, META, B * T, CAP, CAP, H, DN, DV);
        double[] eo = new double[o.length];
        for (int r = 0; r < B * T; r++)
            for (int h = 0; h < H; h++)
                for (int v = 0; v < DV; v++)
                    for (int j = 0; j < len(r); j++)
                        eo[(r * H + h) * DV + v] += p[(r * H + h) * CAP + j] * kvFull[((r / T) * CAP + j) * wd + h * (DN + DV) + DN + v];
        assertClose(eo, o, TOL, "naiveValues");
    }

    private static void softmaxInDouble(double[] s) {
        for (int r = 0; r < B * T; r++) {
            for (int h = 0; h < H; h++) {
                int base = (r * H + h) * CAP;
                double max = Double.NEGATIVE_INFINITY, sum = 0;
                for (int j = 0; j < len(r); j++) max = Math.max(max, s[base + j]);
                for (int j = 0; j < len(r); j++) sum += Math.exp(s[base + j] - max);
                for (int j = 0; j < len(r); j++) s[base + j] = Math.exp(s[base + j] - max) / sum;
            }
        }
    }

    /** Expected o_lat = Σ_j softmax(scale·(q_lat·c_kv + q_pe·k_pe))_j·c_kv[j], in double. */
    private static double[] absorbedInDouble(float[] qLat, float[] q, float[] cache, float scale) {
        double[] p = new double[B * T * H * CAP];
        for (int r = 0; r < B * T; r++)
            for (int h = 0; h < H; h++)
                for (int j = 0; j < len(r); j++) {
                    double s = 0;
                    int row = ((r / T) * CAP + j) * W;
                    for (int c = 0; c < DC; c++) s += (double) qLat[(r * H + h) * DC + c] * cache[row + c];
                    for (int d = 0; d < DR; d++) s += (double) q[(r * H + h) * (DN + DR) + DN + d] * cache[row + DC + d];
                    p[(r * H + h) * CAP + j] = s * scale;
                }
        softmaxInDouble(p);
        double[] o = new double[B * T * H * DC];
        for (int r = 0; r < B * T; r++)
            for (int h = 0; h < H; h++)
                for (int c = 0; c < DC; c++)
                    for (int j = 0; j < len(r); j++)
                        o[(r * H + h) * DC + c] += p[(r * H + h) * CAP + j] * cache[((r / T) * CAP + j) * W + c];
        return o;
    }

    @Test
    void absorbedPathKernels() {
        float[] cache = cache(), qLat = gaussian(13, B * T * H * DC), q = gaussian(14, B * T * H * (DN + DR));
        float scale = 0.4f;
        float[] scores = new float[B * T * H * CAP], oLat = new float[B * T * H * DC];
        AbsorbedAttention.absorbedScores(qLat, q, cache, new short[1], new byte[1], CacheLayout.F32, scores, META, B * T, CAP, CAP, H, DN, DR, DC, scale);
        Softmax.softmax(scores, META, B * T, CAP, H);
        AbsorbedAttention.absorbedValues(scores, cache, new short[1], new byte[1], CacheLayout.F32, oLat, META, B * T, CAP, CAP, H, DC, DR);
        assertClose(absorbedInDouble(qLat, q, cache, scale), oLat, TOL, "absorbed o_lat");
    }

    @Test
    void onlineSoftmaxTilesAndSplitCombineForAnyTilingIncludingEmptySplits() {
        float[] cache = cache(), qLat = gaussian(15, B * T * H * DC), q = gaussian(16, B * T * H * (DN + DR));
        float scale = 0.5f;
        double[] expected = absorbedInDouble(qLat, q, cache, scale);
        int[][] tilings = {{1, 1}, {2, 1}, {3, 2}, {64, 1}, {2, 5}, {1, 9}};   // {tileSize, numSplits}; 9 splits > len: empty splits
        for (int[] ts : tilings) {
            int bc = ts[0], splits = ts[1], parts = B * T * H * splits;
            float[] sTile = new float[parts * bc], oPart = new float[parts * DC], ml = new float[2 * parts], oLat = new float[B * T * H * DC];
            OnlineSoftmax.splitTiles(qLat, q, cache, new short[1], new byte[1], CacheLayout.F32, sTile, oPart, ml, META, B * T, CAP, H, DN, DR, DC, scale, bc, splits);
            OnlineSoftmax.combine(oPart, ml, oLat, B * T, H, splits, DC);
            assertClose(expected, oLat, TOL, "tiled Bc=" + bc + " splits=" + splits);
        }
    }

    @Test
    void combineOfOnlyEmptySplitsIsZeroNotNaN() {
        float[] oPart = new float[3 * DC], ml = new float[6];          // (m, l) = (0, 0): three empty splits
        float[] o = new float[DC];
        OnlineSoftmax.combine(oPart, ml, o, 1, 1, 3, DC);
        for (float v : o) {
            assertFalse(Float.isNaN(v));
            assertEquals(0f, v);
        }
    }

    /** Absorbed and tiled kernels over a quantised cache equal the double computation over its decoded values. */
    private static void quantisedReadsAreTheDecodedValues(int dtype, float[] f32, short[] bf16, byte[] bytes, float[] decoded) {
        float[] qLat = gaussian(17, B * T * H * DC), q = gaussian(18, B * T * H * (DN + DR));
        float[] scores = new float[B * T * H * CAP], oLat = new float[B * T * H * DC];
        AbsorbedAttention.absorbedScores(qLat, q, f32, bf16, bytes, dtype, scores, META, B * T, CAP, CAP, H, DN, DR, DC, 0.4f);
        Softmax.softmax(scores, META, B * T, CAP, H);
        AbsorbedAttention.absorbedValues(scores, f32, bf16, bytes, dtype, oLat, META, B * T, CAP, CAP, H, DC, DR);
        assertClose(absorbedInDouble(qLat, q, decoded, 0.4f), oLat, TOL, "absorbed over dtype " + dtype);
        float[] sTile = new float[B * T * H * 2 * 2], oPart = new float[B * T * H * 2 * DC], ml = new float[B * T * H * 2 * 2], oT = new float[oLat.length];
        OnlineSoftmax.splitTiles(qLat, q, f32, bf16, bytes, dtype, sTile, oPart, ml, META, B * T, CAP, H, DN, DR, DC, 0.4f, 2, 2);
        OnlineSoftmax.combine(oPart, ml, oT, B * T, H, 2, DC);
        assertClose(absorbedInDouble(qLat, q, decoded, 0.4f), oT, TOL, "tiled over dtype " + dtype);
    }

    @Test
    void bf16CacheReadsAreTheDecodedValues() {
        float[] values = cache();
        short[] bits = new short[values.length];
        float[] rounded = new float[values.length];
        for (int i = 0; i < values.length; i++) {
            bits[i] = Bf16Bits.encode(values[i]);
            rounded[i] = Bf16Bits.decode(bits[i]);
        }
        quantisedReadsAreTheDecodedValues(CacheLayout.BF16, POW2, bits, new byte[1], rounded);
    }

    @Test
    void int8CacheReadsAreTheDecodedValues() {
        float[] values = cache();
        float[] scales = new float[2 * B * CAP];
        byte[] bytes = new byte[values.length];
        float[] decoded = new float[values.length];
        for (int slot = 0; slot < B * CAP; slot++) {
            CacheRows.writeRow(values, slot * W, values, slot * W + DC, scales, new short[1], bytes, CacheLayout.INT8, slot, DC, DR);
            double[] e = int8Expected(java.util.Arrays.copyOfRange(values, slot * W, slot * W + W), DC);
            for (int i = 0; i < W; i++) decoded[slot * W + i] = (float) e[i];
        }
        quantisedReadsAreTheDecodedValues(CacheLayout.INT8, scales, new short[1], bytes, decoded);
    }

    @Test
    void fp8CacheReadsAreTheDecodedValues() {
        float[] values = cache();
        int nb = (DC + 127) / 128;
        float[] f32 = java.util.Arrays.copyOf(POW2, CacheLayout.TABLE + B * CAP * nb);
        short[] rope = new short[B * CAP * DR];
        byte[] lat = new byte[B * CAP * DC];
        float[] decoded = new float[values.length];
        for (int slot = 0; slot < B * CAP; slot++) {
            CacheRows.writeRow(values, slot * W, values, slot * W + DC, f32, rope, lat, CacheLayout.FP8, slot, DC, DR);
            // expected, computed here: per block of 128 (DC ≤ 128 here), scale = max(max|x|/448, 1e-4) rounded up to
            // a power of two (FlashMLA's ue8m0), nearest e4m3 of x/scale, times scale
            double amax = 0;
            for (int i = 0; i < DC; i++) amax = Math.max(amax, Math.abs(values[slot * W + i]));
            float raw = Math.max((float) amax / 448f, 1e-4f);
            int e = Math.getExponent(raw);
            float scale = raw == Math.scalb(1f, e) ? raw : Math.scalb(1f, e + 1);
            assertTrue(scale >= raw && scale < 2 * raw, "a power of two at or above amax/448");
            for (int i = 0; i < DC; i++) decoded[slot * W + i] = (float) (Fp8Test.nearest(values[slot * W + i] / scale) * scale);
            for (int i = DC; i < W; i++) decoded[slot * W + i] = Bf16Bits.decode(Bf16Bits.encode(values[slot * W + i]));
        }
        for (int slot = 0; slot < B * CAP; slot++) {
            for (int i = 0; i < W; i++) {
                assertEquals(decoded[slot * W + i], CacheOps.load(f32, rope, lat, CacheLayout.FP8, slot, i, W, DC), 1e-6, "slot " + slot + " col " + i);
            }
        }
        quantisedReadsAreTheDecodedValues(CacheLayout.FP8, f32, rope, lat, decoded);
    }
}
