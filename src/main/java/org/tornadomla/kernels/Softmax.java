package org.tornadomla.kernels;

import uk.ac.manchester.tornado.api.annotations.Parallel;

/** The softmax of the two-pass paths ({@link NaiveAttention}, {@link AbsorbedAttention}), over materialised scores. */
public final class Softmax {
    private Softmax() {
    }

    /** Finite stand-in for −∞ (OpenCL fast-math assumes no infinities); exp(NEG_INF − x) is 0. */
    public static final float NEG_INF = -1e30f;

    /** Step 3 of both paths: softmax over j &lt; len of each (row, head), in place, fp32. */
    public static void softmax(float[] scores, int[] seqStart, int batch, int tokens, int capacity, int heads) {
        for (@Parallel int r = 0; r < batch * tokens; r++) {
            for (@Parallel int h = 0; h < heads; h++) {
                int len = seqStart[r / tokens] + r % tokens + 1;
                int base = (r * heads + h) * capacity;
                float max = NEG_INF;
                for (int j = 0; j < len; j++) {
                    max = Math.max(max, scores[base + j]);
                }
                float sum = 0f;
                for (int j = 0; j < len; j++) {
                    float e = (float) Math.exp(scores[base + j] - max);
                    scores[base + j] = e;
                    sum += e;
                }
                float inv = 1f / sum;
                for (int j = 0; j < len; j++) {
                    scores[base + j] *= inv;
                }
            }
        }
    }
}
