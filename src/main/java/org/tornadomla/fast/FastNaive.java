package org.tornadomla.fast;

import org.tornadomla.kernels.CacheLayout;

import java.util.stream.IntStream;

/**
 * java-fast's NAIVE path ({@link org.tornadomla.kernels.NaiveAttention}): keys and values decompressed from the
 * latent for every cached token, then per-head attention over them. The path exists to be the reference
 * shape of MLA; these versions only make it bearable to run (vector dot products and axpys, one task per
 * cached token or per (row, head)).
 */
public final class FastNaive {
    private FastNaive() {
    }

    private static final ThreadLocal<float[]> ROW = ThreadLocal.withInitial(() -> new float[0]);

    public static void decompress(float[] kvFloats, short[] kvHalves, byte[] kvBytes, int dtype, float[] wkvB, float[] kvFull,
                                  int[] attnMeta, int rows, int seqs, int capacity, int blockSize, int heads, int dn, int dv, int dc, int dr) {
        int width = heads * (dn + dv), w = dc + dr;
        Parallel.forEach(seqs * capacity, bj -> {
            int b = bj / capacity, j = bj % capacity;
            if (j >= CacheLayout.metaSeqLength(attnMeta, rows, b)) return;
            int slot = CacheLayout.slot(attnMeta, CacheLayout.metaSeqTable(attnMeta, rows, b), j, blockSize);
            float[] buf = dtype != CacheLayout.F32 ? Vec.scratch(ROW, w) : null;
            float[] src = buf != null ? buf : kvFloats;
            int off = LatentTiles.rows(kvFloats, kvHalves, kvBytes, dtype, slot, 1, w, dc, buf);
            for (int o = 0; o < width; o++) kvFull[slot * width + o] = Vec.dot(wkvB, o * dc, src, off, dc);
        });
    }

    public static void naiveScores(float[] q, float[] kvFull, float[] kvFloats, short[] kvHalves, byte[] kvBytes, int dtype,
                                   float[] scores, int[] attnMeta, int rows, int capacity, int blockSize, int heads, int dn,
                                   int dr, int dv, int dc, float scale) {
        int width = heads * (dn + dv), w = dc + dr;
        Parallel.forEach(rows * heads, rh -> {
            int r = rh / heads, h = rh % heads, len = CacheLayout.metaRowPosition(attnMeta, r) + 1;
            int table = CacheLayout.metaRowTable(attnMeta, r);
            float[] buf = dtype != CacheLayout.F32 ? Vec.scratch(ROW, w) : null;
            for (int j = 0; j < len; j++) {
                float[] src = buf != null ? buf : kvFloats;
                int slot = CacheLayout.slot(attnMeta, table, j, blockSize);
                int off = LatentTiles.rows(kvFloats, kvHalves, kvBytes, dtype, slot, 1, w, dc, buf);
                float s = Vec.dot(q, rh * (dn + dr), kvFull, slot * width + h * (dn + dv), dn)
                        + Vec.dot(q, rh * (dn + dr) + dn, src, off + dc, dr);
                scores[rh * capacity + j] = s * scale;
            }
        });
    }

    public static void naiveValues(float[] probs, float[] kvFull, float[] o, int[] attnMeta, int rows,
                                   int capacity, int blockSize, int heads, int dn, int dv) {
        int width = heads * (dn + dv);
        Parallel.forEach(rows * heads, rh -> {
            int r = rh / heads, h = rh % heads, len = CacheLayout.metaRowPosition(attnMeta, r) + 1;
            int table = CacheLayout.metaRowTable(attnMeta, r);
            java.util.Arrays.fill(o, rh * dv, rh * dv + dv, 0f);
            for (int j = 0; j < len; j++) {
                int slot = CacheLayout.slot(attnMeta, table, j, blockSize);
                Vec.axpy(probs[rh * capacity + j], kvFull, slot * width + h * (dn + dv) + dn, o, rh * dv, dv);
            }
        });
    }
}
