package org.tornadomla.attention.internal;

import org.tornadomla.attention.AttentionOptions;

/** How many KV splits the tiled path runs when {@link AttentionOptions#numSplits()} is {@link AttentionOptions#AUTO}. */
public final class Splits {
    private Splits() {
    }

    /** At most this many automatic splits: beyond it the combine step costs more than the parallelism gains. */
    public static final int AUTO_MAX_SPLITS = 64;

    /**
     * The split count for a step of {@code rows} token rows × {@code heads} heads over a cache of {@code capacity}
     * tokens on an executor that runs {@code parallelism} work items at once, each serving {@code headsPerItem} heads:
     * opt's numSplits if set, else enough (row, head group, split) items to give each of the executor's slots one
     * (an H200 has 132 multiprocessors and takes two work-groups each: at batch 1 and 128 heads in groups of 8, 17
     * splits), at most one split per tile of the capacity and {@link #AUTO_MAX_SPLITS}.
     */
    public static int splitsFor(AttentionOptions opt, int rows, int heads, int capacity, int parallelism, int headsPerItem) {
        if (opt.numSplits() != AttentionOptions.AUTO) return opt.numSplits();
        int perItem = Math.max(1, Math.min(heads, headsPerItem));
        long items = (long) rows * ((heads + perItem - 1) / perItem);
        long want = (Math.max(1, parallelism) + items - 1) / items;
        long byTiles = (capacity + (long) opt.tileSize() - 1) / opt.tileSize();
        return (int) Math.max(1, Math.min(Math.min(want, byTiles), AUTO_MAX_SPLITS));
    }
}
