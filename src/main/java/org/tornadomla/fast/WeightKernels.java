package org.tornadomla.fast;

import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;
import org.tornadomla.kernels.Bf16;
import org.tornadomla.kernels.Fp8;

import java.util.stream.IntStream;

/**
 * java-fast versions of the kernels over bf16 and block-scaled FP8 weights ({@code Projections.…Bf16/Fp8},
 * {@code Absorb.…Bf16/Fp8}, {@code Dequantize}): same parameters and results as the reference kernels,
 * parallel over output rows (or heads) and vectorised along a weight row.
 *
 * <p>A weight vector is decoded in registers by its bits, with no table: bf16 is the top half of a float
 * (widen, shift left 16); an e4m3 code with magnitude bits {@code mag = e << 3 | m} is, when e &gt; 0, the
 * float with bits {@code (mag << 20) + (120 << 23)} (exponent rebiased from 7 to 127, mantissa moved to the
 * top) and, when e = 0, m·2^−9; the sign is the byte's sign bit, which widening has copied to bit 31. An
 * FP8 weight is that value times its block's scale, the same f32 product the reference kernels and a
 * dequantised copy compute; the products are then summed in the order of the f32 java-fast kernels (one
 * vector accumulator, fused multiply-adds along the row, the tail after the lane sum), so these kernels
 * give what the f32 ones give on the dequantised weights, up to the order of the sum across lanes, which
 * the Vector API leaves open (its intrinsic and its Java fallback differ in the last bit). At batch 1 the projections stream every weight
 * once: 1 byte (fp8) or 2 (bf16) per multiply-add instead of 4.
 */
public final class WeightKernels {
    private WeightKernels() {
    }

    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    private static final int L = F.length();
    private static final VectorSpecies<Integer> INTS = VectorSpecies.of(int.class, F.vectorShape());
    /** L e4m3 codes and L bf16 numbers as vectors. */
    private static final VectorSpecies<Byte> BYTES = VectorSpecies.of(byte.class, VectorShape.forBitSize(F.vectorBitSize() / 4));
    private static final VectorSpecies<Short> SHORTS = VectorSpecies.of(short.class, VectorShape.forBitSize(F.vectorBitSize() / 2));
    private static final int B = Fp8.WEIGHT_BLOCK;

    /** Every e4m3 byte decoded as the reference kernels decode it (for the scalar tails). */
    private static final float[] E4M3 = new float[256];

    static {
        float[] pow2 = Bf16.pow2();
        for (int b = 0; b < 256; b++) E4M3[b] = Fp8.decode((byte) b, pow2);
        if (B % L != 0) throw new IllegalStateException("vectors of " + L + " floats straddle FP8 blocks of " + B);
    }

    /** Output rows per parallel task of a projection. */
    private static final int ROWS_PER_TASK = 16;

    private static final ThreadLocal<float[]> ROW_BUF = ThreadLocal.withInitial(() -> new float[0]);

    private static float[] rowBuffer(int n) {
        float[] b = ROW_BUF.get();
        if (b.length < n) {
            b = new float[n];
            ROW_BUF.set(b);
        }
        return b;
    }

    // ------------------------------------------------------------------ decoding

    /** The L e4m3 codes at w[off …] as floats (exact). */
    private static FloatVector e4m3(byte[] w, int off) {
        IntVector v = (IntVector) ByteVector.fromArray(BYTES, w, off).convertShape(VectorOperators.B2I, INTS, 0);
        IntVector mag = v.and(0x7F);
        FloatVector normal = mag.lanewise(VectorOperators.LSHL, 20).add(120 << 23).reinterpretAsFloats();
        FloatVector sub = ((FloatVector) mag.convert(VectorOperators.I2F, 0)).mul(1f / 512);
        FloatVector val = normal.blend(sub, mag.lt(8).cast(F));
        return val.reinterpretAsInts().or(v.and(0x80000000)).reinterpretAsFloats();
    }

    /** The L bf16 bit patterns at w[off …] as floats (exact). */
    private static FloatVector bf16(short[] w, int off) {
        return ((IntVector) ShortVector.fromArray(SHORTS, w, off).convertShape(VectorOperators.S2I, INTS, 0))
                .lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats();
    }

    private static float bf16(short bits) {
        return Float.intBitsToFloat((bits & 0xFFFF) << 16);
    }

    /** Row {@code row} of a block-scaled FP8 matrix with {@code cols} columns, dequantised into buf[0 … cols). */
    private static void decodeRowFp8(byte[] w, float[] scales, int row, int cols, float[] buf) {
        int wo = row * cols, so = (row / B) * Fp8.weightBlocks(cols), i = 0;
        for (; i <= cols - L; i += L) e4m3(w, wo + i).mul(scales[so + i / B]).intoArray(buf, i);
        for (; i < cols; i++) buf[i] = E4M3[w[wo + i] & 0xFF] * scales[so + i / B];
    }

