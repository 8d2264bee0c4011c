package org.tornadomla.kernels;

import uk.ac.manchester.tornado.api.annotations.Parallel;

/**
 * DeepSeek Sparse Attention (DSA, DeepSeek-V3.2): attention over the positions the lightning indexer selected
 * ({@link Indexer}, {@link TopK#selectTopK}), at most k per query row, instead of the whole context.
 *
 * <p>The selection arrives as positions per row, [rows, k], increasing, −1 after the chosen ones.
 * {@link #selectedSlots} turns them into cache slots through the row's block table (FlashMLA's sparse
 * {@code indices}: slot = block·page + offset, −1 unused); the absorbed ({@link #sparseScores},
 * {@link #sparseSoftmax}, {@link #sparseValues}) and tiled ({@link #sparseSplitTiles}, then
 * {@link OnlineSoftmax#combine}) kernels then read only those rows of the latent cache: a gather, the rest of the
 * cache never touched. Scores are [rows, H, k]. The naive path stays dense and masks instead
 * ({@link #maskUnselected}: −∞ for every visible position not selected), the reference the sparse kernels are
 * checked against. With k ≥ the context every position is selected, in increasing order, and each sparse kernel
 * sums the same terms in the same order as its dense twin.
 */
public final class SparseAttention {
    private SparseAttention() {
    }

    /** slots[r, j] = the cache slot of selected position selected[r, j] of row r's sequence, or −1 where it is −1. */
    public static void selectedSlots(int[] selected, int[] slots, int[] attnMeta, int rows, int topk, int blockSize) {
        for (@Parallel int r = 0; r < rows; r++) {
            for (@Parallel int j = 0; j < topk; j++) {
                int p = selected[r * topk + j];
                int slot = -1;
                if (p >= 0) {
                    slot = CacheLayout.slot(attnMeta, CacheLayout.metaRowTable(attnMeta, r), p, blockSize);
                }
                slots[r * topk + j] = slot;
            }
        }
    }

    /** How many of the k entries of row r are used: they come first, −1 after them. */
    static int used(int[] slots, int r, int topk) {
        int n = 0;
        while (n < topk && slots[r * topk + n] >= 0) {
            n++;
        }
        return n;
    }

    /**
     * The naive path's mask: scores[r, h, j] = −∞ for each visible position j ≤ p of row r that the indexer did not
     * select (selected [rows, k], increasing, −1 after: found by a binary search). Scores [rows, H, capacity] as
     * {@link NaiveAttention#naiveScores} wrote them.
     */
    public static void maskUnselected(float[] scores, int[] selected, int[] attnMeta, int rows, int capacity, int heads, int topk) {
        for (@Parallel int r = 0; r < rows; r++) {
            for (@Parallel int h = 0; h < heads; h++) {
                for (@Parallel int j = 0; j < capacity; j++) {
                    if (j <= CacheLayout.metaRowPosition(attnMeta, r)) {
                        int lo = 0;
                        int hi = topk;
                        while (lo < hi) {                    // first entry ≥ j, −1 ranking above every position
                            int mid = (lo + hi) >> 1;
                            int v = selected[r * topk + mid];
                            if (v >= 0 && v < j) {
                                lo = mid + 1;
                            } else {
                                hi = mid;
                            }
                        }
                        if (lo == topk || selected[r * topk + lo] != j) {
                            scores[(r * heads + h) * capacity + j] = Float.NEGATIVE_INFINITY;
                        }
                    }
                }
            }
        }
    }

    /**
     * Absorbed step 2 over the selection: score[r, h, j] = scale·(q_lat[r, h]·c_kv[slot] + q_pe[r, h]·k_pe[slot])
     * for slot = slots[r, j] ≥ 0, −∞ for an unused entry. scores [rows, H, k].
     */
    public static void sparseScores(float[] qLat, float[] q, float[] kvFloats, short[] kvHalves, byte[] kvBytes, int dtype,
                                    int[] slots, float[] scores, int rows, int topk, int heads, int dn, int dr, int dc, float scale) {
        for (@Parallel int r = 0; r < rows; r++) {
            for (@Parallel int h = 0; h < heads; h++) {
                for (@Parallel int j = 0; j < topk; j++) {
                    int slot = slots[r * topk + j];
                    float s = Float.NEGATIVE_INFINITY;
                    if (slot >= 0) {
                        s = scale * AbsorbedAttention.latentScore(qLat, q, kvFloats, kvHalves, kvBytes, dtype, r * heads + h, slot, dn, dr, dc);
                    }
                    scores[(r * heads + h) * topk + j] = s;
                }
            }
        }
    }

