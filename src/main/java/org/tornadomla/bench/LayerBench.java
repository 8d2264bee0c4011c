package org.tornadomla.bench;

import org.tornadomla.cache.PagedCacheSpec;
import org.tornadomla.cache.internal.CacheStorage;
import org.tornadomla.MlaException;
import org.tornadomla.attention.AttentionOptions;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.attention.MlaLayer;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.graph.GraphExecutor;
import org.tornadomla.internal.Gaussians;
import org.tornadomla.weights.MlaWeights;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.function.Consumer;

/**
 * A decode step of the whole layer (projections, RoPE, cache append, attention, o_proj: {@link MlaLayer}'s
 * decode graph) at DeepSeek-V3 geometry, timed per batch and context, with the bytes one step copies between
 * host and device. The cache is filled once per batch and dtype up to the largest context; each context is
 * then set through the sequence lengths, so one compiled TornadoVM plan (and one copy of the weights on the
 * device) serves every context of a batch.
 */
public final class LayerBench {
    public static final String CSV_HEADER = "backend,path,dtype,batch,hidden,heads,context,ms_per_step,bytes_to_device,bytes_to_host,kernel_ms";

    /** One timing. Bytes and kernel ms come from one extra step (TornadoVM's profiler; 0 and NaN on the JVM). */
    public record Result(String backend, AttentionPath path, CacheDtype dtype, int batch, int hidden, int heads, int context,
                         double msPerStep, int steps, long bytesToDevice, long bytesToHost, double kernelMs) {
        public String csv() {
            return String.format(Locale.ROOT, "%s,%s,%s,%d,%d,%d,%d,%.6f,%d,%d,%s", backend, path, dtype, batch, hidden, heads, context,
                    msPerStep, bytesToDevice, bytesToHost, Double.isNaN(kernelMs) ? "" : String.format(Locale.ROOT, "%.6f", kernelMs));
        }
    }

    private final MlaConfig config;
    private final MlaWeights weights;
    private final long seed;

    public LayerBench(MlaConfig config, long seed) {
        this(config, seed, org.tornadomla.weights.WeightDtype.F32);
    }

    /** With the projection weights held as {@code form} (DeepSeek-V3 ships FP8). */
    public LayerBench(MlaConfig config, long seed, org.tornadomla.weights.WeightDtype form) {
        this.config = config;
        this.seed = seed;
        MlaWeights w = MlaWeights.random(config, seed);
        this.weights = form == org.tornadomla.weights.WeightDtype.F32 ? w : w.to(form);
    }

    public MlaConfig config() {
        return config;
    }

    /**
     * Times decode steps on {@code executor} for each context (ascending), {@code budgetMs} each after a warm-up
     * of a fifth of that (at least one step). Each step sees the same context: the token it appends is dropped
     * again before the next.
     */
    public List<Result> run(String backend, GraphExecutor executor, AttentionPath path, CacheDtype dtype, int batch,
                            List<Integer> contexts, double budgetMs, Consumer<String> progress) {
        int maxContext = contexts.stream().mapToInt(Integer::intValue).max().orElseThrow();
        int capacity = maxContext + 1;
        String why = DecodeBench.unrepresentable(batch, capacity, config.numHeads(), path);
        if (why != null) throw new MlaException("layer B" + batch + " T" + maxContext + ": " + why);
        int d = config.hiddenSize();
        List<Result> out = new ArrayList<>();
        AttentionOptions opt = AttentionOptions.of(path);
        try (MlaLayer layer = new MlaLayer(weights, executor)) {
            LatentCache cache = layer.newCache(batch, capacity, dtype);
            DecodeBench.fillRepeating(cache, new SplittableRandom(seed + batch), maxContext, config.kvLoraRank(), config.qkRopeHeadDim());
            float[] x = Gaussians.floats(new SplittableRandom(seed + 7), batch * d, 1), y = new float[batch * d];
            for (int context : contexts.stream().sorted().toList()) {
                cache.truncate(0);
                CacheStorage.of(cache).advance(context - 1);                   // the step's own token is number `context`
                Timing timing = Timing.measure(() -> step(layer, cache, x, y, opt, context), budgetMs, 2, cold(executor, path, dtype));
                double ms = timing.meanMs();
                int n = timing.iterations();
                GraphExecutor.Transfers t = layer.measureTransfers(cache, 1, opt);
                Result r = new Result(backend, path, dtype, batch, d, config.numHeads(), context, ms, n, t.toDevice(), t.toHost(), t.kernelMs());
                out.add(r);
                progress.accept(String.format(Locale.ROOT, "layer %-14s %-8s %-4s B%-4d T%-6d %10.3f ms/step  in %,d B  out %,d B%s  [%d steps]",
                        backend, path, dtype, batch, context, ms, r.bytesToDevice(), r.bytesToHost(),
                        Double.isNaN(r.kernelMs()) ? "" : String.format(Locale.ROOT, "  kernels %.3f ms", r.kernelMs()), n));
            }
        }
        return out;
    }

    /** One timing of {@link #mixed}: what ran (mixed, decodes alone, prefill chunks alone), ms per step, steps timed. */
    public record Mixed(String what, int tokens, double msPerStep, int steps) {
    }

