package org.tornadomla.cache;

import org.tornadomla.internal.Messages;
import org.tornadomla.MlaException;
import org.tornadomla.kernels.CacheLayout;

import java.util.Locale;

/** How the latent cache stores its numbers. Attention math is fp32 whatever the storage. */
public enum CacheDtype {
    /** 4 bytes per number. */
    F32(CacheLayout.F32, 4),
    /** 2 bytes per number: raw bfloat16 patterns, rounded to nearest even. */
    BF16(CacheLayout.BF16, 2),
    /** 1 byte per number plus one fp32 scale per token for the latent and one for the rope part. */
    INT8(CacheLayout.INT8, 1),
    /**
     * FlashMLA's layout: e4m3 latent with an fp32 power-of-two (ue8m0) scale per 128 numbers, bf16 rope part (656
     * B/token for V3).
     */
    FP8(CacheLayout.FP8, 1);

    /** The code kernels take ({@link CacheLayout#F32} … {@link CacheLayout#FP8}). */
    public final int code;
    /** Bytes per stored number (scales not counted). */
    public final int bytes;

    CacheDtype(int code, int bytes) {
        this.code = code;
        this.bytes = bytes;
    }

    /** "f32", "bf16", "int8" or "fp8", case-insensitive. */
    public static CacheDtype parse(String s) {
        java.util.Objects.requireNonNull(s, "s");
        for (CacheDtype d : values()) {
            if (d.name().equalsIgnoreCase(s)) return d;
        }
        throw new MlaException("unknown cache dtype " + Messages.quote(s) + " (expected f32, bf16, int8 or fp8)");
    }

    /** Bytes stored per token for a latent of d_c and a rope part of d_r, scales included ({@link CacheLayout}). */
    public long bytesPerToken(int dc, int dr) {
        return CacheLayout.bytesPerToken(code, dc, dr);
    }

    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}
