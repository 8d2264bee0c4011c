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

    /**
     * fmaRun counts 16 chains × 2 FLOPs × the vector's lanes per round of every call its threads made, over the time
     * they took: a stand-in block that sleeps 2 ms per timed call bounds that time from both sides.
     */
    @Test
    void aRunCountsTheFlopsOfEveryThreadsCalls() {
        int threads = 2;
        java.util.concurrent.atomic.AtomicLong calls = new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.ConcurrentHashMap<Long, Long> perThread = new java.util.concurrent.ConcurrentHashMap<>();
        Roofline.FmaBlock sleeper = (iters, seed) -> {
            if (iters < 1 << 16) return 0f;                       // the warm-up before the clock
            assertEquals(1 << 16, iters, "rounds per timed call");
            calls.incrementAndGet();
            perThread.merge(Thread.currentThread().threadId(), 1L, Long::sum);
            try {
                Thread.sleep(2);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return 1f;
        };
        long t0 = System.nanoTime();
        double g = Roofline.fmaRun(threads, 40, sleeper);
        double outside = (System.nanoTime() - t0) / 1e9;
        assertEquals(threads, perThread.size(), "every thread ran");
        double flops = calls.get() * (double) (1 << 16) * 16 * 2 * FloatVector.SPECIES_PREFERRED.length();
        long most = perThread.values().stream().mapToLong(Long::longValue).max().orElseThrow();
        // the run took at least the longest thread's sleeps and at most the time seen from outside
        assertTrue(g >= flops / outside / 1e9 * 0.999, "GFLOP/s " + g + " below " + flops / outside / 1e9);
        assertTrue(g <= flops / (most * 0.002) / 1e9 * 1.001, "GFLOP/s " + g + " above " + flops / (most * 0.002) / 1e9);
    }
}
