package org.tornadomla.bench;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.function.LongSupplier;

/**
 * The one timing harness of {@code mla bench}, {@code mla ladder} and the whole-layer measurement, shaped like
 * a JMH average-time run in one fork: a warm-up, then timed runs until the budget is spent (at least
 * {@code minIterations}), each timed on its own. The mean is what the tables report (JMH's score); the median
 * and the best show how noisy the machine was.
 *
 * <p>The warm-up runs at least once and for a fifth of the budget but at least 1.5 s ({@link #WARM_UP_MS}):
 * C2 compiles java-fast's micro-kernels in the first second or two, and the 400 ms warm-up that {@code --quick}
 * once had showed a first java-fast shape slower than the sequential reference (25 ms against 11 ms a step:
 * interpreted and C1 code runs steadily for a while, so no test of stability can tell that C2 is still to
 * come). Budgets below {@link #FIGURES_MS} warm up for the budget, unless the caller says the step is cold
 * (its first timing in this JVM, {@link DecodeBench#time}) and the budget is at least {@link #COLD_MS}:
 * {@code --budget-ms 200} had shown a first shape at 59 ms a step against 0.86 for the next; tests, with
 * budgets of tens of milliseconds, check and do not time. Then the warm-up goes on in windows (a quarter of the budget, 25 to 250 ms) while the runs keep
 * getting faster or the JIT is still compiling, until two windows in a row have their best run within 3 % of the
 * best before them (caches and a device's first runs settle gradually) and the JIT compiled for at most 2 % of
 * the window ({@link #JIT_QUIET}), ending anyway at {@link #WARM_UP_CAP_MS} where the warm-up is full, else ten
 * budgets after the minimum (and by the cap). Ten budgets counted from the start had left no window at all to a cold
 * step of 100 or 150 ms, whose minimum is 1.5 s: {@code mla bench --grid}, 100 ms a shape, timed a first B1 H16 T1024
 * step at 42–61 ms against 0.26 ms with a budget of 400. That step's kernels ran interpreted for longer than the
 * minimum: the Vector API without C2 took 25–350 ms a step, so 24 steps ran in the first 2.7 s, too few for C2, and
 * windows of one slow run each looked settled (the JIT's clock moves when a compilation ends). So a cold step also
 * warms up for at least {@link #COLD_RUNS} runs, within the cap. The JIT test
 * is there because a compilation takes a core from the step without changing its best run: the B1 H128 T4096
 * java-fast step, warmed up by the best run alone, timed 5.03–5.17 ms with the default budget and 4.62–4.65
 * with a four times longer one; windows of 250 ms in which C2 compiled for 41, 62 or 102 ms ran at 5.1, 5.5
 * and 5.7 ms a step against 4.5–4.7 in quiet ones, and C2 went on compiling for 6 s after the first step.
 */
public record Timing(double meanMs, double medianMs, double bestMs, int iterations) {
    /** The shortest warm-up of a budget of at least {@link #FIGURES_MS}. */
    static final double WARM_UP_MS = 1500;
    /** Budgets from this one on (--quick's) time figures: they get the full {@link #WARM_UP_MS}. */
    static final double FIGURES_MS = 400;
    /** Budgets from this one on get the full warm-up for a cold step. */
    public static final double COLD_MS = 100;

    /** The kinds of step timed in this JVM already (see {@link #firstOfKind}). */
    private static final java.util.Set<String> TIMED = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /**
     * Whether a step of this kind (the executor class and what selects its kernels) is timed for the first time in
     * this JVM: its kernels are not compiled yet, so it is cold ({@link #measure(Runnable, double, int, boolean)}).
     */
    public static boolean firstOfKind(String kind) {
        return TIMED.add(kind);
    }

    /**
     * The fewest warm-up runs of a cold step, within the cap: a step's kernels that C2 has not compiled yet can take
     * 100 times as long, so the minimum time alone may hold too few runs for C2 to come to them (see the class comment).
     */
    static final int COLD_RUNS = 100;

    /** The longest warm-up, unless the first windows alone take longer. */
    static final double WARM_UP_CAP_MS = 8000;
    /** A window whose best run is at least this fraction of the best before it has stopped getting faster. */
    static final double STABLE = 0.97;

    /** The most a settled warm-up window may have spent compiling, as a fraction of the window. */
    static final double JIT_QUIET = 0.02;

    public static Timing measure(Runnable step, double budgetMs, int minIterations) {
        return measure(step, budgetMs, minIterations, false);
    }

    /** As {@link #measure(Runnable, double, int)}; {@code cold}: the step's code has not run in this JVM yet. */
    public static Timing measure(Runnable step, double budgetMs, int minIterations, boolean cold) {
        return measure(step, budgetMs, minIterations, cold, Timing::jitMillis);
    }

    /**
     * A warning line where other work holds the CPUs (a load average above half the processors: the timings will be
     * noisy), else null; read from /proc/loadavg, nothing said where there is none.
     */
    public static String busyHost() {
        try {
            double load = Double.parseDouble(java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg")).split(" ")[0]);
            int cpus = Runtime.getRuntime().availableProcessors();
            if (load > 0.5 * cpus) {
                return String.format(java.util.Locale.ROOT, "warning: the load average is %.1f on %d processors: other work is running, and the timings will be noisy", load, cpus);
            }
        } catch (java.io.IOException | RuntimeException e) {
            // no /proc/loadavg: nothing to say
        }
        return null;
    }

    /** Milliseconds this JVM's JIT compilers have worked so far, or -1 where the JVM does not say. */
    static long jitMillis() {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        return jit != null && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : -1;
    }

    /** As {@link #measure(Runnable, double, int, boolean)}, with the JIT's compile time read from {@code jitMs}. */
    static Timing measure(Runnable step, double budgetMs, int minIterations, boolean cold, LongSupplier jitMs) {
        long w0 = System.nanoTime();
        boolean full = budgetMs >= FIGURES_MS || (cold && budgetMs >= COLD_MS);
        double minWarm = Math.max(budgetMs / 5, full ? WARM_UP_MS : budgetMs);
        double cap = full ? Math.max(minWarm, WARM_UP_CAP_MS) : Math.min(minWarm + 10 * budgetMs, Math.max(minWarm, WARM_UP_CAP_MS));
        double window = Math.min(250, Math.max(25, budgetMs / 4));
        long best = Long.MAX_VALUE;
        int runs = 0, minRuns = cold ? COLD_RUNS : 1;
        do {
            best = Math.min(best, timed(step));
            runs++;
        } while ((System.nanoTime() - w0) / 1e6 < minWarm || runs < minRuns && (System.nanoTime() - w0) / 1e6 < cap);
        for (int stable = 0; stable < 2 && (System.nanoTime() - w0) / 1e6 < cap; ) {
            long wStart = System.nanoTime(), wBest = Long.MAX_VALUE, jit0 = jitMs.getAsLong();
            do {
                wBest = Math.min(wBest, timed(step));
            } while ((System.nanoTime() - wStart) / 1e6 < window);
            long jit1 = jitMs.getAsLong();
            boolean jitQuiet = jit0 < 0 || jit1 < 0 || jit1 - jit0 <= JIT_QUIET * (System.nanoTime() - wStart) / 1e6;
            stable = wBest >= STABLE * best && jitQuiet ? stable + 1 : 0;
            best = Math.min(best, wBest);
        }
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

    private static long timed(Runnable step) {
        long t0 = System.nanoTime();
        step.run();
        return System.nanoTime() - t0;
    }
}
