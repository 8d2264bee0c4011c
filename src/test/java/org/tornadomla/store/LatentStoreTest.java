package org.tornadomla.store;

import org.junit.jupiter.api.Test;
import org.tornadomla.MlaException;
import org.tornadomla.TestData;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.CacheIdentity;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.MlaConfig;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Push and pull against a store in memory: what moves, in how many round trips, and what a pull does with a
 * missing, damaged or foreign block or a failing store. The caches' own rows are the reference: a pull must
 * reproduce them bit for bit or leave the cache empty.
 */
class LatentStoreTest {
    final MlaConfig c = TestData.small();   // d_c 32, d_r 8
    static final int B = 16;                // tokens per block
    static final int N = 70;                // 4 full blocks and a partial one of 6
    final int[] ids = BlockKeysTest.tokens(11, N);
    final MemoryBlockStore mem = new MemoryBlockStore();

    LatentStore store(String model, StoreOptions o) {
        return new LatentStore(mem, c, model, o);
    }

    LatentStore store() {
        return store("m", StoreOptions.defaults().withBlockSize(B));
    }

    /** The weights' digest of the source caches' layers (rows written directly: any 64 hex digits name them). */
    static final String WEIGHTS = "5a".repeat(32);

    /** Two layers' caches of one sequence (seq 1 of 2) holding n seeded tokens, belonging to layers 0 and 1 of {@link #WEIGHTS}. */
    List<LatentCache> source(CacheDtype dt, int n) {
        return source(c, dt, n);
    }

    List<LatentCache> source(MlaConfig config, CacheDtype dt, int n) {
        List<LatentCache> out = new ArrayList<>();
        for (int l = 0; l < 2; l++) {
            LatentCache cache = new LatentCache(config, 2, 128, dt);
            cache.write(1, TestData.gaussian(100 + l, n * c.kvLoraRank()), TestData.gaussian(200 + l, n * c.qkRopeHeadDim()));
            cache.bind(new CacheIdentity(config, l, WEIGHTS));
            out.add(cache);
        }
        return out;
    }

    List<LatentCache> empty(CacheDtype dt) {
        return List.of(new LatentCache(c, 1, 128, dt), new LatentCache(c, 1, 128, dt));
    }

    static List<BlockRows> rows(List<LatentCache> caches) {
        return LatentCacheRows.of(caches);
    }

    /** Sequence 0 of {@code to} holds exactly the first {@code n} rows of sequence 1 of {@code from}, in every layer. */
    static void sameRows(List<LatentCache> from, List<LatentCache> to, int n) {
        for (int l = 0; l < from.size(); l++) {
            assertEquals(n, to.get(l).length(0), "layer " + l + " length");
            assertEquals(new LatentCacheRows(from.get(l)).read(1, 0, n), new LatentCacheRows(to.get(l)).read(0, 0, n), "layer " + l);
        }
    }

    @Test
    void aPulledSequenceHoldsThePushedRowsBitForBit() {
        for (CacheDtype dt : CacheDtype.values()) {
            mem.values.clear();
            List<LatentCache> src = source(dt, N), dst = empty(dt);
            LatentStore.Transfer push = store().push(ids, 1, rows(src));
            assertEquals(10, push.blocks(), "5 blocks × 2 layers");
            assertEquals(2 * (4 * BlockValue.size(dt, 32, 8, B) + BlockValue.size(dt, 32, 8, 6)), push.bytes());
            LatentStore.PullResult r = store().pull(ids, 0, rows(dst), OnMissing.FAIL);
            assertEquals(N, r.tokens());
            assertTrue(r.complete());
            assertNull(r.stopped());
            assertEquals(push.bytes(), r.transfer().bytes());
            sameRows(src, dst, N);
            assertArrayEquals(src.get(1).latent(1), dst.get(1).latent(0), dt.toString());
        }
    }

