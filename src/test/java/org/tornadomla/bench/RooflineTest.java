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
     * fmaRun counts 16 chains × 2 FLOPs × the vector's lanes per round of every call its threads made, over the CPU time
     * each thread ran: a stand-in block that computes for 1 ms of its thread's CPU time per timed call bounds each
     * thread's rate from above. Twice as many threads as processors share the cores, so over the wall clock they would
     * count at most half of that; over their CPU time they count each core's rate.
     */
    @Test
    void aRunCountsEachThreadsFlopsOverTheCpuTimeItRan() {
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        org.junit.jupiter.api.Assumptions.assumeTrue(mx.isCurrentThreadCpuTimeSupported() && mx.isThreadCpuTimeEnabled(), "this JVM gives no thread CPU time");
        int threads = 2 * Runtime.getRuntime().availableProcessors();
        java.util.concurrent.ConcurrentHashMap<Long, Long> perThread = new java.util.concurrent.ConcurrentHashMap<>();
        Roofline.FmaBlock busy = (iters, seed) -> {
            if (iters < 1 << 16) return 0f;                       // the warm-up before the clock
            assertEquals(1 << 16, iters, "rounds per timed call");
            perThread.merge(Thread.currentThread().threadId(), 1L, Long::sum);
            long until = mx.getCurrentThreadCpuTime() + 1_000_000, giveUp = System.nanoTime() + 2_000_000_000L;
            while (mx.getCurrentThreadCpuTime() < until) {
                if (System.nanoTime() > giveUp) throw new AssertionError("1 ms of this thread's CPU time took over 2 s");
                Thread.onSpinWait();
            }
            return 1f;
        };
        double g = Roofline.fmaRun(threads, 60, busy);
        assertEquals(threads, perThread.size(), "every thread ran");
        double perCall = (1 << 16) * 16 * 2.0 * FloatVector.SPECIES_PREFERRED.length();
        double cores = threads * perCall / 0.001 / 1e9;             // every thread at one call per ms of its CPU time
        assertTrue(g <= cores * 1.001, "GFLOP/s " + g + " above " + cores);
        assertTrue(g >= 0.8 * cores, "GFLOP/s " + g + " below 0.8 × " + cores + ": counted over the wall clock, as if sharing a core halved it");
    }

    @Test
    void theRateIsTheSumOfEachThreadsOverItsCpuTimeOrTheTotalOverTheWallClock() {
        // 100 over 1 s and 300 over 2 s of CPU time: 100 + 150
        assertEquals(250.0, Roofline.ratePerCore(new long[] {100, 300}, new long[] {1_000_000_000L, 2_000_000_000L}, 4.0), 1e-9);
        // a thread's CPU time unknown: all 400 over the 4 s of the wall clock
        assertEquals(100.0, Roofline.ratePerCore(new long[] {100, 300}, new long[] {1_000_000_000L, 0}, 4.0), 1e-9);
    }
}
