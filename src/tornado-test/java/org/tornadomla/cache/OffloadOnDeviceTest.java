package org.tornadomla.cache;

import org.junit.jupiter.api.Test;
import org.tornadomla.attention.AttentionOptions;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.attention.MlaLayer;
import org.tornadomla.tornado.TornadoExecutor;
import org.tornadomla.weights.MlaWeights;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The host tier with the cache on a TornadoVM device: {@link OffloadTest}'s schedule (forks, shared blocks, an
 * offload of two sequences, steps on the others, restores) run with and without the offloads on one device must
 * give the same outputs bit for bit. An offload and a restore pull the cache to the host and the next step
 * uploads it again (docs/paged-cache.md, "Host tier").
 */
class OffloadOnDeviceTest {
    @Test
    void outputsOnTheDeviceAsIfNeverOffloaded() {
        MlaWeights w = MlaWeights.random(OffloadTest.DENSE, 11);
        for (CacheDtype dtype : new CacheDtype[] {CacheDtype.F32, CacheDtype.FP8}) {
            for (AttentionPath path : new AttentionPath[] {AttentionPath.ABSORBED, AttentionPath.TILED}) {
                AttentionOptions opt = path == AttentionPath.TILED ? new AttentionOptions(path, 4, 3) : AttentionOptions.of(path);
                try (TornadoExecutor dev = new TornadoExecutor(null, null); MlaLayer layer = new MlaLayer(w, dev)) {
                    OffloadTest.Run never = new OffloadTest.Run(layer, OffloadTest.paged(layer, dtype, 40), opt);
                    OffloadTest.Run moved = new OffloadTest.Run(layer, OffloadTest.paged(layer, dtype, 40), opt);
                    OffloadTest.schedule(never, false);
                    OffloadTest.schedule(moved, true);
                    assertEquals(never.ys.size(), moved.ys.size());
                    for (int i = 0; i < never.ys.size(); i++) {
                        assertArrayEquals(never.ys.get(i), moved.ys.get(i), dtype + " " + path + ": step " + i + " on the device differs from the cache that never offloaded");
                    }
                }
            }
        }
    }
}
