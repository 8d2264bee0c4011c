package org.tornadomla.bench;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

import java.util.stream.IntStream;

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
        double flops = best(() -> fmaRun(threads, 300));
        double bw = best(() -> readRun(threads));
        return new Limits(flops, bw, threads, S.vectorBitSize());
    }

    private static double best(java.util.function.DoubleSupplier run) {
        double best = 0;
        for (int i = 0; i < 3; i++) best = Math.max(best, run.getAsDouble());
        return best;
    }

    /** GFLOP/s of fused multiply-adds on registers, every core, for about {@code ms}. */
    static double fmaRun(int threads, long ms) {
        long iters = 1L << 22;
        long t0 = System.nanoTime();
        double[] sink = new double[threads];
        long[] done = new long[threads];
        IntStream.range(0, threads).parallel().forEach(t -> {
            FloatVector a0 = FloatVector.broadcast(S, 1f), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
            FloatVector a8 = a0, a9 = a0, a10 = a0, a11 = a0;
            FloatVector m = FloatVector.broadcast(S, 0.9999999f), c = FloatVector.broadcast(S, 1e-7f);
            long n = 0;
            long end = System.nanoTime() + ms * 1_000_000;
            while (System.nanoTime() < end) {
                for (long i = 0; i < iters / 64; i++) {
                    a0 = a0.fma(m, c); a1 = a1.fma(m, c); a2 = a2.fma(m, c); a3 = a3.fma(m, c);
                    a4 = a4.fma(m, c); a5 = a5.fma(m, c); a6 = a6.fma(m, c); a7 = a7.fma(m, c);
                    a8 = a8.fma(m, c); a9 = a9.fma(m, c); a10 = a10.fma(m, c); a11 = a11.fma(m, c);
                }
                n += iters / 64;
            }
            done[t] = n;
            sink[t] = a0.add(a1).add(a2).add(a3).add(a4).add(a5).add(a6).add(a7).add(a8).add(a9).add(a10).add(a11)
                    .reduceLanes(VectorOperators.ADD);
        });
        double seconds = (System.nanoTime() - t0) / 1e9;
        long total = 0;
        for (long d : done) total += d;
        if (Double.isNaN(sink[0])) throw new IllegalStateException();
        return total * 12.0 * 2 * S.length() / seconds / 1e9;
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
        long t0 = System.nanoTime();
        IntStream.range(0, threads).parallel().forEach(t -> {
            float[] a = data[t];
            FloatVector s0 = FloatVector.zero(S), s1 = s0, s2 = s0, s3 = s0;
            for (int i = 0; i <= n - 4 * S.length(); i += 4 * S.length()) {
                s0 = s0.add(FloatVector.fromArray(S, a, i));
                s1 = s1.add(FloatVector.fromArray(S, a, i + S.length()));
                s2 = s2.add(FloatVector.fromArray(S, a, i + 2 * S.length()));
                s3 = s3.add(FloatVector.fromArray(S, a, i + 3 * S.length()));
            }
            sink[t] = s0.add(s1).add(s2).add(s3).reduceLanes(VectorOperators.ADD);
        });
        double seconds = (System.nanoTime() - t0) / 1e9;
        if (sink[0] != (double) n) throw new IllegalStateException("read benchmark summed " + sink[0]);
        return (double) threads * n * 4 / seconds / 1e9;
    }
}
