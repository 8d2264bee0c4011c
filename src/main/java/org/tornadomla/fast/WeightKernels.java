package org.tornadomla.fast;

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
        IntVector v = (IntVector) Vec.loadBytes(w, off).convertShape(VectorOperators.B2I, INTS, 0);
        IntVector mag = v.and(0x7F);
        FloatVector normal = mag.lanewise(VectorOperators.LSHL, 20).add(120 << 23).reinterpretAsFloats();
        FloatVector sub = ((FloatVector) mag.convert(VectorOperators.I2F, 0)).mul(1f / 512);
        FloatVector val = normal.blend(sub, mag.lt(8).cast(F));
        return val.reinterpretAsInts().or(v.and(0x80000000)).reinterpretAsFloats();
    }

    /** 2^120: an e4m3 value v is the float with bits sign | mag &lt;&lt; 20 times this (see {@link #e4m3Times2ToMinus120}). */
    private static final float TWO_TO_120 = 0x1p120f;

    /**
     * The L e4m3 codes at w[off …] as their values times 2^−120: the float whose bits are the code's sign at bit
     * 31 and its 7 magnitude bits at 20 … 26 (exponent e − 7 + 127 − 120 = e, mantissa m/8; for e = 0 a
     * subnormal float m·2^−129). Two integer operations instead of the rebias, blend and sign of
     * {@link #e4m3}: multiplied by scale·2^120 it gives e4m3·scale rounded once, exactly as decode-then-scale
     * does, whenever scale·2^120 is finite (any scale below 2^8; real ones are about 1e-4).
     */
    private static FloatVector e4m3Times2ToMinus120(byte[] w, int off) {
        IntVector v = (IntVector) Vec.loadBytes(w, off).convertShape(VectorOperators.B2I, INTS, 0);
        return v.lanewise(VectorOperators.LSHL, 20).and(0x87F00000).reinterpretAsFloats();   // widening copied the sign to bits 27…31
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
        decodeRowFp8(w, scales, row, cols, buf, 0);
    }

    /** Row {@code row} of a block-scaled FP8 matrix, dequantised into buf[bo … bo + cols). */
    private static void decodeRowFp8(byte[] w, float[] scales, int row, int cols, float[] buf, int bo) {
        decodeFp8(w, scales, row, cols, 0, cols, buf, bo);
    }

    /**
     * Columns [from, from + n) of row {@code row} of a block-scaled FP8 matrix, dequantised into buf[bo … bo + n);
     * {@code from} a multiple of the vector length.
     */
    private static void decodeFp8(byte[] w, float[] scales, int row, int cols, int from, int n, float[] buf, int bo) {
        int wo = row * cols, so = (row / B) * Fp8.weightBlocks(cols), i = from, to = from + n;
        for (int b0 = from / B * B; b0 < to; b0 += B) {
            int end = Math.min(to, b0 + B);
            float scale = scales[so + b0 / B], big = scale * TWO_TO_120;
            if (big <= Float.MAX_VALUE) {
                FloatVector s = FloatVector.broadcast(F, big);
                for (; i <= end - L; i += L) e4m3Times2ToMinus120(w, wo + i).mul(s).intoArray(buf, bo + i - from);
            } else {
                for (; i <= end - L; i += L) e4m3(w, wo + i).mul(scale).intoArray(buf, bo + i - from);
            }
        }
        for (; i < to; i++) buf[bo + i - from] = E4M3[w[wo + i] & 0xFF] * scales[so + i / B];
    }

    /** Columns [from, from + n) of bf16 row {@code row} as floats into buf[bo … bo + n). */
    private static void decodeBf16(short[] w, int row, int cols, int from, int n, float[] buf, int bo) {
        int wo = row * cols + from, i = 0;
        for (; i <= n - L; i += L) bf16(w, wo + i).intoArray(buf, bo + i);
        for (; i < n; i++) buf[bo + i] = bf16(w[wo + i]);
    }

    /** Decodes columns [from, from + n) of one weight row into seg[0 … n). */
    private interface RowSegment {
        void decode(int row, int from, int n, float[] seg);
    }

    /**
     * ProjectionGemm's packer of a compact W [out, in]: each row segment decoded, then written down a column of
     * Wᵀ (KC is a multiple of the vector length, as {@link #decodeFp8} wants).
     */
    private static ProjectionGemm.Packer packer(RowSegment rows) {
        return (o0, nb, k0, kc, packed, p0) -> {
            float[] seg = rowBuffer(kc);
            for (int o = 0; o < nb; o++) {
                rows.decode(o0 + o, k0, kc, seg);
                for (int i = 0; i < kc; i++) packed[p0 + i * ProjectionGemm.NB + o] = seg[i];
            }
        };
    }

    private static void decodeRowBf16(short[] w, int row, int cols, float[] buf) {
        decodeRowBf16(w, row, cols, buf, 0);
    }

    private static void decodeRowBf16(short[] w, int row, int cols, float[] buf, int bo) {
        decodeBf16(w, row, cols, 0, cols, buf, bo);
    }

    // ------------------------------------------------------------------ sums (the order of the f32 java-fast kernels)

    private static float dot(float[] a, int ao, float[] b, int bo, int n) {
        FloatVector acc = FloatVector.zero(F);
        int i = 0;
        for (; i <= n - L; i += L) acc = FloatVector.fromArray(F, a, ao + i).fma(FloatVector.fromArray(F, b, bo + i), acc);
        float s = Vec.sum(acc);
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
            float scale = scales[so + b0 / B], big = scale * TWO_TO_120;
            if (big <= Float.MAX_VALUE) {
                FloatVector s = FloatVector.broadcast(F, big);
                for (; i <= end - L; i += L) acc = e4m3Times2ToMinus120(w, wo + i).mul(s).fma(FloatVector.fromArray(F, x, xo + i), acc);
            } else {
                FloatVector s = FloatVector.broadcast(F, scale);
                for (; i <= end - L; i += L) acc = e4m3(w, wo + i).mul(s).fma(FloatVector.fromArray(F, x, xo + i), acc);
            }
        }
        float r = Vec.sum(acc);
        for (; i < cols; i++) r += E4M3[w[wo + i] & 0xFF] * scales[so + i / B] * x[xo + i];
        return r;
    }

    /** Σ_i W[row, i]·x[xo + i] over a bf16 row, decoded on the fly. */
    private static float dotBf16(short[] w, int row, int cols, float[] x, int xo) {
        int wo = row * cols;
        FloatVector acc = FloatVector.zero(F);
        int i = 0;
        for (; i <= cols - L; i += L) acc = bf16(w, wo + i).fma(FloatVector.fromArray(F, x, xo + i), acc);
        float r = Vec.sum(acc);
        for (; i < cols; i++) r += bf16(w[wo + i]) * x[xo + i];
        return r;
    }

    /**
     * y[yo + k·yStride] = Σ_i W[row0 + k, i]·x[xo + i] for k = 0 … 3, FP8 rows decoded on the fly. Four rows at
     * once share each load of x and keep four independent accumulators (one alone waits on its fused
     * multiply-add's latency); each row is still summed in {@link #dot}'s order.
     */
    private static void dot4Fp8(byte[] w, float[] scales, int row0, int cols, float[] x, int xo, float[] y, int yo, int yStride) {
        int bc = Fp8.weightBlocks(cols);
        int w0 = row0 * cols, w1 = w0 + cols, w2 = w1 + cols, w3 = w2 + cols;
        int s0 = (row0 / B) * bc, s1 = ((row0 + 1) / B) * bc, s2 = ((row0 + 2) / B) * bc, s3 = ((row0 + 3) / B) * bc;
        FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0;
        int i = 0;
        for (int b0 = 0; b0 < cols; b0 += B) {
            int end = Math.min(cols, b0 + B), cb = b0 / B;
            float c0 = scales[s0 + cb], c1 = scales[s1 + cb], c2 = scales[s2 + cb], c3 = scales[s3 + cb];
            if (Math.max(Math.max(c0, c1), Math.max(c2, c3)) * TWO_TO_120 <= Float.MAX_VALUE) {
                FloatVector v0 = FloatVector.broadcast(F, c0 * TWO_TO_120), v1 = FloatVector.broadcast(F, c1 * TWO_TO_120);
                FloatVector v2 = FloatVector.broadcast(F, c2 * TWO_TO_120), v3 = FloatVector.broadcast(F, c3 * TWO_TO_120);
                for (; i <= end - L; i += L) {
                    FloatVector xv = FloatVector.fromArray(F, x, xo + i);
                    a0 = e4m3Times2ToMinus120(w, w0 + i).mul(v0).fma(xv, a0);
                    a1 = e4m3Times2ToMinus120(w, w1 + i).mul(v1).fma(xv, a1);
                    a2 = e4m3Times2ToMinus120(w, w2 + i).mul(v2).fma(xv, a2);
                    a3 = e4m3Times2ToMinus120(w, w3 + i).mul(v3).fma(xv, a3);
                }
            } else {
                for (; i <= end - L; i += L) {
                    FloatVector xv = FloatVector.fromArray(F, x, xo + i);
                    a0 = e4m3(w, w0 + i).mul(c0).fma(xv, a0);
                    a1 = e4m3(w, w1 + i).mul(c1).fma(xv, a1);
                    a2 = e4m3(w, w2 + i).mul(c2).fma(xv, a2);
                    a3 = e4m3(w, w3 + i).mul(c3).fma(xv, a3);
                }
            }
        }
        float r0 = Vec.sum(a0), r1 = Vec.sum(a1);
        float r2 = Vec.sum(a2), r3 = Vec.sum(a3);
        for (; i < cols; i++) {
            int cb = i / B;
            float xi = x[xo + i];
            r0 += E4M3[w[w0 + i] & 0xFF] * scales[s0 + cb] * xi;
            r1 += E4M3[w[w1 + i] & 0xFF] * scales[s1 + cb] * xi;
            r2 += E4M3[w[w2 + i] & 0xFF] * scales[s2 + cb] * xi;
            r3 += E4M3[w[w3 + i] & 0xFF] * scales[s3 + cb] * xi;
        }
        y[yo] = r0;
        y[yo + yStride] = r1;
        y[yo + 2 * yStride] = r2;
        y[yo + 3 * yStride] = r3;
    }

    /** {@link #dot4Fp8} for bf16 rows. */
    private static void dot4Bf16(short[] w, int row0, int cols, float[] x, int xo, float[] y, int yo, int yStride) {
        int w0 = row0 * cols, w1 = w0 + cols, w2 = w1 + cols, w3 = w2 + cols;
        FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0;
        int i = 0;
        for (; i <= cols - L; i += L) {
            FloatVector xv = FloatVector.fromArray(F, x, xo + i);
            a0 = bf16(w, w0 + i).fma(xv, a0);
            a1 = bf16(w, w1 + i).fma(xv, a1);
            a2 = bf16(w, w2 + i).fma(xv, a2);
            a3 = bf16(w, w3 + i).fma(xv, a3);
        }
        float r0 = Vec.sum(a0), r1 = Vec.sum(a1);
        float r2 = Vec.sum(a2), r3 = Vec.sum(a3);
        for (; i < cols; i++) {
            float xi = x[xo + i];
            r0 += bf16(w[w0 + i]) * xi;
            r1 += bf16(w[w1 + i]) * xi;
            r2 += bf16(w[w2 + i]) * xi;
            r3 += bf16(w[w3 + i]) * xi;
        }
        y[yo] = r0;
        y[yo + yStride] = r1;
        y[yo + 2 * yStride] = r2;
        y[yo + 3 * yStride] = r3;
    }

    // ------------------------------------------------------------------ projections

    public static void matVecBf16(float[] x, short[] w, float[] pow2, float[] y, int in, int out) {
        Parallel.forEach((out + ROWS_PER_TASK - 1) / ROWS_PER_TASK, blk -> {
            int o = blk * ROWS_PER_TASK, end = Math.min(out, (blk + 1) * ROWS_PER_TASK);
            for (; o + 4 <= end; o += 4) dot4Bf16(w, o, in, x, 0, y, o, 1);
            for (; o < end; o++) y[o] = dotBf16(w, o, in, x, 0);
        });
    }

    /** Each weight row is decoded once, four at a time, and applied to every token row. */
    public static void matMulBf16(float[] x, short[] w, float[] pow2, float[] y, int rows, int in, int out) {
        if (rows >= ProjectionGemm.MIN_ROWS_COMPACT) {
            ProjectionGemm.multiply(packer((row, from, n, seg) -> decodeBf16(w, row, in, from, n, seg, 0)), x, y, rows, in, out);
            return;
        }
        Parallel.forEach((out + ROWS_PER_TASK - 1) / ROWS_PER_TASK, blk -> {
            float[] buf = rowBuffer(4 * in);
            int o = blk * ROWS_PER_TASK, end = Math.min(out, (blk + 1) * ROWS_PER_TASK);
            for (; o + 4 <= end; o += 4) {
                for (int k = 0; k < 4; k++) decodeRowBf16(w, o + k, in, buf, k * in);
                FastProjections.fourRows(buf, 0, in, x, rows, y, o, out);
            }
            for (; o < end; o++) {
                decodeRowBf16(w, o, in, buf, 0);
                for (int r = 0; r < rows; r++) y[r * out + o] = dot(buf, 0, x, r * in, in);
            }
        });
    }

    public static void matVecFp8(float[] x, byte[] w, float[] scales, float[] pow2, float[] y, int in, int out) {
        Parallel.forEach((out + ROWS_PER_TASK - 1) / ROWS_PER_TASK, blk -> {
            int o = blk * ROWS_PER_TASK, end = Math.min(out, (blk + 1) * ROWS_PER_TASK);
            for (; o + 4 <= end; o += 4) dot4Fp8(w, scales, o, in, x, 0, y, o, 1);
            for (; o < end; o++) y[o] = dotFp8(w, scales, o, in, x, 0);
        });
    }

    /** Each weight row is decoded once, four at a time, and applied to every token row. */
    public static void matMulFp8(float[] x, byte[] w, float[] scales, float[] pow2, float[] y, int rows, int in, int out) {
        if (rows >= ProjectionGemm.MIN_ROWS_COMPACT) {
            ProjectionGemm.multiply(packer((row, from, n, seg) -> decodeFp8(w, scales, row, in, from, n, seg, 0)), x, y, rows, in, out);
            return;
        }
        Parallel.forEach((out + ROWS_PER_TASK - 1) / ROWS_PER_TASK, blk -> {
            float[] buf = rowBuffer(4 * in);
            int o = blk * ROWS_PER_TASK, end = Math.min(out, (blk + 1) * ROWS_PER_TASK);
            for (; o + 4 <= end; o += 4) {
                for (int k = 0; k < 4; k++) decodeRowFp8(w, scales, o + k, in, buf, k * in);
                FastProjections.fourRows(buf, 0, in, x, rows, y, o, out);
            }
            for (; o < end; o++) {
                decodeRowFp8(w, scales, o, in, buf, 0);
                for (int r = 0; r < rows; r++) y[r * out + o] = dot(buf, 0, x, r * in, in);
            }
        });
    }

    // ------------------------------------------------------------------ absorption (one task per head, as the f32 kernels)

    /**
     * Token rows from which absorb_q and unabsorb_v decode a head of kv_b_proj once into an f32 buffer and run
     * {@link FastAbsorb}'s kernels on it for every token row (a prefill of 128 tokens in bf16 or FP8 spent
     * 430 ms against 257 ms with f32 weights before). Below it, with bf16 weights absorb_q takes
     * {@link #absorbQueryRowBf16} (each row decodes W^UK_h again, 8 vectors of accumulators in registers),
     * with FP8 a row of W^UK_h is decoded once and added to every token row. At B1 H128 T4096 absorb_q with
     * bf16 weights took 0.47-0.56 ms in registers against 0.71 decoded row by row (f32 weights: 0.58-0.75).
     * The same register blocking for FP8 ran at 1.0-1.2 ms against 0.56 row by row (the e4m3 decode and
     * scale, 8 vectors at a time, are more work per multiply-add than the loads and stores they save), so FP8
     * decodes row by row.
     */
    static final int HEAD_DECODE_ROWS = 4;

    public static void absorbQueryBf16(float[] q, short[] wkvB, float[] pow2, float[] qLat, int rows, int heads, int dn, int dr, int dv, int dc) {
        if (rows < HEAD_DECODE_ROWS && dc % (8 * L) == 0) {
            Parallel.forEach(heads, h -> {
                for (int r = 0; r < rows; r++) absorbQueryRowBf16(q, wkvB, qLat, r * heads + h, h, dn, dr, dv, dc);
            });
            return;
        }
        // W^UK_h decoded once (dn × dc floats, L2-resident) and run through the f32 kernel for every token row
        Parallel.forEach(heads, h -> {
            float[] buf = rowBuffer(dn * dc);
            for (int d = 0; d < dn; d++) decodeRowBf16(wkvB, h * (dn + dv) + d, dc, buf, d * dc);
            FastAbsorb.absorbQueryHead(q, buf, 0, qLat, rows, heads, h, dn, dr, dc);
        });
    }

    public static void absorbQueryFp8(float[] q, byte[] wkvB, float[] scales, float[] pow2, float[] qLat, int rows, int heads,
                                      int dn, int dr, int dv, int dc) {
        Parallel.forEach(heads, h -> {
            float[] buf = rowBuffer(rows < HEAD_DECODE_ROWS ? dc : dn * dc);
            if (rows >= HEAD_DECODE_ROWS) {
                // W^UK_h decoded once and run through the f32 kernel for every token row
                for (int d = 0; d < dn; d++) decodeRowFp8(wkvB, scales, h * (dn + dv) + d, dc, buf, d * dc);
                FastAbsorb.absorbQueryHead(q, buf, 0, qLat, rows, heads, h, dn, dr, dc);
                return;
            }
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

    /**
     * q_lat[rh, c] = Σ_d W^UK_h[d, c]·q_nope[rh, d] for one token row, 8 vectors of c at a time held in registers
     * over d, W^UK_h decoded on the fly: the same fused multiply-adds in the same order as decoding each row
     * of W^UK_h and adding it (the other branch of {@link #absorbQueryBf16}), without q_lat's loads and stores.
     */
    private static void absorbQueryRowBf16(float[] q, short[] w, float[] qLat, int rh, int h, int dn, int dr, int dv, int dc) {
        int qo = rh * (dn + dr), out = rh * dc;
        for (int c = 0; c < dc; c += 8 * L) {
            FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
            for (int d = 0; d < dn; d++) {
                FloatVector b = FloatVector.broadcast(F, q[qo + d]);
                int wr = (h * (dn + dv) + d) * dc + c;
                a0 = bf16(w, wr).fma(b, a0);
                a1 = bf16(w, wr + L).fma(b, a1);
                a2 = bf16(w, wr + 2 * L).fma(b, a2);
                a3 = bf16(w, wr + 3 * L).fma(b, a3);
                a4 = bf16(w, wr + 4 * L).fma(b, a4);
                a5 = bf16(w, wr + 5 * L).fma(b, a5);
                a6 = bf16(w, wr + 6 * L).fma(b, a6);
                a7 = bf16(w, wr + 7 * L).fma(b, a7);
            }
            a0.intoArray(qLat, out + c);
            a1.intoArray(qLat, out + c + L);
            a2.intoArray(qLat, out + c + 2 * L);
            a3.intoArray(qLat, out + c + 3 * L);
            a4.intoArray(qLat, out + c + 4 * L);
            a5.intoArray(qLat, out + c + 5 * L);
            a6.intoArray(qLat, out + c + 6 * L);
            a7.intoArray(qLat, out + c + 7 * L);
        }
    }

    public static void unabsorbValueBf16(float[] oLat, short[] wkvB, float[] pow2, float[] o, int rows, int heads, int dn, int dv, int dc) {
        if (rows >= HEAD_DECODE_ROWS) {
            // W^UV_h decoded once (dv × dc floats) and run through the f32 kernel for every token row
            Parallel.forEach(heads, h -> {
                float[] buf = rowBuffer(dv * dc);
                for (int v = 0; v < dv; v++) decodeRowBf16(wkvB, h * (dn + dv) + dn + v, dc, buf, v * dc);
                FastAbsorb.unabsorbValueHead(oLat, buf, 0, o, rows, heads, h, dv, dc);
            });
            return;
        }
        Parallel.forEach(heads, h -> {
            float[] buf = rowBuffer(dc);
            int v0 = 0;
            if (rows == 1) {                                 // a decode step: four rows of W^UV at once, decoded on the fly
                for (; v0 + 4 <= dv; v0 += 4) dot4Bf16(wkvB, h * (dn + dv) + dn + v0, dc, oLat, h * dc, o, h * dv + v0, 1);
            }
            for (int v = v0; v < dv; v++) {
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
        if (rows >= HEAD_DECODE_ROWS) {
            // W^UV_h decoded once (dv × dc floats) and run through the f32 kernel for every token row
            Parallel.forEach(heads, h -> {
                float[] buf = rowBuffer(dv * dc);
                for (int v = 0; v < dv; v++) decodeRowFp8(wkvB, scales, h * (dn + dv) + dn + v, dc, buf, v * dc);
                FastAbsorb.unabsorbValueHead(oLat, buf, 0, o, rows, heads, h, dv, dc);
            });
            return;
        }
        Parallel.forEach(heads, h -> {
            float[] buf = rowBuffer(dc);
            int v0 = 0;
            if (rows == 1) {                                 // a decode step: four rows of W^UV at once, decoded on the fly
                for (; v0 + 4 <= dv; v0 += 4) dot4Fp8(wkvB, scales, h * (dn + dv) + dn + v0, dc, oLat, h * dc, o, h * dv + v0, 1);
            }
            for (int v = v0; v < dv; v++) {
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
        Parallel.forEach(rows, o -> {
            int i = 0;
            for (; i <= cols - L; i += L) bf16(w, o * cols + i).intoArray(out, o * cols + i);
            for (; i < cols; i++) out[o * cols + i] = bf16(w[o * cols + i]);
        });
    }

    public static void fromFp8(byte[] w, float[] scales, float[] pow2, float[] out, int rows, int cols) {
        Parallel.forEach(rows, o -> {
            float[] buf = rowBuffer(cols);
            decodeRowFp8(w, scales, o, cols, buf);
            System.arraycopy(buf, 0, out, o * cols, cols);
        });
    }
}
