package org.tornadomla.fast;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import org.tornadomla.kernels.CacheLayout;
import org.tornadomla.kernels.OnlineSoftmax;

import java.util.stream.IntStream;

import static org.tornadomla.fast.Vec.F;
import static org.tornadomla.fast.Vec.L;

/**
 * java-fast's TILED path ({@link OnlineSoftmax}): one task per (token row, KV split) serves every head, so each
 * tile of {@link FastAttention#TILE} latent rows (two of them for an f32 cache read in place where
 * {@link FastAttention#VALUES_RUN} says so) is decoded once and used by all heads, first as keys
 * ({@link Gemm#scores}, Sᵀ [tile rows, heads]), then, after the online-softmax update, as values
 * ({@link Gemm#values}). The running max and sum of L heads are one vector each: Sᵀ keeps the heads of a
 * cached row side by side. Same conventions as the reference: the max starts at the first score,
 * {@link org.tornadomla.kernels.Softmax#shift} instead of an infinity, (max, sum) per split for the combine.
 *
 * <p>Versions (B1 H128 T4096 f32, docs/benchmarks.md):
 * <ol>
 *   <li>per group of 8 heads and split, 4 × 4 dot-product score blocks and 4 × 2 value blocks.</li>
 *   <li>all heads per (row, split) task, outer-product micro-kernels, vectorised online softmax over heads.</li>
 *   <li>an f32 cache read in place goes in tiles of two {@link FastAttention#TILE}s (128 rows, 295 KB in L2) where
 *   tiles are touched ({@link FastAttention#VALUES_RUN}: AMD CPUs) and the blocks hold a whole number of them: half as
 *   many online-softmax updates, rescales of the accumulators and loads and stores of them by the value blocks.
 *   2-vCPU Zen 5, 2026-12-05, {@code ./mla bench --breakdown}, five alternating pairs, split_tiles: B1 H16 T16384
 *   2.19–2.97 → 2.07–2.84 ms (five of five faster), B1 H16 T4096 0.52–0.70 → 0.52–0.71 (medians 0.65 → 0.53), H128
 *   level (T4096 3.36–4.61 against 3.38–4.50). The sums run over other tiles, so the last bits differ from
 *   tiles of 64; both are within the reference's tolerance.</li>
 *   <li>at a single head vector (up to 16 heads with AVX-512, 8 with AVX2) a tile is touched first only where
 *   {@link Gemm#TOUCH_SCORES} says so (a Zen 5), as the absorbed scores are ({@link #touchesTile}). 2-vCPU Zen 4,
 *   2026-12-06, alternating every 20 steps in one JVM, split_tiles: B1 H16 T4096 0.856 → 0.812 and 0.851 → 0.800 ms,
 *   T16384 3.72 → 3.55, B8 H16 T4096 8.10 → 7.36; the same Zen 4 held to AVX2 (-XX:UseAVX=2), 8 heads: T4096 0.715 →
 *   0.654 and 0.657 → 0.598, T16384 level (2.96 / 2.98). The bits do not change.</li>
 *   <li>the exps by {@link Vec#exp} instead of the Vector API's EXP (as {@code FastAttention}'s softmax, version 14).
 *   2-vCPU Zen 5, 2026-12-06, the two alternating every 20 (B1) or 6 (B8) steps in one JVM, split_tiles: B1 H128
 *   T4096 3.64 → 3.62 and 3.76 → 3.73 ms, H16 T16384 2.27 → 2.25, B8 H128 36.6 → 36.4 and 36.2 → 35.8: level to 1 %
 *   faster, the exps being a small part of a tile's update here. The last bits differ (1 ulp).</li>
 * </ol>
 * Outcome on 2 Zen 5 cores: split_tiles does both products at 70 % (B1) and 72 % (B8) of the FMA peak, faster
 * than the absorbed path's separate tasks (each tile is read once for keys and values); the step 4.4 ms, 1.47×
 * faster than PyTorch with OpenBLAS (docs/benchmarks.md).
 */
public final class FastOnlineSoftmax {
    private FastOnlineSoftmax() {
    }

    private static final ThreadLocal<float[]> ROWS = ThreadLocal.withInitial(() -> new float[0]);
    private static final ThreadLocal<float[]> ST = ThreadLocal.withInitial(() -> new float[0]);
    private static final ThreadLocal<float[]> ACC = ThreadLocal.withInitial(() -> new float[0]);
    private static final ThreadLocal<float[]> STATS = ThreadLocal.withInitial(() -> new float[0]);

