package org.tornadomla.fast;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
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

    @Test
    void forEachStretchedRunsEveryIndexOnceOnSlotsOfThePool() {
        try (SpinPool pool = new SpinPool(3, "test")) {
            for (int n : new int[] {0, 1, 2, 7, 1000}) {
                java.util.concurrent.atomic.AtomicIntegerArray seen = new java.util.concurrent.atomic.AtomicIntegerArray(Math.max(n, 1));
                boolean[] badSlot = new boolean[1];
                pool.forEachStretched(n, (slot, i) -> {
                    if (slot < 0 || slot >= pool.threads()) badSlot[0] = true;
                    seen.incrementAndGet(i);
                    spin(0.01);
                });
                assertTrue(!badSlot[0], "a slot outside the pool");
                for (int i = 0; i < n; i++) assertTrue(seen.get(i) == 1, "n " + n + ": index " + i + " ran " + seen.get(i) + " times");
            }
        }
    }

    @Test
    void everyRunIsClaimedOnceAndAThreadReadsItsOwnStretchInOrder() throws Exception {
        // one thread alone: its stretch [0, 5) in order, then the other's [5, 9) from the back
        java.util.concurrent.atomic.AtomicLongArray s = new java.util.concurrent.atomic.AtomicLongArray(new long[] {0L << 32 | 5, 5L << 32 | 9});
        java.util.List<Integer> alone = new java.util.ArrayList<>();
        for (int u; (u = SpinPool.claim(s, 0)) >= 0; ) alone.add(u);
        assertEquals(java.util.List.of(0, 1, 2, 3, 4, 8, 7, 6, 5), alone);
        // three threads racing over 3 stretches of 20,000 units: each unit once; each thread's own units in order
        int n = 60_000, threads = 3;
        for (int round = 0; round < 5; round++) {
            java.util.concurrent.atomic.AtomicLongArray st = new java.util.concurrent.atomic.AtomicLongArray(threads);
            for (int t = 0; t < threads; t++) st.set(t, ((long) n * t / threads) << 32 | ((long) n * (t + 1) / threads));
            java.util.concurrent.atomic.AtomicIntegerArray owner = new java.util.concurrent.atomic.AtomicIntegerArray(n);
            for (int u = 0; u < n; u++) owner.set(u, -1);
            Thread[] ts = new Thread[threads];
            String[] problem = new String[threads];
            for (int t = 0; t < threads; t++) {
                int me = t;
                ts[t] = new Thread(() -> {
                    int last = -1, lo = n * me / threads, hi = n * (me + 1) / threads;
                    for (int u; (u = SpinPool.claim(st, me)) >= 0; ) {
                        if (!owner.compareAndSet(u, -1, me)) problem[me] = "unit " + u + " claimed twice";
                        if (u >= lo && u < hi) {
                            if (u < last) problem[me] = "own stretch out of order: " + u + " after " + last;
                            last = u;
                        }
                    }
                });
            }
            for (Thread x : ts) x.start();
            for (Thread x : ts) x.join();
            for (String p : problem) org.junit.jupiter.api.Assertions.assertNull(p);
            for (int u = 0; u < n; u++) assertTrue(owner.get(u) >= 0, "unit " + u + " never claimed");
        }
    }
}
