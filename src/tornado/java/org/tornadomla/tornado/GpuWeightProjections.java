package org.tornadomla.tornado;

import org.tornadomla.kernels.Bf16;
import org.tornadomla.kernels.Fp8;
import uk.ac.manchester.tornado.api.KernelContext;

import static org.tornadomla.tornado.GpuProjections.LOCAL;
import static org.tornadomla.tornado.GpuProjections.ROWS_PER_PASS;

/**
 * {@link GpuProjections} for weights held as bf16 bit patterns or DeepSeek's block-scaled FP8 (e4m3 codes and
 * one f32 scale per 128 × 128 block): the same work-groups (one per output row, {@link GpuProjections#LOCAL}
 * threads reading the row side by side, a tree in local memory, written out in each kernel as there: a local
 * array is not passed to helpers), each weight decoded where it is read. With
 * LOCAL = 128 = the block width, thread t reads columns t, t + 128, …: one block scale per column block.
 * They replace the plain kernels of {@link org.tornadomla.kernels.Projections} and
 * {@link org.tornadomla.kernels.Absorb#unabsorbValue} of the same form; tested on the device against them
 * ({@code GpuKernelsTest}).
 */
public final class GpuWeightProjections {
    private GpuWeightProjections() {
    }

    public static void matVecBf16(KernelContext ctx, float[] x, short[] w, float[] pow2, float[] y, int in, int out) {
        float[] red = ctx.allocateFloatLocalArray(LOCAL);
        int o = ctx.groupIdx;
        int tid = ctx.localIdx;
        float acc = 0f;
        for (int i = tid; i < in; i += LOCAL) {
            acc += Bf16.decode(w[o * in + i], pow2) * x[i];
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

    public static void matVecFp8(KernelContext ctx, float[] x, byte[] w, float[] scales, float[] pow2, float[] y, int in, int out) {
        float[] red = ctx.allocateFloatLocalArray(LOCAL);
        int o = ctx.groupIdx;
        int tid = ctx.localIdx;
        int sBase = (o / Fp8.WEIGHT_BLOCK) * Fp8.weightBlocks(in);
        float acc = 0f;
        for (int i = tid; i < in; i += LOCAL) {
            acc += Fp8.decode(w[o * in + i], pow2) * scales[sBase + i / Fp8.WEIGHT_BLOCK] * x[i];
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

    /** Token rows four at a time, as {@link GpuProjections#matMul}; rows past the end repeat the last row (not stored). */
    public static void matMulBf16(KernelContext ctx, float[] x, short[] w, float[] pow2, float[] y, int rows, int in, int out) {
        float[] red = ctx.allocateFloatLocalArray(ROWS_PER_PASS * LOCAL);
        int o = ctx.groupIdx;
        int tid = ctx.localIdx;
        for (int r0 = 0; r0 < rows; r0 += ROWS_PER_PASS) {
            int x0 = r0 * in;
            int x1 = Math.min(r0 + 1, rows - 1) * in;
            int x2 = Math.min(r0 + 2, rows - 1) * in;
            int x3 = Math.min(r0 + 3, rows - 1) * in;
            float a0 = 0f;
            float a1 = 0f;
            float a2 = 0f;
            float a3 = 0f;
            for (int i = tid; i < in; i += LOCAL) {
                float wv = Bf16.decode(w[o * in + i], pow2);
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

    public static void matMulFp8(KernelContext ctx, float[] x, byte[] w, float[] scales, float[] pow2, float[] y, int rows, int in, int out) {
        float[] red = ctx.allocateFloatLocalArray(ROWS_PER_PASS * LOCAL);
        int o = ctx.groupIdx;
        int tid = ctx.localIdx;
        int sBase = (o / Fp8.WEIGHT_BLOCK) * Fp8.weightBlocks(in);
        for (int r0 = 0; r0 < rows; r0 += ROWS_PER_PASS) {
            int x0 = r0 * in;
            int x1 = Math.min(r0 + 1, rows - 1) * in;
            int x2 = Math.min(r0 + 2, rows - 1) * in;
            int x3 = Math.min(r0 + 3, rows - 1) * in;
            float a0 = 0f;
            float a1 = 0f;
            float a2 = 0f;
            float a3 = 0f;
            for (int i = tid; i < in; i += LOCAL) {
                float wv = Fp8.decode(w[o * in + i], pow2) * scales[sBase + i / Fp8.WEIGHT_BLOCK];
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
            ctx.localBarrier();
        }
    }

    /** o = W^UV·o_lat per head with bf16 kv_b_proj: work-group h·d_v + v reads its row side by side. */
    public static void unabsorbValueBf16(KernelContext ctx, float[] oLat, short[] wkvB, float[] pow2, float[] o, int rows, int heads,
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
                float wv = Bf16.decode(wkvB[wRow + c], pow2);
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

    /** o = W^UV·o_lat per head with block-scaled FP8 kv_b_proj. */
    public static void unabsorbValueFp8(KernelContext ctx, float[] oLat, byte[] wkvB, float[] scales, float[] pow2, float[] o, int rows,
                                        int heads, int dn, int dv, int dc) {
        float[] red = ctx.allocateFloatLocalArray(ROWS_PER_PASS * LOCAL);
        int h = ctx.groupIdx / dv;
        int v = ctx.groupIdx % dv;
        int tid = ctx.localIdx;
        int row = h * (dn + dv) + dn + v;
        int wRow = row * dc;
        int sBase = (row / Fp8.WEIGHT_BLOCK) * Fp8.weightBlocks(dc);
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
                float wv = Fp8.decode(wkvB[wRow + c], pow2) * scales[sBase + c / Fp8.WEIGHT_BLOCK];
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
