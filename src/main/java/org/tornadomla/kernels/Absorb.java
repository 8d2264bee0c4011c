package org.tornadomla.kernels;

import uk.ac.manchester.tornado.api.annotations.Parallel;

/**
 * Weight absorption with kv_b_proj (wkv_b, [H·(d_n+d_v), d_c]): for head h, rows h·(d_n+d_v) … +d_n are
 * W^UK_h [d_n, d_c] and the next d_v rows W^UV_h [d_v, d_c]. Absorption moves W^UK to the query side
 * (once per query, not once per cached token) and W^UV after the weighted sum over the latent.
 *
 * <p>Each kernel comes in three weight forms, as {@link Projections}: f32, bf16 bit patterns ({@code …Bf16})
 * and block-scaled FP8 ({@code …Fp8}: e4m3 codes [H·(d_n+d_v), d_c] and f32 scales [ceil(H·(d_n+d_v)/128),
 * ceil(d_c/128)]), decoded where used, in the f32 kernel's order: on the JVM each gives exactly what the f32
 * kernel gives on the dequantised weights.
 */
public final class Absorb {
    private Absorb() {
    }

    /**
     * q_lat[r, h, c] = Σ_d W^UK_h[d, c]·q_nope[r, h, d]: DeepSeek's
     * {@code einsum("bshd,hdc->bshc", q_nope, wkv_b[:, :qk_nope_head_dim])}. q is [rows, H, d_n+d_r]
     * (q_nope is the first d_n of each head), q_lat is [rows, H, d_c].
     */
    public static void absorbQuery(float[] q, float[] wkvB, float[] qLat, int rows, int heads,
                                   int dn, int dr, int dv, int dc) {
        for (@Parallel int r = 0; r < rows; r++) {
            for (@Parallel int h = 0; h < heads; h++) {
                for (@Parallel int c = 0; c < dc; c++) {
                    int qBase = (r * heads + h) * (dn + dr);
                    int wBase = h * (dn + dv) * dc + c;
                    float acc = 0f;
                    for (int d = 0; d < dn; d++) {
                        acc += wkvB[wBase + d * dc] * q[qBase + d];
                    }
                    qLat[(r * heads + h) * dc + c] = acc;
                }
            }
        }
    }

    /**
     * o[r, h, v] = Σ_c W^UV_h[v, c]·o_lat[r, h, c]: DeepSeek's
     * {@code einsum("bshc,hdc->bshd", x, wkv_b[:, -v_head_dim:])}. o_lat is [rows, H, d_c], o is [rows, H, d_v].
     */
    public static void unabsorbValue(float[] oLat, float[] wkvB, float[] o, int rows, int heads,
                                     int dn, int dv, int dc) {
        for (@Parallel int r = 0; r < rows; r++) {
            for (@Parallel int h = 0; h < heads; h++) {
                for (@Parallel int v = 0; v < dv; v++) {
                    int wBase = (h * (dn + dv) + dn + v) * dc;
                    int oBase = (r * heads + h) * dc;
                    float acc = 0f;
                    for (int c = 0; c < dc; c++) {
                        acc += wkvB[wBase + c] * oLat[oBase + c];
                    }
                    o[(r * heads + h) * dv + v] = acc;
                }
            }
        }
    }

    /** {@link #absorbQuery} with bf16 kv_b_proj (bit patterns). */
    public static void absorbQueryBf16(float[] q, short[] wkvB, float[] pow2, float[] qLat, int rows, int heads,
                                       int dn, int dr, int dv, int dc) {
        for (@Parallel int r = 0; r < rows; r++) {
            for (@Parallel int h = 0; h < heads; h++) {
                for (@Parallel int c = 0; c < dc; c++) {
                    int qBase = (r * heads + h) * (dn + dr);
                    int wBase = h * (dn + dv) * dc + c;
                    float acc = 0f;
                    for (int d = 0; d < dn; d++) {
                        acc += Bf16.decode(wkvB[wBase + d * dc], pow2) * q[qBase + d];
                    }
                    qLat[(r * heads + h) * dc + c] = acc;
                }
            }
        }
    }

    /** {@link #absorbQuery} with block-scaled FP8 kv_b_proj. */
    public static void absorbQueryFp8(float[] q, byte[] wkvB, float[] scales, float[] pow2, float[] qLat, int rows, int heads,
                                      int dn, int dr, int dv, int dc) {
        for (@Parallel int r = 0; r < rows; r++) {
            for (@Parallel int h = 0; h < heads; h++) {
                for (@Parallel int c = 0; c < dc; c++) {
                    int qBase = (r * heads + h) * (dn + dr);
                    int row0 = h * (dn + dv);
                    int blocks = Fp8.weightBlocks(dc);
                    float acc = 0f;
                    for (int d = 0; d < dn; d++) {
                        int row = row0 + d;
                        float wv = Fp8.decode(wkvB[row * dc + c], pow2) * scales[(row / Fp8.WEIGHT_BLOCK) * blocks + c / Fp8.WEIGHT_BLOCK];
                        acc += wv * q[qBase + d];
                    }
                    qLat[(r * heads + h) * dc + c] = acc;
                }
            }
        }
    }

    /** {@link #unabsorbValue} with bf16 kv_b_proj (bit patterns). */
    public static void unabsorbValueBf16(float[] oLat, short[] wkvB, float[] pow2, float[] o, int rows, int heads,
                                         int dn, int dv, int dc) {
        for (@Parallel int r = 0; r < rows; r++) {
            for (@Parallel int h = 0; h < heads; h++) {
                for (@Parallel int v = 0; v < dv; v++) {
                    int wBase = (h * (dn + dv) + dn + v) * dc;
                    int oBase = (r * heads + h) * dc;
                    float acc = 0f;
                    for (int c = 0; c < dc; c++) {
                        acc += Bf16.decode(wkvB[wBase + c], pow2) * oLat[oBase + c];
                    }
                    o[(r * heads + h) * dv + v] = acc;
                }
            }
        }
    }

    /** {@link #unabsorbValue} with block-scaled FP8 kv_b_proj. */
    public static void unabsorbValueFp8(float[] oLat, byte[] wkvB, float[] scales, float[] pow2, float[] o, int rows, int heads,
                                        int dn, int dv, int dc) {
        for (@Parallel int r = 0; r < rows; r++) {
            for (@Parallel int h = 0; h < heads; h++) {
                for (@Parallel int v = 0; v < dv; v++) {
                    int row = h * (dn + dv) + dn + v;
                    int wBase = row * dc;
                    int sBase = (row / Fp8.WEIGHT_BLOCK) * Fp8.weightBlocks(dc);
                    int oBase = (r * heads + h) * dc;
                    float acc = 0f;
                    for (int c = 0; c < dc; c++) {
                        acc += Fp8.decode(wkvB[wBase + c], pow2) * scales[sBase + c / Fp8.WEIGHT_BLOCK] * oLat[oBase + c];
                    }
                    o[(r * heads + h) * dv + v] = acc;
                }
            }
        }
    }
}
