package org.tornadomla.kernels;

import uk.ac.manchester.tornado.api.annotations.Parallel;

/**
 * Linear projections y = x·Wᵀ with W stored [out, in] (Hugging Face layout), no bias, for each way the
 * weights may be held: f32 ({@link #matVec}, {@link #matMul}), bf16 bit patterns ({@code …Bf16}) and
 * DeepSeek's block-scaled FP8 ({@code …Fp8}: e4m3 codes [out, in] and f32 scales [ceil(out/128),
 * ceil(in/128)], W[o, i] = e4m3(codes[o, i])·scales[o/128, i/128]). The bf16 and fp8 kernels decode each
 * weight where it is used and compute W[o, i]·x[i] in the same order as the f32 kernel, so they give exactly
 * what the f32 kernel gives on the weights dequantised first (on the JVM; a device may fuse differently).
 * {@code pow2} is the table of {@link Bf16#pow2()}.
 */
public final class Projections {
    private Projections() {
    }

    /** Matrix-vector: y[o] = Σ_i w[o, i]·x[i]. One thread per output row of W. */
    public static void matVec(float[] x, float[] w, float[] y, int in, int out) {
        for (@Parallel int o = 0; o < out; o++) {
            float acc = 0f;
            int wBase = o * in;
            for (int i = 0; i < in; i++) {
                acc += w[wBase + i] * x[i];
            }
            y[o] = acc;
        }
    }

    /** Matrix-matrix: y[r, o] = Σ_i w[o, i]·x[r, i] for {@code rows} tokens. One thread per (row, output). */
    public static void matMul(float[] x, float[] w, float[] y, int rows, int in, int out) {
        for (@Parallel int r = 0; r < rows; r++) {
            for (@Parallel int o = 0; o < out; o++) {
                float acc = 0f;
                int xBase = r * in;
                int wBase = o * in;
                for (int i = 0; i < in; i++) {
                    acc += w[wBase + i] * x[xBase + i];
                }
                y[r * out + o] = acc;
            }
        }
    }

    /** {@link #matVec} with bf16 weights (bit patterns, [out, in]). */
    public static void matVecBf16(float[] x, short[] w, float[] pow2, float[] y, int in, int out) {
        for (@Parallel int o = 0; o < out; o++) {
            float acc = 0f;
            int wBase = o * in;
            for (int i = 0; i < in; i++) {
                acc += Bf16.decode(w[wBase + i], pow2) * x[i];
            }
            y[o] = acc;
        }
    }

    /** {@link #matMul} with bf16 weights (bit patterns, [out, in]). */
    public static void matMulBf16(float[] x, short[] w, float[] pow2, float[] y, int rows, int in, int out) {
        for (@Parallel int r = 0; r < rows; r++) {
            for (@Parallel int o = 0; o < out; o++) {
                float acc = 0f;
                int xBase = r * in;
                int wBase = o * in;
                for (int i = 0; i < in; i++) {
                    acc += Bf16.decode(w[wBase + i], pow2) * x[xBase + i];
                }
                y[r * out + o] = acc;
            }
        }
    }

    /** {@link #matVec} with block-scaled FP8 weights: e4m3 codes w [out, in], scales [ceil(out/128), ceil(in/128)]. */
    public static void matVecFp8(float[] x, byte[] w, float[] scales, float[] pow2, float[] y, int in, int out) {
        for (@Parallel int o = 0; o < out; o++) {
            float acc = 0f;
            int wBase = o * in;
            int sBase = (o / Fp8.WEIGHT_BLOCK) * Fp8.weightBlocks(in);
            for (int i = 0; i < in; i++) {
                acc += Fp8.decode(w[wBase + i], pow2) * scales[sBase + i / Fp8.WEIGHT_BLOCK] * x[i];
            }
            y[o] = acc;
        }
    }

    /** {@link #matMul} with block-scaled FP8 weights: e4m3 codes w [out, in], scales [ceil(out/128), ceil(in/128)]. */
    public static void matMulFp8(float[] x, byte[] w, float[] scales, float[] pow2, float[] y, int rows, int in, int out) {
        for (@Parallel int r = 0; r < rows; r++) {
            for (@Parallel int o = 0; o < out; o++) {
                float acc = 0f;
                int xBase = r * in;
                int wBase = o * in;
                int sBase = (o / Fp8.WEIGHT_BLOCK) * Fp8.weightBlocks(in);
                for (int i = 0; i < in; i++) {
                    acc += Fp8.decode(w[wBase + i], pow2) * scales[sBase + i / Fp8.WEIGHT_BLOCK] * x[xBase + i];
                }
                y[r * out + o] = acc;
            }
        }
    }
}
