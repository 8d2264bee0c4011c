package org.tornadomla.attention;

import org.junit.jupiter.api.Test;
import org.tornadomla.Fp8Checkpoints;
import org.tornadomla.ReferenceMla;
import org.tornadomla.TestData;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.fast.FastExecutor;
import org.tornadomla.graph.GraphExecutor;
import org.tornadomla.graph.JvmExecutor;
import org.tornadomla.weights.MlaWeights;
import org.tornadomla.weights.WeightDtype;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The layer with weights held as FP8 (DeepSeek's block-scaled e4m3) and bf16:
 * <ul>
 *   <li>FP8 kept in memory gives what the same layer gives on the weights dequantised to f32 first, within
 *       1e-6 of the output's largest magnitude on both JVM backends, every path (on the reference backend bit for bit);</li>
 *   <li>both match the independent float64 layer on the exact weights (1e-4, as f32 layers do);</li>
 *   <li>bf16 weights (the FP8 weights rounded) stay within 5e-2 of it; the measured error is printed.</li>
 * </ul>
 */
class WeightFormsLayerTest {
    /** Prefill T tokens of `batch` sequences, then `steps` decode steps; every output concatenated. */
    static float[] run(MlaLayer layer, AttentionOptions opt, CacheDtype dt, int batch, int T, int steps) {
        int d = layer.config().hiddenSize();
        LatentCache cache = layer.newCache(batch, T + steps, dt);
        float[] all = new float[batch * (T + steps) * d];
        float[] y = layer.forward(cache, TestData.gaussian(7, batch * T * d), T, opt);
        System.arraycopy(y, 0, all, 0, y.length);
        for (int s = 0; s < steps; s++) {
            float[] ys = layer.forward(cache, TestData.gaussian(20 + s, batch * d), 1, opt);
            System.arraycopy(ys, 0, all, batch * (T + s) * d, ys.length);
        }
        return all;
    }

    static double maxAbs(float[] a) {
        double m = 0;
        for (float v : a) m = Math.max(m, Math.abs(v));
        return m;
    }

    @Test
    void fp8InMemoryEqualsDequantisingFirstOnEveryPathAndJvmBackend() {
        try (FastExecutor fast = new FastExecutor()) {
            for (MlaConfig c : List.of(Fp8Checkpoints.config(), Fp8Checkpoints.plainQ())) {
                MlaWeights fp8 = Fp8Checkpoints.random(c, 3).weights(), f32 = fp8.to(WeightDtype.F32);
                assertEquals(WeightDtype.FP8, fp8.dtype());
                for (GraphExecutor ex : List.<GraphExecutor>of(new JvmExecutor(), fast)) {
                    MlaLayer a = new MlaLayer(fp8, ex), b = new MlaLayer(f32, ex);
                    for (AttentionPath p : AttentionPath.values()) {
                        AttentionOptions opt = new AttentionOptions(p, 3, 2);
                        for (CacheDtype dt : List.of(CacheDtype.F32, CacheDtype.FP8)) {
                            float[] ya = run(a, opt, dt, 2, 5, 3), yb = run(b, opt, dt, 2, 5, 3);
                            String what = ex.device() + " " + p + " cache " + dt + " q_lora " + c.qLoraRank();
                            double tol = 1e-6 * maxAbs(yb);
                            for (int i = 0; i < ya.length; i++) {
                                assertTrue(Math.abs(ya[i] - yb[i]) <= tol, what + ": element " + i + " " + ya[i] + " vs " + yb[i]);
                            }
                            if (ex instanceof JvmExecutor && !(ex instanceof FastExecutor)) assertArrayEquals(yb, ya, what + " bit for bit");
                        }
                    }
                }
            }
        }
    }

    @Test
    void fp8AndBf16WeightsAgainstTheDoubleReferenceOnTheExactWeights() {
        MlaConfig c = Fp8Checkpoints.config();
        MlaWeights fp8 = Fp8Checkpoints.random(c, 4).weights();
        int T = 9;
        float[] x = TestData.gaussian(8, T * c.hiddenSize());
        double[] ref = ReferenceMla.prefill(fp8, x, T, false).y();       // float64 on e4m3·scale
        double scale = 0;
        for (double v : ref) scale = Math.max(scale, Math.abs(v));
        try (FastExecutor fast = new FastExecutor()) {
            for (GraphExecutor ex : List.<GraphExecutor>of(new JvmExecutor(), fast)) {
                for (WeightDtype wd : WeightDtype.values()) {
                    MlaLayer layer = new MlaLayer(fp8.to(wd), ex);
                    for (AttentionPath p : AttentionPath.values()) {
                        float[] y = layer.prefill(layer.newCache(1, T, CacheDtype.F32), x, T, p);
                        double err = 0;
                        for (int i = 0; i < y.length; i++) err = Math.max(err, Math.abs(y[i] - ref[i]));
                        double rel = err / scale;
                        String what = ex.device() + " weights " + wd + " " + p;
                        if (wd == WeightDtype.BF16) {
                            System.out.printf("bf16 weights (FP8 weights rounded), %s: max |y − float64| / max |y| = %.2e%n", what, rel);
                            assertTrue(rel <= 5e-2, what + ": " + rel);
                            assertTrue(rel > 1e-6, what + ": bf16 rounding must show (" + rel + "): are the weights really bf16?");
                        } else {
                            assertTrue(rel <= 1e-4, what + ": " + rel);
                        }
                    }
                }
            }
        }
    }
}
