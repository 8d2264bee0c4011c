package org.tornadomla.fast;

import org.tornadomla.cache.internal.CacheStorage;
import org.junit.jupiter.api.Test;
import org.tornadomla.TestData;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.kernels.AbsorbedAttention;
import org.tornadomla.kernels.OnlineSoftmax;
import org.tornadomla.kernels.Softmax;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The fast attention kernels against the reference kernels, one kernel at a time, over the shapes that pick
 * each micro-kernel of {@link Gemm}: head counts that fill 4, 2 and 1 vectors and leave odd heads (3 … 136),
 * contexts that leave rows over after the 8- and 16-row blocks and end inside a tile, latent widths that
 * are not a multiple of the 64-dim value blocks, DeepSeek's 512 + 64 (the rows the score kernels read in
 * place), MiniCPM3's 256 + 32 and two wider (column chunks), every cache dtype, two sequences of different lengths.
 * Relative error ≤ 1e-4 (the sums are taken in another order).
 */
class FastKernelsTest {
    static final int DN = 8, DR = 16;

    @Test
    void scoresSoftmaxValuesAndSplitsMatchTheReference() {
        for (int heads : new int[] {3, 12, 16, 32, 40, 64, 72, 136}) {
            for (int dc : new int[] {96, 64}) {
                for (CacheDtype dt : CacheDtype.values()) {
                    check(heads, dc, dt, 150, 2, 2);
                }
            }
        }
    }

    @Test
    void oneTokenRowCutIntoPiecesOfTheContext() {
        // batch 1, one token: the kernels cut the context into pieces per thread and add the parts' sums
        for (CacheDtype dt : CacheDtype.values()) check(128, 64, dt, 700, 1, 1);
        check(16, 96, CacheDtype.F32, 1000, 1, 1);
        check(16, 512, 64, CacheDtype.F32, 640, 1, 1);   // a capacity of whole 128-row tiles: the tiled path's in-place tiles of 128
    }

    @Test
    void deepSeeksLatentRowIsReadInPlaceNarrowerOnesAtItsStrideAndWiderOnesInChunks() {
        // d_c + d_r = 576, Gemm.ROW: the score kernels' constant stride, the rows read where they lie (f32) or
        // decoded at that stride; 288 (MiniCPM3's 256 + 32) decoded or copied to it; 592 and 1088 are wider than
        // ROW: column chunks of 576 (and 16 or 512), their scores added
        for (int heads : new int[] {1, 16, 17, 48, 128}) {
            for (CacheDtype dt : CacheDtype.values()) check(heads, 512, 64, dt, 150, 2, 2);
        }
        for (CacheDtype dt : CacheDtype.values()) {
            check(40, 256, 32, dt, 150, 2, 2);
            check(16, 528, 64, dt, 150, 2, 2);
            check(40, 1024, 64, dt, 150, 1, 1);
        }
    }

    private static void check(int heads, int dc, CacheDtype dt, int cap, int B, int T) {
        check(heads, dc, DR, dt, cap, B, T);
    }

