package org.tornadomla.bench;

import org.junit.jupiter.api.Test;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.weights.Bf16Bits;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.graph.DeviceResident;
import org.tornadomla.graph.JvmExecutor;
import org.tornadomla.graph.KernelGraph;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The check's cache comparison: one-code flips are allowed and replayed, anything larger fails. */
class LayerCheckTest {
    static final LayerCheck CHECK = new LayerCheck(MlaConfig.deepseekV3().withHiddenSize(32), new LayerCheck.Workload(2, 2, 1, 3), 4, 3);

    /**
     * The reference kernels, with one bf16 code of sequence 0's first prefill token moved by {@code delta} right
     * after the prefill's cache append (where a device's rounding would differ).
     */
    static final class FlippingExecutor extends JvmExecutor {
        final int delta;

        FlippingExecutor(int delta) {
            this.delta = delta;
        }

        @Override
        public void execute(KernelGraph graph) {
            for (KernelGraph.Task t : graph.tasks()) {
                try {
                    t.handle().invokeWithArguments(t.args());
                } catch (Throwable e) {
                    throw new IllegalStateException(e);
                }
                if (graph.name().equals("prefill") && t.id().equals("cache_append")) {
                    for (DeviceResident s : graph.states()) {
                        short[] codes = (short[]) s.arrays()[1];
                        int i = 7;                              // slot 0, latent number 7: written by the prefill (prefix(0) = 0)
                        codes[i] = (short) (codes[i] + (codes[i] < 0 ? -delta : delta));   // away from zero in magnitude
                    }
                }
            }
        }
    }

    @Test
    void aOneCodeFlipIsReplayedAndPassesTwoCodesFail() {
        LayerCheck.Result exact = CHECK.check(new JvmExecutor(), "plain", AttentionPath.TILED, CacheDtype.BF16);
        assertTrue(exact.pass() && exact.maxAbsErr() == 0 && exact.cacheFlips() == 0, exact.line());

        LayerCheck.Result flip = CHECK.check(new FlippingExecutor(1), "plain", AttentionPath.TILED, CacheDtype.BF16);
        assertTrue(flip.pass(), flip.line());
        assertEquals(1, flip.cacheFlips(), flip.line());
        assertEquals(0, flip.maxAbsErr(), flip.line());        // the reference replayed over the flipped cache: identical

        LayerCheck.Result two = CHECK.check(new FlippingExecutor(2), "plain", AttentionPath.TILED, CacheDtype.BF16);
        assertFalse(two.pass(), two.line());
        assertTrue(two.line().contains("error=cache bf16 code [7]") && two.line().contains("more than one code apart"), two.line());
    }

    @Test
    void cacheCodesComparePerDtype() {
        int[] flips = {0};
        float[] f = {1f, Float.POSITIVE_INFINITY};
        short one = Bf16Bits.encode(1.5f), minusOne = Bf16Bits.encode(-1.5f);
        // bf16: a neighbouring code (either sign) is a flip, a sign change of a number that is not ~0 is an error
        assertNull(LayerCheck.compareCaches(CacheDtype.BF16, new Object[] {f, new short[] {(short) (one + 1), (short) (minusOne + 1)}, new byte[1]},
                new Object[] {f.clone(), new short[] {one, minusOne}, new byte[1]}, flips));
        assertEquals(2, flips[0]);
        assertNotNull(LayerCheck.compareCaches(CacheDtype.BF16, new Object[] {f, new short[] {minusOne}, new byte[1]},
                new Object[] {f, new short[] {one}, new byte[1]}, new int[1]));
        // int8: ±1 is a flip, ±2 an error
        flips[0] = 0;
        assertNull(LayerCheck.compareCaches(CacheDtype.INT8, new Object[] {f, new short[1], new byte[] {-1, 5}},
                new Object[] {f, new short[1], new byte[] {0, 4}}, flips));
        assertEquals(2, flips[0]);
        assertNotNull(LayerCheck.compareCaches(CacheDtype.INT8, new Object[] {f, new short[1], new byte[] {6}},
                new Object[] {f, new short[1], new byte[] {4}}, new int[1]));
        // e4m3 (sign + magnitude): neighbouring magnitudes of one sign, or ±0 against the smallest subnormal
        flips[0] = 0;
        assertNull(LayerCheck.compareCaches(CacheDtype.FP8, new Object[] {f, new short[1], new byte[] {(byte) 0x85, 0x01, 0x40}},
                new Object[] {f, new short[1], new byte[] {(byte) 0x84, (byte) 0x80, 0x41}}, flips));
        assertEquals(3, flips[0]);
        assertNotNull(LayerCheck.compareCaches(CacheDtype.FP8, new Object[] {f, new short[1], new byte[] {(byte) 0xC0}},
                new Object[] {f, new short[1], new byte[] {0x40}}, new int[1]));
        // f32 storage, scales, tables: within 1e-4 relative (infinities of the table equal)
        assertNotNull(LayerCheck.compareCaches(CacheDtype.F32, new Object[] {new float[] {1.001f, Float.POSITIVE_INFINITY}, new short[1], new byte[1]},
                new Object[] {f, new short[1], new byte[1]}, new int[1]));
    }
}
