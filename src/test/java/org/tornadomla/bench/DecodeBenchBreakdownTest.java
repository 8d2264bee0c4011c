package org.tornadomla.bench;

import org.junit.jupiter.api.Test;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.fast.FastExecutor;
import org.tornadomla.graph.JvmExecutor;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code ./mla bench --breakdown}: each task's wall time and, on java-fast, each thread's time in its loops. */
class DecodeBenchBreakdownTest {
    private static final DecodeBench.Shape SHAPE = new DecodeBench.Shape(AttentionPath.ABSORBED, CacheDtype.F32, 2, 16, 512);

    @Test
    void eachThreadsTimeInATaskIsWithinTheTasksTimeAndTheReferenceHasNone() {
        DecodeBench bench = new DecodeBench(SHAPE, 5);
        List<String> tasks = List.of("absorb_q", "scores", "softmax", "values", "unabsorb_v");
        List<DecodeBench.TaskTime> ref = bench.breakdown(new JvmExecutor(), 3);
        assertEquals(tasks, ref.stream().map(DecodeBench.TaskTime::task).toList());
        for (DecodeBench.TaskTime t : ref) assertEquals(0, t.threadMs().length, t.task() + ": the reference runs no threads of its own");
        try (FastExecutor fast = new FastExecutor(2)) {
            assertEquals(2, fast.threadsTimed());
            List<DecodeBench.TaskTime> got = bench.breakdown(fast, 20);
            assertEquals(tasks, got.stream().map(DecodeBench.TaskTime::task).toList());
            double total = 0;
            for (DecodeBench.TaskTime t : got) {
                assertEquals(2, t.threadMs().length, t.task());
                // a thread's time in a task's loops is part of the task's wall time (the clock read around each body
                // and around the task: within 0.02 ms a step)
                for (double ms : t.threadMs()) assertTrue(ms >= 0 && ms <= t.ms() + 0.02, t.task() + ": a thread " + ms + " ms in a task of " + t.ms());
                total += t.threadMs()[0] + t.threadMs()[1];
            }
            // the step's products run in those loops: the threads' time is most of the step's, not nothing
            double step = got.stream().mapToDouble(DecodeBench.TaskTime::ms).sum();
            assertTrue(total > 0.5 * step, "threads busy " + total + " ms of a step of " + step + " ms (2 threads)");
        }
    }
}
