package org.tornadomla.kernels;

import uk.ac.manchester.tornado.api.annotations.Parallel;

/** RMSNorm, as DeepSeek's q_a_layernorm and kv_a_layernorm compute it (fp32 statistics). */
public final class Norms {
    private Norms() {
    }

    /**
     * out[r, i] = weight[i] · x[r, i] / sqrt(mean_i(x[r, i]²) + eps) for the first {@code dim} entries of
     * each row of x. x rows are {@code xStride} apart, so the latent part of kv_a_proj's output
     * (d_c of d_c + d_r) is normalised in place without a copy; out is dense [rows, dim].
     */
    public static void rmsNorm(float[] x, int xStride, float[] weight, float[] out, int rows, int dim, float eps) {
        for (@Parallel int r = 0; r < rows; r++) {
            int base = r * xStride;
            float sumSq = 0f;
            for (int i = 0; i < dim; i++) {
                float v = x[base + i];
                sumSq += v * v;
            }
            float inv = 1f / (float) Math.sqrt(sumSq / dim + eps);
            for (int i = 0; i < dim; i++) {
                out[r * dim + i] = weight[i] * (x[base + i] * inv);
            }
        }
    }
}
