package org.tornadomla.weights;

import org.tornadomla.MlaException;

/**
 * The safetensors dtypes, with their sizes in bytes. Only F32, BF16, F16 and F64 read as floats; one-byte
 * dtypes read as bytes only under their own name ({@link SafeTensorsFile#readBytes}).
 */
public enum DType {
    BOOL(1), U8(1), I8(1), F8_E5M2(1), F8_E4M3(1), I16(2), U16(2), F16(2), BF16(2), I32(4), U32(4), F32(4),
    F64(8), I64(8), U64(8);

    public final int bytes;

    DType(int bytes) {
        this.bytes = bytes;
    }

    public boolean isFloat() {
        return this == F32 || this == BF16 || this == F16 || this == F64;
    }

    /** The dtype named exactly {@code s} (as the format writes it: "F32", "BF16", …). */
    public static DType parse(String s, String tensor) {
        for (DType d : values()) {
            if (d.name().equals(s)) return d;
        }
        throw new MlaException("tensor " + MlaException.quote(tensor) + ": unknown dtype " + MlaException.quote(s)
                + " (expected a safetensors dtype such as F32, BF16, F16)");
    }
}
