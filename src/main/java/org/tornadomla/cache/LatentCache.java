package org.tornadomla.cache;

import org.tornadomla.MlaException;
import org.tornadomla.cache.internal.CacheStorage;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.kernels.Bf16;
import org.tornadomla.kernels.CacheLayout;
import org.tornadomla.kernels.Fp8;

import java.util.Objects;

/**
 * The MLA cache of one layer for a batch of sequences: per token only the normalised latent c_kv
 * (kv_lora_rank numbers, DeepSeek's {@code kv_cache}) and the roped shared key k_pe (qk_rope_head_dim
 * numbers, {@code pe_cache}), stored as the {@link CacheDtype} says. The cache of a sparse config
 * ({@link MlaConfig#sparse()}, DeepSeek-V3.2) also holds each token's lightning-indexer key (e4m3 codes and
 * their scales, 132 bytes per token for V3.2), in the same blocks: see {@link #sparse()}.
 *
 * <p>Two kinds, one format (docs/paged-cache.md):
 * <ul>
 *   <li>contiguous ({@link #LatentCache(MlaConfig, int, int, CacheDtype)}, or {@code MlaLayer.newCache}): room for
 *   {@code maxSequences} sequences of up to {@code capacity} tokens, every sequence present from the start;</li>
 *   <li>paged ({@link #paged(MlaConfig, PagedCacheSpec)}, or {@code MlaLayer.newPagedCache}): a pool of blocks of
 *   {@code blockSize} tokens (vLLM's and FlashMLA's paged KV cache) shared by sequences that join
 *   ({@link #addSequence}), leave ({@link #free}: their blocks return to the pool), fork ({@link #fork}: a shared
 *   prefix, copied block by block only where one of them writes), roll back ({@link #truncate(int, int)}) and wait
 *   in host memory ({@link #offload}, {@link #restore}: the host tier).</li>
 * </ul>
 * The layer's forward calls append tokens; {@link #write} replaces a sequence's content from the host. The cache
 * belongs to one layer ({@link #identity()}): a layer of another model, layer index or weights refuses it.
 *
 * <p>Every method that reads the cache gives a copy; nothing here hands out its storage. A cache may be shared by
 * threads: each of its methods, each layer step on it ({@code MlaLayer.forward} and the rest, whichever layer runs
 * it), each {@code CacheFiles} export or import and each store read or append runs whole, one at a time per cache.
 * What a program does between two calls is its own to order: a sequence freed by one thread while another is
 * about to step it is refused in that step, as any absent sequence is.
 */
public final class LatentCache {
    /** Tokens per block of a paged cache unless chosen: FlashMLA's page size. */
    public static final int DEFAULT_BLOCK_SIZE = PagedCacheSpec.DEFAULT_BLOCK_SIZE;

    static {
        CacheStorage.bridge(cache -> cache.storage);   // the kernels' step protocol lives there, outside the API
    }

    private final CacheStorage storage;

    /**
     * A contiguous cache: {@code maxSequences} sequences of up to {@code capacity} tokens each, all present
     * (length 0). Refused when a count is not positive or the storage does not fit in memory.
     */
    public LatentCache(MlaConfig config, int maxSequences, int capacity, CacheDtype dtype) {
        this(new CacheStorage(config, maxSequences, capacity, dtype));
    }

    private LatentCache(CacheStorage storage) {
        this.storage = storage;
    }

    /**
     * A paged cache of the spec's shape ({@link PagedCacheSpec#builder()}); no sequence is present until
     * {@link #addSequence}. Refused when the storage does not fit in memory.
     */
    public static LatentCache paged(MlaConfig config, PagedCacheSpec spec) {
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(spec, "spec");
        return new LatentCache(CacheStorage.paged(config, spec.maxSequences(), spec.maxSequenceLength(), spec.numBlocks(),
                spec.blockSize(), spec.dtype()));
    }

    // ---------------------------------------------------------------- shape

    /** The most sequences at once: ids 0 … maxSequences − 1 (a contiguous cache: all of them, always present). */
    public int maxSequences() {
        return storage.batch();
    }

    /** The most tokens one sequence can hold (a paged cache: the block table's columns × the block size). */
    public int capacity() {
        return storage.capacity();
    }

    /** Tokens per block (a contiguous cache: its capacity). */
    public int blockSize() {
        return storage.blockSize();
    }

    /** Blocks one sequence can hold. */
    public int maxBlocksPerSequence() {
        return storage.maxBlocksPerSequence();
    }

    /** Blocks in the pool (a contiguous cache: one per sequence). */
    public int numBlocks() {
        return storage.numBlocks();
    }

