package org.tornadomla.tornado;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.tornadomla.TestData;
import org.tornadomla.attention.AttentionOptions;
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

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

/**
 * Sparse attention (DeepSeek-V3.2's indexer, top-k and the sparse attention kernels) on TornadoVM's default device
 * against the same layer on the JVM reference: a prefill then decode steps, on a contiguous cache (2 sequences) and
 * on a paged one with a fork that shares a partial block, every path, with index_topk (8) below the context.
 * Outputs within 1e-4 (relative to max(1, |y|)); the cached indexer keys (e4m3 codes and scales) equal.
 * The selection is internal to the step's graph, so it is compared through the outputs: a different selection
 * moves an output by far more than the tolerance.
 */
class SparseOnDeviceTest {
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

    static MlaConfig config(int topK) {
        return new MlaConfig(64, 2, 32, 32, 16, 16, 16, 10000, 1e-6, 4096, 1, new RopeScaling(4, 256, 32, 1, 1, 1), false,
                new IndexerConfig(4, 128, topK, true, false));
    }

    static AttentionOptions options(AttentionPath path) {
        return path == AttentionPath.TILED ? new AttentionOptions(path, 4, 3) : AttentionOptions.of(path);
    }

    private static void sameIndexKeys(LatentCache a, LatentCache b, int seq, String what) {
        CacheStorage.IndexKeys ka = CacheStorage.of(a).indexKeys(seq), kb = CacheStorage.of(b).indexKeys(seq);
        assertArrayEquals(ka.codes(), kb.codes(), what + ": cached indexer key codes");
        assertArrayEquals(ka.scales(), kb.scales(), what + ": cached indexer key scales");
    }

    @Test
    void contiguousPrefillAndDecodeMatchTheJvmOnEveryPath() {
        MlaConfig c = config(8);
        MlaWeights w = MlaWeights.random(c, 31);
        int D = c.hiddenSize(), B = 2, P = 14, steps = 4;
        for (AttentionPath path : AttentionPath.values()) {
            AttentionOptions opt = options(path);
            String what = path + " contiguous";
            MlaLayer jvm = new MlaLayer(w);
            try (MlaLayer dev = new MlaLayer(w, tornado)) {
                LatentCache cj = jvm.newCache(B, 32, CacheDtype.F32), cd = dev.newCache(B, 32, CacheDtype.F32);
                SplittableRandom rnd = new SplittableRandom(32);
                float[] x = Gaussians.floats(rnd, B * P * D, 1);
                TestData.assertClose(jvm.prefill(cj, x, P, opt), dev.prefill(cd, x, P, opt), TOL, what + " prefill");
                for (int s = 0; s < steps; s++) {
                    float[] xd = Gaussians.floats(rnd, B * D, 1);
                    TestData.assertClose(jvm.decode(cj, xd, opt), dev.decode(cd, xd, opt), TOL, what + " decode " + s);
                }
                for (int b = 0; b < B; b++) {
                    TestData.assertClose(cj.latent(b), cd.latent(b), TOL, what + " cached latent");
                    sameIndexKeys(cj, cd, b, what + " sequence " + b);
                }
            }
        }
    }

    @Test
    void pagedPrefillForkAndDecodeMatchTheJvmOnEveryPath() {
        MlaConfig c = config(8);
        MlaWeights w = MlaWeights.random(c, 41);
        int D = c.hiddenSize(), P = 10, steps = 4;                   // 10 tokens in blocks of 4: the fork shares a partial block
        for (AttentionPath path : AttentionPath.values()) {
            AttentionOptions opt = options(path);
            String what = path + " paged";
            MlaLayer jvm = new MlaLayer(w);
            try (MlaLayer dev = new MlaLayer(w, tornado)) {
                PagedCacheSpec spec = PagedCacheSpec.builder().maxSequences(3).maxSequenceLength(32).numBlocks(24).blockSize(4).dtype(CacheDtype.F32).build();
                LatentCache cj = jvm.newPagedCache(spec), cd = dev.newPagedCache(spec);
                CacheStorage.of(cj).shuffleFreeBlocks(5);
                CacheStorage.of(cd).shuffleFreeBlocks(5);
                int s0 = cj.addSequence();
                cd.addSequence();
                SplittableRandom rnd = new SplittableRandom(42);
                float[] x = Gaussians.floats(rnd, P * D, 1);
                TestData.assertClose(jvm.forward(cj, x, new int[] {s0}, new int[] {P}, opt), dev.forward(cd, x, new int[] {s0}, new int[] {P}, opt),
                        TOL, what + " prefill");
                int s1 = cj.fork(s0);
                cd.fork(s0);
                for (int s = 0; s < steps; s++) {
                    float[] xd = Gaussians.floats(rnd, 2 * D, 1);
                    int[] ids = s % 2 == 0 ? new int[] {s0, s1} : new int[] {s1, s0};       // either order
                    TestData.assertClose(jvm.forward(cj, xd, ids, new int[] {1, 1}, opt), dev.forward(cd, xd, ids, new int[] {1, 1}, opt),
                            TOL, what + " decode " + s);
                }
                for (int b : new int[] {s0, s1}) {
                    TestData.assertClose(cj.latent(b), cd.latent(b), TOL, what + " cached latent");
                    sameIndexKeys(cj, cd, b, what + " sequence " + b);
                }
            }
        }
    }
}
