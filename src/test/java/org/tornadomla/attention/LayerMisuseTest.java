package org.tornadomla.attention;

import org.tornadomla.cache.internal.CacheStorage;
import org.tornadomla.cache.PagedCacheSpec;
import org.junit.jupiter.api.Test;
import org.tornadomla.MlaException;
import org.tornadomla.TestData;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.weights.MlaWeights;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Misuse of the layer and cache API is one MlaException, or an NPE naming the null argument, at the entry point. */
class LayerMisuseTest {
    final MlaConfig c = TestData.small();

    private static String oneLine(Throwable e) {
        assertTrue(e instanceof MlaException, () -> "expected an MlaException, found " + e);
        assertEquals(1, e.getMessage().lines().count(), e.getMessage());
        return e.getMessage();
    }

    @Test
    void describeChecksItsArgumentsBeforeWritingTheMetadata() {
        LatentCache cache = LatentCache.paged(c, PagedCacheSpec.builder().maxSequences(3).maxSequenceLength(32).numBlocks(8).blockSize(4).dtype(CacheDtype.F32).build());
        int a = cache.addSequence();
        cache.write(a, TestData.gaussian(1, 5 * c.kvLoraRank()), TestData.gaussian(2, 5 * c.qkRopeHeadDim()));
        int rows = 4;
        int[] meta = new int[CacheStorage.of(cache).metaLength(rows)];
        int[] before = meta.clone();
        String[][] cases = {
                {"seq", "sequence 3 out of range"}, {"neg", "sequence -1 out of range"}, {"absent", "sequence 1 is not in the cache"},
                {"firstLen", "gives 2 first positions"}, {"countLen", "and 0 token counts"}, {"pos", "out of range: a sequence of this cache holds positions 0 … 31"},
                {"negpos", "positions -1"}, {"negcount", "token count must be >= 0"}, {"rows", "a step of 4 token rows was given 5 tokens"},
                {"meta", "step metadata holds 3 ints"}};
        for (String[] k : cases) {
            Throwable e = assertThrows(Throwable.class, () -> {
                switch (k[0]) {
                    case "seq" -> CacheStorage.of(cache).describe(meta, rows, new int[] {3}, new int[] {0}, new int[] {1}, null);
                    case "neg" -> CacheStorage.of(cache).describe(meta, rows, new int[] {-1}, new int[] {0}, new int[] {1}, null);
                    case "absent" -> CacheStorage.of(cache).describe(meta, rows, new int[] {1}, new int[] {0}, new int[] {1}, null);
                    case "firstLen" -> CacheStorage.of(cache).describe(meta, rows, new int[] {a}, new int[] {0, 1}, new int[] {1}, null);
                    case "countLen" -> CacheStorage.of(cache).describe(meta, rows, new int[] {a}, new int[] {0}, new int[0], null);
                    case "pos" -> CacheStorage.of(cache).describe(meta, rows, new int[] {a}, new int[] {31}, new int[] {2}, null);
                    case "negpos" -> CacheStorage.of(cache).describe(meta, rows, new int[] {a}, new int[] {-1}, new int[] {1}, null);
                    case "negcount" -> CacheStorage.of(cache).describe(meta, rows, new int[] {a}, new int[] {0}, new int[] {-2}, null);
                    case "rows" -> CacheStorage.of(cache).describe(meta, rows, new int[] {a}, new int[] {0}, new int[] {5}, null);
                    default -> CacheStorage.of(cache).describe(new int[3], rows, new int[] {a}, new int[] {0}, new int[] {1}, null);
                }
            });
            String m = oneLine(e);
            assertTrue(m.contains(k[1]), k[0] + ": " + m);
            assertTrue(java.util.Arrays.equals(before, meta), k[0] + ": nothing written");
        }
        for (String arg : new String[] {"meta", "seqIds", "firstPositions", "counts"}) {
            NullPointerException e = assertThrows(NullPointerException.class, () -> CacheStorage.of(cache).describe(arg.equals("meta") ? null : meta, rows,
                    arg.equals("seqIds") ? null : new int[] {a}, arg.equals("firstPositions") ? null : new int[] {0},
                    arg.equals("counts") ? null : new int[] {1}, null));
            assertEquals(arg, e.getMessage());
        }
        CacheStorage.of(cache).describe(meta, rows, new int[] {a}, new int[] {4}, new int[] {1}, null);   // a valid one still works
        assertEquals(4, meta[0]);
    }