    @Test
    void transfersAreBatchedNotPerRow() {
        List<LatentCache> src = source(CacheDtype.BF16, N);
        store().push(ids, 1, rows(src));
        assertEquals(1, mem.puts, "10 blocks of a few KB: one batch");
        store().pull(ids, 0, rows(empty(CacheDtype.BF16)), OnMissing.FAIL);
        assertEquals(1, mem.exists, "one round trip to check every block of every layer");
        assertEquals(1, mem.gets);
        // batches of about one block: a round trip per block and layer on push, per block (both layers) on pull
        MemoryBlockStore before = mem;
        before.puts = before.gets = before.exists = 0;
        LatentStore small = store("m", StoreOptions.defaults().withBlockSize(B).withChunkBytes(1));
        small.push(ids, 1, rows(src));
        assertEquals(10, mem.puts);
        small.pull(ids, 0, rows(empty(CacheDtype.BF16)), OnMissing.FAIL);
        assertEquals(1, mem.exists);
        assertEquals(5, mem.gets);
    }

    @Test
    void longestPrefixCountsTheFullBlocksEveryLayerHas() {
        LatentStore s = store();
        s.push(ids, 1, rows(source(CacheDtype.F32, N)));
        assertEquals(N, s.longestPrefix(ids, CacheDtype.F32, 2), "the whole sequence, partial block included");
        int[] other = Arrays.copyOf(ids, 100);
        for (int i = 40; i < 100; i++) other[i] = 7;   // shares tokens 0 … 39: blocks 0 and 1
        assertEquals(2 * B, s.longestPrefix(other, CacheDtype.F32, 2));
        assertEquals(4 * B, s.longestPrefix(Arrays.copyOf(ids, 66), CacheDtype.F32, 2), "a different partial block is not shared");
        assertEquals(0, s.longestPrefix(ids, CacheDtype.BF16, 2), "another dtype's blocks are not this one's");
        assertEquals(0, s.longestPrefix(ids, CacheDtype.F32, 3), "layer 2 was never pushed");
        assertEquals(0, store("another model", StoreOptions.defaults().withBlockSize(B)).longestPrefix(ids, CacheDtype.F32, 2));
        assertEquals(6, mem.exists, "one round trip each");
    }

    private void deleteBlock(CacheDtype dt, int layer, int block) {
        mem.delete(List.of(store().keys(dt).chain(ids, layer).get(block).name()));
    }

    @Test
    void aMissingBlockFailsWithTheCacheUnchangedOrLoadsThePrefixBeforeIt() {
        List<LatentCache> src = source(CacheDtype.FP8, N);
        store().push(ids, 1, rows(src));
        deleteBlock(CacheDtype.FP8, 1, 2);
        List<LatentCache> dst = empty(CacheDtype.FP8);
        String key = store().keys(CacheDtype.FP8).chain(ids, 1).get(2).name();
        String m = assertThrows(MlaException.class, () -> store().pull(ids, 0, rows(dst), OnMissing.FAIL)).getMessage();
        assertEquals("memory://test: block 2 (tokens 32 … 47) of layer 1 (key " + key + ") is missing (never pushed, expired or evicted); nothing was loaded", m);
        assertEquals(0, mem.gets, "known to be missing before anything is transferred");
        sameRows(src, dst, 0);

        LatentStore.PullResult r = store().pull(ids, 0, rows(dst), OnMissing.RECOMPUTE);
        assertEquals(2 * B, r.tokens(), "blocks 0 and 1 of both layers");
        assertEquals(N, r.requested());
        assertTrue(r.stopped().contains("block 2 (tokens 32 … 47) of layer 1"), r.stopped());
        sameRows(src, dst, 2 * B);
    }

    @Test
    void aDamagedBlockFailsNamingItsKeyOrStopsTheRecompute() {
        List<LatentCache> src = source(CacheDtype.BF16, N);
        store().push(ids, 1, rows(src));
        String key = store().keys(CacheDtype.BF16).chain(ids, 0).get(3).name();
        mem.values.get(key)[200] ^= 4;
        List<LatentCache> dst = empty(CacheDtype.BF16);
        String m = assertThrows(MlaException.class, () -> store().pull(ids, 0, rows(dst), OnMissing.FAIL)).getMessage();
        assertTrue(m.startsWith("memory://test: block 3 (tokens 48 … 63) of layer 0 (key " + key + "): damaged: its bytes have CRC32C"), m);
        sameRows(src, dst, 0);
        LatentStore.PullResult r = store().pull(ids, 0, rows(dst), OnMissing.RECOMPUTE);
        assertEquals(3 * B, r.tokens());
        assertTrue(r.stopped().contains("damaged"), r.stopped());
        sameRows(src, dst, 3 * B);
    }

