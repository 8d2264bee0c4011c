package org.tornadomla.fast;

import org.junit.jupiter.api.Test;
import org.tornadomla.Fp8Checkpoints;
import org.tornadomla.TestData;
import org.tornadomla.kernels.Absorb;
import org.tornadomla.kernels.Bf16;
import org.tornadomla.kernels.Dequantize;
import org.tornadomla.kernels.Projections;
import org.tornadomla.weights.Bf16Bits;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

/**
 * The java-fast bf16/FP8 weight kernels against the reference kernels (1e-5: the sums run in another order)
 * and against the java-fast f32 kernels on the weights dequantised first (1e-6: the same f32 weights summed
 * in the same order, except the sum across vector lanes, whose order the Vector API leaves open — its
 * intrinsic and its Java fallback differ, so two methods at different JIT stages may differ in the last bit). Lengths leave vector tails and partial 128-blocks; the codes include
 * every finite e4m3 code (subnormals, ±0, ±448) and blocks with tiny, zero and large (≥ 2^8) scales.
 */
class WeightKernelsTest {
    static final float[] POW2 = Bf16.pow2();

    record Fp8(byte[] codes, float[] scales, float[] dequantised) {
        static Fp8 random(int rows, int cols, long seed) {
            SplittableRandom r = new SplittableRandom(seed);
            byte[] q = new byte[rows * cols];
            int k = 0;
            for (int c = 0; c < 256 && k < q.length; c++) if ((c & 0x7F) != 0x7F) q[k++] = (byte) c;
            for (; k < q.length; k++) {
                int c;
                do {
                    c = r.nextInt(256);
                } while ((c & 0x7F) == 0x7F);
                q[k] = (byte) c;
            }
            int bc = (cols + 127) / 128;
            float[] s = new float[((rows + 127) / 128) * bc];
            for (int b = 0; b < s.length; b++) s[b] = (float) ((0.5 + r.nextDouble()) / (100 * Math.sqrt(cols)));
            s[0] = 0x1p-140f;
            if (s.length > 2) s[2] = 0f;
            if (s.length > 3) s[3] = 300f;                 // scale·2^120 overflows: the kernels' other decoding path
            float[] d = new float[q.length];
            for (int i = 0; i < q.length; i++) d[i] = Fp8Checkpoints.e4m3(q[i] & 0xFF) * s[(i / cols / 128) * bc + (i % cols) / 128];
            return new Fp8(q, s, d);
        }
    }

    /** |actual − expected| ≤ tol·max |expected| everywhere: the sums differ in order, and a block with a large scale makes cancellation. */
    static void assertClose(float[] expected, float[] actual, double tol, String what) {
        double scale = 0;
        for (float v : expected) scale = Math.max(scale, Math.abs(v));
        for (int i = 0; i < expected.length; i++) {
            if (!(Math.abs(actual[i] - expected[i]) <= tol * scale)) {
                throw new AssertionError(what + ": element " + i + " expected " + expected[i] + " found " + actual[i] + " (tolerance " + tol + " of " + scale + ")");
            }
        }
    }

    static short[] bf16(int n, int in, long seed) {
        float[] g = TestData.gaussian(seed, n);
        short[] b = new short[n];
        for (int i = 0; i < n; i++) b[i] = Bf16Bits.encode((float) (g[i] / Math.sqrt(in)));
        return b;
    }

    static float[] decoded(short[] b) {
        float[] f = new float[b.length];
        for (int i = 0; i < b.length; i++) f[i] = Bf16Bits.decode(b[i]);
        return f;
    }

    @Test
    void projectionsMatchTheReferenceAndTheF32KernelsOnDequantisedWeights() {
        // from MIN_ROWS_COMPACT token rows on the blocked product (ProjectionGemm): chunks of 256 inputs with a
        // remainder, FP8 scale blocks inside a chunk, outputs past the last whole block of 48, rows past the last
        // block of 8; the f32 product (MIN_ROWS) takes it from fewer rows
        int c = ProjectionGemm.MIN_ROWS_COMPACT, m = ProjectionGemm.MIN_ROWS;
        for (int[] shape : new int[][] {{1, 300, 260}, {3, 300, 260}, {2, 7, 5}, {1, 128, 129}, {m + 1, 300, 260}, {c - 1, 256, 48},
                {c, 300, 260}, {c + 5, 600, 100}}) {
            int rows = shape[0], in = shape[1], out = shape[2];
            String what = rows + "x" + in + "->" + out;
            Fp8 w8 = Fp8.random(out, in, in);
            short[] w16 = bf16(out * in, in, out);
            float[] x = TestData.gaussian(rows, rows * in);
            for (int form = 0; form < 2; form++) {
                float[] wf = form == 0 ? w8.dequantised : decoded(w16);
                float[] ref = new float[rows * out], fast = new float[rows * out], f32 = new float[rows * out];
                if (rows == 1) {
                    if (form == 0) {
                        Projections.matVecFp8(x, w8.codes, w8.scales, POW2, ref, in, out);
                        WeightKernels.matVecFp8(x, w8.codes, w8.scales, POW2, fast, in, out);
                    } else {
                        Projections.matVecBf16(x, w16, POW2, ref, in, out);
                        WeightKernels.matVecBf16(x, w16, POW2, fast, in, out);
                    }
                    FastProjections.matVec(x, wf, f32, in, out);
                } else {
                    if (form == 0) {
                        Projections.matMulFp8(x, w8.codes, w8.scales, POW2, ref, rows, in, out);
                        WeightKernels.matMulFp8(x, w8.codes, w8.scales, POW2, fast, rows, in, out);
                    } else {
                        Projections.matMulBf16(x, w16, POW2, ref, rows, in, out);
                        WeightKernels.matMulBf16(x, w16, POW2, fast, rows, in, out);
                    }
                    FastProjections.matMul(x, wf, f32, rows, in, out);
                }
                String f = (form == 0 ? "fp8 " : "bf16 ") + what;
                assertClose(ref, fast, 1e-5, f + " fast vs reference");
                assertClose(f32, fast, 1e-6, f + " = java-fast f32 on the dequantised weights");
            }
        }
    }

