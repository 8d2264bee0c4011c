package org.tornadomla.attention;

import org.tornadomla.MlaException;

import java.util.Objects;

/**
 * How a forward call attends: the path and, for TILED, the tile size Bc (cache positions per online-softmax
 * step, 1 … {@value #MAX_TILE}) and the number of KV splits, each with its softmax max and sum, combined
 * (1 … {@value #MAX_SPLITS}, or {@link #AUTO}: chosen for the executor).
 *
 * <p>{@code dense}: for a sparse config (DeepSeek-V3.2's DSA, {@code MlaConfig.sparse()}), attend to the whole
 * context as dense MLA does instead of the indexer's top-k positions, e.g. to compare the two; the indexer's keys
 * are still cached. A dense config always attends densely; the flag changes nothing there.
 */
public record AttentionOptions(AttentionPath path, int tileSize, int numSplits, boolean dense) {
    public static final int DEFAULT_TILE = 64;
    /** numSplits = AUTO: as many splits as keep every worker of the executor busy ({@link #resolved}). */
    public static final int AUTO = 0;
    public static final int DEFAULT_SPLITS = AUTO;
    /** Bounds that keep the per-split scratch buffers small; more splits than cached tokens only adds empty ones. */
    public static final int MAX_TILE = 65536, MAX_SPLITS = 4096;

    /** Checks the path, the tile size and the split count. */
    public AttentionOptions {
        Objects.requireNonNull(path, "path");
        if (tileSize <= 0 || tileSize > MAX_TILE) throw new MlaException("tile size must be in 1 … " + MAX_TILE + ", found " + tileSize);
        if (numSplits < 0 || numSplits > MAX_SPLITS) {
            throw new MlaException("split count must be 0 (auto) or in 1 … " + MAX_SPLITS + ", found " + numSplits);
        }
    }

    /** Path, tile size and split count; sparse attention for a sparse config (dense = false). */
    public AttentionOptions(AttentionPath path, int tileSize, int numSplits) {
        this(path, tileSize, numSplits, false);
    }

    /** These options, attending densely ({@code true}) or, for a sparse config, to the indexer's selection ({@code false}). */
    public AttentionOptions withDense(boolean dense) {
        return new AttentionOptions(path, tileSize, numSplits, dense);
    }

    /** The path with the default tile ({@value #DEFAULT_TILE} positions) and an automatic split count. */
    public static AttentionOptions of(AttentionPath path) {
        return new AttentionOptions(path, DEFAULT_TILE, DEFAULT_SPLITS);
    }

    /**
     * These options with {@link #AUTO} replaced by the split count a step of {@code rows} token rows × {@code heads}
     * heads over a cache of {@code capacity} tokens gets on {@code executor}: enough splits to keep each of the
     * executor's workers busy, at most one per tile of the capacity and 64. A set split count is kept.
     */
    public AttentionOptions resolved(int rows, int heads, int capacity, org.tornadomla.graph.GraphExecutor executor) {
        return new AttentionOptions(path, tileSize, org.tornadomla.attention.internal.Splits.splitsFor(this, rows, heads, capacity,
                executor.parallelism(), executor.headsPerWorkItem()), dense);
    }
}
