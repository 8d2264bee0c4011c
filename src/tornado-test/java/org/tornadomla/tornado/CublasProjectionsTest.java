package org.tornadomla.tornado;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.tornadomla.MlaException;
import org.tornadomla.graph.KernelRef;
import org.tornadomla.kernels.Absorb;
import org.tornadomla.kernels.Bf16;
import org.tornadomla.kernels.Fp8;
import org.tornadomla.kernels.Projections;
import uk.ac.manchester.tornado.api.types.arrays.FloatArray;

import java.lang.reflect.Method;
import java.lang.reflect.Parameter;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The cuBLAS tasks' arguments, on the JVM: each family's {@link CublasProjections.Gemm} is run through a column-major
 * (strided-batched) SGEMM written from cuBLAS's definition, C[b] = op(A[b])·op(B[b]) with X[b] = X + b·strideX and
 * element (i, j) of a column-major matrix at i + j·ld, over the weight's f32 twin, and compared with the plain kernel
 * it replaces, run on the JVM, for f32, bf16 and block-scaled FP8 weights. Only a GPU can run cuBLAS itself.
 */
class CublasProjectionsTest {
    private static final float[] POW2 = Bf16.pow2();
    /** Relative to the largest output: f32 sums of up to 200 products in another order. */
    private static final double TOL = 1e-5;

    /** cuBLAS's SGEMM (α = 1, β = 0), in double precision, from its documented column-major definition. */
    private static double[] sgemm(CublasProjections.Gemm g, float[] a, float[] b, int cLength) {
        double[] c = new double[cLength];
        for (int batch = 0; batch < g.batch(); batch++) {
            long a0 = batch * g.strideA(), b0 = batch * g.strideB(), c0 = batch * g.strideC();
            for (int j = 0; j < g.n(); j++) {
                for (int i = 0; i < g.m(); i++) {
                    double s = 0;
                    for (int p = 0; p < g.k(); p++) {
                        double av = g.transa() == CublasProjections.OP_N ? a[(int) (a0 + i + (long) p * g.lda())] : a[(int) (a0 + p + (long) i * g.lda())];
                        double bv = g.transb() == CublasProjections.OP_N ? b[(int) (b0 + p + (long) j * g.ldb())] : b[(int) (b0 + j + (long) p * g.ldb())];
                        s += av * bv;
                    }
                    c[(int) (c0 + i + (long) j * g.ldc())] = s;
                }
            }
        }
        return c;
    }

    /** A plain kernel's arguments by parameter name, as the executor reads them. */
    private static Substitution.Args args(Method kernel, Object... values) {
        Parameter[] pp = kernel.getParameters();
        assertEquals(pp.length, values.length, kernel.getName() + "'s arguments");
        Map<String, Object> byName = new LinkedHashMap<>();
        for (int i = 0; i < pp.length; i++) byName.put(pp[i].getName(), values[i]);
        return new Substitution.Args(byName);
    }

    private static float[] gaussian(Random rnd, int n) {
        float[] x = new float[n];
        for (int i = 0; i < n; i++) x[i] = (float) rnd.nextGaussian();
        return x;
    }

    /** A weight [rows, cols] in form {@code form}: f32, bf16 bits or e4m3 codes (with its scales, else null). */
    private record Weight(Object w, float[] scales) {
        static Weight random(Random rnd, int form, int rows, int cols) {
            float[] f = gaussian(rnd, rows * cols);
            if (form == CublasProjections.F32) return new Weight(f, null);
            if (form == CublasProjections.BF16) {
                short[] s = new short[f.length];
                for (int i = 0; i < f.length; i++) s[i] = Bf16.encode(f[i], POW2);
                return new Weight(s, null);
            }
            byte[] codes = new byte[f.length];
            for (int i = 0; i < f.length; i++) codes[i] = Fp8.encode(f[i] * 100, POW2);
            float[] scales = new float[Fp8.weightBlocks(rows) * Fp8.weightBlocks(cols)];
            for (int i = 0; i < scales.length; i++) scales[i] = (float) Math.scalb(1.0, -6 - (i % 3));   // the blocks' scales differ
            return new Weight(codes, scales);
        }
    }

