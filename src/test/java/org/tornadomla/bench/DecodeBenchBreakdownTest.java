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
            double total = 0, worker = 0;
            for (DecodeBench.TaskTime t : got) {
                assertEquals(2, t.threadMs().length, t.task());
                // a thread's time in a task's loops is part of the task's wall time (the clock read around each body
                // and around the task: within 0.02 ms a step)
                for (double ms : t.threadMs()) assertTrue(ms >= 0 && ms <= t.ms() + 0.02, t.task() + ": a thread " + ms + " ms in a task of " + t.ms());
                total += t.threadMs()[0] + t.threadMs()[1];
                worker += t.threadMs()[1];
            }
            // the step's products run in those loops: the threads' time is most of the step's, and the worker took its
            // share of the pieces over 20 steps
            double step = got.stream().mapToDouble(DecodeBench.TaskTime::ms).sum();
            assertTrue(total > 0.5 * step, "threads busy " + total + " ms of a step of " + step + " ms (2 threads)");
            assertTrue(worker > 0, "the worker thread's time was never counted");
        }
        // on a caller's ForkJoin pool java-fast has no threads of its own to count: the rows stay as they were
        java.util.concurrent.ForkJoinPool fj = new java.util.concurrent.ForkJoinPool(2);
        try (FastExecutor onPool = new FastExecutor(fj)) {
            assertEquals(0, onPool.threadsTimed());
            for (DecodeBench.TaskTime t : bench.breakdown(onPool, 2)) assertEquals(0, t.threadMs().length, t.task());
        } finally {
            fj.shutdown();
        }
    }

    @Test
    void theTimedCallRefusesRowsThatDoNotFitAndAClosedExecutor() {
        DecodeBench bench = new DecodeBench(SHAPE, 5);
        FastExecutor fast = new FastExecutor(2);
        org.tornadomla.graph.KernelGraph graph = bench.graphFor(fast);
        int tasks = graph.tasks().size();
        expectRefusal(() -> fast.execute(graph, new long[tasks], new long[tasks - 1][2]), "threadNanos holds " + (tasks - 1) + " rows for a graph of " + tasks + " tasks");
        expectRefusal(() -> fast.execute(graph, new long[tasks], new long[tasks][1]), "threadNanos rows hold 1 threads; this executor runs 2");
        NullPointerException npe = org.junit.jupiter.api.Assertions.assertThrows(NullPointerException.class, () -> fast.execute(graph, new long[tasks], null));
        assertTrue(npe.getMessage().contains("threadNanos"), npe.getMessage());
        // untimed (no taskNanos): runs, and counts nothing
        long[][] rows = new long[tasks][2];
        fast.execute(graph, null, rows);
        for (long[] r : rows) org.junit.jupiter.api.Assertions.assertArrayEquals(new long[2], r);
        fast.close();
        expectRefusal(() -> fast.execute(graph, new long[tasks], new long[tasks][2]), "this java-fast executor is closed");
    }

    /** The call throws one MlaException whose message contains the text. */
    private static void expectRefusal(org.junit.jupiter.api.function.Executable call, String text) {
        org.tornadomla.MlaException e = org.junit.jupiter.api.Assertions.assertThrows(org.tornadomla.MlaException.class, call);
        assertTrue(e.getMessage().contains(text), e.getMessage());
    }
}
