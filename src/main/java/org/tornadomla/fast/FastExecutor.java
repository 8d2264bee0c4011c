package org.tornadomla.fast;

import org.tornadomla.MlaException;
import org.tornadomla.graph.JvmExecutor;
import org.tornadomla.graph.KernelGraph;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Runs a kernel graph on the JVM with {@link VectorKernels} (multi-threaded, vectorised) in place of the
 * reference kernels that have a fast version, and the reference kernels for the rest (the cheap ones:
 * norms, RoPE, cache append, combine). Results match the reference within float rounding (the sums are
 * taken in another order).
 *
 * <p>One executor may be shared by threads that run different graphs at the same time: its only state is a
 * concurrent cache of kernel lookups, and the kernels keep their scratch per thread. (One graph, like one
 * {@code MlaLayer}, must not run in two threads at once: its buffers are shared.)
 */
public final class FastExecutor extends JvmExecutor {
    /** Fast version per reference kernel; empty when there is none (looked up once per kernel, not per step). */
    private final Map<Method, java.util.Optional<MethodHandle>> fast = new ConcurrentHashMap<>();
    /** VectorKernels' kernels by name; filled in the constructor, read-only after. */
    private final Map<String, Method> byName = new HashMap<>();

    public FastExecutor() {
        if (!available()) {
            throw new MlaException("the java-fast backend needs the JDK's Vector API: start the JVM with "
                    + "--add-modules jdk.incubator.vector (./mla, the tests and the benchmarks do)");
        }
        for (Method m : VectorKernels.class.getDeclaredMethods()) {
            if (Modifier.isPublic(m.getModifiers()) && Modifier.isStatic(m.getModifiers()) && m.getReturnType() == void.class) {
                byName.put(m.getName(), m);
            }
        }
    }

    /** Whether this JVM was started with the Vector API module. */
    public static boolean available() {
        return ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent();
    }

    /** The fast version of a reference kernel (same name and parameters), or null. */
    MethodHandle fastVersion(Method kernel) {
        return fast.computeIfAbsent(kernel, k -> {
            Method m = byName.get(k.getName());
            if (m == null || !Arrays.equals(m.getParameterTypes(), k.getParameterTypes())) return java.util.Optional.empty();
            try {
                return java.util.Optional.of(MethodHandles.publicLookup().unreflect(m));
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
        }).orElse(null);
    }

    @Override
    protected MethodHandle handle(KernelGraph.Task t) {
        MethodHandle h = fastVersion(t.kernel());
        return h != null ? h : t.handle();
    }

    @Override
    public String device() {
        return "java-fast (Vector API " + VectorKernels.SPECIES.vectorBitSize() + "-bit, "
                + Runtime.getRuntime().availableProcessors() + " threads)";
    }
}
