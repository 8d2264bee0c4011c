package org.tornadomla.parallel;

import org.tornadomla.MlaException;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;

import java.util.List;

/**
 * The caches of {@link DataParallelLayers}: each device its own cache, holding only the sequences placed on
 * it. A sequence has one id across the devices: with P = {@link #sequencesPerDevice()} slots per device,
 * sequence s lives on device s / P as that device's sequence s % P. A contiguous cache places sequences
 * 0 … P−1 on device 0, P … 2P−1 on device 1, and so on, all present from the start; a paged one places a new
 * sequence where it is asked to ({@link #addSequence(int)}) or on the device with the most free blocks
 * ({@link #addSequence()}). A fork stays on its sequence's device.
 *
 * <p>{@link #cache(int)} gives a device's cache to read (its rows, a file export, a store push); sequences
 * join and leave through this class. Not thread-safe, like {@link LatentCache}.
 */
public final class DataParallelCache {
    private final Object owner;
    private final List<LatentCache> caches;
    private final int perDevice;

    DataParallelCache(Object owner, List<LatentCache> caches) {
        this.owner = owner;
        this.caches = List.copyOf(caches);
        this.perDevice = caches.getFirst().maxSequences();
    }

    boolean belongsTo(Object layers) {
        return owner == layers;
    }

    /** The devices: one cache each. */
    public int devices() {
        return caches.size();
    }

    /** Device d's cache (the sequences placed on it, by their ids on that device, {@link #localId}). */
    public LatentCache cache(int d) {
        if (d < 0 || d >= caches.size()) throw new MlaException("device " + d + " of a data-parallel cache over " + caches.size() + " devices");
        return caches.get(d);
    }

    /** P: the sequence slots of each device. */
    public int sequencesPerDevice() {
        return perDevice;
    }

    /** The most sequences at once, over all devices: D·P (ids 0 … D·P − 1). */
    public int maxSequences() {
        return perDevice * caches.size();
    }

    /** Whether the caches are paged. */
    public boolean paged() {
        return caches.getFirst().paged();
    }

    /** How the caches store their numbers. */
    public CacheDtype dtype() {
        return caches.getFirst().dtype();
    }

    /** The device sequence s is placed on: s / P. */
    public int deviceOf(int s) {
        check(s);
        return s / perDevice;
    }

    /** Sequence s's id in its device's cache: s % P. */
    public int localId(int s) {
        check(s);
        return s % perDevice;
    }

    private void check(int s) {
        if (s < 0 || s >= maxSequences()) {
            throw new MlaException("sequence " + s + " is not an id of this data-parallel cache (0 … " + (maxSequences() - 1) + ": "
                    + caches.size() + " devices of " + perDevice + ")");
        }
    }

    /** Whether sequence s is present. */
    public boolean contains(int s) {
        return s >= 0 && s < maxSequences() && caches.get(s / perDevice).contains(s % perDevice);
    }

    /** Tokens held by sequence s. */
    public int length(int s) {
        check(s);
        return caches.get(s / perDevice).length(s % perDevice);
    }

    /** The ids of the sequences present, ascending (a new array). */
    public int[] sequences() {
        int n = 0;
        for (LatentCache c : caches) n += c.sequences().length;
        int[] out = new int[n];
        int i = 0;
        for (int d = 0; d < caches.size(); d++) for (int b : caches.get(d).sequences()) out[i++] = d * perDevice + b;
        return out;
    }

    /**
     * Adds an empty sequence on the device with a free slot and the most free blocks (then the fewest sequences,
     * then the lowest index); returns its id. Refused when every slot is in use.
     */
    public int addSequence() {
        int best = -1;
        for (int d = 0; d < caches.size(); d++) {
            LatentCache c = caches.get(d);
            if (c.sequences().length >= perDevice) continue;
            if (best < 0) {
                best = d;
                continue;
            }
            LatentCache b = caches.get(best);
            if (c.freeBlocks() > b.freeBlocks() || c.freeBlocks() == b.freeBlocks() && c.sequences().length < b.sequences().length) best = d;
        }
        if (best < 0) throw new MlaException("all " + maxSequences() + " sequence slots (" + caches.size() + " devices of " + perDevice + ") are in use");
        return addSequence(best);
    }

    /** Adds an empty sequence on device d; returns its id. */
    public int addSequence(int d) {
        return cache(d).addSequence() + d * perDevice;
    }

    /** Removes sequence s from its device. */
    public void free(int s) {
        check(s);
        caches.get(s / perDevice).free(s % perDevice);
    }

    /** Forks sequence s on its device ({@link LatentCache#fork}); returns the new id. */
    public int fork(int s) {
        check(s);
        int d = s / perDevice;
        return caches.get(d).fork(s % perDevice) + d * perDevice;
    }

    /** Keeps the first {@code length} tokens of sequence s. */
    public void truncate(int s, int length) {
        check(s);
        caches.get(s / perDevice).truncate(s % perDevice, length);
    }

    /** Forgets every token on every device (sequences stay). */
    public void clear() {
        for (LatentCache c : caches) c.clear();
    }

    @Override
    public String toString() {
        return "data-parallel cache over " + caches.size() + " devices, each " + caches.getFirst();
    }
}
