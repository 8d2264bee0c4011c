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
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * Data-parallel attention: D replicas of one whole MLA layer, one per device, each with the caches of the
 * sequences placed on it ({@link DataParallelCache}). A step names sequences on any devices; each device runs
 * a variable-length step of its own sequences ({@link MlaLayer#forward(LatentCache, float[], int[], int[],
 * AttentionOptions)}), all devices at once, each driven by its own host thread, and the outputs are put back in
 * the caller's order. Nothing crosses between devices: each gets its sequences' input rows and returns their
 * output rows. Every token row is computed by the same kernels as on one device, so with the same executor kind
 * the outputs are the single layer's (bit for bit on the JVM reference).
 *
 * <p>All-or-nothing: should one device refuse or fail, the tokens the others appended in that step are rolled
 * back. Steps from several threads wait for each other.
 */
public final class DataParallelLayers implements AutoCloseable {
    private final MlaWeights weights;
    private final Devices devices;
    private final List<MlaLayer> replicas;

    /**
     * D replicas of {@code weights}' layer, one on each executor. Refused in one line: an empty list, an executor
     * given twice, executors of different kinds. The executors are not owned: close them after {@link #close()}.
     */
    public DataParallelLayers(MlaWeights weights, List<? extends GraphExecutor> executors) {
        this.weights = Objects.requireNonNull(weights, "weights");
        this.devices = new Devices(executors, "Data parallel layers");
        List<MlaLayer> list = new ArrayList<>();
        for (int d = 0; d < devices.count(); d++) list.add(new MlaLayer(weights, devices.executor(d)));
        this.replicas = List.copyOf(list);
    }

    /** The layer's config. */
    public MlaConfig config() {
        return weights.config();
    }

    /** The layer's weights (every device holds all of them). */
    public MlaWeights weights() {
        return weights;
    }

    /** D, the devices. */
    public int devices() {
        return replicas.size();
    }

    /** Device d's replica of the layer. */
    public MlaLayer replica(int d) {
        if (d < 0 || d >= replicas.size()) throw new MlaException("device " + d + " of data-parallel layers over " + replicas.size() + " devices");
        return replicas.get(d);
    }

    /**
     * Contiguous caches, {@code sequencesPerDevice} sequences of up to {@code capacity} tokens on each device:
     * sequence s on device s / sequencesPerDevice.
     */
    public DataParallelCache newCache(int sequencesPerDevice, int capacity, CacheDtype dtype) {
        List<LatentCache> caches = new ArrayList<>();
        for (MlaLayer r : replicas) caches.add(r.newCache(sequencesPerDevice, capacity, dtype));
        return new DataParallelCache(this, caches);
    }

    /** A paged cache of the spec on each device (its own pool; the spec's maxSequences per device). */
    public DataParallelCache newPagedCache(PagedCacheSpec spec) {
        Objects.requireNonNull(spec, "spec");
        List<LatentCache> caches = new ArrayList<>();
        for (MlaLayer r : replicas) caches.add(r.newPagedCache(spec));
        return new DataParallelCache(this, caches);
    }

    /** {@code tokens} new tokens of every sequence slot (each must be present), x [D·P, tokens, D] by sequence id; returns y the same way. */
    public float[] forward(DataParallelCache cache, float[] x, int tokens, AttentionOptions opt) {
        requireOwn(cache);
        if (tokens <= 0) throw new MlaException("tokens per sequence must be > 0, found " + tokens);
        int n = cache.maxSequences();
        for (int s = 0; s < n; s++) {
            if (!cache.contains(s)) {
                throw new MlaException("a step with one token count for all runs every sequence slot (0 … " + (n - 1) + "), but sequence " + s
                        + " is not in the cache: pass the live sequences to forward(cache, x, seqIds, queryLens, opt)");
            }
        }
        int[] ids = new int[n], lens = new int[n];
        for (int s = 0; s < n; s++) ids[s] = s;
        Arrays.fill(lens, tokens);
        return forward(cache, x, ids, lens, opt);
    }

    /** As {@link #forward(DataParallelCache, float[], int, AttentionOptions)} with the path's default options. */
    public float[] forward(DataParallelCache cache, float[] x, int tokens, AttentionPath path) {
        return forward(cache, x, tokens, AttentionOptions.of(Objects.requireNonNull(path, "path")));
    }

