package org.tornadomla.bench;

import org.junit.jupiter.api.Test;

import java.util.function.LongSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The warm-up of {@link Timing}: it lasts until the runs stop getting faster, and not much longer. */
class TimingTest {
    /** Busy-waits {@code ms} (sleeping is too coarse for a fraction of a millisecond). */
    private static void spin(double ms) {
        long end = System.nanoTime() + (long) (ms * 1e6);
        while (System.nanoTime() < end) Thread.onSpinWait();
    }

    @Test
    void aFiguresBudgetWarmsUpForOneAndAHalfSeconds() {
        // like a kernel C2 compiles late: 2 ms a run for the first 900 ms, then 0.2 ms; a budget of 400 ms (--quick)
        // once warmed up for 400 ms and timed only slow runs (their mean 2 ms)
        long first = System.nanoTime();
        Timing t = Timing.measure(() -> spin((System.nanoTime() - first) / 1e6 < 900 ? 2 : 0.2), 400, 2);
        assertTrue(t.meanMs() < 0.6, "mean " + t.meanMs() + " ms: slow runs were timed");
        assertTrue(t.bestMs() >= 0.2, "best " + t.bestMs());
    }

    @Test
    void aColdStepGetsTheFullWarmUpFromAHundredMilliseconds() {
        // the same late speed-up under a 200 ms budget: warm for the budget when the step has run before, for
        // 1.5 s when it is cold
        long first = System.nanoTime();
        Timing cold = Timing.measure(() -> spin((System.nanoTime() - first) / 1e6 < 900 ? 2 : 0.2), 200, 2, true);
        assertTrue(cold.meanMs() < 0.6, "cold: mean " + cold.meanMs() + " ms");
        long again = System.nanoTime();
        Timing warm = Timing.measure(() -> spin((System.nanoTime() - again) / 1e6 < 900 ? 2 : 0.2), 200, 2, false);
        assertTrue(warm.meanMs() > 1.5, "not cold: mean " + warm.meanMs() + " ms, so the warm-up was longer than the budget");
    }

    @Test
    void aColdStepOfAHundredMillisecondsWaitsForTheJitAfterItsMinimum() {
        // --grid's budget, 100 ms, on a cold step whose compiler works for 3 s (slow runs of 2 ms until then, 0.2
        // after): neither the 1.5 s minimum nor ten budgets after it are enough, and the windows must go on until the
        // JIT falls quiet (once none ran, and the slow runs were timed)
        long first = System.nanoTime();
        LongSupplier jit = () -> Math.min(3000, (System.nanoTime() - first) / 1_000_000) / 10;
        Timing t = Timing.measure(() -> spin((System.nanoTime() - first) / 1e6 < 3000 ? 2 : 0.2), 100, 2, true, jit);
        assertTrue(t.meanMs() < 0.6, "mean " + t.meanMs() + " ms: runs were timed while the JIT was still compiling");
        double seconds = (System.nanoTime() - first) / 1e9;
        assertTrue(seconds < 4.5, seconds + " s: the warm-up went on long after the JIT fell quiet");
    }

    @Test
    void aColdStepWarmsUpForAHundredRunsWhateverTheTime() {
        // like kernels that run interpreted until C2 has seen enough calls: 20 ms a run for the first 90 runs (1.8 s),
        // then 0.2 ms, the JIT's clock still (it moves when a compilation ends); with the 1.5 s minimum alone the
        // windows of one slow run each looked settled and slow runs were timed
        int[] runs = {0};
        Timing t = Timing.measure(() -> spin(runs[0]++ < 90 ? 20 : 0.2), 100, 2, true, () -> 0);
        assertTrue(t.meanMs() < 0.6, "mean " + t.meanMs() + " ms after " + runs[0] + " runs: interpreted runs were timed");
    }

    @Test
    void theWarmUpGoesOnWhileTheRunsGetFaster() {
        // a run takes 2 ms − 0.72 ms per second since the first, down to 0.2 ms at 2.5 s: after the 1.5 s minimum
        // each 100 ms window is 8 % or more faster than the one before, so the warm-up goes on to about 2.7 s;
        // a fixed 1.5 s warm-up would time runs of 0.92 … 0.63 ms
        long first = System.nanoTime();
        Timing t = Timing.measure(() -> spin(Math.max(0.2, 2 - 0.72 * (System.nanoTime() - first) / 1e9)), 400, 2);
        // 0.55: below the 0.63 of a fixed warm-up's best case, above what a host busy with other JVMs adds to the 0.2
        // ms spins (0.41 measured with two more JVMs on two cores)
        assertTrue(t.meanMs() < 0.55, "mean " + t.meanMs() + " ms: the warm-up stopped while the runs were still getting faster");
    }

    @Test
    void theWarmUpWaitsUntilTheJitFallsQuiet() {
        // like C2 compiling in the background for 2.5 s: every 4th run slow (2 ms against 0.2: the compiler holds a
        // core) while the JIT's clock rises by 10 % of the time, though the best run is the same from the start;
        // warmed up by the best run alone (1.5 s + two windows) the timed runs' mean would be about 0.65 ms
        long first = System.nanoTime();
        int[] runs = {0};
        LongSupplier jit = () -> Math.min(2500, (System.nanoTime() - first) / 1_000_000) / 10;
        Timing t = Timing.measure(() -> spin((System.nanoTime() - first) / 1e6 < 2500 && runs[0]++ % 4 == 0 ? 2 : 0.2), 400, 2, false, jit);
        assertTrue(t.meanMs() < 0.35, "mean " + t.meanMs() + " ms: runs were timed while the JIT was still compiling");
        double seconds = (System.nanoTime() - first) / 1e9;
        assertTrue(seconds < 4.5, seconds + " s: the warm-up went on after the JIT fell quiet");
    }

    @Test
    void aSteadyStepWarmsUpForTheMinimumAndTwoWindows() {
        long start = System.nanoTime();
        Timing t = Timing.measure(() -> spin(1), 400, 2);
        double seconds = (System.nanoTime() - start) / 1e9;
        // 1.5 s minimum + two windows of 100 ms + 400 ms timed = 2.1 s; a busy machine may stretch it a little
        assertTrue(seconds < 3.5, seconds + " s");
        assertTrue(t.iterations() >= 200 && t.meanMs() >= 1, t.toString());
    }

    @Test
    void aSlowStepStopsAtTheCap() {
        long start = System.nanoTime();
        Timing t = Timing.measure(() -> spin(150), 50, 2);
        double seconds = (System.nanoTime() - start) / 1e9;
        // warm-up: one run (past the 50 ms minimum), windows of one run until 10 budgets (500 ms) after the minimum
        // have passed: at most 5 runs; then the 2 timed runs: 7 runs, 1.05 s
        assertTrue(seconds < 1.6, seconds + " s");
        assertEquals(2, t.iterations());
    }
}
