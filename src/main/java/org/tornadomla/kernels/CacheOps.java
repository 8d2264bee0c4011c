package org.tornadomla.kernels;

import uk.ac.manchester.tornado.api.annotations.Parallel;

/**
 * The latent cache in kernels. Logically the cache is [batch, capacity, w] with w = d_c + d_r: each token's
 * row is its normalised latent c_kv followed by its roped shared key k_pe (576 numbers for DeepSeek-V3, the
 * layout FlashMLA uses). A slot is b·capacity + j. Physically it is three arrays, used by dtype:
 *
 * <pre>
 *  dtype  f32 (float[])                      bf16 (short[])           int8 (byte[])
 *  F32    the values, [slot, w]              1-element placeholder    1-element placeholder
 *  BF16   the power-of-two table Bf16.POW2   raw bf16, [slot, w]      1-element placeholder
 *  INT8   2 scales per slot: latent, rope    1-element placeholder    values, [slot, w]; value = byte · scale
 * </pre>
 *
 * (The bf16 decoding table lives in the f32 array, which a bf16 cache does not otherwise use, to keep
 * TornadoVM's limit of 20 kernel arguments. Bytes are read signed only: TornadoVM 5.2's OpenCL code treats
 * {@code b & 0xFF} as a signed char, seen on PoCL.) Kernels take all three arrays and the dtype code; the
 * dtype is a shape constant, so TornadoVM folds the branches in {@link #load} away. Decoding happens inside
 * the score and accumulation loops: there is never a dequantised copy of the cache.
 */
public final class CacheOps {
    private CacheOps() {
    }

    /** Storage dtype codes. */
    public static final int F32 = 0;
    public static final int BF16 = 1;
    public static final int INT8 = 2;

    /** Number {@code col} (&lt; d_c + d_r) of cache slot {@code slot}, as float. */
    public static float load(float[] f32, short[] bf16, byte[] int8, int dtype, int slot, int col, int w, int dc) {
        int idx = slot * w + col;
        if (dtype == BF16) {
            return Bf16.decode(bf16[idx], f32);
        } else if (dtype == INT8) {
            return int8[idx] * f32[2 * slot + (col < dc ? 0 : 1)];
        }
        return f32[idx];
    }

    /**
     * Writes one token's row to cache slot {@code slot}: the latent from lat[latOff …+d_c) and the roped key
     * from pe[peOff …+d_r). INT8 scales each part by its largest magnitude / 127 and rounds half away from
     * zero; BF16 rounds to nearest even. Used by {@link #append} and by host code that fills a cache.
     */
    public static void writeRow(float[] lat, int latOff, float[] pe, int peOff, float[] f32, short[] bf16, byte[] int8,
                                int dtype, int slot, int dc, int dr) {
        int w = dc + dr;
        int dst = slot * w;
        if (dtype == INT8) {
            float maxLat = 0f;
            float maxPe = 0f;
            for (int i = 0; i < dc; i++) {
                maxLat = Math.max(maxLat, Math.abs(lat[latOff + i]));
            }
            for (int i = 0; i < dr; i++) {
                maxPe = Math.max(maxPe, Math.abs(pe[peOff + i]));
            }
            f32[2 * slot] = maxLat / 127f;
            f32[2 * slot + 1] = maxPe / 127f;
            float invLat = maxLat > 0f ? 127f / maxLat : 0f;
            float invPe = maxPe > 0f ? 127f / maxPe : 0f;
            for (int i = 0; i < w; i++) {
                float q = i < dc ? lat[latOff + i] * invLat : pe[peOff + i - dc] * invPe;
                int r = (int) (q >= 0f ? q + 0.5f : q - 0.5f);
                int8[dst + i] = (byte) Math.max(-127, Math.min(127, r));
            }
        } else {
            for (int i = 0; i < w; i++) {
                float v = i < dc ? lat[latOff + i] : pe[peOff + i - dc];
                if (dtype == BF16) {
                    bf16[dst + i] = Bf16.encode(v, f32);
                } else {
                    f32[dst + i] = v;
                }
            }
        }
    }

    /**
     * Appends {@code tokens} rows per sequence at positions seqStart[b] … +tokens−1: the latent from
     * ckv [rows, d_c] and the roped key from kvA [rows, d_c + d_r] (its last d_r numbers). The caller has
     * checked that seqStart[b] + tokens &lt;= capacity.
     */
    public static void append(float[] ckv, float[] kvA, float[] f32, short[] bf16, byte[] int8, int dtype,
                              int[] seqStart, int batch, int tokens, int capacity, int dc, int dr) {
        for (@Parallel int b = 0; b < batch; b++) {
            for (@Parallel int t = 0; t < tokens; t++) {
                int row = b * tokens + t;
                int slot = b * capacity + seqStart[b] + t;
                if (seqStart[b] < 0) {
                    // never taken: TornadoVM does not copy in an array a kernel only writes (DESIGN.md §2), so
                    // this read keeps the rows already cached when the cache comes from the host
                    ckv[row * dc] = f32[slot] + bf16[slot] + int8[slot];
                }
                writeRow(ckv, row * dc, kvA, row * (dc + dr) + dc, f32, bf16, int8, dtype, slot, dc, dr);
            }
        }
    }
}