    @Test
    void aValueUnderAnotherKeyOrFromAnotherConfigIsRefused() {
        List<LatentCache> src = source(CacheDtype.F32, N);
        store().push(ids, 1, rows(src));
        List<BlockKeys.Key> chain = store().keys(CacheDtype.F32).chain(ids, 0);
        mem.values.put(chain.get(2).name(), mem.values.get(chain.get(1).name()));
        List<LatentCache> dst = empty(CacheDtype.F32);
        String m = assertThrows(MlaException.class, () -> store().pull(ids, 0, rows(dst), OnMissing.FAIL)).getMessage();
        assertTrue(m.contains("not the block its key names") || m.contains("expected 16 from position 32"), m);
        sameRows(src, dst, 0);

        // a store for another config (same d_c and d_r) writes under its own keys, so a copy is needed to mix them up
        MlaConfig other = c.withHiddenSize(96);
        LatentStore foreign = new LatentStore(mem, other, "m", StoreOptions.defaults().withBlockSize(B));
        List<BlockKeys.Key> theirs = foreign.keys(CacheDtype.F32).chain(ids, 0);
        foreign.push(ids, 1, rows(source(other, CacheDtype.F32, N)));
        mem.values.put(chain.get(0).name(), mem.values.get(theirs.get(0).name()));
        m = assertThrows(MlaException.class, () -> store().pull(ids, 0, rows(dst), OnMissing.FAIL)).getMessage();
        assertTrue(m.contains("block 0 (tokens 0 … 15) of layer 0") && m.contains("made for another config"), m);
        sameRows(src, dst, 0);
    }

    @Test
    void aStoreFailingMidPullLeavesTheCacheUnchangedOrTheCompleteBlocksBefore() {
        List<LatentCache> src = source(CacheDtype.INT8, N);
        LatentStore s = store("m", StoreOptions.defaults().withBlockSize(B).withChunkBytes(1));   // one block per batch
        s.push(ids, 1, rows(src));
        mem.failGet = 3;
        List<LatentCache> dst = empty(CacheDtype.INT8);
        String m = assertThrows(MlaException.class, () -> s.pull(ids, 0, rows(dst), OnMissing.FAIL)).getMessage();
        assertEquals("memory://test: GET of 2 blocks failed: connection lost (test); nothing was loaded", m);
        sameRows(src, dst, 0);
        mem.gets = 0;
        LatentStore.PullResult r = s.pull(ids, 0, rows(dst), OnMissing.RECOMPUTE);
        assertEquals(2 * B, r.tokens(), "the two blocks that arrived before the failure");
        sameRows(src, dst, 2 * B);
    }

    @Test
    void badRequestsAreRefusedBeforeAnyTransfer() {
        List<LatentCache> src = source(CacheDtype.BF16, N);
        LatentStore s = store();
        assertTrue(assertThrows(MlaException.class, () -> s.push(Arrays.copyOf(ids, N + 1), 1, rows(src))).getMessage()
                .contains("holds 70 tokens, fewer than the 71 token ids"));
        s.push(ids, 1, rows(src));
        mem.exists = 0;
        List<LatentCache> full = empty(CacheDtype.BF16);
        full.get(1).write(0, new float[32], new float[8]);
        assertTrue(assertThrows(MlaException.class, () -> s.pull(ids, 0, rows(full), OnMissing.FAIL)).getMessage()
                .contains("sequence 0 of layer 1 already holds 1 tokens"));
        List<LatentCache> small = List.of(new LatentCache(c, 1, 64, CacheDtype.BF16), new LatentCache(c, 1, 64, CacheDtype.BF16));
        assertTrue(assertThrows(MlaException.class, () -> s.pull(ids, 0, rows(small), OnMissing.RECOMPUTE)).getMessage()
                .contains("70 tokens do not fit sequence 0 of layer 0 (room for 64)"));
        MlaConfig wide = new MlaConfig(64, 4, 32, 48, 16, 8, 12, 10000, 1e-6, 4096, 2, null);
        List<BlockRows> foreign = LatentCacheRows.of(List.of(new LatentCache(wide, 1, 128, CacheDtype.BF16)));
        assertTrue(assertThrows(MlaException.class, () -> s.pull(ids, 0, foreign, OnMissing.FAIL)).getMessage()
                .contains("does not belong to a config with kv_lora_rank 32"));
        assertThrows(MlaException.class, () -> s.pull(ids, 0, List.of(), OnMissing.FAIL));
        assertEquals(0, mem.exists, "nothing asked of the store");
        assertEquals(0, s.pull(new int[0], 0, rows(empty(CacheDtype.BF16)), OnMissing.FAIL).tokens());
    }

