package org.tornadomla.attention;

import org.tornadomla.cache.internal.CacheStorage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.tornadomla.MlaException;
import org.tornadomla.ReferenceMla;
import org.tornadomla.TestData;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.fast.FastExecutor;
import org.tornadomla.graph.GraphExecutor;
import org.tornadomla.graph.JvmExecutor;
import org.tornadomla.kernels.Bf16;
import org.tornadomla.kernels.Norms;
import org.tornadomla.weights.MlaWeights;
import org.tornadomla.weights.SafeTensorsFile;
import org.tornadomla.weights.SafeTensorsWriter;
import org.tornadomla.weights.TensorSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The public API checks its arguments before any work; the layer is right at the edges of float. */
class BoundaryTest {
    final MlaConfig c = TestData.small();
    final MlaWeights w = MlaWeights.random(c, 5);

    private static void npe(String parameter, Executable call) {
        assertEquals(parameter, assertThrows(NullPointerException.class, call).getMessage());
    }

    @Test
    void nullArgumentsAreNamed() {
        MlaLayer layer = new MlaLayer(w);
        LatentCache cache = layer.newCache(1, 4, CacheDtype.F32);
        float[] x = new float[c.hiddenSize()];
        AttentionOptions opt = AttentionOptions.of(AttentionPath.TILED);
        npe("weights", () -> new MlaLayer(null));
        npe("executor", () -> new MlaLayer(w, null));
        npe("cache", () -> layer.forward(null, x, 1, opt));
        npe("x", () -> layer.forward(cache, null, 1, opt));
        npe("opt", () -> layer.forward(cache, x, 1, (AttentionOptions) null));
        npe("y", () -> layer.forward(cache, x, 1, opt, null));
        npe("path", () -> layer.decode(cache, x, (AttentionPath) null));
        npe("dtype", () -> layer.newCache(1, 4, null));
        npe("path", () -> new AttentionOptions(null, 4, 4));
        npe("config", () -> new LatentCache(null, 1, 4, CacheDtype.F32));
        npe("latent", () -> cache.write(0, null, new float[0]));
        npe("json", () -> MlaConfig.fromJson(null));
        npe("path", () -> SafeTensorsFile.open(null));
        npe("path", () -> TensorSource.open(null));
        npe("path", () -> MlaWeights.load((Path) null, c, 0));
        npe("name", () -> new SafeTensorsWriter().add(null, new long[] {1}, new float[1]));
        assertEquals(0, cache.length(0));
    }

    @Test
    void wrongSizesAndIndicesAreRefusedBeforeAnyWork() {
        MlaLayer layer = new MlaLayer(w);
        LatentCache cache = layer.newCache(2, 4, CacheDtype.F32);
        AttentionOptions opt = AttentionOptions.of(AttentionPath.ABSORBED);
        for (int tokens : new int[] {0, -1, Integer.MIN_VALUE, 5, Integer.MAX_VALUE}) {
            assertThrows(MlaException.class, () -> layer.forward(cache, new float[2 * c.hiddenSize()], tokens, opt), "tokens " + tokens);
        }
        assertThrows(MlaException.class, () -> layer.forward(cache, new float[3], 1, opt));
        assertThrows(MlaException.class, () -> layer.forward(cache, new float[2 * c.hiddenSize()], 1, opt, new float[1]));
        assertEquals("sequence 2 out of range: the cache holds sequences 0 … 1", assertThrows(MlaException.class, () -> cache.length(2)).getMessage());
        assertThrows(MlaException.class, () -> cache.write(-1, new float[0], new float[0]));
        assertThrows(MlaException.class, () -> CacheStorage.of(cache).advance(-3));
        assertThrows(MlaException.class, () -> CacheStorage.of(cache).checkRoom(-1));
        float[] nan = new float[c.kvLoraRank()];
        nan[3] = Float.NaN;
        assertTrue(assertThrows(MlaException.class, () -> cache.write(0, nan, new float[c.qkRopeHeadDim()])).getMessage().contains("latent [0, 3] is NaN"));
        assertThrows(MlaException.class, () -> new AttentionOptions(AttentionPath.TILED, 64, 99_999_999));
        assertThrows(MlaException.class, () -> new AttentionOptions(AttentionPath.TILED, 0, 4));
        assertThrows(MlaException.class, () -> new LatentCache(c, 1 << 20, 1 << 20, CacheDtype.F32));
        assertEquals(0, cache.length(0));
        assertEquals(0, cache.length(1));
        // a step past max_position_embeddings
        MlaConfig shortCtx = new MlaConfig(64, 4, 32, 32, 16, 8, 12, 10000, 1e-6, 3, 2, null);
        MlaLayer small = new MlaLayer(MlaWeights.random(shortCtx, 1));
        // a layer makes no cache longer than its positions reach; one made directly is refused at the step
        assertEquals("capacity 8 is past max_position_embeddings 3: no step can reach a position past 2, so the rest of the cache would never be used",
                assertThrows(MlaException.class, () -> small.newCache(1, 8, CacheDtype.F32)).getMessage());
        assertTrue(assertThrows(MlaException.class, () -> small.newPagedCache(org.tornadomla.cache.PagedCacheSpec.builder().maxSequences(1)
                .maxSequenceLength(8).numBlocks(4).blockSize(2).dtype(CacheDtype.F32).build())).getMessage().startsWith("maxSequenceLength 8 is past"));
        LatentCache big = new LatentCache(shortCtx, 1, 8, CacheDtype.F32);
        assertTrue(assertThrows(MlaException.class, () -> small.prefill(big, new float[4 * 64], 4, AttentionPath.NAIVE)).getMessage()
                .contains("past max_position_embeddings 3"));
    }

