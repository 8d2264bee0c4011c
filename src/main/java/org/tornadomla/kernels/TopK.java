package org.tornadomla.kernels;

import uk.ac.manchester.tornado.api.annotations.Parallel;

/**
 * Top-k selection of the index scores without sorting a row: a radix select (four passes of 8 bits, MSB first,
 * each a 256-bin histogram) over order-preserving integer keys of the scores, then one pass that writes the chosen
 * positions. The keys are computed with float arithmetic and a power-of-two table, not from the float's bits
 * ({@code Float.floatToRawIntBits} does not compile in TornadoVM kernel arithmetic, docs/design.md §2).
 *
 * <p>Rule: row r (at position p, seeing positions 0 … p) ranks its positions by score, higher first, and equal
 * scores by position, lower first; the first min(k, p + 1) in that order are selected. −0 equals +0; NaN ranks below
 * every number. The selected positions are written in increasing position order (not in score order), and the
 * rest of the row's k slots hold −1 (fewer visible positions than k, or a padding row, p = −1). DeepSeek's
 * {@code index_score.topk} returns them in score order and leaves ties to the device.
 */
public final class TopK {
    private TopK() {
    }

    /** Bins per radix pass. */
    public static final int BINS = 256;

    /**
     * An int key with the order of the floats (kernel-safe): key(a) &lt; key(b) ⇔ a &lt; b, key(−0) = key(+0);
     * −∞ → −(255·2^23), +∞ → 255·2^23, NaN → one below −∞. For |v| normal it is the magnitude's IEEE bit pattern
     * (exponent·2^23 + mantissa) found by a binary search in {@code pow2} (POW2[k] = 2^(k−150)), negated for v &lt; 0.
     */
    public static int sortableKey(float v, float[] pow2) {
        float a = v < 0f ? -v : v;
        int mag;
        if (a != a) {
            return -(255 << 23) - 1;
        } else if (a == 0f) {
            mag = 0;
        } else if (a > Float.MAX_VALUE) {
            mag = 255 << 23;                                // infinite
        } else if (a < pow2[24]) {
            mag = (int) (a * pow2[276] * pow2[173]);        // subnormal: a·2^149 exactly, as two exact scalings
        } else {
            int lo = 1;                                     // largest e in [1, 254] with 2^(e−127) <= a
            int hi = 254;
            while (lo < hi) {
                int mid = (lo + hi + 1) >> 1;
                if (pow2[mid + 23] <= a) {
                    lo = mid;
                } else {
                    hi = mid - 1;
                }
            }
            // a·2^(150−e) in [2^23, 2^24), exact: 2^(150−e) as one table entry or, past 2^127, as two
            float scaled = lo >= 23 ? a * pow2[300 - lo] : a * pow2[277] * pow2[173 - lo];
            mag = (lo << 23) + ((int) scaled - 8388608);
        }
        return v < 0f ? -mag : mag;
    }

    /**
     * Digit {@code shift/8} (8 bits) of key u read as unsigned, without {@code >>>}: TornadoVM 5.2's OpenCL code
     * writes Java's unsigned shift of an int as C's {@code >>} on a signed int (seen: {@code (u >>> 24) & 0xFF}
     * became {@code u >> 24}, a negative bin for u's top bit set). The top digit is therefore the signed top byte
     * of u ^ 2^31 plus 128; the lower ones are an arithmetic shift and a mask.
     */
    static int digit(int u, int shift) {
        return shift == 24 ? ((u ^ 0x80000000) >> 24) + 128 : (u >> shift) & 0xFF;
    }

    /**
     * For each row r: the top min(k, p + 1) of scores[r, 0 … p] (p = attnMeta's position of row r) by the rule of
     * this class, written to out[r, 0 … k) in increasing position order, −1 after them. (Not called {@code select}:
     * an OpenCL C built-in, see {@link Rope}.) scores [rows, positions];
     * keys [rows, positions] and hist [rows, 256] are scratch; out [rows, k]. p must be &lt; positions.
     */
    public static void selectTopK(float[] scores, int[] keys, int[] hist, int[] out, int[] attnMeta, int rows, int positions, int k, float[] pow2) {
        for (@Parallel int r = 0; r < rows; r++) {
            int visible = CacheLayout.metaRowPosition(attnMeta, r) + 1;       // 0 for a padding row
            int base = r * positions;
            int hBase = r * BINS;
            // Each branch fills its own −1s: TornadoVM 5.2 merged a `taken` shared by both branches wrongly (the
            // first branch's count was replaced by the second's, uninitialised there, and the fill wrote out of bounds)
            if (visible <= k) {
                for (int t = 0; t < visible; t++) {
                    out[r * k + t] = t;
                }
                for (int j = visible; j < k; j++) {
                    out[r * k + j] = -1;
                }
            } else {
                for (int t = 0; t < visible; t++) {
                    keys[base + t] = sortableKey(scores[base + t], pow2) ^ 0x80000000;    // unsigned order in the bits
                }
                // MSB first: the digits of the k-th largest key, and how many equal to it still belong to the top k
                int prefix = 0;
                int mask = 0;
                int need = k;
                for (int shift = 24; shift >= 0; shift = shift - 8) {
                    for (int d = 0; d < BINS; d++) {
                        hist[hBase + d] = 0;
                    }
                    for (int t = 0; t < visible; t++) {
                        int u = keys[base + t];
                        if ((u & mask) == prefix) {
                            int d = digit(u, shift);
                            hist[hBase + d] = hist[hBase + d] + 1;
                        }
                    }
                    int digit = BINS - 1;
                    while (hist[hBase + digit] < need) {
                        need = need - hist[hBase + digit];
                        digit--;
                    }
                    prefix = prefix | (digit << shift);
                    mask = mask | (0xFF << shift);
                }
                // above the threshold: all; at it: the first `need` by position; in position order
                int threshold = prefix ^ 0x80000000;
                int equal = 0;
                int taken = 0;
                for (int t = 0; t < visible; t++) {
                    int key = keys[base + t] ^ 0x80000000;
                    boolean pick = key > threshold;
                    if (key == threshold && equal < need) {
                        pick = true;
                        equal++;
                    }
                    if (pick) {
                        out[r * k + taken] = t;
                        taken++;
                    }
                }
                for (int j = taken; j < k; j++) {
                    out[r * k + j] = -1;
                }
            }
        }
    }
}
