package org.tornadomla.bench;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;



/**
 * This machine's limits as Java sees them: FMA throughput (Vector API, independent accumulators, all
 * cores) and memory read bandwidth (all cores summing arrays far larger than the caches). The attention
 * core is compared against these.
 */
public final class Roofline {
    private Roofline() {
    }

    public record Limits(double gflopPerS, double gbPerS, int threads, int vectorBits) {
    }

    private static final VectorSpecies<Float> S = FloatVector.SPECIES_PREFERRED;

    public static Limits measure() {
        int threads = Runtime.getRuntime().availableProcessors();
        double flops = best(() -> Math.max(fmaRun(threads, 300, Roofline::fmaBlock), fmaRun(threads, 300, Roofline::fmaBlockAgain)));
        double bw = best(() -> readRun(threads));
        return new Limits(flops, bw, threads, S.vectorBitSize());
    }

    /**
     * The best of at least three runs, and of more (at most eight) while the last one still raised the best by
     * over 3 %: a run of benchmarks/vs-torch.sh once measured half the FMA peak here (256.5 GFLOP/s against C's
     * 520.8 in the same minute), as if a core had been busy for a run or two.
     */
    private static double best(java.util.function.DoubleSupplier run) {
        double best = 0;
        for (int i = 0; i < 8; i++) {
            double r = run.getAsDouble();
            boolean raised = r > 1.03 * best;
            best = Math.max(best, r);
            if (i >= 2 && !raised) break;
        }
        return best;
    }

    /**
     * GFLOP/s of fused multiply-adds on registers, every core, for about {@code ms}: each thread calls
     * {@link #fmaBlock} (16 independent chains, enough to keep two FMA ports busy through their latency)
     * until the time is up. The block is a method of its own so that the JIT compiles it whole, not as an
     * on-stack replacement of a long loop (which measured half the rate here).
     *
     * <p>Each thread's rate is its FMAs over the CPU time it ran, where the JVM can tell (else over the wall time),
     * and the peak their sum: the cores' rate while they compute, not what a thread got of a core that something
     * else shared. On a 2-vCPU Zen 4 (2026-12-06) {@code mla bench --roofline} twice in 8 runs measured exactly half
     * the peak over the wall clock (117.2 against 230–234 GFLOP/s in the runs around it) and then printed 134 % of it
     * for a step; as if both threads had shared one core, which the wall clock cannot tell from a slow core. It did
     * not recur in 33 runs after, so this guards the likeliest cause, not a reproduced one. It covers sharing inside
     * this OS; time the host takes from a virtual CPU is left out of a thread's CPU time only where the guest accounts
     * it as steal time (KVM's paravirtual steal clock does). Threads that take turns on one core may each run at a
     * higher single-core clock than two busy cores do, so the sum can then read a little high.
     */
    static double fmaRun(int threads, long ms, FmaBlock block) {
        for (int w = 0; w < 20_000; w++) block.run(64, w);    // compiled by the JIT before the clock starts
        long[] done = new long[threads], cpuNanos = new long[threads];
        float[] sink = new float[threads];
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        boolean cpuClock = mx.isCurrentThreadCpuTimeSupported() && mx.isThreadCpuTimeEnabled();
        double seconds = onEveryCore(threads, t -> {
            long c0 = cpuClock ? mx.getCurrentThreadCpuTime() : 0;
            long end = System.nanoTime() + ms * 1_000_000;
            long n = 0;
            float s = 0;
            while (System.nanoTime() < end) {
                s += block.run(FMA_ITERS, t);
                n += FMA_ITERS;
            }
            done[t] = n;
            sink[t] = s;
            cpuNanos[t] = cpuClock ? mx.getCurrentThreadCpuTime() - c0 : 0;
        });
        if (Float.isNaN(sink[0])) throw new IllegalStateException();
        return ratePerCore(done, cpuNanos, seconds) * FMA_CHAINS * 2.0 * S.length() / 1e9;
    }

    /**
     * Σ over threads of done[t] / its CPU seconds, where each thread's CPU time is known (> 0); else the total over
     * the wall seconds (a thread whose core was shared then counts as slower than the core is).
     */
    static double ratePerCore(long[] done, long[] cpuNanos, double wallSeconds) {
        double sum = 0;
        long total = 0;
        boolean known = true;
        for (int t = 0; t < done.length; t++) {
            total += done[t];
            if (cpuNanos[t] <= 0) known = false;
            else sum += done[t] / (cpuNanos[t] / 1e9);
        }
        return known ? sum : total / wallSeconds;
    }

    /**
     * Runs body(t) for t = 0 … threads−1, each on a thread of its own, all released together; returns the
     * seconds from the release until the last one finished. (A parallel stream may run two parts one after
     * the other on one thread, which halved the measured peak in some runs.)
     */
    static double onEveryCore(int threads, java.util.function.IntConsumer body) {
        java.util.concurrent.CountDownLatch ready = new java.util.concurrent.CountDownLatch(threads);
        java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            int id = t;
            ts[t] = new Thread(() -> {
                ready.countDown();
                try {
                    go.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                body.accept(id);
            }, "roofline-" + t);
            ts[t].start();
        }
        try {
            ready.await();
            long t0 = System.nanoTime();
            go.countDown();
            for (Thread t : ts) t.join();
            return (System.nanoTime() - t0) / 1e9;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while measuring", e);
        }
    }

    private static final int FMA_ITERS = 1 << 16, FMA_CHAINS = 16;

    /** {@link #fmaBlock} or {@link #fmaBlockAgain}: {@code iters} rounds of 16 FMAs, and a sum of the chains. */
    @FunctionalInterface
    interface FmaBlock {
        float run(int iters, int seed);
    }

