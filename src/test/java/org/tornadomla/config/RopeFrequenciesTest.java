package org.tornadomla.config;

import org.junit.jupiter.api.Test;
import org.tornadomla.TestData;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** Frequencies against values worked out by hand (the arithmetic is in the comments). */
class RopeFrequenciesTest {
    private static MlaConfig rope8(RopeScaling s) {
        return new MlaConfig(16, 1, 0, 8, 8, 8, 8, 10000, 1e-6, 1024, 1, s);
    }

    @Test
    void plainRopeIsThetaToTheMinusTwoIOverD() {
        // d_r = 8, θ = 10⁴: f_i = 10⁴^(−2i/8) = 10^(−i) → 1, 0.1, 0.01, 0.001
        assertArrayEquals(new float[] {1f, 0.1f, 0.01f, 0.001f}, RopeFrequencies.inverseFrequencies(rope8(null)), 1e-9f);
        assertEquals(1f, RopeFrequencies.cosSinScale(rope8(null)));
    }

    @Test
    void yarnBlendsWithTheRamp() {
        // F = 4, L0 = 64, βf = 32, βs = 1, d_r = 8, ln θ = 9.2103:
        // corr(32) = 8·ln(64/(2π·32))/(2·9.2103) = 8·(−1.1447)/18.4207 = −0.497 → low = max(floor, 0) = 0
        // corr(1)  = 8·ln(64/(2π))/18.4207   = 8·2.3210/18.4207    =  1.008 → high = min(ceil, 7) = 2
        // ramp = (i − 0)/(2 − 0) clamped = 0, 0.5, 1, 1; f_i ← f_i/4·ramp + f_i·(1 − ramp):
        // f0 = 1, f1 = 0.1·(0.5/4 + 0.5) = 0.0625, f2 = 0.01/4 = 0.0025, f3 = 0.001/4 = 0.00025
        MlaConfig c = rope8(new RopeScaling(4, 64, 32, 1, 1, 0));
        assertArrayEquals(new double[] {0, 2}, RopeFrequencies.correctionRange(c), 0);
        assertArrayEquals(new float[] {1f, 0.0625f, 0.0025f, 0.00025f}, RopeFrequencies.inverseFrequencies(c), 1e-9f);
        // mscale = 1, mscale_all_dim = 0: cos/sin × (0.1·ln 4 + 1)/1 = 1.138629
        assertEquals(1.1386294, RopeFrequencies.cosSinScale(c), 1e-6);
        // softmax scale: mscale_all_dim = 0 leaves (d_n + d_r)^(−1/2) = 16^(−1/2) = 0.25
        assertEquals(0.25, c.softmaxScale(), 1e-12);
    }

    @Test
    void equalLowAndHighUseHighPlusOneThousandth() {
        // L0 = 201 ≈ 2π·32 and βs = βf = 32: corr = 8·ln(201/201.06)/18.42 = −0.00014 for both,
        // so low = max(floor, 0) = 0 and high = ceil = 0: equal, high becomes 0.001 and ramp = 0, 1, 1, 1;
        // F = 2: f = 1, 0.1/2, 0.01/2, 0.001/2
        MlaConfig c = new MlaConfig(16, 1, 0, 8, 8, 8, 8, 10000, 1e-6, 1024, 1,
                new RopeScaling(2, (int) Math.round(2 * Math.PI * 32), 32, 32, 1, 1));
        float[] f = RopeFrequencies.inverseFrequencies(c);
        assertEquals(1f, f[0], 1e-9f);
        assertEquals(0.05f, f[1], 1e-9f);
        assertEquals(0.005f, f[2], 1e-9f);
    }

    @Test
    void yarnTestConfigHasARealRamp() {
        MlaConfig c = TestData.yarn();
        float[] f = RopeFrequencies.inverseFrequencies(c);
        assertEquals(1f, f[0], 0f);
        assertEquals(1e-3f / 4, f[3], 1e-10f);
    }
}
