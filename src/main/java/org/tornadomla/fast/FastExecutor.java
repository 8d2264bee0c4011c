package org.tornadomla.fast;

import org.tornadomla.MlaException;
import org.tornadomla.graph.JvmExecutor;
import org.tornadomla.graph.KernelGraph;
import org.tornadomla.graph.KernelTable;
import org.tornadomla.kernels.Absorb;
import org.tornadomla.kernels.AbsorbedAttention;
import org.tornadomla.kernels.Dequantize;
import org.tornadomla.kernels.Indexer;
import org.tornadomla.kernels.NaiveAttention;
import org.tornadomla.kernels.OnlineSoftmax;
import org.tornadomla.kernels.Projections;
import org.tornadomla.kernels.Softmax;
import org.tornadomla.kernels.SparseAttention;
import org.tornadomla.kernels.TopK;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.reflect.Method;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinTask;

/**
 * Runs a kernel graph on the JVM with the Vector API kernel families of this package (multi-threaded,
 * vectorised: {@link FastProjections}, {@link FastAbsorb}, {@link FastAttention}, {@link FastOnlineSoftmax},
 * {@link FastNaive}, {@link FastIndexer} and {@link FastSparseAttention} for DeepSeek-V3.2's sparse attention, and
 * {@link WeightKernels} for bf16 and FP8 weights) in place of the
 * reference kernels paired with them ({@link #kernels()}), and the reference kernels for the rest (the cheap
 * ones: norms, RoPE, cache append). Results match the reference within float rounding (the sums are taken
 * in another order).
 *
 * <p>One executor may be shared by threads that run different graphs at the same time: it holds no per-run
 * state (the kernel pairs are fixed when the class loads), and the kernels keep their scratch per thread.
 * (One graph, like one {@code MlaLayer}, must not run in two threads at once: its buffers are shared.)
 */
public final class FastExecutor extends JvmExecutor {
    /**
     * Each heavy reference kernel and its Vector API version (same parameters, checked at compile time). A
     * holder class, so that a JVM without the Vector API module gets the constructor's message rather than
     * a class-loading error.
     */
    private static final class Fast {
        static final KernelTable KERNELS = new KernelTable()
                .pair(Projections::matVec, FastProjections::matVec)
                .pair(Projections::matMul, FastProjections::matMul)
                .pair(Absorb::absorbQuery, FastAbsorb::absorbQuery)
                .pair(Absorb::unabsorbValue, FastAbsorb::unabsorbValue)
                .pair(AbsorbedAttention::absorbedScores, FastAttention::absorbedScores)
                .pair(Softmax::softmax, FastAttention::softmax)
                .pair(AbsorbedAttention::absorbedValues, FastAttention::absorbedValues)
                .pair(OnlineSoftmax::splitTiles, FastOnlineSoftmax::splitTiles)
                .pair(OnlineSoftmax::combine, FastOnlineSoftmax::combine)
                .pair(NaiveAttention::decompress, FastNaive::decompress)
                .pair(NaiveAttention::naiveScores, FastNaive::naiveScores)
                .pair(NaiveAttention::naiveValues, FastNaive::naiveValues)
                // DeepSeek-V3.2's sparse attention: the indexer's scores and top-k (bit for bit), the gathers
                .pair(Indexer::cachedScores, FastIndexer::cachedScores)
                .pair(Indexer::indexScores, FastIndexer::indexScores)
                .pair(TopK::selectTopK, FastIndexer::selectTopK)
                .pair(SparseAttention::sparseScores, FastSparseAttention::sparseScores)
                .pair(SparseAttention::sparseSoftmax, FastSparseAttention::sparseSoftmax)
                .pair(SparseAttention::sparseValues, FastSparseAttention::sparseValues)
                .pair(SparseAttention::sparseSplitTiles, FastSparseAttention::sparseSplitTiles)
                // bf16 and block-scaled FP8 weights (WeightKernels)
                .pair(Projections::matVecBf16, WeightKernels::matVecBf16)
                .pair(Projections::matMulBf16, WeightKernels::matMulBf16)
                .pair(Projections::matVecFp8, WeightKernels::matVecFp8)
                .pair(Projections::matMulFp8, WeightKernels::matMulFp8)
                .pair(Absorb::absorbQueryBf16, WeightKernels::absorbQueryBf16)
                .pair(Absorb::absorbQueryFp8, WeightKernels::absorbQueryFp8)
                .pair(Absorb::unabsorbValueBf16, WeightKernels::unabsorbValueBf16)
                .pair(Absorb::unabsorbValueFp8, WeightKernels::unabsorbValueFp8)
                .pair(Dequantize::fromBf16, WeightKernels::fromBf16)
                .pair(Dequantize::fromFp8, WeightKernels::fromFp8);

