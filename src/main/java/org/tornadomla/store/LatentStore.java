package org.tornadomla.store;

import org.tornadomla.MlaException;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.CacheFiles;
import org.tornadomla.cache.CacheIdentity;
import org.tornadomla.config.MlaConfig;

import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;

/**
 * A latent-cache tier: a sequence's cache rows, layer by layer, in blocks in a {@link BlockStore} (Redis), so
 * that another process or machine continues from them. A prefill process {@link #push pushes} a sequence; a
 * decode process {@link #pull pulls} it into its own cache and decodes on, with the outputs one process doing
 * both would give (the rows are moved bit for bit). A new sequence that starts like one pushed before pulls
 * the blocks of the common prefix ({@link #longestPrefix}) and computes only the rest.
 *
 * <p>Keys are a hash chain over the token ids ({@link BlockKeys}); values hold the rows in the cache's dtype
 * with a checksum ({@link BlockValue}). Transfers go in batches of about {@link StoreOptions#chunkBytes} per
 * round trip. A pull checks every block of every layer (present, undamaged, this config, dtype, layer, weights
 * and position) before it writes a row: it loads all of the sequence or, with {@link OnMissing#RECOMPUTE}, the
 * blocks before the first hole in every layer alike; never a partial or a wrong cache. A block made by other
 * weights (another checkpoint pushed under the same model name) is foreign like a damaged one.
 *
 * <p>Layers are given as a list, index = layer number: each cache must belong to that layer of this store's
 * config ({@link BlockRows#identity()}; a push needs the identity, which every value carries, a pull into a
 * cache without one gives it the identity of the blocks it loads). The caller supplies the token ids (the library has no
 * tokenizer). One store, one caller at a time (like the caches it reads and writes).
 */
public final class LatentStore {
    private final BlockStore store;
    private final MlaConfig config;
    private final String model;
    private final StoreOptions options;
    private final String configHash;
    private final byte[] configSha;

    /**
     * @param model names the weights (checkpoint and revision, or how random weights were made): blocks are
     *              shared only between processes that give the same model, config and cache dtype
     */
    public LatentStore(BlockStore store, MlaConfig config, String model, StoreOptions options) {
        this.store = Objects.requireNonNull(store, "store");
        this.config = Objects.requireNonNull(config, "config");
        this.model = Objects.requireNonNull(model, "model");
        this.options = Objects.requireNonNull(options, "options");
        this.configHash = CacheIdentity.configHash(config);
        this.configSha = HexFormat.of().parseHex(configHash);
    }

    /** How this store cuts and moves sequences. */
    public StoreOptions options() {
        return options;
    }

    /** The server's address, {@code redis://HOST:PORT} (no credentials). */
    public String address() {
        return store.address();
    }

    /** The block keys of this store for a cache dtype. */
    public BlockKeys keys(CacheDtype dtype) {
        return new BlockKeys(BlockKeys.PREFIX, model, configHash, dtype, options.blockSize());
    }

    /** What a push or pull moved: tokens, block values, their bytes, the wall time and the part of it spent in the store's calls. */
    public record Transfer(int tokens, int blocks, long bytes, long nanos, long storeNanos) {
        /** Bytes per second over the whole call, in GB/s (10^9 bytes). */
        public double gbPerSecond() {
            return nanos == 0 ? 0 : (double) bytes / nanos;
        }
    }

    /**
     * What a pull loaded: {@code tokens} of the {@code requested} (all layers alike; the caller computes the
     * rest), and when it stopped early, why ({@code stopped}: which block of which layer, and what was wrong).
     */
    public record PullResult(int tokens, int requested, Transfer transfer, String stopped) {
        /** Whether every requested token was loaded. */
        public boolean complete() {
            return tokens == requested;
        }
    }

    // ---------------------------------------------------------------- push

