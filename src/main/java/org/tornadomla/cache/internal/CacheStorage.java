package org.tornadomla.cache.internal;

import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.CacheIdentity;
import org.tornadomla.cache.LatentCache;

import org.tornadomla.MlaException;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.graph.DeviceResident;
import org.tornadomla.kernels.Bf16;
import org.tornadomla.kernels.CacheLayout;
import org.tornadomla.weights.Bf16Bits;
import org.tornadomla.kernels.CacheOps;
import org.tornadomla.kernels.CacheRows;
import org.tornadomla.internal.Memory;

import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

/**
 * The storage and bookkeeping behind a {@link LatentCache}, and the step protocol the layer, the kernels'
 * executors, cache files and the Redis store use on it. Not API: this package is not exported by the module,
 * and a user's program works with {@link LatentCache} alone. Reach it with {@link #of(LatentCache)}.
 *
 * <p>Per token the cache holds only the normalised latent c_kv (kv_lora_rank numbers, DeepSeek's
 * {@code kv_cache}) and the roped shared key k_pe (qk_rope_head_dim numbers, {@code pe_cache}), in interleaved
 * rope order, each token a row [c_kv | k_pe] (FlashMLA's layout) stored as {@link CacheLayout} says for the
 * dtype. Storage is a pool of blocks (pages) of {@code blockSize} token slots; sequence b's position j lives in
 * block {@code block_table[b][j / blockSize]} (docs/paged-cache.md). A contiguous cache is one block of
 * {@code capacity} slots per sequence, block_table[b] = [b], every sequence present from the start.
 *
 * <p>A step: {@link #prepare} checks it and works out its blocks and copies without changing anything,
 * {@link #describe} writes them into the kernels' metadata, {@link #commit} makes them the cache's after the
 * kernels ran. A step that does not fit (a sequence past its capacity, an exhausted pool) fails in
 * {@link #prepare} and leaves the cache as it was.
 *
 * <p>A cache of a sparse config ({@link MlaConfig#sparse()}, DeepSeek-V3.2) also holds, in the same slots, the
 * lightning indexer's key of every token: index_head_dim e4m3 codes and their fp32 scales (132 bytes per token
 * for V3.2; {@link CacheLayout}'s indexer section), two more arrays after the three of the latent. A dense
 * cache has neither: its storage is the same as before sparse attention existed.
 */
public final class CacheStorage implements DeviceResident {
    /** Tokens per block of a paged cache unless chosen: FlashMLA's page size. */
    public static final int DEFAULT_BLOCK_SIZE = 64;

    private final int batch;
    private final int capacity;
    private final int blockSize;
    private final int maxBlocks;
    private final int numBlocks;
    private final boolean paged;
    private final int kvLoraRank;
    private final int ropeDim;
    private final CacheDtype dtype;
    private final int indexDim;       // index_head_dim of a sparse config, 0 for a dense one
    // storage as CacheLayout describes it: the 32-, 16- and 8-bit parts
    private final float[] floats;
    private final short[] halves;
    private final byte[] bytes;
    // the indexer's keys (sparse configs only, else null): e4m3 codes [slot, d_idx] and scales [slot, d_idx/128]
    private final byte[] indexKeys;
    private final float[] indexScales;
    // the block tables and the pool: host-side bookkeeping, handed to the kernels in each step's metadata
    private final int[] tables;       // [batch, maxBlocks], block ids; entries past a sequence's blocks are −1
    private final int[] lengths;      // tokens per sequence
    private final boolean[] live;     // which sequence ids are in use
    private final int[] refs;         // sequences using each block
    private final int[] free;         // the free blocks, a stack: free[0 … freeTop)
    private int freeTop;
    // the host tier: per sequence, its offloaded rows (null: resident on the device pool); see offload and restore
    private final HostCopy[] host;
    private long version;             // changes with every change of the tables (a prepared step must be current)
    // who holds the newest copy of the storage (null: the host arrays), and how to pull it back
    private Object residentOwner;
    private Runnable pull;
    // the layer this cache belongs to (null: none yet), set once by bind
    private CacheIdentity identity;

    /**
     * What layers built for this cache (their steps, whose graphs hold this storage's arrays): held here, so that
     * they live and die with the cache; a layer holds them weakly and so never keeps a dropped cache alive.
     */
    private final Set<Object> built = Collections.newSetFromMap(new IdentityHashMap<>());

    /** Keeps {@code step}, which a layer built for this cache, as long as the cache lives. */
    public void keep(Object step) {
        synchronized (built) {
            built.add(Objects.requireNonNull(step, "step"));
        }
    }

    /** Lets go of a step {@link #keep} kept (its layer released it). */
    public void unkeep(Object step) {
        synchronized (built) {
            built.remove(step);
        }
    }

    // ---------------------------------------------------------------- the bridge from LatentCache

    private static volatile Function<LatentCache, CacheStorage> bridge;

