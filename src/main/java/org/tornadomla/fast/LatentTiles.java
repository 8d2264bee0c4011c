package org.tornadomla.fast;

import jdk.incubator.vector.FloatVector;
import org.tornadomla.kernels.Bf16;
import org.tornadomla.kernels.CacheLayout;
import org.tornadomla.kernels.CacheOps;
import org.tornadomla.kernels.Fp8;

import static org.tornadomla.fast.Vec.F;
import static org.tornadomla.fast.Vec.L;

/**
 * Runs of latent-cache rows as f32 for the fast kernels: the cache itself for an f32 cache, else decoded into
 * a scratch tile once per tile, shared by every head (never a dequantised copy of the whole cache). The
 * layout is {@link CacheLayout}'s; consecutive slots of one block are adjacent, so a run of rows within a block
 * is one piece of memory, and a tile of a sequence's positions is read run by run, cut at block boundaries
 * ({@link #tile}).
 */
final class LatentTiles {
    private LatentTiles() {
    }

    /** Every e4m3 byte decoded as the kernels decode it (for the scalar tails). */
    private static final float[] E4M3 = new float[256];

    static {
        float[] pow2 = Bf16.pow2();
        for (int b = 0; b < 256; b++) E4M3[b] = Fp8.decode((byte) b, pow2);
    }

    /**
     * Columns [c0, c1) of cache slots [slot, slot + n) as f32 rows of width w = d_c + d_r: for an f32 cache the
     * cache itself (the index of (slot, c0) is returned: rows are w apart), else decoded into buf with the
     * same row width (index t·w + c0 of buf for row t; 0 … c0 and c1 … w are left as they were).
     */
    static int rows(float[] floats, short[] halves, byte[] bytes, int dtype, int slot, int n, int w, int dc, int c0, int c1, float[] buf) {
        if (dtype == CacheLayout.F32) return CacheLayout.valueIndex(slot, c0, w);
        decode(floats, halves, bytes, dtype, slot, n, w, dc, c0, c1, buf, 0, w);
        return c0;
    }

    /**
     * Positions [j0, j0 + n) of the sequence whose block table starts at attnMeta[table] as f32 rows of width
     * w: the cache itself when they are an f32 cache's rows inside one block (the index of position j0's first
     * number is returned; rows w apart), else copied or decoded into buf run by run, each run inside one block, rows
     * {@code stride} apart (index 0 of buf is returned; stride ≥ w: {@link Gemm#tileStride}, so that the score
     * kernels read the tile where it lies). With tiles that do not cross a block boundary an f32 cache is never copied.
     */
    static int tile(float[] floats, short[] halves, byte[] bytes, int dtype, int[] attnMeta, int table, int j0, int n, int blockSize,
                    int w, int dc, float[] buf, int stride) {
        int slot = CacheLayout.slot(attnMeta, table, j0, blockSize);
        if (j0 % blockSize + n <= blockSize) {
            if (dtype == CacheLayout.F32) return CacheLayout.valueIndex(slot, 0, w);
            decode(floats, halves, bytes, dtype, slot, n, w, dc, 0, w, buf, 0, stride);
            return 0;
        }
        for (int j = j0; j < j0 + n; ) {
            int run = Math.min(j0 + n - j, blockSize - j % blockSize), s = CacheLayout.slot(attnMeta, table, j, blockSize);
            if (dtype == CacheLayout.F32) {
                for (int t = 0; t < run; t++) System.arraycopy(floats, CacheLayout.valueIndex(s + t, 0, w), buf, (j - j0 + t) * stride, w);
            } else {
                decode(floats, halves, bytes, dtype, s, run, w, dc, 0, w, buf, j - j0, stride);
            }
            j += run;
        }
        return 0;
    }

    /**
     * The latent rows of cache slots slots[from … from + n) (a sparse selection: any slots, in any order) as f32
     * rows of width w in buf (row i at i·stride), copied or decoded one slot at a time.
     */
    static void gather(float[] floats, short[] halves, byte[] bytes, int dtype, int[] slots, int from, int n, int w, int dc, float[] buf,
                       int stride) {
        for (int i = 0; i < n; i++) {
            int s = slots[from + i];
            if (dtype == CacheLayout.F32) System.arraycopy(floats, CacheLayout.valueIndex(s, 0, w), buf, i * stride, w);
            else decode(floats, halves, bytes, dtype, s, 1, w, dc, 0, w, buf, i, stride);
        }
    }

    /** Decodes columns [c0, c1) of slots [slot, slot + n) (one block) of a quantised cache into buf rows row0 … (stride apart). */
    private static void decode(float[] floats, short[] halves, byte[] bytes, int dtype, int slot, int n, int w, int dc, int c0, int c1,
                               float[] buf, int row0, int stride) {
        for (int t = 0; t < n; t++) {
            int s = slot + t, to = (row0 + t) * stride;
            if (dtype == CacheLayout.BF16) {
                int from = CacheLayout.valueIndex(s, 0, w), i = c0;
                for (; i <= c1 - L; i += L) Vec.bf16(halves, from + i).intoArray(buf, to + i);
                for (; i < c1; i++) buf[to + i] = CacheOps.load(floats, halves, bytes, dtype, s, i, w, dc);
            } else if (dtype == CacheLayout.INT8) {
                int from = CacheLayout.valueIndex(s, 0, w);
                for (int part = 0; part < 2; part++) {
                    int lo = Math.max(c0, part == 0 ? 0 : dc), hi = Math.min(c1, part == 0 ? dc : w);
                    float scale = floats[CacheLayout.int8ScaleIndex(s, part)];
                    FloatVector vs = FloatVector.broadcast(F, scale);
                    int i = lo;
                    for (; i <= hi - L; i += L) Vec.int8(bytes, from + i).mul(vs).intoArray(buf, to + i);
                    for (; i < hi; i++) buf[to + i] = bytes[from + i] * scale;
                }
            } else {
                // FP8: e4m3 latent times its block's scale, then the bf16 rope part
                int i = c0, latEnd = Math.min(c1, dc);
                for (; i < latEnd; ) {
                    float scale = floats[CacheLayout.fp8ScaleIndex(s, i, dc)];
                    int blockEnd = Math.min(latEnd, (i / CacheLayout.FP8_BLOCK + 1) * CacheLayout.FP8_BLOCK);
                    for (; i <= blockEnd - L; i += L) Vec.e4m3(bytes, CacheLayout.fp8LatentIndex(s, i, dc)).mul(scale).intoArray(buf, to + i);
                    for (; i < blockEnd; i++) buf[to + i] = E4M3[bytes[CacheLayout.fp8LatentIndex(s, i, dc)] & 0xFF] * scale;
                }
                for (int k = Math.max(c0, dc); k < c1; k++) {
                    buf[to + k] = Float.intBitsToFloat((halves[CacheLayout.fp8RopeIndex(s, k - dc, w - dc)] & 0xFFFF) << 16);
                }
            }
        }
    }

    /** Whole rows: {@link #rows(float[], short[], byte[], int, int, int, int, int, int, int, float[])} over [0, w). */
    static int rows(float[] floats, short[] halves, byte[] bytes, int dtype, int slot, int n, int w, int dc, float[] buf) {
        return rows(floats, halves, bytes, dtype, slot, n, w, dc, 0, w, buf);
    }
}
