package org.tornadomla.attention;

import org.tornadomla.internal.Messages;
import org.tornadomla.MlaException;

import java.util.Locale;

/** The three equivalent ways to attend over the latent cache (docs/design.md §1, step 5). */
public enum AttentionPath {
    /** Decompress K and V of every cached token with kv_b_proj, then ordinary attention. */
    NAIVE,
    /** Fold W^UK into the query and W^UV after the weighted sum; attend over the latent itself. */
    ABSORBED,
    /** ABSORBED with an online softmax over tiles, split-KV and a combine of the splits by their softmax maxima and sums. */
    TILED;

    /** "naive", "absorbed" or "tiled", case-insensitive. */
    public static AttentionPath parse(String s) {
        java.util.Objects.requireNonNull(s, "s");
        for (AttentionPath p : values()) {
            if (p.name().equalsIgnoreCase(s)) return p;
        }
        throw new MlaException("unknown attention path " + Messages.quote(s) + " (expected naive, absorbed or tiled)");
    }

    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}