    /** Called once, by {@link LatentCache}'s class initialiser: how code outside its package reaches a cache's storage. */
    public static void bridge(Function<LatentCache, CacheStorage> storageOf) {
        // on the class path this package is reachable: a bridge installed by other code first would leave LatentCache
        // unable to initialise, for the whole JVM
        Class<?> caller = StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE).getCallerClass();
        if (caller != LatentCache.class) {
            throw new IllegalCallerException("the LatentCache bridge is LatentCache's own; called from " + caller.getName());
        }
        if (bridge != null) throw new IllegalStateException("the LatentCache bridge is installed already");
        bridge = Objects.requireNonNull(storageOf, "storageOf");
    }

    /** The storage and step protocol behind {@code cache}. */
    public static CacheStorage of(LatentCache cache) {
        return bridge.apply(Objects.requireNonNull(cache, "cache"));   // a LatentCache exists: its class, and so the bridge, is initialised
    }

    /** A contiguous cache: {@code batch} sequences of up to {@code capacity} tokens each, all present (length 0). */
    public CacheStorage(MlaConfig config, int batch, int capacity, CacheDtype dtype) {
        this(config, batch, capacity, capacity, batch, false, dtype);
        if (batch <= 0) throw new MlaException("cache batch must be > 0, found " + batch);
        if (capacity <= 0) throw new MlaException("cache capacity must be > 0 tokens, found " + capacity);
        for (int b = 0; b < batch; b++) {
            live[b] = true;
            tables[b] = take();                      // block b: the pool pops blocks in order
            refs[tables[b]] = 1;
        }
    }

    /**
     * A paged cache: a pool of {@code numBlocks} blocks of {@code blockSize} tokens for up to {@code maxSeqs}
     * sequences of up to {@code maxSeqLen} tokens each (rounded up to whole blocks: the block table has
     * ⌈maxSeqLen / blockSize⌉ columns). No sequence is present until {@link #addSequence}.
     */
    public static CacheStorage paged(MlaConfig config, int maxSeqs, int maxSeqLen, int numBlocks, int blockSize, CacheDtype dtype) {
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(dtype, "dtype");
        if (maxSeqs <= 0) throw new MlaException("paged cache: max sequences must be > 0, found " + maxSeqs);
        if (blockSize <= 0 || blockSize > (1 << 20)) throw new MlaException("paged cache: block size must be 1 … 1048576 tokens, found " + blockSize);
        if (numBlocks <= 0) throw new MlaException("paged cache: the pool needs at least 1 block, found " + numBlocks);
        if (maxSeqLen <= 0) throw new MlaException("paged cache: max sequence length must be > 0 tokens, found " + maxSeqLen);
        int maxBlocks = (int) ((maxSeqLen + (long) blockSize - 1) / blockSize);
        if ((long) maxBlocks * blockSize > Integer.MAX_VALUE - 8 || (long) maxSeqs * maxBlocks > Integer.MAX_VALUE - 8) {
            throw new MlaException("paged cache: " + maxSeqs + " block tables of " + maxBlocks + " blocks are more than one Java array holds");
        }
        return new CacheStorage(config, maxSeqs, maxBlocks * blockSize, blockSize, numBlocks, true, dtype);
    }

    private CacheStorage(MlaConfig config, int batch, int capacity, int blockSize, int numBlocks, boolean paged, CacheDtype dtype) {
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(dtype, "dtype");
        if (batch <= 0) throw new MlaException("cache batch must be > 0, found " + batch);
        if (capacity <= 0) throw new MlaException("cache capacity must be > 0 tokens, found " + capacity);
        this.batch = batch;
        this.capacity = capacity;
        this.blockSize = blockSize;
        this.maxBlocks = capacity / blockSize;
        this.numBlocks = numBlocks;
        this.paged = paged;
        this.kvLoraRank = config.kvLoraRank();
        this.ropeDim = config.qkRopeHeadDim();
        this.dtype = dtype;
        this.indexDim = config.sparse() ? config.indexer().headDim() : 0;
        int code = dtype.code;
        long slots = (long) numBlocks * blockSize;
        long largest = largestArray(config, dtype, slots);
        String what = paged ? "a paged cache of " + numBlocks + " blocks × " + blockSize + " tokens" : "batch " + batch + " × capacity " + capacity;
        if (largest > MAX_ARRAY)
            throw new MlaException("cache too large for one Java array: " + what
                    + " needs " + largest + " numbers in one " + dtype + " array (max " + MAX_ARRAY + ")");
        // the storage, and the bookkeeping twice (the tables, lengths, flags, counts and pool, and a step's working copy of them)
        long bookkeeping = 2 * (4L * batch * maxBlocks + 4L * batch + batch + 8L * numBlocks);
        Memory.require((dtype.bytesPerToken(kvLoraRank, ropeDim) + CacheLayout.indexBytesPerToken(indexDim)) * slots + bookkeeping,
                (paged ? what + " for " + batch + " sequences" : "a latent cache of " + batch + " × " + capacity + " tokens")
                        + " (storage and block tables)");
        floats = new float[(int) CacheLayout.floatsLength(code, slots, kvLoraRank, ropeDim)];
        if (code == CacheLayout.BF16 || code == CacheLayout.FP8) System.arraycopy(Bf16.pow2(), 0, floats, 0, CacheLayout.TABLE);
        halves = new short[(int) CacheLayout.halvesLength(code, slots, kvLoraRank, ropeDim)];
        bytes = new byte[(int) CacheLayout.bytesLength(code, slots, kvLoraRank, ropeDim)];
        indexKeys = indexDim == 0 ? null : new byte[(int) CacheLayout.indexKeysLength(slots, indexDim)];
        indexScales = indexDim == 0 ? null : new float[(int) CacheLayout.indexScalesLength(slots, indexDim)];
        tables = new int[batch * maxBlocks];
        Arrays.fill(tables, -1);
        lengths = new int[batch];
        live = new boolean[batch];
        refs = new int[numBlocks];
        free = new int[numBlocks];
        for (int k = 0; k < numBlocks; k++) free[k] = numBlocks - 1 - k;   // popped from the top: block 0 first
        freeTop = numBlocks;
        host = new HostCopy[batch];
    }

    /** Sequence slots (the most sequences at once; every sequence of a contiguous cache). */
    public int batch() {
        return batch;
    }

    /** Most tokens one sequence can hold (the block table's columns × the block size). */
    public int capacity() {
        return capacity;
    }

    /** Tokens per block (a contiguous cache: its capacity). */
    public int blockSize() {
        return blockSize;
    }

    /** Columns of a block table: blocks one sequence can hold. */
    public int maxBlocksPerSequence() {
        return maxBlocks;
    }

    /** Blocks in the pool. */
    public int numBlocks() {
        return numBlocks;
    }

    /** Blocks not used by any sequence. */
    public int freeBlocks() {
        return freeTop;
    }

    /** Whether this cache was made by {@link #paged} (sequences join and leave) rather than contiguous. */
    public boolean paged() {
        return paged;
    }

    public CacheDtype dtype() {
        return dtype;
    }

    public int kvLoraRank() {
        return kvLoraRank;
    }

    public int ropeDim() {
        return ropeDim;
    }

    /** Whether this cache also holds the indexer's keys (a sparse config's cache). */
    public boolean sparse() {
        return indexDim > 0;
    }

    /** index_head_dim of the indexer keys held per token; 0 for a dense cache. */
    public int indexDim() {
        return indexDim;
    }

    /**
     * The layer this cache belongs to: the one that made it ({@code MlaLayer.newCache}), filled it first, or
     * whose file or store blocks were imported into it first; null until then (a cache made with a constructor
     * and written directly).
     */
    public CacheIdentity identity() {
        return identity;
    }

    /**
     * Makes this cache belong to {@code id} (a layer calls it when it fills the cache; an import or a pull when
     * it writes into a cache without an identity). Refused, naming what differs, when the cache belongs to another
     * identity already, or when the identity's config has another kv_lora_rank or qk_rope_head_dim. Binding
     * again to the same identity changes nothing; an identity stays through clear(), free() and truncate().
     */
    public void bind(CacheIdentity id) {
        Objects.requireNonNull(id, "id");
        if (id.config().kvLoraRank() != kvLoraRank || id.config().qkRopeHeadDim() != ropeDim) {
            throw new MlaException("cache [" + kvLoraRank + " + " + ropeDim + "] does not belong to a config with kv_lora_rank "
                    + id.config().kvLoraRank() + " and qk_rope_head_dim " + id.config().qkRopeHeadDim());
        }
        if (id.config().sparse() != sparse()) {
            throw new MlaException(sparse() ? "a sparse cache (with the indexer's keys) does not belong to a dense config"
                    : "a dense cache does not belong to a sparse config (its cache also holds the indexer's keys)");
        }
        if (identity == null) identity = id;
        else CacheIdentity.requireSame(identity, id, "refused: the layer", "the layer this cache belongs to");
    }

    /** Tokens held by sequence b. */
    public int length(int b) {
        checkSequence(b);
        return lengths[b];
    }

    /** Whether sequence id b is in use (always, in a contiguous cache, unless freed). */
    public boolean contains(int b) {
        return b >= 0 && b < batch && live[b];
    }

    /** Throws unless b is a sequence of this cache (0 … batch − 1, and present). */
    public void checkSequence(int b) {
        if (b < 0 || b >= batch) throw new MlaException("sequence " + b + " out of range: the cache holds sequences 0 … " + (batch - 1));
        if (!live[b]) throw new MlaException("sequence " + b + " is not in the cache (freed, or never added)");
    }

    /**
     * Bytes stored per cached token, scales included (f32 2,304, bf16 1,152, int8 584, fp8 656 for DeepSeek-V3),
     * plus the indexer's key for a sparse cache (132 for DeepSeek-V3.2: fp8 656 + 132 = 788).
     */
    public long bytesPerToken() {
        return CacheLayout.bytesPerToken(dtype.code, kvLoraRank, ropeDim) + CacheLayout.indexBytesPerToken(indexDim);
    }

    /** Bytes of the storage (the whole pool), scales, the decoding table and a sparse cache's indexer keys included. */
    public long storageBytes() {
        long n = 4L * floats.length + 2L * halves.length + bytes.length;
        return indexDim == 0 ? n : n + indexKeys.length + 4L * indexScales.length;
    }

    /** Sequence b's block table: the blocks holding its positions 0 … length − 1, in order (a copy). */
    public int[] blockTable(int b) {
        checkSequence(b);
        if (host[b] != null) return host[b].held.clone();
        return Arrays.copyOfRange(tables, b * maxBlocks, b * maxBlocks + blocksFor(lengths[b]));
    }

    /** How many sequences use {@code block} (0: free). */
    public int refCount(int block) {
        if (block < 0 || block >= numBlocks) throw new MlaException("block " + block + " out of range: the pool holds blocks 0 … " + (numBlocks - 1));
        return refs[block];
    }

    /** The storage slot of sequence b's position j (&lt; its length): {@link CacheLayout#slot} over its block table. */
    public int slot(int b, int j) {
        checkResident(b);
        if (j < 0 || j >= lengths[b]) throw new MlaException("position " + j + " of sequence " + b + " out of range: it holds " + lengths[b] + " tokens");
        return CacheLayout.slot(tables, b * maxBlocks, j, blockSize);
    }

    private int blocksFor(long tokens) {
        return (int) ((tokens + blockSize - 1) / blockSize);
    }

    // ---------------------------------------------------------------- the lifecycle of sequences

    /** Adds an empty sequence and returns its id (the lowest free one). No block is taken until it grows. */
    public int addSequence() {
        for (int b = 0; b < batch; b++) {
            if (!live[b]) {
                live[b] = true;
                lengths[b] = 0;
                version++;
                return b;
            }
        }
        throw new MlaException("no free sequence slot: the cache holds at most " + batch + " sequences, all in use");
    }

    /** Removes sequence b; blocks no other sequence uses return to the pool. */
    public void free(int b) {
        checkSequence(b);
        dropHostCopy(b);
        release(b, 0);
        lengths[b] = 0;
        live[b] = false;
        version++;
    }

    /**
     * A new sequence with sequence b's tokens (a shared prompt prefix, or parallel sampling): it shares every
     * block of b (reference counts, no copy); the block that either then writes into first, the partial last
     * one, is copied before the write (copy-on-write, in the step's kernels). Returns the new id.
     */
    public int fork(int b) {
        checkResident(b);
        int child = addSequence();
        int n = blocksFor(lengths[b]);
        System.arraycopy(tables, b * maxBlocks, tables, child * maxBlocks, n);
        for (int k = 0; k < n; k++) refs[tables[b * maxBlocks + k]]++;
        lengths[child] = lengths[b];
        return child;
    }

    /**
     * Keeps the first {@code length} tokens of sequence b (the rollback of speculative decoding: the accepted
     * prefix of verified draft tokens stays, nothing is copied); blocks past it are released. A length at or
     * above the sequence's changes nothing.
     */
    public void truncate(int b, int length) {
        checkSequence(b);
        if (length < 0) throw new MlaException("cache truncate: length must be >= 0, found " + length);
        if (length >= lengths[b]) return;
        if (host[b] != null) {
            if (length > 0) throw offloaded(b, "truncate it to " + length + " tokens");
            dropHostCopy(b);                         // truncate to 0 forgets the host copy: the sequence is resident and empty
            lengths[b] = 0;
            version++;
            return;
        }
        if (paged) release(b, blocksFor(length));    // a contiguous sequence keeps its one block
        lengths[b] = length;
        version++;
    }

    /** Keeps the first {@code length} tokens of every sequence (e.g. to roll back a speculative step). */
    public void truncate(int length) {
        if (length < 0) throw new MlaException("cache truncate: length must be >= 0, found " + length);
        for (int b = 0; b < batch; b++) {
            if (live[b]) truncate(b, length);
        }
    }

    /** Forgets every token (sequences stay; their blocks return to the pool, storage is reused). */
    public void clear() {
        truncate(0);
    }

    /** Releases sequence b's blocks from index {@code keep} of its table on. */
    private void release(int b, int keep) {
        int n = owned(tables, b);
        for (int k = keep; k < n; k++) {
            int block = tables[b * maxBlocks + k];
            if (--refs[block] == 0) free[freeTop++] = block;
            tables[b * maxBlocks + k] = -1;
        }
    }

    /**
     * Hands out the free blocks in a seeded random order from now on: what a pool that has served many
     * requests looks like (benchmarks and tests; a new pool hands out blocks 0, 1, 2, …).
     */
    public void shuffleFreeBlocks(long seed) {
        java.util.SplittableRandom rnd = new java.util.SplittableRandom(seed);
        for (int i = freeTop - 1; i > 0; i--) {
            int k = rnd.nextInt(i + 1), t = free[i];
            free[i] = free[k];
            free[k] = t;
        }
    }

    private int take() {
        return free[--freeTop];
    }

    // ---------------------------------------------------------------- the host tier: offload and restore

    /**
     * An offloaded sequence's rows in host memory: for each block of its table, the device block it still holds
     * (one shared with a fork, which stays on the device for it) or −1 (moved: its used slots' rows are in the
     * host arrays, in table order, packed). The host arrays are of the storage's own types and layout per slot,
     * so a restore writes back the very bits it took.
     */
    private static final class HostCopy {
        final int[] held;
        final int moved;
        final Object[] arrays;   // floats, halves, bytes (, indexKeys, indexScales): rows of the moved blocks only
        final long bytes;

        HostCopy(int[] held, int moved, Object[] arrays, long bytes) {
            this.held = held;
            this.moved = moved;
            this.arrays = arrays;
            this.bytes = bytes;
        }
    }

    /** Per storage array (in {@link #arrays()} order), the numbers one slot holds and where slot 0's start. */
    private long[][] slotWidths() {
        int code = dtype.code;
        long[][] w = {
                {CacheLayout.floatsLength(code, 1, kvLoraRank, ropeDim) - CacheLayout.floatsLength(code, 0, kvLoraRank, ropeDim),
                        CacheLayout.floatsLength(code, 0, kvLoraRank, ropeDim)},
                {CacheLayout.halvesLength(code, 1, kvLoraRank, ropeDim) - CacheLayout.halvesLength(code, 0, kvLoraRank, ropeDim),
                        CacheLayout.halvesLength(code, 0, kvLoraRank, ropeDim)},
                {CacheLayout.bytesLength(code, 1, kvLoraRank, ropeDim) - CacheLayout.bytesLength(code, 0, kvLoraRank, ropeDim),
                        CacheLayout.bytesLength(code, 0, kvLoraRank, ropeDim)},
                {CacheLayout.indexKeysLength(1, indexDim), 0},
                {CacheLayout.indexScalesLength(1, indexDim), 0}};
        return indexDim == 0 ? Arrays.copyOf(w, 3) : w;
    }

    private static Object newArrayLike(Object a, int n) {
        if (a instanceof float[]) return new float[n];
        if (a instanceof short[]) return new short[n];
        return new byte[n];
    }

    /** Tokens of block k (of its table) that a sequence of {@code len} tokens uses. */
    private int usedIn(int k, int len) {
        return Math.min(blockSize, len - k * blockSize);
    }

    /** Whether sequence b is offloaded to the host ({@link #offload}); refused unless b is present. */
    public boolean offloaded(int b) {
        checkSequence(b);
        return host[b] != null;
    }

    /** Throws unless b is present and resident (not offloaded to the host). */
    public void checkResident(int b) {
        checkSequence(b);
        if (host[b] != null) throw offloaded(b, null);
    }

    /** "1 block", "2 blocks". */
    private static String blocks(long n) {
        return n + (n == 1 ? " block" : " blocks");
    }

    /** " is free" after 1, " are free" after any other count. */
    private static String areFree(long n) {
        return n == 1 ? " is free" : " are free";
    }

    private static MlaException offloaded(int b, String what) {
        return new MlaException("sequence " + b + " is offloaded to the host: restore it first" + (what == null ? "" : " (to " + what + ")"));
    }

    /** Blocks' worth of rows held in host memory by offloaded sequences (blocks moved, not those they still share on the device). */
    public int hostBlocks() {
        int n = 0;
        for (HostCopy h : host) n += h == null ? 0 : h.moved;
        return n;
    }

    /** Bytes of rows held in host memory by offloaded sequences (only the slots their tokens use). */
    public long hostBytes() {
        long n = 0;
        for (HostCopy h : host) n += h == null ? 0 : h.bytes;
        return n;
    }

    /**
     * Bytes a {@link #restore} of sequence b writes into the storage (the rows of its blocks on the host); 0 for a
     * resident sequence.
     */
    public long hostBytes(int b) {
        checkSequence(b);
        return host[b] == null ? 0 : host[b].bytes;
    }

    /**
     * Moves sequence b's rows to host memory and frees its device blocks: the blocks b alone holds (reference
     * count 1) are copied to the host, slot by slot as stored, and return to the pool; a block b shares with a
     * fork stays on the device, still counted as b's (its reference is kept), so the fork keeps it and a restore
     * shares it again. b keeps its length and stays present; until {@link #restore} a step on it, a read of its
     * tokens, a fork or a truncation to more than 0 tokens is refused in one line. Refused for a contiguous cache
     * (each sequence owns one fixed block) and for a sequence offloaded already. Pulls the storage to the host first
     * ({@link #toHost}): the executor that held it on a device uploads it again at its next step.
     */
    public synchronized void offload(int b) {
        checkSequence(b);
        if (!paged) throw new MlaException("offload needs a paged cache: a contiguous cache's sequences each own one fixed block of the storage");
        if (host[b] != null) throw new MlaException("sequence " + b + " is offloaded to the host already");
        int len = lengths[b], n = owned(tables, b), row = b * maxBlocks;
        int[] held = new int[n];
        int moved = 0;
        long slots = 0;
        for (int k = 0; k < n; k++) {
            int block = tables[row + k];
            boolean alone = refs[block] == 1;
            held[k] = alone ? -1 : block;
            if (alone) {
                moved++;
                slots += usedIn(k, len);
            }
        }
        long bytes = slots * bytesPerToken();
        Memory.require(bytes, "the host copy of sequence " + b + " (" + slots + " tokens)");
        toHost();
        Object[] dev = arrays();
        long[][] w = slotWidths();
        Object[] h = new Object[dev.length];
        for (int a = 0; a < dev.length; a++) h[a] = newArrayLike(dev[a], Math.toIntExact(slots * w[a][0]));
        long at = 0;
        for (int k = 0; k < n; k++) {
            if (held[k] >= 0) continue;
            int block = tables[row + k], used = usedIn(k, len);
            for (int a = 0; a < dev.length; a++) {
                System.arraycopy(dev[a], (int) (w[a][1] + (long) block * blockSize * w[a][0]), h[a], (int) (at * w[a][0]), (int) (used * w[a][0]));
            }
            at += used;
            refs[block] = 0;
            free[freeTop++] = block;
        }
        Arrays.fill(tables, row, row + maxBlocks, -1);
        host[b] = new HostCopy(held, moved, h, bytes);
        version++;
    }

    /**
     * Brings offloaded sequence b back: takes a device block for each block it moved, copies its rows back
     * (the same bits) and rebuilds its block table, the blocks it kept shared with forks in their places. Refused
     * in one line, nothing changed, when the pool has too few free blocks, or b is not offloaded. Pulls the
     * storage to the host first ({@link #toHost}), as every host write does.
     */
    public synchronized void restore(int b) {
        checkSequence(b);
        HostCopy hc = host[b];
        if (hc == null) throw new MlaException("sequence " + b + " is not offloaded: its blocks are on the device");
        if (hc.moved > freeTop) {
            throw new MlaException("cannot restore sequence " + b + ": it needs " + blocks(hc.moved) + " of " + blockSize + " tokens, " + freeTop
                    + " of " + numBlocks + areFree(freeTop) + " (free, truncate or offload sequences, or make a larger pool); nothing changed");
        }
        toHost();
        Object[] dev = arrays();
        long[][] w = slotWidths();
        int len = lengths[b], row = b * maxBlocks;
        long at = 0;
        for (int k = 0; k < hc.held.length; k++) {
            int block = hc.held[k];
            if (block < 0) {
                block = take();
                refs[block] = 1;
                int used = usedIn(k, len);
                for (int a = 0; a < dev.length; a++) {
                    System.arraycopy(hc.arrays[a], (int) (at * w[a][0]), dev[a], (int) (w[a][1] + (long) block * blockSize * w[a][0]), (int) (used * w[a][0]));
                }
                at += used;
            }
            tables[row + k] = block;
        }
        host[b] = null;
        version++;
    }

    /** Forgets sequence b's host copy, if any, releasing the device blocks it still shared. */
    private void dropHostCopy(int b) {
        HostCopy hc = host[b];
        if (hc == null) return;
        for (int block : hc.held) {
            if (block >= 0 && --refs[block] == 0) free[freeTop++] = block;
        }
        host[b] = null;
    }

    // ---------------------------------------------------------------- steps: prepare, describe, commit

    /**
     * What a step will do to the cache, worked out by {@link #prepare} and not applied yet: the block tables,
     * reference counts, free pool and lengths after the step, and the block each sequence copies first
     * (copy-on-write), or −1.
     */
    public static final class Appends {
        private final CacheStorage cache;
        private final long version;
        private final int[] tables, lengths, refs, free, copyFrom, copyTo;
        private final int freeTop;

        private Appends(CacheStorage cache, int[] tables, int[] lengths, int[] refs, int[] free, int freeTop, int[] copyFrom, int[] copyTo) {
            this.cache = cache;
            this.version = cache.version;
            this.tables = tables;
            this.lengths = lengths;
            this.refs = refs;
            this.free = free;
            this.freeTop = freeTop;
            this.copyFrom = copyFrom;
            this.copyTo = copyTo;
        }

        /** Blocks copied before the step (copy-on-write of shared partial blocks). */
        public int copies() {
            int n = 0;
            for (int f : copyFrom) n += f >= 0 ? 1 : 0;
            return n;
        }
    }

    /**
     * Checks that sequences {@code seqIds} (distinct, present) can take {@code counts[i]} more tokens each and
     * works out the blocks: new ones from the pool where a sequence's last block is full (or it has none), and
     * a copy of its partial last block where another sequence shares it. Throws, with nothing changed, when a
     * sequence would pass its capacity or the pool has too few free blocks.
     */
    public Appends prepare(int[] seqIds, int[] counts) {
        Objects.requireNonNull(seqIds, "seqIds");
        Objects.requireNonNull(counts, "counts");
        if (seqIds.length != counts.length) {
            throw new MlaException("a step names " + seqIds.length + " sequences but gives " + counts.length + " token counts");
        }
        boolean[] seen = new boolean[batch];
        for (int i = 0; i < seqIds.length; i++) {
            int b = seqIds[i];
            checkSequence(b);
            if (host[b] != null) throw offloaded(b, "run a step on it");
            if (seen[b]) throw new MlaException("sequence " + b + " appears twice in one step");
            seen[b] = true;
            if (counts[i] < 0) throw new MlaException("token count must be >= 0, found " + counts[i] + " for sequence " + b);
            if ((long) lengths[b] + counts[i] > capacity) {
                throw new MlaException("latent cache full: capacity " + capacity + " tokens per sequence, sequence "
                        + b + " holds " + lengths[b] + ", request appends " + counts[i] + " (needs " + (lengths[b] + (long) counts[i]) + ")");
            }
        }
        int[] t = tables.clone(), len = lengths.clone(), rc = refs.clone(), fr = free.clone();
        int top = freeTop, needed = 0;
        int[] from = new int[batch], to = new int[batch];
        Arrays.fill(from, -1);
        // counted as the loop below takes them: once all but one of a shared block's writers have their copy, the
        // last is its only user and writes in place (parallel sampling: a parent and its forks decoding together)
        int[] users = rc.clone();
        StringBuilder whose = new StringBuilder();
        for (int i = 0; i < seqIds.length; i++) {
            int b = seqIds[i], have = owned(t, b), want = Math.max(have, blocksFor((long) len[b] + counts[i]));
            boolean copy = writesShared(t, users, b, len[b], counts[i], have);
            if (copy) users[t[b * maxBlocks + len[b] / blockSize]]--;
            int more = want - have + (copy ? 1 : 0);
            if (more > 0) whose.append(whose.isEmpty() ? "" : ", ").append("sequence ").append(b).append(": ").append(more);
            needed += more;
        }
        if (needed > top) {
            throw new MlaException("latent cache pool exhausted: the step needs " + needed + (needed == 1 ? " more block of " : " more blocks of ")
                    + blockSize + " tokens (" + whose + "), " + top + " of " + numBlocks + areFree(top)
                    + " (free or truncate sequences, or make a larger pool)");
        }
        for (int i = 0; i < seqIds.length; i++) {
            int b = seqIds[i], have = owned(t, b), want = Math.max(have, blocksFor((long) len[b] + counts[i]));
            if (writesShared(t, rc, b, len[b], counts[i], have)) {
                // the block the step writes into first is shared (a fork): this sequence gets its own, a copy of
                // the shared one's tokens when it holds some (a partial block), before the kernels append
                int k = b * maxBlocks + len[b] / blockSize, shared = t[k];
                rc[shared]--;
                t[k] = fr[--top];
                rc[t[k]] = 1;
                if (len[b] % blockSize != 0) {
                    from[b] = shared;
                    to[b] = t[k];
                }
            }
            for (int k = have; k < want; k++) {
                t[b * maxBlocks + k] = fr[--top];
                rc[t[b * maxBlocks + k]] = 1;
            }
            len[b] += counts[i];
        }
        return new Appends(this, t, len, rc, fr, top, from, to);
    }

    /** Blocks sequence b holds in table t (its row's entries before the first −1): its tokens' and, contiguous, the rest of its block. */
    private int owned(int[] t, int b) {
        int k = 0;
        while (k < maxBlocks && t[b * maxBlocks + k] >= 0) k++;
        return k;
    }

    /** Whether appending {@code count} tokens to sequence b (length len) first writes into a block another sequence uses. */
    private boolean writesShared(int[] t, int[] rc, int b, int len, int count, int have) {
        int k = len / blockSize;
        return count > 0 && k < have && rc[t[b * maxBlocks + k]] > 1;
    }

    /** Length of the kernels' metadata for a step of {@code rows} token rows over this cache ({@link CacheLayout#metaLength}). */
    public int metaLength(int rows) {
        return Memory.arrayLength(CacheLayout.metaLength(rows, batch, maxBlocks), "the step's metadata");
    }

    /**
     * Writes the kernels' metadata ({@link CacheLayout}, "attnMeta") for a step of {@code rows} token rows: the
     * rows of sequence seqIds[i] come next in order (cu_seqlens-style) and sit at positions
     * firstPositions[i] … firstPositions[i] + counts[i] − 1; rows after the last are padding. The block tables
     * are those after {@code appends} (null: the current ones, for a step that appends nothing). Checked before
     * anything is written: every sequence present, counts &ge; 0, positions inside the capacity, at most
     * {@code rows} tokens in all, the arrays of one length.
     */
    public void describe(int[] meta, int rows, int[] seqIds, int[] firstPositions, int[] counts, Appends appends) {
        Objects.requireNonNull(meta, "meta");
        Objects.requireNonNull(seqIds, "seqIds");
        Objects.requireNonNull(firstPositions, "firstPositions");
        Objects.requireNonNull(counts, "counts");
        if (appends != null && (appends.cache != this || appends.version != version)) {
            throw new MlaException("a step prepared for another cache, or before the cache changed");
        }
        if (rows < 0) throw new MlaException("a step's token rows must be >= 0, found " + rows);
        if (meta.length != metaLength(rows)) throw new MlaException("step metadata holds " + meta.length + " ints, expected " + metaLength(rows));
        if (firstPositions.length != seqIds.length || counts.length != seqIds.length) {
            throw new MlaException("a step names " + seqIds.length + " sequences but gives " + firstPositions.length + " first positions and "
                    + counts.length + " token counts");
        }
        long given = 0;
        for (int i = 0; i < seqIds.length; i++) {
            checkResident(seqIds[i]);
            if (counts[i] < 0) throw new MlaException("token count must be >= 0, found " + counts[i] + " for sequence " + seqIds[i]);
            if (firstPositions[i] < 0 || (long) firstPositions[i] + counts[i] > capacity) {
                throw new MlaException("positions " + firstPositions[i] + " … " + ((long) firstPositions[i] + counts[i] - 1) + " of sequence " + seqIds[i]
                        + " out of range: a sequence of this cache holds positions 0 … " + (capacity - 1));
            }
            given += counts[i];
        }
        if (given > rows) throw new MlaException("a step of " + rows + " token rows was given " + given + " tokens");
        int[] t = appends != null ? appends.tables : tables;
        int tables0 = CacheLayout.metaTableStart(rows, batch, maxBlocks, 0);
        int r = 0;
        int[] seqLen = new int[batch];
        for (int i = 0; i < seqIds.length; i++) {
            int b = seqIds[i];
            for (int k = 0; k < counts[i]; k++, r++) {
                meta[2 * r] = firstPositions[i] + k;
                meta[2 * r + 1] = tables0 + b * maxBlocks;
            }
            seqLen[b] = Math.max(seqLen[b], firstPositions[i] + counts[i]);
        }
        for (; r < rows; r++) {
            meta[2 * r] = -1;                              // padding: attends to nothing, writes nothing
            meta[2 * r + 1] = tables0;
        }
        for (int b = 0; b < batch; b++) {
            int at = 2 * rows + 4 * b;
            meta[at] = seqLen[b];                          // only the step's sequences: the naive path decompresses these
            meta[at + 1] = tables0 + b * maxBlocks;
            meta[at + 2] = appends != null ? appends.copyFrom[b] : -1;
            meta[at + 3] = appends != null && appends.copyFrom[b] >= 0 ? appends.copyTo[b] : 0;
        }
        for (int k = 0; k < t.length; k++) meta[tables0 + k] = Math.max(0, t[k]);   // unused entries: block 0, never read
    }

    /** Makes a prepared step's blocks and lengths the cache's (after its kernels wrote the tokens). */
    public void commit(Appends appends) {
        Objects.requireNonNull(appends, "appends");
        if (appends.cache != this || appends.version != version) throw new MlaException("a step prepared for another cache, or before the cache changed");
        System.arraycopy(appends.tables, 0, tables, 0, tables.length);
        System.arraycopy(appends.lengths, 0, lengths, 0, batch);
        System.arraycopy(appends.refs, 0, refs, 0, numBlocks);
        System.arraycopy(appends.free, 0, free, 0, numBlocks);
        freeTop = appends.freeTop;
        version++;
    }

    /**
     * Tokens sequence b can still take in one append: its capacity left, bounded by the slots after its length in
     * the blocks it holds plus the free pool (less one block when its partial last block is shared by a fork and
     * must be copied first). An append of at most this many passes {@link #prepare}.
     */
    public int room(int b) {
        checkResident(b);
        int len = lengths[b], have = owned(tables, b);
        boolean copy = writesShared(tables, refs, b, len, 1, have);
        long avail = (long) have * blockSize - len + (long) (freeTop - (copy ? 1 : 0)) * blockSize;
        return (int) Math.max(0, Math.min((long) capacity - len, avail));
    }

    /** Throws, naming capacity and request, when some sequence cannot take {@code tokens} more. */
    public void checkRoom(int tokens) {
        prepare(allSequences(), uniform(tokens));
    }

    /**
     * Marks {@code tokens} more tokens of every sequence as valid without writing them (benchmarks that need a
     * context without computing it): allocates their blocks. Refused where a shared block would need a copy.
     */
    public void advance(int tokens) {
        Appends a = prepare(allSequences(), uniform(tokens));
        if (a.copies() > 0) throw new MlaException("advance would write into a block shared by a fork");
        commit(a);
    }

    /** Longest array the storage may hold (a JVM's limit, a few elements short of Integer.MAX_VALUE). */
    public static final long MAX_ARRAY = Integer.MAX_VALUE - 8;

    /** Elements of the longest array of a cache of {@code slots} token slots of {@code config} in {@code dtype} (at most {@link #MAX_ARRAY}). */
    public static long largestArray(MlaConfig config, CacheDtype dtype, long slots) {
        int code = dtype.code, dc = config.kvLoraRank(), dr = config.qkRopeHeadDim();
        long largest = Math.max(CacheLayout.floatsLength(code, slots, dc, dr),
                Math.max(CacheLayout.halvesLength(code, slots, dc, dr), CacheLayout.bytesLength(code, slots, dc, dr)));
        return Math.max(largest, CacheLayout.indexKeysLength(slots, config.sparse() ? config.indexer().headDim() : 0));
    }

    /**
     * Benchmarks of caches the host cannot write (a sparse cache: {@code LatentCache.write} refuses, a latent alone
     * has no indexer key): every sequence's first {@code tokens} positions become copies of the first
     * {@code period} rows of sequence {@code source}, filled before by the layer's own steps (position t of
     * sequence b gets row (t + 37·b) mod period), every array of the storage alike (latent, scales, rope part,
     * indexer keys and scales), and every sequence's length becomes {@code tokens}. Contiguous caches only.
     */
    public void repeatRows(int source, int period, int tokens) {
        checkSequence(source);
        if (paged) throw new MlaException("repeatRows: contiguous caches only, this one is paged");
        if (period < 1 || period > lengths[source]) {
            throw new MlaException("repeatRows: the period must be 1 … " + lengths[source] + " (sequence " + source + "'s length), found " + period);
        }
        if (tokens < 1 || tokens > capacity) throw new MlaException("repeatRows: tokens must be 1 … " + capacity + " (the capacity), found " + tokens);
        toHost();
        int code = dtype.code, dc = kvLoraRank, dr = ropeDim;
        // each array: {offset of slot 0, numbers per slot}; an array the dtype does not use has 0 per slot
        int[][] layout = {
                code == CacheLayout.F32 ? new int[] {0, dc + dr} : code == CacheLayout.INT8 ? new int[] {0, 2}
                        : code == CacheLayout.FP8 ? new int[] {CacheLayout.TABLE, CacheLayout.fp8Blocks(dc)} : new int[] {0, 0},
                code == CacheLayout.BF16 ? new int[] {0, dc + dr} : code == CacheLayout.FP8 ? new int[] {0, dr} : new int[] {0, 0},
                code == CacheLayout.INT8 ? new int[] {0, dc + dr} : code == CacheLayout.FP8 ? new int[] {0, dc} : new int[] {0, 0},
                {0, indexDim}, {0, indexDim / CacheLayout.FP8_BLOCK}};
        Object[] arrays = {floats, halves, bytes, indexKeys, indexScales};
        Object[] rows = new Object[arrays.length];
        for (int a = 0; a < arrays.length; a++) {
            int w = layout[a][1];
            if (arrays[a] == null || w == 0) continue;
            rows[a] = java.lang.reflect.Array.newInstance(arrays[a].getClass().getComponentType(), period * w);
            for (int t = 0; t < period; t++) System.arraycopy(arrays[a], layout[a][0] + slot(source, t) * w, rows[a], t * w, w);
        }
        java.util.stream.IntStream.range(0, batch).parallel().forEach(b -> {
            for (int a = 0; a < arrays.length; a++) {
                int w = layout[a][1];
                if (rows[a] == null) continue;
                for (int t = 0; t < tokens; t++) {
                    System.arraycopy(rows[a], ((t + 37 * b) % period) * w, arrays[a], layout[a][0] + (b * capacity + t) * w, w);
                }
            }
        });
        Arrays.fill(lengths, tokens);
        version++;
    }

    /** Every sequence id, in order (a contiguous cache's whole batch); throws if one is not present. */
    public int[] allSequences() {
        int[] ids = new int[batch];
        for (int b = 0; b < batch; b++) {
            checkSequence(b);
            ids[b] = b;
        }
        return ids;
    }

    private int[] uniform(int tokens) {
        if (tokens < 0) throw new MlaException("token count must be >= 0, found " + tokens);
        int[] n = new int[batch];
        Arrays.fill(n, tokens);
        return n;
    }

    @Override
    public Object[] arrays() {
        return indexDim == 0 ? new Object[] {floats, halves, bytes} : new Object[] {floats, halves, bytes, indexKeys, indexScales};
    }

    @Override
    public void residentOn(Object owner, Runnable pullToHost) {
        this.residentOwner = owner;
        this.pull = pullToHost;
    }

    @Override
    public Object residentOwner() {
        return residentOwner;
    }

    @Override
    public void toHost() {
        if (pull != null) {
            Runnable p = pull;
            pull = null;
            residentOwner = null;
            p.run();
        }
    }

    /**
     * Gives sequence b fresh blocks for {@code n} tokens, its old ones released (a host write replaces its
     * content). Checked before anything changes: the pool, counting the blocks b alone holds, must have enough.
     */
    private synchronized void reallocate(int b, int n) {   // synchronized: DecodeBench fills sequences from several threads
        if (n > capacity) throw new MlaException("latent cache full: capacity " + capacity + " tokens per sequence, write of " + n);
        int have = owned(tables, b), own = 0;
        for (int k = 0; k < have; k++) own += refs[tables[b * maxBlocks + k]] == 1 ? 1 : 0;
        if (host[b] != null) for (int block : host[b].held) own += block >= 0 && refs[block] == 1 ? 1 : 0;
        if (blocksFor(n) > freeTop + own) {
            throw new MlaException("latent cache pool exhausted: a write of " + n + " tokens needs " + blocks(blocksFor(n)) + " of " + blockSize
                    + ", " + (freeTop + own) + areFree(freeTop + own));
        }
        dropHostCopy(b);                              // a host write replaces an offloaded sequence's content too
        release(b, 0);
        for (int k = 0; k < blocksFor(n); k++) {
            tables[b * maxBlocks + k] = take();
            refs[tables[b * maxBlocks + k]] = 1;
        }
        lengths[b] = n;
        version++;
    }

    /**
     * Replaces sequence b's content with {@code n} tokens: latent [n, kv_lora_rank] and roped keys
     * [n, qk_rope_head_dim] (rounded to bf16 when stored as bf16). Checked before anything is written.
     */
    public void write(int b, float[] latent, float[] ropeKey) {
        checkSequence(b);
        Objects.requireNonNull(latent, "latent");
        Objects.requireNonNull(ropeKey, "ropeKey");
        if (latent.length % kvLoraRank != 0 || ropeKey.length % ropeDim != 0
                || latent.length / kvLoraRank != ropeKey.length / ropeDim) {
            throw new MlaException("cache write: expected latent [n, " + kvLoraRank + "] and rope keys [n, " + ropeDim
                    + "] for the same n, found " + latent.length + " and " + ropeKey.length + " numbers");
        }
        int n = latent.length / kvLoraRank;
        if (n > capacity) throw new MlaException("latent cache full: capacity " + capacity + " tokens per sequence, write of " + n);
        requireFinite(latent, "latent", kvLoraRank);
        requireFinite(ropeKey, "ropeKey", ropeDim);
        reallocate(b, n);
        toHost();
        for (int t = 0; t < n; t++) {
            CacheRows.writeRow(latent, t * kvLoraRank, ropeKey, t * ropeDim, floats, halves, bytes, dtype.code, slot(b, t),
                    kvLoraRank, ropeDim);
        }
    }

    /**
     * Sequence b's quantised storage as it is (int8 or fp8 caches): the byte values per token (int8: d_c + d_r,
     * fp8: d_c e4m3), the scales per token (int8: 2, fp8: one per 128 latent numbers) and, for fp8, the bf16
     * rope part as its exact float values.
     */
    public record Quantised(byte[] values, float[] scales, float[] rope, int valuesPerToken, int scalesPerToken) {
        /** A copy of the byte values. */
        @Override
        public byte[] values() {
            return values.clone();
        }

        /** A copy of the scales. */
        @Override
        public float[] scales() {
            return scales.clone();
        }

        /** A copy of the rope part (fp8; empty otherwise). */
        @Override
        public float[] rope() {
            return rope.clone();
        }
    }

    public Quantised quantised(int b) {
        int vpt = valuesPerToken(), spt = scalesPerToken(), n = length(b);
        toHost();
        byte[] values = new byte[n * vpt];
        float[] scales = new float[n * spt];
        for (int t = 0; t < n; t++) {
            int slot = slot(b, t);                        // slots of one block are adjacent: values vpt, scales spt apart
            System.arraycopy(bytes, slot * vpt, values, t * vpt, vpt);
            System.arraycopy(floats, CacheLayout.firstScaleIndex(dtype.code, slot, kvLoraRank), scales, t * spt, spt);
        }
        return new Quantised(values, scales, dtype == CacheDtype.FP8 ? ropeKey(b) : new float[0], vpt, spt);
    }

    /** Replaces sequence b with quantised storage as {@link #quantised} returns it. Checked before writing. */
    public void writeQuantised(int b, byte[] values, float[] scales, float[] rope) {
        checkSequence(b);
        Objects.requireNonNull(values, "values");
        Objects.requireNonNull(scales, "scales");
        Objects.requireNonNull(rope, "rope");
        int vpt = valuesPerToken(), spt = scalesPerToken();
        int n = values.length / vpt;
        if (values.length != n * vpt || scales.length != n * spt || (dtype == CacheDtype.FP8 && rope.length != n * ropeDim)) {
            throw new MlaException("cache write: expected " + dtype + " storage of n tokens ([n, " + vpt + "] values, [n, " + spt
                    + "] scales" + (dtype == CacheDtype.FP8 ? ", [n, " + ropeDim + "] rope" : "") + "), found " + values.length + ", "
                    + scales.length + (dtype == CacheDtype.FP8 ? ", " + rope.length : "") + " numbers");
        }
        if (n > capacity) throw new MlaException("latent cache full: capacity " + capacity + " tokens per sequence, write of " + n);
        for (int i = 0; i < scales.length; i++) {
            if (!(scales[i] >= 0) || Float.isInfinite(scales[i])) {
                throw new MlaException("cache write: scale [" + i / spt + ", " + i % spt + "] is " + scales[i] + "; scales must be finite and >= 0");
            }
        }
        for (int i = 0; dtype == CacheDtype.FP8 && i < values.length; i++) {
            if ((values[i] & 0x7F) == 0x7F) throw new MlaException("cache write: value [" + i / vpt + ", " + i % vpt + "] is an e4m3 NaN code (0x7F/0xFF)");
        }
        if (dtype == CacheDtype.FP8) requireFinite(rope, "rope", ropeDim);
        reallocate(b, n);
        toHost();
        for (int t = 0; t < n; t++) {
            int slot = slot(b, t);
            System.arraycopy(values, t * vpt, bytes, slot * vpt, vpt);
            System.arraycopy(scales, t * spt, floats, CacheLayout.firstScaleIndex(dtype.code, slot, kvLoraRank), spt);
            for (int i = 0; dtype == CacheDtype.FP8 && i < ropeDim; i++) {
                halves[CacheLayout.fp8RopeIndex(slot, i, ropeDim)] = Bf16Bits.encode(rope[t * ropeDim + i]);
            }
        }
    }

    private static void requireFinite(float[] a, String name, int width) {
        for (int i = 0; i < a.length; i++) {
            if (!Float.isFinite(a[i])) throw new MlaException("cache write: " + name + " [" + i / width + ", " + i % width + "] is " + a[i] + "; expected finite numbers");
        }
    }

    private int valuesPerToken() {
        if (dtype != CacheDtype.INT8 && dtype != CacheDtype.FP8) throw new MlaException("quantised storage asked of a " + dtype + " cache");
        return CacheLayout.quantisedValuesPerToken(dtype.code, kvLoraRank, ropeDim);
    }

    private int scalesPerToken() {
        return CacheLayout.scalesPerToken(dtype.code, kvLoraRank);
    }

    /** Sequence b's latents as f32, [length(b), kv_lora_rank] (decoded when stored as bf16). */
    public float[] latent(int b) {
        return read(b, 0, kvLoraRank);
    }

    /** Sequence b's roped keys as f32, [length(b), qk_rope_head_dim], interleaved rope order. */
    public float[] ropeKey(int b) {
        return read(b, kvLoraRank, ropeDim);
    }

    private float[] read(int b, int offset, int width) {
        toHost();
        int n = length(b);
        float[] out = new float[n * width];
        for (int t = 0; t < n; t++) {
            for (int i = 0; i < width; i++) {
                out[t * width + i] = CacheOps.load(floats, halves, bytes, dtype.code, slot(b, t), offset + i,
                        kvLoraRank + ropeDim, kvLoraRank);
            }
        }
        return out;
    }

    /** A sparse cache's indexer key codes, for kernels: e4m3 [slot, d_idx] ({@link CacheLayout#indexKeyIndex}). */
    public byte[] indexKeys() {
        requireSparse("indexer keys");
        toHost();
        return indexKeys;
    }

    /** A sparse cache's indexer key scales, for kernels: [slot, d_idx / 128] ({@link CacheLayout#indexScaleIndex}). */
    public float[] indexScales() {
        requireSparse("indexer key scales");
        toHost();
        return indexScales;
    }

    private void requireSparse(String what) {
        if (indexDim == 0) throw new MlaException(what + " asked of a dense cache (only a sparse config's cache holds the indexer's keys)");
    }

    /** Sequence b's indexer keys as stored: e4m3 codes [length(b), d_idx] and scales [length(b), d_idx/128]. */
    public record IndexKeys(byte[] codes, float[] scales) {
        /** A copy of the codes. */
        @Override
        public byte[] codes() {
            return codes.clone();
        }

        /** A copy of the scales. */
        @Override
        public float[] scales() {
            return scales.clone();
        }
    }

    /** Sequence b's indexer keys (a sparse cache), copies in position order. */
    public IndexKeys indexKeys(int b) {
        requireSparse("indexer keys");
        int n = length(b), spt = indexDim / CacheLayout.FP8_BLOCK;
        toHost();
        byte[] codes = new byte[n * indexDim];
        float[] scales = new float[n * spt];
        for (int t = 0; t < n; t++) {
            int slot = slot(b, t);
            System.arraycopy(indexKeys, CacheLayout.indexKeyIndex(slot, 0, indexDim), codes, t * indexDim, indexDim);
            System.arraycopy(indexScales, CacheLayout.indexScaleIndex(slot, 0, indexDim), scales, t * spt, spt);
        }
        return new IndexKeys(codes, scales);
    }

    /**
     * Sets the indexer keys of sequence b's length(b) tokens (after {@link #write} or {@link #writeQuantised} of
     * its latent): codes [n, d_idx] e4m3, scales [n, d_idx/128] finite and &gt; 0. Checked before writing.
     */
    public void writeIndexKeys(int b, byte[] codes, float[] scales) {
        requireSparse("indexer keys");
        Objects.requireNonNull(codes, "codes");
        Objects.requireNonNull(scales, "scales");
        int n = length(b), spt = indexDim / CacheLayout.FP8_BLOCK;
        if (codes.length != (long) n * indexDim || scales.length != (long) n * spt) {
            throw new MlaException("indexer keys: expected [" + n + ", " + indexDim + "] codes and [" + n + ", " + spt + "] scales for sequence " + b
                    + " of " + n + " tokens, found " + codes.length + " and " + scales.length + " numbers");
        }
        for (int i = 0; i < codes.length; i++) {
            if ((codes[i] & 0x7F) == 0x7F) throw new MlaException("indexer keys: code [" + i / indexDim + ", " + i % indexDim + "] is an e4m3 NaN code (0x7F/0xFF)");
        }
        for (int i = 0; i < scales.length; i++) {
            if (!(scales[i] > 0) || Float.isInfinite(scales[i])) {
                throw new MlaException("indexer keys: scale [" + i / spt + ", " + i % spt + "] is " + scales[i] + "; scales must be finite and > 0");
            }
        }
        toHost();
        for (int t = 0; t < n; t++) {
            int slot = slot(b, t);
            System.arraycopy(codes, t * indexDim, indexKeys, CacheLayout.indexKeyIndex(slot, 0, indexDim), indexDim);
            System.arraycopy(scales, t * spt, indexScales, CacheLayout.indexScaleIndex(slot, 0, indexDim), spt);
        }
    }

    /** The 32-bit part, for kernels: F32 values, or the decoding table and scales ({@link CacheLayout}). */
    public float[] floats() {
        toHost();
        return floats;
    }

    /** The 16-bit part, for kernels: BF16 values, or FP8's bf16 rope part, else a 1-element placeholder. */
    public short[] halves() {
        toHost();
        return halves;
    }

    /** The 8-bit part, for kernels: INT8 values, or FP8's e4m3 latent, else a 1-element placeholder. */
    public byte[] bytes() {
        toHost();
        return bytes;
    }

    @Override
    public String toString() {
        return (paged ? "paged latent cache, " + numBlocks + " blocks × " + blockSize + " tokens, " : "latent cache, ")
                + batch + " sequences × " + capacity + " tokens, " + dtype + (indexDim > 0 ? ", with the indexer's keys (sparse)" : "");
    }
}
