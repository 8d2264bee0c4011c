package org.tornadomla.bench;

import org.tornadomla.attention.internal.AttentionCore;
import org.tornadomla.cache.internal.CacheStorage;
import org.tornadomla.internal.Gaussians;
import org.tornadomla.internal.Memory;
import org.tornadomla.MlaException;
import org.tornadomla.attention.AttentionOptions;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.cache.PagedCacheSpec;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.graph.GraphExecutor;
import org.tornadomla.graph.KernelGraph;
import org.tornadomla.weights.MlaWeights;
import org.tornadomla.weights.Weight;
import org.tornadomla.weights.WeightDtype;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * One decode step of the attention core: from the roped query to o [B, H, d_v] over a cache holding
 * {@code context} tokens per sequence (absorb_q … unabsorb_v of {@link AttentionCore#add}), with
 * DeepSeek-V3's latent geometry (d_c 512, d_r 64, d_n = d_v = 128) and a chosen head count. Projections and
 * the cache append are not part of it. Setup (weights, cache fill) is done once in the constructor.
 */
public final class DecodeBench {
    /** A benchmark shape. */
    public record Shape(AttentionPath path, CacheDtype dtype, int batch, int heads, int context) {
        public String label() {
            return "B" + batch + " H" + heads + " T" + context + " " + path + " " + dtype;
        }
    }

    /** Timing of one backend on one shape. */
    /**
     * One backend's figures for a shape: msPerStep the mean of the timed steps (what tables and charts show),
     * medianMs their median (NaN where unknown), device where it ran (the CPU and the executor, or the TornadoVM
     * device; "" where unknown), warmedUp whether the JIT was waited for (not under {@link Timing#COLD_MS} of budget:
     * such figures check that a shape runs, and a first java-fast shape can then be 50 times slower than warm).
     */
    public record Result(String backend, Shape shape, double msPerStep, double medianMs, int iterations, double maxAbsDiff, String device,
                         boolean warmedUp) {
        public double gbPerS() {
            return latentBytes(shape) / (msPerStep * 1e-3) / 1e9;
        }

        public double gflopPerS() {
            return flops(shape) / (msPerStep * 1e-3) / 1e9;
        }
    }

    /** Caches up to this many numbers are filled with independent gaussians; larger ones repeat a block. */
    static final long EXACT_FILL_LIMIT = 1L << 26;
    /** Tokens of the gaussian block a large cache repeats (each sequence starts at another row of it). */
    static final int FILL_BLOCK = 1024;

    private Shape shape;
    private final int capacity;
    private final MlaConfig config;
    private final LatentCache cache;
    private final float[] q;
    private Weight wkvB;
    private final java.util.Map<GraphExecutor, Built> graphs = new java.util.IdentityHashMap<>();
    /** The kernels' metadata: every sequence's query at position context − 1, the block tables. */
    private final int[] attnMeta;

    public DecodeBench(Shape shape, long seed) {
        this(shape, seed, false);
    }

    /**
     * A step over a cache of {@code capacity} tokens per sequence, all filled, whose context starts at
     * {@code shape.context()} and can be changed with {@link #context(int)} without rebuilding the graph: one
     * compiled TornadoVM plan serves every context of a batch, head count and dtype. Only the TILED path reads
     * just the context (the ABSORBED path's loops run over the capacity), so other paths need capacity = context.
     */
    public DecodeBench(Shape shape, int capacity, long seed) {
        this(shape, capacity, seed, false, 0);
    }

    /**
     * As {@link #DecodeBench(Shape, int, long)} over a paged cache of blocks of {@code blockSize} tokens (0: the
     * contiguous cache), handed out in a seeded random order, as in a pool that has served many requests: a
     * sequence's blocks are scattered over the pool.
     */
    public DecodeBench(Shape shape, int capacity, long seed, int blockSize) {
        this(shape, capacity, seed, false, blockSize);
    }

    /** Why a step of this batch and cache capacity cannot be built (Java arrays hold at most 2^31 - 9 numbers), or null. */
    public static String unrepresentable(int batch, int capacity, int heads, AttentionPath path) {
        long cache = (long) batch * capacity * (512 + 64);
        if (cache > Integer.MAX_VALUE - 8) {
            return String.format("cache of %d x %d x 576 = %,d numbers is more than one Java array holds (%,d)", batch, capacity, cache, Integer.MAX_VALUE - 8);
        }
        long scores = (long) batch * heads * capacity;
        if (path != AttentionPath.TILED && scores > Integer.MAX_VALUE - 8) {
            return String.format("scores of %d x %d x %d = %,d numbers are more than one Java array holds", batch, heads, capacity, scores);
        }
        return null;
    }

    /**
     * @param structured fill the cache with structured latents (rank-8 signal, a few outlier channels ten times
     *                   larger, small noise) instead of independent N(0, 1) numbers
     */
    public DecodeBench(Shape shape, long seed, boolean structured) {
        this(shape, shape.context(), seed, structured, 0);
    }

    private DecodeBench(Shape shape, int capacity, long seed, boolean structured, int blockSize) {
        String why = unrepresentable(shape.batch(), capacity, shape.heads(), shape.path());
        if (why != null) throw new MlaException("cannot build " + shape.label() + ": " + why);
        if (capacity < shape.context()) throw new MlaException("capacity " + capacity + " is below the context " + shape.context());
        if (capacity != shape.context() && shape.path() != AttentionPath.TILED) {
            throw new MlaException("only the tiled path reads just the context; " + shape.path() + " needs capacity = context");
        }
        this.shape = shape;
        this.capacity = capacity;
        MlaConfig c = MlaConfig.deepseekV3().withHeads(shape.heads());
        SplittableRandom rnd = new SplittableRandom(seed);
        int dc = c.kvLoraRank(), dr = c.qkRopeHeadDim(), h = c.numHeads();
        if (shape.batch() < 1 || shape.context() < 1) throw new MlaException("batch and context must be >= 1, found " + shape.batch() + ", " + shape.context());
        Memory.arrayLength((long) shape.batch() * h * c.qkHeadDim(), "the queries of " + shape.label());
        if (blockSize < 0) throw new MlaException("block size must be >= 0 (0: contiguous), found " + blockSize);
        LatentCache cache = blockSize == 0 ? new LatentCache(c, shape.batch(), capacity, shape.dtype()) : pagedCache(c, shape, capacity, blockSize, seed);
        if (structured || (long) shape.batch() * capacity * (dc + dr) <= EXACT_FILL_LIMIT) {
            for (int b = 0; b < shape.batch(); b++) {
                float[] latent = structured ? structuredLatent(rnd, capacity, dc) : Gaussians.floats(rnd, capacity * dc, 1);
                cache.write(b, latent, Gaussians.floats(rnd, capacity * dr, 1));
            }
        } else {
            fillRepeating(cache, rnd, capacity, dc, dr);
        }
        this.config = c;
        this.cache = cache;
        this.q = Gaussians.floats(rnd, shape.batch() * h * c.qkHeadDim(), 1);
        this.attnMeta = new int[CacheStorage.of(cache).metaLength(shape.batch())];
        describe(shape.context());
        long kvbRows = (long) h * (c.qkNopeHeadDim() + c.vHeadDim());
        this.wkvB = Weight.f32("kv_b_proj.weight", new long[] {kvbRows, dc}, Gaussians.floats(rnd, (int) kvbRows * dc, 1 / Math.sqrt(dc)));
    }

    /**
     * Holds kv_b_proj (W^UK, W^UV: what absorb_q and unabsorb_v read) as {@code dtype} from now on: bf16 halves
     * and fp8 quarters the 67 MB of f32 weights a step streams at H128. Call before the first step.
     */
    public DecodeBench weights(WeightDtype dtype) {
        if (!graphs.isEmpty()) throw new IllegalStateException("weights(" + dtype + ") after a step was built");
        wkvB = wkvB.to(dtype);
        return this;
    }

    /**
     * The step's graph for {@code executor}, built on first use: the split count of the tiled path is chosen
     * for the executor (AttentionOptions.AUTO), so a device and the JVM may run different graphs over the
     * same cache and inputs.
     */
    private Built graph(GraphExecutor executor) {
        return graphs.computeIfAbsent(executor, ex -> {
            KernelGraph g = new KernelGraph("decode");
            g.input("q", q);
            g.input("attnMeta", attnMeta);
            g.state("cache", CacheStorage.of(cache));
            float[] o = g.output("o", new float[shape.batch() * config.numHeads() * config.vHeadDim()]);
            AttentionOptions opt = AttentionOptions.of(shape.path()).resolved(shape.batch(), config.numHeads(), capacity, ex);
            AttentionCore.add(g, config, wkvB, cache, q, o, attnMeta, shape.batch(), opt);
            return new Built(g, o);
        });
    }

    private record Built(KernelGraph graph, float[] out) {
    }

    /** The step's graph as built for executor (for this package's tests). */
    KernelGraph graphFor(GraphExecutor executor) {
        return graph(executor).graph();
    }

    public Shape shape() {
        return shape;
    }

    /** Attends over the first {@code context} tokens of each sequence from the next step on (1 … capacity). */
    public void context(int context) {
        if (context < 1 || context > capacity) {
            throw new MlaException("context must be 1 … " + capacity + " (the cache capacity), found " + context);
        }
        describe(context);
        shape = new Shape(shape.path(), shape.dtype(), shape.batch(), shape.heads(), context);
    }

    private void describe(int context) {
        int[] ids = new int[shape.batch()], first = new int[shape.batch()], ones = new int[shape.batch()];
        for (int b = 0; b < ids.length; b++) {
            ids[b] = b;
            first[b] = context - 1;
            ones[b] = 1;
        }
        CacheStorage.of(cache).describe(attnMeta, shape.batch(), ids, first, ones, null);
    }

    /** A paged cache for the shape's sequences, its free blocks shuffled first (each sequence's blocks scattered). */
    private static LatentCache pagedCache(MlaConfig c, Shape shape, int capacity, int blockSize, long seed) {
        int blocks = (capacity + blockSize - 1) / blockSize;
        LatentCache cache = LatentCache.paged(c, PagedCacheSpec.builder().maxSequences(shape.batch()).maxSequenceLength(capacity)
                .numBlocks(shape.batch() * blocks).blockSize(blockSize).dtype(shape.dtype()).build());
        CacheStorage.of(cache).shuffleFreeBlocks(seed);
        for (int b = 0; b < shape.batch(); b++) cache.addSequence();
        return cache;
    }

    /**
     * The first {@code tokens} positions of every sequence, quickly: one block of FILL_BLOCK gaussian tokens,
     * each sequence the block repeated from its own starting row, sequences written in parallel (a B=128, T=16384 cache is 1.2e9 numbers; drawing
     * each from the generator would take minutes). Attention timing does not depend on the values.
     */
    static void fillRepeating(LatentCache cache, SplittableRandom rnd, int tokens, int dc, int dr) {
        int block = Math.min(FILL_BLOCK, tokens);
        float[] latentBlock = Gaussians.floats(rnd, block * dc, 1), ropeBlock = Gaussians.floats(rnd, block * dr, 1);
        java.util.stream.IntStream.range(0, cache.maxSequences()).parallel().forEach(b -> {
            float[] latent = new float[tokens * dc], rope = new float[tokens * dr];
            for (int t = 0; t < tokens; t++) {
                int row = (t + 37 * b) % block;
                System.arraycopy(latentBlock, row * dc, latent, t * dc, dc);
                System.arraycopy(ropeBlock, row * dr, rope, t * dr, dr);
            }
            cache.write(b, latent, rope);               // sequences own disjoint rows of the storage
        });
    }

    /** Runs the step once on {@code executor} (what a benchmark times). */
    public void step(GraphExecutor executor) {
        executor.execute(graph(executor).graph());
    }

    /** Runs the step once on {@code executor}; returns o (a copy). */
    public float[] runOnce(GraphExecutor executor) {
        Built b = graph(executor);
        executor.execute(b.graph());
        return b.out().clone();
    }

    /**
     * Runs steps untimed as a timing of --quick's budget would warm them up (the full warm-up; a cold step's too), so
     * that a comparison of short budgets that follows times compiled code.
     */
    public void warmUp(GraphExecutor executor) {
        time(executor, Timing.FIGURES_MS, 2);
    }

    /**
     * Times steps on {@code executor} with the project's harness ({@link Timing}: warm-up, then the budget). The
     * first timing of a kind of step in this JVM (executor class, path, cache dtype) is cold: its kernels have
     * not been compiled yet, so it gets Timing's full warm-up whatever the budget.
     */
    public Timing time(GraphExecutor executor, double budgetMs, int minIterations) {
        KernelGraph graph = graph(executor).graph();
        boolean cold = Timing.firstOfKind("attention " + executor.getClass().getName() + " " + shape.path() + " " + shape.dtype());
        return Timing.measure(() -> executor.execute(graph), budgetMs, minIterations, cold);
    }

    /** n rows of width d: Σ_k u_k·v_k over rank 8, every 64th channel ×10 (outliers), plus N(0, 0.05²) noise. */
    static float[] structuredLatent(SplittableRandom rnd, int n, int d) {
        int rank = 8;
        float[] u = Gaussians.floats(rnd, n * rank, 1), v = Gaussians.floats(rnd, rank * d, 1 / Math.sqrt(rank));
        float[] noise = Gaussians.floats(rnd, n * d, 0.05);
        float[] out = new float[n * d];
        for (int t = 0; t < n; t++) {
            for (int c = 0; c < d; c++) {
                float s = 0;
                for (int k = 0; k < rank; k++) s += u[t * rank + k] * v[k * d + c];
                out[t * d + c] = (c % 64 == 0 ? 10 : 1) * s + noise[t * d + c];
            }
        }
        return out;
    }

    /**
     * A task's mean wall ms per step and, where the executor runs its loops on threads of its own (java-fast), each
     * thread's mean ms in them, the calling thread first (else empty). A thread's ms short of the task's: it waited,
     * started late or (the calling thread) ran the task's serial code.
     */
    public record TaskTime(String task, double ms, double[] threadMs) {
    }

    /** Mean ms per task over {@code steps} steps on a JVM executor, with the task names: where the time goes. */
    public List<TaskTime> breakdown(org.tornadomla.graph.JvmExecutor executor, int steps) {
        KernelGraph graph = graph(executor).graph();
        int tasks = graph.tasks().size(), threads = executor.threadsTimed();
        long[] ns = new long[tasks];
        long[][] busy = new long[tasks][threads];
        executor.execute(graph);                          // warm
        for (int i = 0; i < steps; i++) executor.execute(graph, ns, busy);
        List<TaskTime> out = new ArrayList<>();
        for (int i = 0; i < tasks; i++) {
            double[] perThread = new double[threads];
            for (int t = 0; t < threads; t++) perThread[t] = busy[i][t] / 1e6 / steps;
            out.add(new TaskTime(graph.tasks().get(i).id(), ns[i] / 1e6 / steps, perThread));
        }
        return out;
    }

    /** One more step, with what it copied between host and device and its kernel time (see GraphExecutor#measureTransfers). */
    public GraphExecutor.Transfers transfers(GraphExecutor executor) {
        return executor.measureTransfers(graph(executor).graph());
    }

    /** Frees what {@code executor} holds for this benchmark's graph (device memory under TornadoVM). */
    public void release(GraphExecutor executor) {
        Built b = graphs.remove(executor);
        if (b != null) executor.release(b.graph());
    }

    /** Latent bytes read per step: B·T·bytes per token of the dtype (scales included), the cache read once. */
    public static double latentBytes(Shape s) {
        return (double) s.batch() * s.context() * s.dtype().bytesPerToken(512, 64);
    }

    /**
     * FLOPs per step, whatever the path: B·(2·H·T·(d_c+d_r) + 2·H·T·d_c + 2·H·d_c·(d_n+d_v)) (docs/design.md §1.3), the
     * absorbed path's four products ({@link #taskFlops}).
     */
    public static double flops(Shape s) {
        return products(s, "absorb_q") + products(s, "scores") + products(s, "values") + products(s, "unabsorb_v");
    }

    /**
     * FLOPs per step of one product task of the absorbed or tiled path, DeepSeek-V3's widths (d_c 512, d_r 64, d_n = d_v
     * 128), T the context of every token row: absorb_q 2·B·H·d_n·d_c, scores 2·B·H·T·(d_c + d_r), values 2·B·H·T·d_c,
     * split_tiles both products, unabsorb_v 2·B·H·d_c·d_v. 0 for any other task (the softmax and the combine, which do few
     * FMAs) and for the naive path, whose tasks of the same names compute other products.
     */
    public static double taskFlops(Shape s, String task) {
        return s.path() == AttentionPath.ABSORBED || s.path() == AttentionPath.TILED ? products(s, task) : 0;
    }

    private static double products(Shape s, String task) {
        double bh = 2.0 * s.batch() * s.heads(), t = s.context(), dc = 512, dr = 64, dn = 128, dv = 128;
        return switch (task) {
            case "absorb_q" -> bh * dn * dc;
            case "scores" -> bh * t * (dc + dr);
            case "values" -> bh * t * dc;
            case "split_tiles" -> bh * t * (2 * dc + dr);
            case "unabsorb_v" -> bh * dc * dv;
            default -> 0;
        };
    }

}
