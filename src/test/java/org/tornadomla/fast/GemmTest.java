package org.tornadomla.fast;

import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Both sets of micro-kernels, the 16-register one (AVX2) and the 32-register one (AVX-512), whichever the
 * machine would pick: each against a plain double-precision sum, at head counts and tile lengths that reach
 * every block shape and every remainder loop.
 */
class GemmTest {
    private static final int[] HEADS = {1, 5, 8, 13, 16, 20, 32, 40, 64, 128};
    private static final int[] ROWS = {1, 3, 4, 5, 6, 7, 8, 15, 16, 17, 63, 64};

    @Test
    void scoresMatchADoubleSumWithEitherRegisterFile() {
        Random rnd = new Random(7);
        for (int w : new int[] {576, 288, 10, 9}) {        // 9: odd, so the pairs set runs the other kernels
            for (int heads : HEADS) {
                int hp = Gemm.paddedHeads(heads);
                float[] q = random(rnd, w * hp);   // Q[c, h], packed below in each register file's layout
                for (int n : ROWS) {
                    float[] k = random(rnd, n * Gemm.ROW);
                    for (String set : SETS) {
                        float[] qt = pack(q, !set.equals("regs16"), set.startsWith("regs32-pairs"), w, heads, hp);
                        float[] st = new float[n * hp];
                        java.util.Arrays.fill(st, Float.NaN);   // every (row, head) must be written
                        atRow(set, qt, hp, w, 0, k, 0, w, n, st, 0, hp);
                        checkScores(q, hp, k, Gemm.ROW, w, n, heads, st, set + " w" + w + " H" + heads + " n" + n);
                    }
                }
            }
        }
    }

    /**
     * Qᵀ of the second token row, packed in column blocks of 64 and one odd block as packQueries cuts them, against the
     * definition: every (column, head) of this machine's layout holds scale·q_lat (c &lt; d_c) or scale·q_pe (c ≥ d_c) of
     * that head, and the padding heads zero; nothing outside the row is written.
     */
    @Test
    void packedQueryHoldsTheScaledLatentAndRopeColumnsOfEachHead() {
        Random rnd = new Random(11);
        int dn = 128, rows = 2, r = 1;
        float scale = 0.1f;
        for (int[] g : new int[][] {{512, 64}, {256, 32}, {9, 3}, {9, 4}}) {
            int dc = g[0], dr = g[1], w = dc + dr;
            for (int heads : new int[] {1, 16, 20, 40, 128}) for (boolean pairs : new boolean[] {false, true}) {
                int hp = Gemm.paddedHeads(heads), q0 = w * hp;          // row 1's Qᵀ after row 0's
                float[] qLat = random(rnd, rows * heads * dc), q = random(rnd, rows * heads * (dn + dr));
                float[] qt = new float[rows * w * hp + 7];
                java.util.Arrays.fill(qt, Float.NaN);
                for (int c0 = 0; c0 < w; c0 += 64) Gemm.packQuery(qLat, q, r, heads, dn, dr, dc, scale, qt, q0, hp, c0, Math.min(w, c0 + 64), pairs);
                for (int c = 0; c < w; c++) {
                    for (int h = 0; h < hp; h++) {
                        float want = h >= heads ? 0f
                                : scale * (c < dc ? qLat[(r * heads + h) * dc + c] : q[(r * heads + h) * (dn + dr) + dn + c - dc]);
                        float got = qt[q0 + Gemm.qtIndex(Gemm.REGS32, pairs, c, h, w, hp)];
                        assertTrue(got == want, "w" + w + " H" + heads + (pairs ? " pairs" : "") + " c" + c + " h" + h + ": " + got + ", expected " + want);
                    }
                }
                for (int i = 0; i < q0; i++) assertTrue(Float.isNaN(qt[i]), "row 0's Qᵀ written at " + i);
                for (int i = rows * w * hp; i < qt.length; i++) assertTrue(Float.isNaN(qt[i]), "written past the rows at " + i);
            }
        }
    }

    @Test
    void rowsWiderThan576GoInColumnChunks() {
        Random rnd = new Random(5);
        for (int w : new int[] {704, 1200}) {
            for (int heads : new int[] {8, 16, 24, 128}) {
                int hp = Gemm.paddedHeads(heads), n = 23, stride = w + 3;
                float[] q = random(rnd, w * hp), k = random(rnd, n * stride), st = new float[n * hp];
                Gemm.scores(pack(q, Gemm.REGS32, Gemm.PAIR_SCORES, w, heads, hp), 0, hp, k, 0, stride, w, n, st, 0);
                checkScores(q, hp, k, stride, w, n, heads, st, "w" + w + " H" + heads);
            }
        }
    }

