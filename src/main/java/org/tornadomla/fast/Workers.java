package org.tornadomla.fast;

import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinTask;

/** How many threads the kernels' parallel loops get: the pool they run in (FastExecutor's), or the common one. */
final class Workers {
    private Workers() {
    }

    static int count() {
        ForkJoinPool pool = ForkJoinTask.getPool();
        // outside a pool a parallel stream uses the common pool's workers and the calling thread
        return pool != null ? pool.getParallelism() : ForkJoinPool.getCommonPoolParallelism() + 1;
    }

    /** Pieces to cut each of {@code items} into so that there are about two per thread (at least 1 each). */
    static int piecesPerItem(int items) {
        return Math.max(1, (2 * count() + items - 1) / items);
    }
}
