package org.tornadomla.kernels;

import static org.tornadomla.kernels.CacheLayout.BF16;
import static org.tornadomla.kernels.CacheLayout.FP8;
import static org.tornadomla.kernels.CacheLayout.FP8_BLOCK;
import static org.tornadomla.kernels.CacheLayout.INT8;

/**
 * Writing one token's row into the cache in each storage format ({@link CacheLayout} describes the layout):
 * f32 as is, bf16 rounded to nearest even, int8 with a per-token scale per part, fp8 e4m3 with a scale per
 * 128 latent numbers. Kernel-safe helpers, inlined into {@link CacheOps#append}.
 *
 * <p>On the kernel ladder (docs/ladder/08-int8.md): an int8 cache reads 584 bytes per token instead of
 * 2,304; step 6 over it: <!-- ladder:8 -->27.9 / 0.239 / 13.2 ms<!-- /ladder --> (reference / java-fast / TornadoVM-PoCL, H=16, T=1024), 8.9e-3
 * from step 1.
 */
public final class CacheRows {
    /** The smallest fp8 block scale before its rounding to a power of two (FlashMLA's clamp of amax/448). */
    public static final float FP8_MIN_SCALE = 1e-4f;

    private CacheRows() {
    }

    /**
     * Writes one token's row to cache slot {@code slot}: the latent from lat[latOff …+d_c) and the roped key
     * from pe[peOff …+d_r). INT8 scales each part by its largest magnitude / 127 and rounds half away from
     * zero; FP8 scales each block of 128 latent numbers by its largest magnitude / 448 (at least 1e-4)
     * rounded up to a power of two, FlashMLA's and DeepSeek-V3.2's ue8m0 scales; BF16 rounds to nearest
     * even. The host's way to fill a cache; {@link CacheOps#append} calls the per-dtype helpers itself (TornadoVM
     * inlines a method only up to 600 graph nodes, and this dispatcher with all three is larger).
     */
    public static void writeRow(float[] lat, int latOff, float[] pe, int peOff, float[] floats, short[] halves, byte[] bytes,
                                int dtype, int slot, int dc, int dr) {
        if (dtype == FP8) {
            writeRowFp8(lat, latOff, pe, peOff, floats, halves, bytes, slot, dc, dr);
        } else if (dtype == INT8) {
            writeRowInt8(lat, latOff, pe, peOff, floats, bytes, slot, dc, dr);
        } else {
            writeRowFloat(lat, latOff, pe, peOff, floats, halves, dtype, slot, dc, dr);
        }
    }

    public static void writeRowFloat(float[] lat, int latOff, float[] pe, int peOff, float[] floats, short[] halves, int dtype,
                                     int slot, int dc, int dr) {
        for (int i = 0; i < dc + dr; i++) {
            float v = i < dc ? lat[latOff + i] : pe[peOff + i - dc];
            int at = CacheLayout.valueIndex(slot, i, dc + dr);
            if (dtype == BF16) {
                halves[at] = Bf16.encode(v, floats);
            } else {
                floats[at] = v;
            }
        }
    }

    public static void writeRowInt8(float[] lat, int latOff, float[] pe, int peOff, float[] floats, byte[] bytes, int slot, int dc, int dr) {
        float maxLat = 0f;
        float maxPe = 0f;
        for (int i = 0; i < dc; i++) {
            maxLat = Math.max(maxLat, Math.abs(lat[latOff + i]));
        }
        for (int i = 0; i < dr; i++) {
            maxPe = Math.max(maxPe, Math.abs(pe[peOff + i]));
        }
        floats[CacheLayout.int8ScaleIndex(slot, 0)] = maxLat / 127f;
        floats[CacheLayout.int8ScaleIndex(slot, 1)] = maxPe / 127f;
        float invLat = maxLat > 0f ? 127f / maxLat : 0f;
        float invPe = maxPe > 0f ? 127f / maxPe : 0f;
        for (int i = 0; i < dc + dr; i++) {
            float q = i < dc ? lat[latOff + i] * invLat : pe[peOff + i - dc] * invPe;
            int r = (int) (q >= 0f ? q + 0.5f : q - 0.5f);
            bytes[CacheLayout.valueIndex(slot, i, dc + dr)] = (byte) Math.max(-127, Math.min(127, r));
        }
    }

    public static void writeRowFp8(float[] lat, int latOff, float[] pe, int peOff, float[] floats, short[] halves, byte[] bytes,
                                   int slot, int dc, int dr) {
        int nb = CacheLayout.fp8Blocks(dc);
        for (int blk = 0; blk < nb; blk++) {
            int lo = blk * FP8_BLOCK;
            int hi = Math.min(dc, lo + FP8_BLOCK);
            float amax = 0f;
            for (int i = lo; i < hi; i++) {
                amax = Math.max(amax, Math.abs(lat[latOff + i]));
            }
            // FlashMLA's fp8_ds_mla and DeepSeek-V3.2: the scale amax/448, at least 1e-4, rounded up to a power of
            // two (ue8m0); x/scale is then x times an exact power of two
            float scale = Indexer.pow2Ceil(Math.max(amax / Fp8.MAX, FP8_MIN_SCALE), floats);
            floats[CacheLayout.fp8ScaleIndex(slot, lo, dc)] = scale;
            float inv = 1f / scale;
            for (int i = lo; i < hi; i++) {
                bytes[CacheLayout.fp8LatentIndex(slot, i, dc)] = Fp8.encode(lat[latOff + i] * inv, floats);
            }
        }
        for (int i = 0; i < dr; i++) {
            halves[CacheLayout.fp8RopeIndex(slot, i, dr)] = Bf16.encode(pe[peOff + i], floats);
        }
    }
}