    /**
     * Stores the rows of tokens [0, tokens.length) of sequence {@code seq} of every layer, keyed by
     * {@code tokens} (the sequence's token ids; its cache must hold at least that many tokens). Blocks that are
     * already stored are written again (same bytes; their time to live starts again). A failure on the way
     * is one error saying how many blocks were stored; a reader then finds at most a prefix, never a wrong block.
     * Refused before anything is sent when a cache belongs to no layer, or to another config or layer index.
     */
    public Transfer push(int[] tokens, int seq, List<BlockRows> layers) {
        Objects.requireNonNull(tokens, "tokens");
        checkLayers(layers);
        for (int l = 0; l < layers.size(); l++) {
            if (layers.get(l).identity() == null) {
                throw new MlaException("push: the cache of layer " + l + " belongs to no layer yet (no layer made or filled it), so its blocks could not say "
                        + "which weights made them: make it with MlaLayer.newCache, or bind it to the layer's identity");
            }
        }
        long t0 = System.nanoTime();
        int n = tokens.length;
        for (int l = 0; l < layers.size(); l++) {
            int have = layers.get(l).length(seq);
            if (have < n) throw new MlaException("push: sequence " + seq + " of layer " + l + " holds " + have + " tokens, fewer than the " + n + " token ids given");
        }
        Batch batch = new Batch(options.ttl().toMillis());
        try {
            for (int l = 0; l < layers.size(); l++) {
                BlockRows layer = layers.get(l);
                LatentRows rows = layer.read(seq, 0, n);   // one read per layer, cut into blocks below
                for (BlockKeys.Key k : keys(layer.dtype()).chain(tokens, l)) batch.add(k.name(), BlockValue.encode(layer.identity(), k, rows, k.start()));
            }
            batch.flush();
        } catch (MlaException e) {
            throw new MlaException(e.getMessage() + " (push: " + batch.done + " of " + blocksOf(n, layers.size()) + " blocks stored before)", e);
        }
        return new Transfer(n, batch.done, batch.bytes, System.nanoTime() - t0, batch.storeNanos);
    }

    /** Values waiting to be sent, sent in one round trip once they reach {@link StoreOptions#chunkBytes}. */
    private final class Batch {
        final long ttl;
        final List<String> keys = new ArrayList<>();
        final List<byte[]> values = new ArrayList<>();
        long pending, bytes, storeNanos;
        int done;

        Batch(long ttl) {
            this.ttl = ttl;
        }

        void add(String key, byte[] value) {
            keys.add(key);
            values.add(value);
            pending += value.length;
            if (pending >= options.chunkBytes()) flush();
        }

        void flush() {
            if (keys.isEmpty()) return;
            long s = System.nanoTime();
            store.put(keys, values, ttl);
            storeNanos += System.nanoTime() - s;
            done += keys.size();
            bytes += pending;
            keys.clear();
            values.clear();
            pending = 0;
        }
    }

    private int blocksOf(int n, int layers) {
        return (int) Math.min(Integer.MAX_VALUE, (long) keys(CacheDtype.F32).blocks(n) * layers);
    }

    // ---------------------------------------------------------------- prefix

    /**
     * How many leading tokens have their blocks in the store for every layer 0 … layers−1 (checked in one
     * round trip): a multiple of the block size, or all of them when the last, partial block is there too.
     * Existence only; {@link #pull} checks the values themselves.
     */
    public int longestPrefix(int[] tokens, CacheDtype dtype, int layers) {
        Objects.requireNonNull(dtype, "dtype");
        if (layers < 1) throw new MlaException("layers must be >= 1, found " + layers);
        return prefix(tokens, java.util.Collections.nCopies(layers, dtype));
    }

    /** {@link #longestPrefix(int[], CacheDtype, int)} for these layers (each with its cache's dtype). */
    public int longestPrefix(int[] tokens, List<BlockRows> layers) {
        checkLayers(layers);
        return prefix(tokens, layers.stream().map(BlockRows::dtype).toList());
    }

    private int prefix(int[] tokens, List<CacheDtype> dtypes) {
        Objects.requireNonNull(tokens, "tokens");
        List<List<BlockKeys.Key>> chains = new ArrayList<>();
        for (int l = 0; l < dtypes.size(); l++) chains.add(keys(dtypes.get(l)).chain(tokens, l));
        return tokensOf(chains.get(0), present(chains, null));
    }

    /** Leading blocks present in every chain (one EXISTS round); the first missing one is described in why[0]. */
    private int present(List<List<BlockKeys.Key>> chains, String[] why) {
        List<String> all = new ArrayList<>();
        for (List<BlockKeys.Key> c : chains) for (BlockKeys.Key k : c) all.add(k.name());
        boolean[] there = store.exist(all);
        int blocks = chains.get(0).size(), at = 0;
        for (int l = 0; l < chains.size(); l++) {
            List<BlockKeys.Key> c = chains.get(l);
            for (int i = 0; i < c.size(); i++, at++) {
                if (!there[at] && i < blocks) {
                    blocks = i;
                    if (why != null) why[0] = describe(c.get(i), l) + " is missing (never pushed, expired or evicted)";
                }
            }
        }
        return blocks;
    }

    private static int tokensOf(List<BlockKeys.Key> chain, int blocks) {
        return blocks == 0 ? 0 : chain.get(blocks - 1).start() + chain.get(blocks - 1).count();
    }

    private static String describe(BlockKeys.Key k, int layer) {
        return "block " + k.index() + " (tokens " + k.start() + " … " + (k.start() + k.count() - 1) + (k.partial() ? ", partial" : "")
                + ") of layer " + layer + " (key " + k.name() + ")";
    }