    /**
     * The identity of the caches: blocks made by other weights (the same model name, config and layers) are
     * foreign, FAIL refuses them and RECOMPUTE loads nothing of them; a cache without an identity takes the
     * blocks'; a push needs caches that belong to this config's layers, in order.
     */
    @Test
    void blocksOfOtherWeightsAreForeignAndACacheTakesTheBlocksIdentity() {
        List<LatentCache> src = source(CacheDtype.BF16, N);
        LatentStore s = store();
        s.push(ids, 1, rows(src));
        String theirs = "77".repeat(32);
        List<LatentCache> other = empty(CacheDtype.BF16);
        for (int l = 0; l < 2; l++) other.get(l).bind(new CacheIdentity(c, l, theirs));
        String m = assertThrows(MlaException.class, () -> s.pull(ids, 0, rows(other), OnMissing.FAIL)).getMessage();
        assertTrue(m.startsWith("memory://test: block 0 (tokens 0 … 15) of layer 0 (key ") && m.endsWith("): made by other weights (kv_a_proj_with_mqa/kv_a_layernorm "
                + "sha256 5a5a5a5a5a5a…, this layer's are 777777777777…); nothing was loaded"), m);
        LatentStore.PullResult r = s.pull(ids, 0, rows(other), OnMissing.RECOMPUTE);
        assertEquals(0, r.tokens(), "recompute all of it");
        assertTrue(r.stopped().contains("made by other weights"), r.stopped());
        sameRows(src, other, 0);

        // caches without an identity: loaded, and they now belong to the pushing caches' layers
        List<LatentCache> fresh = empty(CacheDtype.BF16);
        assertEquals(N, s.pull(ids, 0, rows(fresh), OnMissing.FAIL).tokens());
        sameRows(src, fresh, N);
        for (int l = 0; l < 2; l++) assertEquals(src.get(l).identity(), fresh.get(l).identity(), "layer " + l);
        // the caches of the same identity: loaded
        List<LatentCache> same = empty(CacheDtype.BF16);
        for (int l = 0; l < 2; l++) same.get(l).bind(src.get(l).identity());
        assertEquals(N, s.pull(ids, 0, rows(same), OnMissing.FAIL).tokens());

        // refused before any transfer: a cache of no layer, layers out of order, another config
        mem.exists = 0;
        mem.puts = 0;
        List<LatentCache> raw = empty(CacheDtype.BF16);
        raw.get(0).write(0, TestData.gaussian(1, N * c.kvLoraRank()), TestData.gaussian(2, N * c.qkRopeHeadDim()));
        raw.get(1).write(0, TestData.gaussian(1, N * c.kvLoraRank()), TestData.gaussian(2, N * c.qkRopeHeadDim()));
        m = assertThrows(MlaException.class, () -> s.push(ids, 0, rows(raw))).getMessage();
        assertTrue(m.startsWith("push: the cache of layer 0 belongs to no layer yet"), m);
        m = assertThrows(MlaException.class, () -> s.push(ids, 1, rows(List.of(src.get(1), src.get(0))))).getMessage();
        assertTrue(m.startsWith("layer 0: the cache given as layer 0 belongs to layer 1 ("), m);
        m = assertThrows(MlaException.class, () -> s.pull(ids, 0, rows(List.of(same.get(1), same.get(0))), OnMissing.RECOMPUTE)).getMessage();
        assertTrue(m.startsWith("layer 0: the cache given as layer 0 belongs to layer 1 ("), m);
        MlaConfig theta = new MlaConfig(64, 4, 32, 32, 16, 8, 12, 50000, 1e-6, 4096, 2, null);
        m = assertThrows(MlaException.class, () -> s.push(ids, 1, rows(source(theta, CacheDtype.BF16, N)))).getMessage();
        assertEquals("layer 0: the cache belongs to another config than this store's; they differ in config rope_theta 50000.0 vs 10000.0", m);
        assertEquals(0, mem.exists, "nothing asked of the store");
        assertEquals(0, mem.puts, "nothing sent");
    }
}
