package org.tornadomla.graph;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodType;
import java.lang.reflect.Method;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Runs a graph's kernels on the JVM, sequentially, in task order: the CPU reference. The kernels'
 * {@code @Parallel} loops are ordinary loops here.
 */
public class JvmExecutor implements GraphExecutor {
    /**
     * Each kernel's {@link #handle} spread over an Object[] of its arguments, made once per kernel (a task's
     * handle is a function of its kernel). invokeWithArguments builds that adapter on every call, and the JIT
     * went on compiling and throwing away its machinery for seconds of a benchmark.
     */
    private final ConcurrentHashMap<Method, MethodHandle> spread = new ConcurrentHashMap<>();

    /** The reference executor; it holds nothing, so closing it changes nothing. */
    public JvmExecutor() {
    }

    /** The code that runs a task: here the reference kernel itself. */
    protected MethodHandle handle(KernelGraph.Task t) {
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
                MethodHandle h = spread.get(t.kernel());
                if (h == null) {
                    h = spreadOverArray(handle(t));
                    spread.putIfAbsent(t.kernel(), h);
                }
                h.invokeExact(t.shared());
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable e) {
                throw new IllegalStateException("task " + t.name() + " failed", e);
            }
            if (taskNanos != null) taskNanos[i] += System.nanoTime() - t0;
            i++;
        }
    }

    /** (Object[]) → void: the kernel called with the array's elements as its arguments (unboxed as it needs). */
    static MethodHandle spreadOverArray(MethodHandle kernel) {
        return kernel.asSpreader(Object[].class, kernel.type().parameterCount())
                .asType(MethodType.methodType(void.class, Object[].class));
    }

    @Override
    public String device() {
        return "java-reference (reference kernels, sequential on the JVM)";
    }
}
