package org.tornadomla.fast;

import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinTask;
import java.util.function.IntConsumer;
import java.util.stream.IntStream;

/**
 * The parallel loops of java-fast's kernels: on the spinning pool of the {@link FastExecutor} that runs the
 * graph (bound for the duration of an execution), else a parallel stream (the ForkJoin pool the caller runs in,
 * or the common pool).
 */
final class Parallel {
    private Parallel() {
    }

    /** The pool of the executor running on this thread, or null. */
    static final ScopedValue<SpinPool> POOL = ScopedValue.newInstance();

    static void forEach(int n, IntConsumer body) {
        SpinPool p = pool();
        if (p != null) {
            p.forEach(n, body);
        } else {
            IntStream.range(0, n).parallel().forEach(body);
        }
    }

    /** The spinning pool bound here (an executor's, for the duration of its execution), or null. */
    static SpinPool pool() {
        return POOL.isBound() ? POOL.get() : null;
    }

    /** How many threads a parallel loop gets here. */
    static int threads() {
        SpinPool p = pool();
        if (p != null) return p.threads();
        ForkJoinPool pool = ForkJoinTask.getPool();
        // outside a pool a parallel stream uses the common pool's workers and the calling thread
        return pool != null ? pool.getParallelism() : ForkJoinPool.getCommonPoolParallelism() + 1;
    }

    /** Pieces to cut each of {@code items} into so that there are about two per thread (at least 1 each). */
    static int piecesPerItem(int items) {
        return Math.max(1, (2 * threads() + items - 1) / items);
    }
}
