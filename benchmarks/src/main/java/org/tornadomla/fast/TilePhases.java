package org.tornadomla.fast;

import org.tornadomla.bench.Roofline;
import org.tornadomla.benchmarks.DriverArgs;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.concurrent.CyclicBarrier;

/**
 * Where a tile's time goes inside java-fast's decode loops: the tiled path's loop ({@link FastOnlineSoftmax#splitTiles}:
 * the touch of an f32 tile read in place, the scores, the online-softmax update with the rescale of the accumulators,
 * the values) and the absorbed path's values pass ({@link FastAttention#absorbedValues}: the touch, the values), each
 * phase timed with {@code System.nanoTime} around the calls the step makes on this machine (the touch where
 * {@link Vec#TOUCH} is on, in the tiled loop where {@link FastOnlineSoftmax#touchesTile} is, else the values reading the
 * next tile ahead), over the tiles the step takes (128 rows on an
 * AMD CPU, 64 on an Intel one) of DeepSeek's 576-wide rows. One thread per core, each over its share of a B1 cache of
 * {@code context} tokens (one KV split each, as the step runs at B1), so the tiles come from the L3 or memory as in
 * the step. The last half of the reps is timed; the first lets the JIT finish (with 300 reps in all, one thread of a
 * 2-vCPU Zen 5 still ran the 16-head loop 1.5× slower, every phase of it, in three runs of three). Per thread, with the
 * CPU it ended on: a CPU that runs slower than the other shows in every phase ({@link KernelsAlone}'s note).
 *
 * <p>Like {@link KernelsAlone} it lives in the kernels' package, which the library does not export:
 * <pre>
 * java --add-modules jdk.incubator.vector -cp benchmarks/target/benchmarks.jar org.tornadomla.fast.TilePhases [heads=16,128] [context=4096] [reps=1000]
 * </pre>
 */
public final class TilePhases {
    private TilePhases() {
    }

    /** The rows of a tile of an f32 cache read in place, as both loops take them on this machine (128 on AMD CPUs, 64 on Intel). */
    private static final int W = Gemm.ROW, DC = 512, TILE = FastAttention.VALUES_RUN * FastAttention.TILE;

    public static void main(String[] args) throws Exception {
        int[] heads = {16, 128};
        int context = 4096, reps = 1000;
        DriverArgs a = DriverArgs.parse("TilePhases", "[heads=16,128] [context=4096] [reps=1000]", args, "heads=", "context=", "reps=");
        heads = a.integers("heads", heads, 1);
        context = a.integer("context", context, 1);
        reps = a.integer("reps", reps, 2);
        int threads = Runtime.getRuntime().availableProcessors();
        if (context % (threads * TILE) != 0) a.fail("context= must be a multiple of " + threads * TILE + " (" + threads + " threads × " + TILE + "-row tiles), found " + context);
        Roofline.Limits limits = Roofline.measure();
        double perThread = limits.gflopPerS() / limits.threads();
        System.out.printf("java-fast's decode loops per %d-row tile, B1 T%d f32, %d threads (1/%d of the cache each), mean of the last %d reps%n",
                TILE, context, threads, threads, reps - reps / 2);
        System.out.printf("FMA peak %.1f GFLOP/s on %d threads: %.1f per thread%n", limits.gflopPerS(), limits.threads(), perThread);
        System.out.println(FastExecutor.kernelChoice());
        for (int h : heads) {
            for (String loop : new String[] {"tiled", "values"}) run(loop, h, context, reps, threads, perThread);
        }
    }

    private static void run(String loop, int heads, int context, int reps, int threads, double perThread) throws Exception {
        int hp = Gemm.paddedHeads(heads), rows = context / threads;
        SplittableRandom r = new SplittableRandom(heads);
        float[] k = new float[context * W];
        for (int i = 0; i < k.length; i++) k[i] = (float) r.nextDouble(-1, 1);
        float[] qt = new float[W * hp], probs = new float[heads * context];
        for (int i = 0; i < qt.length; i++) qt[i] = (float) r.nextDouble(-0.05, 0.05);
        for (int i = 0; i < probs.length; i++) probs[i] = (float) r.nextDouble(0, 1.0 / context);
        CyclicBarrier start = new CyclicBarrier(threads);
        String[] lines = new String[threads];
        KernelsAlone.onThreads(threads, "tile-phases", loop + " H" + heads, id -> {
            float[] st = new float[TILE * hp], acc = new float[heads * DC], stats = new float[3 * hp];
            long[] ns = new long[4];
            int lo = id * rows;
            for (int rep = 0; rep < reps; rep++) {
                if (rep == reps / 2) start.await();
                java.util.Arrays.fill(stats, 0f);
                for (int j0 = lo; j0 < lo + rows; j0 += TILE) {
                    int off = j0 * W;
                    long t0 = System.nanoTime();
                    if (loop.equals("tiled") ? FastOnlineSoftmax.touchesTile(hp) : Vec.TOUCH) Vec.touch(k, off, off + TILE * W);
                    long t1 = System.nanoTime(), t2 = t1, t3 = t1;
                    if (loop.equals("tiled")) {
                        Gemm.scores(qt, 0, hp, k, off, W, W, TILE, st, 0);
                        t2 = System.nanoTime();
                        FastOnlineSoftmax.updateAndRescale(st, TILE, hp, heads, stats, acc, DC, j0 == lo);
                        t3 = System.nanoTime();
                        Gemm.values(st, 0, 1, hp, heads, k, off, W, TILE, 0, DC, acc, 0, DC);
                    } else {
                        if (Vec.TOUCH) Gemm.values(probs, j0, context, 1, heads, k, off, W, TILE, 0, DC, acc, 0, DC);
                        else Gemm.valuesReadingAhead(probs, j0, context, 1, heads, k, off, W, TILE, 0, DC, acc, 0, DC);
                    }
                    long t4 = System.nanoTime();
                    if (rep >= reps / 2) {
                        ns[0] += t1 - t0;
                        ns[1] += t2 - t1;
                        ns[2] += t3 - t2;
                        ns[3] += t4 - t3;
                    }
                }
            }
            double tiles = (double) (reps - reps / 2) * (rows / TILE);
            double sf = 2.0 * TILE * heads * W, vf = 2.0 * TILE * heads * DC;
            StringBuilder sb = new StringBuilder(String.format("  %-6s H%-4d thread %d (cpu %s): touch %6.2f us", loop, heads, id, cpu(),
                    ns[0] / tiles / 1e3));
            if (loop.equals("tiled")) {
                sb.append(String.format(", scores %6.2f us (%3.0f %%), update %5.2f us", ns[1] / tiles / 1e3,
                        100 * sf / (ns[1] / tiles) / perThread, ns[2] / tiles / 1e3));
            }
            sb.append(String.format(", values %6.2f us (%3.0f %%); a tile %6.2f us", ns[3] / tiles / 1e3,
                    100 * vf / (ns[3] / tiles) / perThread, (ns[0] + ns[1] + ns[2] + ns[3]) / tiles / 1e3));
            lines[id] = sb.toString();
        });
        for (String l : lines) System.out.println(l);
    }

    /** The CPU this thread last ran on (/proc/thread-self/stat's 39th field), or "?" off Linux. */
    private static String cpu() {
        try {
            String st = Files.readString(Path.of("/proc/thread-self/stat"));
            return st.substring(st.lastIndexOf(')') + 2).split(" ")[36];
        } catch (Exception e) {
            return "?";
        }
    }
}
