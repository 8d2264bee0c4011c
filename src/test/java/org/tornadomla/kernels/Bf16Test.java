package org.tornadomla.kernels;

import org.junit.jupiter.api.Test;
import org.tornadomla.weights.Bf16Bits;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The kernel-safe bf16 codec against the bit trick. */
class Bf16Test {
    @Test
    void decodesEveryFiniteBf16PatternExactly() {
        for (int bits = 0; bits < 0x10000; bits++) {
            int e = (bits >> 7) & 0xFF;
            if (e == 0xFF) continue;                       // ±inf/NaN: documented difference
            float expected = Bf16Bits.decode((short) bits);
            assertEquals(Float.floatToRawIntBits(expected) & 0x7FFFFFFF,
                    Float.floatToRawIntBits(Bf16.decode(bits, Bf16.pow2())) & 0x7FFFFFFF, "pattern " + Integer.toHexString(bits));
            assertEquals(expected, Bf16.decode(bits, Bf16.pow2()), 0.0f, "pattern " + Integer.toHexString(bits));
        }
        assertEquals(Float.POSITIVE_INFINITY, Bf16.decode(0x7F80, Bf16.pow2()));
        assertEquals(Float.NEGATIVE_INFINITY, Bf16.decode(0xFF80, Bf16.pow2()));
    }

    @Test
    void encodesRoundToNearestEvenLikeTheBitTrick() {
        SplittableRandom rnd = new SplittableRandom(1);
        int[] lows = {0, 1, 0x7FFF, 0x8000, 0x8001, 0xFFFF};
        for (int hi = 0; hi < 0x10000; hi++) {
            if (((hi >> 7) & 0xFF) == 0xFF) continue;
            for (int low : lows) check(Float.intBitsToFloat((hi << 16) | low));
            check(Float.intBitsToFloat((hi << 16) | rnd.nextInt(0x10000)));
        }
        check(Float.MAX_VALUE);                             // rounds up to +inf
        check(-Float.MAX_VALUE);
        check(Float.MIN_VALUE);
        check(Float.POSITIVE_INFINITY);
        check(Float.NEGATIVE_INFINITY);
        assertEquals((short) 0x7FC0, Bf16.encode(Float.NaN, Bf16.pow2()));
        assertEquals((short) 0, Bf16.encode(-0.0f, Bf16.pow2()));   // documented: −0 encodes as +0
    }

    private static void check(float x) {
        if (x == 0f) return;
        assertEquals(Bf16Bits.encode(x), Bf16.encode(x, Bf16.pow2()), () -> "x = " + x + " (" + Integer.toHexString(Float.floatToRawIntBits(x)) + ")");
    }
}
