package org.tornadomla.fast;

import java.util.stream.IntStream;

/**
 * java-fast's {@link org.tornadomla.kernels.Absorb}: W^UK into the query, W^UV after the weighted sum. At batch 1
 * each reads 8.4 M numbers of kv_b_proj for DeepSeek-V3 (33.5 MB in f32): bandwidth-bound, so one task per head
 * reads its rows once and applies each to every token row.
 *
 * <p>Versions: 1. one task per head, axpy rows of W^UK into q_lat and dot products with rows of W^UV.
 */
public final class FastAbsorb {
    private FastAbsorb() {
    }

    public static void absorbQuery(float[] q, float[] wkvB, float[] qLat, int rows, int heads, int dn, int dr, int dv, int dc) {
        IntStream.range(0, heads).parallel().forEach(h -> {
            for (int r = 0; r < rows; r++) java.util.Arrays.fill(qLat, (r * heads + h) * dc, (r * heads + h + 1) * dc, 0f);
            for (int d = 0; d < dn; d++) {
                int wRow = (h * (dn + dv) + d) * dc;
                for (int r = 0; r < rows; r++) {
                    int rh = r * heads + h;
                    Vec.axpy(q[rh * (dn + dr) + d], wkvB, wRow, qLat, rh * dc, dc);
                }
            }
        });
    }

    public static void unabsorbValue(float[] oLat, float[] wkvB, float[] o, int rows, int heads, int dn, int dv, int dc) {
        IntStream.range(0, heads).parallel().forEach(h -> {
            for (int v = 0; v < dv; v++) {
                int wRow = (h * (dn + dv) + dn + v) * dc;
                for (int r = 0; r < rows; r++) {
                    int rh = r * heads + h;
                    o[rh * dv + v] = Vec.dot(wkvB, wRow, oLat, rh * dc, dc);
                }
            }
        });
    }
}