    private static void check(int heads, int dc, int dr, CacheDtype dt, int cap, int B, int T) {
        String what = "H=" + heads + " dc=" + dc + " dr=" + dr + " " + dt + " B=" + B + " T=" + T;
        MlaConfig c = new MlaConfig(64, heads, 0, dc, DN, dr, 8, 10000, 1e-6, 4096, 1, null);
        LatentCache cache = new LatentCache(c, B, cap, dt);
        for (int b = 0; b < B; b++) cache.write(b, TestData.gaussian(11 + b, cap * dc), TestData.gaussian(21 + b, cap * dr));
        int rows = B * T;
        float[] qLat = TestData.gaussian(1, rows * heads * dc), q = TestData.gaussian(2, rows * heads * (DN + dr));
        int[] seqStart = java.util.Arrays.copyOf(new int[] {cap - T - 7, 61}, B);   // partial tiles and blocks, different lengths
        int[] meta = org.tornadomla.kernels.Meta.contiguous(seqStart, B, T, cap);
        float scale = 0.09f;
        float[] f = CacheStorage.of(cache).floats();
        short[] h = CacheStorage.of(cache).halves();
        byte[] by = CacheStorage.of(cache).bytes();

        float[] sRef = new float[rows * heads * cap], sFast = new float[rows * heads * cap];
        AbsorbedAttention.absorbedScores(qLat, q, f, h, by, dt.code, sRef, meta, rows, cap, cap, heads, DN, dr, dc, scale);
        FastAttention.absorbedScores(qLat, q, f, h, by, dt.code, sFast, meta, rows, cap, cap, heads, DN, dr, dc, scale);
        TestData.assertClose(sRef, sFast, 1e-4, what + " scores");
        // on the step's spinning pools the tiles go to whichever thread is free: the same kernels per tile, the same bits
        for (SpinPool pool : POOLS) {
            float[] sPool = new float[sFast.length];
            ScopedValue.where(Parallel.POOL, pool).run(() ->
                    FastAttention.absorbedScores(qLat, q, f, h, by, dt.code, sPool, meta, rows, cap, cap, heads, DN, dr, dc, scale));
            for (int i = 0; i < sPool.length; i++) {
                assertEquals(Float.floatToIntBits(sFast[i]), Float.floatToIntBits(sPool[i]), what + " scores on a pool of " + pool.threads() + " threads, at " + i);
            }
        }

        Softmax.softmax(sRef, meta, rows, cap, heads);
        FastAttention.softmax(sFast, meta, rows, cap, heads);
        TestData.assertClose(sRef, sFast, 1e-4, what + " softmax");

        float[] oRef = new float[rows * heads * dc], oFast = new float[rows * heads * dc];
        AbsorbedAttention.absorbedValues(sRef, f, h, by, dt.code, oRef, meta, rows, cap, cap, heads, dc, dr);
        java.util.Arrays.fill(oFast, Float.NaN);
        FastAttention.absorbedValues(sRef, f, h, by, dt.code, oFast, meta, rows, cap, cap, heads, dc, dr);
        TestData.assertClose(oRef, oFast, 1e-4, what + " values");
        // runs of two tiles (version 10) and single tiles, whichever this CPU chooses: the same sums in the same order
        float[] oOne = new float[oFast.length], oTwo = new float[oFast.length];
        FastAttention.absorbedValues(sRef, f, h, by, dt.code, oOne, meta, rows, cap, cap, heads, dc, dr, 1);
        FastAttention.absorbedValues(sRef, f, h, by, dt.code, oTwo, meta, rows, cap, cap, heads, dc, dr, 2);
        TestData.assertClose(oRef, oTwo, 1e-4, what + " values in runs of two tiles");
        for (int i = 0; i < oOne.length; i++) {
            assertEquals(Float.floatToIntBits(oOne[i]), Float.floatToIntBits(oTwo[i]), what + " values, one tile or two at a time, at " + i);
        }
        // runs shared out as threads free up, each thread adding into its own o_lat (the step's spinning pool)
        checkBalanced(sRef, f, h, by, dt.code, oRef, meta, rows, cap, cap, heads, dc, dr, what);

        for (int splits : new int[] {1, 3}) {
            int parts = rows * heads * splits;
            float[] sTile = new float[parts * 16];
            float[] opRef = new float[parts * dc], mlRef = new float[2 * parts], olRef = new float[rows * heads * dc];
            float[] opFast = new float[parts * dc], mlFast = new float[2 * parts], olFast = new float[rows * heads * dc];
            OnlineSoftmax.splitTiles(qLat, q, f, h, by, dt.code, sTile, opRef, mlRef, meta, rows, cap, heads, DN, dr, dc, scale, 16, splits);
            OnlineSoftmax.combine(opRef, mlRef, olRef, rows, heads, splits, dc);
            FastOnlineSoftmax.splitTiles(qLat, q, f, h, by, dt.code, sTile, opFast, mlFast, meta, rows, cap, heads, DN, dr, dc, scale, 16, splits);
            FastOnlineSoftmax.combine(opFast, mlFast, olFast, rows, heads, splits, dc);
            TestData.assertClose(olRef, olFast, 1e-4, what + " tiled, " + splits + " splits");
            // the reference's absorbed output is the same function
            TestData.assertClose(oRef, olFast, 1e-4, what + " tiled vs absorbed, " + splits + " splits");
            // tiles of 64 and of 128 rows read in place, whichever this CPU chooses
            for (int inPlaceRows : new int[] {64, 128}) {
                float[] op = new float[parts * dc], ml = new float[2 * parts], ol = new float[rows * heads * dc];
                FastOnlineSoftmax.splitTiles(qLat, q, f, h, by, dt.code, op, ml, meta, rows, cap, heads, DN, dr, dc, scale, splits, inPlaceRows);
                FastOnlineSoftmax.combine(op, ml, ol, rows, heads, splits, dc);
                TestData.assertClose(olRef, ol, 1e-4, what + " tiled, " + splits + " splits, tiles of " + inPlaceRows + " rows in place");
            }
        }
    }