    @Test
    void thePowerOfTwoTableCannotBeChangedFromOutside() {
        float[] t = Bf16.pow2();
        float before = Bf16.decode(0x3F80, t);        // 1.0
        java.util.Arrays.fill(t, 0f);
        assertEquals(1f, Bf16.decode(0x3F80, Bf16.pow2()));
        assertEquals(1f, before);
    }

    @Test
    void rmsNormOfRowsNearTheTopOfTheFloatRange() {
        int dim = 8;
        float[] g = TestData.gaussian(1, dim), base = TestData.gaussian(2, dim);
        for (double scale : new double[] {1e30, 1e38 / 4, 1e-30, 1}) {
            float[] x = new float[dim], out = new float[dim];
            for (int i = 0; i < dim; i++) x[i] = (float) (base[i] * scale);
            Norms.rmsNorm(x, dim, g, out, 1, dim, 1e-6f);
            double ss = 0;
            for (float v : x) ss += (double) v * v;
            double[] e = new double[dim];
            for (int i = 0; i < dim; i++) e[i] = g[i] * x[i] / Math.sqrt(ss / dim + 1e-6);
            TestData.assertClose(e, out, 1e-5, "rmsNorm of a row ×" + scale);
        }
    }

    /** Inputs ×1e30 (RMSNorm must not overflow to zeros) and ×1e-30 on every path and both JVM backends, against float64. */
    @Test
    void hugeAndTinyInputsGiveWhatFloat64Gives() {
        int T = 6;
        for (double scale : new double[] {1e30, 1e-30}) {
            float[] x = TestData.gaussian(3, T * c.hiddenSize());
            for (int i = 0; i < x.length; i++) x[i] = (float) (x[i] * scale);
            double[] ref = ReferenceMla.prefill(w, x, T, false).y();
            for (GraphExecutor ex : new GraphExecutor[] {new JvmExecutor(), new FastExecutor()}) {
                MlaLayer layer = new MlaLayer(w, ex);
                for (AttentionPath p : AttentionPath.values()) {
                    float[] y = layer.prefill(layer.newCache(1, T, CacheDtype.F32), x, T, p);
                    TestData.assertClose(ref, y, 1e-4, "inputs ×" + scale + " " + p + " on " + ex.device());
                }
            }
        }
    }

    /** One FastExecutor, many threads each running its own layer: same results as one thread, no exception. */
    @Test
    void aFastExecutorCanBeSharedBetweenThreads() throws Exception {
        float[] x = TestData.gaussian(4, 3 * c.hiddenSize());
        float[] expected = new MlaLayer(w).prefill(new MlaLayer(w).newCache(1, 3, CacheDtype.BF16), x, 3, AttentionPath.TILED);
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            for (int round = 0; round < 5; round++) {
                FastExecutor shared = new FastExecutor();         // an empty kernel cache each round: the threads race to fill it
                List<Future<float[]>> results = new ArrayList<>();
                for (int t = 0; t < 8; t++) {
                    AttentionPath p = AttentionPath.values()[t % 3];
                    results.add(pool.submit(() -> {
                        MlaLayer layer = new MlaLayer(w, shared);
                        return layer.prefill(layer.newCache(1, 3, CacheDtype.BF16), x, 3, p);
                    }));
                }
                for (Future<float[]> f : results) TestData.assertClose(expected, f.get(), 1e-5, "round " + round);
            }
        } finally {
            pool.shutdownNow();
        }
    }

}
