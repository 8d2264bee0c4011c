package org.tornadomla.kernels;

import org.junit.jupiter.api.Test;
import org.tornadomla.Fp8Checkpoints;
import org.tornadomla.weights.Bf16Bits;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.tornadomla.TestData.assertClose;
import static org.tornadomla.TestData.gaussian;

/**
 * The bf16 and FP8 weight kernels (Projections, Absorb, Dequantize) against a double-precision loop over
 * weights decoded here (the test's bit decoder, 1e-5 relative), and against the f32 kernel on the weights
 * dequantised first: equal bit for bit, as the kernels decode each weight and sum in the f32 kernel's order.
 * Shapes cross 128-blocks with partial ones on both sides.
 */
class WeightFormsKernelsTest {
    static final float[] POW2 = Bf16.pow2();

    /** Block-scaled FP8 test weights [rows, cols]: random finite codes, scales of varied size (one tiny, one 0). */
    record Fp8(int rows, int cols, byte[] codes, float[] scales, float[] dequantised) {
        static Fp8 random(int rows, int cols, long seed) {
            SplittableRandom r = new SplittableRandom(seed);
            byte[] q = new byte[rows * cols];
            for (int i = 0; i < q.length; i++) {
                int c;
                do {
                    c = r.nextInt(256);
                } while ((c & 0x7F) == 0x7F);
                q[i] = (byte) c;
            }
            int br = (rows + 127) / 128, bc = (cols + 127) / 128;
            float[] s = new float[br * bc];
            for (int b = 0; b < s.length; b++) s[b] = (float) ((0.5 + r.nextDouble()) / (100 * Math.sqrt(cols)));
            s[0] = 0x1p-140f;                                  // products underflow to subnormals
            if (s.length > 2) s[2] = 0f;
            float[] d = new float[q.length];
            for (int i = 0; i < q.length; i++) d[i] = Fp8Checkpoints.e4m3(q[i] & 0xFF) * s[(i / cols / 128) * bc + (i % cols) / 128];
            return new Fp8(rows, cols, q, s, d);
        }
    }

    /** bf16 weights N(0, 1/in), like a trained layer's (sums of O(1), as the tolerance assumes). */
    static short[] bf16(float[] w, int in) {
        short[] b = new short[w.length];
        for (int i = 0; i < w.length; i++) b[i] = Bf16Bits.encode((float) (w[i] / Math.sqrt(in)));
        return b;
    }

    static float[] decoded(short[] b) {
        float[] f = new float[b.length];
        for (int i = 0; i < b.length; i++) f[i] = Float.intBitsToFloat((b[i] & 0xFFFF) << 16);
        return f;
    }

    static double[] product(float[] x, float[] w, int rows, int in, int out) {
        double[] e = new double[rows * out];
        for (int r = 0; r < rows; r++) {
            for (int o = 0; o < out; o++) {
                for (int i = 0; i < in; i++) e[r * out + o] += (double) w[o * in + i] * x[r * in + i];
            }
        }
        return e;
    }

    @Test
    void projections() {
        int rows = 3, in = 300, out = 260;                      // blocks of 128, 128, 44 columns and 128, 128, 4 rows
        Fp8 w8 = Fp8.random(out, in, 1);
        short[] w16 = bf16(gaussian(2, out * in), in);
        float[] x = gaussian(3, rows * in);
        for (int form = 0; form < 2; form++) {
            float[] wf = form == 0 ? w8.dequantised : decoded(w16);
            String what = form == 0 ? "fp8" : "bf16";
            float[] y = new float[rows * out], yv = new float[out], y32 = new float[rows * out], yv32 = new float[out];
            if (form == 0) {
                Projections.matMulFp8(x, w8.codes, w8.scales, POW2, y, rows, in, out);
                Projections.matVecFp8(x, w8.codes, w8.scales, POW2, yv, in, out);
            } else {
                Projections.matMulBf16(x, w16, POW2, y, rows, in, out);
                Projections.matVecBf16(x, w16, POW2, yv, in, out);
            }
            double[] e = product(x, wf, rows, in, out);
            assertClose(e, y, 1e-5, what + " matMul");
            assertClose(java.util.Arrays.copyOf(e, out), yv, 1e-5, what + " matVec");
            Projections.matMul(x, wf, y32, rows, in, out);
            Projections.matVec(x, wf, yv32, in, out);
            assertArrayEquals(y32, y, what + " matMul = f32 kernel on the dequantised weights");
            assertArrayEquals(yv32, yv, what + " matVec = f32 kernel on the dequantised weights");
        }
    }

