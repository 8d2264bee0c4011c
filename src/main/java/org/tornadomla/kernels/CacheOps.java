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
 *  BF16   the power-of-two table Bf16.pow2() raw bf16, [slot, w]      1-element placeholder
 *  INT8   2 scales per slot: latent, rope    1-element placeholder    values, [slot, w]; value = byte · scale
 *  FP8    POW2, then a scale per 128 latent  rope part, bf16 [slot, d_r]  latent, e4m3 [slot, d_c]
 *         numbers per slot [slot, ⌈d_c/128⌉]
 * </pre>
 *
 * FP8 is FlashMLA's cache layout: 512 e4m3 bytes + 4 fp32 scales + 64 bf16 rope numbers = 656 bytes per
 * token for DeepSeek-V3; each block of 128 latent numbers is scaled by its largest magnitude / 448.
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
    public static final int FP8 = 3;

    /** Where FP8 scales start in the f32 array: after the power-of-two table {@link Bf16#pow2()}. */
    public static final int TABLE = 280;
    /** Latent numbers per FP8 scale. */
    public static final int FP8_BLOCK = 128;

    /** Number {@code col} (&lt; d_c + d_r) of cache slot {@code slot}, as float. */
    public static float load(float[] f32, short[] bf16, byte[] int8, int dtype, int slot, int col, int w, int dc) {
        int idx = slot * w + col;
        if (dtype == BF16) {
            return Bf16.decode(bf16[idx], f32);
        } else if (dtype == FP8) {
            if (col < dc) {
                return Fp8.decode(int8[slot * dc + col], f32) * f32[TABLE + slot * ((dc + FP8_BLOCK - 1) / FP8_BLOCK) + col / FP8_BLOCK];
            }
            return Bf16.decode(bf16[slot * (w - dc) + col - dc], f32);
        } else if (dtype == INT8) {
            return int8[idx] * f32[2 * slot + (col < dc ? 0 : 1)];
        }
        return f32[idx];
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
                // the per-dtype writers directly, not CacheRows.writeRow: TornadoVM refuses to inline more than 600 nodes at once
                if (dtype == FP8) {
                    CacheRows.writeRowFp8(ckv, row * dc, kvA, row * (dc + dr) + dc, f32, bf16, int8, slot, dc, dr);
                } else if (dtype == INT8) {
                    CacheRows.writeRowInt8(ckv, row * dc, kvA, row * (dc + dr) + dc, f32, int8, slot, dc, dr);
                } else {
                    CacheRows.writeRowFloat(ckv, row * dc, kvA, row * (dc + dr) + dc, f32, bf16, dtype, slot, dc, dr);
                }
            }
        }
    }
}