        /** Method handles of the fast versions, made once. */
        static final Map<Method, MethodHandle> HANDLES = handles(KERNELS);
    }

    /** The caller's ForkJoin pool, or null. */
    private final ForkJoinPool pool;
    /** The spinning pool the kernels' loops run on when no ForkJoin pool was given (shared, or this executor's own). */
    private final SpinPool spin;
    /** Whether {@link #close()} stops {@link #spin} (it was made for this executor). */
    private final boolean ownsSpin;
    /** Set by {@link #close()}: a closed executor refuses to run (with its own pool, its threads are gone). */
    private volatile boolean closed;

    /** The pool of every {@code new FastExecutor()}: one thread per core, made on first use. */
    private static final class Shared {
        static final SpinPool POOL = new SpinPool(Runtime.getRuntime().availableProcessors(), "java-fast");
    }

    /** On every core (a spinning pool shared by every executor made this way). */
    public FastExecutor() {
        this(null, null, false);
    }

    /** On a spinning pool of its own with {@code threads} threads (the caller among them), stopped by {@link #close()}. */
    public FastExecutor(int threads) {
        this(null, newSpin(threads), true);
    }

    /** On the caller's ForkJoin pool (left running by {@link #close()}): the kernels' parallel loops use its workers. */
    public FastExecutor(ForkJoinPool pool) {
        this(java.util.Objects.requireNonNull(pool, "pool"), null, false);
    }

    private FastExecutor(ForkJoinPool pool, SpinPool spin, boolean ownsSpin) {
        if (!available()) {
            if (ownsSpin) spin.close();
            throw new MlaException("the java-fast backend needs the JDK's Vector API: start the JVM with "
                    + "--add-modules jdk.incubator.vector (./mla, the tests and the benchmarks do)");
        }
        try {
            KernelChoices.checkProperties();
        } catch (MlaException e) {
            if (ownsSpin) spin.close();
            throw e;
        }
        this.pool = pool;
        this.spin = pool != null ? null : spin != null ? spin : Shared.POOL;
        this.ownsSpin = ownsSpin;
    }

    private static SpinPool newSpin(int threads) {
        if (threads < 1 || threads > 32767) throw new MlaException("java-fast threads must be 1 … 32767, found " + threads);
        return new SpinPool(threads, "java-fast-own");
    }

    /**
     * Runs the graph with the kernels' parallel loops on this executor's pool: the spinning pool (bound for
     * the execution), or inside the caller's ForkJoin pool, where parallel streams use its workers.
     */
    @Override
    public void execute(KernelGraph graph, long[] taskNanos) {
        if (closed) {
            throw new MlaException("this java-fast executor is closed; make a new one (Backends.create(\"java-fast\") or new FastExecutor())");
        }
        if (pool != null && pool.isShutdown()) {
            throw new MlaException("the ForkJoinPool this java-fast executor runs on is shut down; give it a running pool");
        }
        if (spin != null) {
            ScopedValue.where(Parallel.POOL, spin).run(() -> super.execute(graph, taskNanos));
        } else if (ForkJoinTask.getPool() == pool) {
            super.execute(graph, taskNanos);
        } else {
            pool.invoke(ForkJoinTask.adapt(() -> super.execute(graph, taskNanos)));
        }
    }

