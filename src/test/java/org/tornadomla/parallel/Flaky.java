package org.tornadomla.parallel;

import org.tornadomla.graph.GraphExecutor;
import org.tornadomla.graph.JvmExecutor;
import org.tornadomla.graph.KernelGraph;

/** The JVM reference executor, which can be told to fail its next executions: a device that fails mid-step. */
final class Flaky implements GraphExecutor {
    private static final java.util.concurrent.atomic.AtomicInteger MADE = new java.util.concurrent.atomic.AtomicInteger();
    private final JvmExecutor jvm = new JvmExecutor();
    /** Each its own device, as two GPUs are (the layers refuse two executors of one device). */
    private final int id = MADE.getAndIncrement();
    volatile boolean fail;

    @Override
    public void execute(KernelGraph graph) {
        if (fail) throw new IllegalStateException("device lost");
        jvm.execute(graph);
    }

    @Override
    public String device() {
        return "flaky device " + id + ", " + jvm.device();
    }
}
