package org.tornadomla.tornado;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.tornadomla.MlaException;
import org.tornadomla.TestData;
import org.tornadomla.attention.AttentionOptions;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.attention.MlaLayer;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.weights.MlaWeights;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every graph of the layer on TornadoVM's default device against the same graph on the JVM: prefill, then
 * decode steps that change the context length between executions of one compiled plan, for each config,
 * path and cache dtype. Relative error ≤ 1e-4 (fast-math and fused multiply-adds on the device).
 */
class TornadoLayerTest {
    static final double TOL = 1e-4;
    static TornadoExecutor tornado;

    @BeforeAll
    static void device() {
        tornado = new TornadoExecutor(null, null);
    }

    @AfterAll
    static void release() {
        tornado.close();
    }

    private static void compare(MlaConfig c, AttentionOptions opt, CacheDtype dtype, int batch, int T, int k) {
        compare(tornado, c, opt, dtype, batch, T, k);
    }

    /** Runs prefill T, then k decode steps, on both executors; compares every output and the final cache. */
    private static void compare(TornadoExecutor executor, MlaConfig c, AttentionOptions opt, CacheDtype dtype, int batch, int T, int k) {
        compare(executor, MlaWeights.random(c, 42), opt, dtype, batch, T, k);
    }

    private static void compare(TornadoExecutor executor, MlaWeights w, AttentionOptions opt, CacheDtype dtype, int batch, int T, int k) {
        MlaConfig c = w.config();
        MlaLayer jvm = new MlaLayer(w);
        try (MlaLayer dev = new MlaLayer(w, executor)) {
            LatentCache cj = jvm.newCache(batch, T + k + 2, dtype), cd = dev.newCache(batch, T + k + 2, dtype);
            int d = c.hiddenSize();
            String what = opt + " " + dtype + " weights " + w.dtype() + " q_lora=" + c.qLoraRank() + " yarn=" + (c.ropeScaling() != null);
            float[] x = TestData.gaussian(7, batch * T * d);
            TestData.assertClose(jvm.forward(cj, x, T, opt), dev.forward(cd, x, T, opt), TOL, what + " prefill");
            for (int s = 0; s < k; s++) {
                float[] xs = TestData.gaussian(100 + s, batch * d);
                TestData.assertClose(jvm.forward(cj, xs, 1, opt), dev.forward(cd, xs, 1, opt), TOL, what + " decode " + s);
            }
            for (int b = 0; b < batch; b++) {
                TestData.assertClose(cj.latent(b), cd.latent(b), TOL, what + " cached latent");
                TestData.assertClose(cj.ropeKey(b), cd.ropeKey(b), TOL, what + " cached k_pe");
            }
        }
    }

    /**
     * A sparse config (DeepSeek-V3.2's indexer, top-k 4 below the context) runs on the device like a dense one, also
     * with the dense option; {@link SparseOnDeviceTest} covers every path, paged caches and forks.
     */
    @Test
    void aSparseConfigRunsOnTheDeviceAndMatchesTheJvm() {
        MlaConfig c = new MlaConfig(64, 2, 32, 32, 16, 16, 16, 10000, 1e-6, 4096, 1, null, false,
                new org.tornadomla.config.IndexerConfig(4, 128, 4, true, false));
        compare(c, AttentionOptions.of(AttentionPath.ABSORBED), CacheDtype.F32, 1, 6, 3);
        compare(c, AttentionOptions.of(AttentionPath.TILED).withDense(true), CacheDtype.F32, 1, 6, 2);
    }

    @Test
    void everyPathAndCacheDtypeMatchesTheJvm() {
        for (AttentionPath p : AttentionPath.values()) {
            for (CacheDtype dt : CacheDtype.values()) {
                compare(TestData.small(), new AttentionOptions(p, 2, 3), dt, 2, 5, 3);
            }
        }
    }

    @Test
    void plainQProjAndYarnConfigs() {
        compare(TestData.noQLora(), AttentionOptions.of(AttentionPath.TILED), CacheDtype.F32, 1, 4, 3);
        compare(TestData.yarn(), AttentionOptions.of(AttentionPath.ABSORBED), CacheDtype.BF16, 2, 6, 3);
        compare(TestData.yarn(), new AttentionOptions(AttentionPath.TILED, 3, 2), CacheDtype.F32, 1, 9, 4);
    }

