package org.tornadomla.bench;

import java.util.Arrays;

/**
 * The one timing harness of {@code mla bench}, {@code mla ladder} and the whole-layer measurement, shaped like
 * a JMH average-time run in one fork: a warm-up (at least one run, and until a fifth of the budget but at least
 * 1.5 s, or the whole budget if it is shorter, has passed: C2 compiles java-fast's micro-kernels during the
 * first second, TornadoVM its kernels on the first run), then timed runs until the budget is spent (at least
 * {@code minIterations}), each timed on its own. The mean is what the tables report (JMH's score); the median
 * and the best show how noisy the machine was.
 */
public record Timing(double meanMs, double medianMs, double bestMs, int iterations) {
    /** The shortest warm-up of a budget at least this long. */
    static final double WARM_UP_MS = 1500;

    public static Timing measure(Runnable step, double budgetMs, int minIterations) {
        long w0 = System.nanoTime();
        do {
            step.run();
        } while ((System.nanoTime() - w0) / 1e6 < Math.max(budgetMs / 5, Math.min(budgetMs, WARM_UP_MS)));
        long[] ns = new long[64];
        int n = 0;
        long start = System.nanoTime();
        do {
            long t0 = System.nanoTime();
            step.run();
            if (n == ns.length) ns = Arrays.copyOf(ns, 2 * n);
            ns[n++] = System.nanoTime() - t0;
        } while (n < Math.max(1, minIterations) || (System.nanoTime() - start) / 1e6 < budgetMs);
        long total = 0;
        for (int i = 0; i < n; i++) total += ns[i];
        long[] sorted = Arrays.copyOf(ns, n);
        Arrays.sort(sorted);
        double median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
        return new Timing(total / 1e6 / n, median / 1e6, sorted[0] / 1e6, n);
    }
}