    /**
     * As {@link #execute(KernelGraph, long[])}, and adds to {@code threadNanos[i][t]} the time thread t of the spinning
     * pool spent in task i's parallel loops (t = 0 the calling thread, 1 … the workers) where taskNanos is given. What a
     * task's wall time has beyond a thread's is time that thread waited, started late or, for the calling thread, spent
     * in the task's serial code. For benchmarks ({@code mla bench --breakdown}); on a caller's ForkJoin pool there is no
     * such count ({@link #threadsTimed()} 0) and threadNanos stays as it was.
     */
    @Override
    public void execute(KernelGraph graph, long[] taskNanos, long[][] threadNanos) {
        java.util.Objects.requireNonNull(threadNanos, "threadNanos");
        if (closed || spin == null || taskNanos == null) {
            execute(graph, taskNanos);            // refuses a closed executor; nothing to count per thread otherwise
            return;
        }
        int tasks = graph.tasks().size();
        if (threadNanos.length < tasks) throw new MlaException("threadNanos holds " + threadNanos.length + " rows for a graph of " + tasks + " tasks");
        for (long[] row : threadNanos) {
            java.util.Objects.requireNonNull(row, "a row of threadNanos");
            if (row.length < spin.threads()) throw new MlaException("threadNanos rows hold " + row.length + " threads; this executor runs " + spin.threads());
        }
        SpinPool.Busy busy = new SpinPool.Busy(spin, new long[spin.threads()]);
        ScopedValue.where(TIMING, new Timing(this, threadNanos, busy.nanos())).where(SpinPool.BUSY, busy).run(() -> execute(graph, taskNanos));
    }

    /** The spinning pool's threads, the caller included; 0 on a caller's ForkJoin pool. */
    @Override
    public int threadsTimed() {
        return spin != null ? spin.threads() : 0;
    }

    /** Which executor's {@link #execute(KernelGraph, long[], long[][])} is counting, where to, and its pool's counts. */
    private record Timing(FastExecutor executor, long[][] threadNanos, long[] busy) {
    }

    private static final ScopedValue<Timing> TIMING = ScopedValue.newInstance();

    /** After task index of a timed execute: its threads' counts move into threadNanos (this executor's call only). */
    @Override
    protected void taskTimed(int index) {
        Timing t = TIMING.isBound() ? TIMING.get() : null;
        if (t == null || t.executor() != this) return;
        long[] busy = t.busy(), row = t.threadNanos()[index];
        for (int i = 0; i < busy.length; i++) {
            row[i] += busy[i];
            busy[i] = 0;
        }
    }

    /**
     * Stops this executor's own threads (made by {@link #FastExecutor(int)}); the shared pool and a caller's
     * ForkJoin pool keep running. Either way the executor refuses to run graphs afterwards. Closing twice is harmless.
     */
    @Override
    public void close() {
        closed = true;
        if (ownsSpin) spin.close();
    }

    /** Whether this JVM was started with the Vector API module. */
    public static boolean available() {
        return ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent();
    }

    /**
     * One line saying what java-fast chose for this CPU, for benchmark headers: the CPU as /proc/cpuinfo names it, the
     * vector width, the register blocks ({@code Gemm.REGS32}), whether tiles and weights are touched before they are
     * walked ({@code Vec.TOUCH}), whether 16 heads' scores run on 256-bit halves ({@code Gemm.HALF_SCORES}), two columns a
     * broadcast ({@code Gemm.PAIR_SCORES}) and whether they
     * read a touched tile or rows ahead ({@code Gemm.TOUCH_SCORES}), with the properties that override each, marked
     * "-D" where one did and "measured" where {@code mla tune}'s file decided ({@link KernelChoices}). Figures from two
     * machines compare only beside this line.
     */
    public static String kernelChoice() {
        if (!available()) return "kernels: java-fast unavailable (no jdk.incubator.vector in this JVM)";
        String vendor = Vec.cpuVendor(), family = Vec.cpuInfo("cpu family"), model = Vec.cpuInfo("model");
        String cpu = vendor.isEmpty() ? "CPU not named by /proc/cpuinfo" : vendor + " family " + family + " model " + model;
        String line = "kernels: java-fast on " + cpu + ": " + Vec.F.vectorBitSize() + "-bit vectors, "
                + (Gemm.REGS32 ? "32" : "16") + "-register blocks (tornadomla.fast.registers), tiles "
                + (Vec.TOUCH ? "touched" : "not touched") + " before the values (" + from("tornadomla.fast.touch") + "), 16 heads' scores on "
                + (Gemm.HALF_SCORES ? "256-bit halves" : "full vectors") + " (" + from("tornadomla.fast.halfScores") + "), "
                + (Gemm.PAIR_SCORES ? "two columns a broadcast" : "one column a broadcast") + " (" + from("tornadomla.fast.pairScores") + "), "
                + (Gemm.TOUCH_SCORES ? "tiles touched before them" : Gemm.PAIR_SCORES ? "tiles not touched before them" : "reading rows ahead")
                + " (" + from("tornadomla.fast.touchScores") + "), "
                + "one row's absorb_q " + (FastAbsorb.STRIPS ? "in strips" : Vec.TOUCH ? "and unabsorb_v in memory order after a touch" : "in memory order")
                + " (" + from("tornadomla.fast.absorbStrips") + "), "
                + "values and tiled path over " + (FastAttention.VALUES_RUN > 1 ? "runs of " + FastAttention.VALUES_RUN + " tiles" : "single tiles")
                + " (" + from("tornadomla.fast.valuesRuns") + "), the absorbed values at up to 4 token rows a thread "
                + (FastAttention.REPRODUCIBLE ? "in fixed pieces (tornadomla.fast.reproducible, -D)" : "shared out as threads free up (tornadomla.fast.reproducible)");
        if (KernelChoices.measured() != null) line += "; \"measured\": by mla tune on this machine, " + KernelChoices.measured() + ", " + KernelChoices.file();
        if (KernelChoices.ignored() != null) line += "; ignored: " + KernelChoices.ignored();
        else if (KernelChoices.measured() == null) {
            boolean anyD = KernelChoices.TUNED.stream().anyMatch(p -> KernelChoices.origin(p).equals("-D"));
            line += anyD ? "; the others by the rules of the CPU's vendor and family" : "; the rules of the CPU's vendor and family (./mla tune measures them on this machine)";
        }
        return line;
    }

