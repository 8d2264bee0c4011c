package org.tornadomla.cache;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tornadomla.MlaException;
import org.tornadomla.TestData;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.attention.MlaLayer;
import org.tornadomla.cache.internal.CacheStorage;
import org.tornadomla.config.IndexerConfig;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.config.RopeScaling;
import org.tornadomla.internal.Gaussians;
import org.tornadomla.kernels.CacheLayout;
import org.tornadomla.store.LatentCacheRows;
import org.tornadomla.weights.MlaWeights;

import java.nio.file.Path;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The indexer's key cache of a sparse config: its size, its lifecycle with the latent's, files, and refusals. */
class SparseCacheTest {
    static MlaConfig sparse() {
        return new MlaConfig(64, 2, 32, 32, 16, 16, 16, 10000, 1e-6, 4096, 1, new RopeScaling(4, 256, 32, 1, 1, 1), false,
                new IndexerConfig(4, 128, 8, true, false));
    }

    static MlaConfig dense() {
        return sparse().withIndexer(null);
    }

    @Test
    void aSparseCacheHolds132MoreBytesPerTokenAndADenseOneIsUnchanged() {
        for (CacheDtype dt : CacheDtype.values()) {
            LatentCache d = new LatentCache(dense(), 2, 16, dt), s = new LatentCache(sparse(), 2, 16, dt);
            assertFalse(d.sparse());
            assertTrue(s.sparse());
            assertEquals(CacheLayout.bytesPerToken(dt.code, 32, 16), d.bytesPerToken(), dt.toString());
            assertEquals(d.bytesPerToken() + 132, s.bytesPerToken(), dt.toString());
            assertEquals(d.storageBytes() + 132L * 2 * 16, s.storageBytes(), dt.toString());
            assertEquals(3, CacheStorage.of(d).arrays().length, "a dense cache's storage is the latent's three arrays");
            assertEquals(5, CacheStorage.of(s).arrays().length);
        }
        assertEquals(656 + 132, new LatentCache(MlaConfig.preset("deepseek-v3.2"), 1, 1, CacheDtype.FP8).bytesPerToken());
    }

    @Test
    void hostWritesRefuseASparseCache() {
        LatentCache s = new LatentCache(sparse(), 1, 8, CacheDtype.F32);
        MlaException e = assertThrows(MlaException.class, () -> s.write(0, new float[32], new float[16]));
        assertTrue(e.getMessage().contains("indexer's key"), e.getMessage());
        // the store moves a sparse cache's rows with their indexer keys (SparseStoreTest)
        assertEquals(128, new LatentCacheRows(s).indexDim());
        // a dense cache for a sparse layer and the other way round
        MlaLayer sparseLayer = new MlaLayer(MlaWeights.random(sparse(), 1)), denseLayer = new MlaLayer(MlaWeights.random(dense(), 1));
        e = assertThrows(MlaException.class, () -> sparseLayer.decode(new LatentCache(dense(), 1, 8, CacheDtype.F32), new float[64], AttentionPath.ABSORBED));
        assertTrue(e.getMessage().contains("dense cache was given to a sparse layer"), e.getMessage());
        e = assertThrows(MlaException.class, () -> denseLayer.decode(s, new float[64], AttentionPath.ABSORBED));
        assertTrue(e.getMessage().contains("sparse cache"), e.getMessage());
    }

    @Test
    void theIndexerKeysTravelInCacheFilesAndMismatchedFilesAreRefused(@TempDir Path dir) {
        MlaWeights w = MlaWeights.random(sparse(), 3);
        MlaLayer layer = new MlaLayer(w);
        int D = 64, P = 12;
        for (CacheDtype dt : new CacheDtype[] {CacheDtype.F32, CacheDtype.BF16, CacheDtype.INT8, CacheDtype.FP8}) {
            LatentCache a = layer.newCache(1, 32, dt);
            layer.prefill(a, Gaussians.floats(new SplittableRandom(4), P * D, 1), P, AttentionPath.ABSORBED);
            Path f = dir.resolve("sparse-" + dt + ".safetensors");
            CacheFiles.export(a, 0, f);
            LatentCache b = layer.newCache(1, 32, dt);
            CacheFiles.importInto(b, 0, f);
            CacheStorage.IndexKeys ka = CacheStorage.of(a).indexKeys(0), kb = CacheStorage.of(b).indexKeys(0);
            assertArrayEquals(ka.codes(), kb.codes(), dt + ": indexer codes");
            assertArrayEquals(ka.scales(), kb.scales(), dt + ": indexer scales");
            assertArrayEquals(a.latent(0), b.latent(0));
            float[] x = Gaussians.floats(new SplittableRandom(5), D, 1);
            assertArrayEquals(layer.decode(a, x, AttentionPath.ABSORBED), layer.decode(b, x, AttentionPath.ABSORBED), dt + ": a decode after the import");
            // a sparse file into a dense cache, and a dense file into a sparse cache: one clear line each
            MlaException e = assertThrows(MlaException.class, () -> CacheFiles.importInto(new LatentCache(dense(), 1, 32, dt), 0, f));
            assertTrue(e.getMessage().contains("a sparse cache's file") && e.getMessage().contains("the target cache is dense"), e.getMessage());
            MlaLayer denseLayer = new MlaLayer(MlaWeights.random(dense(), 3));
            LatentCache d = denseLayer.newCache(1, 32, dt);
            denseLayer.prefill(d, Gaussians.floats(new SplittableRandom(4), P * D, 1), P, AttentionPath.ABSORBED);
            Path g = dir.resolve("dense-" + dt + ".safetensors");
            CacheFiles.export(d, 0, g);
            e = assertThrows(MlaException.class, () -> CacheFiles.importInto(new LatentCache(sparse(), 1, 32, dt), 0, g));
            assertTrue(e.getMessage().contains("a dense cache's file") && e.getMessage().contains("the target cache is sparse"), e.getMessage());
        }
    }