    /**
     * A variable-length step over sequences on any devices: sequence seqIds[i] brings queryLens[i] ≥ 1 tokens,
     * x [Σ queryLens, D] packed in that order; returns y [Σ queryLens, D] in the same order. Each device runs its
     * sequences in the order they are named. The step's shape is checked here first (a sequence named twice, an
     * id outside the cache, counts, x's length); the rest by each device's layer, and a refusal on any device
     * leaves every device's cache as it was.
     */
    public float[] forward(DataParallelCache cache, float[] x, int[] seqIds, int[] queryLens, AttentionOptions opt) {
        requireOwn(cache);
        Objects.requireNonNull(x, "x");
        Objects.requireNonNull(seqIds, "seqIds");
        Objects.requireNonNull(queryLens, "queryLens");
        Objects.requireNonNull(opt, "opt");
        if (seqIds.length != queryLens.length) {
            throw new MlaException("a step names " + seqIds.length + " sequences but gives " + queryLens.length + " token counts");
        }
        if (seqIds.length == 0) throw new MlaException("a step needs at least one sequence");
        int hidden = weights.config().hiddenSize(), nDev = replicas.size();
        long total = 0;
        boolean[] seen = new boolean[cache.maxSequences()];
        int[] count = new int[nDev];
        for (int i = 0; i < seqIds.length; i++) {
            int s = seqIds[i];
            cache.deviceOf(s);                                  // an id of this cache
            if (seen[s]) throw new MlaException("sequence " + s + " is named twice in one step");
            seen[s] = true;
            if (queryLens[i] <= 0) throw new MlaException("tokens of sequence " + s + " must be > 0, found " + queryLens[i]);
            total += queryLens[i];
            count[s / cache.sequencesPerDevice()]++;
        }
        if (x.length != total * hidden) {
            throw new MlaException("input x: expected shape [" + total + ", " + hidden + "] (" + total * hidden + " floats), found " + x.length + " floats");
        }
        // each device's sequences, in the caller's order, with where their rows are in x and y
        int used = 0;
        for (int c : count) used += c > 0 ? 1 : 0;
        int[] active = new int[used];
        int[][] local = new int[nDev][], lens = new int[nDev][], rowAt = new int[nDev][], global = new int[nDev][];
        for (int d = 0, k = 0; d < nDev; d++) {
            local[d] = new int[count[d]];
            global[d] = new int[count[d]];
            lens[d] = new int[count[d]];
            rowAt[d] = new int[count[d]];
            if (count[d] > 0) active[k++] = d;
        }
        int[] fill = new int[nDev], before = new int[seqIds.length];
        for (int i = 0, row = 0; i < seqIds.length; row += queryLens[i], i++) {
            int d = cache.deviceOf(seqIds[i]), j = fill[d]++;
            local[d][j] = cache.localId(seqIds[i]);
            global[d][j] = seqIds[i];
            lens[d][j] = queryLens[i];
            rowAt[d][j] = row;
            before[i] = cache.contains(seqIds[i]) ? cache.length(seqIds[i]) : -1;
        }
        float[] y = new float[x.length];
        synchronized (this) {
            List<float[]> outs;
            try {
                outs = devices.run(active, d -> {
                    int rows = 0;
                    for (int n : lens[d]) rows += n;
                    float[] xd = new float[rows * hidden];
                    for (int j = 0, at = 0; j < local[d].length; at += lens[d][j], j++) {
                        System.arraycopy(x, rowAt[d][j] * hidden, xd, at * hidden, lens[d][j] * hidden);
                    }
                    try {
                        return replicas.get(d).forward(cache.cache(d), xd, local[d], lens[d], opt);
                    } catch (MlaException e) {
                        // the replica speaks of its own cache's ids: say which device and which of the caller's sequences
                        throw new MlaException("device " + d + " (" + devices.executor(d).device() + "), sequences "
                                + java.util.Arrays.toString(global[d]) + " (there " + java.util.Arrays.toString(local[d]) + "): " + e.getMessage(), e);
                    }
                });
            } catch (RuntimeException | Error e) {
                for (int i = 0; i < seqIds.length; i++) {
                    LatentCache c = cache.cache(cache.deviceOf(seqIds[i]));
                    TensorParallelLayer.rollBack(List.of(c), new int[] {cache.localId(seqIds[i])}, new int[] {before[i]}, e);
                }
                throw e;
            }
            for (int k = 0; k < active.length; k++) {
                int d = active[k];
                float[] yd = outs.get(k);
                for (int j = 0, at = 0; j < local[d].length; at += lens[d][j], j++) {
                    System.arraycopy(yd, at * hidden, y, rowAt[d][j] * hidden, lens[d][j] * hidden);
                }
            }
        }
        return y;
    }

    /** As {@link #forward(DataParallelCache, float[], int[], int[], AttentionOptions)} with the path's default options. */
    public float[] forward(DataParallelCache cache, float[] x, int[] seqIds, int[] queryLens, AttentionPath path) {
        return forward(cache, x, seqIds, queryLens, AttentionOptions.of(Objects.requireNonNull(path, "path")));
    }

    private void requireOwn(DataParallelCache cache) {
        Objects.requireNonNull(cache, "cache");
        if (!cache.belongsTo(this)) {
            throw new MlaException("mismatched devices: this data-parallel cache (" + cache.devices() + " devices) was made by other DataParallelLayers; "
                    + "layers step only the caches they made (newCache, newPagedCache), which live on their devices");
        }
    }

    /** Releases the replicas' graphs ({@link MlaLayer#close()}) and the device threads; not the executors. */
    @Override
    public synchronized void close() {
        for (MlaLayer r : replicas) r.close();
        devices.close();
    }

    @Override
    public String toString() {
        return "data-parallel MLA layers over " + replicas.size() + " devices on " + devices.executor(0).device();
    }
}
