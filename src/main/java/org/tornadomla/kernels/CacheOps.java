package org.tornadomla.kernels;

import uk.ac.manchester.tornado.api.annotations.Parallel;

/**
 * The latent cache in kernels. The cache is one array [batch, capacity, d_c + d_r]: each token's row is
 * its normalised latent c_kv followed by its roped shared key k_pe (576 numbers for DeepSeek-V3, the
 * layout FlashMLA uses), stored in one of the dtypes below. Kernels take both storage arrays and the dtype
 * code; the array of the other dtype is a 1-element placeholder. The dtype is a shape constant, so
 * TornadoVM folds the branch in {@link #load} away.
 */
public final class CacheOps {
    private CacheOps() {
    }

    /** Storage dtype codes. */
    public static final int F32 = 0;
    public static final int BF16 = 1;

    /** Reads element idx of the cache as float. */
    public static float load(float[] f32, short[] bf16, int dtype, float[] pow2, int idx) {
        return dtype == BF16 ? Bf16.decode(bf16[idx], pow2) : f32[idx];
    }

    /**
     * Appends {@code tokens} rows per sequence at positions seqStart[b] … +tokens−1: the latent from
     * ckv [rows, d_c] and the roped key from kvA [rows, d_c + d_r] (its last d_r numbers), rounded to bf16
     * when the cache stores bf16. The caller has checked that seqStart[b] + tokens &lt;= capacity.
     */
    public static void append(float[] ckv, float[] kvA, float[] f32, short[] bf16, int dtype, float[] pow2,
                              int[] seqStart, int batch, int tokens, int capacity, int dc, int dr) {
        for (@Parallel int b = 0; b < batch; b++) {
            for (@Parallel int t = 0; t < tokens; t++) {
                int row = b * tokens + t;
                int dst = (b * capacity + seqStart[b] + t) * (dc + dr);
                for (int i = 0; i < dc + dr; i++) {
                    float v = i < dc ? ckv[row * dc + i] : kvA[row * (dc + dr) + i];
                    if (seqStart[b] < 0) {
                        // never taken: TornadoVM does not copy in an array a kernel only writes (DESIGN.md §2),
                        // so this read keeps the rows already cached when the cache comes from the host
                        v = f32[dst + i] + bf16[dst + i];
                    }
                    if (dtype == BF16) {
                        bf16[dst + i] = Bf16.encode(v, pow2);
                    } else {
                        f32[dst + i] = v;
                    }
                }
            }
        }
    }
}