    /**
     * FP8 weights (DeepSeek-V3's block-scaled e4m3, partial blocks) and bf16 weights on the device, every path:
     * the projections and absorptions decode them in the kernels (KernelContext versions for the projections
     * and unabsorb, plain ones for absorb_q and the naive path's dequantisation).
     */
    @Test
    void fp8AndBf16WeightsOnEveryPath() {
        MlaWeights fp8 = org.tornadomla.Fp8Checkpoints.random(org.tornadomla.Fp8Checkpoints.config(), 3).weights();
        for (AttentionPath p : AttentionPath.values()) {
            compare(tornado, fp8, new AttentionOptions(p, 2, 3), CacheDtype.F32, 2, 4, 2);
            compare(tornado, fp8.to(org.tornadomla.weights.WeightDtype.BF16), new AttentionOptions(p, 2, 3), CacheDtype.BF16, 1, 3, 2);
        }
        try (TornadoExecutor plain = new TornadoExecutor(null, null, false)) {
            compare(plain, fp8, AttentionOptions.of(AttentionPath.ABSORBED), CacheDtype.F32, 1, 3, 2);
        }
    }

    @Test
    void tiledPathWithThePlainKernelOnTheDevice() {
        try (TornadoExecutor plain = new TornadoExecutor(null, null, false)) {
            compare(plain, TestData.small(), new AttentionOptions(AttentionPath.TILED, 2, 3), CacheDtype.F32, 2, 5, 3);
            compare(plain, TestData.yarn(), AttentionOptions.of(AttentionPath.TILED), CacheDtype.BF16, 1, 4, 2);
        }
    }

    @Test
    void chunkedPrefillInterleavedWithDecodeKeepsTheDeviceCacheCurrent() {
        MlaConfig c = TestData.small();
        MlaWeights w = MlaWeights.random(c, 5);
        MlaLayer jvm = new MlaLayer(w);
        AttentionOptions opt = AttentionOptions.of(AttentionPath.ABSORBED);
        try (MlaLayer dev = new MlaLayer(w, tornado)) {
            LatentCache cj = jvm.newCache(1, 16, CacheDtype.F32), cd = dev.newCache(1, 16, CacheDtype.F32);
            int d = c.hiddenSize();
            // prefill 3, decode, prefill 3 (the prefill plan ran before: its device cache is stale), decode
            int[] chunks = {3, 1, 3, 1, 1};
            for (int i = 0; i < chunks.length; i++) {
                float[] x = TestData.gaussian(i, chunks[i] * d);
                TestData.assertClose(jvm.forward(cj, x, chunks[i], opt), dev.forward(cd, x, chunks[i], opt), TOL, "chunk " + i);
            }
            assertEquals(9, cd.length(0));
            TestData.assertClose(cj.latent(0), cd.latent(0), TOL, "cache after interleaving");
        }
    }

    @Test
    void unknownDeviceIsOneClearError() {
        String m = assertThrows(MlaException.class, () -> new TornadoExecutor("7:3", null)).getMessage();
        assertTrue(m.startsWith("unknown TornadoVM device 7:3 (available: 0:0"), m);
        assertTrue(assertThrows(MlaException.class, () -> new TornadoExecutor("gpu", null)).getMessage().contains("backend:device"));
        assertTrue(tornado.device().startsWith("tornado 0:0 "), tornado.device());
    }

    /** A closed TornadoVM executor refuses to run, as a closed java-fast one does (it used to run on, rebuilding its plans). */
    @Test
    void aClosedExecutorRefusesToRun() {
        MlaWeights w = MlaWeights.random(TestData.small(), 3);
        TornadoExecutor ex = new TornadoExecutor(null, null);
        MlaLayer layer = new MlaLayer(w, ex);
        LatentCache cache = layer.newCache(1, 8, CacheDtype.F32);
        layer.prefill(cache, TestData.gaussian(4, 2 * w.config().hiddenSize()), 2, AttentionPath.TILED);
        ex.close();
        MlaException e = assertThrows(MlaException.class, () -> layer.decode(cache, TestData.gaussian(5, w.config().hiddenSize()), AttentionPath.TILED));
        assertTrue(e.getMessage().contains("is closed; make a new one (Backends.create(\"tornado:0:0\"))"), e.getMessage());
        assertEquals(2, cache.length(0), "the refused step left the cache as it was");
    }

    /** TornadoVM's terminal colours and line breaks do not reach a message. */
    @Test
    void tornadoMessagesArePlainText() {
        assertEquals("Unable to allocate 1572880 bytes of memory. To increase the maximum device memory, use -Dtornado.device.memory=<X>GB",
                TornadoExecutor.plain("Unable to allocate 1572880 bytes of memory.\u001B[33m\n\tTo increase the maximum device memory, use "
                        + "-Dtornado.device.memory=<X>GB\n\u001B[0m"));
    }
}
