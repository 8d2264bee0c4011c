package org.tornadomla.fast;

import org.junit.jupiter.api.Test;
import org.tornadomla.kernels.Bf16;
import org.tornadomla.kernels.Indexer;
import org.tornadomla.kernels.Meta;
import org.tornadomla.kernels.TopK;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@link FastIndexer} against the reference kernels, bit for bit (the selection must not depend on the backend):
 * the index scores over paged block tables (a shuffled pool), with a padding row, rows that see 1, fewer than a
 * vector, a tile and a half and the whole capacity, head counts even and odd, on 1 to 3 threads; the top-k with
 * ties, ±0, −∞ and NaN scores against the reference kernel and against an independent selection (a full sort
 * by score, then by position).
 */
class FastIndexerTest {
    static final float[] POW2 = Bf16.pow2();

    @Test
    void sortableKeyFromTheBitsEqualsTheReferencesOnEveryKindOfFloat() {
        List<Float> vs = new ArrayList<>(List.of(0f, -0f, Float.MIN_VALUE, -Float.MIN_VALUE, Float.MIN_NORMAL, -Float.MIN_NORMAL,
                Float.MAX_VALUE, -Float.MAX_VALUE, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.NaN, 1f, -1f,
                Math.nextDown(Float.MIN_NORMAL), Math.nextUp(1f)));
        SplittableRandom rnd = new SplittableRandom(5);
        for (int i = 0; i < 200_000; i++) vs.add(Float.intBitsToFloat(rnd.nextInt()));
        for (float v : vs) {
            assertEquals(TopK.sortableKey(v, POW2), FastIndexer.sortableKey(v), "key of " + v + " (bits " + Integer.toHexString(Float.floatToRawIntBits(v)) + ")");
        }
    }

    @Test
    void indexScoresEqualTheReferenceBitForBitOverPagedBlockTables() {
        for (int threads : new int[] {1, 2, 3}) {
            for (int heads : new int[] {64, 5, 1}) {
                scores(heads, 128, 16, threads, 11L * heads + threads);
            }
        }
        scores(32, 64, 8, 2, 3);                // another index_head_dim
    }

    /** The same over keys in position order (Indexer.indexScores, the ladder's step 9), rows ending before and at the end. */
    @Test
    void indexScoresInOrderEqualTheReferenceBitForBit() {
        for (int threads : new int[] {1, 2, 3}) {
            SplittableRandom rnd = new SplittableRandom(threads);
            int heads = 7, dim = 128, positions = 150, rows = 3;
            int[] meta = Meta.contiguous(new int[] {0}, 1, rows, positions);
            for (int r = 0; r < rows; r++) meta[2 * r] = new int[] {2, 97, positions - 1}[r];   // each row's position
            byte[] qCodes = codes(rnd, rows * heads * dim), kCodes = codes(rnd, positions * dim);
            float[] w = new float[rows * heads], kScale = new float[positions];
            for (int i = 0; i < w.length; i++) w[i] = (float) rnd.nextGaussian() * 0.01f;
            for (int i = 0; i < positions; i++) kScale[i] = (float) Math.scalb(1.0, rnd.nextInt(-12, 2));
            float[] ref = new float[rows * positions], fast = new float[rows * positions];
            Arrays.fill(fast, Float.NaN);
            Indexer.indexScores(qCodes, w, kCodes, kScale, ref, meta, rows, heads, dim, positions, POW2);
            try (SpinPool pool = new SpinPool(threads, "test")) {
                ScopedValue.where(Parallel.POOL, pool).run(() ->
                        FastIndexer.indexScores(qCodes, w, kCodes, kScale, fast, meta, rows, heads, dim, positions, POW2));
            }
            for (int i = 0; i < ref.length; i++) {
                assertEquals(Float.floatToRawIntBits(ref[i]), Float.floatToRawIntBits(fast[i]),
                        "threads=" + threads + ": score [row " + i / positions + ", position " + i % positions + "] " + ref[i] + " / " + fast[i]);
            }
        }
    }

    private static void scores(int heads, int dim, int blockSize, int threads, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        int batch = 2, tokens = 3, rows = batch * tokens, capacity = 13 * blockSize;
        Meta.Paged paged = Meta.Paged.shuffled(batch, capacity, blockSize, seed);
        // sequence 0's rows see 1, 2, 3 positions (fewer than a vector), sequence 1's rows end at the capacity
        int[] meta = paged.meta(new int[] {0, capacity - tokens}, batch, tokens);
        meta[2 * 4] = -1;                                   // row 4: a padding row
        int slots = batch * capacity;
        byte[] qCodes = codes(rnd, rows * heads * dim), kCodes = codes(rnd, slots * dim);
        float[] w = new float[rows * heads], kScale = new float[slots];
        for (int i = 0; i < w.length; i++) w[i] = (float) rnd.nextGaussian() * 0.01f;
        for (int i = 0; i < slots; i++) kScale[i] = (float) Math.scalb(1.0, rnd.nextInt(-12, 2));
        float[] ref = new float[rows * capacity], fast = new float[rows * capacity];
        Arrays.fill(fast, Float.NaN);
        Indexer.cachedScores(qCodes, w, kCodes, kScale, ref, meta, rows, heads, dim, capacity, blockSize, POW2);
        try (SpinPool pool = new SpinPool(threads, "test")) {
            ScopedValue.where(Parallel.POOL, pool).run(() ->
                    FastIndexer.cachedScores(qCodes, w, kCodes, kScale, fast, meta, rows, heads, dim, capacity, blockSize, POW2));
        }
        for (int i = 0; i < ref.length; i++) {
            if (Float.floatToRawIntBits(ref[i]) != Float.floatToRawIntBits(fast[i])) {
                throw new AssertionError("H=" + heads + " d=" + dim + " threads=" + threads + ": score [row " + i / capacity + ", position "
                        + i % capacity + "] expected " + ref[i] + " found " + fast[i]);
            }
        }
    }

