package org.tornadomla.fast;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntConsumer;

/**
 * A parallel-for for java-fast's kernels whose workers stay awake between kernels: after a job they spin
 * (Thread.onSpinWait) for {@link #SPIN_MS} before they park. A decode step is a handful of kernels of 0.05 – 3 ms
 * each; a parked thread can take a millisecond to wake on a virtual machine (measured here: two threads
 * starting one half each of a 2.6 ms kernel finished after 2.8 ms, not 1.3), which costs more than the
 * kernel gains from the second core. OpenMP runtimes spin the same way (PyTorch's included).
 *
 * <p>The caller runs indices too; a worker that is asked for nested parallelism runs it inline, and so does a
 * second caller while a job runs (one pool may serve several executors' threads). The first exception of a
 * job is rethrown in the caller after every index has finished.
 *
 * <p>Where the caller has bound {@link #BUSY} to this pool and an array of {@link #threads()} longs, each job adds
 * to it the nanoseconds each thread spent in the loop's bodies (index 0 the caller, t + 1 worker t): what a task's
 * wall time has beyond a thread's is time that thread waited, started late or, for the caller, spent outside the loops
 * ({@code mla bench --breakdown}). Another pool's loops on the same thread leave it alone, and a loop nested in a
 * counted one is not counted again.
 */
final class SpinPool implements AutoCloseable {
    /** How long an idle worker spins before it parks (system property tornadomla.fast.spinMs). */
    static final long SPIN_MS = Long.getLong("tornadomla.fast.spinMs", 50);

    /** A pool and where its loops add each thread's time in their bodies (see the class comment). */
    record Busy(SpinPool pool, long[] nanos) {
        Busy {
            if (nanos.length < pool.threads()) throw new IllegalArgumentException("Busy holds " + nanos.length + " slots for " + pool.threads() + " threads");
        }
    }

    /** Bound by a caller that wants its loops on a pool counted ({@link Busy}); bound to null inside a counted inline loop. */
    static final ScopedValue<Busy> BUSY = ScopedValue.newInstance();

    /** This pool's counts where the calling thread has bound them, else null. */
    private long[] counted() {
        Busy b = BUSY.isBound() ? BUSY.get() : null;
        return b != null && b.pool() == this ? b.nanos() : null;
    }

    /**
     * A loop body told which thread runs it: slot 0 the caller, t + 1 worker t, and 0 for every index of a loop run
     * inline (a worker's nested loop, or a second caller's while the pool is busy). A slot names a thread within one
     * loop only, so an array indexed by slot must belong to the thread that called {@link #forEach(int, SlotConsumer)}.
     */
    interface SlotConsumer {
        void accept(int slot, int index);
    }

    private static final class Job {
        final int n;
        final SlotConsumer body;
        final AtomicInteger next = new AtomicInteger(), done = new AtomicInteger();
        /** Busy nanoseconds per thread, or null; each slot written by its own thread before it counts an index done. */
        final long[] busy;
        volatile Throwable error;

        Job(int n, SlotConsumer body, long[] busy) {
            this.n = n;
            this.body = body;
            this.busy = busy;
        }

        void work(int slot) {
            int i;
            while ((i = next.getAndIncrement()) < n) {
                long t0 = busy != null ? System.nanoTime() : 0;
                try {
                    body.accept(slot, i);
                } catch (Throwable t) {
                    if (error == null) error = t;
                } finally {
                    if (busy != null) busy[slot] += System.nanoTime() - t0;
                    done.incrementAndGet();
                }
            }
        }
    }

    private final Thread[] workers;
    private final long spinNanos;
    private volatile Job job;
    private volatile boolean closed;
    /** One job at a time: a second caller meanwhile (another graph on another thread) runs its loop inline. */
    private final java.util.concurrent.atomic.AtomicBoolean busy = new java.util.concurrent.atomic.AtomicBoolean();
    private static final ThreadLocal<SpinPool> INSIDE = new ThreadLocal<>();

    /** A pool of {@code threads} (the caller counts as one: threads − 1 workers are started). */
    SpinPool(int threads, String name) {
        this.spinNanos = SPIN_MS * 1_000_000;
        this.workers = new Thread[Math.max(0, threads - 1)];
        for (int t = 0; t < workers.length; t++) {
            int slot = t + 1;
            workers[t] = new Thread(() -> loop(slot), name + "-" + (t + 1));
            workers[t].setDaemon(true);
            workers[t].start();
        }
    }

    int threads() {
        return workers.length + 1;
    }

    /** body(i) for i = 0 … n−1, spread over the caller and the workers; returns when all are done. */
    void forEach(int n, IntConsumer body) {
        forEach(n, (slot, i) -> body.accept(i));
    }

