package org.tornadomla.bench;

import org.tornadomla.MlaException;
import org.tornadomla.attention.AttentionOptions;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.attention.MlaLayer;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.cache.internal.CacheStorage;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.graph.GraphExecutor;
import org.tornadomla.graph.JvmExecutor;
import org.tornadomla.graph.KernelGraph;
import org.tornadomla.internal.Gaussians;
import org.tornadomla.weights.MlaWeights;
import org.tornadomla.weights.WeightDtype;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.function.Consumer;

/**
 * {@code mla bench --sparse}: a decode step of the whole layer of a sparse config (DeepSeek-V3.2's geometry by
 * default), DeepSeek Sparse Attention against dense attention over the same cache ({@link AttentionOptions#withDense}),
 * per batch and context: ms per step of each, the indexer's share of the sparse step (its "indexer.*" tasks, timed
 * one by one on a JVM executor), and the cache bytes each step reads: dense B·T latent rows, sparse B·min(k, T) latent
 * rows plus the indexer's B·T keys (132 bytes each for V3.2).
 *
 * <p>A sparse cache cannot be written from the host ({@code LatentCache.write} refuses: a latent alone has no indexer
 * key), and prefilling 128k tokens through the layer is hours of work on a small machine. So the layer's own prefill
 * computes the first {@link #FILL_ROWS} tokens of sequence 0 (latent, rope key and indexer key, as a serving engine
 * would cache them), and {@link CacheStorage#repeatRows} repeats those rows over every sequence up to the largest
 * context, each sequence from its own starting row: what the kernels read has the layout and size of a real cache,
 * only its values repeat (the dense bench fills its cache the same way). Timing does not depend on the values,
 * except that the top-k sees each score repeated T / FILL_ROWS times.
 */
public final class SparseBench {
    public static final String CSV_HEADER = "backend,path,dtype,batch,hidden,heads,context,topk,dense_ms,sparse_ms,indexer_ms,indexer_share,"
            + "dense_latent_bytes,sparse_latent_bytes,indexer_bytes,dense_steps,sparse_steps";

    /** Tokens the layer's own prefill computes before they are repeated over the cache. */
    public static final int FILL_ROWS = 256;

    /**
     * One point. indexerMs and indexerShare come from a breakdown of the sparse step's tasks (JVM executors only;
     * NaN elsewhere): the indexer's tasks' mean ms and their fraction of the sum of all tasks' ms.
     */
    public record Result(String backend, AttentionPath path, CacheDtype dtype, int batch, int hidden, int heads, int context, int topK,
                         double denseMs, double sparseMs, double indexerMs, double indexerShare,
                         long denseLatentBytes, long sparseLatentBytes, long indexerBytes, int denseSteps, int sparseSteps) {
        /** What a sparse step reads: its latent rows and every indexer key. */
        public long sparseBytes() {
            return sparseLatentBytes + indexerBytes;
        }

        public boolean sparseWins() {
            return sparseMs < denseMs;
        }

        public String csv() {
            return String.format(Locale.ROOT, "%s,%s,%s,%d,%d,%d,%d,%d,%.6f,%.6f,%s,%s,%d,%d,%d,%d,%d", backend, path, dtype, batch, hidden, heads,
                    context, topK, denseMs, sparseMs, num(indexerMs), num(indexerShare), denseLatentBytes, sparseLatentBytes, indexerBytes,
                    denseSteps, sparseSteps);
        }

        private static String num(double v) {
            return Double.isNaN(v) ? "" : String.format(Locale.ROOT, "%.6f", v);
        }
    }

    private final MlaConfig config;
    private final MlaWeights weights;
    private final long seed;
    private boolean breakdown;

    /** From now on, also report the sparse step's tasks by mean ms, largest first (JVM executors). */
    public SparseBench breakdown(boolean on) {
        breakdown = on;
        return this;
    }

    /** A bench of {@code config} (it must have an indexer), its weights random (seeded) and held as {@code form}. */
    public SparseBench(MlaConfig config, long seed, WeightDtype form) {
        if (!config.sparse()) {
            throw new MlaException("the sparse bench needs a config with an indexer (index_n_heads, index_head_dim, index_topk: "
                    + "the presets deepseek-v3.2, glm-5), found a dense one");
        }
        this.config = config;
        this.seed = seed;
        MlaWeights w = MlaWeights.random(config, seed);
        this.weights = form == WeightDtype.F32 ? w : w.to(form);
    }

