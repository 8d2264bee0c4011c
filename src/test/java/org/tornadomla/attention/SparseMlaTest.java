package org.tornadomla.attention;

import org.junit.jupiter.api.Test;
import org.tornadomla.MlaException;
import org.tornadomla.TestData;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.cache.PagedCacheSpec;
import org.tornadomla.cache.internal.CacheStorage;
import org.tornadomla.config.MlaConfig;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The FlashMLA-style sparse entry point against a double-precision softmax over exactly the named rows, with
 * FlashMLA's test of the unread rows: poisoned with NaN, they change nothing.
 */
class SparseMlaTest {
    static final MlaConfig C = TestData.small();
    static final int H = 3, SQ = 2, TOPK = 7;

    record Setup(LatentCache cache, int[] seqIds, float[] q, int[] indices, int[][] positions) {
    }

    /** Two sequences of a paged cache with shuffled blocks; each query row names some positions, −1 between them. */
    static Setup setup(CacheDtype dtype, long seed) {
        LatentCache cache = LatentCache.paged(C, PagedCacheSpec.builder().maxSequences(3).maxSequenceLength(40).numBlocks(24).blockSize(4)
                .dtype(dtype).build());
        CacheStorage.of(cache).shuffleFreeBlocks(seed);
        int a = cache.addSequence(), b = cache.addSequence();
        int[] lengths = {29, 13};
        int[] ids = {a, b};
        for (int s = 0; s < 2; s++) {
            cache.write(ids[s], TestData.gaussian(seed + s, lengths[s] * C.kvLoraRank()), TestData.gaussian(seed + 10 + s, lengths[s] * C.qkRopeHeadDim()));
        }
        SplittableRandom rnd = new SplittableRandom(seed);
        int[] indices = new int[2 * SQ * TOPK];
        int[][] positions = new int[2 * SQ][];
        for (int s = 0; s < 2; s++) {
            int[] table = cache.blockTable(ids[s]);
            for (int i = 0; i < SQ; i++) {
                int r = s * SQ + i;
                List<Integer> chosen = new ArrayList<>();
                for (int j = 0; j < TOPK; j++) {
                    int slot = -1;
                    if (rnd.nextInt(4) != 0) {                        // about one entry in four unused, anywhere in the row
                        int p = rnd.nextInt(lengths[s]);
                        while (chosen.contains(p)) p = rnd.nextInt(lengths[s]);
                        chosen.add(p);
                        slot = table[p / 4] * 4 + p % 4;
                    }
                    indices[r * TOPK + j] = slot;
                }
                positions[r] = chosen.stream().mapToInt(Integer::intValue).toArray();
            }
        }
        return new Setup(cache, ids, TestData.gaussian(seed + 20, 2 * SQ * H * (C.kvLoraRank() + C.qkRopeHeadDim())), indices, positions);
    }

    @Test
    void theOutputAndLogSumExpAreASoftmaxOverTheNamedRowsAlone() {
        for (CacheDtype dt : CacheDtype.values()) {
            Setup s = setup(dt, 5);
            float scale = (float) C.softmaxScale();
            SparseMla.Output got = SparseMla.attend(s.cache(), s.seqIds(), s.q(), SQ, H, s.indices(), TOPK, scale);
            int dc = C.kvLoraRank(), dr = C.qkRopeHeadDim();
            for (int r = 0; r < 2 * SQ; r++) {
                int seq = s.seqIds()[r / SQ];
                float[] lat = s.cache().latent(seq), pe = s.cache().ropeKey(seq);    // the stored (decoded) values
                for (int h = 0; h < H; h++) {
                    int qb = (r * H + h) * (dc + dr);
                    int[] ps = s.positions()[r];
                    double[] sc = new double[ps.length];
                    double m = Double.NEGATIVE_INFINITY;
                    for (int j = 0; j < ps.length; j++) {
                        double acc = 0;
                        for (int c = 0; c < dc; c++) acc += (double) s.q()[qb + c] * lat[ps[j] * dc + c];
                        for (int d = 0; d < dr; d++) acc += (double) s.q()[qb + dc + d] * pe[ps[j] * dr + d];
                        sc[j] = scale * acc;
                        m = Math.max(m, sc[j]);
                    }
                    double sum = 0;
                    for (double v : sc) sum += Math.exp(v - m);
                    double[] want = new double[dc];
                    for (int j = 0; j < ps.length; j++) {
                        double p = Math.exp(sc[j] - m) / sum;
                        for (int c = 0; c < dc; c++) want[c] += p * lat[ps[j] * dc + c];
                    }
                    float[] o = java.util.Arrays.copyOfRange(got.out(), (r * H + h) * dc, (r * H + h + 1) * dc);
                    TestData.assertClose(want, o, 1e-5, dt + " row " + r + " head " + h);
                    assertEquals(m + Math.log(sum), got.lse()[r * H + h], 1e-5 * Math.max(1, Math.abs(m)), dt + " lse, row " + r + " head " + h);
                }
            }
        }
    }