    private static void decodeRowBf16(short[] w, int row, int cols, float[] buf) {
        int wo = row * cols, i = 0;
        for (; i <= cols - L; i += L) bf16(w, wo + i).intoArray(buf, i);
        for (; i < cols; i++) buf[i] = bf16(w[wo + i]);
    }

    // ------------------------------------------------------------------ sums (the order of the f32 java-fast kernels)

    private static float dot(float[] a, int ao, float[] b, int bo, int n) {
        FloatVector acc = FloatVector.zero(F);
        int i = 0;
        for (; i <= n - L; i += L) acc = FloatVector.fromArray(F, a, ao + i).fma(FloatVector.fromArray(F, b, bo + i), acc);
        float s = acc.reduceLanes(VectorOperators.ADD);
        for (; i < n; i++) s += a[ao + i] * b[bo + i];
        return s;
    }

    /** y[yo …] += alpha·x[xo …], n numbers. */
    private static void axpy(float alpha, float[] x, int xo, float[] y, int yo, int n) {
        FloatVector va = FloatVector.broadcast(F, alpha);
        int i = 0;
        for (; i <= n - L; i += L) FloatVector.fromArray(F, x, xo + i).fma(va, FloatVector.fromArray(F, y, yo + i)).intoArray(y, yo + i);
        for (; i < n; i++) y[yo + i] += alpha * x[xo + i];
    }

    /** Σ_i W[row, i]·x[xo + i] over a block-scaled FP8 row, decoded on the fly. */
    private static float dotFp8(byte[] w, float[] scales, int row, int cols, float[] x, int xo) {
        int wo = row * cols, so = (row / B) * Fp8.weightBlocks(cols);
        FloatVector acc = FloatVector.zero(F);
        int i = 0;
        for (int b0 = 0; b0 < cols; b0 += B) {
            int end = Math.min(cols, b0 + B);
            FloatVector s = FloatVector.broadcast(F, scales[so + b0 / B]);
            for (; i <= end - L; i += L) acc = e4m3(w, wo + i).mul(s).fma(FloatVector.fromArray(F, x, xo + i), acc);
        }
        float r = acc.reduceLanes(VectorOperators.ADD);
        for (; i < cols; i++) r += E4M3[w[wo + i] & 0xFF] * scales[so + i / B] * x[xo + i];
        return r;
    }

    /** Σ_i W[row, i]·x[xo + i] over a bf16 row, decoded on the fly. */
    private static float dotBf16(short[] w, int row, int cols, float[] x, int xo) {
        int wo = row * cols;
        FloatVector acc = FloatVector.zero(F);
        int i = 0;
        for (; i <= cols - L; i += L) acc = bf16(w, wo + i).fma(FloatVector.fromArray(F, x, xo + i), acc);
        float r = acc.reduceLanes(VectorOperators.ADD);
        for (; i < cols; i++) r += bf16(w[wo + i]) * x[xo + i];
        return r;
    }

    // ------------------------------------------------------------------ projections

    public static void matVecBf16(float[] x, short[] w, float[] pow2, float[] y, int in, int out) {
        IntStream.range(0, (out + ROWS_PER_TASK - 1) / ROWS_PER_TASK).parallel().forEach(blk -> {
            for (int o = blk * ROWS_PER_TASK; o < Math.min(out, (blk + 1) * ROWS_PER_TASK); o++) y[o] = dotBf16(w, o, in, x, 0);
        });
    }

    /** Each weight row is decoded once and applied to every token row. */
    public static void matMulBf16(float[] x, short[] w, float[] pow2, float[] y, int rows, int in, int out) {
        IntStream.range(0, (out + ROWS_PER_TASK - 1) / ROWS_PER_TASK).parallel().forEach(blk -> {
            float[] buf = rowBuffer(in);
            for (int o = blk * ROWS_PER_TASK; o < Math.min(out, (blk + 1) * ROWS_PER_TASK); o++) {
                decodeRowBf16(w, o, in, buf);
                for (int r = 0; r < rows; r++) y[r * out + o] = dot(buf, 0, x, r * in, in);
            }
        });
    }

    public static void matVecFp8(float[] x, byte[] w, float[] scales, float[] pow2, float[] y, int in, int out) {
        IntStream.range(0, (out + ROWS_PER_TASK - 1) / ROWS_PER_TASK).parallel().forEach(blk -> {
            for (int o = blk * ROWS_PER_TASK; o < Math.min(out, (blk + 1) * ROWS_PER_TASK); o++) y[o] = dotFp8(w, scales, o, in, x, 0);
        });
    }

