package org.tornadomla.parallel;

import org.tornadomla.graph.GraphExecutor;
import org.tornadomla.graph.JvmExecutor;
import org.tornadomla.graph.KernelGraph;

/** The JVM reference executor, which can be told to fail its next executions: a device that fails mid-step. */
final class Flaky implements GraphExecutor {
    private final JvmExecutor jvm = new JvmExecutor();
    volatile boolean fail;

    @Override
    public void execute(KernelGraph graph) {
        if (fail) throw new IllegalStateException("device lost");
        jvm.execute(graph);
    }

    @Override
    public String device() {
        return "flaky " + jvm.device();
    }
}