    /** On the class path the internal package is reachable: installing the cache's bridge from outside is refused, and caches keep working. */
    @Test
    void onlyLatentCacheInstallsItsBridge() {
        IllegalCallerException e = assertThrows(IllegalCallerException.class, () -> CacheStorage.bridge(cache -> null));
        assertTrue(e.getMessage().contains(LayerMisuseTest.class.getName()), e.getMessage());
        LatentCache cache = new LatentCache(c, 1, 8, CacheDtype.F32);
        assertEquals(8, CacheStorage.of(cache).capacity());
    }

    /**
     * A finite token so large that the projections overflow float (3e38) is refused after the kernels and before the
     * commit, on both JVM backends and every path: the cache keeps its length and later steps give what they give on a
     * cache that never saw it.
     */
    @Test
    void aTokenThatOverflowsTheLatentIsRefusedAndLeavesTheCacheAlone() {
        MlaWeights weights = MlaWeights.random(c, 3);
        int d = c.hiddenSize();
        float[] history = TestData.gaussian(4, 2 * d), next = TestData.gaussian(5, d);
        float[] huge = java.util.Arrays.copyOf(history, 3 * d);
        for (int i = 0; i < d; i++) huge[2 * d + i] = i % 3 == 0 ? 3e38f : -1.5e38f;      // token 2 of 3: finite, far past any hidden state
        List<org.tornadomla.graph.GraphExecutor> executors = new ArrayList<>(List.of(new org.tornadomla.graph.JvmExecutor()));
        if (org.tornadomla.fast.FastExecutor.available()) executors.add(new org.tornadomla.fast.FastExecutor(2));
        for (org.tornadomla.graph.GraphExecutor ex : executors) {
            for (AttentionPath path : AttentionPath.values()) {
                MlaLayer layer = new MlaLayer(weights, ex);
                LatentCache cache = layer.newCache(1, 16, CacheDtype.F32);
                layer.prefill(cache, history, 2, path);
                String m = oneLine(assertThrows(MlaException.class, () -> layer.prefill(cache, java.util.Arrays.copyOfRange(huge, 2 * d, 3 * d), 1, path)));
                assertTrue(m.startsWith("the step overflowed float: the latent c_kv of token row 0 holds ") && m.endsWith("the cache is unchanged"), m);
                assertEquals(2, cache.length(0), ex.device() + " " + path);
                LatentCache clean = layer.newCache(1, 16, CacheDtype.F32);
                layer.prefill(clean, history, 2, path);
                TestData.assertClose(layer.decode(clean, next, path), layer.decode(cache, next, path), 1e-5, ex.device() + " " + path + ": the next step as if the token never came");
            }
        }
        executors.forEach(org.tornadomla.graph.GraphExecutor::close);
    }

    @Test
    void graphWithNullSequencesNamesTheArgument() {
        MlaLayer layer = new MlaLayer(MlaWeights.random(c, 1));
        LatentCache cache = layer.newPagedCache(PagedCacheSpec.builder().maxSequences(2).maxSequenceLength(16).numBlocks(8).blockSize(4).dtype(CacheDtype.F32).build());
        AttentionOptions opt = AttentionOptions.of(AttentionPath.ABSORBED);
        assertEquals("seqIds", assertThrows(NullPointerException.class, () -> layer.graph(cache, null, new int[] {1}, opt)).getMessage());
        assertEquals("queryLens", assertThrows(NullPointerException.class, () -> layer.graph(cache, new int[] {0}, null, opt)).getMessage());
    }