    @Test
    void absorption() {
        int rows = 2, heads = 3, dn = 40, dr = 8, dv = 48, dc = 144;   // kv_b_proj [264, 144]: partial blocks both ways
        Fp8 w8 = Fp8.random(heads * (dn + dv), dc, 4);
        short[] w16 = bf16(gaussian(5, heads * (dn + dv) * dc), dc);
        float[] q = gaussian(6, rows * heads * (dn + dr)), oLat = gaussian(7, rows * heads * dc);
        for (int form = 0; form < 2; form++) {
            float[] wf = form == 0 ? w8.dequantised : decoded(w16);
            String what = form == 0 ? "fp8" : "bf16";
            float[] qLat = new float[rows * heads * dc], o = new float[rows * heads * dv];
            if (form == 0) {
                Absorb.absorbQueryFp8(q, w8.codes, w8.scales, POW2, qLat, rows, heads, dn, dr, dv, dc);
                Absorb.unabsorbValueFp8(oLat, w8.codes, w8.scales, POW2, o, rows, heads, dn, dv, dc);
            } else {
                Absorb.absorbQueryBf16(q, w16, POW2, qLat, rows, heads, dn, dr, dv, dc);
                Absorb.unabsorbValueBf16(oLat, w16, POW2, o, rows, heads, dn, dv, dc);
            }
            double[] eq = new double[qLat.length], eo = new double[o.length];
            for (int r = 0; r < rows; r++) {
                for (int h = 0; h < heads; h++) {
                    for (int c = 0; c < dc; c++) {
                        for (int d = 0; d < dn; d++) eq[(r * heads + h) * dc + c] += (double) wf[(h * (dn + dv) + d) * dc + c] * q[(r * heads + h) * (dn + dr) + d];
                    }
                    for (int v = 0; v < dv; v++) {
                        for (int c = 0; c < dc; c++) eo[(r * heads + h) * dv + v] += (double) wf[(h * (dn + dv) + dn + v) * dc + c] * oLat[(r * heads + h) * dc + c];
                    }
                }
            }
            assertClose(eq, qLat, 1e-5, what + " absorbQuery");
            assertClose(eo, o, 1e-5, what + " unabsorbValue");
            float[] qLat32 = new float[qLat.length], o32 = new float[o.length];
            Absorb.absorbQuery(q, wf, qLat32, rows, heads, dn, dr, dv, dc);
            Absorb.unabsorbValue(oLat, wf, o32, rows, heads, dn, dv, dc);
            assertArrayEquals(qLat32, qLat, what + " absorbQuery = f32 kernel on the dequantised weights");
            assertArrayEquals(o32, o, what + " unabsorbValue = f32 kernel on the dequantised weights");
        }
    }

    @Test
    void dequantize() {
        Fp8 w8 = Fp8.random(130, 257, 8);
        float[] out = new float[130 * 257];
        Dequantize.fromFp8(w8.codes, w8.scales, POW2, out, 130, 257);
        assertArrayEquals(w8.dequantised, out);
        short[] w16 = bf16(gaussian(9, 5 * 7), 7);
        float[] out16 = new float[35];
        Dequantize.fromBf16(w16, POW2, out16, 5, 7);
        assertArrayEquals(decoded(w16), out16);
    }
}
