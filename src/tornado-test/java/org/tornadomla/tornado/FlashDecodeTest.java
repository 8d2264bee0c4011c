package org.tornadomla.tornado;

import org.junit.jupiter.api.Test;
import org.tornadomla.TestData;
import org.tornadomla.graph.JvmExecutor;
import org.tornadomla.graph.KernelGraph;
import org.tornadomla.kernels.Bf16;
import org.tornadomla.kernels.CacheOps;
import org.tornadomla.kernels.CacheRows;
import org.tornadomla.kernels.OnlineSoftmax;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The KernelContext decode kernel against the plain-Java split_tiles it replaces: the same attention-core
 * graph (split_tiles + combine) on the JVM and on the device, with DeepSeek-V3's latent geometry (d_c 512,
 * d_r 64), 16 heads, two sequences of different lengths, several executions of one plan with growing
 * contexts, f32, bf16, int8 and fp8 caches.
 */
class FlashDecodeTest {
    static final int B = 2, T = 1, CAP = 300, H = 16, DN = 128, DR = 64, DC = 512, W = DC + DR, SPLITS = 4, BC = 16;

    @Test
    void matchesThePlainKernelOverChangingContexts() {
        for (int dtype : new int[] {CacheOps.F32, CacheOps.BF16, CacheOps.INT8, CacheOps.FP8}) {
            float[] kv = TestData.gaussian(1, B * CAP * W);
            float[] kv32 = dtype == CacheOps.F32 ? kv : dtype == CacheOps.BF16 ? Bf16.pow2()
                    : dtype == CacheOps.INT8 ? new float[2 * B * CAP] : java.util.Arrays.copyOf(Bf16.pow2(), CacheOps.TABLE + B * CAP * (DC / 128));
            short[] kv16 = new short[dtype == CacheOps.BF16 ? kv.length : dtype == CacheOps.FP8 ? B * CAP * DR : 1];
            byte[] kv8 = new byte[dtype == CacheOps.INT8 ? kv.length : dtype == CacheOps.FP8 ? B * CAP * DC : 1];
            if (dtype != CacheOps.F32) {
                for (int slot = 0; slot < B * CAP; slot++) {
                    CacheRows.writeRow(kv, slot * W, kv, slot * W + DC, kv32, kv16, kv8, dtype, slot, DC, DR);
                }
            }
            KernelGraph g = new KernelGraph("attn");
            float[] qLat = g.input("q_lat", TestData.gaussian(2, B * T * H * DC));
            float[] q = g.input("q", TestData.gaussian(3, B * T * H * (DN + DR)));
            int[] seqStart = g.input("seqStart", new int[B]);
            g.weight("kv32", kv32);
            g.weight("kv16", kv16);
            g.weight("kv8", kv8);
            float[] sTile = g.scratch("s_tile", new float[B * T * H * SPLITS * BC]);
            float[] oPart = g.scratch("o_split", new float[B * T * H * SPLITS * DC]);
            float[] ml = g.scratch("ml", new float[2 * B * T * H * SPLITS]);
            float[] oLat = g.output("o_lat", new float[B * T * H * DC]);
            g.task("split_tiles", OnlineSoftmax.class, "splitTiles", qLat, q, kv32, kv16, kv8, dtype, sTile, oPart, ml, seqStart,
                    B, T, CAP, H, DN, DR, DC, 0.07f, BC, SPLITS);
            g.task("combine", OnlineSoftmax.class, "combine", oPart, ml, oLat, B * T, H, SPLITS, DC);
            JvmExecutor jvm = new JvmExecutor();
            try (TornadoExecutor dev = new TornadoExecutor(null, null, true)) {
                // contexts 1 (only split 0 non-empty), 3 (empty splits), 37, 299 with a different one per sequence
                int[][] starts = {{0, 0}, {2, 1}, {36, 120}, {298, 17}};
                for (int[] st : starts) {
                    System.arraycopy(st, 0, seqStart, 0, B);
                    jvm.execute(g);
                    float[] expected = oLat.clone();
                    java.util.Arrays.fill(oLat, Float.NaN);
                    dev.execute(g);
                    TestData.assertClose(expected, oLat, 1e-4, "dtype " + dtype + " seqStart " + java.util.Arrays.toString(st));
                }
                assertTrue(dev.device().startsWith("tornado "));
            }
        }
    }
}
