package org.tornadomla.kernels;

import org.junit.jupiter.api.Test;
import org.tornadomla.fast.FastAttention;
import org.tornadomla.fast.FastOnlineSoftmax;

import static org.tornadomla.kernels.SoftmaxEdgeCases.DC;
import static org.tornadomla.kernels.SoftmaxEdgeCases.DN;
import static org.tornadomla.kernels.SoftmaxEdgeCases.DR;
import static org.tornadomla.kernels.SoftmaxEdgeCases.H;
import static org.tornadomla.kernels.SoftmaxEdgeCases.LEN;
import static org.tornadomla.kernels.SoftmaxEdgeCases.assertMatches;

/**
 * Every softmax of the JVM backends (the reference kernels and java-fast's) on {@link SoftmaxEdgeCases}:
 * the two-pass softmax, the absorbed path over a cache, and the tiled path with every tiling from one split
 * to more splits than tokens, against double precision (1e-5).
 */
class SoftmaxEdgesTest {
    interface SoftmaxKernel {
        void run(float[] scores, int[] attnMeta, int rows, int capacity, int heads);
    }

    @Test
    void twoPassSoftmaxOnReferenceAndFast() {
        for (SoftmaxEdgeCases.Row row : SoftmaxEdgeCases.rows()) {
            for (int impl = 0; impl < 2; impl++) {
                SoftmaxKernel k = impl == 0 ? Softmax::softmax : FastAttention::softmax;
                int n = row.scores().length;
                // one row, one head, capacity n + 2 (the two slots past len must stay untouched)
                float[] s = java.util.Arrays.copyOf(row.scores(), n + 2);
                s[n] = 42f;
                s[n + 1] = Float.NaN;
                k.run(s, Meta.contiguous(new int[] {n - 1}, 1, 1, n + 2), 1, n + 2, 1);
                assertMatches(row.expected(), java.util.Arrays.copyOf(s, n), row.name() + (impl == 0 ? " (reference)" : " (java-fast)"));
                if (s[n] != 42f || !Float.isNaN(s[n + 1])) throw new AssertionError(row.name() + ": wrote past len");
            }
        }
    }

    interface Split {
        void run(float[] qLat, float[] q, float[] kvFloats, short[] kvHalves, byte[] kvBytes, int dtype, float[] sTile, float[] oPart,
                 float[] mlPart, int[] attnMeta, int rows, int blockSize, int heads, int dn, int dr, int dc, float scale,
                 int tileSize, int numSplits);
    }

    interface Combine {
        void run(float[] oPart, float[] mlPart, float[] oLat, int rows, int heads, int numSplits, int dc);
    }

    @Test
    void tiledPathOnReferenceAndFastForEveryTiling() {
        int[][] tilings = {{64, 1}, {1, 1}, {2, 3}, {4, 2}, {3, 5}, {1, 13}, {2, 20}};    // {tile, splits}; 20 > LEN: empty splits
        for (SoftmaxEdgeCases.Attention a : SoftmaxEdgeCases.attention()) {
            for (int[] t : tilings) {
                for (int impl = 0; impl < 2; impl++) {
                    Split split = impl == 0 ? OnlineSoftmax::splitTiles : FastOnlineSoftmax::splitTiles;
                    Combine combine = impl == 0 ? OnlineSoftmax::combine : FastOnlineSoftmax::combine;
                    int parts = H * t[1];
                    float[] sTile = new float[parts * t[0]], oPart = new float[parts * DC], ml = new float[2 * parts], o = new float[H * DC];
                    split.run(a.qLat(), a.q(), a.kv(), new short[1], new byte[1], CacheLayout.F32, sTile, oPart, ml, Meta.contiguous(new int[] {LEN - 1}, 1, 1, LEN),
                            1, LEN, H, DN, DR, DC, a.scale(), t[0], t[1]);
                    combine.run(oPart, ml, o, 1, H, t[1], DC);
                    assertMatches(a.expected(), o, a.name() + ", tile " + t[0] + ", splits " + t[1] + (impl == 0 ? " (reference)" : " (java-fast)"));
                }
            }
        }
    }

