package org.tornadomla.fast;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** SpinPool's count of each thread's time in a loop's bodies (SpinPool.BUSY), against the wall clock around the loop. */
class SpinPoolTest {
    /** Spins for about ms milliseconds (a sleep would count too: the count is wall time inside the body). */
    private static void spin(double ms) {
        long end = System.nanoTime() + (long) (ms * 1e6);
        while (System.nanoTime() < end) Thread.onSpinWait();
    }

    /** Runs loop with pool's counts bound to busy and returns its wall time in ms. */
    private static double counted(SpinPool pool, long[] busy, Runnable loop) {
        long[] wall = new long[1];
        ScopedValue.where(SpinPool.BUSY, new SpinPool.Busy(pool, busy)).run(() -> {
            long t0 = System.nanoTime();
            loop.run();
            wall[0] = System.nanoTime() - t0;
        });
        return wall[0] / 1e6;
    }

    @Test
    void eachThreadsTimeInTheBodiesAddsUpToTheWorkAndNoThreadExceedsTheLoop() {
        try (SpinPool pool = new SpinPool(2, "test")) {
            long[] busy = new long[2];
            double wallMs = counted(pool, busy, () -> pool.forEach(8, i -> spin(2)));
            double sumMs = (busy[0] + busy[1]) / 1e6;
            // 8 bodies of ≥ 2 ms: their sum is at least 16 ms, whichever thread ran them, and no more than both threads'
            // wall time; a thread cannot have been busy longer than the loop lasted
            assertTrue(sumMs >= 16, "bodies of 8 × 2 ms counted " + sumMs + " ms");
            assertTrue(sumMs <= 2 * wallMs + 0.5, sumMs + " ms counted in a loop of " + wallMs + " ms on 2 threads");
            for (long b : busy) assertTrue(b / 1e6 <= wallMs + 0.5, "a thread busy " + b / 1e6 + " ms in a loop of " + wallMs + " ms");
            // one index runs inline on the caller: its time is the caller's
            long[] inline = new long[2];
            counted(pool, inline, () -> pool.forEach(1, i -> spin(3)));
            assertTrue(inline[0] >= 3_000_000L && inline[1] == 0, "one index: caller " + inline[0] + " ns, worker " + inline[1] + " ns");
        }
    }

    @Test
    void aLoopNestedInACountedOneAndAnotherPoolsLoopsAreNotCountedAgain() {
        try (SpinPool pool = new SpinPool(2, "test"); SpinPool other = new SpinPool(3, "other")) {
            // an inline loop (one index) whose body runs a parallel loop: the caller's time is counted once, not twice
            long[] nested = new long[2];
            double wallMs = counted(pool, nested, () -> pool.forEach(1, i -> pool.forEach(4, j -> spin(1.5))));
            assertTrue(nested[0] / 1e6 <= wallMs + 0.5 && nested[0] / 1e6 >= 1.5, "caller " + nested[0] / 1e6 + " ms in a loop of " + wallMs + " ms");
            assertTrue(nested[1] == 0, "the nested loop's worker time was counted: " + nested[1] + " ns");
            // another pool's loop inside the binding (3 threads: it would not fit 2 slots) leaves the counts alone
            long[] mine = new long[2];
            counted(pool, mine, () -> other.forEach(6, i -> spin(1)));
            assertArrayEquals(new long[2], mine, "another pool's loop was counted");
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> {
            try (SpinPool pool = new SpinPool(2, "test")) {
                new SpinPool.Busy(pool, new long[1]);
            }
        });
        assertTrue(e.getMessage().contains("1 slots for 2 threads"), e.getMessage());
    }

    @Test
    void eachSlotIsOneThreadAndNoTwoThreadsShareOne() {
        try (SpinPool pool = new SpinPool(3, "test")) {
            int n = 64;
            int[] slots = new int[n];
            Thread[] byIndex = new Thread[n];
            pool.forEach(n, (slot, i) -> {
                slots[i] = slot;
                byIndex[i] = Thread.currentThread();
                spin(0.2);
            });
            java.util.Map<Integer, Thread> owner = new java.util.HashMap<>();
            for (int i = 0; i < n; i++) {
                assertTrue(slots[i] >= 0 && slots[i] < pool.threads(), "slot " + slots[i] + " of a pool of " + pool.threads());
                Thread before = owner.putIfAbsent(slots[i], byIndex[i]);
                assertTrue(before == null || before == byIndex[i], "slot " + slots[i] + " ran on two threads");
            }
            assertTrue(owner.get(0) == Thread.currentThread(), "slot 0 is the caller");
            // a loop run inline (one index) is the caller's: slot 0
            int[] one = {-1};
            pool.forEach(1, (slot, i) -> one[0] = slot);
            assertTrue(one[0] == 0, "an inline loop ran in slot " + one[0]);
        }
    }
}
