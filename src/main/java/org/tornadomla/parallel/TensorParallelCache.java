package org.tornadomla.parallel;

import org.tornadomla.MlaException;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;

import java.util.List;

/**
 * The latent caches of a {@link TensorParallelLayer}, one per device, each a full cache: every device appends
 * the same rows (c_kv and k_pe come from the heads' shared weights, computed on each device) and its heads
 * attend to all of them. MLA's cache has nothing per head, so tensor parallelism does not shrink it: each of D
 * devices holds every sequence's whole latent (DeepSeek-V3, bf16: 70,272 B per token on each device).
 *
 * <p>Sequences join, leave, fork and roll back through this class, which does it on every device alike so
 * that the devices' caches stay in step; {@link #shard(int)} gives a device's cache to read (its rows, a file
 * export, a store push) — change it only through this class. Not thread-safe, like {@link LatentCache}.
 */
public final class TensorParallelCache {
    private final Object owner;
    private final List<LatentCache> shards;

    TensorParallelCache(Object owner, List<LatentCache> shards) {
        this.owner = owner;
        this.shards = List.copyOf(shards);
    }

    boolean belongsTo(Object layer) {
        return owner == layer;
    }

    /** The devices: one cache each. */
    public int devices() {
        return shards.size();
    }

    /** Device d's cache (the same rows as every other device's). */
    public LatentCache shard(int d) {
        if (d < 0 || d >= shards.size()) throw new MlaException("device " + d + " of a tensor-parallel cache over " + shards.size() + " devices");
        return shards.get(d);
    }

    /** The most sequences at once ({@link LatentCache#maxSequences()}). */
    public int maxSequences() {
        return shards.getFirst().maxSequences();
    }

    /** The most tokens one sequence can hold. */
    public int capacity() {
        return shards.getFirst().capacity();
    }

    /** Whether the caches are paged. */
    public boolean paged() {
        return shards.getFirst().paged();
    }

    /** How the caches store their numbers. */
    public CacheDtype dtype() {
        return shards.getFirst().dtype();
    }

    /** Bytes each device's cache holds ({@link LatentCache#storageBytes()}): the whole latent, on every device. */
    public long storageBytesPerDevice() {
        return shards.getFirst().storageBytes();
    }

    /** Tokens held by sequence b. */
    public int length(int b) {
        return shards.getFirst().length(b);
    }

    /** Whether sequence b is present. */
    public boolean contains(int b) {
        return shards.getFirst().contains(b);
    }

    /** The ids of the sequences present, ascending (a new array). */
    public int[] sequences() {
        return shards.getFirst().sequences();
    }

    /** Adds an empty sequence on every device; returns its id. */
    public int addSequence() {
        int id = shards.getFirst().addSequence();
        for (int d = 1; d < shards.size(); d++) same("addSequence", id, shards.get(d).addSequence(), d);
        return id;
    }

    /** Removes sequence b on every device. */
    public void free(int b) {
        shards.getFirst().free(b);
        for (int d = 1; d < shards.size(); d++) shards.get(d).free(b);
    }

    /** Forks sequence b on every device ({@link LatentCache#fork}); returns the new id. */
    public int fork(int b) {
        int id = shards.getFirst().fork(b);
        for (int d = 1; d < shards.size(); d++) same("fork", id, shards.get(d).fork(b), d);
        return id;
    }

    /** Keeps the first {@code length} tokens of sequence b on every device. */
    public void truncate(int b, int length) {
        for (LatentCache s : shards) s.truncate(b, length);
    }

    /** Forgets every token on every device (sequences stay). */
    public void clear() {
        for (LatentCache s : shards) s.clear();
    }

    private static void same(String what, int expected, int found, int d) {
        if (expected != found) {
            throw new IllegalStateException(what + " gave sequence " + expected + " on device 0 but " + found + " on device " + d
                    + ": the devices' caches were changed apart from this class");
        }
    }

    @Override
    public String toString() {
        return "tensor-parallel cache over " + shards.size() + " devices, each " + shards.getFirst();
    }
}