    /** Each weight row is decoded once and applied to every token row. */
    public static void matMulFp8(float[] x, byte[] w, float[] scales, float[] pow2, float[] y, int rows, int in, int out) {
        IntStream.range(0, (out + ROWS_PER_TASK - 1) / ROWS_PER_TASK).parallel().forEach(blk -> {
            float[] buf = rowBuffer(in);
            for (int o = blk * ROWS_PER_TASK; o < Math.min(out, (blk + 1) * ROWS_PER_TASK); o++) {
                decodeRowFp8(w, scales, o, in, buf);
                for (int r = 0; r < rows; r++) y[r * out + o] = dot(buf, 0, x, r * in, in);
            }
        });
    }

    // ------------------------------------------------------------------ absorption (one task per head, as the f32 kernels)

    public static void absorbQueryBf16(float[] q, short[] wkvB, float[] pow2, float[] qLat, int rows, int heads, int dn, int dr, int dv, int dc) {
        IntStream.range(0, heads).parallel().forEach(h -> {
            float[] buf = rowBuffer(dc);
            for (int r = 0; r < rows; r++) java.util.Arrays.fill(qLat, (r * heads + h) * dc, (r * heads + h + 1) * dc, 0f);
            for (int d = 0; d < dn; d++) {
                decodeRowBf16(wkvB, h * (dn + dv) + d, dc, buf);
                for (int r = 0; r < rows; r++) {
                    int rh = r * heads + h;
                    axpy(q[rh * (dn + dr) + d], buf, 0, qLat, rh * dc, dc);
                }
            }
        });
    }

    public static void absorbQueryFp8(float[] q, byte[] wkvB, float[] scales, float[] pow2, float[] qLat, int rows, int heads,
                                      int dn, int dr, int dv, int dc) {
        IntStream.range(0, heads).parallel().forEach(h -> {
            float[] buf = rowBuffer(dc);
            for (int r = 0; r < rows; r++) java.util.Arrays.fill(qLat, (r * heads + h) * dc, (r * heads + h + 1) * dc, 0f);
            for (int d = 0; d < dn; d++) {
                decodeRowFp8(wkvB, scales, h * (dn + dv) + d, dc, buf);
                for (int r = 0; r < rows; r++) {
                    int rh = r * heads + h;
                    axpy(q[rh * (dn + dr) + d], buf, 0, qLat, rh * dc, dc);
                }
            }
        });
    }

    public static void unabsorbValueBf16(float[] oLat, short[] wkvB, float[] pow2, float[] o, int rows, int heads, int dn, int dv, int dc) {
        IntStream.range(0, heads).parallel().forEach(h -> {
            float[] buf = rowBuffer(dc);
            for (int v = 0; v < dv; v++) {
                decodeRowBf16(wkvB, h * (dn + dv) + dn + v, dc, buf);
                for (int r = 0; r < rows; r++) {
                    int rh = r * heads + h;
                    o[rh * dv + v] = dot(buf, 0, oLat, rh * dc, dc);
                }
            }
        });
    }

    public static void unabsorbValueFp8(float[] oLat, byte[] wkvB, float[] scales, float[] pow2, float[] o, int rows, int heads,
                                        int dn, int dv, int dc) {
        IntStream.range(0, heads).parallel().forEach(h -> {
            float[] buf = rowBuffer(dc);
            for (int v = 0; v < dv; v++) {
                decodeRowFp8(wkvB, scales, h * (dn + dv) + dn + v, dc, buf);
                for (int r = 0; r < rows; r++) {
                    int rh = r * heads + h;
                    o[rh * dv + v] = dot(buf, 0, oLat, rh * dc, dc);
                }
            }
        });
    }

    // ------------------------------------------------------------------ whole matrices (the NAIVE path's kv_b_proj)

    public static void fromBf16(short[] w, float[] pow2, float[] out, int rows, int cols) {
        IntStream.range(0, rows).parallel().forEach(o -> {
            int i = 0;
            for (; i <= cols - L; i += L) bf16(w, o * cols + i).intoArray(out, o * cols + i);
            for (; i < cols; i++) out[o * cols + i] = bf16(w[o * cols + i]);
        });
    }

    public static void fromFp8(byte[] w, float[] scales, float[] pow2, float[] out, int rows, int cols) {
        IntStream.range(0, rows).parallel().forEach(o -> {
            int so = (o / B) * Fp8.weightBlocks(cols), i = 0;
            for (; i <= cols - L; i += L) e4m3(w, o * cols + i).mul(scales[so + i / B]).intoArray(out, o * cols + i);
            for (; i < cols; i++) out[o * cols + i] = E4M3[w[o * cols + i] & 0xFF] * scales[so + i / B];
        });
    }
}
