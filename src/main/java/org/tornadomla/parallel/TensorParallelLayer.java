package org.tornadomla.parallel;

import org.tornadomla.MlaException;
import org.tornadomla.attention.AttentionOptions;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.attention.MlaLayer;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.cache.PagedCacheSpec;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.graph.GraphExecutor;
import org.tornadomla.weights.MlaWeights;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.IntFunction;
import java.util.stream.IntStream;

/**
 * One MLA layer over D devices by tensor-parallel heads, as DeepSeek's {@code inference/model.py} cuts it for
 * a world of D ranks: device d holds heads [d·H/D, (d+1)·H/D) ({@link MlaWeights#heads}: its rows of q_b_proj
 * and kv_b_proj, its columns of o_proj) and the shared projections whole (q_a_proj, kv_a_proj_with_mqa and
 * their norms), as an {@link MlaLayer} of H/D heads on its own executor, with a full latent cache
 * ({@link TensorParallelCache}). A step sends the hidden state x to every device; each computes the shared
 * latent and key (the same rows, appended to its own cache), its heads' attention and its partial o_proj
 * output y_d = o_proj[:, heads of d]·o[heads of d]; the host sums y = y_0 + … + y_{D−1} (DeepSeek's
 * all-reduce after the {@code RowParallelLinear} wo; o_proj has no bias, so nothing is added twice).
 *
 * <p>The devices run at once, each driven by its own host thread. The result is the single-device layer's
 * within f32 rounding (the o_proj sum is split into D partial sums). Checks are the layers': a step one
 * device refuses is refused by all (they see the same cache and input), and should a device fail during a
 * step, the tokens the others appended are rolled back, so the caches stay in step. Steps from several
 * threads wait for each other.
 */
public final class TensorParallelLayer implements AutoCloseable {
    private final MlaWeights weights;
    private final Devices devices;
    private final List<MlaLayer> shards;
    private final int headsPerDevice;

    /**
     * A layer of {@code weights} over the devices of {@code executors}, one shard of H/D heads each. Refused in
     * one line: H not divisible by D, an empty list, an executor given twice, executors of different kinds; FP8
     * weights whose shards would cut a 128 × 128 scale block ({@link MlaWeights#heads}). The layer does not own
     * the executors: close them yourself after {@link #close()}.
     */
    public TensorParallelLayer(MlaWeights weights, List<? extends GraphExecutor> executors) {
        this.weights = Objects.requireNonNull(weights, "weights");
        Objects.requireNonNull(executors, "executors");
        int h = weights.config().numHeads(), n = executors.size();
        if (n > 0 && h % n != 0) {
            throw new MlaException("tensor parallelism over " + n + " devices needs num_attention_heads divisible by " + n + ", found " + h
                    + " heads (" + h + " % " + n + " = " + h % n + ")");
        }
        this.devices = new Devices(executors, "Tensor parallel layer");
        this.headsPerDevice = h / n;
        List<MlaLayer> list = new ArrayList<>();
        for (int d = 0; d < n; d++) list.add(new MlaLayer(weights.heads(d * headsPerDevice, (d + 1) * headsPerDevice), devices.executor(d)));
        this.shards = List.copyOf(list);
    }

    /** The whole layer's config (H heads). */
    public MlaConfig config() {
        return weights.config();
    }

    /** The whole layer's weights. */
    public MlaWeights weights() {
        return weights;
    }

    /** D, the devices. */
    public int devices() {
        return shards.size();
    }

    /** H/D, the heads each device holds. */
    public int headsPerDevice() {
        return headsPerDevice;
    }

    /** Device d's shard: an {@link MlaLayer} of heads [d·H/D, (d+1)·H/D) on its executor. */
    public MlaLayer shard(int d) {
        if (d < 0 || d >= shards.size()) throw new MlaException("device " + d + " of a tensor-parallel layer over " + shards.size() + " devices");
        return shards.get(d);
    }

    /** Contiguous caches on every device, {@code batch} sequences of up to {@code capacity} tokens each. */
    public TensorParallelCache newCache(int batch, int capacity, CacheDtype dtype) {
        List<LatentCache> caches = new ArrayList<>();
        for (MlaLayer s : shards) caches.add(s.newCache(batch, capacity, dtype));
        return new TensorParallelCache(this, caches);
    }

    /** Paged caches of the spec on every device (each its own pool of the spec's blocks). */
    public TensorParallelCache newPagedCache(PagedCacheSpec spec) {
        Objects.requireNonNull(spec, "spec");
        List<LatentCache> caches = new ArrayList<>();
        for (MlaLayer s : shards) caches.add(s.newPagedCache(spec));
        return new TensorParallelCache(this, caches);
    }

    /** {@code tokens} new tokens of every sequence slot, x [B, tokens, D], as {@link MlaLayer#forward(LatentCache, float[], int, AttentionOptions)}; returns y [B, tokens, D]. */
    public float[] forward(TensorParallelCache cache, float[] x, int tokens, AttentionOptions opt) {
        requireOwn(cache);
        Objects.requireNonNull(x, "x");
        Objects.requireNonNull(opt, "opt");
        return step(cache, IntStream.range(0, cache.maxSequences()).toArray(), d -> shards.get(d).forward(cache.shard(d), x, tokens, opt));
    }

