package org.tornadomla.weights;

import org.tornadomla.internal.Messages;
import org.tornadomla.MlaException;

/**
 * The safetensors dtypes, with their sizes in bytes. Only F32, BF16, F16 and F64 read as floats; one-byte
 * dtypes read as bytes only under their own name ({@link SafeTensorsFile#readBytes}).
 */
public enum DType {
    /** Booleans, one byte each. */ BOOL(1),
    /** Unsigned 8-bit integers. */ U8(1),
    /** Signed 8-bit integers. */ I8(1),
    /** 8-bit floats, 5 exponent and 2 mantissa bits. */ F8_E5M2(1),
    /** 8-bit floats, 4 exponent and 3 mantissa bits (DeepSeek's FP8 weights). */ F8_E4M3(1),
    /** Signed 16-bit integers. */ I16(2),
    /** Unsigned 16-bit integers. */ U16(2),
    /** IEEE half precision. */ F16(2),
    /** bfloat16. */ BF16(2),
    /** Signed 32-bit integers. */ I32(4),
    /** Unsigned 32-bit integers. */ U32(4),
    /** IEEE single precision. */ F32(4),
    /** IEEE double precision. */ F64(8),
    /** Signed 64-bit integers. */ I64(8),
    /** Unsigned 64-bit integers. */ U64(8);

    /** Bytes per element. */
    public final int bytes;

    DType(int bytes) {
        this.bytes = bytes;
    }

    /** Whether this dtype reads as floats: F32, BF16, F16 or F64. */
    public boolean isFloat() {
        return this == F32 || this == BF16 || this == F16 || this == F64;
    }

    /** The dtype named exactly {@code s} (as the format writes it: "F32", "BF16", …). */
    public static DType parse(String s, String tensor) {
        for (DType d : values()) {
            if (d.name().equals(s)) return d;
        }
        for (DType d : values()) {
            if (d.name().equalsIgnoreCase(s)) {
                throw new MlaException("tensor " + Messages.quote(tensor) + ": unknown dtype " + Messages.quote(s)
                        + " (the format's dtypes are upper case: " + d.name() + ")");
            }
        }
        throw new MlaException("tensor " + Messages.quote(tensor) + ": unknown dtype " + Messages.quote(s)
                + " (expected a safetensors dtype such as F32, BF16, F16)");
    }
}
