package org.tornadomla.kernels;

import uk.ac.manchester.tornado.api.annotations.Parallel;

/**
 * Weight absorption with kv_b_proj (wkv_b, [H·(d_n+d_v), d_c]): for head h, rows h·(d_n+d_v) … +d_n are
 * W^UK_h [d_n, d_c] and the next d_v rows W^UV_h [d_v, d_c]. Absorption moves W^UK to the query side
 * (once per query, not once per cached token) and W^UV after the weighted sum over the latent.
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
}
