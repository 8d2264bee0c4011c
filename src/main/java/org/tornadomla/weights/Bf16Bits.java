package org.tornadomla.weights;

/**
 * bfloat16 by the usual bit trick, for host code (files, cache read-out) and as the independent
 * reference of the kernel-safe {@link org.tornadomla.kernels.Bf16}. Never call it from a kernel:
 * TornadoVM cannot compile {@code Float.intBitsToFloat} in arithmetic.
 */
public final class Bf16Bits {
    private Bf16Bits() {
    }

    /** Round to nearest, ties to even; NaN stays a quiet NaN. */
    public static short encode(float x) {
        int bits = Float.floatToRawIntBits(x);
        if ((bits & 0x7FFFFFFF) > 0x7F800000) return (short) ((bits >>> 16) | 0x40);
        int rounding = 0x7FFF + ((bits >>> 16) & 1);
        return (short) ((bits + rounding) >>> 16);
    }

    /** The float a bfloat16 bit pattern stands for. */
    public static float decode(short bits) {
        return Float.intBitsToFloat((bits & 0xFFFF) << 16);
    }
}
