package org.tornadomla.kernels;

import uk.ac.manchester.tornado.api.annotations.Parallel;

/**
 * Decoupled RoPE, interleaved pairs: (x[2i], x[2i+1]) rotates by angle p·f_i, as DeepSeek's
 * {@code apply_rotary_emb} (complex multiply) does. Frequencies f_i (with YaRN) come from
 * {@link org.tornadomla.config.RopeFrequencies}.
 *
 * <p>(Not called {@code rotate}: TornadoVM names the OpenCL kernel after the method, and {@code rotate} is an
 * OpenCL C built-in; PoCL then renames the kernel and TornadoVM crashes looking it up.)
 */
public final class Rope {
    private Rope() {
    }

    /**
     * Rotates, in place, the {@code ropeDim} values at {@code offset} of every head of every row of x.
     * Row r is at position attnMeta[2r] ({@link CacheLayout#metaRowPosition}; a padding row's −1 rotates
     * numbers nobody reads). For the query use rowStride = H·(d_n+d_r),
     * heads = H, headStride = d_n+d_r, offset = d_n; for the shared key k_pe inside kv_a_proj's output use
     * rowStride = d_c+d_r, heads = 1, offset = d_c. {@code cosSinScale} is HF's YaRN cos/sin multiplier.
     *
     * <p>The angle is computed in float, as PyTorch's {@code outer(t, inv_freq)} does, then cos/sin in
     * double precision of that float angle.
     */
    public static void rotatePairs(float[] x, int rowStride, int heads, int headStride, int offset, int ropeDim,
                              int[] attnMeta, int rows, float[] invFreq, float cosSinScale) {
        for (@Parallel int r = 0; r < rows; r++) {
            for (@Parallel int h = 0; h < heads; h++) {
                int pos = CacheLayout.metaRowPosition(attnMeta, r);
                int base = r * rowStride + h * headStride + offset;
                for (int i = 0; i < ropeDim / 2; i++) {
                    float angle = pos * invFreq[i];
                    float c = (float) Math.cos(angle) * cosSinScale;
                    float s = (float) Math.sin(angle) * cosSinScale;
                    float x0 = x[base + 2 * i];
                    float x1 = x[base + 2 * i + 1];
                    x[base + 2 * i] = x0 * c - x1 * s;
                    x[base + 2 * i + 1] = x0 * s + x1 * c;
                }
            }
        }
    }
}
