package org.tornadomla.kernels;

import uk.ac.manchester.tornado.api.annotations.Parallel;

/**
 * The ABSORBED path: W^UK folded into the query ({@link Absorb#absorbQuery}), then every head scores and
 * weight-sums the latent cache itself — the latent is both key and value — and W^UV comes after
 * ({@link Absorb#unabsorbValue}). DeepSeek's {@code attn_impl = "absorb"}. Scores are [rows, H, capacity].
 *
 * <p>Versions on the kernel ladder (docs/ladder/; `./mla ladder`, H=16, T=1024, reference / java-fast /
 * TornadoVM-PoCL ms per decode step; steps 1–2 are {@link NaiveAttention}):
 * <ol start="3">
 *   <li>absorbedScores + {@link Softmax} + absorbedValues: <!-- ladder:3 -->13.2 / 0.359 / 14.8 ms<!-- /ladder -->, the cache read twice (4.7 MB)</li>
 *   <li>the same with the query's rope part rotated on the device ({@link Rope}): <!-- ladder:4 -->13.8 / 0.334 / 14.7 ms<!-- /ladder --></li>
 * </ol>
 * Next: {@link OnlineSoftmax} (one pass).
 */
public final class AbsorbedAttention {
    private AbsorbedAttention() {
    }

    /**
     * ABSORBED step 2: score[r, h, j] = scale·(q_lat[r, h]·c_kv[slot(j)] + q_pe[r, h]·k_pe[slot(j)]) for j ≤ the
     * row's position, slot(j) through its sequence's block table (attnMeta, {@link CacheLayout#slot}).
     */
    public static void absorbedScores(float[] qLat, float[] q, float[] kvFloats, short[] kvHalves, byte[] kvBytes,
                                      int dtype, float[] scores, int[] attnMeta, int rows, int capacity, int blockSize,
                                      int heads, int dn, int dr, int dc, float scale) {
        for (@Parallel int r = 0; r < rows; r++) {
            for (@Parallel int h = 0; h < heads; h++) {
                for (@Parallel int j = 0; j < capacity; j++) {
                    if (j <= CacheLayout.metaRowPosition(attnMeta, r)) {
                        int slot = CacheLayout.slot(attnMeta, CacheLayout.metaRowTable(attnMeta, r), j, blockSize);
                        scores[(r * heads + h) * capacity + j] = scale * latentScore(qLat, q, kvFloats, kvHalves, kvBytes,
                                dtype, r * heads + h, slot, dn, dr, dc);
                    }
                }
            }
        }
    }

    /** q_lat[rh]·c_kv[slot] + q_pe[rh]·k_pe[slot], where rh = r·H + h. */
    static float latentScore(float[] qLat, float[] q, float[] kvFloats, short[] kvHalves, byte[] kvBytes, int dtype,
                             int rh, int slot, int dn, int dr, int dc) {
        float acc = 0f;
        for (int c = 0; c < dc; c++) {
            acc += qLat[rh * dc + c] * CacheOps.load(kvFloats, kvHalves, kvBytes, dtype, slot, c, dc + dr, dc);
        }
        int qPe = rh * (dn + dr) + dn;
        for (int d = 0; d < dr; d++) {
            acc += q[qPe + d] * CacheOps.load(kvFloats, kvHalves, kvBytes, dtype, slot, dc + d, dc + dr, dc);
        }
        return acc;
    }

    /** ABSORBED step 4: o_lat[r, h, :] = Σ_j p[r, h, j]·c_kv[slot(j), :] (the latent is the value too). */
    public static void absorbedValues(float[] probs, float[] kvFloats, short[] kvHalves, byte[] kvBytes, int dtype,
                                      float[] oLat, int[] attnMeta, int rows, int capacity, int blockSize,
                                      int heads, int dc, int dr) {
        for (@Parallel int r = 0; r < rows; r++) {
            for (@Parallel int h = 0; h < heads; h++) {
                for (@Parallel int c = 0; c < dc; c++) {
                    int len = CacheLayout.metaRowPosition(attnMeta, r) + 1;
                    int table = CacheLayout.metaRowTable(attnMeta, r);
                    int pBase = (r * heads + h) * capacity;
                    float acc = 0f;
                    // block by block: one table lookup per block, not a division per cached token
                    for (int j0 = 0; j0 < len; j0 += blockSize) {
                        int first = CacheLayout.slot(attnMeta, table, j0, blockSize), n = Math.min(blockSize, len - j0);
                        for (int i = 0; i < n; i++) {
                            acc += probs[pBase + j0 + i] * CacheOps.load(kvFloats, kvHalves, kvBytes, dtype, first + i, c, dc + dr, dc);
                        }
                    }
                    oLat[(r * heads + h) * dc + c] = acc;
                }
            }
        }
    }
}
