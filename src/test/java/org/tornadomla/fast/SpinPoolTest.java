package org.tornadomla.fast;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** SpinPool's count of each thread's time in a loop's bodies (SpinPool.BUSY), against the wall clock around the loop. */
class SpinPoolTest {
    /** Spins for about ms milliseconds (a sleep would also count: the count is wall time inside the body). */
    private static void spin(double ms) {
        long end = System.nanoTime() + (long) (ms * 1e6);
        while (System.nanoTime() < end) Thread.onSpinWait();
    }

    @Test
    void eachThreadsTimeInTheBodiesAddsUpToTheWorkAndNoThreadExceedsTheLoop() {
        try (SpinPool pool = new SpinPool(2, "test")) {
            long[] busy = new long[2];
            long[] wall = new long[1];
            ScopedValue.where(SpinPool.BUSY, busy).run(() -> {
                long t0 = System.nanoTime();
                pool.forEach(8, i -> spin(2));
                wall[0] = System.nanoTime() - t0;
            });
            double sumMs = (busy[0] + busy[1]) / 1e6, wallMs = wall[0] / 1e6;
            // 8 bodies of ≥ 2 ms: their sum is at least 16 ms, whichever thread ran them, and no more than both threads'
            // wall time; a thread cannot have been busy longer than the loop lasted
            assertTrue(sumMs >= 16, "bodies of 8 × 2 ms counted " + sumMs + " ms");
            assertTrue(sumMs <= 2 * wallMs + 0.5, sumMs + " ms counted in a loop of " + wallMs + " ms on 2 threads");
            for (long b : busy) assertTrue(b / 1e6 <= wallMs + 0.5, "a thread busy " + b / 1e6 + " ms in a loop of " + wallMs + " ms");
            // one index runs inline on the caller: its time is the caller's
            long[] inline = new long[2];
            ScopedValue.where(SpinPool.BUSY, inline).run(() -> pool.forEach(1, i -> spin(3)));
            assertTrue(inline[0] >= 3_000_000L && inline[1] == 0, "one index: caller " + inline[0] + " ns, worker " + inline[1] + " ns");
            // unbound, nothing is counted and nothing fails; an array too short for the pool's threads is refused
            pool.forEach(4, i -> spin(0.1));
            assertEquals(0, inline[1]);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> ScopedValue.where(SpinPool.BUSY, new long[1]).run(() -> pool.forEach(4, i -> spin(0.1))));
            assertTrue(e.getMessage().contains("1 slots for 2 threads"), e.getMessage());
        }
    }
}
