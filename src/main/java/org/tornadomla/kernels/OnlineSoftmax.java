package org.tornadomla.kernels;

import uk.ac.manchester.tornado.api.annotations.Parallel;

/**
 * The TILED path: absorbed attention with an online softmax over tiles of the latent cache
 * (FlashAttention's running max m and sum l, one pass, the scores never materialised beyond one tile),
 * split-KV for parallelism along one long context, and a combine of the splits by their maxima and sums
 * (FlashDecoding). The latent tile is read for the scores (as K) and again for the weighted sum (as V);
 * the KernelContext version of the TornadoVM backend keeps it in local memory for both.
 *
 * <p>Accumulators are fp32 and normalised once, at the end of a split (docs/design.md §1.4).
 *
 * <p>Versions on the kernel ladder (docs/ladder/; `./mla ladder`, H=16, T=1024, reference / java-fast /
 * TornadoVM-PoCL ms per decode step; {@link NaiveAttention} and {@link AbsorbedAttention} have steps 1–4):
 * <ol start="5">
 *   <li>splitTiles with one split, one thread per (row, head): <!-- ladder:5 -->13.5 / 0.368 / 17.6 ms<!-- /ladder -->, the cache read once</li>
 *   <li>splitTiles with 8 splits + combine: <!-- ladder:6 -->13.3 / 0.225 / 10.9 ms<!-- /ladder --></li>
 *   <li>tornado.FlashDecode (KernelContext, latent tile in local memory per head group): <!-- ladder:7 -->– / – / 14.1 ms<!-- /ladder --></li>
 *   <li>step 6 over an int8 cache ({@link CacheOps#load}): <!-- ladder:8 -->27.9 / 0.239 / 13.2 ms<!-- /ladder -->, a quarter of the bytes</li>
 * </ol>
 */
public final class OnlineSoftmax {
    private OnlineSoftmax() {
    }

    /**
     * One thread per (row, head, split). Row r attends to positions 0 … p of its sequence (p from attnMeta, each
     * read from the slot its block table gives, {@link CacheLayout#slot}). Split s of a row with context length len = p + 1 covers positions
     * [s·chunk, min(len, (s+1)·chunk)) with chunk = ceil(len / numSplits), walked in tiles of {@code tileSize}
     * (Bc). Writes the split's normalised o_lat (oPart [rows, H, numSplits, d_c]) and its softmax statistics
     * mlPart [rows, H, numSplits, 2]: the largest score m and the sum l = Σ exp(s_j − m). A split that is empty
     * or whose scores are all −∞ gets l = 0, m = 0 and o = 0. (m and l are kept apart rather than as one
     * log-sum-exp m + ln l, which rounds ln l away once |m| is large: the splits' weights would be wrong.)
     * sTile [rows, H, numSplits, tileSize] is scratch for the tile's scores S.
     */
    public static void splitTiles(float[] qLat, float[] q, float[] kvFloats, short[] kvHalves, byte[] kvBytes,
                                  int dtype, float[] sTile, float[] oPart,
                                  float[] mlPart, int[] attnMeta, int rows, int blockSize,
                                  int heads, int dn, int dr, int dc, float scale, int tileSize, int numSplits) {
        for (@Parallel int r = 0; r < rows; r++) {
            for (@Parallel int h = 0; h < heads; h++) {
                for (@Parallel int s = 0; s < numSplits; s++) {
                    int len = CacheLayout.metaRowPosition(attnMeta, r) + 1;
                    int table = CacheLayout.metaRowTable(attnMeta, r);
                    int chunk = (len + numSplits - 1) / numSplits;
                    int lo = s * chunk;
                    int hi = Math.min(len, lo + chunk);
                    int part = (r * heads + h) * numSplits + s;
                    int acc = part * dc;
                    int tile = part * tileSize;
                    for (int c = 0; c < dc; c++) {
                        oPart[acc + c] = 0f;
                    }
                    float m = 0f;                     // the running max, set by the first tile
                    float l = 0f;
                    for (int j0 = lo; j0 < hi; j0 += tileSize) {
                        int n = Math.min(tileSize, hi - j0);
                        // S = scale·[q_lat | q_pe]·[c_kv | k_pe]ᵀ for the tile, and its max (from its first score)
                        float mTile = 0f;
                        for (int jj = 0; jj < n; jj++) {
                            float sc = scale * AbsorbedAttention.latentScore(qLat, q, kvFloats, kvHalves, kvBytes,
                                    dtype, r * heads + h, CacheLayout.slot(attnMeta, table, j0 + jj, blockSize), dn, dr, dc);
                            sTile[tile + jj] = sc;
                            mTile = jj == 0 ? sc : Math.max(mTile, sc);
                        }
                        float mNew = j0 == lo ? mTile : Math.max(m, mTile);
                        float mOld = j0 == lo ? mNew : m;
                        float shift = Softmax.shift(mNew);
                        // rescale what was accumulated under the old max (0 while it was −∞), then add the tile's P·V
                        float alpha = (float) Math.exp(mOld - shift);
                        l *= alpha;
                        for (int c = 0; c < dc; c++) {
                            oPart[acc + c] *= alpha;
                        }
                        for (int jj = 0; jj < n; jj++) {
                            float p = (float) Math.exp(sTile[tile + jj] - shift);
                            l += p;
                            int slot = CacheLayout.slot(attnMeta, table, j0 + jj, blockSize);
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

    /**
     * o_lat[r, h, c] = Σ_s w_s·oPart[r, h, s, c] / Σ_s w_s with w_s = l_s·exp(m_s − M), M the largest m_s of the
     * splits with l_s &gt; 0. Splits with l_s = 0 (empty, or all scores −∞) weigh 0; if every split has l = 0 the
     * result is 0, never NaN.
     */
    public static void combine(float[] oPart, float[] mlPart, float[] oLat, int rows, int heads, int numSplits,
                               int dc) {
        for (@Parallel int r = 0; r < rows; r++) {
            for (@Parallel int h = 0; h < heads; h++) {
                for (@Parallel int c = 0; c < dc; c++) {
                    int part0 = (r * heads + h) * numSplits;
                    float mMax = 0f;
                    int seen = 0;
                    for (int s = 0; s < numSplits; s++) {
                        if (mlPart[2 * (part0 + s) + 1] > 0f) {
                            float ms = mlPart[2 * (part0 + s)];
                            mMax = seen == 0 ? ms : Math.max(mMax, ms);
                            seen = 1;
                        }
                    }
                    float wSum = 0f;
                    float acc = 0f;
                    for (int s = 0; s < numSplits; s++) {
                        float ls = mlPart[2 * (part0 + s) + 1];
                        float w = ls > 0f ? ls * (float) Math.exp(mlPart[2 * (part0 + s)] - mMax) : 0f;
                        wSum += w;
                        acc += w * oPart[(part0 + s) * dc + c];
                    }
                    oLat[(r * heads + h) * dc + c] = wSum > 0f ? acc / wSum : 0f;
                }
            }
        }
    }
}