    /** Random e4m3 codes, the NaN codes (S.1111.111) left out: act_quant saturates at ±448 and never writes them. */
    private static byte[] codes(SplittableRandom rnd, int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            int c;
            do {
                c = rnd.nextInt(256);
            } while ((c & 0x7F) == 0x7F);
            b[i] = (byte) c;
        }
        return b;
    }

    @Test
    void topKSelectsExactlyTheReferencesPositionsTiesToTheLowerPosition() {
        SplittableRandom rnd = new SplittableRandom(9);
        for (int threads : new int[] {1, 2, 3}) {
            for (int k : new int[] {1, 7, 64, 300}) {
                for (int kind = 0; kind < 4; kind++) topK(rnd, k, kind, threads);
            }
        }
    }

    /** kind 0: distinct gaussians; 1: few distinct values (many ties); 2: ties with ±0, −∞, NaN; 3: all equal. */
    private static void topK(SplittableRandom rnd, int k, int kind, int threads) {
        int positions = 1003, batch = 5, rows = batch;               // one row per sequence, decode-like
        int[] start = {0, 5, 340, 1002, 600};                          // the rows see 1, 6, 341, 1003, 601 positions
        int[] meta = Meta.contiguous(start, batch, 1, positions);
        meta[2 * 4] = -1;                                              // row 4: a padding row
        float[] scores = new float[rows * positions];
        for (int i = 0; i < scores.length; i++) {
            scores[i] = switch (kind) {
                case 0 -> (float) rnd.nextGaussian();
                case 1 -> rnd.nextInt(5) * 0.25f;
                case 2 -> new float[] {0f, -0f, Float.NEGATIVE_INFINITY, Float.NaN, 1f, -1f, Float.MIN_VALUE}[rnd.nextInt(7)];
                default -> 3f;
            };
        }
        int[] ref = new int[rows * k], fast = new int[rows * k];
        Arrays.fill(fast, -7);
        TopK.selectTopK(scores, new int[rows * positions], new int[rows * TopK.BINS], ref, meta, rows, positions, k, POW2);
        try (SpinPool pool = new SpinPool(threads, "test")) {
            ScopedValue.where(Parallel.POOL, pool).run(() ->
                    FastIndexer.selectTopK(scores, new int[rows * positions], new int[rows * TopK.BINS], fast, meta, rows, positions, k, POW2));
        }
        String what = "k=" + k + " kind " + kind + " threads " + threads;
        assertArrayEquals(ref, fast, what + ": against the reference kernel");
        for (int r = 0; r < rows; r++) {
            int visible = meta[2 * r] + 1;
            assertArrayEquals(bySort(scores, r * positions, visible, k), Arrays.copyOfRange(fast, r * k, r * k + k), what + ", row " + r);
        }
    }

    /** The rule by a full sort: score descending (NaN last, −0 = +0), then position ascending; the first k, in position order, −1 after. */
    private static int[] bySort(float[] scores, int base, int visible, int k) {
        Integer[] pos = new Integer[visible];
        for (int t = 0; t < visible; t++) pos[t] = t;
        Comparator<Integer> order = Comparator.comparingDouble((Integer t) -> {
            float s = scores[base + t];
            return s != s ? Double.NEGATIVE_INFINITY : -(s == 0f ? 0.0 : s);   // NaN below −∞: handled next
        });
        order = Comparator.comparing((Integer t) -> Float.isNaN(scores[base + t])).thenComparing(order).thenComparing(t -> t);
        Arrays.sort(pos, order);
        int n = Math.min(k, visible);
        int[] chosen = new int[n];
        for (int i = 0; i < n; i++) chosen[i] = pos[i];
        Arrays.sort(chosen);
        int[] out = new int[k];
        Arrays.fill(out, -1);
        System.arraycopy(chosen, 0, out, 0, n);
        return out;
    }

    @Test
    void theFastKernelsArePairedWithTheReference() throws Exception {
        var pairs = FastExecutor.kernels().pairs();
        assertEquals(FastIndexer.class.getMethod("cachedScores", byte[].class, float[].class, byte[].class, float[].class, float[].class,
                int[].class, int.class, int.class, int.class, int.class, int.class, float[].class),
                pairs.get(Indexer.class.getMethod("cachedScores", byte[].class, float[].class, byte[].class, float[].class, float[].class,
                        int[].class, int.class, int.class, int.class, int.class, int.class, float[].class)));
        assertEquals(FastIndexer.class.getMethod("indexScores", byte[].class, float[].class, byte[].class, float[].class, float[].class,
                int[].class, int.class, int.class, int.class, int.class, float[].class),
                pairs.get(Indexer.class.getMethod("indexScores", byte[].class, float[].class, byte[].class, float[].class, float[].class,
                        int[].class, int.class, int.class, int.class, int.class, float[].class)));
        assertEquals(FastIndexer.class.getMethod("selectTopK", float[].class, int[].class, int[].class, int[].class, int[].class,
                int.class, int.class, int.class, float[].class),
                pairs.get(TopK.class.getMethod("selectTopK", float[].class, int[].class, int[].class, int[].class, int[].class,
                        int.class, int.class, int.class, float[].class)));
    }
}
