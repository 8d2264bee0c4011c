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
        for (DeviceResident s : graph.states()) s.toHost();
        for (KernelGraph.Task t : graph.tasks()) {
            try {
                handle(t).invokeWithArguments(t.args());
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable e) {
                throw new IllegalStateException("task " + t.name() + " failed", e);
            }
        }
    }

    @Override
    public String device() {
        return "java (reference kernels, sequential on the JVM)";
    }
}