    /** close() from another thread while steps run: every step either completes or is refused cleanly, never a raw exception. */
    @Test
    void closeWhileAnotherThreadRunsStepsIsSafe() throws InterruptedException {
        MlaLayer layer = new MlaLayer(MlaWeights.random(c, 2));
        LatentCache cache = layer.newCache(1, 4000, CacheDtype.F32);
        float[] x = TestData.gaussian(3, c.hiddenSize());
        List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
        AtomicBoolean done = new AtomicBoolean();
        Thread closer = new Thread(() -> {
            try {
                while (!done.get()) layer.close();
            } catch (Throwable e) {
                errors.add(e);
            }
        });
        closer.start();
        AttentionPath[] paths = AttentionPath.values();
        long end = System.nanoTime() + 1_500_000_000L;
        try {
            for (int i = 0; i < 3000 && System.nanoTime() < end && errors.isEmpty(); i++) {
                layer.decode(cache, x, paths[i % paths.length]);
            }
        } catch (Throwable e) {
            errors.add(e);
        } finally {
            done.set(true);
            closer.join();
        }
        assertTrue(errors.isEmpty(), () -> "raised: " + errors);
        assertTrue(cache.length(0) > 0);
    }
    /**
     * Steps and caches whose sizes the heap (-Xmx4g in the build) cannot hold are refused before anything of that
     * size is allocated: each would otherwise end in an OutOfMemoryError (an output of about 8 GiB, block tables of 4.5 GiB).
     */
    @Test
    void sizesAreCheckedBeforeMemoryIsTaken() {
        MlaLayer layer = new MlaLayer(MlaWeights.random(c, 4));
        int d = c.hiddenSize();
        int huge = (int) ((Integer.MAX_VALUE - 8L) / d);          // tokens whose output is one Java array of ~8 GiB
        float[] x = TestData.gaussian(5, d);
        LatentCache paged = layer.newPagedCache(PagedCacheSpec.builder().maxSequences(1).maxSequenceLength(64).numBlocks(4).blockSize(16).dtype(CacheDtype.F32).build());
        int s = paged.addSequence();
        String m = oneLine(assertThrows(Throwable.class, () -> layer.forward(paged, x, new int[] {s}, new int[] {huge}, AttentionOptions.of(AttentionPath.TILED))));
        assertTrue(m.contains("input x: expected shape [" + huge + ", " + d + "]") && m.contains("found " + d + " floats"), m);
        m = oneLine(assertThrows(Throwable.class, () -> layer.graph(paged, new int[] {s}, new int[] {huge}, AttentionOptions.of(AttentionPath.TILED))));
        assertTrue(m.contains("MB free of") || m.contains("more than one Java array holds"), m);
        LatentCache one = layer.newCache(1, 64, CacheDtype.F32);
        m = oneLine(assertThrows(Throwable.class, () -> layer.prefill(one, x, huge, AttentionPath.TILED)));
        assertTrue(m.contains("input x: expected shape [1, " + huge + ", " + d + "]"), m);
        m = oneLine(assertThrows(Throwable.class, () -> layer.prefill(one, x, Integer.MAX_VALUE, AttentionPath.TILED)));
        assertTrue(m.contains("more than one Java array holds"), m);
        // 2^29 sequence slots: the block tables, lengths and flags alone are 4.5 GiB, though the pool is one block
        m = oneLine(assertThrows(Throwable.class, () -> LatentCache.paged(c, PagedCacheSpec.builder().maxSequences(1 << 29).maxSequenceLength(64).numBlocks(1).blockSize(64).dtype(CacheDtype.F32).build())));
        assertTrue(m.contains("for 536870912 sequences") && m.contains("MB free of"), m);
        m = oneLine(assertThrows(Throwable.class, () -> new LatentCache(c, 1 << 29, 1, CacheDtype.F32)));
        assertTrue(m.contains("536870912"), m);
    }
}
