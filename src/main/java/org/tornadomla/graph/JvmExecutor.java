package org.tornadomla.graph;

/**
 * Runs a graph's kernels on the JVM, sequentially, in task order: the CPU reference. The kernels'
 * {@code @Parallel} loops are ordinary loops here.
 */
public class JvmExecutor implements GraphExecutor {
    /** The code that runs a task: here the reference kernel itself. */
    protected java.lang.invoke.MethodHandle handle(KernelGraph.Task t) {
        return t.handle();
    }

    @Override
    public void execute(KernelGraph graph) {
        execute(graph, null);
    }

    /** Runs the graph and, when {@code taskNanos} is not null, adds each task's wall time to taskNanos[i]. */
    public void execute(KernelGraph graph, long[] taskNanos) {
        for (DeviceResident s : graph.states()) s.toHost();
        int i = 0;
        for (KernelGraph.Task t : graph.tasks()) {
            long t0 = taskNanos == null ? 0 : System.nanoTime();
            try {
                handle(t).invokeWithArguments(t.args());
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable e) {
                throw new IllegalStateException("task " + t.name() + " failed", e);
            }
            if (taskNanos != null) taskNanos[i] += System.nanoTime() - t0;
            i++;
        }
    }

    @Override
    public String device() {
        return "java (reference kernels, sequential on the JVM)";
    }
}
