package org.tornadomla.fast;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import org.tornadomla.kernels.SparseAttention;
import org.tornadomla.kernels.Softmax;

import static org.tornadomla.fast.Vec.F;
import static org.tornadomla.fast.Vec.L;

/**
 * java-fast's sparse attention ({@link SparseAttention}: DeepSeek-V3.2's attention over the indexer's top-k): the
 * dense fast kernels ({@link FastAttention}, {@link FastOnlineSoftmax}) with a gather in place of a tile of
 * consecutive positions. The selected rows of a tile of {@link FastAttention#TILE} entries are copied or decoded
 * once into f32 rows ({@link LatentTiles#gather}), and every head uses them through {@link Gemm}'s micro-kernels;
 * the rest of the cache is never read. Same layouts and conventions as the reference: scores [rows, H, k], the
 * used entries of a row first, −∞ (scores) or 0 (probabilities) for the unused ones. Results match the reference
 * within float rounding (the sums are taken in another order).
 */
public final class FastSparseAttention {
    private FastSparseAttention() {
    }

    private static final ThreadLocal<float[]> ROWS = ThreadLocal.withInitial(() -> new float[0]);
    private static final ThreadLocal<float[]> ST = ThreadLocal.withInitial(() -> new float[0]);
    private static final ThreadLocal<float[]> PART = ThreadLocal.withInitial(() -> new float[0]);
    private static final ThreadLocal<float[]> ACC = ThreadLocal.withInitial(() -> new float[0]);
    private static final ThreadLocal<float[]> STATS = ThreadLocal.withInitial(() -> new float[0]);

    /** How many of the k entries of row r are used (they come first, −1 after them). */
    static int used(int[] slots, int r, int topk) {
        int n = 0;
        while (n < topk && slots[r * topk + n] >= 0) n++;
        return n;
    }

    /** Same arguments and results as {@link SparseAttention#sparseScores}. */
    public static void sparseScores(float[] qLat, float[] q, float[] kvFloats, short[] kvHalves, byte[] kvBytes, int dtype,
                                    int[] slots, float[] scores, int rows, int topk, int heads, int dn, int dr, int dc, float scale) {
        int w = dc + dr, hp = Gemm.paddedHeads(heads), tileRows = FastAttention.TILE, ws = Gemm.tileStride(w);
        float[] qt = FastAttention.packQueries(qLat, q, rows, heads, dn, dr, dc, scale, hp);
        int pieces = Parallel.piecesPerItem(rows);
        Parallel.forEach(rows * pieces, task -> {
            int r = task / pieces, piece = task % pieces, len = used(slots, r, topk);
            if (piece == 0 && len < topk) {
                for (int h = 0; h < heads; h++) {
                    int at = (r * heads + h) * topk;
                    java.util.Arrays.fill(scores, at + len, at + topk, Float.NEGATIVE_INFINITY);
                }
            }
            int tiles = (len + tileRows - 1) / tileRows, per = (tiles + pieces - 1) / pieces;
            float[] buf = Vec.scratch(ROWS, tileRows * ws);
            float[] st = Vec.scratch(ST, tileRows * hp);
            int[] rowsOfL = FastAttention.gatherIndices(hp);
            for (int tile = piece * per; tile < Math.min(tiles, (piece + 1) * per); tile++) {
                int j0 = tile * tileRows, n = Math.min(tileRows, len - j0);
                LatentTiles.gather(kvFloats, kvHalves, kvBytes, dtype, slots, r * topk + j0, n, w, dc, buf, ws);
                Gemm.scores(qt, r * w * hp, hp, buf, 0, ws, w, n, st, 0);
                FastAttention.transposeTile(st, hp, heads, n, scores, r * heads * topk + j0, topk, rowsOfL);
            }
        });
    }

    /** Same arguments and results as {@link SparseAttention#sparseSoftmax}. */
    public static void sparseSoftmax(float[] scores, int[] slots, int rows, int topk, int heads) {
        Parallel.forEach(rows * heads, rh -> {
            int len = used(slots, rh / heads, topk), base = rh * topk;
            if (len > 0) {
                FastAttention.softmaxRow(scores, base, len);
            }
            java.util.Arrays.fill(scores, base + len, base + topk, 0f);
        });
    }