    /**
     * body(slot, i) for i = 0 … n−1, spread as {@link #forEach(int, IntConsumer)} does; slot &lt; {@link #threads()}
     * names the thread, so that a body can add into that thread's own part of an array: within this loop no two
     * threads share a slot ({@link SlotConsumer}).
     */
    void forEach(int n, SlotConsumer body) {
        if (n <= 0) return;
        if (n == 1 || workers.length == 0 || INSIDE.get() == this || closed || !busy.compareAndSet(false, true)) {
            // inline, on this thread: the caller's time (slot 0), unless this is a worker's nested loop, counted already;
            // loops nested in it are not counted again (BUSY bound to null for them)
            long[] into = counted();
            if (into == null || INSIDE.get() == this) {
                for (int i = 0; i < n; i++) body.accept(0, i);
                return;
            }
            long t0 = System.nanoTime();
            try {
                ScopedValue.where(BUSY, null).run(() -> {
                    for (int i = 0; i < n; i++) body.accept(0, i);
                });
            } finally {
                into[0] += System.nanoTime() - t0;
            }
            return;
        }
        try {
            runJob(n, body);
        } finally {
            busy.set(false);
        }
    }

    /**
     * body(slot, i) for i = 0 … n−1, each index once, shared out as threads free up: [0, n) is cut into one stretch
     * per thread, a thread walks its stretch from the front (in order, so its reads follow one another in memory), and a
     * thread whose stretch is done takes indices from the back of the stretch with the most left ({@link #claim}). A
     * thread that runs slower then takes fewer indices instead of holding up the loop. Slots as for {@link
     * #forEach(int, SlotConsumer)}.
     */
    void forEachStretched(int n, SlotConsumer body) {
        if (n <= 0) return;
        int t = threads();
        java.util.concurrent.atomic.AtomicLongArray stretches = new java.util.concurrent.atomic.AtomicLongArray(t);
        for (int s = 0; s < t; s++) stretches.set(s, ((long) n * s / t) << 32 | ((long) n * (s + 1) / t));
        forEach(t, (slot, stretch) -> {
            for (int i; (i = claim(stretches, stretch)) >= 0; ) body.accept(slot, i);
        });
    }

    /**
     * The next index of stretch {@code own} from its front, else one from the back of the stretch with the most left,
     * or −1 when none is left. A stretch is [lo, hi) packed as lo &lt;&lt; 32 | hi; its owner takes lo, others hi − 1,
     * each by compare-and-set, so every index is taken once and the owner takes its own in order.
     */
    static int claim(java.util.concurrent.atomic.AtomicLongArray stretches, int own) {
        while (true) {
            long v = stretches.get(own);
            int lo = (int) (v >>> 32), hi = (int) v;
            if (lo >= hi) break;
            if (stretches.compareAndSet(own, v, (long) (lo + 1) << 32 | hi)) return lo;
        }
        while (true) {
            int victim = -1, most = 0;
            for (int t = 0; t < stretches.length(); t++) {
                long v = stretches.get(t);
                int left = (int) v - (int) (v >>> 32);
                if (left > most) {
                    most = left;
                    victim = t;
                }
            }
            if (victim < 0) return -1;
            long v = stretches.get(victim);
            int lo = (int) (v >>> 32), hi = (int) v;
            if (lo < hi && stretches.compareAndSet(victim, v, (long) lo << 32 | (hi - 1))) return hi - 1;
        }
    }

    private void runJob(int n, SlotConsumer body) {
        Job j = new Job(n, body, counted());
        job = j;
        for (Thread w : workers) LockSupport.unpark(w);      // parked ones wake; spinning ones see the job anyway
        INSIDE.set(this);
        try {
            j.work(0);
        } finally {
            INSIDE.remove();
        }
        while (j.done.get() < n) Thread.onSpinWait();
        if (job == j) job = null;
        Throwable e = j.error;
        if (e instanceof RuntimeException r) throw r;
        if (e instanceof Error err) throw err;
        if (e != null) throw new IllegalStateException(e);
    }

    private void loop(int slot) {
        INSIDE.set(this);
        Job last = null;
        long idleSince = System.nanoTime();
        while (!closed) {
            Job j = job;
            if (j != null && j != last) {
                j.work(slot);
                last = j;
                idleSince = System.nanoTime();
            } else if (System.nanoTime() - idleSince < spinNanos) {
                Thread.onSpinWait();
            } else {
                LockSupport.park(this);
                idleSince = System.nanoTime();
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        for (Thread w : workers) LockSupport.unpark(w);
    }
}