    /** Blocks not used by any sequence. */
    public int freeBlocks() {
        synchronized (storage) {
            return storage.freeBlocks();
        }
    }

    /** Whether this cache is paged (sequences join and leave) rather than contiguous. */
    public boolean paged() {
        return storage.paged();
    }

    /** How the cache stores its numbers. */
    public CacheDtype dtype() {
        return storage.dtype();
    }

    /** Latent numbers per token: the config's kv_lora_rank (d_c). */
    public int kvLoraRank() {
        return storage.kvLoraRank();
    }

    /** Rope-key numbers per token: the config's qk_rope_head_dim (d_r). */
    public int ropeDim() {
        return storage.ropeDim();
    }

    /**
     * Whether this is a sparse config's cache, which also holds the indexer's key of every token (the config it
     * was made with has an indexer, {@link MlaConfig#sparse()}). Such a cache is filled by a layer's steps or a
     * cache file, not by {@link #write}.
     */
    public boolean sparse() {
        return storage.sparse();
    }

    /**
     * Bytes stored per cached token, scales included (f32 2,304, bf16 1,152, int8 584, fp8 656 for DeepSeek-V3),
     * the indexer's key included for a sparse cache (+132 for DeepSeek-V3.2).
     */
    public long bytesPerToken() {
        return storage.bytesPerToken();
    }

    /** Bytes of the whole storage (the pool), scales and the decoding table included. */
    public long storageBytes() {
        return storage.storageBytes();
    }

    /**
     * The layer this cache belongs to: the one that made it ({@code MlaLayer.newCache}), filled it first, or
     * whose file or store blocks were imported into it first; null until then.
     */
    public CacheIdentity identity() {
        synchronized (storage) {
            return storage.identity();
        }
    }

    /**
     * Makes this cache belong to {@code id} (a layer's {@link CacheIdentity#of}; a layer does it itself when it fills
     * a cache without one, as do imports and store pulls). Refused, naming what differs, when the cache belongs to
     * another identity already or the identity's config has another kv_lora_rank or qk_rope_head_dim.
     */
    public void bind(CacheIdentity id) {
        synchronized (storage) {
            storage.bind(id);
        }
    }

    // ---------------------------------------------------------------- sequences

    /** Tokens held by sequence b; refused unless b is present. */
    public int length(int b) {
        synchronized (storage) {
            return storage.length(b);
        }
    }

    /** Whether sequence id b is present (always, in a contiguous cache, unless freed). */
    public boolean contains(int b) {
        synchronized (storage) {
            return storage.contains(b);
        }
    }

    /** The ids of the sequences present, ascending (a new array). */
    public int[] sequences() {
        synchronized (storage) {
            int n = 0;
            for (int b = 0; b < maxSequences(); b++) n += contains(b) ? 1 : 0;
            int[] ids = new int[n];
            for (int b = 0, i = 0; b < maxSequences(); b++) if (contains(b)) ids[i++] = b;
            return ids;
        }
    }

    /**
     * Tokens sequence b can still take in one step: its capacity left, bounded by its blocks' free slots plus the
     * free pool (less a block where a shared partial block must be copied first).
     */
    public int room(int b) {
        synchronized (storage) {
            return storage.room(b);
        }
    }

    /** Sequence b's block table: the blocks holding its positions 0 … length − 1, in order (a copy). */
    public int[] blockTable(int b) {
        synchronized (storage) {
            return storage.blockTable(b);
        }
    }

    /** How many sequences use {@code block} (0: free); refused outside 0 … numBlocks − 1. */
    public int refCount(int block) {
        synchronized (storage) {
            return storage.refCount(block);
        }
    }

    /** Adds an empty sequence and returns its id (the lowest free one); refused when all are in use. No block is taken until it grows. */
    public int addSequence() {
        synchronized (storage) {
            return storage.addSequence();
        }
    }

    /** Removes sequence b; blocks no other sequence uses return to the pool. */
    public void free(int b) {
        synchronized (storage) {
            storage.free(b);
        }
    }

    /**
     * A new sequence with sequence b's tokens (a shared prompt prefix, or parallel sampling): it shares b's blocks
     * (reference counts, no copy); the partial last block is copied when either writes into it. Returns the new id.
     */
    public int fork(int b) {
        synchronized (storage) {
            return storage.fork(b);
        }
    }

    /**
     * Keeps the first {@code length} tokens of sequence b (the rollback of speculative decoding); blocks past it
     * are released. A length at or above the sequence's changes nothing.
     */
    public void truncate(int b, int length) {
        synchronized (storage) {
            storage.truncate(b, length);
        }
    }

