package org.tornadomla.attention;

import org.junit.jupiter.api.Test;
import org.tornadomla.TestData;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.graph.GraphExecutor;
import org.tornadomla.graph.JvmExecutor;
import org.tornadomla.graph.KernelGraph;
import org.tornadomla.weights.MlaWeights;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A layer keeps the graphs it built for a cache (each holds the cache's arrays) but never the cache itself: a server
 * that makes a cache per request and drops it must not find the layer holding the last eight caches' storage.
 */
class GraphLifetimeTest {
    final MlaConfig c = TestData.small();

    /** Collects until every reference is cleared, or gives up after about five seconds. */
    private static boolean collected(List<WeakReference<LatentCache>> refs) throws InterruptedException {
        for (int i = 0; i < 100; i++) {
            System.gc();
            if (refs.stream().allMatch(r -> r.get() == null)) return true;
            Thread.sleep(50);
        }
        return false;
    }

    private List<WeakReference<LatentCache>> stepAndDrop(MlaLayer layer, int caches) {
        List<WeakReference<LatentCache>> refs = new ArrayList<>();
        for (int i = 0; i < caches; i++) {
            LatentCache cache = layer.newCache(1, 16, CacheDtype.F32);
            layer.prefill(cache, TestData.gaussian(10 + i, 3 * c.hiddenSize()), 3, AttentionPath.ABSORBED);
            refs.add(new WeakReference<>(cache));
        }
        return refs;
    }

    @Test
    void cachesTheProgramDropsAreCollectedWhileTheLayerLives() throws InterruptedException {
        MlaLayer layer = new MlaLayer(MlaWeights.random(c, 5));
        List<WeakReference<LatentCache>> refs = stepAndDrop(layer, 4);    // fewer than the eight graphs a layer keeps
        assertTrue(collected(refs), "a layer kept caches the program had dropped");
        // and the layer goes on: a new cache gives what a new layer gives
        LatentCache mine = layer.newCache(1, 16, CacheDtype.F32);
        float[] x = TestData.gaussian(99, 2 * c.hiddenSize());
        float[] y = layer.prefill(mine, x, 2, AttentionPath.ABSORBED);
        MlaLayer fresh = new MlaLayer(MlaWeights.random(c, 5));
        assertArrayEquals(fresh.prefill(fresh.newCache(1, 16, CacheDtype.F32), x, 2, AttentionPath.ABSORBED), y, 0f);
    }

    @Test
    void aCacheStillHeldKeepsWorkingAcrossCollections() throws InterruptedException {
        MlaLayer layer = new MlaLayer(MlaWeights.random(c, 6));
        LatentCache cache = layer.newCache(1, 16, CacheDtype.F32);
        layer.prefill(cache, TestData.gaussian(1, 3 * c.hiddenSize()), 3, AttentionPath.ABSORBED);
        assertTrue(collected(stepAndDrop(layer, 2)));
        assertEquals(3, cache.length(0), "the held cache is intact");
        float[] y = layer.decode(cache, TestData.gaussian(2, c.hiddenSize()), AttentionPath.ABSORBED);
        LatentCache again = layer.newCache(1, 16, CacheDtype.F32);
        layer.prefill(again, TestData.gaussian(1, 3 * c.hiddenSize()), 3, AttentionPath.ABSORBED);
        assertArrayEquals(layer.decode(again, TestData.gaussian(2, c.hiddenSize()), AttentionPath.ABSORBED), y, 0f);
    }

    /** An executor that holds graphs itself (as TornadoVM's plans do) is told to release a collected cache's graphs. */
    @Test
    void anExecutorThatHoldsGraphsReleasesThoseOfACollectedCache() throws InterruptedException {
        List<KernelGraph> released = new ArrayList<>();
        JvmExecutor jvm = new JvmExecutor();
        GraphExecutor holding = new GraphExecutor() {
            @Override public void execute(KernelGraph graph) { jvm.execute(graph); }
            @Override public String device() { return "a test executor that holds its graphs"; }
            @Override public void release(KernelGraph graph) { released.add(graph); }
        };
        MlaLayer layer = new MlaLayer(MlaWeights.random(c, 7), holding);
        List<WeakReference<LatentCache>> refs = stepAndDrop(layer, 3);
        assertTrue(collected(refs), "the layer's graphs held their cache alive");
        assertEquals(0, released.size(), "nothing is released before the layer's next call");
        layer.prefill(layer.newCache(1, 16, CacheDtype.F32), TestData.gaussian(3, c.hiddenSize()), 1, AttentionPath.ABSORBED);
        assertEquals(3, released.size(), "the three dropped caches' graphs are released at the next call");
        layer.close();
        assertEquals(4, released.size(), "close releases the graph still held");
    }
}
