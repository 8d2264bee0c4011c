package org.tornadomla.config;

/**
 * The RoPE frequency table f_i (i &lt; d_r/2) of a config, with YaRN applied as DeepSeek's Hugging Face
 * modelling code does (docs/design.md §1.1), and the cos/sin multiplier HF uses under YaRN.
 */
public final class RopeFrequencies {
    private RopeFrequencies() {
    }

    /** f_i = θ^(−2i/d_r), blended with f_i/F by the YaRN ramp when rope_scaling is set. */
    public static float[] inverseFrequencies(MlaConfig c) {
        return inverseFrequencies(c.qkRopeHeadDim(), c.ropeTheta(), c.ropeScaling());
    }

    /** The same from the config's values (what {@link MlaConfig} checks before it exists). */
    static float[] inverseFrequencies(int dr, double theta, RopeScaling y) {
        int half = dr / 2;
        double[] f = new double[half];
        for (int i = 0; i < half; i++) {
            f[i] = 1.0 / Math.pow(theta, 2.0 * i / dr);
        }
        if (y != null) {
            double[] lowHigh = correctionRange(dr, theta, y);
            double low = lowHigh[0];
            double high = lowHigh[1];
            if (low == high) high += 0.001;
            for (int i = 0; i < half; i++) {
                double ramp = Math.min(1.0, Math.max(0.0, (i - low) / (high - low)));
                f[i] = f[i] / y.factor() * ramp + f[i] * (1 - ramp);
            }
        }
        float[] out = new float[half];
        for (int i = 0; i < half; i++) out[i] = (float) f[i];
        return out;
    }

    /** YaRN's [low, high]: low = max(floor(corr(βf)), 0), high = min(ceil(corr(βs)), d_r − 1). */
    public static double[] correctionRange(MlaConfig c) {
        return correctionRange(c.qkRopeHeadDim(), c.ropeTheta(), c.ropeScaling());
    }

    private static double[] correctionRange(int dr, double theta, RopeScaling y) {
        double low = Math.max(Math.floor(correctionDim(dr, theta, y, y.betaFast())), 0);
        double high = Math.min(Math.ceil(correctionDim(dr, theta, y, y.betaSlow())), dr - 1);
        return new double[] {low, high};
    }

    /** corr(n) = d_r·ln(L0 / (2πn)) / (2·ln θ). */
    private static double correctionDim(int dr, double theta, RopeScaling y, double rotations) {
        return dr * Math.log(y.originalMaxPositionEmbeddings() / (rotations * 2 * Math.PI)) / (2 * Math.log(theta));
    }

    /** HF's multiplier of cos and sin: 1 without YaRN. */
    public static float cosSinScale(MlaConfig c) {
        return c.ropeScaling() == null ? 1f : (float) c.ropeScaling().cosSinScale();
    }
}