    /** Keeps the first {@code length} tokens of every present sequence. */
    public void truncate(int length) {
        synchronized (storage) {
            storage.truncate(length);
        }
    }

    /** Forgets every token (sequences stay; their blocks return to the pool, storage is reused). */
    public void clear() {
        synchronized (storage) {
            storage.clear();
        }
    }

    // ---------------------------------------------------------------- the host tier

    /**
     * Moves sequence b's tokens to host memory and frees its device blocks (docs/paged-cache.md, "Host tier"): the
     * blocks b alone holds are copied to the host, as stored, and return to the pool; a block shared with a fork
     * stays on the device for the fork (b keeps its reference, so a restore shares it again and copies nothing for
     * it). b stays present with its length; until {@link #restore} a step on it, a read of its tokens (an export
     * too), a fork or a truncation to more than 0 tokens is refused in one line naming it ({@link #free},
     * {@code truncate(b, 0)} and {@link #write} work and forget the host copy). Refused for a contiguous cache, an
     * absent sequence, or one offloaded already.
     */
    public void offload(int b) {
        synchronized (storage) {
            storage.offload(b);
        }
    }

    /**
     * Brings offloaded sequence b back to the device pool: fresh blocks for the blocks it moved, its rows copied
     * back bit for bit, its block table rebuilt; later steps give the same outputs as if it had never left. Refused
     * in one line, with nothing changed, when the pool has too few free blocks or b is not offloaded.
     */
    public void restore(int b) {
        synchronized (storage) {
            storage.restore(b);
        }
    }

    /** Whether sequence b is offloaded to host memory ({@link #offload}); refused unless b is present. */
    public boolean isOffloaded(int b) {
        synchronized (storage) {
            return storage.offloaded(b);
        }
    }

    /** Bytes of rows that offloaded sequences hold in host memory (the slots their tokens use, of the blocks they moved). */
    public long hostBytes() {
        synchronized (storage) {
            return storage.hostBytes();
        }
    }

    // ---------------------------------------------------------------- contents

    /**
     * Replaces sequence b's content with n tokens: latent [n, kv_lora_rank] and roped keys [n, qk_rope_head_dim]
     * (interleaved rope order), stored in the cache's dtype. Checked before anything is written: the shapes, finite
     * numbers, the capacity and the pool. Refused for a {@link #sparse()} cache: its tokens also need the
     * indexer's keys, which a layer's steps compute (or a cache file carries).
     */
    public void write(int b, float[] latent, float[] ropeKey) {
        synchronized (storage) {
            if (storage.sparse()) {
                throw new MlaException("cache write: a sparse cache also holds the indexer's key of every token, which a latent and a "
                        + "rope key alone do not give; fill it with the layer's steps (prefill) or CacheFiles.importInto");
            }
            storage.write(b, latent, ropeKey);
        }
    }

    /** Sequence b's latents as f32, [length(b), kv_lora_rank] (decoded from the dtype; a copy). */
    public float[] latent(int b) {
        synchronized (storage) {
            return storage.latent(b);
        }
    }

    /** Sequence b's roped keys as f32, [length(b), qk_rope_head_dim], interleaved rope order (a copy). */
    public float[] ropeKey(int b) {
        synchronized (storage) {
            return storage.ropeKey(b);
        }
    }

    /**
     * Sequence b's indexer keys as f32, [length(b), index_head_dim]: each cached e4m3 code times its block's scale, the
     * key the lightning indexer scores a query against (a copy). Only a {@link #sparse()} cache holds them; asked of a
     * dense one, this is refused.
     */
    public float[] indexerKey(int b) {
        synchronized (storage) {
            if (!storage.sparse()) {
                throw new MlaException("indexerKey: this cache holds no indexer keys: its config has no indexer (index_n_heads, "
                        + "index_head_dim, index_topk), so the cache is dense");
            }
            CacheStorage.IndexKeys keys = storage.indexKeys(b);
            byte[] codes = keys.codes();
            float[] scales = keys.scales(), pow2 = Bf16.pow2(), out = new float[codes.length];
            int d = storage.indexDim(), blocks = d / CacheLayout.FP8_BLOCK;
            for (int i = 0; i < codes.length; i++) {
                int t = i / d;
                out[i] = Fp8.decode(codes[i], pow2) * scales[t * blocks + (i % d) / CacheLayout.FP8_BLOCK];
            }
            return out;
        }
    }

    @Override
    public String toString() {
        synchronized (storage) {
            return storage.toString();
        }
    }
}