    private static void assertClose(double[] expected, float[] actual, int n, String what) {
        double max = 0;
        for (int i = 0; i < n; i++) max = Math.max(max, Math.abs(expected[i]));
        assertTrue(max > 0, what + ": an all-zero reference proves nothing");
        for (int i = 0; i < n; i++) {
            assertEquals(expected[i], actual[i], TOL * max, what + " at " + i);
        }
    }

    @ParameterizedTest(name = "weights form {0}")
    @ValueSource(ints = {CublasProjections.F32, CublasProjections.BF16, CublasProjections.FP8})
    void linearIsTheGemmOfTheTwin(int form) {
        int rows = 130, in = 200, out = 150;                 // two FP8 blocks each way, the second partial
        Random rnd = new Random(11 + form);
        float[] x = gaussian(rnd, rows * in);
        Weight w = Weight.random(rnd, form, out, in);
        float[] y = new float[rows * out];
        Method kernel;
        Substitution.Args a;
        if (form == CublasProjections.F32) {
            kernel = KernelRef.of(Projections::matMul).method();
            a = args(kernel, x, w.w, y, rows, in, out);
            Projections.matMul(x, (float[]) w.w, y, rows, in, out);
        } else if (form == CublasProjections.BF16) {
            kernel = KernelRef.of(Projections::matMulBf16).method();
            a = args(kernel, x, w.w, POW2, y, rows, in, out);
            Projections.matMulBf16(x, (short[]) w.w, POW2, y, rows, in, out);
        } else {
            kernel = KernelRef.of(Projections::matMulFp8).method();
            a = args(kernel, x, w.w, w.scales, POW2, y, rows, in, out);
            Projections.matMulFp8(x, (byte[]) w.w, w.scales, POW2, y, rows, in, out);
        }
        assertEquals(CublasProjections.Family.LINEAR, CublasProjections.family(kernel));
        assertEquals(form, CublasProjections.weightForm(kernel));
        checkGemm(kernel, a, y, "linear");
    }

    @ParameterizedTest(name = "weights form {0}")
    @ValueSource(ints = {CublasProjections.F32, CublasProjections.BF16, CublasProjections.FP8})
    void absorbQueryIsTheStridedGemmOfWuk(int form) {
        int rows = 131, heads = 3, dn = 16, dr = 8, dv = 12, dc = 160;
        Random rnd = new Random(21 + form);
        float[] q = gaussian(rnd, rows * heads * (dn + dr));
        Weight w = Weight.random(rnd, form, heads * (dn + dv), dc);
        float[] qLat = new float[rows * heads * dc];
        Method kernel;
        Substitution.Args a;
        if (form == CublasProjections.F32) {
            kernel = KernelRef.of(Absorb::absorbQuery).method();
            a = args(kernel, q, w.w, qLat, rows, heads, dn, dr, dv, dc);
            Absorb.absorbQuery(q, (float[]) w.w, qLat, rows, heads, dn, dr, dv, dc);
        } else if (form == CublasProjections.BF16) {
            kernel = KernelRef.of(Absorb::absorbQueryBf16).method();
            a = args(kernel, q, w.w, POW2, qLat, rows, heads, dn, dr, dv, dc);
            Absorb.absorbQueryBf16(q, (short[]) w.w, POW2, qLat, rows, heads, dn, dr, dv, dc);
        } else {
            kernel = KernelRef.of(Absorb::absorbQueryFp8).method();
            a = args(kernel, q, w.w, w.scales, POW2, qLat, rows, heads, dn, dr, dv, dc);
            Absorb.absorbQueryFp8(q, (byte[]) w.w, w.scales, POW2, qLat, rows, heads, dn, dr, dv, dc);
        }
        assertEquals(CublasProjections.Family.ABSORB_Q, CublasProjections.family(kernel));
        checkGemm(kernel, a, qLat, "absorb_q");
    }

