package org.tornadomla.fast;

import org.tornadomla.bench.Roofline;
import org.tornadomla.benchmarks.DriverArgs;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CyclicBarrier;

/**
 * java-fast's attention micro-kernels alone ({@link Gemm#scores}, {@link Gemm#values} with P as the absorbed path
 * holds it, [heads, capacity], and as the tiled path does, "valuesT": Sᵀ [rows, heads]), each over two 64-row tiles of
 * DeepSeek's 576-wide latent rows that stay in the core's L2, with no softmax, no partial sums and no memory traffic
 * around them: what a kernel reaches on its own, to set beside the same task inside a step ({@code ./mla bench
 * --roofline --breakdown}). Where the step falls short of the kernel alone, the time goes to what surrounds it
 * (the cache from memory, threads waiting on each other); where the kernel alone falls short, to the kernel.
 *
 * <p>Each kernel runs first on one thread, then on every thread at once (each on its own arrays), best of {@code
 * rounds} rounds of 100 ms per thread, against the FMA peak of all cores measured in the same run
 * ({@link Roofline#measure}) divided by the threads. Per-thread figures show a core that a shared host slows (on a
 * 2-vCPU Zen 5, 2026-12-04, one of two threads running the same compiled kernel ran at 0.65–0.75 of the other in
 * 4 of 5 JVMs, whatever the alignment of its arrays).
 *
 * <p>In the package of the kernels because they are package-private (the library does not export them); it runs
 * from the benchmarks' shaded jar, on the class path:
 * <pre>
 * java --add-modules jdk.incubator.vector -cp benchmarks/target/benchmarks.jar org.tornadomla.fast.KernelsAlone [rounds=20] [heads=128,16] [lines]
 * </pre>
 * {@code lines} times the values alone with the rows at four places in a 64-byte line instead.
 */
public final class KernelsAlone {
    private KernelsAlone() {
    }

    /** Cached rows per tile, as in {@link FastAttention#TILE}; two tiles (295 KB) stay in L2. */
    private static final int N = FastAttention.TILE, TILES = 2, W = Gemm.ROW, DC = 512, CAPACITY = 4096;

    /** One kernel over a thread's own arrays: run once over both tiles. */
    private interface Pass {
        void run();
    }

    public static void main(String[] args) throws Exception {
        int rounds = 20;
        int[] heads = {128, 16};
        boolean lines = false;
        DriverArgs a = DriverArgs.parse("KernelsAlone", "[rounds=20] [heads=128,16] [lines]", args, "rounds=", "heads=", "lines");
        rounds = a.integer("rounds", rounds, 1);
        heads = a.integers("heads", heads, 1);
        lines = a.has("lines");
        if (lines) {
            lineOffsets(heads, rounds);
            return;
        }
        int threads = Runtime.getRuntime().availableProcessors();
        Roofline.Limits limits = Roofline.measure();
        double perThread = limits.gflopPerS() / limits.threads();
        System.out.printf("java-fast micro-kernels alone, tiles of %d rows × %d floats (two per thread, in L2), best of %d × 100 ms%n", N, W, rounds);
        System.out.printf("FMA peak %.1f GFLOP/s on %d threads: %.1f per thread%n", limits.gflopPerS(), limits.threads(), perThread);
        System.out.println(FastExecutor.kernelChoice());
        System.out.printf("%-12s %-14s %s%n", "kernel", "1 thread", threads + " threads at once (each, % of its share of the peak)");
        for (int h : heads) {
            for (String kernel : new String[] {"scores", "values", "valuesT"}) {
                String name = kernel + " H" + h;
                double one = run(kernel, h, 1, rounds)[0];
                double[] all = run(kernel, h, threads, rounds);
                StringBuilder sb = new StringBuilder();
                for (double g : all) sb.append(String.format("%.1f (%.0f %%) ", g, 100 * g / perThread));
                System.out.printf("%-12s %6.1f (%2.0f %%)  %s%n", name, one, 100 * one / perThread, sb.toString().trim());
            }
        }
    }

    /** GFLOP/s of each of {@code threads} threads running the kernel at once, best round each. */
    private static double[] run(String kernel, int heads, int threads, int rounds) throws Exception {
        double[] best = new double[threads];
        CyclicBarrier start = new CyclicBarrier(threads);
        onThreads(threads, "kernels-alone", "kernel " + kernel, id -> {
            Pass pass = switch (kernel) {
                case "scores" -> scores(heads, id);
                default -> values(heads, id, kernel.equals("valuesT"));
            };
            double flops = 2.0 * TILES * N * heads * (kernel.equals("scores") ? W : DC);
            for (int i = 0; i < 2000; i++) pass.run();          // compiled before the clock starts
            for (int r = 0; r < rounds; r++) {
                start.await();
                best[id] = Math.max(best[id], gflops(pass, flops));
            }
        });
        return best;
    }

    /** What one thread of {@link #onThreads} runs, given its index. */
    interface ThreadBody {
        void run(int id) throws Exception;
    }

