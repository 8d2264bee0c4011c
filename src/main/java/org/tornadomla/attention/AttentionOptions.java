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
    /** numSplits = AUTO: as many splits as keep every worker of the executor busy ({@link #splitsFor}). */
    public static final int AUTO = 0;
    public static final int DEFAULT_SPLITS = AUTO;
    /** Bounds that keep the per-split scratch buffers small; more splits than cached tokens only adds empty ones. */
    public static final int MAX_TILE = 65536, MAX_SPLITS = 4096;
    /** At most this many automatic splits: beyond it the combine step costs more than the parallelism gains. */
    public static final int AUTO_MAX_SPLITS = 64;

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
     * The split count for a step of {@code rows} token rows × {@code heads} heads over a cache of
     * {@code capacity} tokens on an executor that runs {@code parallelism} work items at once: numSplits if
     * set, else enough (row, head group, split) items to give each of the executor's {@code parallelism}
     * slots one (an H200 has 132 multiprocessors and takes two work-groups each: at batch 1 and 128 heads, 17
     * splits), at most one split per tile of the capacity and {@link #AUTO_MAX_SPLITS}.
     */
    public int splitsFor(int rows, int heads, int capacity, int parallelism) {
        return splitsFor(rows, heads, capacity, parallelism, 8);
    }

    /** As {@link #splitsFor(int, int, int, int)} for an executor whose work items serve {@code headsPerItem} heads. */
    public int splitsFor(int rows, int heads, int capacity, int parallelism, int headsPerItem) {
        if (numSplits != AUTO) return numSplits;
        int perItem = Math.max(1, Math.min(heads, headsPerItem));
        long items = (long) rows * ((heads + perItem - 1) / perItem);
        long want = (Math.max(1, parallelism) + items - 1) / items;
        long byTiles = (capacity + (long) tileSize - 1) / tileSize;
        return (int) Math.max(1, Math.min(Math.min(want, byTiles), AUTO_MAX_SPLITS));
    }

    /** These options with the split count resolved for {@code executor} ({@link #splitsFor}). */
    public AttentionOptions resolved(int rows, int heads, int capacity, org.tornadomla.graph.GraphExecutor executor) {
        return new AttentionOptions(path, tileSize, splitsFor(rows, heads, capacity, executor.parallelism(), executor.headsPerWorkItem()), dense);
    }
}