    /** Spinning pools of 2 and 3 threads, as a FastExecutor binds its own for a step. */
    private static final SpinPool[] POOLS = {new SpinPool(2, "balanced-test"), new SpinPool(3, "balanced-test")};

    /**
     * FastAttention.balancedValues (the values' runs taken by whichever thread is free) against the reference's o_lat
     * oRef, on pools of 2 and 3 threads and in runs of one and two tiles; and, on no pool, that it declines and writes
     * nothing.
     */
    static void checkBalanced(float[] probs, float[] f, short[] h, byte[] by, int dtype, float[] oRef, int[] meta, int rows, int cap,
                              int blockSize, int heads, int dc, int dr, String what) {
        for (SpinPool pool : POOLS) {
            for (int tiles = 1; tiles <= 2; tiles++) {
                float[] o = new float[oRef.length];
                java.util.Arrays.fill(o, Float.NaN);
                int[] took = {-2};
                int runTiles = tiles;
                ScopedValue.where(Parallel.POOL, pool).run(() ->
                        took[0] = FastAttention.balancedValues(probs, f, h, by, dtype, o, meta, rows, cap, blockSize, heads, dc, dr, runTiles));
                assertTrue(took[0] >= 0 && took[0] <= pool.threads(), what + ": balanced values ran on a pool of " + pool.threads() + ", " + took[0] + " threads took runs");
                TestData.assertClose(oRef, o, 1e-4, what + " balanced values, " + pool.threads() + " threads, runs of " + tiles + " tiles");
            }
        }
        float[] untouched = new float[oRef.length];
        java.util.Arrays.fill(untouched, Float.NaN);
        assertEquals(-1, FastAttention.balancedValues(probs, f, h, by, dtype, untouched, meta, rows, cap, blockSize, heads, dc, dr, 2),
                what + ": balanced values without a spinning pool");
        for (float v : untouched) assertTrue(Float.isNaN(v), what + ": balanced values wrote without a pool");
    }