    // ---------------------------------------------------------------- pull

    /**
     * Loads the rows of tokens [0, tokens.length) of every layer into sequence {@code seq}, which must be
     * empty in every layer and have room for them. First one round trip checks which blocks exist, then the
     * values come in batches, and every value of every layer is checked ({@link BlockValue#decode}) before any
     * row is written.
     *
     * <p>{@link OnMissing#FAIL}: a missing, damaged or foreign block, or a store that fails or cannot be
     * reached, is one error naming the store, the block, the layer and the key; the caches are unchanged.
     * {@link OnMissing#RECOMPUTE}: the blocks before the first such hole are loaded (in every layer alike) and
     * the result says how many tokens that is and why it stopped; the caller computes the rest (e.g. a
     * chunked prefill from that position). A foreign block is such a hole: made for another config, layer or
     * dtype, or by other weights than those of the target cache's identity (a cache without an identity takes
     * the weights of its layer's first block, and keeps that identity once rows are loaded).
     */
    public PullResult pull(int[] tokens, int seq, List<BlockRows> layers, OnMissing onMissing) {
        Objects.requireNonNull(tokens, "tokens");
        Objects.requireNonNull(onMissing, "onMissing");
        checkLayers(layers);
        long t0 = System.nanoTime();
        int n = tokens.length, nl = layers.size();
        for (int l = 0; l < nl; l++) {
            BlockRows layer = layers.get(l);
            if (layer.length(seq) != 0) {
                throw new MlaException("pull: sequence " + seq + " of layer " + l + " already holds " + layer.length(seq) + " tokens; a pull fills an empty sequence");
            }
            if (layer.room(seq) < n) throw new MlaException("pull: " + n + " tokens do not fit sequence " + seq + " of layer " + l + " (room for " + layer.room(seq) + ")");
        }
        byte[][] weights = new byte[nl][];      // per layer: the weights its blocks must come from (null: the first block's)
        for (int l = 0; l < nl; l++) {
            CacheIdentity id = layers.get(l).identity();
            if (id != null) weights[l] = id.weightsShaBytes();
        }
        List<List<BlockKeys.Key>> chains = new ArrayList<>();
        for (int l = 0; l < nl; l++) chains.add(keys(layers.get(l).dtype()).chain(tokens, l));
        int wanted = chains.get(0).size();
        String[] why = {null};
        long storeNanos = 0, bytes = 0;
        int blocks;
        // 1. which blocks are there, for every layer (one round trip)
        try {
            long s = System.nanoTime();
            blocks = present(chains, why);
            storeNanos += System.nanoTime() - s;
        } catch (MlaException e) {
            if (onMissing == OnMissing.FAIL) throw new MlaException(e.getMessage() + "; nothing was loaded", e);
            return new PullResult(0, n, new Transfer(0, 0, 0, System.nanoTime() - t0, storeNanos), e.getMessage());
        }
        if (blocks < wanted && onMissing == OnMissing.FAIL) throw new MlaException(store.address() + ": " + why[0] + "; nothing was loaded");

        // 2. the values, in batches of whole blocks (every layer of a block together), checked as they come
        LatentRows[][] rows = new LatentRows[nl][blocks];
        int fetched = 0;   // blocks [0, fetched) are here and checked in every layer; the batch starts there
        long batchBytes = 0;
        for (int i = 0; i < blocks; i++) {
            for (int l = 0; l < nl; l++) {
                BlockRows layer = layers.get(l);
                batchBytes += BlockValue.size(layer.dtype(), layer.kvLoraRank(), layer.ropeDim(), layer.indexDim(), chains.get(l).get(i).count());
            }
            if (batchBytes < options.chunkBytes() && i < blocks - 1) continue;
            List<String> names = new ArrayList<>();
            for (int b = fetched; b <= i; b++) for (int l = 0; l < nl; l++) names.add(chains.get(l).get(b).name());
            List<byte[]> values;
            try {
                long s = System.nanoTime();
                values = store.get(names);
                storeNanos += System.nanoTime() - s;
                for (byte[] v : values) bytes += v == null ? 0 : v.length;   // moved, whether used or not
            } catch (MlaException e) {
                if (onMissing == OnMissing.FAIL) throw new MlaException(e.getMessage() + "; nothing was loaded", e);
                why[0] = e.getMessage();
                break;
            }
            int bad = decodeBatch(values, fetched, i, chains, layers, weights, rows, onMissing, why);
            if (bad >= 0) {
                fetched = bad;
                break;
            }
            fetched = i + 1;
            batchBytes = 0;
        }
        blocks = Math.min(blocks, fetched);

        // 3. everything needed is here and checked: write every layer
        int loaded = tokensOf(chains.get(0), blocks);
        for (int l = 0; l < nl && blocks > 0; l++) {
            BlockRows layer = layers.get(l);
            List<LatentRows> parts = new ArrayList<>(blocks);
            for (int i = 0; i < blocks; i++) parts.add(rows[l][i]);
            layer.append(seq, LatentRows.concat(layer.dtype(), layer.kvLoraRank(), layer.ropeDim(), layer.indexDim(), parts));
            if (layer.identity() == null) layer.bind(new CacheIdentity(config, l, HexFormat.of().formatHex(weights[l])));
        }
        return new PullResult(loaded, n, new Transfer(loaded, blocks * nl, bytes, System.nanoTime() - t0, storeNanos), loaded == n ? null : why[0]);
    }

