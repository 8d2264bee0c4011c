package org.tornadomla;

import org.junit.jupiter.api.Test;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.attention.MlaLayer;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.graph.JvmExecutor;
import org.tornadomla.weights.MlaWeights;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link LatentCache#indexerKey}: after a prefill, each token's key is the double-precision indexer's of {@link
 * IndexerPrefillTest} (its own products, norm, RoPE, Hadamard matrix and e4m3 grid), code × scale, in position order.
 */
class IndexerKeyTest {
    @Test
    void theCachedIndexerKeysAreTheReferenceIndexersCodesTimesTheirScales() {
        MlaConfig c = IndexerPrefillTest.config(false, true);
        MlaWeights w = MlaWeights.random(c, 11);
        int tokens = IndexerPrefillTest.T, d = c.indexer().headDim();
        float[] x = IndexerPrefillTest.input(12, c.hiddenSize());
        IndexerPrefillTest.Ref ref = IndexerPrefillTest.reference(w, x);
        try (MlaLayer layer = new MlaLayer(w, new JvmExecutor())) {
            // two sequences, x in the second: the keys asked for are b's rows, not the first sequence's
            LatentCache cache = layer.newCache(2, 64, CacheDtype.F32);
            float[] other = IndexerPrefillTest.input(13, c.hiddenSize()), both = new float[2 * x.length];
            System.arraycopy(other, 0, both, 0, x.length);
            System.arraycopy(x, 0, both, x.length, x.length);
            layer.prefill(cache, both, tokens, AttentionPath.ABSORBED);
            float[] got = cache.indexerKey(1);
            assertEquals(tokens * d, got.length);
            int steps = 0;
            for (int i = 0; i < got.length; i++) {
                double expected = IndexerPrefillTest.value(ref.kCodes()[i]) * ref.kScales()[i / 128];
                double scale = ref.kScales()[i / 128];
                if (Math.abs(got[i] - expected) <= 1e-6 * Math.abs(expected) + 1e-12) continue;
                // float and double may round a value on either side of a code boundary: one e4m3 step (at most 1/8 of it) apart
                steps++;
                assertTrue(Math.abs(got[i] - expected) <= Math.abs(expected) / 8 + 2 * 0x1p-9 * scale,
                        "key " + i / d + ", dim " + i % d + ": " + got[i] + ", expected " + expected);
            }
            assertTrue(steps <= got.length / 500, steps + " of " + got.length + " key numbers a code step off");
        }
    }

    @Test
    void aDenseCacheHasNoIndexerKeys() {
        try (MlaLayer layer = new MlaLayer(MlaWeights.random(TestData.small(), 1), new JvmExecutor())) {
            LatentCache cache = layer.newCache(1, 16, CacheDtype.F32);
            MlaException e = assertThrows(MlaException.class, () -> cache.indexerKey(0));
            assertTrue(e.getMessage().contains("no indexer keys"), e.getMessage());
        }
    }
}
