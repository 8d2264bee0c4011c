package org.tornadomla.store;

import org.tornadomla.MlaException;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;

import java.util.List;
import java.util.Objects;

/**
 * {@link BlockRows} over today's contiguous {@link LatentCache}, through its public API only: f32 and bf16 rows
 * via {@code latent/ropeKey} and {@code write}, int8 and fp8 via {@code quantised} and {@code writeQuantised}
 * (both keep the stored bits). That API replaces a whole sequence, so an append rewrites the sequence's
 * earlier rows too: cheap next to a transfer, and a pull appends once per layer.
 */
public final class LatentCacheRows implements BlockRows {
    private final LatentCache cache;

    public LatentCacheRows(LatentCache cache) {
        this.cache = Objects.requireNonNull(cache, "cache");
    }

    /** One {@link BlockRows} per layer's cache, in layer order. */
    public static List<BlockRows> of(List<LatentCache> caches) {
        return caches.stream().map(c -> (BlockRows) new LatentCacheRows(c)).toList();
    }

    public LatentCache cache() {
        return cache;
    }

    @Override
    public CacheDtype dtype() {
        return cache.dtype();
    }

    @Override
    public int kvLoraRank() {
        return cache.kvLoraRank();
    }

    @Override
    public int ropeDim() {
        return cache.ropeDim();
    }

    @Override
    public int length(int seq) {
        return cache.length(seq);
    }

    @Override
    public int room(int seq) {
        return cache.capacity() - cache.length(seq);
    }

    @Override
    public LatentRows read(int seq, int from, int count) {
        int n = cache.length(seq);
        if (from < 0 || count < 0 || (long) from + count > n) {
            throw new MlaException("cache read: rows [" + from + ", " + ((long) from + count) + ") of sequence " + seq + ", which holds " + n + " tokens");
        }
        return all(seq).slice(from, count);
    }

    /** The whole of sequence seq as rows. */
    private LatentRows all(int seq) {
        int n = cache.length(seq), dc = cache.kvLoraRank(), dr = cache.ropeDim();
        CacheDtype dt = cache.dtype();
        if (dt == CacheDtype.F32 || dt == CacheDtype.BF16) return LatentRows.ofFloats(dt, dc, dr, cache.latent(seq), cache.ropeKey(seq), 0, n);
        LatentCache.Quantised q = cache.quantised(seq);
        return LatentRows.ofQuantised(dt, dc, dr, q.values(), q.scales(), q.rope(), 0, n);
    }

    @Override
    public void append(int seq, LatentRows rows) {
        Objects.requireNonNull(rows, "rows");
        cache.checkSequence(seq);
        if (rows.dtype() != cache.dtype() || rows.kvLoraRank() != cache.kvLoraRank() || rows.ropeDim() != cache.ropeDim()) {
            throw new MlaException("cache append: expected " + cache.dtype() + " rows of [" + cache.kvLoraRank() + " + " + cache.ropeDim()
                    + "], found " + rows);
        }
        if (rows.count() > room(seq)) {
            throw new MlaException("latent cache full: capacity " + cache.capacity() + " tokens per sequence, sequence " + seq + " holds "
                    + cache.length(seq) + ", append of " + rows.count());
        }
        rows.check("cache append");
        if (rows.count() == 0) return;
        LatentRows all = LatentRows.concat(rows.dtype(), rows.kvLoraRank(), rows.ropeDim(), List.of(all(seq), rows));
        // the cache's own writers check again and replace the sequence only when everything is valid
        if (all.dtype() == CacheDtype.F32 || all.dtype() == CacheDtype.BF16) {
            cache.write(seq, all.latent(), all.ropeKey());
        } else {
            cache.writeQuantised(seq, all.values(), all.scales(), all.dtype() == CacheDtype.FP8 ? all.ropeKey() : new float[0]);
        }
    }
}
