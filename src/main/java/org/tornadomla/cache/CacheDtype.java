package org.tornadomla.cache;

import org.tornadomla.MlaException;
import org.tornadomla.kernels.CacheOps;

import java.util.Locale;

/** How the latent cache stores its numbers. Attention math is fp32 whatever the storage. */
public enum CacheDtype {
    /** 4 bytes per number. */
    F32(CacheOps.F32, 4),
    /** 2 bytes per number: raw bfloat16 patterns, rounded to nearest even. */
    BF16(CacheOps.BF16, 2),
    /** 1 byte per number plus one fp32 scale per token for the latent and one for the rope part. */
    INT8(CacheOps.INT8, 1);

    /** The code kernels take ({@link CacheOps#F32}, {@link CacheOps#BF16}). */
    public final int code;
    public final int bytes;

    CacheDtype(int code, int bytes) {
        this.code = code;
        this.bytes = bytes;
    }

    public static CacheDtype parse(String s) {
        for (CacheDtype d : values()) {
            if (d.name().equalsIgnoreCase(s)) return d;
        }
        throw new MlaException("unknown cache dtype '" + s + "' (expected f32, bf16 or int8)");
    }

    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}
