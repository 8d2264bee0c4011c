package org.tornadomla;

import org.tornadomla.config.MlaConfig;
import org.tornadomla.config.RopeScaling;

import java.util.SplittableRandom;
import org.tornadomla.internal.Gaussians;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

/** Small configs and seeded data shared by the tests. */
public final class TestData {
    private TestData() {
    }

    /** q_lora_rank > 0, no rope scaling. */
    public static MlaConfig small() {
        return new MlaConfig(64, 4, 32, 32, 16, 8, 12, 10000, 1e-6, 4096, 2, null);
    }

    /** Plain q_proj (q_lora_rank = 0). */
    public static MlaConfig noQLora() {
        return new MlaConfig(48, 3, 0, 24, 8, 8, 16, 10000, 1e-6, 4096, 2, null);
    }

    /**
     * YaRN with a non-trivial ramp (L0 = 64, d_r = 8) and mscale ≠ mscale_all_dim, so HF's cos/sin multiplier
     * is not 1; max_position_embeddings > original as docs/design.md §1.1 asks of test configs.
     */
    public static MlaConfig yarn() {
        return new MlaConfig(40, 2, 24, 16, 8, 8, 8, 10000, 1e-6, 1024, 2,
                new RopeScaling(4, 64, 32, 1, 0.707, 1.0));
    }

    public static MlaConfig[] all() {
        return new MlaConfig[] {small(), noQLora(), yarn()};
    }

    public static float[] gaussian(long seed, int n) {
        SplittableRandom r = new SplittableRandom(seed);
        float[] a = new float[n];
        for (int i = 0; i < n; i++) a[i] = (float) Gaussians.next(r);
        return a;
    }

    /** a followed by b (rows of one packed input). */
    public static float[] concatRows(float[] a, float[] b) {
        float[] r = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, r, a.length, b.length);
        return r;
    }

    public static double maxAbsDiff(float[] a, float[] b) {
        assertEquals(a.length, b.length, "lengths");
        double m = 0;
        for (int i = 0; i < a.length; i++) m = Math.max(m, Math.abs((double) a[i] - b[i]));
        return m;
    }

    /** |actual − expected| ≤ tol·max(1, |expected|) element-wise, with the first failing index in the message. */
    public static void assertClose(double[] expected, float[] actual, double tol, String what) {
        assertEquals(expected.length, actual.length, what + ": lengths");
        for (int i = 0; i < expected.length; i++) {
            double err = Math.abs(actual[i] - expected[i]);
            if (!(err <= tol * Math.max(1, Math.abs(expected[i])))) {
                fail(what + ": element " + i + " expected " + expected[i] + " found " + actual[i] + " (tolerance " + tol + ")");
            }
        }
    }

    public static void assertClose(float[] expected, float[] actual, double tol, String what) {
        double[] e = new double[expected.length];
        for (int i = 0; i < e.length; i++) e[i] = expected[i];
        assertClose(e, actual, tol, what);
    }
}
