package org.tornadomla.weights;

import org.junit.jupiter.api.Test;
import org.tornadomla.MlaException;
import org.tornadomla.TestData;
import org.tornadomla.config.MlaConfig;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link MlaWeights#heads}: each sliced weight against the whole weight's values read at the indices the layout
 * of docs/design.md §1 gives (q and kv_b_proj rows per head, o_proj columns per head), in every weight form, bit
 * for bit; the shared weights untouched; the config, layer and identity; FP8 scale blocks kept or refused.
 */
class HeadSliceTest {
    /** 128 rows a head in q_b_proj and kv_b_proj, 64 columns in o_proj: FP8 slices of 2 heads keep whole blocks. */
    static final MlaConfig FP8_FRIENDLY = new MlaConfig(64, 4, 32, 32, 64, 64, 64, 10000, 1e-6, 4096, 2, null);

    static int[] bits(float[] a) {
        int[] b = new int[a.length];
        for (int i = 0; i < a.length; i++) b[i] = Float.floatToRawIntBits(a[i]);
        return b;
    }

    /** Rows [r0, r1) of a [rows, cols] array. */
    static float[] rows(float[] a, int cols, int r0, int r1) {
        return java.util.Arrays.copyOfRange(a, r0 * cols, r1 * cols);
    }

    /** Columns [c0, c1) of a [rows, cols] array. */
    static float[] cols(float[] a, int rows, int cols, int c0, int c1) {
        float[] out = new float[rows * (c1 - c0)];
        for (int r = 0; r < rows; r++) for (int c = c0; c < c1; c++) out[r * (c1 - c0) + c - c0] = a[r * cols + c];
        return out;
    }

    static void checkSlice(MlaWeights w, int h0, int h1) {
        MlaConfig c = w.config();
        MlaWeights s = w.heads(h0, h1);
        String at = w.dtype() + " heads [" + h0 + ", " + h1 + ") of " + c.numHeads();
        assertEquals(h1 - h0, s.config().numHeads(), at);
        assertEquals(c.withHeads(h1 - h0), s.config(), at + ": the config differs only in num_attention_heads");
        assertEquals(c.softmaxScale(), s.config().softmaxScale(), at + ": the softmax scale does not depend on H");
        assertEquals(w.layer(), s.layer(), at);
        assertEquals(w.kvDigest(), s.kvDigest(), at + ": the cached rows are the same");
        assertEquals(w.dtype(), s.dtype(), at);
        int qk = c.qkHeadDim(), kvb = c.qkNopeHeadDim() + c.vHeadDim(), dv = c.vHeadDim(), in = c.hasQLora() ? c.qLoraRank() : c.hiddenSize();
        Weight q = c.hasQLora() ? w.qB() : w.q(), qs = c.hasQLora() ? s.qB() : s.q();
        assertArrayEquals(bits(rows(q.toFloats(), in, h0 * qk, h1 * qk)), bits(qs.toFloats()), at + ": q rows");
        assertArrayEquals(new long[] {(long) (h1 - h0) * qk, in}, qs.shape(), at);
        assertArrayEquals(bits(rows(w.kvB().toFloats(), c.kvLoraRank(), h0 * kvb, h1 * kvb)), bits(s.kvB().toFloats()), at + ": kv_b_proj rows");
        assertArrayEquals(bits(cols(w.o().toFloats(), c.hiddenSize(), c.numHeads() * dv, h0 * dv, h1 * dv)), bits(s.o().toFloats()), at + ": o_proj columns");
        for (String shared : new String[] {"q_a_proj.weight", "q_a_layernorm.weight", "kv_a_proj_with_mqa.weight", "kv_a_layernorm.weight"}) {
            if (w.weight(shared) != null) assertSame(w.weight(shared), s.weight(shared), at + ": " + shared + " is shared, whole");
        }
        assertEquals(w.all().size(), s.all().size(), at);
    }