    /**
     * {@code iters} rounds of 16 independent vector FMAs (enough for two FMA ports of latency 4; 24 chains left the
     * JIT short of registers and measured 20 % less); returns a sum so that nothing is optimised away.
     */
    static float fmaBlock(int iters, int seed) {
        FloatVector m = FloatVector.broadcast(S, 0.9999999f), c = FloatVector.broadcast(S, 1e-7f);
        FloatVector a0 = FloatVector.broadcast(S, seed), a1 = a0.add(1), a2 = a0.add(2), a3 = a0.add(3), a4 = a0.add(4), a5 = a0.add(5);
        FloatVector a6 = a0.add(6), a7 = a0.add(7), b0 = a0.add(8), b1 = a0.add(9), b2 = a0.add(10), b3 = a0.add(11);
        FloatVector b4 = a0.add(12), b5 = a0.add(13), b6 = a0.add(14), b7 = a0.add(15);
        for (int i = 0; i < iters; i++) {     // an int counter: with a long one the JIT's loop measured 13 % slower
            a0 = a0.fma(m, c); a1 = a1.fma(m, c); a2 = a2.fma(m, c); a3 = a3.fma(m, c);
            a4 = a4.fma(m, c); a5 = a5.fma(m, c); a6 = a6.fma(m, c); a7 = a7.fma(m, c);
            b0 = b0.fma(m, c); b1 = b1.fma(m, c); b2 = b2.fma(m, c); b3 = b3.fma(m, c);
            b4 = b4.fma(m, c); b5 = b5.fma(m, c); b6 = b6.fma(m, c); b7 = b7.fma(m, c);
        }
        FloatVector sum = a0.add(a1).add(a2).add(a3).add(a4).add(a5).add(a6).add(a7)
                .add(b0).add(b1).add(b2).add(b3).add(b4).add(b5).add(b6).add(b7);
        return sum.reduceLanes(VectorOperators.ADD);
    }

    /**
     * {@link #fmaBlock} again, as a method of its own so that the JIT compiles it separately. On a 2-vCPU Zen 5
     * (2026-12-04) the first FMA loop a JVM compiled ran at half the rate for that JVM's whole life in 6 of 40 JVMs
     * (105–112 against 205–225 GFLOP/s on one thread, with no other load), and the loop compiled second never did (0 of
     * 80, whichever of the two came first): the FMA peak is the better of the two, not half of it at random.
     */
    static float fmaBlockAgain(int iters, int seed) {
        FloatVector m = FloatVector.broadcast(S, 0.9999999f), c = FloatVector.broadcast(S, 1e-7f);
        FloatVector a0 = FloatVector.broadcast(S, seed), a1 = a0.add(1), a2 = a0.add(2), a3 = a0.add(3), a4 = a0.add(4), a5 = a0.add(5);
        FloatVector a6 = a0.add(6), a7 = a0.add(7), b0 = a0.add(8), b1 = a0.add(9), b2 = a0.add(10), b3 = a0.add(11);
        FloatVector b4 = a0.add(12), b5 = a0.add(13), b6 = a0.add(14), b7 = a0.add(15);
        for (int i = 0; i < iters; i++) {
            a0 = a0.fma(m, c); a1 = a1.fma(m, c); a2 = a2.fma(m, c); a3 = a3.fma(m, c);
            a4 = a4.fma(m, c); a5 = a5.fma(m, c); a6 = a6.fma(m, c); a7 = a7.fma(m, c);
            b0 = b0.fma(m, c); b1 = b1.fma(m, c); b2 = b2.fma(m, c); b3 = b3.fma(m, c);
            b4 = b4.fma(m, c); b5 = b5.fma(m, c); b6 = b6.fma(m, c); b7 = b7.fma(m, c);
        }
        FloatVector sum = a0.add(a1).add(a2).add(a3).add(a4).add(a5).add(a6).add(a7)
                .add(b0).add(b1).add(b2).add(b3).add(b4).add(b5).add(b6).add(b7);
        return sum.reduceLanes(VectorOperators.ADD);
    }

    /** GB/s reading 256 MiB per thread with vector loads. */
    static double readRun(int threads) {
        int n = 64 << 20;                              // 64 Mi floats = 256 MiB per thread
        float[][] data = new float[threads][];
        for (int t = 0; t < threads; t++) {
            data[t] = new float[n];
            java.util.Arrays.fill(data[t], 1f);
        }
        double[] sink = new double[threads];
        for (int w = 0; w < 3; w++) sink[0] += sum(data[0], 1 << 16);   // compiled before the clock starts
        double seconds = onEveryCore(threads, t -> sink[t] = sum(data[t], n));
        if (sink[threads - 1] != (double) n) throw new IllegalStateException("read benchmark summed " + sink[threads - 1]);
        return (double) threads * n * 4 / seconds / 1e9;
    }

    /** The sum of a[0 … n) with four vector accumulators. */
    private static double sum(float[] a, int n) {
        FloatVector s0 = FloatVector.zero(S), s1 = s0, s2 = s0, s3 = s0;
        for (int i = 0; i <= n - 4 * S.length(); i += 4 * S.length()) {
            s0 = s0.add(FloatVector.fromArray(S, a, i));
            s1 = s1.add(FloatVector.fromArray(S, a, i + S.length()));
            s2 = s2.add(FloatVector.fromArray(S, a, i + 2 * S.length()));
            s3 = s3.add(FloatVector.fromArray(S, a, i + 3 * S.length()));
        }
        return s0.add(s1).add(s2).add(s3).reduceLanes(VectorOperators.ADD);
    }
}
