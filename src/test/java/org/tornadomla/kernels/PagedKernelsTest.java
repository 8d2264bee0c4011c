package org.tornadomla.kernels;

import org.junit.jupiter.api.Test;
import org.tornadomla.TestData;
import org.tornadomla.fast.FastAttention;
import org.tornadomla.fast.FastNaive;
import org.tornadomla.fast.FastOnlineSoftmax;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Every attention kernel (reference and java-fast) over a paged copy of a contiguous f32 cache, its blocks
 * shuffled over the pool, equals the same kernel over the contiguous cache: block sizes that cut java-fast's
 * 64-row tiles (1, 5), that divide them (16) and that equal them (64), and contexts that end inside blocks.
 * The metadata is built by hand ({@link Meta}), independently of LatentCache.
 */
class PagedKernelsTest {
    static final int B = 2, T = 2, CAP = 320, H = 5, DN = 8, DR = 8, DV = 6, DC = 40, W = DC + DR;
    static final int[] SEQ_START = {CAP - T - 3, 129};
    static final float SCALE = 0.08f;

    @Test
    void slotFollowsTheBlockTable() {
        int[] table = {9, 9, 9, 4, 0, 7};          // a table row starting at index 3: blocks 4, 0, 7
        assertEquals(4 * 16 + 5, CacheLayout.slot(table, 3, 5, 16));
        assertEquals(0 * 16 + 15, CacheLayout.slot(table, 3, 31, 16));
        assertEquals(7 * 16, CacheLayout.slot(table, 3, 32, 16));
    }

    @Test
    void everyAttentionKernelReadsThroughTheBlockTable() {
        int rows = B * T;
        float[] cache = TestData.gaussian(1, B * CAP * W);
        float[] qLat = TestData.gaussian(2, rows * H * DC), q = TestData.gaussian(3, rows * H * (DN + DR));
        float[] wkvB = TestData.gaussian(4, H * (DN + DV) * DC);
        int[] contiguous = Meta.contiguous(SEQ_START, B, T, CAP);
        for (int bs : new int[] {1, 5, 16, 64}) {
            Meta.Paged p = Meta.Paged.shuffled(B, CAP, bs, 17 + bs);
            float[] pool = p.rows(cache, B, W);
            int[] paged = p.meta(SEQ_START, B, T);
            for (int impl = 0; impl < 2; impl++) {
                String what = (impl == 0 ? "reference" : "java-fast") + ", blocks of " + bs;
                Attention ref = run(impl, cache, contiguous, CAP, qLat, q, wkvB), got = run(impl, pool, paged, bs, qLat, q, wkvB);
                // the reference's scalar sums are the same bits in either layout; java-fast's two runs may fall on either
                // side of a C2 compile, whose Vector API sums and FMAs differ from the interpreter's in the last bit (as
                // OffloadTest notes; a naive value 0.67355508 against 0.673554 was seen), so it gets that rounding
                double tol = impl == 0 ? 1e-6 : 1e-5;
                TestData.assertClose(ref.absorbed, got.absorbed, tol, what + ": absorbed");
                TestData.assertClose(ref.tiled, got.tiled, tol, what + ": tiled");
                TestData.assertClose(ref.naive, got.naive, tol, what + ": naive");
            }
        }
    }

    record Attention(float[] absorbed, float[] tiled, float[] naive) {
    }

    private static Attention run(int impl, float[] kv, int[] meta, int bs, float[] qLat, float[] q, float[] wkvB) {
        int rows = B * T, parts = rows * H * 3;
        short[] h = new short[1];
        byte[] by = new byte[1];
        float[] scores = new float[rows * H * CAP], oLat = new float[rows * H * DC];
        float[] sTile = new float[parts * 16], oPart = new float[parts * DC], ml = new float[2 * parts], tiled = new float[rows * H * DC];
        float[] kvFull = new float[kv.length / W * H * (DN + DV)], naiveScores = new float[rows * H * CAP], o = new float[rows * H * DV];
        if (impl == 0) {
            AbsorbedAttention.absorbedScores(qLat, q, kv, h, by, CacheLayout.F32, scores, meta, rows, CAP, bs, H, DN, DR, DC, SCALE);
            Softmax.softmax(scores, meta, rows, CAP, H);
            AbsorbedAttention.absorbedValues(scores, kv, h, by, CacheLayout.F32, oLat, meta, rows, CAP, bs, H, DC, DR);
            OnlineSoftmax.splitTiles(qLat, q, kv, h, by, CacheLayout.F32, sTile, oPart, ml, meta, rows, bs, H, DN, DR, DC, SCALE, 16, 3);
            OnlineSoftmax.combine(oPart, ml, tiled, rows, H, 3, DC);
            NaiveAttention.decompress(kv, h, by, CacheLayout.F32, wkvB, kvFull, meta, rows, B, CAP, bs, H, DN, DV, DC, DR);
            NaiveAttention.naiveScores(q, kvFull, kv, h, by, CacheLayout.F32, naiveScores, meta, rows, CAP, bs, H, DN, DR, DV, DC, SCALE);
            Softmax.softmax(naiveScores, meta, rows, CAP, H);
            NaiveAttention.naiveValues(naiveScores, kvFull, o, meta, rows, CAP, bs, H, DN, DV);
        } else {
            FastAttention.absorbedScores(qLat, q, kv, h, by, CacheLayout.F32, scores, meta, rows, CAP, bs, H, DN, DR, DC, SCALE);
            FastAttention.softmax(scores, meta, rows, CAP, H);
            FastAttention.absorbedValues(scores, kv, h, by, CacheLayout.F32, oLat, meta, rows, CAP, bs, H, DC, DR);
            FastOnlineSoftmax.splitTiles(qLat, q, kv, h, by, CacheLayout.F32, sTile, oPart, ml, meta, rows, bs, H, DN, DR, DC, SCALE, 16, 3);
            FastOnlineSoftmax.combine(oPart, ml, tiled, rows, H, 3, DC);
            FastNaive.decompress(kv, h, by, CacheLayout.F32, wkvB, kvFull, meta, rows, B, CAP, bs, H, DN, DV, DC, DR);
            FastNaive.naiveScores(q, kvFull, kv, h, by, CacheLayout.F32, naiveScores, meta, rows, CAP, bs, H, DN, DR, DV, DC, SCALE);
            FastAttention.softmax(naiveScores, meta, rows, CAP, H);
            FastNaive.naiveValues(naiveScores, kvFull, o, meta, rows, CAP, bs, H, DN, DV);
        }
        return new Attention(oLat, tiled, o);
    }
}
