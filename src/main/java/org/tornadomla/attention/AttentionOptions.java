package org.tornadomla.attention;

import org.tornadomla.MlaException;

/**
 * How a forward call attends: the path and, for TILED, the tile size Bc (cache positions per online-softmax
 * step) and the number of KV splits combined by log-sum-exp.
 */
public record AttentionOptions(AttentionPath path, int tileSize, int numSplits) {
    public static final int DEFAULT_TILE = 64;
    public static final int DEFAULT_SPLITS = 4;

    public AttentionOptions {
        if (path == null) throw new MlaException("attention path must be naive, absorbed or tiled, found null");
        if (tileSize <= 0) throw new MlaException("tile size must be > 0, found " + tileSize);
        if (numSplits <= 0) throw new MlaException("split count must be > 0, found " + numSplits);
    }

    public static AttentionOptions of(AttentionPath path) {
        return new AttentionOptions(path, DEFAULT_TILE, DEFAULT_SPLITS);
    }
}