    @Test
    void absorptionAndDequantisationMatchTheReference() {
        absorption(2, 48, 150);
        absorption(1, 46, 150);     // a decode step (rows of W^UV four at a time) with a remainder
        // d_c a multiple of 8 vectors: below HEAD_DECODE_ROWS token rows absorb_q with bf16 weights keeps q_lat
        // in registers and decodes W^UK on the fly; from it on both kernels decode a head once and run the f32 ones
        absorption(1, 48, 256);
        absorption(WeightKernels.HEAD_DECODE_ROWS - 1, 40, 256);
        absorption(WeightKernels.HEAD_DECODE_ROWS, 40, 256);
    }

    private static void absorption(int rows, int dv, int dc) {
        int heads = 3, dn = 40, dr = 8;
        Fp8 w8 = Fp8.random(heads * (dn + dv), dc, 3);
        short[] w16 = bf16(heads * (dn + dv) * dc, dc, 4);
        float[] q = TestData.gaussian(5, rows * heads * (dn + dr)), oLat = TestData.gaussian(6, rows * heads * dc);
        for (int form = 0; form < 2; form++) {
            float[] wf = form == 0 ? w8.dequantised : decoded(w16);
            float[] qr = new float[rows * heads * dc], qf = qr.clone(), q32 = qr.clone();
            float[] or = new float[rows * heads * dv], of = or.clone(), o32 = or.clone();
            float[] dr32 = new float[wf.length], df = new float[wf.length];
            if (form == 0) {
                Absorb.absorbQueryFp8(q, w8.codes, w8.scales, POW2, qr, rows, heads, dn, dr, dv, dc);
                WeightKernels.absorbQueryFp8(q, w8.codes, w8.scales, POW2, qf, rows, heads, dn, dr, dv, dc);
                Absorb.unabsorbValueFp8(oLat, w8.codes, w8.scales, POW2, or, rows, heads, dn, dv, dc);
                WeightKernels.unabsorbValueFp8(oLat, w8.codes, w8.scales, POW2, of, rows, heads, dn, dv, dc);
                Dequantize.fromFp8(w8.codes, w8.scales, POW2, dr32, heads * (dn + dv), dc);
                WeightKernels.fromFp8(w8.codes, w8.scales, POW2, df, heads * (dn + dv), dc);
            } else {
                Absorb.absorbQueryBf16(q, w16, POW2, qr, rows, heads, dn, dr, dv, dc);
                WeightKernels.absorbQueryBf16(q, w16, POW2, qf, rows, heads, dn, dr, dv, dc);
                Absorb.unabsorbValueBf16(oLat, w16, POW2, or, rows, heads, dn, dv, dc);
                WeightKernels.unabsorbValueBf16(oLat, w16, POW2, of, rows, heads, dn, dv, dc);
                Dequantize.fromBf16(w16, POW2, dr32, heads * (dn + dv), dc);
                WeightKernels.fromBf16(w16, POW2, df, heads * (dn + dv), dc);
            }
            FastAbsorb.absorbQuery(q, wf, q32, rows, heads, dn, dr, dv, dc);
            FastAbsorb.unabsorbValue(oLat, wf, o32, rows, heads, dn, dv, dc);
            String f = (form == 0 ? "fp8" : "bf16") + " rows " + rows;
            assertClose(qr, qf, 1e-5, f + " absorbQuery");
            assertClose(or, of, 1e-5, f + " unabsorbValue");
            assertClose(q32, qf, 1e-6, f + " absorbQuery = java-fast f32 on the dequantised weights");
            assertClose(o32, of, 1e-6, f + " unabsorbValue = java-fast f32 on the dequantised weights");
            assertArrayEquals(wf, dr32, f + " Dequantize");
            assertArrayEquals(wf, df, f + " fast Dequantize");
        }
    }
}
