package org.tornadomla.fast;

import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * absorb_q at one token row reads W^UK in memory order, at several rows in 64-column blocks: the same sums in the
 * same order, so the same bits, and both equal to a double-precision sum within f32 rounding.
 */
class FastAbsorbTest {
    @Test
    void oneRowInMemoryOrderGivesTheBitsOfTheBlocks() {
        int heads = 3, dr = 64, dv = 128, dc = 512;
        Random rnd = new Random(3);
        for (int dn : new int[] {128, 127}) {   // an odd d_n reaches the last single row
            float[] w = new float[heads * (dn + dv) * dc];
            for (int i = 0; i < w.length; i++) w[i] = rnd.nextFloat() - 0.5f;
            float[] one = new float[heads * (dn + dr)];
            for (int i = 0; i < one.length; i++) one[i] = rnd.nextFloat() - 0.5f;
            float[] two = new float[2 * one.length];   // the same token row twice: the block path
            System.arraycopy(one, 0, two, 0, one.length);
            System.arraycopy(one, 0, two, one.length, one.length);
            float[] lat1 = new float[heads * dc], lat2 = new float[2 * heads * dc];
            for (int h = 0; h < heads; h++) {
                FastAbsorb.absorbQueryHead(one, w, h * (dn + dv) * dc, lat1, 1, heads, h, dn, dr, dc);
                FastAbsorb.absorbQueryHead(two, w, h * (dn + dv) * dc, lat2, 2, heads, h, dn, dr, dc);
            }
            for (int h = 0; h < heads; h++) {
                for (int c = 0; c < dc; c++) {
                    int i = h * dc + c;
                    assertEquals(Float.floatToIntBits(lat2[i]), Float.floatToIntBits(lat1[i]), "dn " + dn + " h" + h + " c" + c);
                    double want = 0;
                    for (int d = 0; d < dn; d++) want += (double) w[(h * (dn + dv) + d) * dc + c] * one[h * (dn + dr) + d];
                    assertTrue(Math.abs(want - lat1[i]) < 1e-4, "dn " + dn + " h" + h + " c" + c + ": " + lat1[i] + " against " + want);
                }
            }
        }
    }
}