    public MlaConfig config() {
        return config;
    }

    /** Latent bytes a dense step reads: B·T rows of the dtype (scales included). */
    public static long denseLatentBytes(MlaConfig c, CacheDtype dtype, int batch, int context) {
        return (long) batch * context * dtype.bytesPerToken(c.kvLoraRank(), c.qkRopeHeadDim());
    }

    /** Latent bytes a sparse step reads: B·min(index_topk, T) rows (a row never sees more than T positions). */
    public static long sparseLatentBytes(MlaConfig c, CacheDtype dtype, int batch, int context) {
        return (long) batch * Math.min(c.indexer().topK(), context) * dtype.bytesPerToken(c.kvLoraRank(), c.qkRopeHeadDim());
    }

    /** Indexer key bytes a sparse step reads: every cached key, B·T·(d + 4·d/128). */
    public static long indexerBytes(MlaConfig c, int batch, int context) {
        return (long) batch * context * c.indexer().cacheBytesPerToken();
    }

    /** Bytes of a cache of {@code batch} × {@code capacity} tokens with the indexer's keys. */
    public static long cacheBytes(MlaConfig c, CacheDtype dtype, int batch, int capacity) {
        return (long) batch * capacity * (dtype.bytesPerToken(c.kvLoraRank(), c.qkRopeHeadDim()) + c.indexer().cacheBytesPerToken());
    }

    /**
     * Times dense and sparse decode steps on {@code executor} for each context (ascending), {@code budgetMs} each with
     * the project's harness ({@link Timing}). The cache (capacity: the largest context) is filled once per call, its
     * first rows by a prefill on {@code filler} (the fastest executor at hand; the timed one when null). Each result
     * goes to {@code onResult} as soon as it is measured.
     */
    public List<Result> run(String backend, GraphExecutor executor, GraphExecutor filler, AttentionPath path, CacheDtype dtype, int batch,
                            List<Integer> contexts, double budgetMs, Consumer<String> progress, Consumer<Result> onResult) {
        List<Integer> ts = contexts.stream().sorted().toList();
        int maxContext = ts.get(ts.size() - 1), capacity = maxContext;
        if (ts.get(0) < 2) throw new MlaException("sparse bench: contexts must be >= 2 tokens, found " + ts.get(0));
        int d = config.hiddenSize(), k = config.indexer().topK();
        AttentionOptions sparse = AttentionOptions.of(path), dense = sparse.withDense(true);
        List<Result> out = new ArrayList<>();
        try (MlaLayer layer = new MlaLayer(weights, executor)) {
            long f0 = System.nanoTime();
            LatentCache cache = layer.newCache(batch, capacity, dtype);
            int fill = Math.min(FILL_ROWS, maxContext);
            try (MlaLayer fillLayer = new MlaLayer(weights, filler != null ? filler : executor)) {
                float[] prompt = Gaussians.floats(new SplittableRandom(seed + 5), fill * d, 1);
                // dense: the prefill still computes and caches every token's indexer key (what the fill is for), and
                // attending to its own ≤ FILL_ROWS positions densely skips the top-k gathers over k slots per row
                fillLayer.forward(cache, prompt, new int[] {0}, new int[] {fill}, dense);
            }
            CacheStorage storage = CacheStorage.of(cache);
            storage.repeatRows(0, fill, maxContext);
            progress.accept(String.format(Locale.ROOT, "  (cache B%d x %d tokens %s + indexer keys: %.2f GB; %d tokens prefilled through the layer, "
                    + "repeated; %.1f s)", batch, capacity, dtype, cacheBytes(config, dtype, batch, capacity) / 1e9, fill, (System.nanoTime() - f0) / 1e9));
            float[] x = Gaussians.floats(new SplittableRandom(seed + 7), batch * d, 1), y = new float[batch * d];
            for (int context : ts) {
                cache.truncate(0);
                storage.advance(context - 1);                       // the step's own token is number `context`
                Timing td = Timing.measure(() -> step(layer, cache, x, y, dense, context), budgetMs, 2);
                Timing tsp = Timing.measure(() -> step(layer, cache, x, y, sparse, context), budgetMs, 2);
                java.util.Map<String, Double> tasks = new java.util.LinkedHashMap<>();
                double[] ix = executor instanceof JvmExecutor jvm
                        ? indexerShare(layer, jvm, cache, x, y, sparse, context, Math.max(2, Math.min(10, tsp.iterations() / 2)), tasks)
                        : new double[] {Double.NaN, Double.NaN};
                Result r = new Result(backend, path, dtype, batch, d, config.numHeads(), context, k, td.meanMs(), tsp.meanMs(), ix[0], ix[1],
                        denseLatentBytes(config, dtype, batch, context), sparseLatentBytes(config, dtype, batch, context),
                        indexerBytes(config, batch, context), td.iterations(), tsp.iterations());
                out.add(r);
                onResult.accept(r);
                progress.accept(line(r));
                if (breakdown && !tasks.isEmpty()) {
                    StringBuilder sb = new StringBuilder("    sparse step's tasks, mean ms, largest first:");
                    tasks.entrySet().stream().sorted(java.util.Map.Entry.<String, Double>comparingByValue().reversed()).limit(12)
                            .forEach(t -> sb.append(String.format(Locale.ROOT, " %s %.3f", t.getKey(), t.getValue())));
                    progress.accept(sb.toString());
                }
            }
        }
        return out;
    }

