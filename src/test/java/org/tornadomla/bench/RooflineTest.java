package org.tornadomla.bench;

import jdk.incubator.vector.FloatVector;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The FMA-peak loops compute what they claim (so the JIT cannot drop them and the two copies agree), and a run counts FLOPs. */
class RooflineTest {
    /** The 16 chains a ← a·m + c (single-precision fused multiply-add), chain k starting at seed + k, summed over every lane. */
    private static double expected(int iters, int seed) {
        int lanes = FloatVector.SPECIES_PREFERRED.length();
        double sum = 0;
        for (int k = 0; k < 16; k++) {
            float a = seed + k;
            for (int i = 0; i < iters; i++) a = Math.fma(a, 0.9999999f, 1e-7f);
            sum += (double) a * lanes;
        }
        return sum;
    }

    @Test
    void bothCopiesOfTheFmaLoopComputeTheChains() {
        for (int[] c : new int[][] {{0, 5}, {1, 0}, {1000, 3}, {20_000, 7}}) {
            double want = expected(c[0], c[1]);
            // lanes and chains are added in float: within a few ulps of the sum's size
            double tol = 1e-6 * Math.abs(want) + 1e-3;
            assertEquals(want, Roofline.fmaBlock(c[0], c[1]), tol, "fmaBlock" + java.util.Arrays.toString(c));
            assertEquals(want, Roofline.fmaBlockAgain(c[0], c[1]), tol, "fmaBlockAgain" + java.util.Arrays.toString(c));
        }
    }

    @Test
    void aRunReportsAPositiveFinitePeak() {
        double g = Roofline.fmaRun(1, 20, Roofline::fmaBlockAgain);
        assertTrue(g > 0 && Double.isFinite(g), "GFLOP/s " + g);
    }
}