    @Test
    void balancedValuesThroughABlockTableAndOverAPaddingRow() {
        // blocks of 5, 16 and 64 rows (runs that cross blocks go a tile at a time, copied), an int8 cache (decoded),
        // and a row with nothing cached between two that have (a padding row: o_lat zero), on the spinning pools
        int heads = 40, dc = 64, cap = 300, batch = 3, w = dc + DR;
        MlaConfig c = new MlaConfig(64, heads, 0, dc, DN, DR, 8, 10000, 1e-6, 4096, 1, null);
        for (CacheDtype dt : new CacheDtype[] {CacheDtype.F32, CacheDtype.INT8}) {
            LatentCache cache = new LatentCache(c, batch, cap, dt);
            for (int b = 0; b < batch; b++) cache.write(b, TestData.gaussian(31 + b, cap * dc), TestData.gaussian(41 + b, cap * DR));
            float[] f = CacheStorage.of(cache).floats();
            short[] h = CacheStorage.of(cache).halves();
            byte[] by = CacheStorage.of(cache).bytes();
            int[] seqStart = {cap - 1, 0, 130};
            int[] padded = org.tornadomla.kernels.Meta.contiguous(seqStart, batch, 1, cap);
            padded[2 * 1] = -1;                                   // row 1's position: −1, a padding row (CacheLayout's attnMeta)
            float[] probs = TestData.gaussian(5, batch * heads * cap);
            for (int i = 0; i < probs.length; i++) probs[i] = Math.abs(probs[i]) / cap;
            float[] oRef = new float[batch * heads * dc];
            AbsorbedAttention.absorbedValues(probs, f, h, by, dt.code, oRef, padded, batch, cap, cap, heads, dc, DR);
            for (int i = heads * dc; i < 2 * heads * dc; i++) assertEquals(0f, oRef[i], "the reference's padding row");
            checkBalanced(probs, f, h, by, dt.code, oRef, padded, batch, cap, cap, heads, dc, DR, dt + " padding row");
            if (dt != CacheDtype.F32) continue;                 // a block table over f32 rows (Meta.Paged moves float rows)
            for (int bs : new int[] {5, 16, 64}) {
                org.tornadomla.kernels.Meta.Paged p = org.tornadomla.kernels.Meta.Paged.shuffled(batch, cap, bs, 7 + bs);
                float[] pool = p.rows(f, batch, w);
                int[] paged = p.meta(seqStart, batch, 1);
                float[] ref = new float[batch * heads * dc];
                AbsorbedAttention.absorbedValues(probs, pool, h, by, dt.code, ref, paged, batch, cap, bs, heads, dc, DR);
                checkBalanced(probs, pool, h, by, dt.code, ref, paged, batch, cap, bs, heads, dc, DR, "blocks of " + bs);
            }
        }
    }

    @Test
    void bothThreadsTakeRunsAndTheSwitchFollowsTheRule() {
        // DeepSeek's 128 heads over 4096 rows: 32 runs of 128, each long enough that the worker joins the loop
        int heads = 128, dc = 512, dr = 64, cap = 4096;
        float[] kv = TestData.gaussian(7, cap * (dc + dr)), probs = TestData.gaussian(8, heads * cap);
        int[] meta = org.tornadomla.kernels.Meta.contiguous(new int[] {cap - 1}, 1, 1, cap);
        float[] o = new float[heads * dc];
        int most = 0;
        for (int attempt = 0; attempt < 10 && most < 2; attempt++) {
            int[] took = {0};
            ScopedValue.where(Parallel.POOL, POOLS[0]).run(() ->
                    took[0] = FastAttention.balancedValues(probs, kv, new short[1], new byte[1], org.tornadomla.kernels.CacheLayout.F32, o, meta, 1, cap, cap, heads, dc, dr, 2));
            most = Math.max(most, took[0]);
        }
        assertEquals(2, most, "both threads of the pool took runs in one of 10 calls");
        // the rule (FastAttention.balances): more than one thread, at most 4 token rows per thread
        if (!FastAttention.REPRODUCIBLE) {
            assertTrue(FastAttention.balances(1, 2), "1 row on 2 threads");
            assertTrue(FastAttention.balances(8, 2), "8 rows on 2 threads");
            assertTrue(FastAttention.balances(64, 16), "64 rows on 16 threads");
        }
        assertFalse(FastAttention.balances(9, 2), "9 rows on 2 threads keep the fixed pieces");
        assertFalse(FastAttention.balances(1, 1), "one thread");
    }

