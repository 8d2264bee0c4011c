package org.tornadomla.kernels;

import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The kernel-safe e4m3 codec against the format's definition, computed here in double. */
class Fp8Test {
    /** e4m3fn by definition: bias 7, no infinities, S.1111.111 is NaN. */
    static double reference(int bits) {
        int s = (bits >> 7) & 1, e = (bits >> 3) & 15, m = bits & 7;
        if (e == 15 && m == 7) return Double.NaN;
        double mag = e == 0 ? m / 8.0 * Math.pow(2, -6) : (1 + m / 8.0) * Math.pow(2, e - 7);
        return s == 1 ? -mag : mag;
    }

    @Test
    void decodesEveryByte() {
        for (int b = 0; b < 256; b++) {
            double ref = reference(b);
            if (Double.isNaN(ref)) continue;
            assertEquals(ref, Fp8.decode((byte) b, Bf16.pow2()), 0.0, "byte " + Integer.toHexString(b));
        }
        assertEquals(448.0, Fp8.decode((byte) 0x7E, Bf16.pow2()), 0.0);
    }

    /** The nearest finite e4m3 value by search; ties to the even mantissa; beyond 448 saturates. */
    static double nearest(double x) {
        double best = 0;
        int bestBits = 0;
        for (int b = 0; b < 128; b++) {
            double v = reference(b);
            if (Double.isNaN(v)) continue;
            double d = Math.abs(Math.abs(x) - v), db = Math.abs(Math.abs(x) - best);
            if (d < db || (d == db && (b & 1) == 0 && (bestBits & 1) == 1)) {
                best = v;
                bestBits = b;
            }
        }
        return x < 0 ? -best : best;
    }

    @Test
    void encodesToTheNearestValueTiesToEvenAndSaturates() {
        SplittableRandom rnd = new SplittableRandom(3);
        for (int i = 0; i < 20000; i++) {
            double x = (rnd.nextDouble() * 2 - 1) * Math.pow(2, rnd.nextInt(-12, 10));
            float f = (float) x;
            assertEquals(nearest(f), Fp8.decode(Fp8.encode(f, Bf16.pow2()), Bf16.pow2()), 0.0, "x = " + f);
        }
        for (int b = 0; b < 127; b++) {                       // every value and every midpoint between neighbours
            double v = reference(b), next = reference(b + 1);
            assertEquals(v, Fp8.decode(Fp8.encode((float) v, Bf16.pow2()), Bf16.pow2()), 0.0, "value " + v);
            if (!Double.isNaN(next)) {
                float mid = (float) ((v + next) / 2);
                assertEquals(nearest(mid), Fp8.decode(Fp8.encode(mid, Bf16.pow2()), Bf16.pow2()), 0.0, "midpoint " + mid);
            }
        }
        assertEquals(448.0, Fp8.decode(Fp8.encode(1e6f, Bf16.pow2()), Bf16.pow2()), 0.0);
        assertEquals(-448.0, Fp8.decode(Fp8.encode(-500f, Bf16.pow2()), Bf16.pow2()), 0.0);
        assertTrue(Fp8.decode(Fp8.encode(1e-9f, Bf16.pow2()), Bf16.pow2()) == 0.0);
    }
}
