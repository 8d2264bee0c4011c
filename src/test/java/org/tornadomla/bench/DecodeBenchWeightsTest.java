package org.tornadomla.bench;

import org.junit.jupiter.api.Test;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.fast.FastExecutor;
import org.tornadomla.graph.JvmExecutor;
import org.tornadomla.weights.WeightDtype;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code ./mla bench --weights-dtype}: the attention core with kv_b_proj held as bf16 or fp8. */
class DecodeBenchWeightsTest {
    private static final DecodeBench.Shape SHAPE = new DecodeBench.Shape(AttentionPath.ABSORBED, CacheDtype.F32, 2, 8, 96);

    /** max |a − b| / max |a|. */
    private static double relDiff(float[] a, float[] b) {
        double d = 0, m = 0;
        for (int i = 0; i < a.length; i++) {
            d = Math.max(d, Math.abs(a[i] - b[i]));
            m = Math.max(m, Math.abs(a[i]));
        }
        return d / m;
    }

    @Test
    void roundedWeightsMoveTheOutputByTheirRoundingAndJavaFastAgreesWithTheReference() {
        float[] f32 = new DecodeBench(SHAPE, 7).runOnce(new JvmExecutor());
        DecodeBench bf16 = new DecodeBench(SHAPE, 7).weights(WeightDtype.BF16);
        DecodeBench fp8 = new DecodeBench(SHAPE, 7).weights(WeightDtype.FP8);
        float[] bf16Ref = bf16.runOnce(new JvmExecutor()), fp8Ref = fp8.runOnce(new JvmExecutor());
        // bf16 keeps 8 significant bits (relative rounding ≤ 2^-9 ≈ 2e-3 per weight), e4m3 4 bits (≤ 2^-4):
        // the outputs move by about that much of their largest value, and not at all would mean the weights
        // were not changed
        double eBf16 = relDiff(f32, bf16Ref), eFp8 = relDiff(f32, fp8Ref);
        assertTrue(eBf16 > 1e-5 && eBf16 < 1e-2, "bf16 weights moved the output by " + eBf16);
        assertTrue(eFp8 > 2 * eBf16 && eFp8 < 0.1, "fp8 weights moved the output by " + eFp8 + " (bf16: " + eBf16 + ")");
        // java-fast decodes the same weights: it equals the reference kernels to float rounding
        try (FastExecutor fast = new FastExecutor()) {
            assertTrue(relDiff(bf16Ref, bf16.runOnce(fast)) < 1e-5, "java-fast with bf16 weights");
            assertTrue(relDiff(fp8Ref, fp8.runOnce(fast)) < 1e-5, "java-fast with fp8 weights");
        }
        assertEquals("weights(bf16) after a step was built",
                assertThrows(IllegalStateException.class, () -> bf16.weights(WeightDtype.BF16)).getMessage());
    }
}
