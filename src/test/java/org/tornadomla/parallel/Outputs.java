package org.tornadomla.parallel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/** Comparisons of layer outputs. */
final class Outputs {
    private Outputs() {
    }

    /** max |actual − expected| ≤ tol · max |expected|, and the outputs are not trivially small. */
    static void assertRelative(float[] expected, float[] actual, double tol, String what) {
        assertEquals(expected.length, actual.length, what + ": lengths");
        double max = 0, err = 0;
        int at = -1;
        for (int i = 0; i < expected.length; i++) {
            max = Math.max(max, Math.abs(expected[i]));
            double e = Math.abs((double) actual[i] - expected[i]);
            if (!(e <= err)) {
                err = e;
                at = i;
            }
        }
        assertTrue(max > 0.05, what + ": outputs of magnitude " + max + " test nothing");
        if (!(err <= tol * max)) {
            fail(what + ": element " + at + " expected " + expected[at] + " found " + actual[at] + ", |error| " + err + " > " + tol + " x max |y| " + max);
        }
    }

    /** The same floats, bit for bit. */
    static void assertBits(float[] expected, float[] actual, String what) {
        assertEquals(expected.length, actual.length, what + ": lengths");
        for (int i = 0; i < expected.length; i++) {
            if (Float.floatToRawIntBits(expected[i]) != Float.floatToRawIntBits(actual[i])) {
                fail(what + ": element " + i + " expected " + expected[i] + " found " + actual[i] + " (bit for bit)");
            }
        }
    }
}