    /**
     * Checks the values of blocks [from, to] (every layer of each, in that order) into {@code rows}; returns -1,
     * or with RECOMPUTE the first block with a missing or bad value (its reason in why[0]). FAIL throws.
     */
    private int decodeBatch(List<byte[]> values, int from, int to, List<List<BlockKeys.Key>> chains, List<BlockRows> layers,
                            byte[][] weights, LatentRows[][] rows, OnMissing onMissing, String[] why) {
        int j = 0;
        for (int b = from; b <= to; b++) {
            for (int l = 0; l < layers.size(); l++, j++) {
                BlockKeys.Key k = chains.get(l).get(b);
                BlockRows layer = layers.get(l);
                String where = store.address() + ": " + describe(k, l);
                try {
                    byte[] v = values.get(j);
                    if (v == null) throw new MlaException(where + " is missing (expired or evicted since it was looked up)");
                    rows[l][b] = BlockValue.decode(v, new BlockValue.Expected(configSha, weights[l], layer.dtype(), layer.kvLoraRank(), layer.ropeDim(), layer.indexDim(), l, k), where);
                    if (weights[l] == null) weights[l] = BlockValue.weightsSha(v);   // the rest of this layer's blocks: the same weights
                } catch (MlaException e) {
                    if (onMissing == OnMissing.FAIL) throw new MlaException(e.getMessage() + "; nothing was loaded", e);
                    why[0] = e.getMessage();
                    return b;
                }
            }
        }
        return -1;
    }

    /** Removes a sequence's blocks of every layer 0 … layers−1 from the store (e.g. after a benchmark). */
    public void remove(int[] tokens, CacheDtype dtype, int layers) {
        List<String> names = new ArrayList<>();
        for (int l = 0; l < layers; l++) for (BlockKeys.Key k : keys(dtype).chain(tokens, l)) names.add(k.name());
        for (int from = 0; from < names.size(); from += 1024) store.delete(names.subList(from, Math.min(names.size(), from + 1024)));
    }

    /** Geometry, and each identity present: this store's config, and the layer its index in the list names. */
    private void checkLayers(List<BlockRows> layers) {
        Objects.requireNonNull(layers, "layers");
        if (layers.isEmpty()) throw new MlaException("no layers given: a push or pull needs at least one layer's cache");
        for (int l = 0; l < layers.size(); l++) {
            BlockRows r = Objects.requireNonNull(layers.get(l), "layers[" + l + "]");
            if (r.kvLoraRank() != config.kvLoraRank() || r.ropeDim() != config.qkRopeHeadDim()) {
                throw new MlaException("layer " + l + ": cache of [" + r.kvLoraRank() + " + " + r.ropeDim() + "] does not belong to a config with kv_lora_rank "
                        + config.kvLoraRank() + " and qk_rope_head_dim " + config.qkRopeHeadDim());
            }
            int di = config.sparse() ? config.indexer().headDim() : 0;
            if (r.indexDim() != di) {
                throw new MlaException("layer " + l + ": " + (r.indexDim() > 0 ? "a sparse cache (with indexer keys of " + r.indexDim() + ")" : "a dense cache")
                        + " does not belong to this store's config, " + (di > 0 ? "a sparse one (DeepSeek Sparse Attention, indexer keys of " + di + ")" : "dense MLA"));
            }
            CacheIdentity id = r.identity();
            if (id != null && !id.configSha256().equals(configHash)) {
                throw new MlaException("layer " + l + ": the cache belongs to another config than this store's; they differ in config "
                        + String.join(", ", CacheIdentity.configDifferences(id.config(), config)));
            }
            if (id != null && id.layer() != l) {
                throw new MlaException("layer " + l + ": the cache given as layer " + l + " belongs to layer " + id.layer() + " (" + id.describe()
                        + "); the list's index is the layer number");
            }
        }
    }
}
