package org.tornadomla.fast;

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
import org.tornadomla.graph.GraphExecutor;
import org.tornadomla.graph.JvmExecutor;
import org.tornadomla.graph.KernelGraph;
import org.tornadomla.internal.Gaussians;
import org.tornadomla.weights.MlaWeights;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A sparse layer (DeepSeek-V3.2's indexer: 16 heads × 128, top-24 of contexts up to 108) on java-fast, whose
 * indexer and sparse attention run {@link FastIndexer} and {@link FastSparseAttention}, against the same layer on
 * the reference executor: a prefill of 100 tokens for 2 sequences, then 8 decode steps, contiguous and paged (blocks
 * of 16, a shuffled pool), every path, f32 and fp8 caches. Every row's selected positions must be equal (printed
 * on failure) and the outputs within 1e-4 relative to max(1, |y|).
 */
class FastSparseLayerTest {
    static final double TOL = 1e-4;

    static MlaConfig config() {
        return new MlaConfig(128, 8, 64, 128, 32, 32, 32, 10000, 1e-6, 4096, 1, null, false,
                new IndexerConfig(16, 128, 24, true, false));
    }

    @Test
    void javaFastSelectsThePositionsTheReferenceSelectsAndAttendsToThemAlike() {
        MlaConfig c = config();
        MlaWeights w = MlaWeights.random(c, 81);
        int D = c.hiddenSize(), B = 2, P = 100, steps = 8;
        for (boolean paged : new boolean[] {false, true}) {
            for (CacheDtype dt : new CacheDtype[] {CacheDtype.F32, CacheDtype.FP8}) {
                for (AttentionPath path : AttentionPath.values()) {
                    AttentionOptions opt = path == AttentionPath.TILED ? new AttentionOptions(path, 16, 3) : AttentionOptions.of(path);
                    String what = path + " " + dt + (paged ? " paged" : " contiguous");
                    float[][] y = new float[2][];
                    int[][] sel = new int[2][];
                    for (int fast = 0; fast < 2; fast++) {
                        try (GraphExecutor e = fast == 1 ? new FastExecutor() : new JvmExecutor(); MlaLayer layer = new MlaLayer(w, e)) {
                            LatentCache cache = paged
                                    ? layer.newPagedCache(PagedCacheSpec.builder().maxSequences(B).maxSequenceLength(224).numBlocks(28).blockSize(16).dtype(dt).build())
                                    : layer.newCache(B, 224, dt);
                            if (paged) {
                                CacheStorage.of(cache).shuffleFreeBlocks(3);
                                for (int b = 0; b < B; b++) cache.addSequence();
                            }
                            SplittableRandom rnd = new SplittableRandom(82);
                            float[] out = layer.prefill(cache, Gaussians.floats(rnd, B * P * D, 1), P, opt);
                            int[] s = selected(layer.graph(cache, P, opt));
                            for (int t = 0; t < steps; t++) {
                                out = TestData.concatRows(out, layer.decode(cache, Gaussians.floats(rnd, B * D, 1), opt));
                                s = concat(s, selected(layer.graph(cache, 1, opt)));
                            }
                            y[fast] = out;
                            sel[fast] = s;
                        }
                    }
                    assertArrayEquals(sel[0], sel[1], what + ": selected positions");
                    int chosen = 0;
                    for (int p : sel[0]) if (p >= 0) chosen++;
                    assertTrue(chosen > 0, what + ": nothing selected");
                    TestData.assertClose(y[0], y[1], TOL, what + ": y");
                }
            }
        }
    }

    static int[] selected(KernelGraph g) {
        for (KernelGraph.Buffer b : g.buffers()) if (b.name().equals("index_topk")) return ((int[]) b.array()).clone();
        throw new AssertionError("graph " + g.name() + " has no index_topk buffer");
    }

    static int[] concat(int[] a, int[] b) {
        int[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
