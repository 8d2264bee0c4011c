package org.tornadomla.fast;

import org.junit.jupiter.api.Test;
import org.tornadomla.TestData;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.cache.internal.CacheStorage;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.kernels.CacheLayout;
import org.tornadomla.kernels.OnlineSoftmax;
import org.tornadomla.kernels.SparseAttention;

import java.util.Arrays;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * {@link FastSparseAttention} against the {@link SparseAttention} reference kernels, one kernel at a time: random
 * selections of cache slots scattered over the whole cache (any order, as a paged pool's block tables give them),
 * rows that use none, 1, an odd number, more than a tile and all k of their entries (−1 after), head counts that
 * fill vectors and leave odd heads, DeepSeek's 512 + 64 row and narrower ones (256 + 32, MiniCPM3's), every cache
 * dtype, 1 to 3 threads. Scores, probabilities and outputs within 1e-4 relative to max(1, |reference|) (the sums
 * are taken in another order); the unused entries exactly −∞ (scores) and 0 (probabilities). Rows no selection
 * names are NaN and must not reach any output.
 */
class FastSparseAttentionTest {
    static final double TOL = 1e-4;

    @Test
    void gatheredScoresSoftmaxValuesAndSplitsMatchTheReference() {
        for (CacheDtype dt : CacheDtype.values()) {
            for (int heads : new int[] {3, 16, 40, 64}) check(heads, 96, 16, dt, 2, 4);
            check(128, 512, 64, dt, 2, 4);
            check(40, 256, 32, dt, 3, 1);
        }
    }

    @Test
    void oneRowCutIntoPiecesOnSeveralThreads() {
        for (int threads : new int[] {1, 2, 3}) {
            try (SpinPool pool = new SpinPool(threads, "test")) {
                ScopedValue.where(Parallel.POOL, pool).run(() -> {
                    check(64, 512, 64, CacheDtype.F32, 1, 1);
                    check(17, 96, 16, CacheDtype.BF16, 1, 2);
                });
            }
        }
    }

    private static void check(int heads, int dc, int dr, CacheDtype dt, int rows, int splitsMax) {
        int dn = 8, cap = 400, topk = 200, w = dc + dr;
        String what = "H=" + heads + " dc=" + dc + " dr=" + dr + " " + dt + " rows=" + rows;
        MlaConfig c = new MlaConfig(64, heads, 0, dc, dn, dr, 8, 10000, 1e-6, 4096, 1, null);
        LatentCache cache = new LatentCache(c, 2, cap, dt);
        for (int b = 0; b < 2; b++) cache.write(b, TestData.gaussian(11 + b, cap * dc), TestData.gaussian(21 + b, cap * dr));
        SplittableRandom rnd = new SplittableRandom(heads * 31L + dc + rows);
        // each row's used entries: distinct slots of the whole cache in a random order, −1 after
        int[] lens = {topk, 1, 0, 131, 37, 64};
        int[] slots = new int[rows * topk];
        boolean[] named = new boolean[2 * cap];
        for (int r = 0; r < rows; r++) {
            int[] perm = permutation(rnd, 2 * cap);
            int len = lens[r % lens.length];
            for (int j = 0; j < topk; j++) slots[r * topk + j] = j < len ? perm[j] : -1;
            for (int j = 0; j < len; j++) named[perm[j]] = true;
        }
        poisonUnnamed(cache, dt, named, dc, w);
        float[] f = CacheStorage.of(cache).floats();
        short[] h = CacheStorage.of(cache).halves();
        byte[] by = CacheStorage.of(cache).bytes();
        float[] qLat = TestData.gaussian(1, rows * heads * dc), q = TestData.gaussian(2, rows * heads * (dn + dr));
        float scale = 0.09f;

        float[] sRef = new float[rows * heads * topk], sFast = new float[rows * heads * topk];
        Arrays.fill(sFast, Float.NaN);
        SparseAttention.sparseScores(qLat, q, f, h, by, dt.code, slots, sRef, rows, topk, heads, dn, dr, dc, scale);
        FastSparseAttention.sparseScores(qLat, q, f, h, by, dt.code, slots, sFast, rows, topk, heads, dn, dr, dc, scale);
        close(sRef, sFast, what + " scores");

        SparseAttention.sparseSoftmax(sRef, slots, rows, topk, heads);
        FastSparseAttention.sparseSoftmax(sFast, slots, rows, topk, heads);
        close(sRef, sFast, what + " softmax");

        float[] oRef = new float[rows * heads * dc], oFast = new float[rows * heads * dc];
        Arrays.fill(oFast, Float.NaN);
        SparseAttention.sparseValues(sRef, f, h, by, dt.code, slots, oRef, rows, topk, heads, dc, dr);
        FastSparseAttention.sparseValues(sRef, f, h, by, dt.code, slots, oFast, rows, topk, heads, dc, dr);
        close(oRef, oFast, what + " values");

        for (int splits = 1; splits <= splitsMax; splits += 3) {
            int parts = rows * heads * splits;
            float[] sTile = new float[parts * 16];
            float[] opRef = new float[parts * dc], mlRef = new float[2 * parts], olRef = new float[rows * heads * dc];
            float[] opFast = new float[parts * dc], mlFast = new float[2 * parts], olFast = new float[rows * heads * dc];
            SparseAttention.sparseSplitTiles(qLat, q, f, h, by, dt.code, slots, sTile, opRef, mlRef, rows, topk, heads, dn, dr, dc, scale, 16, splits);
            OnlineSoftmax.combine(opRef, mlRef, olRef, rows, heads, splits, dc);
            FastSparseAttention.sparseSplitTiles(qLat, q, f, h, by, dt.code, slots, sTile, opFast, mlFast, rows, topk, heads, dn, dr, dc, scale, 16, splits);
            OnlineSoftmax.combine(opFast, mlFast, olFast, rows, heads, splits, dc);
            close(mlRef, mlFast, what + " tiled (m, l), " + splits + " splits");
            close(olRef, olFast, what + " tiled, " + splits + " splits");
            close(oRef, olFast, what + " tiled vs absorbed, " + splits + " splits");
        }
    }

