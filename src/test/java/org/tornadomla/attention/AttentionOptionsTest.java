package org.tornadomla.attention;

import org.junit.jupiter.api.Test;
import org.tornadomla.MlaException;
import org.tornadomla.TestData;
import org.tornadomla.attention.internal.Splits;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.graph.JvmExecutor;
import org.tornadomla.weights.MlaWeights;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class AttentionOptionsTest {
    @Test
    void autoSplitsGiveEveryWorkerAnItem() {
        AttentionOptions auto = AttentionOptions.of(AttentionPath.TILED);
        // an H200 (132 multiprocessors, parallelism 264) at batch 1: 128 heads are 16 items, 264 / 16 → 17 splits
        assertEquals(17, Splits.splitsFor(auto, 1, 128, 16384, 264, 8));
        assertEquals(64, Splits.splitsFor(auto, 1, 16, 16384, 264, 8));    // 2 items want 132: capped at AUTO_MAX_SPLITS
        assertEquals(3, Splits.splitsFor(auto, 8, 128, 16384, 264, 8));
        assertEquals(1, Splits.splitsFor(auto, 128, 128, 16384, 264, 8));
        assertEquals(2, Splits.splitsFor(auto, 1, 128, 100, 264, 8));      // 100 tokens are two tiles of 64
        assertEquals(1, Splits.splitsFor(auto, 1, 128, 4096, 1, 8));       // the sequential reference
        assertEquals(2, Splits.splitsFor(auto, 1, 128, 4096, 2, Integer.MAX_VALUE));   // java-fast on 2 cores: a task serves every head
        assertEquals(1, Splits.splitsFor(auto, 4, 128, 4096, 2, Integer.MAX_VALUE));
        assertEquals(5, Splits.splitsFor(new AttentionOptions(AttentionPath.TILED, 64, 5), 1, 128, 4096, 264, 8));
        assertThrows(MlaException.class, () -> new AttentionOptions(AttentionPath.TILED, 64, -1));
        assertThrows(MlaException.class, () -> new AttentionOptions(AttentionPath.TILED, 64, AttentionOptions.MAX_SPLITS + 1));
    }

    @Test
    void theLayerResolvesAutoSplitsForItsExecutor() {
        MlaConfig c = TestData.small();
        JvmExecutor wide = new JvmExecutor() {
            @Override
            public int parallelism() {
                return 40;
            }
        };
        MlaLayer layer = new MlaLayer(MlaWeights.random(c, 1), wide);
        LatentCache cache = layer.newCache(1, 4000, CacheDtype.F32);
        var combine = layer.graph(cache, 1, AttentionOptions.of(AttentionPath.TILED)).tasks().stream()
                .filter(t -> t.id().equals("combine")).findFirst().orElseThrow();
        // combine(oPart, lsePart, oLat, rows, heads, numSplits, dc): 4 heads are one item; 40 workers → 40 splits
        assertEquals(40, combine.args()[5]);
        LatentCache small = layer.newCache(1, 1000, CacheDtype.F32);   // 16 tiles of 64: at most 16 splits
        assertEquals(16, layer.graph(small, 1, AttentionOptions.of(AttentionPath.TILED)).tasks().stream()
                .filter(t -> t.id().equals("combine")).findFirst().orElseThrow().args()[5]);
    }
}