    /**
     * Runs {@code body} on {@code threads} new threads (named name-0, name-1, …) at once and waits for them all; the
     * first failure is thrown, as "what failed".
     */
    static void onThreads(int threads, String name, String what, ThreadBody body) throws InterruptedException {
        List<Thread> ts = new ArrayList<>();
        Throwable[] error = new Throwable[1];
        for (int t = 0; t < threads; t++) {
            int id = t;
            Thread th = new Thread(() -> {
                try {
                    body.run(id);
                } catch (Throwable e) {
                    synchronized (error) {
                        if (error[0] == null) error[0] = e;
                    }
                }
            }, name + "-" + t);
            ts.add(th);
            th.start();
        }
        for (Thread th : ts) th.join();
        if (error[0] != null) throw new IllegalStateException(what + " failed", error[0]);
    }

    /** Sᵀ = Qᵀ·K over each tile: heads padded to whole vectors, Qᵀ packed as the step packs it. */
    private static Pass scores(int heads, int seed) {
        int hp = Gemm.paddedHeads(heads);
        SplittableRandom r = new SplittableRandom(seed);
        float[] k = random(r, TILES * N * W), qt = random(r, W * hp), st = new float[N * hp];
        return () -> {
            for (int t = 0; t < TILES; t++) Gemm.scores(qt, 0, hp, k, t * N * W, W, N, st, 0);
        };
    }

    /**
     * O += P·K[:, :512] over each tile, P read in place as the absorbed path holds it ([heads, capacity]: a head's row
     * CAPACITY numbers long), or where {@code tiled} as the tiled path does (Sᵀ [tile rows, padded heads]: a row's heads
     * side by side).
     */
    private static Pass values(int heads, int seed, boolean tiled) {
        int hp = Gemm.paddedHeads(heads);
        SplittableRandom r = new SplittableRandom(seed);
        float[] k = random(r, TILES * N * W), p = random(r, tiled ? TILES * N * hp : heads * CAPACITY), o = new float[heads * DC];
        for (int i = 0; i < p.length; i++) p[i] *= 1e-3f;
        // P's strides per head and per cached row, and where tile t's P starts
        int ph = tiled ? 1 : CAPACITY, pj = tiled ? hp : 1, perTile = tiled ? N * hp : N;
        return () -> {
            for (int t = 0; t < TILES; t++) Gemm.values(p, t * perTile, ph, pj, heads, k, t * N * W, W, N, 0, DC, o, 0, DC);
        };
    }

    /**
     * {@code lines}: {@link Gemm#values} alone over one 128-row run (two tiles, as {@link FastAttention#VALUES_RUN} takes
     * them) of one large array, the rows at 0, 4, 8 and 12 floats past a point 4 MB into it (a whole number of lines);
     * one thread, rounds of 100 ms per offset, the offsets taking turns; the median and the best round. Rows of 576
     * floats all lie at the same place in a 64-byte line, so with 512-bit vectors at most one of the four puts every
     * load of the kernel inside one line and the others make each one straddle two. Java does not say where an array
     * lies; G1 places an array of half a heap region or more at a region's start, 16 bytes before its first element
     * with the usual object header, which makes the offset 12 the one on a line there (docs/cpu-kernels.md §9).
     */
    private static void lineOffsets(int[] heads, int rounds) {
        int n = 2 * N, cap = CAPACITY;
        float[] k = random(new SplittableRandom(1), 4 << 20);     // 16 MB
        System.out.printf("values alone over %d rows × %d floats of one %d MB array, one thread, rounds of 100 ms%n", n, W, k.length / (1 << 18));
        int[] shifts = {0, 4, 8, 12};
        for (int h : heads) {
            float[] p = random(new SplittableRandom(2), h * cap), o = new float[h * DC];
            for (int i = 0; i < p.length; i++) p[i] *= 1e-3f;
            double flops = 2.0 * n * h * DC;
            double[][] g = new double[shifts.length][rounds];
            for (int warm = 0; warm < 4000; warm++) Gemm.values(p, 0, cap, 1, h, k, (1 << 20) + shifts[warm % 4], W, n, 0, DC, o, 0, DC);
            for (int r = 0; r < rounds; r++) {
                for (int si = 0; si < shifts.length; si++) {
                    int at = (1 << 20) + shifts[si];
                    g[si][r] = gflops(() -> Gemm.values(p, 0, cap, 1, h, k, at, W, n, 0, DC, o, 0, DC), flops);
                }
            }
            for (int si = 0; si < shifts.length; si++) {
                System.out.printf("H%-4d rows from +%-2d floats: %s GFLOP/s%n", h, shifts[si], medianBest(g[si]));
            }
        }
    }

    /** GFLOP/s of pass (flops each) run over and over for 100 ms. */
    private static double gflops(Pass pass, double flops) {
        long t0 = System.nanoTime(), calls = 0;
        while (System.nanoTime() - t0 < 100_000_000L) {
            pass.run();
            calls++;
        }
        return calls * flops / (System.nanoTime() - t0);
    }

    private static String medianBest(double[] x) {
        double[] s = x.clone();
        Arrays.sort(s);
        return String.format("%.1f (best %.1f)", s[s.length / 2], s[s.length - 1]);
    }

    private static float[] random(SplittableRandom r, int n) {
        float[] a = new float[n];
        for (int i = 0; i < n; i++) a[i] = (float) r.nextDouble(-1, 1);
        return a;
    }
}