    /** Same arguments and results as {@link SparseAttention#sparseValues}. */
    public static void sparseValues(float[] probs, float[] kvFloats, short[] kvHalves, byte[] kvBytes, int dtype, int[] slots,
                                    float[] oLat, int rows, int topk, int heads, int dc, int dr) {
        int w = dc + dr, ws = Gemm.tileStride(w), pieces = Parallel.piecesPerItem(rows), size = heads * dc, tileRows = FastAttention.TILE;
        // as FastAttention.absorbedValues: each task its part of the selection, the parts' sums added at the end
        float[] part = pieces > 1 ? Vec.scratch(PART, rows * pieces * size) : null;
        Parallel.forEach(rows * pieces, task -> {
            int r = task / pieces, piece = task % pieces, len = used(slots, r, topk);
            int tiles = (len + tileRows - 1) / tileRows, per = (tiles + pieces - 1) / pieces;
            float[] out = part != null ? part : oLat;
            int o0 = part != null ? task * size : r * size;
            java.util.Arrays.fill(out, o0, o0 + size, 0f);
            float[] buf = Vec.scratch(ROWS, tileRows * ws);
            for (int tile = piece * per; tile < Math.min(tiles, (piece + 1) * per); tile++) {
                int j0 = tile * tileRows, n = Math.min(tileRows, len - j0);
                LatentTiles.gather(kvFloats, kvHalves, kvBytes, dtype, slots, r * topk + j0, n, w, dc, buf, ws);
                Gemm.values(probs, r * heads * topk + j0, topk, 1, heads, buf, 0, ws, n, 0, dc, out, o0, dc);
            }
        });
        if (part != null) {
            Parallel.forEach(rows * heads, rh -> {
                int r = rh / heads, at = rh * dc, from = r * pieces * size + (rh % heads) * dc;
                System.arraycopy(part, from, oLat, at, dc);
                for (int p = 1; p < pieces; p++) Vec.axpy(1f, part, from + p * size, oLat, at, dc);
            });
        }
    }

    /**
     * Same arguments and results as {@link SparseAttention#sparseSplitTiles} (sTile and tileSize, the reference's
     * scratch and its tile, are not used: the tiles are {@link FastAttention#TILE} entries), as
     * {@link FastOnlineSoftmax#splitTiles} computes the dense splits: one task per (row, split) for every head.
     */
    public static void sparseSplitTiles(float[] qLat, float[] q, float[] kvFloats, short[] kvHalves, byte[] kvBytes, int dtype,
                                        int[] slots, float[] sTile, float[] oPart, float[] mlPart, int rows, int topk,
                                        int heads, int dn, int dr, int dc, float scale, int tileSize, int numSplits) {
        int w = dc + dr, hp = Gemm.paddedHeads(heads), tile = FastAttention.TILE, ws = Gemm.tileStride(w);
        float[] qt = FastAttention.packQueries(qLat, q, rows, heads, dn, dr, dc, scale, hp);
        Parallel.forEach(rows * numSplits, task -> {
            int r = task / numSplits, s = task % numSplits, len = used(slots, r, topk);
            int chunk = (len + numSplits - 1) / numSplits, lo = s * chunk, hi = Math.min(len, lo + chunk);
            float[] acc = Vec.scratch(ACC, heads * dc);                  // O [heads, d_c], unnormalised
            float[] stats = Vec.scratch(STATS, 3 * hp);                  // m, l, alpha per head
            float[] st = Vec.scratch(ST, tile * hp);
            float[] buf = Vec.scratch(ROWS, tile * ws);
            java.util.Arrays.fill(acc, 0, heads * dc, 0f);
            java.util.Arrays.fill(stats, 0, 3 * hp, 0f);
            for (int j0 = lo, n; j0 < hi; j0 += n) {
                n = Math.min(tile, hi - j0);
                LatentTiles.gather(kvFloats, kvHalves, kvBytes, dtype, slots, r * topk + j0, n, w, dc, buf, ws);
                Gemm.scores(qt, r * w * hp, hp, buf, 0, ws, w, n, st, 0);
                FastOnlineSoftmax.update(st, n, hp, stats, j0 == lo);
                for (int h = 0; h < heads; h++) {
                    float alpha = stats[2 * hp + h];
                    if (alpha != 1f) Vec.scale(acc, h * dc, dc, alpha);
                }
                Gemm.values(st, 0, 1, hp, heads, buf, 0, ws, n, 0, dc, acc, 0, dc);
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
}
