package org.tornadomla.attention;

import org.tornadomla.internal.Messages;
import org.tornadomla.attention.internal.AttentionCore;
import org.tornadomla.cache.internal.CacheStorage;
import org.tornadomla.internal.Memory;
import org.tornadomla.MlaException;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.CacheIdentity;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.cache.PagedCacheSpec;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.config.RopeFrequencies;
import org.tornadomla.graph.GraphExecutor;
import org.tornadomla.graph.JvmExecutor;
import org.tornadomla.graph.KernelGraph;
import org.tornadomla.kernels.CacheOps;
import org.tornadomla.kernels.Bf16;
import org.tornadomla.kernels.Indexer;
import org.tornadomla.kernels.SparseAttention;
import org.tornadomla.kernels.TopK;
import org.tornadomla.config.IndexerConfig;
import org.tornadomla.kernels.Norms;
import org.tornadomla.kernels.Rope;
import org.tornadomla.weights.MlaWeights;
import org.tornadomla.weights.Weight;

import java.lang.ref.WeakReference;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * One DeepSeek-V3 MLA layer. Its dataflow is written once, in {@code buildGraph}, as a {@link KernelGraph}
 * of the kernels in {@code org.tornadomla.kernels}; a {@link GraphExecutor} runs it: on the JVM
 * ({@link JvmExecutor}, the CPU reference, the default) or on a TornadoVM device.
 *
 * <pre>
 *  x [B,T,D] ─ q_a_proj ─ q_a_layernorm ─ q_b_proj ─ q [B,T,H,d_n+d_r] ─ rope(q_pe)  (or q_proj when r_q = 0)
 *            └ kv_a_proj_with_mqa ─ [c | k_pe] ─ kv_a_layernorm(c) = c_kv, rope(k_pe) ─ append to cache
 *  attention over the cache (path NAIVE | ABSORBED | TILED) ─ o [B,T,H,d_v] ─ o_proj ─ y [B,T,D]
 * </pre>
 *
 * A sparse config (DeepSeek-V3.2's DSA, {@link MlaConfig#sparse()}) adds the lightning indexer ({@code org.tornadomla.kernels.Indexer}):
 * <pre>
 *  x ─ indexer.wk ─ k_norm ─ rope ─ hadamard ─ e4m3 ─ append to the cache's indexer keys
 *  c_q ─ indexer.wq_b ─ rope ─ hadamard ─ e4m3 ┐
 *  x ─ indexer.weights_proj ─ head weights ─────┴ index scores over the cached keys ─ top-k ─ selected positions
 * </pre>
 * and attention reads only the selected positions of each row ({@code org.tornadomla.kernels.SparseAttention}; the NAIVE path masks the
 * others), unless the options ask for dense attention ({@link AttentionOptions#dense()}).
 *
 * A forward call takes T new tokens of each of the B sequences of a {@link LatentCache}, or, in a
 * variable-length step ({@link #forward(LatentCache, float[], int[], int[], AttentionOptions)}), its own number
 * of tokens from each of some sequences; sequence b's tokens sit at positions cache.length(b) … and attend
 * causally to everything cached before them. The cache may be contiguous or paged (block tables): the
 * kernels read every position through {@code attnMeta}, the step's positions and block tables.
 * A prefill is a forward call on an empty cache, a decode step one with T = 1, a chunked prefill one on a
 * non-empty cache. One graph is built per shape (batch, T, cache, options) and reused, so every decode
 * step of a sequence runs the same graph; the cache keeps its graphs, and a cache the program drops is
 * collected with them (the layer does not hold it). A layer runs one step at a time: steps from several threads (and
 * {@link #close()}) wait for each other, and a step holds its cache's lock, so that steps of several layers on one
 * cache, and the cache's own methods from other threads, wait for each other too.
 *
 * <p>The weights may be held as f32, bf16 or DeepSeek's block-scaled FP8 ({@link MlaWeights#dtype()}): each
 * {@link Weight} adds its own tasks with the kernels of its form, so the dataflow below is the same for all.
 */
public final class MlaLayer implements AutoCloseable {
    /** Graphs kept per layer (least recently used beyond this are released). */
    private static final int MAX_GRAPHS = 8;

    private final MlaConfig c;
    private final MlaWeights w;
    private final CacheIdentity identity;
    private final GraphExecutor executor;
    private final float[] invFreq;
    private final float cosSinScale;
    /**
     * The graphs built, least recently used first. A graph holds its cache's arrays, so the cache holds its steps
     * ({@link CacheStorage#keep}) and the layer holds them weakly: a cache the program drops is collected with its
     * graphs instead of staying alive here until {@link #close()}. An executor that holds graphs itself (TornadoVM's
     * plans) pins them anyway; there the layer holds them too, and releases those of a collected cache at its next call.
     */
    private final Map<Shape, Built> steps = new LinkedHashMap<>(16, 0.75f, true);
    /** The last step's selection (null: dense, or no step yet), its token rows and positions per row (for {@link #lastSelection()}). */
    private int[] lastSelected;
    private int lastRows, lastPerRow;
    private boolean ranStep;
    /** Held by a step, a graph lookup and close(): a close() from another thread waits for the running step. */
    private final Object lock = new Object();

    /** A layer on the JVM reference executor. */
    public MlaLayer(MlaWeights weights) {
        this(weights, new JvmExecutor());
    }

    /**
     * A layer whose graphs run on {@code executor}: {@code Backends.create("java-reference" | "java-fast[:N]" |
     * "tornado[:B:D]")}, or an executor made directly. The layer does not own the executor: close it yourself
     * once no layer uses it (one executor may serve several layers, one at a time).
     */
    public MlaLayer(MlaWeights weights, GraphExecutor executor) {
        this.w = Objects.requireNonNull(weights, "weights");
        this.c = weights.config();
        this.identity = CacheIdentity.of(weights);
        this.executor = Objects.requireNonNull(executor, "executor");
        this.invFreq = RopeFrequencies.inverseFrequencies(c);
        this.cosSinScale = RopeFrequencies.cosSinScale(c);
    }

    /** The layer's config (its weights'). */
    public MlaConfig config() {
        return c;
    }

    /** The layer's weights. */
    public MlaWeights weights() {
        return w;
    }

    /** The identity of the caches this layer fills ({@link CacheIdentity#of(MlaWeights)}): config, layer index and weights. */
    public CacheIdentity identity() {
        return identity;
    }

    /** Where the graphs run, in words. */
    public String device() {
        return executor.device();
    }

    /**
     * A contiguous cache for {@code batch} sequences of up to {@code capacity} tokens each, belonging to this layer
     * ({@link #identity()}). A capacity past the config's max_position_embeddings is refused: no step can use it.
     */
    public LatentCache newCache(int batch, int capacity, CacheDtype dtype) {
        requireReachable(capacity, "capacity");
        LatentCache cache = new LatentCache(c, batch, capacity, Objects.requireNonNull(dtype, "dtype"));
        CacheStorage.of(cache).bind(identity());
        return cache;
    }

    /** Refuses a cache longer than the positions a step may reach (memory no step could fill). */
    private void requireReachable(int tokens, String what) {
        if (tokens > c.maxPositionEmbeddings()) {
            throw new MlaException(what + " " + tokens + " is past max_position_embeddings " + c.maxPositionEmbeddings()
                    + ": no step can reach a position past " + (c.maxPositionEmbeddings() - 1L) + ", so the rest of the cache would never be used");
        }
    }

    /**
     * A paged cache of the spec's shape ({@link PagedCacheSpec#builder()}: sequences, their length, the pool,
     * the block size and dtype, set by name), belonging to this layer. No sequence is present until
     * {@link LatentCache#addSequence}.
     */
    public LatentCache newPagedCache(PagedCacheSpec spec) {
        requireReachable(Objects.requireNonNull(spec, "spec").maxSequenceLength(), "maxSequenceLength");
        LatentCache cache = LatentCache.paged(c, Objects.requireNonNull(spec, "spec"));
        CacheStorage.of(cache).bind(identity());
        return cache;
    }

    /**
     * Prefill (or a prefill chunk) of {@code tokens} tokens per sequence; returns y [B, tokens, D]. B is every
     * sequence slot of the cache ({@link LatentCache#maxSequences()}), and each must be in use; to run some sequences of a
     * paged cache, use {@link #forward(LatentCache, float[], int[], int[], AttentionOptions)}.
     */
    public float[] prefill(LatentCache cache, float[] x, int tokens, AttentionPath path) {
        return forward(cache, x, tokens, AttentionOptions.of(Objects.requireNonNull(path, "path")));
    }

    /** One decode step: one token per sequence slot, x [B, D] (B as for {@link #prefill}); returns y [B, D]. */
    public float[] decode(LatentCache cache, float[] x, AttentionPath path) {
        return forward(cache, x, 1, AttentionOptions.of(Objects.requireNonNull(path, "path")));
    }

    /** As {@link #prefill(LatentCache, float[], int, AttentionPath)} with full options (tile size, splits). */
    public float[] prefill(LatentCache cache, float[] x, int tokens, AttentionOptions opt) {
        return forward(cache, x, tokens, opt);
    }

    /** As {@link #decode(LatentCache, float[], AttentionPath)} with full options (tile size, splits). */
    public float[] decode(LatentCache cache, float[] x, AttentionOptions opt) {
        return forward(cache, x, 1, opt);
    }

    /** As {@link #forward(LatentCache, float[], int, AttentionOptions)} with the path's default options. */
    public float[] forward(LatentCache cache, float[] x, int tokens, AttentionPath path) {
        return forward(cache, x, tokens, AttentionOptions.of(Objects.requireNonNull(path, "path")));
    }

    /** As {@link #forward(LatentCache, float[], int[], int[], AttentionOptions)} with the path's default options. */
    public float[] forward(LatentCache cache, float[] x, int[] seqIds, int[] queryLens, AttentionPath path) {
        return forward(cache, x, seqIds, queryLens, AttentionOptions.of(Objects.requireNonNull(path, "path")));
    }

    /**
     * {@code tokens} new tokens of every sequence, x [B, tokens, D]; returns y [B, tokens, D]. Everything is
     * checked before any work: a null argument is a NullPointerException naming it; wrong lengths, tokens
     * &lt; 1, a cache without room or positions past max_position_embeddings, non-finite inputs, a step
     * too large for the heap and a cache that belongs to another layer ({@link LatentCache#identity()}: another
     * config, layer index or weights) are an {@link MlaException}, with the cache unchanged. So is a step whose finite
     * inputs overflow float inside it, found after the kernels and before the commit (the new latent and the output,
     * on the JVM backends). A cache without an identity becomes this layer's.
     */
    public float[] forward(LatentCache cache, float[] x, int tokens, AttentionOptions opt) {
        Objects.requireNonNull(cache, "cache");
        Objects.requireNonNull(x, "x");
        Objects.requireNonNull(opt, "opt");
        if (tokens <= 0) throw new MlaException("tokens per sequence must be > 0, found " + tokens);
        long n = (long) cache.maxSequences() * tokens * c.hiddenSize();
        Memory.arrayLength(n, "input x [" + cache.maxSequences() + ", " + tokens + ", " + c.hiddenSize() + "]");
        requireEverySlot(cache);
        requireInput(x, n, Messages.shape(cache.maxSequences(), tokens, c.hiddenSize()));
        float[] y = newOutput(n);
        forward(cache, x, tokens, opt, y);
        return y;
    }

    /** As {@link #forward(LatentCache, float[], int, AttentionOptions)}, writing into {@code y}. */
    public void forward(LatentCache cache, float[] x, int tokens, AttentionOptions opt, float[] y) {
        Objects.requireNonNull(cache, "cache");
        Objects.requireNonNull(x, "x");
        Objects.requireNonNull(opt, "opt");
        Objects.requireNonNull(y, "y");
        if (tokens <= 0) throw new MlaException("tokens per sequence must be > 0, found " + tokens);
        Memory.arrayLength((long) cache.maxSequences() * tokens * c.hiddenSize(), "input x [" + cache.maxSequences() + ", " + tokens + ", " + c.hiddenSize() + "]");
        int[] ids = java.util.stream.IntStream.range(0, cache.maxSequences()).toArray();    // every slot: run checks they are in use
        int[] counts = new int[ids.length];
        java.util.Arrays.fill(counts, tokens);
        synchronized (lock) {
            run(cache, ids, counts, x, opt, y, Math.multiplyExact(cache.maxSequences(), tokens), true);
        }
    }

    /**
     * A variable-length step (continuous batching): sequence seqIds[i] brings queryLens[i] ≥ 1 new tokens
     * (a prefill chunk, or 1 to decode), x [Σ queryLens, D] packed in that order (cu_seqlens-style: sequence
     * i's rows start at queryLens[0] + … + queryLens[i−1]); returns y [Σ queryLens, D] in the same order. Each
     * token attends causally to its own sequence. Sequences not named are left as they are. The graph is
     * sized by a row capacity ({@link #rowCapacity}), not by this step's composition: steps with other
     * sequences and lengths reuse it (the positions and block tables travel in its int[] metadata). Checked
     * like {@link #forward(LatentCache, float[], int, AttentionOptions)}; a pool without enough free blocks is
     * refused before any work, the cache unchanged.
     */
    public float[] forward(LatentCache cache, float[] x, int[] seqIds, int[] queryLens, AttentionOptions opt) {
        Objects.requireNonNull(cache, "cache");
        Objects.requireNonNull(seqIds, "seqIds");
        Objects.requireNonNull(queryLens, "queryLens");
        Objects.requireNonNull(x, "x");
        Objects.requireNonNull(opt, "opt");
        long total = totalTokens(seqIds, queryLens);
        long n = total * c.hiddenSize();
        Memory.arrayLength(n, "input x [" + total + ", " + c.hiddenSize() + "]");
        requireInput(x, n, Messages.shape(total, c.hiddenSize()));
        float[] y = newOutput(n);
        synchronized (lock) {
            run(cache, seqIds, queryLens, x, opt, y, rows(cache, (int) total, opt), false);
        }
        return y;
    }

    /** A uniform step runs every sequence slot: each must be in use. */
    private static void requireEverySlot(LatentCache cache) {
        for (int b = 0; b < cache.maxSequences(); b++) {
            if (!cache.contains(b)) {
                throw new MlaException("a step with one token count for all runs every sequence slot of the cache (0 … " + (cache.maxSequences() - 1)
                        + "), but sequence " + b + " is not in it (freed, or never added): pass the live sequences to "
                        + "forward(cache, x, seqIds, queryLens, opt)");
            }
        }
    }

    /** Checked before the output is allocated: a step's size comes from x, never from a count alone. */
    private static void requireInput(float[] x, long expected, String shape) {
        if (x.length != expected) {
            throw new MlaException("input x: expected shape " + shape + " (" + expected + " floats), found " + x.length + " floats");
        }
    }

    /** The output y of {@code n} floats, once the heap is known to hold it. */
    private static float[] newOutput(long n) {
        Memory.require(4 * n, "output y of " + n + " floats");
        return new float[Memory.arrayLength(n, "output y")];
    }

    /**
     * The graph rows for a variable-length step: {@link #rowCapacity} on the JVM (a new graph there is only an
     * allocation). On an executor that keeps the cache per graph (TornadoVM: a device copy per plan, compiled
     * once) the smallest graph already built for this cache that is large enough, else the next power of two:
     * a continuous batch runs on the plans it has (none rebuilt, the cache not moved) once it has seen its
     * largest step.
     */
    private int rows(LatentCache cache, int total, AttentionOptions opt) {
        if (!executor.statePerGraph()) return rowCapacity(cache, total);
        int built = -1;
        for (Shape s : steps.keySet()) {
            if (s.cache() == cache && s.opt.equals(opt) && s.rows >= total && (built < 0 || s.rows < built)) built = s.rows;
        }
        if (built > 0) return built;
        return total <= cache.maxSequences() ? cache.maxSequences() : total > (1 << 30) ? total : Integer.highestOneBit(total - 1) << 1;
    }

    /**
     * The token rows of the graph that serves a variable-length step of {@code total} tokens on the JVM: the
     * cache's sequence count for decode-sized steps (every decode step of a continuous batch, however many
     * sequences are active, runs one graph), else {@code total} rounded up to a multiple of 16 (the padding
     * rows compute nothing the step uses).
     */
    public static int rowCapacity(LatentCache cache, int total) {
        if (total <= cache.maxSequences()) return cache.maxSequences();
        return total > Integer.MAX_VALUE - 16 ? total : (total + 15) / 16 * 16;
    }

    private static long totalTokens(int[] seqIds, int[] queryLens) {
        if (seqIds.length != queryLens.length) {
            throw new MlaException("a step names " + seqIds.length + " sequences but gives " + queryLens.length + " token counts");
        }
        if (seqIds.length == 0) throw new MlaException("a step needs at least one sequence");
        long total = 0;
        for (int i = 0; i < queryLens.length; i++) {
            if (queryLens[i] <= 0) throw new MlaException("tokens of sequence " + seqIds[i] + " must be > 0, found " + queryLens[i]);
            total += queryLens[i];
        }
        return total;
    }

    /** One forward step: checks, blocks from the pool, the graph of its row capacity, the kernels, commit. */
    private void run(LatentCache cache, int[] seqIds, int[] queryLens, float[] x, AttentionOptions opt, float[] y, int rows, boolean uniform) {
        CacheStorage storage = CacheStorage.of(cache);
        synchronized (storage) {           // the cache's own lock: another layer's step or a cache call from another thread waits
            int total = (int) totalTokens(seqIds, queryLens);
            if (uniform) requireEverySlot(cache);        // first: with a free slot the expected shape below would mislead
            long expected = (long) total * c.hiddenSize();
            if (x.length != expected) {
                String shape = uniform ? Messages.shape(cache.maxSequences(), total / cache.maxSequences(), c.hiddenSize()) : Messages.shape(total, c.hiddenSize());
                throw new MlaException("input x: expected shape " + shape + " (" + expected + " floats), found " + x.length + " floats");
            }
            if (y.length != expected) throw new MlaException("output y: expected " + expected + " floats, found " + y.length);
            checkGeometry(cache);
            int[] first = new int[seqIds.length];
            long maxPos = 0;
            for (int i = 0; i < seqIds.length; i++) {
                storage.checkSequence(seqIds[i]);
                first[i] = cache.length(seqIds[i]);
                maxPos = Math.max(maxPos, (long) first[i] + queryLens[i]);
            }
            CacheStorage.Appends appends = storage.prepare(seqIds, queryLens);      // room and blocks: refused here, nothing changed
            if (maxPos > c.maxPositionEmbeddings()) {
                throw new MlaException("position " + (maxPos - 1) + " is past max_position_embeddings " + c.maxPositionEmbeddings());
            }
            for (int i = 0; i < x.length; i++) {
                if (!Float.isFinite(x[i])) {
                    int row = i / c.hiddenSize();
                    String at = uniform ? row / (total / cache.maxSequences()) + ", " + row % (total / cache.maxSequences()) : Integer.toString(row);
                    throw new MlaException("input x holds " + x[i] + " at [" + at + ", " + i % c.hiddenSize() + "]; expected finite numbers");
                }
            }
            Step step = step(new Shape(cache, rows, opt));
            System.arraycopy(x, 0, step.x, 0, x.length);
            java.util.Arrays.fill(step.x, x.length, step.x.length, 0f);          // padding rows
            storage.describe(step.attnMeta, rows, seqIds, first, queryLens, appends);
            storage.bind(identity());                 // a cache without an identity belongs to the first layer that fills it
            executor.execute(step.graph);
            requireFinite(step, total, x);          // before the commit: an overflow leaves the cache as it was
            System.arraycopy(step.y, 0, y, 0, y.length);
            storage.commit(appends);
            ranStep = true;
            lastSelected = step.selected;
            lastRows = total;
            lastPerRow = step.selected == null ? 0 : step.selected.length / (step.x.length / c.hiddenSize());
        }
    }

    /**
     * The positions the indexer selected in this layer's last step, for checks against another implementation
     * ({@code ./mla run-layer --write-indices}): [rows, k] with rows the step's token rows in x's order and
     * k = min(index_topk, the cache's capacity), each row's positions in increasing order, −1 after (a row at
     * position p has min(index_topk, p + 1)). Read from the host's copy of the step's buffers, so only on an
     * executor that runs on the JVM's arrays ({@link JvmExecutor}: java-reference, java-fast); refused on
     * TornadoVM (the selection stays on the device), for a dense config or option, and before any step.
     */
    public int[] lastSelection() {
        synchronized (lock) {
            if (!c.sparse()) throw new MlaException("lastSelection: the layer's config is dense (no indexer selects positions)");
            if (!(executor instanceof JvmExecutor)) {
                throw new MlaException("lastSelection reads the selection from the host's arrays; on " + executor.device()
                        + " it stays on the device (use java-reference or java-fast)");
            }
            if (!ranStep) throw new MlaException("lastSelection: the layer has run no step yet");
            if (lastSelected == null) throw new MlaException("lastSelection: the last step attended densely (AttentionOptions.dense), selecting nothing");
            return java.util.Arrays.copyOf(lastSelected, lastRows * lastPerRow);
        }
    }

    /**
     * The graph of one forward shape (built if needed), e.g. to inspect its tasks or hand it to another
     * executor: a {@link KernelGraph#withCopiedWeightsAndState copy} whose WEIGHT and STATE buffers are copies of
     * the weights and of the cache's storage as it stands (writing or running them changes neither what this layer
     * computes nor the cache) and whose other buffers are those of the graph the layer runs (its input, output,
     * metadata and scratch, so that they show its last step).
     */
    public KernelGraph graph(LatentCache cache, int tokens, AttentionOptions opt) {
        Objects.requireNonNull(cache, "cache");
        Objects.requireNonNull(opt, "opt");
        checkShape(cache, tokens);
        synchronized (lock) {
            return step(new Shape(cache, cache.maxSequences() * tokens, opt)).graph.withCopiedWeightsAndState();
        }
    }

    /**
     * What one uniform step of {@code tokens} per sequence moves between host and device on this layer's
     * executor ({@link GraphExecutor#measureTransfers} of the graph the layer runs, which it executes once).
     */
    public GraphExecutor.Transfers measureTransfers(LatentCache cache, int tokens, AttentionOptions opt) {
        Objects.requireNonNull(cache, "cache");
        Objects.requireNonNull(opt, "opt");
        checkShape(cache, tokens);
        synchronized (lock) {
            return executor.measureTransfers(step(new Shape(cache, cache.maxSequences() * tokens, opt)).graph);
        }
    }

    /** The graph a variable-length step of these sequences and token counts runs (built if needed), a copy as {@link #graph(LatentCache, int, AttentionOptions)} returns. */
    public KernelGraph graph(LatentCache cache, int[] seqIds, int[] queryLens, AttentionOptions opt) {
        Objects.requireNonNull(cache, "cache");
        Objects.requireNonNull(seqIds, "seqIds");
        Objects.requireNonNull(queryLens, "queryLens");
        Objects.requireNonNull(opt, "opt");
        checkGeometry(cache);
        int total = (int) totalTokens(seqIds, queryLens);
        synchronized (lock) {
            return step(new Shape(cache, rows(cache, total, opt), opt)).graph.withCopiedWeightsAndState();
        }
    }

    private Step step(Shape shape) {
        forgetDroppedCaches();
        LatentCache cache = shape.cache();
        Built b = steps.get(shape);
        Step s = b == null ? null : b.get();
        if (s == null) {                          // b is null: a live cache holds its steps, so none of its was collected
            AttentionOptions opt = shape.opt.resolved(shape.rows, c.numHeads(), cache.capacity(), executor);
            s = buildGraph(cache, shape.rows, opt);
            CacheStorage.of(cache).keep(s);
            steps.put(shape.kept(), new Built(new WeakReference<>(s), executor instanceof JvmExecutor ? null : s));
            if (steps.size() > MAX_GRAPHS) {
                var eldest = steps.entrySet().iterator().next();
                steps.remove(eldest.getKey());
                forget(eldest.getKey(), eldest.getValue());
            }
        }
        return s;
    }

    /** Releases what the executor holds for one built step, and lets its cache drop it. */
    private void forget(Shape shape, Built built) {
        Step s = built.get();
        if (s == null) return;                    // collected with its cache: the JVM's executors hold nothing for it
        executor.release(s.graph);
        LatentCache cache = shape.cache();
        if (cache != null) CacheStorage.of(cache).unkeep(s);
    }

    /** The graphs of caches the collector has taken (a look at eight keys): released (an executor's plans, device memory) and forgotten. */
    private void forgetDroppedCaches() {
        for (var it = steps.entrySet().iterator(); it.hasNext(); ) {
            var e = it.next();
            if (e.getKey().cache() == null) {
                it.remove();
                forget(e.getKey(), e.getValue());
            }
        }
    }

    /**
     * Identity of a graph: the cache object itself (its arrays are in the graph), token rows and options. A key to
     * look up with holds its cache as the step does; the key kept in {@link #steps} ({@link #kept}) holds it weakly,
     * so that the layer never keeps a cache alive (and a decode step allocates no weak reference).
     */
    private static final class Shape {
        private final LatentCache cache;
        private final WeakReference<LatentCache> weak;
        private final int cacheHash, rows;
        private final AttentionOptions opt;

        Shape(LatentCache cache, int rows, AttentionOptions opt) {
            this(Objects.requireNonNull(cache, "cache"), null, System.identityHashCode(cache), rows, opt);
        }

        private Shape(LatentCache cache, WeakReference<LatentCache> weak, int cacheHash, int rows, AttentionOptions opt) {
            this.cache = cache;
            this.weak = weak;
            this.cacheHash = cacheHash;
            this.rows = rows;
            this.opt = opt;
        }

        /** This key as {@link #steps} keeps it: its cache held weakly. */
        Shape kept() {
            return new Shape(null, new WeakReference<>(cache), cacheHash, rows, opt);
        }

        /** The cache, or null once collected. */
        LatentCache cache() {
            return cache != null ? cache : weak.get();
        }

        @Override
        public boolean equals(Object o) {
            if (o == this) return true;
            if (!(o instanceof Shape s) || s.rows != rows || !s.opt.equals(opt)) return false;
            LatentCache mine = cache();
            return mine != null && mine == s.cache();
        }

        @Override
        public int hashCode() {
            return cacheHash * 31 + rows * 7 + opt.hashCode();
        }
    }

    /** A built step: held weakly (its cache holds it), and strongly where the executor holds its graph anyway. */
    private record Built(WeakReference<Step> weak, Step pinned) {
        Step get() {
            return pinned != null ? pinned : weak.get();
        }
    }

    /** A built graph with the host buffers the layer fills (x, attnMeta) and reads (y), and the indexer's selection (null: none). */
    /** A step's graph and the host arrays it reads or fills (ckv and kvA: the new tokens' latent and k_pe, before the cache). */
    private record Step(KernelGraph graph, float[] x, int[] attnMeta, float[] y, int[] selected, float[] ckv, float[] kvA) {
    }

    /**
     * Finite inputs that overflow float inside the step (|x| near 1e38 through the projections) are refused after the
     * kernels and before the commit, so that neither an infinite latent nor a NaN output reaches the cache or the
     * caller: the new tokens' c_kv and k_pe and the output y, where the executor runs on the JVM's arrays. On a
     * device the latent stays there, and the compile gate's stand-in devices run no kernel at all (their y is
     * whatever the buffer held), so TornadoVM steps are not checked. Without it one such token left Infinity in
     * the cache, and every later step of the sequence returned NaN (naive, absorbed) or zeros (tiled).
     */
    private void requireFinite(Step step, int rows, float[] x) {
        if (!(executor instanceof JvmExecutor)) return;
        int dc = c.kvLoraRank(), dr = c.qkRopeHeadDim(), d = c.hiddenSize();
        String where = null;
        for (int r = 0; r < rows && where == null; r++) {
            for (int i = 0; i < dc; i++) {
                if (!Float.isFinite(step.ckv[r * dc + i])) { where = "the latent c_kv of token row " + r + " holds " + step.ckv[r * dc + i]; break; }
            }
            for (int i = 0; i < dr && where == null; i++) {
                float v = step.kvA[r * (dc + dr) + dc + i];
                if (!Float.isFinite(v)) where = "the rope key k_pe of token row " + r + " holds " + v;
            }
        }
        for (int i = 0; i < rows * d && where == null; i++) {
            if (!Float.isFinite(step.y[i])) where = "the output y holds " + step.y[i] + " at [" + i / d + ", " + i % d + "]";
        }
        if (where == null) return;
        float largest = 0;
        for (float v : x) largest = Math.max(largest, Math.abs(v));
        throw new MlaException("the step overflowed float: " + where + " though the input is finite (its largest magnitude "
                + largest + "); the cache is unchanged");
    }

    /**
     * The dataflow of one forward call, written once, for {@code rows} token rows (a step's tokens, padded).
     * Graph "decode" when there are no more rows than sequences, "prefill" otherwise; task names follow
     * DeepSeek's modules.
     */
    private Step buildGraph(LatentCache cache, int rows, AttentionOptions opt) {
        AttentionCore.requireStepMemory(c, cache, rows, opt, true, w.kvB());
        CacheStorage storage = CacheStorage.of(cache);
        final int bs = cache.blockSize();
        final int d = c.hiddenSize(), h = c.numHeads(), rq = c.qLoraRank(), dc = c.kvLoraRank();
        final int dn = c.qkNopeHeadDim(), dr = c.qkRopeHeadDim(), dv = c.vHeadDim(), qk = dn + dr;
        final float eps = (float) c.rmsNormEps();
        final int dt = cache.dtype().code;
        KernelGraph g = new KernelGraph(rows <= cache.maxSequences() ? "decode" : "prefill");

        // host ↔ device: the step's input and output, its metadata (positions, block tables), weights once, the cache stays
        float[] x = g.input("x", new float[rows * d]);
        int[] attnMeta = g.input("attnMeta", new int[storage.metaLength(rows)]);
        float[] y = g.output("y", new float[rows * d]);
        float[] freq = g.weight("invFreq", invFreq);
        g.state("cache", storage);
        float[] kv32 = storage.floats();
        short[] kv16 = storage.halves();
        byte[] kv8 = storage.bytes();

        // 1. query: q = q_b_proj(q_a_layernorm(q_a_proj(x))), or q_proj(x); q_pe roped in place
        float[] q = g.scratch("q", new float[rows * h * qk]);
        float[] cq = null;                      // the query latent (the indexer's qr too)
        if (c.hasQLora()) {
            float[] cqRaw = g.scratch("q_a", new float[rows * rq]);
            cq = g.scratch("c_q", new float[rows * rq]);
            w.qA().project(g, "q_a_proj", x, cqRaw, rows);
            g.task("q_a_layernorm", Norms::rmsNorm, cqRaw, rq, w.qANorm().asF32(g, "q_a_layernorm_weight"), cq, rows, rq, eps);
            w.qB().project(g, "q_b_proj", cq, q, rows);
        } else {
            w.q().project(g, "q_proj", x, q, rows);
        }
        g.task("rope_q", Rope::rotatePairs, q, h * qk, h, qk, dn, dr, attnMeta, rows, freq, cosSinScale);

        // 2. joint KV down-projection: [c | k_pe]; c_kv = kv_a_layernorm(c); k_pe roped, shared by all heads
        float[] kvA = g.scratch("kv_a", new float[rows * (dc + dr)]);
        float[] ckv = g.scratch("c_kv", new float[rows * dc]);
        w.kvA().project(g, "kv_a_proj_with_mqa", x, kvA, rows);
        g.task("kv_a_layernorm", Norms::rmsNorm, kvA, dc + dr, w.kvANorm().asF32(g, "kv_a_layernorm_weight"), ckv, rows, dc, eps);
        g.task("rope_k", Rope::rotatePairs, kvA, dc + dr, 1, 0, dc, dr, attnMeta, rows, freq, cosSinScale);

        // 3. cache: shared blocks about to be written are copied first (copy-on-write after a fork), then c_kv and k_pe only
        g.task("cache_copy", CacheOps::copyBlocks, kv32, kv16, kv8, dt, attnMeta, rows, cache.maxSequences(), bs, dc, dr);
        g.task("cache_append", CacheOps::append, ckv, kvA, kv32, kv16, kv8, dt, attnMeta, rows, bs, dc, dr);

        // 3b. a sparse config: the indexer's key of every token joins the cache; unless dense, its top-k per row
        int[] selected = c.sparse() ? addIndexer(g, cache, x, cq, freq, attnMeta, rows, opt.dense()) : null;

        // 4. attention over the cache → o [rows, H, d_v]
        float[] o = g.scratch("o", new float[rows * h * dv]);
        AttentionCore.add(g, c, w.kvB(), cache, q, o, attnMeta, rows, opt, selected);

        // 5. output projection
        w.o().project(g, "o_proj", o, y, rows);
        return new Step(g, x, attnMeta, y, selected, ckv, kvA);
    }

    /** Index positions kept per row: index_topk, at most the capacity (a row never sees more positions). */
    static int selectedPerRow(MlaConfig c, LatentCache cache) {
        return Math.min(c.indexer().topK(), cache.capacity());
    }

    /**
     * Step 3b, the lightning indexer of a sparse config (DeepSeek-V3.2's Indexer.forward, {@link Indexer}): the key
     * k = LayerNorm(wk·x), roped (halves unless indexer_rope_interleave), Hadamard-transformed and quantised to
     * e4m3, is appended to the cache's indexer keys at each row's slot (after the copy-on-write of shared blocks);
     * unless {@code dense}, the query q = wq_b·c_q is treated the same way, the head weights come from
     * weights_proj·x, and each row's top-k positions by index score are returned ([rows, k], increasing, −1 after).
     */
    private int[] addIndexer(KernelGraph g, LatentCache cache, float[] x, float[] cq, float[] freq, int[] attnMeta, int rows, boolean dense) {
        CacheStorage storage = CacheStorage.of(cache);
        IndexerConfig ix = c.indexer();
        final int n = ix.nHeads(), di = ix.headDim(), dr = c.qkRopeHeadDim(), blocks = ix.blocks(), bs = cache.blockSize(), cap = cache.capacity();
        final int ue8m0 = ix.ue8m0() ? 1 : 0;
        float[] pow2 = g.weight("indexer.pow2", Bf16.pow2());
        byte[] idxKeys = storage.indexKeys();
        float[] idxScales = storage.indexScales();
        // the key: wk·x, LayerNorm (weight and bias), rope on its first d_r numbers, Hadamard, e4m3 blocks
        float[] k = g.scratch("index_k", new float[rows * di]);
        w.indexerWk().project(g, "indexer.wk", x, k, rows);
        g.task("indexer.k_norm", Indexer::layerNorm, k, w.indexerKNorm().asF32(g, "indexer.k_norm_weight"),
                w.indexerKNormBias().asF32(g, "indexer.k_norm_bias"), k, rows, di, IndexerConfig.K_NORM_EPS);
        if (ix.ropeInterleaved()) g.task("indexer.rope_k", Rope::rotatePairs, k, di, 1, di, 0, dr, attnMeta, rows, freq, cosSinScale);
        else g.task("indexer.rope_k", Indexer::ropeHalves, k, di, 1, di, 0, dr, attnMeta, rows, freq, cosSinScale);
        g.task("indexer.hadamard_k", Indexer::hadamard, k, rows, di, (float) ix.dimScale());
        byte[] kCodes = g.scratch("index_k_fp8", new byte[rows * di]);
        float[] kScales = g.scratch("index_k_scale", new float[rows * blocks]);
        g.task("indexer.quant_k", Indexer::quantizeBlocks, k, kCodes, kScales, rows, di, ue8m0, pow2);
        g.task("indexer.cache_copy", CacheOps::copyIndexBlocks, idxKeys, idxScales, attnMeta, rows, cache.maxSequences(), bs, di);
        g.task("indexer.cache_append", CacheOps::appendIndexKeys, kCodes, kScales, idxKeys, idxScales, attnMeta, rows, bs, di);
        if (dense) return null;
        // the query: wq_b·c_q [rows, n, d], rope, Hadamard, e4m3 per head; head weights from weights_proj·x (f32)
        float[] qi = g.scratch("index_q", new float[rows * n * di]);
        w.indexerWqB().project(g, "indexer.wq_b", cq, qi, rows);
        if (ix.ropeInterleaved()) g.task("indexer.rope_q", Rope::rotatePairs, qi, n * di, n, di, 0, dr, attnMeta, rows, freq, cosSinScale);
        else g.task("indexer.rope_q", Indexer::ropeHalves, qi, n * di, n, di, 0, dr, attnMeta, rows, freq, cosSinScale);
        g.task("indexer.hadamard_q", Indexer::hadamard, qi, rows * n, di, (float) ix.dimScale());
        byte[] qCodes = g.scratch("index_q_fp8", new byte[rows * n * di]);
        float[] qScales = g.scratch("index_q_scale", new float[rows * n * blocks]);
        g.task("indexer.quant_q", Indexer::quantizeBlocks, qi, qCodes, qScales, rows * n, di, ue8m0, pow2);
        float[] hw = g.scratch("index_weights", new float[rows * n]);
        w.indexerWeightsProj().project(g, "indexer.weights_proj", x, hw, rows);
        g.task("indexer.head_weights", Indexer::headWeights, hw, qScales, hw, rows, n, (float) ix.headScale(), (float) ix.dimScale());
        // index scores over the cached keys (the step's own included), then the top-k of each row
        float[] scores = g.scratch("index_scores", new float[AttentionCore.checkedSize("index scores", (long) rows * cap)]);
        g.task("indexer.scores", Indexer::cachedScores, qCodes, hw, idxKeys, idxScales, scores, attnMeta, rows, n, di, cap, bs, pow2);
        int kSel = selectedPerRow(c, cache);
        int[] keys = g.scratch("index_keys", new int[AttentionCore.checkedSize("top-k keys", (long) rows * cap)]);
        int[] hist = g.scratch("index_hist", new int[rows * TopK.BINS]);
        int[] selected = g.scratch("index_topk", new int[AttentionCore.checkedSize("selected positions", (long) rows * kSel)]);
        g.task("indexer.topk", TopK::selectTopK, scores, keys, hist, selected, attnMeta, rows, cap, kSel, pow2);
        return selected;
    }

    /** The checks of a uniform forward shape that need no input: geometry, token count, room, positions, memory. */
    private void checkShape(LatentCache cache, int tokens) {
        checkGeometry(cache);
        if (tokens <= 0) throw new MlaException("tokens per sequence must be > 0, found " + tokens);
        Memory.arrayLength((long) cache.maxSequences() * tokens * c.hiddenSize(), "input x [" + cache.maxSequences() + ", " + tokens + ", " + c.hiddenSize() + "]");
        CacheStorage.of(cache).checkRoom(tokens);
        long maxPos = 0;
        for (int b = 0; b < cache.maxSequences(); b++) maxPos = Math.max(maxPos, (long) cache.length(b) + tokens);
        if (maxPos > c.maxPositionEmbeddings()) {
            throw new MlaException("position " + (maxPos - 1) + " is past max_position_embeddings " + c.maxPositionEmbeddings());
        }
    }

    /** The cache's geometry, and its identity when it has one: a cache filled by another layer (config, index or weights) is refused. */
    private void checkGeometry(LatentCache cache) {
        if (cache.kvLoraRank() != c.kvLoraRank() || cache.ropeDim() != c.qkRopeHeadDim()) {
            throw new MlaException("cache was made for kv_lora_rank " + cache.kvLoraRank() + ", qk_rope_head_dim "
                    + cache.ropeDim() + "; this layer has " + c.kvLoraRank() + ", " + c.qkRopeHeadDim());
        }
        if (cache.sparse() != c.sparse()) {
            throw new MlaException(cache.sparse() ? "a sparse cache (it holds the indexer's keys) was given to a dense layer"
                    : "a dense cache was given to a sparse layer (DeepSeek Sparse Attention also caches the indexer's keys): make the cache with this layer's newCache or newPagedCache");
        }
        CacheIdentity id = cache.identity();
        if (id != null) CacheIdentity.requireSame(id, identity(), "refused: this layer", "the layer the cache belongs to");
    }

    /**
     * Releases what the executor holds for this layer's graphs (device memory under TornadoVM); it does not close
     * the executor. The layer stays usable: a later step builds its graphs again. Closing twice is harmless; a
     * close() while another thread runs a step of this layer waits for that step to end.
     */
    @Override
    public void close() {
        synchronized (lock) {
            for (var e : steps.entrySet()) forget(e.getKey(), e.getValue());
            steps.clear();
            lastSelected = null;
            ranStep = false;
        }
    }
}
