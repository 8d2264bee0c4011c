package org.tornadomla.tornado;

import uk.ac.manchester.tornado.api.KernelContext;

/**
 * RMSNorm for GPUs: a {@link KernelContext} kernel replacing {@link org.tornadomla.kernels.Norms#rmsNorm} on
 * TornadoVM. The plain kernel has one thread per token row, so a decode step at batch 1 normalises 1,536
 * (q_a_layernorm) or 512 (kv_a_layernorm) numbers on a single GPU thread; here a work-group of
 * {@link #LOCAL} threads shares each row and reduces in local memory. The sum of squares is taken of x / max|x|
 * (then scaled back in double), so rows of any finite magnitude normalise as in float64.
 */
public final class GpuNorms {
    private GpuNorms() {
    }

    /** Threads per work-group (a power of two). */
    public static final int LOCAL = 128;

    /** out[r, i] = weight[i]·x[r, i] / sqrt(mean_i x[r, i]² + eps): work-group r normalises row r. */
    public static void rmsNorm(KernelContext ctx, float[] x, int xStride, float[] weight, float[] out, int rows, int dim, float eps) {
        float[] red = ctx.allocateFloatLocalArray(LOCAL);
        int r = ctx.groupIdx;
        int tid = ctx.localIdx;
        int base = r * xStride;
        float mx = 0f;
        for (int i = tid; i < dim; i += LOCAL) {
            mx = Math.max(mx, Math.abs(x[base + i]));
        }
        red[tid] = mx;
        ctx.localBarrier();
        for (int s = LOCAL / 2; s > 0; s >>= 1) {
            if (tid < s) {
                red[tid] = Math.max(red[tid], red[tid + s]);
            }
            ctx.localBarrier();
        }
        float scale = red[0];
        ctx.localBarrier();
        float invScale = scale > 0f ? 1f / scale : 0f;
        float sum = 0f;
        for (int i = tid; i < dim; i += LOCAL) {
            float v = x[base + i] * invScale;
            sum += v * v;
        }
        red[tid] = sum;
        ctx.localBarrier();
        for (int s = LOCAL / 2; s > 0; s >>= 1) {
            if (tid < s) {
                red[tid] += red[tid + s];
            }
            ctx.localBarrier();
        }
        // 1 / sqrt(scale²·mean + eps) without forming scale² in float (it may overflow or underflow)
        double sc = scale;
        double mean = red[0] / dim;
        float inv = scale > 0f ? (float) (1.0 / (sc * Math.sqrt(mean + eps / (sc * sc)))) : (float) (1.0 / Math.sqrt(eps));
        for (int i = tid; i < dim; i += LOCAL) {
            out[r * dim + i] = weight[i] * (x[base + i] * inv);
        }
    }
}