    @Test
    void everyShardOfEveryConfigAndFormIsTheWholeWeightsRowsAndColumns() {
        for (MlaConfig c : TestData.all()) {
            MlaWeights f32 = MlaWeights.random(c, 11, 3);
            for (MlaWeights w : new MlaWeights[] {f32, f32.to(WeightDtype.BF16)}) {
                int h = c.numHeads();
                for (int n = 1; n <= h; n++) {
                    if (h % n != 0) continue;
                    for (int d = 0; d < n; d++) checkSlice(w, d * h / n, (d + 1) * h / n);
                }
                checkSlice(w, 0, 1);
                if (h > 2) checkSlice(w, 1, h);
            }
        }
    }

    @Test
    void fp8SlicesKeepTheirScaleBlocks() {
        MlaWeights fp8 = MlaWeights.random(FP8_FRIENDLY, 12).to(WeightDtype.FP8);
        checkSlice(fp8, 0, 2);
        checkSlice(fp8, 2, 4);
        checkSlice(fp8, 0, 1);                  // o_proj's columns end inside a block: its scale is the block's
        checkSlice(fp8, 0, 3);
        // the 128x128 blocks of the slice are blocks of the whole: one scale per block row and column
        MlaWeights s = fp8.heads(2, 4);
        assertEquals(256L * 32 + 4L * 2, s.qB().bytes(), "256 x 32 codes, 2 x 1 scales");
        assertEquals(64L * 128 + 4L * 1, s.o().bytes(), "64 x 128 codes, 1 x 1 scales");
    }

    @Test
    void fp8SlicesThatCutAScaleBlockAreRefusedInOneLine() {
        MlaWeights fp8 = MlaWeights.random(FP8_FRIENDLY, 13).to(WeightDtype.FP8);
        MlaException e = assertThrows(MlaException.class, () -> fp8.heads(1, 2));
        assertFalse(e.getMessage().contains("\n"), e.getMessage());
        assertTrue(e.getMessage().contains("o_proj would start at column 64, inside a 128x128 scale block"), e.getMessage());
        // TestData.small: 24 rows a head in q_b_proj
        MlaWeights small = MlaWeights.random(TestData.small(), 14).to(WeightDtype.FP8);
        MlaException q = assertThrows(MlaException.class, () -> small.heads(2, 4));
        assertTrue(q.getMessage().startsWith("heads [2, 4) of FP8 weights: q_b_proj would start at row 48"), q.getMessage());
        // the same heads as bf16 are fine
        checkSlice(small.to(WeightDtype.BF16), 2, 4);
    }

    @Test
    void theWholeRangeIsTheseWeightsAndBadRangesAreRefused() {
        MlaWeights w = MlaWeights.random(TestData.small(), 15);
        assertSame(w, w.heads(0, 4));
        for (int[] r : new int[][] {{-1, 2}, {0, 5}, {2, 2}, {3, 1}}) {
            MlaException e = assertThrows(MlaException.class, () -> w.heads(r[0], r[1]));
            assertEquals("heads [" + r[0] + ", " + r[1] + ") of a layer of 4 heads: expected 0 <= from < to <= 4", e.getMessage());
        }
    }

    @Test
    void deepSeekV3sFp8ShardsOfEvenHeadsFitTheBlocks() {
        // q_b_proj 192 rows a head: an even head starts at a multiple of 384 = 3 x 128; kv_b_proj 256, o_proj 128
        MlaConfig v3 = MlaConfig.deepseekV3();
        int qk = v3.qkHeadDim(), kvb = v3.qkNopeHeadDim() + v3.vHeadDim();
        for (int d : new int[] {2, 4, 8, 16, 32, 64}) {
            int per = v3.numHeads() / d;
            for (int k = 0; k < d; k++) {
                assertEquals(0, (long) k * per * qk % 128, "TP " + d);
                assertEquals(0, (long) k * per * kvb % 128, "TP " + d);
                assertEquals(0, (long) k * per * v3.vHeadDim() % 128, "TP " + d);
            }
        }
        assertTrue(qk % 128 != 0, "TP 128 (one head a device) would cut q_b_proj's blocks");
    }
}
