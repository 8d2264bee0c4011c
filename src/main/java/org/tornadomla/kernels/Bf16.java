package org.tornadomla.kernels;

/**
 * bfloat16 ↔ float with integer and float arithmetic only, so that TornadoVM can compile it
 * ({@code Float.intBitsToFloat} cannot be used in kernel arithmetic, docs/design.md §2).
 *
 * <p>A bf16 value is the top 16 bits of a float: sign, 8-bit exponent e, 7-bit mantissa m. Its value is
 * (128 + m)·2^(e−134) for e &gt; 0 and m·2^(−133) for e = 0. Powers of two come from the table
 * {@link #pow2()}: POW2[k] = 2^(k − 150). Encoding rounds to nearest, ties to even, exactly like the usual
 * bit trick ({@link org.tornadomla.weights.Bf16Bits#encode}). Differences from the bit trick, all documented and tested:
 * −0 encodes as +0, NaN encodes as 0x7FC0, and a decoded NaN pattern reads as ±∞.
 */
public final class Bf16 {
    private Bf16() {
    }

    /**
     * POW2[k] = 2^(k − 150) for k ≥ 16; entries above 2^127 are +∞ and never read. Entries 0 … 15, which bf16
     * never uses, hold the e4m3 table of {@link Fp8}: 2^(e − 10) at e = 1 … 15 and 2^−9 at 0. Private: a
     * caller changing it would change every decode; kernels get a copy from {@link #pow2()} as an argument.
     */
    private static final float[] POW2 = pow2Table();

    /** A copy of the power-of-two table (see POW2 above) to pass to kernels (host code only). */
    public static float[] pow2() {
        return POW2.clone();
    }

    private static float[] pow2Table() {
        float[] t = new float[280];
        for (int k = 0; k < t.length; k++) t[k] = Math.scalb(1f, k - 150);
        for (int e = 0; e < 16; e++) t[e] = Math.scalb(1f, e == 0 ? -9 : e - 10);
        return t;
    }

    /** Decodes a bf16 bit pattern, given in the low 16 bits of {@code bits} (kernel-safe). */
    public static float decode(int bits, float[] pow2) {
        int b = bits & 0xFFFF;
        int e = (b >> 7) & 0xFF;
        int m = b & 0x7F;
        float mag = e == 0 ? m * pow2[17] : (128 + m) * pow2[e + 16];
        return (b & 0x8000) != 0 ? -mag : mag;
    }

    /** Encodes a float to bf16, round to nearest even (kernel-safe). */
    public static short encode(float x, float[] pow2) {
        return (short) encodeBits(x, pow2);
    }

    /**
     * {@link #encode}'s bit pattern as an int in [0, 65535], never a {@code short}: TornadoVM 5.2's CUDA backend does
     * arithmetic on a value that came from a {@code short} in 16 bits (a zero-extension is dropped), so kernels that
     * pack two patterns into one word pack these.
     */
    public static int encodeBits(float x, float[] pow2) {
        int sign = x < 0f ? 0x8000 : 0;
        float a = x < 0f ? -x : x;
        int magnitude;
        if (a != a) {
            return 0x7FC0;
        } else if (a < pow2[24]) {
            // subnormal bf16: m = round(a·2^133), done as two exact scalings (2^133 overflows a float)
            magnitude = roundHalfEven(a * pow2[214] * pow2[219]);
        } else if (a >= pow2[277] * 2f) {
            magnitude = 0x7F80;                            // a is +inf
        } else {
            // largest e in [1, 254] with 2^(e−127) <= a
            int lo = 1;
            int hi = 254;
            while (lo < hi) {
                int mid = (lo + hi + 1) >> 1;
                if (pow2[mid + 23] <= a) {
                    lo = mid;
                } else {
                    hi = mid - 1;
                }
            }
            // a·2^(134−lo) = the mantissa with its leading 1, scaled to [128, 256); done as a product of table
            // entries that never overflows, with no float subtraction for fast-math to reassociate (OpenCL's
            // -cl-unsafe-math-optimizations turned (a·2^(127−lo) − 1)·128 into garbage for lo >= 248)
            float scaled = lo >= 7 ? a * pow2[284 - lo] : a * pow2[277] * pow2[157 - lo];
            // a carry out of the mantissa (rounding up to 256) moves to the next exponent, or to +inf at e = 254
            magnitude = (lo << 7) + roundHalfEven(scaled) - 128;
        }
        return sign | magnitude;
    }

    private static int roundHalfEven(float q) {
        int k = (int) q;
        float frac = q - k;
        if (frac > 0.5f || (frac == 0.5f && (k & 1) == 1)) k++;
        return k;
    }
}
