package org.tornadomla.config;

/**
 * YaRN rope scaling as Hugging Face DeepSeek configs write it ({@code rope_scaling} with
 * {@code type} or {@code rope_type} "yarn"). Defaults are those of DeepSeek's Hugging Face modelling code.
 *
 * @param factor                        F, the context extension factor
 * @param originalMaxPositionEmbeddings L0, the pre-training context length
 * @param betaFast                      βf (default 32)
 * @param betaSlow                      βs (default 1)
 * @param mscale                        HF {@code mscale} (default 1)
 * @param mscaleAllDim                  HF {@code mscale_all_dim} (default 0 = absent)
 */
public record RopeScaling(double factor, int originalMaxPositionEmbeddings, double betaFast, double betaSlow,
                          double mscale, double mscaleAllDim) {

    /** {@code yarn_get_mscale}: 0.1·m·ln(F) + 1, or 1 when F ≤ 1. */
    public static double yarnMscale(double factor, double m) {
        return factor <= 1 ? 1.0 : 0.1 * m * Math.log(factor) + 1.0;
    }

    /** The factor HF multiplies cos and sin by: mscale(F, mscale) / mscale(F, mscale_all_dim). */
    public double cosSinScale() {
        return yarnMscale(factor, mscale) / yarnMscale(factor, mscaleAllDim);
    }

    /** The factor m² the softmax scale is multiplied by (1 when mscale_all_dim is 0). */
    public double softmaxScaleFactor() {
        if (mscaleAllDim == 0) return 1.0;
        double m = yarnMscale(factor, mscaleAllDim);
        return m * m;
    }
}
