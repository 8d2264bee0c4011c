package org.tornadomla.store;

import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.CacheIdentity;

/**
 * One layer's latent cache as the store sees it: sequences of rows, each token's row the normalised latent
 * c_kv (kv_lora_rank numbers) and the roped shared key k_pe (qk_rope_head_dim numbers) in the cache's storage
 * dtype, with the per-token scales of int8 and fp8, and a sparse config's lightning-indexer key after them
 * ({@link LatentRows} gives the byte layout). The
 * {@link LatentStore} reads rows from it to push them and appends rows to it when it pulls; this is all it
 * needs of a cache, so one implementation ({@link LatentCacheRows}) serves a contiguous and a paged cache alike.
 *
 * <p>Contract:
 * <ul>
 *   <li>Sequences are numbered 0 … n−1 as in the cache; a bad number is an {@code MlaException}.</li>
 *   <li>{@link #read} returns rows exactly as stored (bit for bit) and changes nothing.</li>
 *   <li>{@link #append} adds rows at positions {@code length(seq)} … {@code length(seq) + rows.count() − 1} and
 *       advances the sequence's length by {@code rows.count()}. It checks everything first (dtype and geometry
 *       of the rows, room, numbers a cache can hold: see {@link LatentRows#check}) and on an
 *       {@code MlaException} leaves the cache as it was. Other sequences are never touched.</li>
 *   <li>Not thread-safe, like the cache behind it: one caller at a time.</li>
 * </ul>
 */
public interface BlockRows {
    /** How the cache stores its numbers; every {@link LatentRows} read or appended has this dtype. */
    CacheDtype dtype();

    /** d_c, the latent's width. */
    int kvLoraRank();

    /** d_r, the rope part's width. */
    int ropeDim();

    /** index_head_dim of the lightning-indexer key each row also holds (a sparse config's cache), 0 for a dense cache. */
    default int indexDim() {
        return 0;
    }

    /** Tokens sequence {@code seq} holds. */
    int length(int seq);

    /** Tokens one append to sequence {@code seq} can take (capacity − length for a contiguous cache; a paged one also counts its free blocks). */
    int room(int seq);

    /** Rows [from, from + count) of sequence {@code seq}; 0 ≤ from, from + count ≤ length(seq). */
    LatentRows read(int seq, int from, int count);

    /** Appends {@code rows} to sequence {@code seq} (see the class comment: all checked first, all or nothing). */
    void append(int seq, LatentRows rows);

    /** The layer the cache belongs to ({@link org.tornadomla.cache.LatentCache#identity()}), or null when it belongs to none yet. */
    CacheIdentity identity();

    /** Makes the cache belong to {@code id} ({@link org.tornadomla.cache.internal.CacheStorage#bind}): a pull into a cache without an identity gives it the blocks'. */
    void bind(CacheIdentity id);
}