    /** Same arguments and results as {@link OnlineSoftmax#splitTiles} (sTile, the reference's scratch, is not used). */
    public static void splitTiles(float[] qLat, float[] q, float[] kvFloats, short[] kvHalves, byte[] kvBytes, int dtype, float[] sTile,
                                  float[] oPart, float[] mlPart, int[] attnMeta, int rows, int blockSize, int heads,
                                  int dn, int dr, int dc, float scale, int tileSize, int numSplits) {
        splitTiles(qLat, q, kvFloats, kvHalves, kvBytes, dtype, oPart, mlPart, attnMeta, rows, blockSize, heads, dn, dr, dc, scale,
                numSplits, FastAttention.VALUES_RUN * FastAttention.TILE);
    }

    /**
     * {@link #splitTiles} with the rows of a tile of an f32 cache read in place given (tests run 64 and 128 on every
     * machine): tiles of {@code inPlaceRows} where blocks hold a whole number of them (version 3), else of
     * {@link FastAttention#TILE}.
     */
    static void splitTiles(float[] qLat, float[] q, float[] kvFloats, short[] kvHalves, byte[] kvBytes, int dtype,
                           float[] oPart, float[] mlPart, int[] attnMeta, int rows, int blockSize, int heads,
                           int dn, int dr, int dc, float scale, int numSplits, int inPlaceRows) {
        int w = dc + dr, hp = Gemm.paddedHeads(heads), ws = Gemm.tileStride(w);
        int tile = dtype == CacheLayout.F32 && blockSize % inPlaceRows == 0 ? inPlaceRows : FastAttention.TILE;
        float[] qt = FastAttention.packQueries(qLat, q, rows, heads, dn, dr, dc, scale, hp);
        Parallel.forEach(rows * numSplits, task -> {
            int r = task / numSplits, s = task % numSplits;
            int len = CacheLayout.metaRowPosition(attnMeta, r) + 1, table = CacheLayout.metaRowTable(attnMeta, r);
            int chunk = (len + numSplits - 1) / numSplits, lo = s * chunk, hi = Math.min(len, lo + chunk);
            float[] acc = Vec.scratch(ACC, heads * dc);                  // O [heads, d_c], unnormalised
            float[] stats = Vec.scratch(STATS, 3 * hp);                  // m, l, alpha per head
            float[] st = Vec.scratch(ST, tile * hp);
            float[] buf = Vec.scratch(ROWS, tile * ws);
            java.util.Arrays.fill(acc, 0, heads * dc, 0f);
            java.util.Arrays.fill(stats, 0, 3 * hp, 0f);
            // tiles aligned to multiples of TILE (the first one shorter): with blocks of a multiple of TILE tokens
            // (64, FlashMLA's page) no tile crosses a block, and an f32 cache is read in place
            for (int j0 = lo, n; j0 < hi; j0 += n) {
                n = Math.min(tile - j0 % tile, hi - j0);
                int off = LatentTiles.tile(kvFloats, kvHalves, kvBytes, dtype, attnMeta, table, j0, n, blockSize, w, dc, buf, ws);
                float[] src = dtype == CacheLayout.F32 && FastAttention.inOneBlock(j0, n, blockSize) ? kvFloats : buf;
                int stride = src == kvFloats ? w : ws;
                if (src == kvFloats && touchesTile(hp)) Vec.touch(src, off, off + n * w);
                Gemm.scores(qt, r * w * hp, hp, src, off, stride, w, n, st, 0);
                updateAndRescale(st, n, hp, heads, stats, acc, dc, j0 == lo);
                Gemm.values(st, 0, 1, hp, heads, src, off, stride, n, 0, dc, acc, 0, dc);
            }
            for (int h = 0; h < heads; h++) {
                int part = (r * heads + h) * numSplits + s;
                float l = stats[hp + h];
                float inv = l > 0f ? 1f / l : 0f;
                for (int c = 0; c < dc; c++) oPart[part * dc + c] = acc[h * dc + c] * inv;
                mlPart[2 * part] = l > 0f ? stats[h] : 0f;
                mlPart[2 * part + 1] = l;
            }
        });
    }

