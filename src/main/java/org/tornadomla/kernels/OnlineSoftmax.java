package org.tornadomla.kernels;

import uk.ac.manchester.tornado.api.annotations.Parallel;

/**
 * The TILED path: absorbed attention with an online softmax over tiles of the latent cache
 * (FlashAttention's running max m and sum l, one pass, the scores never materialised beyond one tile),
 * split-KV for parallelism along one long context, and a log-sum-exp combine of the splits
 * (FlashDecoding). The latent tile is read for the scores (as K) and again for the weighted sum (as V);
 * the KernelContext version of the TornadoVM backend keeps it in local memory for both.
 *
 * <p>Accumulators are fp32 and normalised once, at the end of a split (docs/design.md §1.4).
 *
 * <p>Versions on the kernel ladder (docs/ladder/; `./mla ladder`, H=16, T=1024, reference / java-fast /
 * TornadoVM-PoCL ms per decode step; {@link NaiveAttention} and {@link AbsorbedAttention} have steps 1–4):
 * <ol start="5">
 *   <li>splitTiles with one split, one thread per (row, head): 15.7 / 1.02 / 18.5 ms, the cache read once</li>
 *   <li>splitTiles with 8 splits + combine: 16.2 / 0.75 / 12.0 ms</li>
 *   <li>tornado.FlashDecode (KernelContext, latent tile in local memory per head group): – / – / 13.6 ms</li>
 *   <li>step 6 over an int8 cache ({@link CacheOps#load}): 26.4 / 0.99 / 14.8 ms, a quarter of the bytes</li>
 * </ol>
 */
public final class OnlineSoftmax {
    private OnlineSoftmax() {
    }

    /**
     * One thread per (row, head, split). Split s of a row with context length len covers positions
     * [s·chunk, min(len, (s+1)·chunk)) with chunk = ceil(len / numSplits), walked in tiles of {@code tileSize}
     * (Bc). Writes the split's normalised o_lat (oPart [rows, H, numSplits, d_c]) and its log-sum-exp
     * (lsePart [rows, H, numSplits]); an empty split gets lse = {@link Softmax#NEG_INF} and o = 0.
     * sTile [rows, H, numSplits, tileSize] is scratch for the tile's scores S.
     */
    public static void splitTiles(float[] qLat, float[] q, float[] kvF32, short[] kvBf16, byte[] kvInt8,
                                  int dtype, float[] sTile, float[] oPart,
                                  float[] lsePart, int[] seqStart, int batch, int tokens, int capacity,
                                  int heads, int dn, int dr, int dc, float scale, int tileSize, int numSplits) {
        for (@Parallel int r = 0; r < batch * tokens; r++) {
            for (@Parallel int h = 0; h < heads; h++) {
                for (@Parallel int s = 0; s < numSplits; s++) {
                    int b = r / tokens;
                    int len = seqStart[b] + r % tokens + 1;
                    int chunk = (len + numSplits - 1) / numSplits;
                    int lo = s * chunk;
                    int hi = Math.min(len, lo + chunk);
                    int part = (r * heads + h) * numSplits + s;
                    int acc = part * dc;
                    int tile = part * tileSize;
                    for (int c = 0; c < dc; c++) {
                        oPart[acc + c] = 0f;
                    }
                    float m = Softmax.NEG_INF;
                    float l = 0f;
                    for (int j0 = lo; j0 < hi; j0 += tileSize) {
                        int n = Math.min(tileSize, hi - j0);
                        // S = scale·[q_lat | q_pe]·[c_kv | k_pe]ᵀ for the tile, and its max
                        float mTile = Softmax.NEG_INF;
                        for (int jj = 0; jj < n; jj++) {
                            float sc = scale * AbsorbedAttention.latentScore(qLat, q, kvF32, kvBf16, kvInt8,
                                    dtype, r * heads + h, b * capacity + j0 + jj, dn, dr, dc);
                            sTile[tile + jj] = sc;
                            mTile = Math.max(mTile, sc);
                        }
                        // rescale what was accumulated under the old max, then add the tile's P·V
                        float mNew = Math.max(m, mTile);
                        float alpha = (float) Math.exp(m - mNew);
                        l *= alpha;
                        for (int c = 0; c < dc; c++) {
                            oPart[acc + c] *= alpha;
                        }
                        for (int jj = 0; jj < n; jj++) {
                            float p = (float) Math.exp(sTile[tile + jj] - mNew);
                            l += p;
                            int slot = b * capacity + j0 + jj;
                            for (int c = 0; c < dc; c++) {
                                oPart[acc + c] += p * CacheOps.load(kvF32, kvBf16, kvInt8, dtype, slot, c, dc + dr, dc);
                            }
                        }
                        m = mNew;
                    }
                    if (l > 0f) {
                        float inv = 1f / l;
                        for (int c = 0; c < dc; c++) {
                            oPart[acc + c] *= inv;
                        }
                        lsePart[part] = m + (float) Math.log(l);
                    } else {
                        lsePart[part] = Softmax.NEG_INF;
                    }
                }
            }
        }
    }

    /**
     * o_lat[r, h, c] = Σ_s w_s·oPart[r, h, s, c] / Σ_s w_s with w_s = exp(lse_s − max_s lse_s). Empty splits
     * weigh exp(NEG_INF − max) = 0; if every split were empty the result is 0, never NaN.
     */
    public static void combine(float[] oPart, float[] lsePart, float[] oLat, int rows, int heads, int numSplits,
                               int dc) {
        for (@Parallel int r = 0; r < rows; r++) {
            for (@Parallel int h = 0; h < heads; h++) {
                for (@Parallel int c = 0; c < dc; c++) {
                    int part0 = (r * heads + h) * numSplits;
                    float lseMax = Softmax.NEG_INF;
                    for (int s = 0; s < numSplits; s++) {
                        lseMax = Math.max(lseMax, lsePart[part0 + s]);
                    }
                    float wSum = 0f;
                    float acc = 0f;
                    for (int s = 0; s < numSplits; s++) {
                        float w = (float) Math.exp(lsePart[part0 + s] - lseMax);
                        wSum += w;
                        acc += w * oPart[(part0 + s) * dc + c];
                    }
                    oLat[(r * heads + h) * dc + c] = acc / wSum;
                }
            }
        }
    }
}
