package org.tornadomla.kernels;

import uk.ac.manchester.tornado.api.annotations.Parallel;

/**
 * Attention over the latent cache, materialising the scores: the NAIVE path (decompress K and V from the
 * latent, as DeepSeek's {@code attn_impl = "naive"}) and the ABSORBED path (score and weight-sum the latent
 * itself, {@code attn_impl = "absorb"}). The TILED path is in {@link OnlineSoftmax}.
 *
 * <p>Scores are [rows, H, capacity]; row r = b·tokens + t sees cache positions j &lt; seqStart[b] + t + 1.
 * Parallel extents are fixed (rows, heads, capacity) and the causal bound is checked inside, so one
 * compiled kernel serves every context length.
 *
 * <p>Versions on the kernel ladder (docs/ladder/; `./mla ladder`, H=16, T=1024, 2-core Xeon, reference /
 * java-fast / TornadoVM-PoCL ms per decode step):
 * <ol>
 *   <li>naiveScores + softmax + naiveValues over cached per-head K/V (MHA): 18.4 / 1.25 / 13.6 ms, 21 MB read</li>
 *   <li>+ decompress from the latent every step: 1,812 / 152 / 1,031 ms — the decompression MLA must avoid</li>
 *   <li>absorbedScores + softmax + absorbedValues (with {@link Absorb}): 21.1 / 1.66 / 21.7 ms, 4.7 MB</li>
 * </ol>
 * The one-pass versions are in {@link OnlineSoftmax}.
 */
public final class LatentAttention {
    private LatentAttention() {
    }

    /** Finite stand-in for −∞ (OpenCL fast-math assumes no infinities); exp(NEG_INF − x) is 0. */
    public static final float NEG_INF = -1e30f;

    /**
     * NAIVE step 1, decompress: kvFull[b, j, :] = wkv_b · c_kv[b, j] for every cached j &lt; seqStart[b] +
     * tokens, i.e. k_nope and v of every head, [batch, capacity, H·(d_n+d_v)]. This is the per-token cost
     * MLA's absorption avoids.
     */
    public static void decompress(float[] kvF32, short[] kvBf16, byte[] kvInt8, int dtype, float[] wkvB,
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
                            acc += wkvB[o * dc + c] * CacheOps.load(kvF32, kvBf16, kvInt8, dtype, slot, c, dc + dr, dc);
                        }
                        kvFull[(b * capacity + j) * width + o] = acc;
                    }
                }
            }
        }
    }

    /** NAIVE step 2: score[r, h, j] = scale·(q_nope[r, h]·k_nope[b, j, h] + q_pe[r, h]·k_pe[b, j]). */
    public static void naiveScores(float[] q, float[] kvFull, float[] kvF32, short[] kvBf16, byte[] kvInt8, int dtype,
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
                            acc += q[qBase + dn + d] * CacheOps.load(kvF32, kvBf16, kvInt8, dtype, slot, dc + d, dc + dr, dc);
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

    /** ABSORBED step 2: score[r, h, j] = scale·(q_lat[r, h]·c_kv[b, j] + q_pe[r, h]·k_pe[b, j]). */
    public static void absorbedScores(float[] qLat, float[] q, float[] kvF32, short[] kvBf16, byte[] kvInt8,
                                      int dtype, float[] scores, int[] seqStart,
                                      int batch, int tokens, int capacity, int heads, int dn, int dr, int dc,
                                      float scale) {
        for (@Parallel int r = 0; r < batch * tokens; r++) {
            for (@Parallel int h = 0; h < heads; h++) {
                for (@Parallel int j = 0; j < capacity; j++) {
                    int b = r / tokens;
                    if (j <= seqStart[b] + r % tokens) {
                        scores[(r * heads + h) * capacity + j] = scale * latentScore(qLat, q, kvF32, kvBf16, kvInt8,
                                dtype, r * heads + h, b * capacity + j, dn, dr, dc);
                    }
                }
            }
        }
    }

    /** q_lat[rh]·c_kv[slot] + q_pe[rh]·k_pe[slot], where rh = r·H + h and slot = b·capacity + j. */
    static float latentScore(float[] qLat, float[] q, float[] kvF32, short[] kvBf16, byte[] kvInt8, int dtype,
                             int rh, int slot, int dn, int dr, int dc) {
        float acc = 0f;
        for (int c = 0; c < dc; c++) {
            acc += qLat[rh * dc + c] * CacheOps.load(kvF32, kvBf16, kvInt8, dtype, slot, c, dc + dr, dc);
        }
        int qPe = rh * (dn + dr) + dn;
        for (int d = 0; d < dr; d++) {
            acc += q[qPe + d] * CacheOps.load(kvF32, kvBf16, kvInt8, dtype, slot, dc + d, dc + dr, dc);
        }
        return acc;
    }

    /** ABSORBED step 4: o_lat[r, h, :] = Σ_j p[r, h, j]·c_kv[b, j, :] (the latent is the value too). */
    public static void absorbedValues(float[] probs, float[] kvF32, short[] kvBf16, byte[] kvInt8, int dtype,
                                      float[] oLat, int[] seqStart, int batch, int tokens, int capacity,
                                      int heads, int dc, int dr) {
        for (@Parallel int r = 0; r < batch * tokens; r++) {
            for (@Parallel int h = 0; h < heads; h++) {
                for (@Parallel int c = 0; c < dc; c++) {
                    int b = r / tokens;
                    int len = seqStart[b] + r % tokens + 1;
                    int pBase = (r * heads + h) * capacity;
                    float acc = 0f;
                    for (int j = 0; j < len; j++) {
                        acc += probs[pBase + j] * CacheOps.load(kvF32, kvBf16, kvInt8, dtype, b * capacity + j, c, dc + dr, dc);
                    }
                    oLat[(r * heads + h) * dc + c] = acc;
                }
            }
        }
    }

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