    /**
     * The kernel choices this JVM runs with ({@link KernelChoices#TUNED}'s properties → their values), and two facts they
     * depend on: "vectorBits" and "regs32" (as 512 → true). For {@code mla tune}'s probes.
     */
    public static Map<String, Object> choicesInEffect() {
        if (!available()) throw new MlaException("the java-fast kernels need the JDK's Vector API (--add-modules jdk.incubator.vector)");
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("tornadomla.fast.touch", Vec.TOUCH);
        m.put("tornadomla.fast.valuesRuns", FastAttention.VALUES_RUN > 1);
        m.put("tornadomla.fast.absorbStrips", FastAbsorb.STRIPS);
        m.put("tornadomla.fast.halfScores", Gemm.HALF_SCORES);
        m.put("tornadomla.fast.pairScores", Gemm.PAIR_SCORES);
        m.put("tornadomla.fast.touchScores", Gemm.TOUCH_SCORES);
        m.put("vectorBits", Vec.F.vectorBitSize());
        m.put("regs32", Gemm.REGS32);
        return m;
    }

    /** A choice's property, with "-D" or "measured" after it where the machine's default was not what decided it. */
    private static String from(String property) {
        String o = KernelChoices.origin(property);
        return o.equals("machine") ? property : property + ", " + o;
    }

    /** The reference kernels java-fast replaces, each with its Vector API version. */
    public static KernelTable kernels() {
        if (!available()) throw new MlaException("the java-fast kernels need the JDK's Vector API (--add-modules jdk.incubator.vector)");
        return Fast.KERNELS;
    }

    private static Map<Method, MethodHandle> handles(KernelTable table) {
        Map<Method, MethodHandle> out = new LinkedHashMap<>();
        table.pairs().forEach((ref, fast) -> {
            try {
                // this module's own lookup: the kernels' packages are not exported from the module org.tornadomla
                out.put(ref, MethodHandles.lookup().unreflect(fast));
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
        });
        return Map.copyOf(out);
    }

    /** The fast version of a reference kernel, or null when it has none. */
    MethodHandle fastVersion(Method kernel) {
        return Fast.HANDLES.get(kernel);
    }

    @Override
    protected MethodHandle handle(KernelGraph.Task t) {
        MethodHandle h = Fast.HANDLES.get(t.kernel());
        return h != null ? h : t.handle();
    }

    /** Every head: a java-fast task (row, split) serves all heads from one decoded tile. */
    @Override
    public int headsPerWorkItem() {
        return Integer.MAX_VALUE;
    }

    @Override
    public int parallelism() {
        return pool != null ? pool.getParallelism() : spin.threads();
    }

    @Override
    public String device() {
        return "java-fast (Vector API " + Vec.F.vectorBitSize() + "-bit, " + parallelism() + (parallelism() == 1 ? " thread)" : " threads)");
    }
}
