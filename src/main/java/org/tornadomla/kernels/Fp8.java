package org.tornadomla.kernels;

/**
 * FP8 E4M3 (the OCP "e4m3fn" format FlashMLA's cache uses) ↔ float with integer and float arithmetic only
 * (kernel-safe, like {@link Bf16}). Bit 7 sign, 4 exponent bits (bias 7), 3 mantissa bits; no infinities;
 * 0x7F/0xFF are NaN; the largest finite magnitude is 448 (0x7E). Value (8 + m)·2^(e−10) for e &gt; 0 and
 * m·2^(−9) for e = 0. Powers of two come from {@link Bf16#pow2()}: decoding reads its entries 0 … 15 (2^(e−10),
 * indexed by the exponent alone — TornadoVM 5.2 computes e + 140 of a byte's bits in a signed char, which
 * overflows), encoding reads POW2[k] = 2^(k−150). Bytes are read signed (see {@link CacheOps}).
 */
public final class Fp8 {
    private Fp8() {
    }

    /** The largest finite e4m3 magnitude. */
    public static final float MAX = 448f;

    /**
     * Side of the square blocks of DeepSeek's FP8 weights: W[i, j] = e4m3(Wq[i, j])·scale_inv[i / 128, j / 128]
     * (one f32 multiplier per block of 128 rows × 128 columns; the last block of a row or column may be partial).
     */
    public static final int WEIGHT_BLOCK = 128;

    /** Blocks along a dimension of n numbers: ceil(n / 128) (kernel-safe). */
    public static int weightBlocks(int n) {
        return (n + WEIGHT_BLOCK - 1) / WEIGHT_BLOCK;
    }

    /**
     * Element [row, col] of a block-scaled FP8 weight with {@code cols} columns: codes [rows, cols] and
     * scales [ceil(rows/128), ceil(cols/128)] (kernel-safe). The product is rounded once to f32, exactly as
     * dequantising the whole matrix first would round it.
     */
    public static float weight(byte[] codes, float[] scales, float[] pow2, int row, int col, int cols) {
        return decode(codes[row * cols + col], pow2) * scales[(row / WEIGHT_BLOCK) * weightBlocks(cols) + col / WEIGHT_BLOCK];
    }

    /**
     * Decodes an e4m3 byte (kernel-safe): (8 + m)·2^(e−10), or m·2^−9 for e = 0 (pow2[0] is 2^−9), times ±1
     * from the sign bit. Written without a branch: a sign that changes at random (weights) cost the JVM a
     * mispredicted branch per number, three times the rest of a projection's work.
     */
    public static float decode(byte v, float[] pow2) {
        int mag = v & 0x7F;
        int e = mag >> 3;
        int m = mag & 7;
        // (e + 15) >> 4 is 1 for e > 0, 0 for e = 0, and stays small (TornadoVM: no Math.min, whose OpenCL
        // min(char, int) PoCL finds ambiguous; sums of a byte's bits below 128)
        return (m + (((e + 15) >> 4) << 3)) * pow2[e] * (1 + 2 * (v >> 7));
    }

    /** Encodes to e4m3, round to nearest even, saturating at ±448 (kernel-safe). NaN encodes as 0x7F. */
    public static byte encode(float x, float[] pow2) {
        float a = x < 0f ? -x : x;
        int magnitude;
        if (a != a) {
            return (byte) 0x7F;
        } else if (a >= MAX) {
            magnitude = 0x7E;
        } else if (a < pow2[144]) {
            magnitude = roundHalfEven(a * pow2[159]);     // subnormal: m = round(a·2^9), 8 carries to e = 1
        } else {
            int e = 1;
            while (e < 15 && pow2[e + 144] <= a) {          // largest e with 2^(e−7) <= a
                e++;
            }
            float scaled = a * pow2[160 - e];               // a·2^(10−e) in [8, 16)
            magnitude = Math.min(0x7E, (e << 3) + roundHalfEven(scaled) - 8);
        }
        return (byte) (x < 0f ? magnitude | 0x80 : magnitude);
    }

    private static int roundHalfEven(float q) {
        int k = (int) q;
        float frac = q - k;
        if (frac > 0.5f || (frac == 0.5f && (k & 1) == 1)) k++;
        return k;
    }
}
