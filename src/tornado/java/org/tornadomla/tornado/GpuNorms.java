package org.tornadomla.tornado;

import org.tornadomla.kernels.Norms;
import uk.ac.manchester.tornado.api.KernelContext;

/**
 * RMSNorm for GPUs: a {@link KernelContext} kernel replacing {@link org.tornadomla.kernels.Norms#rmsNorm} on
 * TornadoVM. The plain kernel has one thread per token row, so a decode step at batch 1 normalises 1,536
 * (q_a_layernorm) or 512 (kv_a_layernorm) numbers on a single GPU thread; here a work-group of
 * {@link #LOCAL} threads shares each row and reduces in local memory. Scale-safe as the plain kernel: the
 * sum of squares is taken of x / max|x|, so rows of any finite magnitude normalise as in float64.
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
        // as Norms.rmsNorm: divide by the largest |x| (if above 1, at most 2^126) before squaring
        float s = red[0] > 1f ? Math.min(red[0], Norms.MAX_SCALE) : 1f;
        float invS = 1f / s;
        ctx.localBarrier();
        float sum = 0f;
        for (int i = tid; i < dim; i += LOCAL) {
            float v = x[base + i] * invS;
            sum += v * v;
        }
        red[tid] = sum;
        ctx.localBarrier();
        for (int step = LOCAL / 2; step > 0; step >>= 1) {
            if (tid < step) {
                red[tid] += red[tid + step];
            }
            ctx.localBarrier();
        }
        float inv = 1f / (float) Math.sqrt(red[0] / dim + eps * invS * invS);
        for (int i = tid; i < dim; i += LOCAL) {
            out[r * dim + i] = weight[i] * (x[base + i] * invS * inv);
        }
    }
}