    @Test
    void narrowRowsAreReadInPlaceAtTheirOwnStride() {
        // rows w apart: a divisor of 576 (288, 192, 144, 96) is read in place as ROW/w interleaved sets of rows, any
        // other width is copied to the stride 576 first; every (row, head) written, either way
        Random rnd = new Random(9);
        for (int w : new int[] {288, 192, 144, 96, 280}) {
            for (int heads : new int[] {8, 16, 40, 128}) {
                int hp = Gemm.paddedHeads(heads);
                float[] q = random(rnd, w * hp);
                for (int n : new int[] {1, 2, 3, 5, 17, 63, 64}) {
                    float[] k = random(rnd, n * w), st = new float[n * hp];
                    java.util.Arrays.fill(st, Float.NaN);
                    Gemm.scores(pack(q, Gemm.REGS32, Gemm.PAIR_SCORES, w, heads, hp), 0, hp, k, 0, w, w, n, st, 0);
                    checkScores(q, hp, k, w, w, n, heads, st, "w" + w + " H" + heads + " n" + n);
                    if (576 % w != 0) continue;
                    // the interleaved sets through either register file's kernels, their rows m·hp apart in st
                    int m = 576 / w;
                    for (String kernels : SETS) {
                        float[] qt = pack(q, !kernels.equals("regs16"), kernels.startsWith("regs32-pairs"), w, heads, hp);
                        java.util.Arrays.fill(st, Float.NaN);
                        for (int set = 0; set < m && set < n; set++) {
                            int rowsOfSet = (n - set + m - 1) / m;
                            atRow(kernels, qt, hp, w, 0, k, set * w, w, rowsOfSet, st, set * hp, m * hp);
                        }
                        checkScores(q, hp, k, w, w, n, heads, st, kernels + " interleaved w" + w + " H" + heads + " n" + n);
                    }
                }
            }
        }
    }

    @Test
    void aColumnChunkOfQtWithEitherRegisterFile() {
        // columns [c0, c0 + w) of a Qᵀ qw columns wide: the micro-kernels must find each panel's chunk (Gemm.scores
        // takes this path for rows wider than 576, on the machine's register file only)
        Random rnd = new Random(3);
        int qw = 1200, c0 = 576, w = 400, n = 21;
        for (int heads : new int[] {16, 40, 64, 128}) {
            int hp = Gemm.paddedHeads(heads);
            float[] q = random(rnd, qw * hp), k = random(rnd, n * Gemm.ROW), chunk = new float[w * hp];
            for (int c = 0; c < w; c++) System.arraycopy(q, (c0 + c) * hp, chunk, c * hp, hp);
            for (String set : SETS) {
                float[] qt = pack(q, !set.equals("regs16"), set.startsWith("regs32-pairs"), qw, heads, hp), st = new float[n * hp];
                atRow(set, qt, hp, qw, c0, k, 0, w, n, st, 0, hp);
                checkScores(chunk, hp, k, Gemm.ROW, w, n, heads, st, "chunk " + set + " H" + heads);
            }
        }
    }

    /**
     * The score kernel sets: 16 registers, 32 registers (a single head vector reading ahead, s16x1Ahead), 32 with a
     * single head vector on 256-bit halves (Gemm.HALF_SCORES, a Zen 4's choice; where the preferred vector is narrower
     * than 512 bits it is the 32 set), 32 with the tile touched first (Gemm.TOUCH_SCORES, a Zen 5's: s16x1), and 32 with
     * a single head vector's Qᵀ in column pairs (Gemm.PAIR_SCORES, a Zen 4's: s8x2p, then s1x2p for the rows left over),
     * also with half set: the pairs' layout decides the kernel.
     */
    private static final String[] SETS = {"regs16", "regs32", "regs32-half", "regs32-touched", "regs32-pairs", "regs32-pairs-half"};

    private static void atRow(String set, float[] qt, int hp, int qw, int c0, float[] k, int off, int w, int n, float[] st, int s0, int sts) {
        switch (set) {
            case "regs16" -> Gemm.atRow16(qt, 0, hp, qw, c0, k, off, w, n, st, s0, sts);
            case "regs32" -> Gemm.atRow32(qt, 0, hp, qw, c0, k, off, w, n, st, s0, sts, false, false, false);
            case "regs32-half" -> Gemm.atRow32(qt, 0, hp, qw, c0, k, off, w, n, st, s0, sts, true, false, false);
            case "regs32-touched" -> Gemm.atRow32(qt, 0, hp, qw, c0, k, off, w, n, st, s0, sts, false, true, false);
            case "regs32-pairs" -> Gemm.atRow32(qt, 0, hp, qw, c0, k, off, w, n, st, s0, sts, false, false, true);
            case "regs32-pairs-half" -> Gemm.atRow32(qt, 0, hp, qw, c0, k, off, w, n, st, s0, sts, true, false, true);
            default -> throw new IllegalArgumentException(set);
        }
    }

