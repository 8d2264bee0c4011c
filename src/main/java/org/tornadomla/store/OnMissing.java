package org.tornadomla.store;

/** What a pull does when a block it needs is missing, damaged or not the reader's (foreign config, dtype, layer). */
public enum OnMissing {
    /** Refuse with one clear error; the cache is left as it was. */
    FAIL,
    /** Load only the blocks before the first hole (all layers alike) and report fewer tokens, so the caller computes the rest. */
    RECOMPUTE
}
