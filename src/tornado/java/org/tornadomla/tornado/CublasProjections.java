package org.tornadomla.tornado;

import org.tornadomla.MlaException;
import org.tornadomla.graph.KernelRef;
import org.tornadomla.kernels.Absorb;
import org.tornadomla.kernels.Bf16;
import org.tornadomla.kernels.Fp8;
import org.tornadomla.kernels.Projections;
import uk.ac.manchester.tornado.api.annotations.Parallel;
import uk.ac.manchester.tornado.api.common.LibraryTaskDescriptor;
import uk.ac.manchester.tornado.api.types.arrays.FloatArray;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Map;

/**
 * On TornadoVM's CUDA backend, the weight products of many token rows (a prefill, a batch past
 * {@link GpuProjections#MAX_ROWS}) as cuBLAS SGEMM library tasks on the graph's own stream. Those rows are where
 * the plain kernels are left (one thread per output, uncoalesced weight reads) and where a product is
 * compute-bound, so a tuned GEMM pays; decode batches keep the KernelContext kernels, which read the compact
 * weights.
 * <p>
 * Each replaced task becomes three: {@link #toNative} copies the activations into a {@link FloatArray} (cuBLAS's
 * tasks take TornadoVM's native arrays, the graphs' buffers are {@code float[]}), the SGEMM, and
 * {@link #fromNative} copies the product back into the graph's own buffer. The weight is held on the device as
 * an f32 twin, dequantised once on the host ({@link #weightTwin}): bf16 and block-scaled FP8 numbers are exact in
 * f32, so the products are those of the plain kernels up to the order of the sums. cuBLASLt's FP8 GEMM takes one
 * scale per tensor, not DeepSeek's scale per 128 × 128 block, and cuBLAS's bf16 GEMM writes bf16: neither gives
 * the plain kernels' numbers, so neither is used.
 * <p>
 * cuBLAS is column-major. Row-major [rows, n] is column-major n × rows, so every product here is written as
 * Cᵀ = op(A)·Bᵀ with the weight as A: see {@link Gemm} for each family's arguments, checked on the JVM against
 * cuBLAS's definition ({@code CublasProjectionsTest}).
 */
public final class CublasProjections {
    private CublasProjections() {
    }

    /** The system property that turns these tasks off ({@code -Dtornadomla.cublas=false}). */
    public static final String SWITCH = "tornadomla.cublas";

    /** TornadoVM's cuBLAS task factories (module tornado.cublas, in the CUDA SDK only). */
    static final String CUBLAS = "uk.ac.manchester.tornado.cublas.CuBlas";

    /** cublasOperation_t. */
    static final int OP_N = 0, OP_T = 1;

    /**
     * The products replaced, by the plain kernel's family, with the names of the plain kernels' parameters that hold
     * the weight, the activations the product reads (B) and the buffer it writes (C).
     */
    enum Family {
        /** y = x·Wᵀ ({@link Projections}{@code .matMul…}): one SGEMM. */
        LINEAR("w", "x", "y"),
        /** q_lat[r, h] = q_nope[r, h]·W^UK_h ({@link Absorb}{@code .absorbQuery…}): an SGEMM per head, strided. */
        ABSORB_Q("wkvB", "q", "qLat"),
        /** o[r, h] = o_lat[r, h]·W^UV_hᵀ ({@link Absorb}{@code .unabsorbValue…}): an SGEMM per head, strided. */
        UNABSORB_V("wkvB", "oLat", "o");

        final String weight, input, output;

        Family(String weight, String input, String output) {
            this.weight = weight;
            this.input = input;
            this.output = output;
        }
    }

    /** Weight forms, as the plain kernels take them. */
    static final int F32 = 0, BF16 = 1, FP8 = 2;

    /** A replaced plain kernel: its family and the form of its weight. */
    private record Kind(Family family, int form) {
    }

    private static final Map<Method, Kind> KERNELS = Map.of(
            KernelRef.of(Projections::matMul).method(), new Kind(Family.LINEAR, F32),
            KernelRef.of(Projections::matMulBf16).method(), new Kind(Family.LINEAR, BF16),
            KernelRef.of(Projections::matMulFp8).method(), new Kind(Family.LINEAR, FP8),
            KernelRef.of(Absorb::absorbQuery).method(), new Kind(Family.ABSORB_Q, F32),
            KernelRef.of(Absorb::absorbQueryBf16).method(), new Kind(Family.ABSORB_Q, BF16),
            KernelRef.of(Absorb::absorbQueryFp8).method(), new Kind(Family.ABSORB_Q, FP8),
            KernelRef.of(Absorb::unabsorbValue).method(), new Kind(Family.UNABSORB_V, F32),
            KernelRef.of(Absorb::unabsorbValueBf16).method(), new Kind(Family.UNABSORB_V, BF16),
            KernelRef.of(Absorb::unabsorbValueFp8).method(), new Kind(Family.UNABSORB_V, FP8));