    @Test
    void absorbedPathOnReferenceAndFast() {
        for (SoftmaxEdgeCases.Attention a : SoftmaxEdgeCases.attention()) {
            for (int impl = 0; impl < 2; impl++) {
                float[] scores = new float[H * LEN], o = new float[H * DC];
                int[] start = Meta.contiguous(new int[] {LEN - 1}, 1, 1, LEN);
                if (impl == 0) {
                    AbsorbedAttention.absorbedScores(a.qLat(), a.q(), a.kv(), new short[1], new byte[1], CacheLayout.F32, scores, start, 1, LEN, LEN, H, DN, DR, DC, a.scale());
                    Softmax.softmax(scores, start, 1, LEN, H);
                    AbsorbedAttention.absorbedValues(scores, a.kv(), new short[1], new byte[1], CacheLayout.F32, o, start, 1, LEN, LEN, H, DC, DR);
                } else {
                    FastAttention.absorbedScores(a.qLat(), a.q(), a.kv(), new short[1], new byte[1], CacheLayout.F32, scores, start, 1, LEN, LEN, H, DN, DR, DC, a.scale());
                    FastAttention.softmax(scores, start, 1, LEN, H);
                    FastAttention.absorbedValues(scores, a.kv(), new short[1], new byte[1], CacheLayout.F32, o, start, 1, LEN, LEN, H, DC, DR);
                }
                assertMatches(a.expected(), o, a.name() + (impl == 0 ? " (reference)" : " (java-fast)"));
            }
        }
    }

    /** The batched forms the device tests use, checked here on the JVM (rows and sequences of different lengths). */
    @Test
    void batchedProblemsOnReferenceAndFast() {
        SoftmaxEdgeCases.RowBatch rb = SoftmaxEdgeCases.rowBatch();
        float[] s = rb.scores().clone();
        Softmax.softmax(s, rb.attnMeta(), rb.rows(), rb.capacity(), 1);
        SoftmaxEdgeCases.assertRows(rb, s, "(reference, batched)");
        s = rb.scores().clone();
        FastAttention.softmax(s, rb.attnMeta(), rb.rows(), rb.capacity(), 1);
        SoftmaxEdgeCases.assertRows(rb, s, "(java-fast, batched)");
        SoftmaxEdgeCases.Batch b = SoftmaxEdgeCases.batch();
        int[] seqStart = new int[b.batch()];
        java.util.Arrays.fill(seqStart, LEN - 1);
        int[] start = Meta.contiguous(seqStart, b.batch(), 1, LEN);
        int splits = 3, parts = b.batch() * H * splits;
        float[] oPart = new float[parts * DC], ml = new float[2 * parts], o = new float[b.batch() * H * DC];
        OnlineSoftmax.splitTiles(b.qLat(), b.q(), b.kv(), new short[1], new byte[1], CacheLayout.F32, new float[parts * 2], oPart, ml, start,
                b.batch(), LEN, H, DN, DR, DC, 1f, 2, splits);
        OnlineSoftmax.combine(oPart, ml, o, b.batch(), H, splits, DC);
        SoftmaxEdgeCases.assertBatch(b, o, "(reference, batched)");
    }

    @Test
    void theShiftIsTheMaxOrZeroForMinusInfinity() {
        for (float x : new float[] {0f, -0f, 1f, -1f, 3e38f, -Float.MAX_VALUE, -Float.MIN_VALUE, -1e-40f, Float.MIN_NORMAL}) {
            if (Float.compare(Softmax.shift(x), x) != 0 && !(x == 0f && Softmax.shift(x) == 0f)) throw new AssertionError("shift(" + x + ")");
        }
        if (Softmax.shift(Float.NEGATIVE_INFINITY) != 0f) throw new AssertionError("shift(-inf) must be 0");
    }
}