    /** Every cache slot that no selection names set to NaN (each dtype's storage), so that a read of one shows. */
    private static void poisonUnnamed(LatentCache cache, CacheDtype dt, boolean[] named, int dc, int w) {
        CacheStorage s = CacheStorage.of(cache);
        for (int slot = 0; slot < named.length; slot++) {
            if (named[slot]) continue;
            switch (dt) {
                case F32 -> Arrays.fill(s.floats(), slot * w, slot * w + w, Float.NaN);
                case BF16 -> Arrays.fill(s.halves(), slot * w, slot * w + w, (short) 0x7FC0);
                case INT8 -> {
                    s.floats()[CacheLayout.int8ScaleIndex(slot, 0)] = Float.NaN;     // the row's two scales
                    s.floats()[CacheLayout.int8ScaleIndex(slot, 1)] = Float.NaN;
                }
                case FP8 -> {
                    for (int i = 0; i < dc; i += CacheLayout.FP8_BLOCK) s.floats()[CacheLayout.fp8ScaleIndex(slot, i, dc)] = Float.NaN;
                    for (int k = 0; k < w - dc; k++) s.halves()[CacheLayout.fp8RopeIndex(slot, k, w - dc)] = (short) 0x7FC0;
                }
            }
        }
    }

    private static int[] permutation(SplittableRandom rnd, int n) {
        int[] p = new int[n];
        for (int i = 0; i < n; i++) p[i] = i;
        for (int i = n - 1; i > 0; i--) {
            int k = rnd.nextInt(i + 1), t = p[i];
            p[i] = p[k];
            p[k] = t;
        }
        return p;
    }

    /** Equal infinities (the unused entries' −∞) exactly, finite numbers within TOL·max(1, |expected|). */
    private static void close(float[] expected, float[] actual, String what) {
        for (int i = 0; i < expected.length; i++) {
            float e = expected[i], a = actual[i];
            boolean ok = Float.isInfinite(e) ? e == a : Math.abs(a - e) <= TOL * Math.max(1, Math.abs(e));
            if (!ok) fail(what + ": element " + i + " expected " + e + " found " + a + " (tolerance " + TOL + ")");
        }
    }
}
