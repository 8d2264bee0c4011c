package org.tornadomla.tornado;

import uk.ac.manchester.tornado.api.KernelContext;

/**
 * Weight-times-vector products for GPUs, as {@link KernelContext} kernels that replace
 * {@link org.tornadomla.kernels.Projections} and {@link org.tornadomla.kernels.Absorb#unabsorbValue} on
 * TornadoVM. The plain kernels give each output one thread that walks a weight row alone: neighbouring
 * threads then read addresses a whole row apart (uncoalesced), and at batch 1 a 576-row projection has 576
 * threads. Here one work-group of {@link #LOCAL} threads owns one weight row: its threads read the row
 * side by side (coalesced), each keeps partial sums for {@link #ROWS_PER_PASS} token rows, and a tree in
 * local memory adds the partial sums up. A decode step at batch 1 has one work-group per output (576 to
 * 24,576 of them for DeepSeek-V3), enough to fill an H200's 132 multiprocessors.
 *
 * <p>Tested on the device against the plain kernels ({@code GpuKernelsTest}, {@code TornadoLayerTest}).
 */
public final class GpuProjections {
    private GpuProjections() {
    }

    /** Threads per work-group (a power of two), and token rows whose partial sums one pass keeps. */
    public static final int LOCAL = 128, ROWS_PER_PASS = 4;

    /** Token rows up to which {@link #matMul} replaces the plain kernel (decode batches; prefill stays plain). */
    public static final int MAX_ROWS = 128;

    /** y[o] = Σ_i w[o, i]·x[i]: work-group o reads row o of W. */
    public static void matVec(KernelContext ctx, float[] x, float[] w, float[] y, int in, int out) {
        float[] red = ctx.allocateFloatLocalArray(LOCAL);
        int o = ctx.groupIdx;
        int tid = ctx.localIdx;
        float acc = 0f;
        for (int i = tid; i < in; i += LOCAL) {
            acc += w[o * in + i] * x[i];
        }
        red[tid] = acc;
        ctx.localBarrier();
        for (int s = LOCAL / 2; s > 0; s >>= 1) {
            if (tid < s) {
                red[tid] += red[tid + s];
            }
            ctx.localBarrier();
        }
        if (tid == 0 && o < out) {
            y[o] = red[0];
        }
    }

    /** y[r, o] = Σ_i w[o, i]·x[r, i]: work-group o reads row o of W once per {@link #ROWS_PER_PASS} token rows. */
    public static void matMul(KernelContext ctx, float[] x, float[] w, float[] y, int rows, int in, int out) {
        float[] red = ctx.allocateFloatLocalArray(ROWS_PER_PASS * LOCAL);
        int o = ctx.groupIdx;
        int tid = ctx.localIdx;
        for (int r0 = 0; r0 < rows; r0 += ROWS_PER_PASS) {
            // rows past the end repeat the last row (valid reads, results not stored): no branch in the loop
            int x0 = r0 * in;
            int x1 = Math.min(r0 + 1, rows - 1) * in;
            int x2 = Math.min(r0 + 2, rows - 1) * in;
            int x3 = Math.min(r0 + 3, rows - 1) * in;
            float a0 = 0f;
            float a1 = 0f;
            float a2 = 0f;
            float a3 = 0f;
            for (int i = tid; i < in; i += LOCAL) {
                float wv = w[o * in + i];
                a0 += wv * x[x0 + i];
                a1 += wv * x[x1 + i];
                a2 += wv * x[x2 + i];
                a3 += wv * x[x3 + i];
            }
            red[tid] = a0;
            red[LOCAL + tid] = a1;
            red[2 * LOCAL + tid] = a2;
            red[3 * LOCAL + tid] = a3;
            ctx.localBarrier();
            for (int s = LOCAL / 2; s > 0; s >>= 1) {
                if (tid < s) {
                    red[tid] += red[tid + s];
                    red[LOCAL + tid] += red[LOCAL + tid + s];
                    red[2 * LOCAL + tid] += red[2 * LOCAL + tid + s];
                    red[3 * LOCAL + tid] += red[3 * LOCAL + tid + s];
                }
                ctx.localBarrier();
            }
            if (tid < ROWS_PER_PASS && r0 + tid < rows) {
                y[(r0 + tid) * out + o] = red[tid * LOCAL];
            }
            ctx.localBarrier();   // red is refilled by the next pass
        }
    }

    /**
     * o[r, h, v] = Σ_c W^UV_h[v, c]·o_lat[r, h, c] (as {@link org.tornadomla.kernels.Absorb#unabsorbValue}):
     * work-group h·d_v + v reads row v of W^UV_h (d_c numbers of kv_b_proj) side by side.
     */
    public static void unabsorbValue(KernelContext ctx, float[] oLat, float[] wkvB, float[] o, int rows, int heads,
                                     int dn, int dv, int dc) {
        float[] red = ctx.allocateFloatLocalArray(ROWS_PER_PASS * LOCAL);
        int h = ctx.groupIdx / dv;
        int v = ctx.groupIdx % dv;
        int tid = ctx.localIdx;
        int wRow = (h * (dn + dv) + dn + v) * dc;
        for (int r0 = 0; r0 < rows; r0 += ROWS_PER_PASS) {
            int x0 = (r0 * heads + h) * dc;
            int x1 = (Math.min(r0 + 1, rows - 1) * heads + h) * dc;
            int x2 = (Math.min(r0 + 2, rows - 1) * heads + h) * dc;
            int x3 = (Math.min(r0 + 3, rows - 1) * heads + h) * dc;
            float a0 = 0f;
            float a1 = 0f;
            float a2 = 0f;
            float a3 = 0f;
            for (int c = tid; c < dc; c += LOCAL) {
                float wv = wkvB[wRow + c];
                a0 += wv * oLat[x0 + c];
                a1 += wv * oLat[x1 + c];
                a2 += wv * oLat[x2 + c];
                a3 += wv * oLat[x3 + c];
            }
            red[tid] = a0;
            red[LOCAL + tid] = a1;
            red[2 * LOCAL + tid] = a2;
            red[3 * LOCAL + tid] = a3;
            ctx.localBarrier();
            for (int s = LOCAL / 2; s > 0; s >>= 1) {
                if (tid < s) {
                    red[tid] += red[tid + s];
                    red[LOCAL + tid] += red[LOCAL + tid + s];
                    red[2 * LOCAL + tid] += red[2 * LOCAL + tid + s];
                    red[3 * LOCAL + tid] += red[3 * LOCAL + tid + s];
                }
                ctx.localBarrier();
            }
            if (tid < ROWS_PER_PASS && r0 + tid < rows) {
                o[((r0 + tid) * heads + h) * dv + v] = red[tid * LOCAL];
            }
            ctx.localBarrier();
        }
    }
}
