package org.tornadomla.kernels;

import uk.ac.manchester.tornado.api.annotations.Parallel;

/**
 * The softmax of the two-pass paths ({@link NaiveAttention}, {@link AbsorbedAttention}), over materialised
 * scores, and the shift every softmax of this library subtracts before exp.
 *
 * <p>Every finite score is handled exactly, however negative: the running maximum starts at the row's first
 * score (never at a stand-in for −∞), so exp(s − max) ≤ 1 and the largest term is exactly 1. Scores of −∞
 * weigh 0. A row whose scores are all −∞ attends to nothing: all its weights are 0, and so is its output
 * (on every path and backend; never NaN).
 */
public final class Softmax {
    private Softmax() {
    }

    /**
     * What a softmax subtracts from its scores before exp: their maximum {@code max}, or 0 when that is −∞
     * (every score so far is −∞; −∞ − (−∞) would be NaN, while exp(−∞ − 0) is the 0 wanted). Written without
     * an infinity constant, which OpenCL's fast-math (finite-math-only) folds away: for a negative x,
     * x·0.5 &gt; x holds exactly when x is finite.
     */
    public static float shift(float max) {
        return max >= 0f || max * 0.5f > max ? max : 0f;
    }

    /** Step 3 of both paths: softmax over j ≤ the row's position of each (row, head), in place, fp32. */
    public static void softmax(float[] scores, int[] attnMeta, int rows, int capacity, int heads) {
        for (@Parallel int r = 0; r < rows; r++) {
            for (@Parallel int h = 0; h < heads; h++) {
                int len = CacheLayout.metaRowPosition(attnMeta, r) + 1;   // 0 for a padding row: nothing to do
                int base = (r * heads + h) * capacity;
                float max = scores[base];
                for (int j = 1; j < len; j++) {
                    max = Math.max(max, scores[base + j]);
                }
                float m = shift(max);
                float sum = 0f;
                for (int j = 0; j < len; j++) {
                    float e = (float) Math.exp(scores[base + j] - m);
                    scores[base + j] = e;
                    sum += e;
                }
                // sum >= 1 unless every score is −∞ (then every weight is 0 and stays 0)
                float inv = sum > 0f ? 1f / sum : 0f;
                for (int j = 0; j < len; j++) {
                    scores[base + j] *= inv;
                }
            }
        }
    }
}