    /** Q[c, h] (padding heads zero) as Gemm.qtIndex lays it out for that register file (and column pairs or not). */
    private static float[] pack(float[] q, boolean regs32, boolean pairs, int w, int heads, int hp) {
        float[] qt = new float[w * hp];
        java.util.Arrays.fill(qt, Float.NaN);
        for (int c = 0; c < w; c++) for (int h = 0; h < hp; h++) qt[Gemm.qtIndex(regs32, pairs, c, h, w, hp)] = h < heads ? q[c * hp + h] : 0f;
        for (float x : qt) assertTrue(!Float.isNaN(x), "the layout leaves a hole");
        return qt;
    }

    private static void checkScores(float[] q, int hp, float[] k, int stride, int w, int n, int heads, float[] st, String where) {
        for (int j = 0; j < n; j++) {
            for (int h = 0; h < hp; h++) {
                double want = 0;
                if (h < heads) for (int c = 0; c < w; c++) want += (double) q[c * hp + h] * k[j * stride + c];
                check(want, st[j * hp + h], w, "scores " + where + " j" + j + " h" + h);
            }
        }
    }

    @Test
    void valuesMatchADoubleSumWithEitherRegisterFile() {
        Random rnd = new Random(11);
        int dc = 512;
        // 576 (Gemm.ROW): the 16-register kernels for rows in order; 600: those for any stride
        for (int stride : new int[] {576, 600}) for (int heads : HEADS) {
            for (int n : ROWS) {
                int capacity = n + 3;
                float[] p = random(rnd, heads * capacity), k = random(rnd, n * stride), o0 = random(rnd, heads * dc);
                for (int[] cols : new int[][] {{0, dc}, {0, 40}, {24, 512}}) {
                    for (boolean regs32 : new boolean[] {false, true}) {
                        float[] o = o0.clone();
                        if (regs32) Gemm.values32(p, 0, capacity, 1, heads, k, 0, stride, n, cols[0], cols[1], o, 0, dc, false);
                        else Gemm.values16(p, 0, capacity, 1, heads, k, 0, stride, n, cols[0], cols[1], o, 0, dc);
                        for (int h = 0; h < heads; h++) {
                            for (int c = 0; c < dc; c++) {
                                double want = o0[h * dc + c];
                                if (c >= cols[0] && c < cols[1]) for (int j = 0; j < n; j++) want += (double) p[h * capacity + j] * k[j * stride + c];
                                check(want, o[h * dc + c], n, "values regs" + (regs32 ? 32 : 16) + " stride " + stride + " H" + heads + " n" + n + " cols " + cols[0] + "-" + cols[1] + " h" + h + " c" + c);
                            }
                        }
                    }
                }
            }
        }
    }

    @Test
    void valuesReadingAheadGiveTheSameBitsAndStayInsideTheArray() {
        // a tile of n rows followed by a next tile (or by nothing: the reads ahead are clamped into k), at head counts
        // that take the 8-head blocks (up to 16) and others; the products are the same FMAs in the same order
        Random rnd = new Random(13);
        int dc = 512, stride = 576;
        for (int heads : new int[] {8, 13, 16, 24, 128}) {
            for (int n : new int[] {1, 7, 64}) {
                for (int after : new int[] {0, 5, 64}) {
                    int capacity = n + 3;
                    float[] p = random(rnd, heads * capacity), k = random(rnd, (n + after) * stride), o0 = random(rnd, heads * dc);
                    float[] plain = o0.clone(), ahead = o0.clone();
                    Gemm.values(p, 0, capacity, 1, heads, k, 0, stride, n, 0, dc, plain, 0, dc);
                    Gemm.valuesReadingAhead(p, 0, capacity, 1, heads, k, 0, stride, n, 0, dc, ahead, 0, dc);
                    org.junit.jupiter.api.Assertions.assertArrayEquals(plain, ahead, "H" + heads + " n" + n + " rows after " + after);
                    for (int c = 0; c < dc; c += 37) {
                        double want = o0[c];
                        for (int j = 0; j < n; j++) want += (double) p[j] * k[j * stride + c];
                        check(want, ahead[c], n, "values read ahead H" + heads + " n" + n + " c" + c);
                    }
                }
            }
        }
    }

    /** f32 sums of terms in [-1, 1]: within 1e-6 per term of the double sum. */
    private static void check(double want, float got, int terms, String where) {
        assertTrue(Math.abs(want - got) <= 1e-6 * terms + 1e-6, where + ": " + got + " against " + want);
    }

    private static float[] random(Random rnd, int n) {
        float[] a = new float[n];
        for (int i = 0; i < n; i++) a[i] = rnd.nextFloat() * 2 - 1;
        return a;
    }
}