    /** As {@link #forward(TensorParallelCache, float[], int, AttentionOptions)} with the path's default options. */
    public float[] forward(TensorParallelCache cache, float[] x, int tokens, AttentionPath path) {
        return forward(cache, x, tokens, AttentionOptions.of(Objects.requireNonNull(path, "path")));
    }

    /**
     * A variable-length step, as {@link MlaLayer#forward(LatentCache, float[], int[], int[], AttentionOptions)}:
     * sequence seqIds[i] brings queryLens[i] tokens, x [Σ queryLens, D] packed in that order; returns y in the same order.
     */
    public float[] forward(TensorParallelCache cache, float[] x, int[] seqIds, int[] queryLens, AttentionOptions opt) {
        requireOwn(cache);
        Objects.requireNonNull(x, "x");
        Objects.requireNonNull(opt, "opt");
        int[] ids = Objects.requireNonNull(seqIds, "seqIds").clone(), lens = Objects.requireNonNull(queryLens, "queryLens").clone();
        return step(cache, ids, d -> shards.get(d).forward(cache.shard(d), x, ids, lens, opt));
    }

    /** As {@link #forward(TensorParallelCache, float[], int[], int[], AttentionOptions)} with the path's default options. */
    public float[] forward(TensorParallelCache cache, float[] x, int[] seqIds, int[] queryLens, AttentionPath path) {
        return forward(cache, x, seqIds, queryLens, AttentionOptions.of(Objects.requireNonNull(path, "path")));
    }

    private void requireOwn(TensorParallelCache cache) {
        Objects.requireNonNull(cache, "cache");
        if (!cache.belongsTo(this)) {
            throw new MlaException("mismatched devices: this tensor-parallel cache (" + cache.devices() + " devices) was made by another TensorParallelLayer; "
                    + "a layer steps only the caches it made (newCache, newPagedCache), which live on its devices");
        }
    }

    /** Runs the shards at once, rolls back every device's appends if any failed, and sums the partial outputs. */
    private synchronized float[] step(TensorParallelCache cache, int[] seqIds, IntFunction<float[]> shardStep) {
        requireInStep(cache, seqIds);
        int[] before = new int[seqIds.length];
        for (int i = 0; i < seqIds.length; i++) before[i] = cache.contains(seqIds[i]) ? cache.length(seqIds[i]) : -1;
        List<float[]> parts;
        try {
            parts = devices.run(IntStream.range(0, shards.size()).toArray(), shardStep);
        } catch (RuntimeException | Error e) {
            rollBack(cache, seqIds, before, e);
            throw e;
        }
        float[] y = parts.getFirst();
        for (int d = 1; d < parts.size(); d++) {
            float[] p = parts.get(d);
            for (int i = 0; i < y.length; i++) y[i] += p[i];
        }
        return y;
    }

    /**
     * Every device's cache holds the step's sequences at one length: a shard changed directly ({@link
     * TensorParallelCache#shard} hands out each device's cache to read) would else let the devices' heads attend to
     * different contexts, and the summed output mix them without a sign.
     */
    private static void requireInStep(TensorParallelCache cache, int[] seqIds) {
        LatentCache first = cache.shard(0);
        for (int b : seqIds) {
            if (b < 0 || b >= first.maxSequences()) continue;          // the layers refuse it, naming the range
            int len0 = first.contains(b) ? first.length(b) : -1;
            for (int d = 1; d < cache.devices(); d++) {
                LatentCache c = cache.shard(d);
                int len = c.contains(b) ? c.length(b) : -1;
                if (len != len0) {
                    throw new MlaException("tensor-parallel cache out of step: sequence " + b + " " + held(len0) + " on device 0 but "
                            + held(len) + " on device " + d + " (a device's cache was changed directly; change it through TensorParallelCache)");
                }
            }
        }
    }

    private static String held(int len) {
        return len < 0 ? "is absent" : "holds " + len + (len == 1 ? " token" : " tokens");
    }

    /** After a failed step: each device's sequences back to their lengths before it (nothing changed where a device refused). */
    static void rollBack(List<LatentCache> caches, int[] seqIds, int[] before, Throwable failure) {
        for (LatentCache c : caches) {
            for (int i = 0; i < seqIds.length; i++) {
                try {
                    if (before[i] >= 0 && c.contains(seqIds[i]) && c.length(seqIds[i]) > before[i]) c.truncate(seqIds[i], before[i]);
                } catch (RuntimeException r) {
                    failure.addSuppressed(r);
                }
            }
        }
    }

    private static void rollBack(TensorParallelCache cache, int[] seqIds, int[] before, Throwable failure) {
        List<LatentCache> caches = new ArrayList<>();
        for (int d = 0; d < cache.devices(); d++) caches.add(cache.shard(d));
        rollBack(caches, seqIds, before, failure);
    }

    /** Releases the shards' graphs ({@link MlaLayer#close()}) and the device threads; not the executors. */
    @Override
    public synchronized void close() {
        for (MlaLayer s : shards) s.close();
        devices.close();
    }

    @Override
    public String toString() {
        return "tensor-parallel MLA layer over " + shards.size() + " devices (" + headsPerDevice + " heads each) on " + devices.executor(0).device();
    }
}
