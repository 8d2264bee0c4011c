package org.tornadomla.kernels;

import uk.ac.manchester.tornado.api.annotations.Parallel;

/**
 * The NAIVE path: attention with K and V decompressed from the latent, as DeepSeek's
 * {@code attn_impl = "naive"} and as multi-head attention computes it. Scores are [rows, H, capacity]; row
 * r = b·tokens + t sees cache positions j &lt; seqStart[b] + t + 1. Parallel extents are fixed (rows, heads,
 * capacity) and the causal bound is checked inside, so one compiled kernel serves every context length.
 *
 * <p>Versions on the kernel ladder (docs/ladder/; `./mla ladder`, H=16, T=1024, 2-core Xeon, reference /
 * java-fast / TornadoVM-PoCL ms per decode step):
 * <ol>
 *   <li>naiveScores + {@link Softmax} + naiveValues over cached per-head K/V (MHA's cache): <!-- ladder:1 -->9.01 / 0.564 / 10.1 ms<!-- /ladder -->,
 *       21 MB read</li>
 *   <li>+ decompress from the latent cache every step: <!-- ladder:2 -->945 / 65.6 / 1,366 ms<!-- /ladder --> — the work absorption removes</li>
 * </ol>
 * Next: {@link AbsorbedAttention}.
 */
public final class NaiveAttention {
    private NaiveAttention() {
    }

    /**
     * NAIVE step 1, decompress: kvFull[b, j, :] = wkv_b · c_kv[b, j] for every cached j &lt; seqStart[b] +
     * tokens, i.e. k_nope and v of every head, [batch, capacity, H·(d_n+d_v)]. This is the per-token cost
     * MLA's absorption avoids.
     */
    public static void decompress(float[] kvFloats, short[] kvHalves, byte[] kvBytes, int dtype, float[] wkvB,
                                  float[] kvFull, int[] seqStart, int batch, int tokens, int capacity,
                                  int heads, int dn, int dv, int dc, int dr) {
        int width = heads * (dn + dv);
        for (@Parallel int b = 0; b < batch; b++) {
            for (@Parallel int j = 0; j < capacity; j++) {
                for (@Parallel int o = 0; o < width; o++) {
                    if (j < seqStart[b] + tokens) {
                        int slot = b * capacity + j;
                        float acc = 0f;
                        for (int c = 0; c < dc; c++) {
                            acc += wkvB[o * dc + c] * CacheOps.load(kvFloats, kvHalves, kvBytes, dtype, slot, c, dc + dr, dc);
                        }
                        kvFull[(b * capacity + j) * width + o] = acc;
                    }
                }
            }
        }
    }

    /** NAIVE step 2: score[r, h, j] = scale·(q_nope[r, h]·k_nope[b, j, h] + q_pe[r, h]·k_pe[b, j]). */
    public static void naiveScores(float[] q, float[] kvFull, float[] kvFloats, short[] kvHalves, byte[] kvBytes, int dtype,
                                   float[] scores, int[] seqStart, int batch, int tokens,
                                   int capacity, int heads, int dn, int dr, int dv, int dc, float scale) {
        int width = heads * (dn + dv);
        for (@Parallel int r = 0; r < batch * tokens; r++) {
            for (@Parallel int h = 0; h < heads; h++) {
                for (@Parallel int j = 0; j < capacity; j++) {
                    int b = r / tokens;
                    if (j <= seqStart[b] + r % tokens) {
                        int qBase = (r * heads + h) * (dn + dr);
                        int kBase = (b * capacity + j) * width + h * (dn + dv);
                        int slot = b * capacity + j;
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

    /** NAIVE step 4: o[r, h, :] = Σ_j p[r, h, j]·v[b, j, h, :]. */
    public static void naiveValues(float[] probs, float[] kvFull, float[] o, int[] seqStart, int batch,
                                   int tokens, int capacity, int heads, int dn, int dv) {
        int width = heads * (dn + dv);
        for (@Parallel int r = 0; r < batch * tokens; r++) {
            for (@Parallel int h = 0; h < heads; h++) {
                for (@Parallel int v = 0; v < dv; v++) {
                    int b = r / tokens;
                    int len = seqStart[b] + r % tokens + 1;
                    int pBase = (r * heads + h) * capacity;
                    float acc = 0f;
                    for (int j = 0; j < len; j++) {
                        acc += probs[pBase + j] * kvFull[(b * capacity + j) * width + h * (dn + dv) + dn + v];
                    }
                    o[(r * heads + h) * dv + v] = acc;
                }
            }
        }
    }
}
