package org.tornadomla.attention;

import org.junit.jupiter.api.Test;
import org.tornadomla.TestData;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.cache.PagedCacheSpec;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.graph.JvmExecutor;
import org.tornadomla.weights.MlaWeights;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * One paged cache shared by two layers (one per executor, as a server with a replica per device might run them),
 * each stepping its own sequence from its own thread while a third thread adds and frees sequences in the same
 * pool: every step gives what the same tokens give alone. Before a step held its cache's lock, both layers' steps
 * took the same free blocks, one thread was refused and the other's outputs were off by 1.4 to 3.5 relative.
 */
class SharedCacheThreadsTest {
    final MlaConfig c = TestData.small();
    static final int PREFILL = 6, DECODES = 12;

    private PagedCacheSpec spec() {
        return PagedCacheSpec.builder().maxSequences(4).maxSequenceLength(32).numBlocks(40).blockSize(4).dtype(CacheDtype.F32).build();
    }

    /** The outputs of one sequence's prefill and decode steps, in order. */
    private List<float[]> steps(MlaLayer layer, LatentCache cache, int seq, long seed) {
        List<float[]> out = new ArrayList<>();
        out.add(layer.forward(cache, TestData.gaussian(seed, PREFILL * c.hiddenSize()), new int[] {seq}, new int[] {PREFILL}, AttentionPath.ABSORBED));
        for (int t = 0; t < DECODES; t++) {
            out.add(layer.forward(cache, TestData.gaussian(seed + 1 + t, c.hiddenSize()), new int[] {seq}, new int[] {1}, AttentionPath.ABSORBED));
        }
        return out;
    }

    @Test
    void twoLayersSteppingOneCacheFromTwoThreadsGetWhatEachGetsAlone() throws Exception {
        MlaWeights w = MlaWeights.random(c, 12);
        MlaLayer alone = new MlaLayer(w);
        List<List<float[]>> expected = new ArrayList<>();
        for (long seed : new long[] {100, 200}) {
            LatentCache own = alone.newPagedCache(spec());
            expected.add(steps(alone, own, own.addSequence(), seed));
        }
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            for (int round = 0; round < 5; round++) {
                MlaLayer a = new MlaLayer(w, new JvmExecutor()), b = new MlaLayer(w, new JvmExecutor());
                LatentCache shared = a.newPagedCache(spec());
                int sa = shared.addSequence(), sb = shared.addSequence();
                CountDownLatch go = new CountDownLatch(1);
                AtomicBoolean done = new AtomicBoolean();
                Future<List<float[]>> fa = pool.submit(() -> { go.await(); return steps(a, shared, sa, 100); });
                Future<List<float[]>> fb = pool.submit(() -> { go.await(); return steps(b, shared, sb, 200); });
                Future<Integer> churn = pool.submit(() -> {       // other sequences join and leave the pool meanwhile
                    go.await();
                    int n = 0;
                    while (!done.get()) {
                        int s = shared.addSequence();
                        shared.write(s, TestData.gaussian(n, 3 * c.kvLoraRank()), TestData.gaussian(n + 1, 3 * c.qkRopeHeadDim()));
                        shared.free(s);
                        n++;
                    }
                    return n;
                });
                go.countDown();
                List<float[]> ya = fa.get(60, TimeUnit.SECONDS), yb = fb.get(60, TimeUnit.SECONDS);
                done.set(true);
                churn.get(60, TimeUnit.SECONDS);
                for (int t = 0; t < ya.size(); t++) {
                    assertArrayEquals(expected.get(0).get(t), ya.get(t), 1e-5f, "round " + round + ", layer a, step " + t);
                    assertArrayEquals(expected.get(1).get(t), yb.get(t), 1e-5f, "round " + round + ", layer b, step " + t);
                }
                assertEquals(PREFILL + DECODES, shared.length(sa));
                assertEquals(PREFILL + DECODES, shared.length(sb));
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
