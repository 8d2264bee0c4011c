package org.tornadomla.tornado;

import org.tornadomla.cache.internal.CacheStorage;
import org.tornadomla.cache.PagedCacheSpec;
import org.junit.jupiter.api.Test;
import org.tornadomla.TestData;
import org.tornadomla.attention.AttentionOptions;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.attention.MlaLayer;
import org.tornadomla.attention.PagedLayerTest;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;

import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.tornadomla.attention.PagedLayerTest.D;
import static org.tornadomla.attention.PagedLayerTest.REF;

/**
 * The paged cache on the device: variable-length steps over scattered blocks (block tables in the step's
 * attnMeta, on the device every step) against each sequence alone on the JVM, every path × cache dtype, with
 * the KernelContext kernels and with the plain ones; copy-on-write after a fork on the device; and a
 * continuous batch (sequences joining, leaving, forking) that runs on the plans it built first.
 */
class PagedOnDeviceTest {
    static final double TOL = 1e-4;

    @Test
    void pagedStepsMatchEachSequenceAloneOnEveryPathAndDtype() {
        for (boolean kernelContext : new boolean[] {true, false}) {
            try (TornadoExecutor dev = new TornadoExecutor(null, null, kernelContext); MlaLayer layer = new MlaLayer(REF.weights(), dev)) {
                for (AttentionPath p : AttentionPath.values()) {
                    if (!kernelContext && p != AttentionPath.TILED) continue;
                    AttentionOptions opt = new AttentionOptions(p, 2, 3);
                    for (CacheDtype dt : CacheDtype.values()) {
                        LatentCache cache = layer.newPagedCache(PagedCacheSpec.builder().maxSequences(4).maxSequenceLength(16).numBlocks(16).blockSize(4).dtype(dt).build());
                        CacheStorage.of(cache).shuffleFreeBlocks(5);
                        float[][] y = PagedLayerTest.batched(layer, cache, opt);
                        for (int b = 0; b < PagedLayerTest.CHUNKS.length; b++) {
                            float[] expected = PagedLayerTest.alone(REF, opt, dt, PagedLayerTest.inputs(b), PagedLayerTest.CHUNKS[b]);
                            TestData.assertClose(expected, y[b], TOL, dev.device() + (kernelContext ? "" : " plain") + " " + opt + " " + dt + " sequence " + b);
                        }
                    }
                }
            }
        }
    }

    @Test
    void aForkCopiesItsPartialBlockOnTheDeviceAndAContinuousBatchReusesItsPlans() {
        AttentionOptions opt = AttentionOptions.of(AttentionPath.TILED);
        for (CacheDtype dt : new CacheDtype[] {CacheDtype.F32, CacheDtype.FP8}) {
            try (TornadoExecutor dev = new TornadoExecutor(null, null); MlaLayer layer = new MlaLayer(REF.weights(), dev)) {
                LatentCache cache = layer.newPagedCache(PagedCacheSpec.builder().maxSequences(4).maxSequenceLength(16).numBlocks(12).blockSize(4).dtype(dt).build());
                float[] prompt = TestData.gaussian(1, 6 * D);
                int a = cache.addSequence();
                layer.forward(cache, prompt, new int[] {a}, new int[] {6}, opt);
                int built = dev.plansBuilt();
                int b = cache.fork(a);
                float[] x = TestData.gaussian(2, 2 * D);
                // both decode in one step: a's partial block is copied on the device (cache_copy), b writes the original
                float[] y = layer.forward(cache, x, new int[] {a, b}, new int[] {1, 1}, opt);
                for (int s = 0; s < 2; s++) {
                    float[] e = PagedLayerTest.alone(REF, opt, dt, PagedLayerTest.concat(prompt, Arrays.copyOfRange(x, s * D, (s + 1) * D)), new int[] {6, 1});
                    TestData.assertClose(Arrays.copyOfRange(e, 6 * D, 7 * D), Arrays.copyOfRange(y, s * D, (s + 1) * D), TOL, dt + " sequence " + s + " after the fork");
                }
                // the prompt's plan (8 rows) is large enough: the decode step ran on it, padded, and built nothing
                assertEquals(built, dev.plansBuilt(), dt + ": a decode step after the prompt reuses its plan");
                // a continuous batch: a third sequence joins with a prompt (a mixed step), one leaves, decodes go on
                int c = cache.addSequence();
                layer.forward(cache, TestData.gaussian(3, 6 * D), new int[] {a, c}, new int[] {1, 5}, opt);
                cache.free(a);
                for (int step = 0; step < 3; step++) {
                    int[] ids = step == 2 ? new int[] {c} : new int[] {b, c};
                    layer.forward(cache, TestData.gaussian(10 + step, ids.length * D), ids, step == 2 ? new int[] {1} : new int[] {1, 1}, opt);
                }
                assertEquals(built, dev.plansBuilt(), dt + ": steps of 1 to 6 tokens, after joins, leaves and forks, run on the plan built first");
            }
        }
    }
}