    /**
     * {@value #SWITCH}: true (the default) or false, which keeps the KernelContext and plain kernels for every row count:
     * for a GPU where these tasks fail {@code mla check}, and for timing them. Anything else is refused.
     */
    static boolean allowed() {
        return TornadoExecutor.switchOn(SWITCH);
    }

    /** Whether TornadoVM's cuBLAS tasks are on the module path (the CUDA SDK's argfile adds tornado.cublas). */
    static boolean available() {
        try {
            Class.forName(CUBLAS);
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    /** The family of a plain kernel this class replaces, or null. */
    static Family family(Method plain) {
        Kind k = KERNELS.get(plain);
        return k == null ? null : k.family();
    }

    /** The weight form ({@link #F32}, {@link #BF16}, {@link #FP8}) of a plain kernel this class replaces. */
    static int weightForm(Method plain) {
        return KERNELS.get(plain).form();
    }

    /** Whether a task of {@code rows} token rows is replaced: past the rows the KernelContext kernels take. */
    static boolean replaces(Method plain, int rows) {
        return KERNELS.containsKey(plain) && rows > GpuProjections.MAX_ROWS;
    }

    // ------------------------------------------------------------------ the cuBLAS arguments

    /**
     * One column-major (strided-batched) SGEMM: for b below {@code batch},
     * C[b] = op(A[b])·op(B[b]), op(A) m × k, op(B) k × n, C m × n with leading dimension ldc; X[b] starts
     * {@code b · strideX} numbers into X. Batch 1 is a plain {@code cublasSgemm}.
     */
    record Gemm(int transa, int transb, int m, int n, int k, int lda, int ldb, int ldc,
                long strideA, long strideB, long strideC, int batch) {

        /**
         * y[rows, out] = x[rows, in]·Wᵀ, W [out, in] row-major: Wᵀ's column-major form is W itself
         * (in × out, lda = in), so yᵀ (out × rows) = op_T(W)·xᵀ, with xᵀ column-major in × rows (ldb = in).
         */
        static Gemm linear(int rows, int in, int out) {
            return new Gemm(OP_T, OP_N, out, rows, in, in, in, out, 0, 0, 0, 1);
        }

        /**
         * q_lat[r, h, c] = Σ_d W^UK_h[d, c]·q[r, h, d], with the twin W^UK [H, d_n, d_c]: head h's block is d_c × d_n
         * column-major (lda = d_c), q_nope's d_n numbers of (r, h) sit H·(d_n + d_r) apart from row to row.
         */
        static Gemm absorbQuery(int rows, int heads, int dn, int dr, int dc) {
            return new Gemm(OP_N, OP_N, dc, rows, dn, dc, heads * (dn + dr), heads * dc,
                    (long) dn * dc, dn + dr, dc, heads);
        }

        /**
         * o[r, h, v] = Σ_c W^UV_h[v, c]·o_lat[r, h, c], with the twin W^UV [H, d_v, d_c]: head h's block read
         * column-major is d_c × d_v (lda = d_c), so op_T of it is W^UV_h.
         */
        static Gemm unabsorbValue(int rows, int heads, int dv, int dc) {
            return new Gemm(OP_T, OP_N, dv, rows, dc, dc, heads * dc, heads * dv,
                    (long) dv * dc, dc, dv, heads);
        }
    }

    /** The SGEMM of task family {@code f} from the plain task's arguments. */
    static Gemm gemm(Family f, Substitution.Args a) {
        return switch (f) {
            case LINEAR -> Gemm.linear(a.i("rows"), a.i("in"), a.i("out"));
            case ABSORB_Q -> Gemm.absorbQuery(a.i("rows"), a.i("heads"), a.i("dn"), a.i("dr"), a.i("dc"));
            case UNABSORB_V -> Gemm.unabsorbValue(a.i("rows"), a.i("heads"), a.i("dv"), a.i("dc"));
        };
    }

    /**
     * TornadoVM's task for {@code g} over device arrays A (the weight twin), B (the activations) and C (the product):
     * {@code CuBlas.cublasSgemm} or {@code cublasSgemmStridedBatched}, found by reflection so that the backend
     * compiles against tornado-api alone, with α = 1 and β = 0.
     */
    static LibraryTaskDescriptor descriptor(Gemm g, FloatArray a, FloatArray b, FloatArray c) {
        try {
            Method m = factory(g);
            Object d = g.batch() == 1
                    ? m.invoke(null, g.transa(), g.transb(), g.m(), g.n(), g.k(), 1f, a, g.lda(), b, g.ldb(), 0f, c, g.ldc())
                    : m.invoke(null, g.transa(), g.transb(), g.m(), g.n(), g.k(), 1f, a, g.lda(), g.strideA(), b, g.ldb(), g.strideB(),
                    0f, c, g.ldc(), g.strideC(), g.batch());
            return (LibraryTaskDescriptor) d;
        } catch (InvocationTargetException e) {
            throw new MlaException("TornadoVM's cuBLAS task refused an SGEMM " + g + ": " + e.getCause(), e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new MlaException("TornadoVM's cuBLAS tasks (" + CUBLAS + ") are not usable here: " + e, e);
        }
    }

    /** The factory method of {@code g}'s cuBLAS call (for the task and for {@code kernelOf}). */
    static Method factory(Gemm g) throws ReflectiveOperationException {
        Class<?> cu = Class.forName(CUBLAS);
        Class<?> i = int.class, f = float.class, l = long.class, arr = FloatArray.class;
        return g.batch() == 1
                ? cu.getMethod("cublasSgemm", i, i, i, i, i, f, arr, i, arr, i, f, arr, i)
                : cu.getMethod("cublasSgemmStridedBatched", i, i, i, i, i, f, arr, i, l, arr, i, l, f, arr, i, l, i);
    }

    // ------------------------------------------------------------------ the weight twins

    /**
     * The f32 twin of the weight a task of family {@code f} reads, as cuBLAS reads it: the whole W [out, in] for
     * {@link Family#LINEAR}; W^UK [H, d_n, d_c] or W^UV [H, d_v, d_c], cut out of kv_b_proj [H·(d_n+d_v), d_c], for the
     * other two. bf16 and FP8 numbers are decoded as the plain kernels decode them.
     */
    static float[] weightTwin(Family f, int form, Substitution.Args a) {
        Object w = a.get(f.weight);
        float[] scales = form == FP8 ? (float[]) a.get("scales") : null;
        if (f == Family.LINEAR) {
            int in = a.i("in"), out = a.i("out");
            float[] t = new float[Math.multiplyExact(in, out)];
            for (int o = 0; o < out; o++) decodeRow(w, scales, form, o, in, t, o * in);
            return t;
        }
        int heads = a.i("heads"), dn = a.i("dn"), dv = a.i("dv"), dc = a.i("dc");
        int part = f == Family.ABSORB_Q ? dn : dv;
        int skip = f == Family.ABSORB_Q ? 0 : dn;
        float[] t = new float[Math.multiplyExact(heads * part, dc)];
        for (int h = 0; h < heads; h++) {
            for (int d = 0; d < part; d++) decodeRow(w, scales, form, h * (dn + dv) + skip + d, dc, t, (h * part + d) * dc);
        }
        return t;
    }

    /** Row {@code row} of a [·, cols] weight in form {@code form}, decoded into {@code dst} at {@code off}. */
    private static void decodeRow(Object w, float[] scales, int form, int row, int cols, float[] dst, int off) {
        float[] pow2 = POW2;
        for (int c = 0; c < cols; c++) {
            dst[off + c] = switch (form) {
                case F32 -> ((float[]) w)[row * cols + c];
                case BF16 -> Bf16.decode(((short[]) w)[row * cols + c], pow2);
                default -> Fp8.weight((byte[]) w, scales, pow2, row, c, cols);
            };
        }
    }

    private static final float[] POW2 = Bf16.pow2();

    /** Numbers of the activations B that the product reads: [rows, in], [rows, H, d_n+d_r] or [rows, H, d_c]. */
    static int inputLength(Family f, Substitution.Args a) {
        return switch (f) {
            case LINEAR -> Math.multiplyExact(a.i("rows"), a.i("in"));
            case ABSORB_Q -> Math.multiplyExact(a.i("rows") * a.i("heads"), a.i("dn") + a.i("dr"));
            case UNABSORB_V -> Math.multiplyExact(a.i("rows") * a.i("heads"), a.i("dc"));
        };
    }

    /** Numbers of the product C: [rows, out], [rows, H, d_c] or [rows, H, d_v]. */
    static int outputLength(Family f, Substitution.Args a) {
        return switch (f) {
            case LINEAR -> Math.multiplyExact(a.i("rows"), a.i("out"));
            case ABSORB_Q -> Math.multiplyExact(a.i("rows") * a.i("heads"), a.i("dc"));
            case UNABSORB_V -> Math.multiplyExact(a.i("rows") * a.i("heads"), a.i("dv"));
        };
    }

    // ------------------------------------------------------------------ kernels: the copies either side

    /** dst[i] = src[i]: the graph's activations into the native array cuBLAS reads. */
    public static void toNative(float[] src, FloatArray dst, int n) {
        for (@Parallel int i = 0; i < n; i++) {
            dst.set(i, src[i]);
        }
    }

    /** dst[i] = src[i]: cuBLAS's product into the graph's own buffer. */
    public static void fromNative(FloatArray src, float[] dst, int n) {
        for (@Parallel int i = 0; i < n; i++) {
            dst[i] = src.get(i);
        }
    }
}
