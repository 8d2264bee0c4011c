package org.tornadomla.kernels;

import uk.ac.manchester.tornado.api.annotations.Parallel;

/** RMSNorm, as DeepSeek's q_a_layernorm and kv_a_layernorm compute it (fp32 statistics). */
public final class Norms {
    private Norms() {
    }

    /** 2^126: the largest scale whose reciprocal is still a normal float (no flush to zero on a device). */
    public static final float MAX_SCALE = 8.507059e37f;

    /**
     * out[r, i] = weight[i] · x[r, i] / sqrt(mean_i(x[r, i]²) + eps) for the first {@code dim} entries of
     * each row of x. x rows are {@code xStride} apart, so the latent part of kv_a_proj's output
     * (d_c of d_c + d_r) is normalised in place without a copy; out is dense [rows, dim].
     *
     * <p>Scale-safe: a row whose largest |x| is above 1 is divided by it (at most 2^126) before squaring, so the
     * sum of squares never overflows and any finite row gives what float64 gives (x·1e30 normalises like x).
     */
    public static void rmsNorm(float[] x, int xStride, float[] weight, float[] out, int rows, int dim, float eps) {
        for (@Parallel int r = 0; r < rows; r++) {
            int base = r * xStride;
            float amax = 0f;
            for (int i = 0; i < dim; i++) {
                amax = Math.max(amax, Math.abs(x[base + i]));
            }
            // x/s ≤ 4, so (x/s)² cannot overflow; mean(x²) + eps = s²·(mean((x/s)²) + eps/s²)
            float s = amax > 1f ? Math.min(amax, MAX_SCALE) : 1f;
            float invS = 1f / s;
            float sumSq = 0f;
            for (int i = 0; i < dim; i++) {
                float v = x[base + i] * invS;
                sumSq += v * v;
            }
            float inv = 1f / (float) Math.sqrt(sumSq / dim + eps * invS * invS);
            for (int i = 0; i < dim; i++) {
                out[r * dim + i] = weight[i] * (x[base + i] * invS * inv);
            }
        }
    }
}