    /**
     * What {@code mla bench --sparse} fills its cache with: sequence 0's first P rows, prefilled by the layer, repeated
     * over every sequence from its own starting row ((t + 37·b) mod P), latent, rope key and indexer key alike, every
     * dtype; the rows compared through the cache's read views, one by one against the source's.
     */
    @Test
    void repeatRowsCopiesTheLayersRowsIntoEverySequence() {
        MlaLayer layer = new MlaLayer(MlaWeights.random(sparse(), 11));
        int D = 64, P = 12, B = 3, T = 40, dc = 32, dr = 16, di = 128;
        for (CacheDtype dt : new CacheDtype[] {CacheDtype.F32, CacheDtype.BF16, CacheDtype.INT8, CacheDtype.FP8}) {
            LatentCache c = layer.newCache(B, T, dt);
            layer.forward(c, Gaussians.floats(new SplittableRandom(12), P * D, 1), new int[] {0}, new int[] {P}, AttentionPath.TILED);
            float[] lat = c.latent(0), rope = c.ropeKey(0);
            CacheStorage.IndexKeys keys = CacheStorage.of(c).indexKeys(0);
            byte[] codes = keys.codes();
            float[] scales = keys.scales();
            CacheStorage.of(c).repeatRows(0, P, T);
            for (int b = 0; b < B; b++) {
                assertEquals(T, c.length(b), dt + " length of " + b);
                float[] l = c.latent(b), r = c.ropeKey(b);
                CacheStorage.IndexKeys k = CacheStorage.of(c).indexKeys(b);
                for (int t = 0; t < T; t++) {
                    int src = (t + 37 * b) % P;
                    String at = dt + " b" + b + " t" + t;
                    assertArrayEquals(java.util.Arrays.copyOfRange(lat, src * dc, src * dc + dc), java.util.Arrays.copyOfRange(l, t * dc, t * dc + dc), at);
                    assertArrayEquals(java.util.Arrays.copyOfRange(rope, src * dr, src * dr + dr), java.util.Arrays.copyOfRange(r, t * dr, t * dr + dr), at);
                    assertArrayEquals(java.util.Arrays.copyOfRange(codes, src * di, src * di + di), java.util.Arrays.copyOfRange(k.codes(), t * di, t * di + di), at);
                    assertEquals(scales[src], k.scales()[t], at);
                }
            }
        }
        LatentCache c = layer.newCache(1, 8, CacheDtype.F32);
        layer.prefill(c, Gaussians.floats(new SplittableRandom(13), 4 * D, 1), 4, AttentionPath.TILED);
        MlaException e = assertThrows(MlaException.class, () -> CacheStorage.of(c).repeatRows(0, 5, 8));
        assertTrue(e.getMessage().contains("the period must be 1 … 4 (sequence 0's length), found 5"), e.getMessage());
        e = assertThrows(MlaException.class, () -> CacheStorage.of(c).repeatRows(0, 4, 9));
        assertTrue(e.getMessage().contains("tokens must be 1 … 8 (the capacity), found 9"), e.getMessage());
    }

    @Test
    void truncateForkAndFreeCoverTheIndexerKeys() {
        MlaWeights w = MlaWeights.random(sparse(), 7);
        int D = 64;
        float[] prompt = Gaussians.floats(new SplittableRandom(8), 10 * D, 1), draft = Gaussians.floats(new SplittableRandom(9), 3 * D, 1);
        float[] next = Gaussians.floats(new SplittableRandom(10), D, 1);
        PagedCacheSpec spec = PagedCacheSpec.builder().maxSequences(2).maxSequenceLength(32).numBlocks(12).blockSize(4).dtype(CacheDtype.F32).build();
        // speculative tokens rolled back, then the real next token: as if the draft never ran
        MlaLayer layer = new MlaLayer(w);
        LatentCache c = layer.newPagedCache(spec);
        int s = c.addSequence();
        layer.forward(c, prompt, new int[] {s}, new int[] {10}, AttentionPath.TILED);
        int child = c.fork(s);
        layer.forward(c, draft, new int[] {child}, new int[] {3}, AttentionPath.TILED);
        c.truncate(child, 10);
        float[] y = layer.forward(c, next, new int[] {child}, new int[] {1}, AttentionPath.TILED);
        c.free(s);
        float[] y2 = layer.forward(c, next, new int[] {child}, new int[] {1}, AttentionPath.TILED);   // position 11 now, alone in its blocks
        LatentCache fresh = layer.newPagedCache(spec);
        int f = fresh.addSequence();
        layer.forward(fresh, prompt, new int[] {f}, new int[] {10}, AttentionPath.TILED);
        float[] expected = layer.forward(fresh, next, new int[] {f}, new int[] {1}, AttentionPath.TILED);
        float[] expected2 = layer.forward(fresh, next, new int[] {f}, new int[] {1}, AttentionPath.TILED);
        assertTrue(TestData.maxAbsDiff(expected, y) == 0, "after truncate: " + TestData.maxAbsDiff(expected, y));
        assertTrue(TestData.maxAbsDiff(expected2, y2) == 0, "after free: " + TestData.maxAbsDiff(expected2, y2));
        assertArrayEquals(CacheStorage.of(fresh).indexKeys(f).codes(), CacheStorage.of(c).indexKeys(child).codes());
    }
}
