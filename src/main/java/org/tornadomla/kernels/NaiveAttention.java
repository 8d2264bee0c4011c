package org.tornadomla.kernels;

import uk.ac.manchester.tornado.api.annotations.Parallel;

/**
 * The NAIVE path: attention with K and V decompressed from the latent, as DeepSeek's
 * {@code attn_impl = "naive"} and as multi-head attention computes it. Scores are [rows, H, capacity]; row
 * r, at position p of its sequence (attnMeta, {@link CacheLayout}), sees that sequence's positions j ≤ p. Parallel extents are fixed (rows, heads,
 * capacity) and the causal bound is checked inside, so one compiled kernel serves every context length.
 *
 * <p>Versions on the kernel ladder (docs/ladder/; `./mla ladder`, H=16, T=1024, 2-core Xeon, reference /
 * java-fast / TornadoVM-PoCL ms per decode step):
 * <ol>
 *   <li>naiveScores + {@link Softmax} + naiveValues over cached per-head K/V (MHA's cache): <!-- ladder:1 -->11.7 / 1.06 / 9.74 ms<!-- /ladder -->,
 *       21 MB read</li>
 *   <li>+ decompress from the latent cache every step: <!-- ladder:2 -->1,184 / 93.3 / 1,178 ms<!-- /ladder --> — the work absorption removes</li>
 * </ol>
 * Next: {@link AbsorbedAttention}.
 */
public final class NaiveAttention {
    private NaiveAttention() {
    }

    /**
     * NAIVE step 1, decompress: kvFull[slot, :] = wkv_b · c_kv[slot] for the slot of every cached position
     * j &lt; cache_seqlens[b] of every sequence b (attnMeta, {@link CacheLayout}), i.e. k_nope and v of every
     * head, [cache slots, H·(d_n+d_v)]: the decompressed cache is paged like the latent one. This is the
     * per-token cost MLA's absorption avoids. (Sequences that share a block write the same numbers twice.)
     */
    public static void decompress(float[] kvFloats, short[] kvHalves, byte[] kvBytes, int dtype, float[] wkvB,
                                  float[] kvFull, int[] attnMeta, int rows, int seqs, int capacity, int blockSize,
                                  int heads, int dn, int dv, int dc, int dr) {
        int width = heads * (dn + dv);
        for (@Parallel int b = 0; b < seqs; b++) {
            for (@Parallel int j = 0; j < capacity; j++) {
                for (@Parallel int o = 0; o < width; o++) {
                    if (j < CacheLayout.metaSeqLength(attnMeta, rows, b)) {
                        int slot = CacheLayout.slot(attnMeta, CacheLayout.metaSeqTable(attnMeta, rows, b), j, blockSize);
                        float acc = 0f;
                        for (int c = 0; c < dc; c++) {
                            acc += wkvB[o * dc + c] * CacheOps.load(kvFloats, kvHalves, kvBytes, dtype, slot, c, dc + dr, dc);
                        }
                        kvFull[slot * width + o] = acc;
                    }
                }
            }
        }
    }

    /**
     * NAIVE step 2: score[r, h, j] = scale·(q_nope[r, h]·k_nope[slot(j), h] + q_pe[r, h]·k_pe[slot(j)]) for
     * j ≤ the row's position (scores [rows, H, capacity]).
     */
    public static void naiveScores(float[] q, float[] kvFull, float[] kvFloats, short[] kvHalves, byte[] kvBytes, int dtype,
                                   float[] scores, int[] attnMeta, int rows, int capacity, int blockSize,
                                   int heads, int dn, int dr, int dv, int dc, float scale) {
        int width = heads * (dn + dv);
        for (@Parallel int r = 0; r < rows; r++) {
            for (@Parallel int h = 0; h < heads; h++) {
                for (@Parallel int j = 0; j < capacity; j++) {
                    if (j <= CacheLayout.metaRowPosition(attnMeta, r)) {
                        int qBase = (r * heads + h) * (dn + dr);
                        int slot = CacheLayout.slot(attnMeta, CacheLayout.metaRowTable(attnMeta, r), j, blockSize);
                        int kBase = slot * width + h * (dn + dv);
                        float acc = 0f;
                        for (int d = 0; d < dn; d++) {
                            acc += q[qBase + d] * kvFull[kBase + d];
                        }
                        for (int d = 0; d < dr; d++) {
                            acc += q[qBase + dn + d] * CacheOps.load(kvFloats, kvHalves, kvBytes, dtype, slot, dc + d, dc + dr, dc);
                        }
                        scores[(r * heads + h) * capacity + j] = acc * scale;
                    }
                }
            }
        }
    }

    /** NAIVE step 4: o[r, h, :] = Σ_j p[r, h, j]·v[slot(j), h, :]. */
    public static void naiveValues(float[] probs, float[] kvFull, float[] o, int[] attnMeta, int rows, int capacity, int blockSize,
                                   int heads, int dn, int dv) {
        int width = heads * (dn + dv);
        for (@Parallel int r = 0; r < rows; r++) {
            for (@Parallel int h = 0; h < heads; h++) {
                for (@Parallel int v = 0; v < dv; v++) {
                    int len = CacheLayout.metaRowPosition(attnMeta, r) + 1;
                    int table = CacheLayout.metaRowTable(attnMeta, r);
                    int pBase = (r * heads + h) * capacity;
                    float acc = 0f;
                    // block by block: one table lookup per block, not a division per cached token
                    for (int j0 = 0; j0 < len; j0 += blockSize) {
                        int first = CacheLayout.slot(attnMeta, table, j0, blockSize), n = Math.min(blockSize, len - j0);
                        for (int i = 0; i < n; i++) {
                            acc += probs[pBase + j0 + i] * kvFull[(first + i) * width + h * (dn + dv) + dn + v];
                        }
                    }
                    o[(r * heads + h) * dv + v] = acc;
                }
            }
        }
    }
}