    /** The table's header, matching {@link #line}. */
    public static String header() {
        return String.format("%-14s %-5s %-5s %-8s %11s %11s %8s %11s %9s %12s %12s", "backend", "dtype", "batch", "context", "dense ms",
                "sparse ms", "ratio", "indexer ms", "indexer%", "dense MB", "sparse MB");
    }

    /** One row of the table: ms per step, sparse / dense, the indexer's ms and share, MB read per step. */
    public static String line(Result r) {
        return String.format(Locale.ROOT, "%-14s %-5s B%-4d T%-7d %11.3f %11.3f %8.3f %11s %9s %12.2f %12.2f   [%d + %d steps]", r.backend(),
                r.dtype(), r.batch(), r.context(), r.denseMs(), r.sparseMs(), r.sparseMs() / r.denseMs(),
                Double.isNaN(r.indexerMs()) ? "-" : String.format(Locale.ROOT, "%.3f", r.indexerMs()),
                Double.isNaN(r.indexerShare()) ? "-" : String.format(Locale.ROOT, "%.1f%%", 100 * r.indexerShare()),
                r.denseLatentBytes() / 1e6, r.sparseBytes() / 1e6, r.denseSteps(), r.sparseSteps());
    }

    /**
     * The first context at which sparse is faster than dense among {@code results} of one backend, dtype and batch
     * (ascending contexts), or -1 when it is not within the contexts measured.
     */
    public static int crossover(List<Result> results) {
        for (Result r : results.stream().sorted(java.util.Comparator.comparingInt(Result::context)).toList()) {
            if (r.sparseWins()) return r.context();
        }
        return -1;
    }

    /**
     * {indexer ms, indexer share}: the sparse step's graph (the one the layer runs, as it stands after a step at this
     * context) run {@code steps} times with each task timed on its own; the indexer's tasks are those named "indexer.*".
     */
    private static double[] indexerShare(MlaLayer layer, JvmExecutor jvm, LatentCache cache, float[] x, float[] y, AttentionOptions opt,
                                         int context, int steps, java.util.Map<String, Double> tasks) {
        step(layer, cache, x, y, opt, context);                  // the layer's buffers now describe a step at this context
        KernelGraph g = layer.graph(cache, 1, opt);
        long[] ns = new long[g.tasks().size()];
        jvm.execute(g);                                          // the copy's weights: one untimed run
        for (int i = 0; i < steps; i++) jvm.execute(g, ns);
        long all = 0, indexer = 0;
        for (int i = 0; i < ns.length; i++) {
            all += ns[i];
            if (g.tasks().get(i).id().startsWith("indexer.")) indexer += ns[i];
            tasks.merge(g.tasks().get(i).id(), ns[i] / 1e6 / steps, Double::sum);
        }
        return new double[] {indexer / 1e6 / steps, all == 0 ? Double.NaN : (double) indexer / all};
    }

    private static void step(MlaLayer layer, LatentCache cache, float[] x, float[] y, AttentionOptions opt, int context) {
        layer.forward(cache, x, 1, opt, y);
        cache.truncate(context - 1);                          // drop the appended token: every step sees one context
    }
}