    @Test
    void balancedValuesOverManyRowsAndAgainWithFewer() {
        // 8 and 12 token rows (a thread's stretch spans several rows, and runs are taken from the back of another's),
        // then 3 and 8 again on the same calling thread: each thread's o_lat per row is reused and must start at zero
        int heads = 24, dc = 64, cap = 200, w = dc + DR;
        for (int rows : new int[] {8, 12, 3, 8}) {
            float[] kv = TestData.gaussian(50 + rows, rows * cap * w);
            int[] seqStart = new int[rows];
            for (int r = 0; r < rows; r++) seqStart[r] = (37 * r + 11) % cap;   // different lengths, some inside the first tile
            int[] meta = org.tornadomla.kernels.Meta.contiguous(seqStart, rows, 1, cap);
            float[] probs = TestData.gaussian(60 + rows, rows * heads * cap);
            for (int i = 0; i < probs.length; i++) probs[i] = Math.abs(probs[i]) / cap;
            float[] oRef = new float[rows * heads * dc];
            AbsorbedAttention.absorbedValues(probs, kv, new short[1], new byte[1], org.tornadomla.kernels.CacheLayout.F32, oRef, meta, rows, cap, cap, heads, dc, DR);
            checkBalanced(probs, kv, new short[1], new byte[1], org.tornadomla.kernels.CacheLayout.F32, oRef, meta, rows, cap, cap, heads, dc, DR, rows + " rows");
        }
    }

    @Test
    void twoThreadsShareARowAndTheStepRoutesRowsByTheRule() {
        // 7 rows of 1024 cached positions at 64 heads: 8 runs of two tiles a row, 56 in all, so the two threads' stretches
        // meet inside row 3 and that row's o_lat is the sum of both threads' arrays once both take runs; then, through
        // absorbedValues on the pool, 7 rows take this path and 9 rows (more than 4 per thread) the fixed pieces
        int heads = 64, dc = 512, dr = 64, cap = 1024, w = dc + dr;
        for (int rows : new int[] {7, 9}) {
            float[] kv = TestData.gaussian(70 + rows, rows * cap * w);
            int[] seqStart = new int[rows];
            java.util.Arrays.fill(seqStart, cap - 1);
            int[] meta = org.tornadomla.kernels.Meta.contiguous(seqStart, rows, 1, cap);
            float[] probs = TestData.gaussian(80 + rows, rows * heads * cap);
            for (int i = 0; i < probs.length; i++) probs[i] = Math.abs(probs[i]) / cap;
            float[] oRef = new float[rows * heads * dc];
            short[] noHalves = new short[1];
            byte[] noBytes = new byte[1];
            int f32 = org.tornadomla.kernels.CacheLayout.F32;
            AbsorbedAttention.absorbedValues(probs, kv, noHalves, noBytes, f32, oRef, meta, rows, cap, cap, heads, dc, dr);
            if (rows == 7) {
                int most = 0;
                for (int attempt = 0; attempt < 10 && most < 2; attempt++) {
                    float[] o = new float[oRef.length];
                    java.util.Arrays.fill(o, Float.NaN);
                    int[] took = {0};
                    ScopedValue.where(Parallel.POOL, POOLS[0]).run(() ->
                            took[0] = FastAttention.balancedValues(probs, kv, noHalves, noBytes, f32, o, meta, rows, cap, cap, heads, dc, dr, 2));
                    most = Math.max(most, took[0]);
                    TestData.assertClose(oRef, o, 1e-4, "7 rows, " + took[0] + " threads took runs");
                }
                assertEquals(2, most, "both threads of the pool took runs in one of 10 calls");
            }
            float[] o = new float[oRef.length];
            java.util.Arrays.fill(o, Float.NaN);
            ScopedValue.where(Parallel.POOL, POOLS[0]).run(() ->
                    FastAttention.absorbedValues(probs, kv, noHalves, noBytes, f32, o, meta, rows, cap, cap, heads, dc, dr));
            TestData.assertClose(oRef, o, 1e-4, rows + " rows through absorbedValues on a pool of 2");
        }
    }

    @Test
    void rowOfFindsTheRowOfARunPastRowsWithNone() {
        // runs per row 2, 0 (a padding row), 3, 0, 1: row starts 0, 2, 2, 5, 5, 6
        int[] starts = {0, 2, 2, 5, 5, 6};
        int[] expected = {0, 0, 2, 2, 2, 4};
        for (int run = 0; run < 6; run++) assertEquals(expected[run], FastAttention.rowOf(starts, 5, run), "run " + run);
    }
}
