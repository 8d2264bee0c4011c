package org.tornadomla.store;

import org.junit.jupiter.api.Test;
import org.tornadomla.MlaException;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.attention.MlaLayer;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.cache.PagedCacheSpec;
import org.tornadomla.cache.internal.CacheStorage;
import org.tornadomla.config.IndexerConfig;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.config.RopeScaling;
import org.tornadomla.internal.Gaussians;
import org.tornadomla.weights.MlaWeights;

import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A sparse config's cache (DeepSeek-V3.2's DSA: each token also caches its lightning-indexer key) through the
 * store: the pulled cache must hold the pusher's latent rows and indexer keys bit for bit, so that decode steps
 * after the pull select the same positions and give the same outputs as the process that computed the prefill.
 * The reference is the pushing cache itself and a layer that never went through the store.
 */
class SparseStoreTest {
    static final int D = 64, P = 37, B = 8;   // a prompt of 4 full blocks and a partial one

    static MlaConfig sparse() {
        // index_topk 6, below the context: the selection matters
        return new MlaConfig(D, 2, 32, 32, 16, 16, 16, 10000, 1e-6, 4096, 1, new RopeScaling(4, 256, 32, 1, 1, 1), false,
                new IndexerConfig(4, 128, 6, true, false));
    }

    final int[] ids = BlockKeysTest.tokens(3, P);

    @Test
    void aPulledSparseCacheDecodesAsTheOneThatComputedThePrefill() {
        MlaLayer layer = new MlaLayer(MlaWeights.random(sparse(), 11));
        float[] prompt = Gaussians.floats(new SplittableRandom(1), P * D, 1);
        float[][] steps = {Gaussians.floats(new SplittableRandom(2), D, 1), Gaussians.floats(new SplittableRandom(3), D, 1)};
        for (CacheDtype dt : CacheDtype.values()) {
            for (boolean paged : new boolean[] {false, true}) {
                String what = dt + (paged ? " paged" : " contiguous");
                MemoryBlockStore mem = new MemoryBlockStore();
                LatentStore store = new LatentStore(mem, sparse(), "m", StoreOptions.defaults().withBlockSize(B));
                LatentCache src = cache(layer, dt, paged), dst = cache(layer, dt, paged);
                layer.prefill(src, prompt, P, AttentionPath.ABSORBED);
                LatentStore.Transfer push = store.push(ids, 0, LatentCacheRows.of(List.of(src)));
                // every value holds the indexer key of each row: 132 more bytes per token than the latent
                long dense = 0;
                for (int start = 0; start < P; start += B) dense += BlockValue.size(dt, 32, 16, Math.min(B, P - start));
                assertEquals(dense + 132L * P, push.bytes(), what + ": bytes pushed");
                LatentStore.PullResult pull = store.pull(ids, 0, LatentCacheRows.of(List.of(dst)), OnMissing.FAIL);
                assertTrue(pull.complete(), what);
                CacheStorage.IndexKeys ka = CacheStorage.of(src).indexKeys(0), kb = CacheStorage.of(dst).indexKeys(0);
                assertArrayEquals(ka.codes(), kb.codes(), what + ": indexer codes");
                assertArrayEquals(ka.scales(), kb.scales(), what + ": indexer scales");
                assertEquals(new LatentCacheRows(src).read(0, 0, P), new LatentCacheRows(dst).read(0, 0, P), what + ": rows");
                for (float[] x : steps) {
                    assertArrayEquals(layer.decode(src, x, AttentionPath.ABSORBED), layer.decode(dst, x, AttentionPath.ABSORBED), what + ": decode after the pull");
                }
            }
        }
    }

    @Test
    void aDenseCacheAndASparseStoreRefuseEachOther() {
        MlaConfig s = sparse(), d = s.withIndexer(null);
        MemoryBlockStore mem = new MemoryBlockStore();
        LatentStore sparseStore = new LatentStore(mem, s, "m", StoreOptions.defaults().withBlockSize(B));
        MlaException e = assertThrows(MlaException.class,
                () -> sparseStore.pull(ids, 0, LatentCacheRows.of(List.of(new LatentCache(d, 1, 64, CacheDtype.BF16))), OnMissing.FAIL));
        assertTrue(e.getMessage().contains("a dense cache does not belong to this store's config, a sparse one"), e.getMessage());
        LatentStore denseStore = new LatentStore(mem, d, "m", StoreOptions.defaults().withBlockSize(B));
        e = assertThrows(MlaException.class,
                () -> denseStore.pull(ids, 0, LatentCacheRows.of(List.of(new LatentCache(s, 1, 64, CacheDtype.BF16))), OnMissing.FAIL));
        assertTrue(e.getMessage().contains("a sparse cache (with indexer keys of 128) does not belong to this store's config, dense MLA"), e.getMessage());
    }

    @Test
    void aDamagedIndexerKeyIsRefusedAndNothingIsLoaded() {
        MlaLayer layer = new MlaLayer(MlaWeights.random(sparse(), 12));
        MemoryBlockStore mem = new MemoryBlockStore();
        LatentStore store = new LatentStore(mem, sparse(), "m", StoreOptions.defaults().withBlockSize(B));
        LatentCache src = cache(layer, CacheDtype.BF16, false);
        layer.prefill(src, Gaussians.floats(new SplittableRandom(1), P * D, 1), P, AttentionPath.ABSORBED);
        store.push(ids, 0, LatentCacheRows.of(List.of(src)));
        // an e4m3 NaN code in the indexer key of row 0 of block 2, with a checksum made to match (a writer's fault, not transit damage)
        BlockKeys.Key k = store.keys(CacheDtype.BF16).chain(ids, 0).get(2);
        byte[] v = mem.values.get(k.name());
        int row0 = BlockValue.HEADER + LatentRows.rowBytes(CacheDtype.BF16, 32, 16);
        v[row0 + 5] = 0x7F;
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(v, 0, v.length - 4);
        java.nio.ByteBuffer.wrap(v).order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(v.length - 4, (int) crc.getValue());
        LatentCache dst = cache(layer, CacheDtype.BF16, false);
        MlaException e = assertThrows(MlaException.class, () -> store.pull(ids, 0, LatentCacheRows.of(List.of(dst)), OnMissing.FAIL));
        assertTrue(e.getMessage().contains("index key [5] is the e4m3 NaN code 0x7f") && e.getMessage().endsWith("nothing was loaded"), e.getMessage());
        assertEquals(0, dst.length(0));
    }

    static LatentCache cache(MlaLayer layer, CacheDtype dt, boolean paged) {
        if (!paged) return layer.newCache(1, 64, dt);
        LatentCache c = layer.newPagedCache(PagedCacheSpec.builder().maxSequences(1).maxSequenceLength(64).numBlocks(10).blockSize(B).dtype(dt).build());
        c.addSequence();
        return c;
    }
}
