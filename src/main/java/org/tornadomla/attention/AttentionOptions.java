package org.tornadomla.attention;

import org.tornadomla.MlaException;

import java.util.Objects;

/**
 * How a forward call attends: the path and, for TILED, the tile size Bc (cache positions per online-softmax
 * step, 1 … {@value #MAX_TILE}) and the number of KV splits, each with its softmax max and sum, combined (1 … {@value #MAX_SPLITS}).
 */
public record AttentionOptions(AttentionPath path, int tileSize, int numSplits) {
    public static final int DEFAULT_TILE = 64;
    public static final int DEFAULT_SPLITS = 4;
    /** Bounds that keep the per-split scratch buffers small; more splits than cached tokens only adds empty ones. */
    public static final int MAX_TILE = 65536, MAX_SPLITS = 4096;

    public AttentionOptions {
        Objects.requireNonNull(path, "path");
        if (tileSize <= 0 || tileSize > MAX_TILE) throw new MlaException("tile size must be in 1 … " + MAX_TILE + ", found " + tileSize);
        if (numSplits <= 0 || numSplits > MAX_SPLITS) throw new MlaException("split count must be in 1 … " + MAX_SPLITS + ", found " + numSplits);
    }

    public static AttentionOptions of(AttentionPath path) {
        return new AttentionOptions(path, DEFAULT_TILE, DEFAULT_SPLITS);
    }
}
