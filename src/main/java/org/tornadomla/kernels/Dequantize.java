package org.tornadomla.kernels;

import uk.ac.manchester.tornado.api.annotations.Parallel;

/**
 * Whole weight matrices decoded to f32, for the one step that wants a matrix rather than a product with it:
 * the NAIVE path's decompression of every cached latent through kv_b_proj (a reference path that
 * materialises keys and values anyway). The projections and the absorbed paths decode where they multiply
 * ({@link Projections}, {@link Absorb}) and never hold an f32 copy.
 */
public final class Dequantize {
    private Dequantize() {
    }

    /** out[o, i] = bf16(w[o, i]) for a [rows, cols] matrix of bf16 bit patterns. */
    public static void fromBf16(short[] w, float[] pow2, float[] out, int rows, int cols) {
        for (@Parallel int o = 0; o < rows; o++) {
            for (int i = 0; i < cols; i++) {
                out[o * cols + i] = Bf16.decode(w[o * cols + i], pow2);
            }
        }
    }

    /** out[o, i] = e4m3(w[o, i])·scales[o/128, i/128] for block-scaled FP8 weights [rows, cols]. */
    public static void fromFp8(byte[] w, float[] scales, float[] pow2, float[] out, int rows, int cols) {
        for (@Parallel int o = 0; o < rows; o++) {
            int sBase = (o / Fp8.WEIGHT_BLOCK) * Fp8.weightBlocks(cols);
            for (int i = 0; i < cols; i++) {
                out[o * cols + i] = Fp8.decode(w[o * cols + i], pow2) * scales[sBase + i / Fp8.WEIGHT_BLOCK];
            }
        }
    }
}
