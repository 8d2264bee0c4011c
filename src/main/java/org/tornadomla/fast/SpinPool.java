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
 * <p>Where the caller has bound {@link #BUSY} to an array of {@link #threads()} longs, each job adds to it the
 * nanoseconds each thread spent in the loop's bodies (index 0 the caller, t + 1 worker t): a task's wall time less a
 * thread's busy time is what that thread waited, for the others or for work ({@code mla bench --breakdown}).
 */
final class SpinPool implements AutoCloseable {
    /** How long an idle worker spins before it parks (system property tornadomla.fast.spinMs). */
    static final long SPIN_MS = Long.getLong("tornadomla.fast.spinMs", 50);

    /** Where the calling thread collects each thread's time in loop bodies (see the class comment), or unbound. */
    static final ScopedValue<long[]> BUSY = ScopedValue.newInstance();

    private static final class Job {
        final int n;
        final IntConsumer body;
        final AtomicInteger next = new AtomicInteger(), done = new AtomicInteger();
        /** Busy nanoseconds per thread, or null; each slot written by its own thread before it counts an index done. */
        final long[] busy;
        volatile Throwable error;

        Job(int n, IntConsumer body, long[] busy) {
            this.n = n;
            this.body = body;
            this.busy = busy;
        }

        void work(int slot) {
            int i;
            while ((i = next.getAndIncrement()) < n) {
                long t0 = busy != null ? System.nanoTime() : 0;
                try {
                    body.accept(i);
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
        if (n <= 0) return;
        if (n == 1 || workers.length == 0 || INSIDE.get() == this || closed || !busy.compareAndSet(false, true)) {
            // inline: on the caller, whose time counts in slot 0 unless this is a worker's nested loop (counted already)
            long[] into = BUSY.isBound() && INSIDE.get() != this ? BUSY.get() : null;
            long t0 = into != null ? System.nanoTime() : 0;
            for (int i = 0; i < n; i++) body.accept(i);
            if (into != null) into[0] += System.nanoTime() - t0;
            return;
        }
        try {
            runJob(n, body);
        } finally {
            busy.set(false);
        }
    }

    private void runJob(int n, IntConsumer body) {
        long[] into = BUSY.isBound() ? BUSY.get() : null;
        if (into != null && into.length < threads()) throw new IllegalArgumentException("SpinPool.BUSY holds " + into.length + " slots for " + threads() + " threads");
        Job j = new Job(n, body, into);
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