    /**
     * Whether a tile read in place is touched in order before its scores and values ({@link Vec#touch}): where {@link
     * Vec#TOUCH} says so, as before the absorbed values, but at a single head vector only where {@link
     * Gemm#TOUCH_SCORES} does, as before the absorbed scores (version 4). There the scores are nearly all of the tile's
     * reads of memory, and on a Zen 4 (16 heads' scores on 256-bit halves, no read-ahead) the touch cost more than it
     * saved.
     */
    static boolean touchesTile(int hp) {
        return hp == L ? Gemm.TOUCH_SCORES : Vec.TOUCH;
    }

    /** {@link #update}, then each head's accumulated O [heads, dc] rescaled by its alpha where the max moved. */
    static void updateAndRescale(float[] st, int n, int hp, int heads, float[] stats, float[] acc, int dc, boolean first) {
        update(st, n, hp, stats, first);
        for (int h = 0; h < heads; h++) {
            float alpha = stats[2 * hp + h];
            if (alpha != 1f) Vec.scale(acc, h * dc, dc, alpha);
        }
    }

    /**
     * The online-softmax step for a tile's scores Sᵀ [n, hp], L heads at a time: the tile's max, the new max
     * (the tile's own on the first tile), the shift (the max, or 0 while every score is −∞), alpha = exp(old max −
     * shift) that rescales what was accumulated, P = exp(S − shift) in place, and l = l·alpha + Σ P.
     * stats = [m (hp) | l (hp) | alpha (hp)].
     */
    static void update(float[] st, int n, int hp, float[] stats, boolean first) {
        for (int h = 0; h < hp; h += L) {
            FloatVector mTile = FloatVector.fromArray(F, st, h);
            for (int j = 1; j < n; j++) mTile = mTile.max(FloatVector.fromArray(F, st, j * hp + h));
            FloatVector mPrev = FloatVector.fromArray(F, stats, h);
            FloatVector mNew = first ? mTile : mPrev.max(mTile);
            FloatVector mOld = first ? mNew : mPrev;
            // Softmax.shift lane-wise: the max where it is finite (x ≥ 0, or x·0.5 > x for a finite negative x), else 0
            VectorMask<Float> finite = mNew.compare(VectorOperators.GE, 0f).or(mNew.mul(0.5f).compare(VectorOperators.GT, mNew));
            FloatVector shift = FloatVector.zero(F).blend(mNew, finite);
            FloatVector alpha = Vec.exp(mOld.sub(shift));
            FloatVector sum = FloatVector.zero(F);
            for (int j = 0; j < n; j++) {
                FloatVector e = Vec.exp(FloatVector.fromArray(F, st, j * hp + h).sub(shift));
                e.intoArray(st, j * hp + h);
                sum = sum.add(e);
            }
            FloatVector.fromArray(F, stats, hp + h).mul(alpha).add(sum).intoArray(stats, hp + h);
            mNew.intoArray(stats, h);
            alpha.intoArray(stats, 2 * hp + h);
        }
    }

    /** The split weights l_s·exp(m_s − max m) once per (row, head), then a vector sum of the split outputs. */
    public static void combine(float[] oPart, float[] mlPart, float[] oLat, int rows, int heads, int numSplits, int dc) {
        Parallel.forEach(rows * heads, rh -> {
            int part0 = rh * numSplits;
            float mMax = 0f;
            boolean seen = false;
            for (int s = 0; s < numSplits; s++) {
                if (mlPart[2 * (part0 + s) + 1] > 0f) {
                    mMax = seen ? Math.max(mMax, mlPart[2 * (part0 + s)]) : mlPart[2 * (part0 + s)];
                    seen = true;
                }
            }
            float wSum = 0f;
            float[] wts = new float[numSplits];
            for (int s = 0; s < numSplits; s++) {
                float ls = mlPart[2 * (part0 + s) + 1];
                wSum += (wts[s] = ls > 0f ? ls * (float) Math.exp(mlPart[2 * (part0 + s)] - mMax) : 0f);
            }
            java.util.Arrays.fill(oLat, rh * dc, rh * dc + dc, 0f);
            if (wSum > 0f) {
                for (int s = 0; s < numSplits; s++) Vec.axpy(wts[s] / wSum, oPart, (part0 + s) * dc, oLat, rh * dc, dc);
            }
        });
    }
}