    /** Absorbed step 3 over the selection: the softmax of each (row, head)'s used entries, in place, as {@link Softmax#softmax}; unused entries weigh 0. */
    public static void sparseSoftmax(float[] scores, int[] slots, int rows, int topk, int heads) {
        for (@Parallel int r = 0; r < rows; r++) {
            for (@Parallel int h = 0; h < heads; h++) {
                int len = used(slots, r, topk);
                int base = (r * heads + h) * topk;
                float max = scores[base];
                for (int j = 1; j < len; j++) {
                    max = Math.max(max, scores[base + j]);
                }
                float m = Softmax.shift(max);
                float sum = 0f;
                for (int j = 0; j < len; j++) {
                    float e = (float) Math.exp(scores[base + j] - m);
                    scores[base + j] = e;
                    sum += e;
                }
                float inv = sum > 0f ? 1f / sum : 0f;
                for (int j = 0; j < len; j++) {
                    scores[base + j] *= inv;
                }
                for (int j = len; j < topk; j++) {
                    scores[base + j] = 0f;
                }
            }
        }
    }

    /** Absorbed step 4 over the selection: o_lat[r, h, :] = Σ_j p[r, h, j]·c_kv[slots[r, j], :] over the used entries. */
    public static void sparseValues(float[] probs, float[] kvFloats, short[] kvHalves, byte[] kvBytes, int dtype, int[] slots,
                                    float[] oLat, int rows, int topk, int heads, int dc, int dr) {
        for (@Parallel int r = 0; r < rows; r++) {
            for (@Parallel int h = 0; h < heads; h++) {
                for (@Parallel int c = 0; c < dc; c++) {
                    int len = used(slots, r, topk);
                    int pBase = (r * heads + h) * topk;
                    float acc = 0f;
                    for (int j = 0; j < len; j++) {
                        acc += probs[pBase + j] * CacheOps.load(kvFloats, kvHalves, kvBytes, dtype, slots[r * topk + j], c, dc + dr, dc);
                    }
                    oLat[(r * heads + h) * dc + c] = acc;
                }
            }
        }
    }

    /**
     * {@link OnlineSoftmax#splitTiles} over the selection: split s of row r covers its used entries
     * [s·chunk, min(len, (s+1)·chunk)), chunk = ceil(len / numSplits), len = the used entries of slots[r], walked
     * in tiles of {@code tileSize}; each entry's latent row read from its slot. Outputs as splitTiles
     * (oPart [rows, H, numSplits, d_c], mlPart [rows, H, numSplits, 2]), merged by {@link OnlineSoftmax#combine}.
     */
    public static void sparseSplitTiles(float[] qLat, float[] q, float[] kvFloats, short[] kvHalves, byte[] kvBytes, int dtype,
                                        int[] slots, float[] sTile, float[] oPart, float[] mlPart, int rows, int topk,
                                        int heads, int dn, int dr, int dc, float scale, int tileSize, int numSplits) {
        for (@Parallel int r = 0; r < rows; r++) {
            for (@Parallel int h = 0; h < heads; h++) {
                for (@Parallel int s = 0; s < numSplits; s++) {
                    int len = used(slots, r, topk);
                    int chunk = (len + numSplits - 1) / numSplits;
                    int lo = s * chunk;
                    int hi = Math.min(len, lo + chunk);
                    int part = (r * heads + h) * numSplits + s;
                    int acc = part * dc;
                    int tile = part * tileSize;
                    for (int c = 0; c < dc; c++) {
                        oPart[acc + c] = 0f;
                    }
                    float m = 0f;
                    float l = 0f;
                    for (int j0 = lo; j0 < hi; j0 += tileSize) {
                        int n = Math.min(tileSize, hi - j0);
                        float mTile = 0f;
                        for (int jj = 0; jj < n; jj++) {
                            float sc = scale * AbsorbedAttention.latentScore(qLat, q, kvFloats, kvHalves, kvBytes,
                                    dtype, r * heads + h, slots[r * topk + j0 + jj], dn, dr, dc);
                            sTile[tile + jj] = sc;
                            mTile = jj == 0 ? sc : Math.max(mTile, sc);
                        }
                        float mNew = j0 == lo ? mTile : Math.max(m, mTile);
                        float mOld = j0 == lo ? mNew : m;
                        float shift = Softmax.shift(mNew);
                        float alpha = (float) Math.exp(mOld - shift);
                        l *= alpha;
                        for (int c = 0; c < dc; c++) {
                            oPart[acc + c] *= alpha;
                        }
                        for (int jj = 0; jj < n; jj++) {
                            float p = (float) Math.exp(sTile[tile + jj] - shift);
                            l += p;
                            int slot = slots[r * topk + j0 + jj];
                            for (int c = 0; c < dc; c++) {
                                oPart[acc + c] += p * CacheOps.load(kvFloats, kvHalves, kvBytes, dtype, slot, c, dc + dr, dc);
                            }
                        }
                        m = mNew;
                    }
                    float inv = l > 0f ? 1f / l : 0f;
                    for (int c = 0; c < dc; c++) {
                        oPart[acc + c] *= inv;
                    }
                    mlPart[2 * part] = l > 0f ? m : 0f;
                    mlPart[2 * part + 1] = l;
                }
            }
        }
    }
}
