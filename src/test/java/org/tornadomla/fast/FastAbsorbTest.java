package org.tornadomla.fast;

import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * absorb_q at one token row reads W^UK in memory order or in strips of 8 vectors, at several rows through Gemm's
 * register blocks: the same sums in the same order, so the same bits, and all equal to a double-precision sum within
 * f32 rounding; at many token rows absorb_q and unabsorb_v equal a double-precision sum.
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
            float[] inOrder = new float[heads * dc], strips = new float[heads * dc];   // both one-row orders, whichever this CPU runs
            for (int h = 0; h < heads; h++) {
                FastAbsorb.absorbQueryHead(one, w, h * (dn + dv) * dc, lat1, 1, heads, h, dn, dr, dc);
                FastAbsorb.absorbQueryHead(two, w, h * (dn + dv) * dc, lat2, 2, heads, h, dn, dr, dc);
                FastAbsorb.absorbInOrder(one, w, h * (dn + dv) * dc, inOrder, h * (dn + dr), h * dc, dn, dc);
                FastAbsorb.absorbStrips(one, w, h * (dn + dv) * dc, strips, h * (dn + dr), h * dc, dn, dc);
            }
            for (int h = 0; h < heads; h++) {
                for (int c = 0; c < dc; c++) {
                    int i = h * dc + c;
                    assertEquals(Float.floatToIntBits(lat2[i]), Float.floatToIntBits(lat1[i]), "dn " + dn + " h" + h + " c" + c);
                    assertEquals(Float.floatToIntBits(lat2[i]), Float.floatToIntBits(inOrder[i]), "in order, dn " + dn + " h" + h + " c" + c);
                    assertEquals(Float.floatToIntBits(lat2[i]), Float.floatToIntBits(strips[i]), "strips, dn " + dn + " h" + h + " c" + c);
                    double want = 0;
                    for (int d = 0; d < dn; d++) want += (double) w[(h * (dn + dv) + d) * dc + c] * one[h * (dn + dr) + d];
                    assertTrue(Math.abs(want - lat1[i]) < 1e-4, "dn " + dn + " h" + h + " c" + c + ": " + lat1[i] + " against " + want);
                }
            }
        }
    }

    /**
     * unabsorb_v over several token rows (with 32 registers, blocks of 4 rows against 4 rows of W^UV_h, and the rows left
     * over one at a time) gives each row what that row alone gives: the same sums in the same order, so equal to within
     * the order of the final lane sum, which C2 and the interpreter take differently (outputs about 1 in size; 1e-5).
     */
    @Test
    void severalRowsOfUnabsorbGiveWhatEachRowAloneGives() {
        int heads = 3, dn = 16, dc = 512, dv = 128;
        Random rnd = new Random(9);
        float[] w = new float[heads * (dn + dv) * dc];
        for (int i = 0; i < w.length; i++) w[i] = rnd.nextFloat() - 0.5f;
        for (int rows : new int[] {4, 7, 8, 37}) {
            float[] oLat = new float[rows * heads * dc], o = new float[rows * heads * dv];
            for (int i = 0; i < oLat.length; i++) oLat[i] = rnd.nextFloat() - 0.5f;
            FastAbsorb.unabsorbValue(oLat, w, o, rows, heads, dn, dv, dc);
            for (int r = 0; r < rows; r++) {
                float[] one = new float[heads * dv];
                FastAbsorb.unabsorbValue(java.util.Arrays.copyOfRange(oLat, r * heads * dc, (r + 1) * heads * dc), w, one, 1, heads, dn, dv, dc);
                for (int i = 0; i < one.length; i++) {
                    assertEquals(one[i], o[r * heads * dv + i], 1e-5f, "rows " + rows + " r" + r + " at " + i);
                }
            }
        }
    }

    @Test
    void manyTokenRowsMatchADoubleSum() {
        // rows that reach each block of the several-row paths: 2 and 7 (Gemm's small-head blocks), 33 and 70 (past
        // unabsorb_v's blocks of 32 token rows, Gemm's 6-row blocks and their remainders); d_c 512 and 96 (a last
        // block of latent dims narrower than 4 vectors); d_v 12 (a remainder after unabsorb_v's 8-row blocks).
        // Tolerance 1e-4: sums of d_n or d_c products of numbers within ±0.5.
        int heads = 3, dn = 16, dr = 8;
        Random rnd = new Random(5);
        for (int dc : new int[] {512, 96}) {
            for (int dv : new int[] {16, 12}) {
                float[] w = new float[heads * (dn + dv) * dc];
                for (int i = 0; i < w.length; i++) w[i] = rnd.nextFloat() - 0.5f;
                for (int rows : new int[] {2, 7, 33, 70}) {
                    String what = "rows " + rows + " d_c " + dc + " d_v " + dv;
                    float[] q = new float[rows * heads * (dn + dr)], oLat = new float[rows * heads * dc];
                    for (int i = 0; i < q.length; i++) q[i] = rnd.nextFloat() - 0.5f;
                    for (int i = 0; i < oLat.length; i++) oLat[i] = rnd.nextFloat() - 0.5f;
                    float[] qLat = new float[rows * heads * dc], o = new float[rows * heads * dv];
                    FastAbsorb.absorbQuery(q, w, qLat, rows, heads, dn, dr, dv, dc);
                    FastAbsorb.unabsorbValue(oLat, w, o, rows, heads, dn, dv, dc);
                    for (int r = 0; r < rows; r++) {
                        for (int h = 0; h < heads; h++) {
                            int rh = r * heads + h;
                            for (int c = 0; c < dc; c++) {
                                double want = 0;
                                for (int d = 0; d < dn; d++) want += (double) w[(h * (dn + dv) + d) * dc + c] * q[rh * (dn + dr) + d];
                                assertTrue(Math.abs(want - qLat[rh * dc + c]) < 1e-4, what + " q_lat r" + r + " h" + h + " c" + c + ": " + qLat[rh * dc + c] + " against " + want);
                            }
                            for (int v = 0; v < dv; v++) {
                                double want = 0;
                                for (int c = 0; c < dc; c++) want += (double) w[(h * (dn + dv) + dn + v) * dc + c] * oLat[rh * dc + c];
                                assertTrue(Math.abs(want - o[rh * dv + v]) < 1e-4, what + " o r" + r + " h" + h + " v" + v + ": " + o[rh * dv + v] + " against " + want);
                            }
                        }
                    }
                }
            }
        }
    }
}
