package org.tornadomla.weights;

import org.tornadomla.internal.Messages;
import org.tornadomla.MlaException;

import java.util.Locale;
import java.util.Objects;

/**
 * How a layer holds its projection weights in memory. The kernels read each form directly (decoding bf16
 * and fp8 where they multiply), so the choice sets the weights' memory and, at batch 1 where a decode step
 * streams every weight once, the time of the projections.
 */
public enum WeightDtype {
    /** 4 bytes a number: exact for every checkpoint dtype the library reads. */
    F32(4),
    /** bfloat16 bit patterns, 2 bytes a number: exact for BF16 checkpoints, rounds f32 and FP8 weights. */
    BF16(2),
    /**
     * DeepSeek's block-scaled FP8: one e4m3 byte a number plus one f32 scale per 128 × 128 block: exact for
     * FP8 checkpoints; other weights are quantised (scale = max |w| / 448 of each block, round to nearest even).
     */
    FP8(1);

    /** Bytes per number, not counting FP8's block scales. */
    public final int bytesPerNumber;

    WeightDtype(int bytesPerNumber) {
        this.bytesPerNumber = bytesPerNumber;
    }

    /** "f32" (or "fp32", "float32"), "bf16" (or "bfloat16"), "fp8" (or "f8", "e4m3"), case-insensitive. */
    public static WeightDtype parse(String s) {
        Objects.requireNonNull(s, "s");
        return switch (s.toLowerCase(Locale.ROOT)) {
            case "f32", "fp32", "float32" -> F32;
            case "bf16", "bfloat16" -> BF16;
            case "fp8", "f8", "e4m3" -> FP8;
            default -> throw new MlaException("unknown weights dtype " + Messages.quote(s) + " (expected f32, bf16 or fp8)");
        };
    }

    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}
