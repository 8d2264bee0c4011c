package org.tornadomla.tornado;

import org.tornadomla.cache.internal.CacheStorage;
import org.tornadomla.cache.PagedCacheSpec;
import org.junit.jupiter.api.Test;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.TestData;
import org.tornadomla.graph.JvmExecutor;
import org.tornadomla.graph.KernelGraph;
import org.tornadomla.kernels.OnlineSoftmax;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The KernelContext decode kernel against the plain-Java split_tiles it replaces: the same attention-core
 * graph (split_tiles + combine) on the JVM and on the device, with DeepSeek-V3's latent geometry (d_c 512,
 * d_r 64), 16 heads, two sequences of different lengths, several executions of one plan with growing
 * contexts, f32, bf16, int8 and fp8 caches.
 */
class FlashDecodeTest {
    static final int B = 2, T = 1, CAP = 300, H = 16, DN = 128, DR = 64, DC = 512, W = DC + DR, SPLITS = 4, BC = 16;

    @Test
    void matchesThePlainKernelOverChangingContexts() {
        for (int blockSize : new int[] {0, 16}) check(blockSize);
    }

    /** FlashDecode against splitTiles on the JVM, over a contiguous cache (blockSize 0) or a paged one with scattered blocks. */
    private static void check(int blockSize) {
        MlaConfig c = new MlaConfig(64, H, 0, DC, DN, DR, 8, 10000, 1e-6, 4096, 1, null);
        for (CacheDtype dt : CacheDtype.values()) {
            int dtype = dt.code;
            LatentCache cache;
            if (blockSize == 0) {
                cache = new LatentCache(c, B, CAP, dt);
            } else {
                cache = LatentCache.paged(c, PagedCacheSpec.builder().maxSequences(B).maxSequenceLength(CAP).numBlocks(B * ((CAP + blockSize - 1) / blockSize)).blockSize(blockSize).dtype(dt).build());
                CacheStorage.of(cache).shuffleFreeBlocks(7);
                for (int b = 0; b < B; b++) cache.addSequence();
            }
            for (int b = 0; b < B; b++) cache.write(b, TestData.gaussian(1 + b, CAP * DC), TestData.gaussian(5 + b, CAP * DR));
            float[] kv32 = CacheStorage.of(cache).floats();
            short[] kv16 = CacheStorage.of(cache).halves();
            byte[] kv8 = CacheStorage.of(cache).bytes();
            KernelGraph g = new KernelGraph("attn");
            float[] qLat = g.input("q_lat", TestData.gaussian(2, B * T * H * DC));
            float[] q = g.input("q", TestData.gaussian(3, B * T * H * (DN + DR)));
            int[] meta = g.input("attnMeta", new int[CacheStorage.of(cache).metaLength(B * T)]);
            g.state("cache", CacheStorage.of(cache));
            float[] sTile = g.scratch("s_tile", new float[B * T * H * SPLITS * BC]);
            float[] oPart = g.scratch("o_split", new float[B * T * H * SPLITS * DC]);
            float[] ml = g.scratch("ml", new float[2 * B * T * H * SPLITS]);
            float[] oLat = g.output("o_lat", new float[B * T * H * DC]);
            g.task("split_tiles", OnlineSoftmax::splitTiles, qLat, q, kv32, kv16, kv8, dtype, sTile, oPart, ml, meta,
                    B * T, cache.blockSize(), H, DN, DR, DC, 0.07f, BC, SPLITS);
            g.task("combine", OnlineSoftmax::combine, oPart, ml, oLat, B * T, H, SPLITS, DC);
            JvmExecutor jvm = new JvmExecutor();
            try (TornadoExecutor dev = new TornadoExecutor(null, null, true)) {
                // contexts 1 (only split 0 non-empty), 3 (empty splits), 37, 299 with a different one per sequence
                int[][] starts = {{0, 0}, {2, 1}, {36, 120}, {298, 17}};
                for (int[] st : starts) {
                    CacheStorage.of(cache).describe(meta, B * T, new int[] {0, 1}, st, new int[] {1, 1}, null);
                    jvm.execute(g);
                    float[] expected = oLat.clone();
                    java.util.Arrays.fill(oLat, Float.NaN);
                    dev.execute(g);
                    String what = "dtype " + dtype + (blockSize > 0 ? " paged by " + blockSize : " contiguous") + " positions " + java.util.Arrays.toString(st);
                    TestData.assertClose(expected, oLat, 1e-4, what);
                    assertEquals(FlashDecode.class, dev.kernelOf(g, "split_tiles").getDeclaringClass(), what);
                }
                assertTrue(dev.device().startsWith("tornado "));
            }
        }
    }
}
