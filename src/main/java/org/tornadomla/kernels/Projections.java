package org.tornadomla.kernels;

import uk.ac.manchester.tornado.api.annotations.Parallel;

/** Linear projections y = x·Wᵀ with W stored [out, in] (Hugging Face layout), no bias. */
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
}