    @ParameterizedTest(name = "weights form {0}")
    @ValueSource(ints = {CublasProjections.F32, CublasProjections.BF16, CublasProjections.FP8})
    void unabsorbValueIsTheStridedGemmOfWuv(int form) {
        int rows = 129, heads = 3, dn = 16, dv = 12, dc = 160;
        Random rnd = new Random(31 + form);
        float[] oLat = gaussian(rnd, rows * heads * dc);
        Weight w = Weight.random(rnd, form, heads * (dn + dv), dc);
        float[] o = new float[rows * heads * dv];
        Method kernel;
        Substitution.Args a;
        if (form == CublasProjections.F32) {
            kernel = KernelRef.of(Absorb::unabsorbValue).method();
            a = args(kernel, oLat, w.w, o, rows, heads, dn, dv, dc);
            Absorb.unabsorbValue(oLat, (float[]) w.w, o, rows, heads, dn, dv, dc);
        } else if (form == CublasProjections.BF16) {
            kernel = KernelRef.of(Absorb::unabsorbValueBf16).method();
            a = args(kernel, oLat, w.w, POW2, o, rows, heads, dn, dv, dc);
            Absorb.unabsorbValueBf16(oLat, (short[]) w.w, POW2, o, rows, heads, dn, dv, dc);
        } else {
            kernel = KernelRef.of(Absorb::unabsorbValueFp8).method();
            a = args(kernel, oLat, w.w, w.scales, POW2, o, rows, heads, dn, dv, dc);
            Absorb.unabsorbValueFp8(oLat, (byte[]) w.w, w.scales, POW2, o, rows, heads, dn, dv, dc);
        }
        assertEquals(CublasProjections.Family.UNABSORB_V, CublasProjections.family(kernel));
        checkGemm(kernel, a, o, "unabsorb_v");
    }

    /**
     * The plain kernel's output {@code plain} against cuBLAS's definition run on the executor's own arguments: the
     * twin, the activations as {@link CublasProjections#toNative} copies them, the lengths of B and C.
     */
    private static void checkGemm(Method kernel, Substitution.Args a, float[] plain, String what) {
        CublasProjections.Family f = CublasProjections.family(kernel);
        float[] twin = CublasProjections.weightTwin(f, CublasProjections.weightForm(kernel), a);
        float[] b = (float[]) a.get(f.input);
        int inLen = CublasProjections.inputLength(f, a), outLen = CublasProjections.outputLength(f, a);
        assertEquals(b.length, inLen, what + ": B's length");
        assertEquals(plain.length, outLen, what + ": C's length");
        assertTrue(a.get(f.output) == plain, what + ": the product goes to the plain kernel's output");
        FloatArray nb = new FloatArray(inLen);
        CublasProjections.toNative(b, nb, inLen);
        double[] c = sgemm(CublasProjections.gemm(f, a), twin, nb.toHeapArray(), outLen);
        assertClose(c, plain, outLen, what);
    }

    @Test
    void theCopiesMoveEveryNumber() {
        float[] src = gaussian(new Random(5), 1000);
        FloatArray n = new FloatArray(src.length);
        CublasProjections.toNative(src, n, src.length);
        float[] back = new float[src.length];
        CublasProjections.fromNative(n, back, src.length);
        for (int i = 0; i < src.length; i++) assertEquals(Float.floatToRawIntBits(src[i]), Float.floatToRawIntBits(back[i]), "at " + i);
    }

    @Test
    void onlyProductsOfMoreRowsThanTheKernelContextKernelsTakeAreReplaced() {
        Method matMul = KernelRef.of(Projections::matMul).method();
        assertFalse(CublasProjections.replaces(matMul, GpuProjections.MAX_ROWS));
        assertTrue(CublasProjections.replaces(matMul, GpuProjections.MAX_ROWS + 1));
        Method matVec = KernelRef.of(Projections::matVec).method();
        assertNull(CublasProjections.family(matVec));
        assertFalse(CublasProjections.replaces(matVec, 1000));
    }

    @Test
    void theSwitchTakesTrueOrFalseOnly() {
        String before = System.getProperty(CublasProjections.SWITCH);
        try {
            System.setProperty(CublasProjections.SWITCH, "False");
            assertFalse(CublasProjections.allowed());
            System.setProperty(CublasProjections.SWITCH, "true");
            assertTrue(CublasProjections.allowed());
            System.setProperty(CublasProjections.SWITCH, "no");
            MlaException e = assertThrows(MlaException.class, CublasProjections::allowed);
            assertTrue(e.getMessage().contains("must be true or false, found 'no'"), e.getMessage());
        } finally {
            if (before == null) System.clearProperty(CublasProjections.SWITCH);
            else System.setProperty(CublasProjections.SWITCH, before);
        }
    }
}