    @Test
    void rowsNoIndexNamesAreNeverRead() {
        Setup s = setup(CacheDtype.F32, 9);
        float scale = (float) C.softmaxScale();
        SparseMla.Output clean = SparseMla.attend(s.cache(), s.seqIds(), s.q(), SQ, H, s.indices(), TOPK, scale);
        java.util.Set<Integer> named = new java.util.HashSet<>();
        for (int slot : s.indices()) named.add(slot);
        float[] storage = CacheStorage.of(s.cache()).floats();
        int width = C.kvLoraRank() + C.qkRopeHeadDim(), poisoned = 0;
        for (int slot = 0; slot < s.cache().numBlocks() * s.cache().blockSize(); slot++) {
            if (named.contains(slot)) continue;
            for (int i = 0; i < width; i++) storage[slot * width + i] = Float.NaN;          // an f32 cache: rows of width floats
            poisoned++;
        }
        assertTrue(poisoned > 60, "poisoned " + poisoned + " rows");
        SparseMla.Output again = SparseMla.attend(s.cache(), s.seqIds(), s.q(), SQ, H, s.indices(), TOPK, scale);
        assertArrayEquals(clean.out(), again.out());
        assertArrayEquals(clean.lse(), again.lse());
    }

    @Test
    void aRowWithoutUsedEntriesIsZeroWithLseMinusInfinity() {
        Setup s = setup(CacheDtype.BF16, 3);
        int[] idx = s.indices().clone();
        for (int j = 0; j < TOPK; j++) idx[j] = -1;
        SparseMla.Output o = SparseMla.attend(s.cache(), s.seqIds(), s.q(), SQ, H, idx, TOPK, 0.1f);
        for (int i = 0; i < H * C.kvLoraRank(); i++) assertEquals(0f, o.out()[i]);
        for (int h = 0; h < H; h++) assertEquals(Float.NEGATIVE_INFINITY, o.lse()[h]);
    }

    @Test
    void aSlotOfAnotherSequenceOrPastItsLengthIsOneLine() {
        Setup s = setup(CacheDtype.F32, 4);
        int otherSeqSlot = s.cache().blockTable(s.seqIds()[1])[0] * 4;       // a slot of sequence b, named in a row of a
        int[] idx = s.indices().clone();
        idx[0] = otherSeqSlot;
        String m = assertThrows(MlaException.class, () -> SparseMla.attend(s.cache(), s.seqIds(), s.q(), SQ, H, idx, TOPK, 0.1f)).getMessage();
        assertTrue(m.startsWith("sparse attention: indices[0, 0, 0] = " + otherSeqSlot + " is not a cached position of sequence 0"), m);
        idx[0] = -7;
        assertTrue(assertThrows(MlaException.class, () -> SparseMla.attend(s.cache(), s.seqIds(), s.q(), SQ, H, idx, TOPK, 0.1f)).getMessage()
                .contains("= -7 is not a cached position"));
        int[] lastBlock = s.cache().blockTable(s.seqIds()[1]);
        idx[0] = lastBlock[lastBlock.length - 1] * 4 + 3;                    // sequence b holds 13 tokens: offset 3 of its 4th block is past them
        int[] ids = {s.seqIds()[1], s.seqIds()[0]};
        assertTrue(assertThrows(MlaException.class, () -> SparseMla.attend(s.cache(), ids, s.q(), SQ, H, idx, TOPK, 0.1f)).getMessage()
                .contains("is not a cached position of sequence 1 (its 13 tokens"));
        assertTrue(assertThrows(MlaException.class, () -> SparseMla.attend(s.cache(), s.seqIds(), new float[3], SQ, H, s.indices(), TOPK, 0.1f))
                .getMessage().startsWith("sparse attention: q must be [2, 2, 3, "));
    }
}