    /**
     * A continuous-batching step of the whole layer: {@code decodes} sequences at context {@code context} each
     * decode one token while {@code chunks} new prompts prefill a chunk of {@code chunk} tokens, all in one
     * variable-length call; then, for comparison, the decodes alone and the chunks alone. The cache is paged
     * (blocks of {@code blockSize}, handed out in a shuffled order) or, with blockSize 0, contiguous. Every
     * timed step is rolled back (truncated) so each sees the same contexts.
     */
    public List<Mixed> mixed(GraphExecutor executor, AttentionPath path, CacheDtype dtype, int decodes, int context, int chunks, int chunk,
                             int blockSize, double budgetMs) {
        if (decodes < 0 || chunks < 0 || decodes + chunks < 1 || context < 1 || chunk < 1) {
            throw new MlaException("mixed step: needs decodes, chunks >= 0 (not both 0), context and chunk >= 1, found "
                    + decodes + ", " + chunks + ", " + context + ", " + chunk);
        }
        int seqs = decodes + chunks, d = config.hiddenSize(), dc = config.kvLoraRank(), dr = config.qkRopeHeadDim();
        int capacity = Math.max(context, chunk);
        List<Mixed> out = new ArrayList<>();
        AttentionOptions opt = AttentionOptions.of(path);
        try (MlaLayer layer = new MlaLayer(weights, executor)) {
            LatentCache cache;
            if (blockSize > 0) {
                int perSeq = (capacity + blockSize - 1) / blockSize;
                cache = layer.newPagedCache(PagedCacheSpec.builder().maxSequences(seqs).maxSequenceLength(capacity).numBlocks(seqs * perSeq).blockSize(blockSize).dtype(dtype).build());
                CacheStorage.of(cache).shuffleFreeBlocks(seed);
                for (int b = 0; b < seqs; b++) cache.addSequence();
            } else {
                cache = layer.newCache(seqs, capacity, dtype);
            }
            SplittableRandom rnd = new SplittableRandom(seed + 3);
            int block = Math.min(context - 1, DecodeBench.FILL_BLOCK);
            float[] lat = Gaussians.floats(rnd, Math.max(1, block) * dc, 1), pe = Gaussians.floats(rnd, Math.max(1, block) * dr, 1);
            for (int b = 0; b < decodes; b++) {
                float[] l = new float[(context - 1) * dc], p = new float[(context - 1) * dr];
                for (int t = 0; t < context - 1; t++) {
                    System.arraycopy(lat, (t % block) * dc, l, t * dc, dc);
                    System.arraycopy(pe, (t % block) * dr, p, t * dr, dr);
                }
                cache.write(b, l, p);
            }
            int[] all = new int[seqs], counts = new int[seqs];
            for (int b = 0; b < seqs; b++) {
                all[b] = b;
                counts[b] = b < decodes ? 1 : chunk;
            }
            int[][] ids = {all, java.util.Arrays.copyOf(all, decodes), java.util.Arrays.copyOfRange(all, decodes, seqs)};
            int[][] ns = {counts, java.util.Arrays.copyOf(counts, decodes), java.util.Arrays.copyOfRange(counts, decodes, seqs)};
            String[] names = {"mixed", "decodes alone", "chunks alone"};
            // one untimed step of each first: the JIT compiles the kernels of every shape before any is timed
            for (int k = 0; k < 3; k++) {
                if (ids[k].length == 0) continue;
                int[] id = ids[k], n = ns[k];
                layer.forward(cache, new float[java.util.Arrays.stream(n).sum() * d], id, n, opt);
                for (int i = 0; i < id.length; i++) cache.truncate(id[i], id[i] < decodes ? context - 1 : 0);
            }
            for (int k = 0; k < 3; k++) {
                if (ids[k].length == 0) continue;
                int[] id = ids[k], n = ns[k];
                int tokens = java.util.Arrays.stream(n).sum();
                float[] x = Gaussians.floats(rnd, tokens * d, 1);
                Timing t = Timing.measure(() -> {
                    layer.forward(cache, x, id, n, opt);
                    for (int i = 0; i < id.length; i++) cache.truncate(id[i], id[i] < decodes ? context - 1 : 0);
                }, budgetMs, 2, cold(executor, opt.path(), cache.dtype()));
                out.add(new Mixed(names[k], tokens, t.meanMs(), t.iterations()));
            }
        }
        return out;
    }

    /**
     * Whether this is the first layer step of its kind in this JVM: its projections' and attention's kernels are not
     * compiled yet, so it gets {@link Timing}'s cold warm-up whatever the budget (a first --quick layer shape, B1 T64
     * at hidden 1024, had timed 300–460 ms a step against 9–33 for the larger shapes after it).
     */
    private static boolean cold(GraphExecutor executor, AttentionPath path, CacheDtype dtype) {
        return Timing.firstOfKind("layer " + executor.getClass().getName() + " " + path + " " + dtype);
    }

    private static void step(MlaLayer layer, LatentCache cache, float[] x, float[] y, AttentionOptions opt, int context) {
        layer.forward(cache, x, 1, opt, y);
        cache.truncate(context - 1);                          // drop the appended token: every step sees one context
    }
}
