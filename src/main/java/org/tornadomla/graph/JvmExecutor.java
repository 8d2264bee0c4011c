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
            if (taskNanos != null) {
                taskNanos[i] += System.nanoTime() - t0;
                taskTimed(i);
            }
            i++;
        }
    }

    /**
     * As {@link #execute(KernelGraph, long[])}, and, where taskNanos is given, adds to {@code threadNanos[i][t]} the
     * time thread t spent in task i's parallel loops, for the {@link #threadsTimed()} threads of an executor that runs
     * them on threads of its own (rows of at least that many). Here (sequential) there are none, and threadNanos stays
     * as it was.
     */
    public void execute(KernelGraph graph, long[] taskNanos, long[][] threadNanos) {
        java.util.Objects.requireNonNull(threadNanos, "threadNanos");
        execute(graph, taskNanos);
    }

    /** How many threads {@link #execute(KernelGraph, long[], long[][])} times per task: here none. */
    public int threadsTimed() {
        return 0;
    }

    /**
     * Called after task {@code index} of an {@link #execute(KernelGraph, long[])} that times its tasks, on the calling
     * thread; here, nothing (an executor with threads of its own collects their times there).
     */
    protected void taskTimed(int index) {
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
