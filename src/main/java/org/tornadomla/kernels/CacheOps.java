package org.tornadomla.kernels;

import uk.ac.manchester.tornado.api.annotations.Parallel;

/**
 * The latent cache in kernels: reading one number ({@link #load}) and appending a step's rows
 * ({@link #append}). Where things live is {@link CacheLayout}'s business. Kernels take the cache's three
 * arrays (floats, halves, bytes) and the dtype code; the dtype is a shape constant, so TornadoVM folds the
 * branches in {@link #load} away. Decoding happens inside the score and accumulation loops: there is never
 * a dequantised copy of the cache.
 */
public final class CacheOps {
    private CacheOps() {
    }

    /** Number {@code col} (&lt; d_c + d_r) of cache slot {@code slot}, as float. */
    public static float load(float[] floats, short[] halves, byte[] bytes, int dtype, int slot, int col, int w, int dc) {
        if (dtype == CacheLayout.BF16) {
            return Bf16.decode(halves[CacheLayout.valueIndex(slot, col, w)], floats);
        } else if (dtype == CacheLayout.FP8) {
            if (col < dc) {
                return Fp8.decode(bytes[CacheLayout.fp8LatentIndex(slot, col, dc)], floats) * floats[CacheLayout.fp8ScaleIndex(slot, col, dc)];
            }
            return Bf16.decode(halves[CacheLayout.fp8RopeIndex(slot, col - dc, w - dc)], floats);
        } else if (dtype == CacheLayout.INT8) {
            return bytes[CacheLayout.valueIndex(slot, col, w)] * floats[CacheLayout.int8ScaleIndex(slot, col < dc ? 0 : 1)];
        }
        return floats[CacheLayout.valueIndex(slot, col, w)];
    }

    /**
     * Appends {@code tokens} rows per sequence at positions seqStart[b] … +tokens−1: the latent from
     * ckv [rows, d_c] and the roped key from kvA [rows, d_c + d_r] (its last d_r numbers). The caller has
     * checked that seqStart[b] + tokens &lt;= capacity.
     */
    public static void append(float[] ckv, float[] kvA, float[] floats, short[] halves, byte[] bytes, int dtype,
                              int[] seqStart, int batch, int tokens, int capacity, int dc, int dr) {
        for (@Parallel int b = 0; b < batch; b++) {
            for (@Parallel int t = 0; t < tokens; t++) {
                int row = b * tokens + t;
                int slot = b * capacity + seqStart[b] + t;
                if (seqStart[b] < 0) {
                    // never taken: TornadoVM does not copy in an array a kernel only writes (docs/design.md §2), so
                    // this read keeps the rows already cached when the cache comes from the host
                    ckv[row * dc] = floats[slot] + halves[slot] + bytes[slot];
                }
                // the per-dtype writers directly, not CacheRows.writeRow: TornadoVM refuses to inline more than 600 nodes at once
                if (dtype == CacheLayout.FP8) {
                    CacheRows.writeRowFp8(ckv, row * dc, kvA, row * (dc + dr) + dc, floats, halves, bytes, slot, dc, dr);
                } else if (dtype == CacheLayout.INT8) {
                    CacheRows.writeRowInt8(ckv, row * dc, kvA, row * (dc + dr) + dc, floats, bytes, slot, dc, dr);
                } else {
                    CacheRows.writeRowFloat(ckv, row * dc, kvA, row * (dc + dr) + dc, floats, halves, dtype, slot, dc, dr);
                }
            }
        }
    }
}
