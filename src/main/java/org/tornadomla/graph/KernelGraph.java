package org.tornadomla.graph;

import org.tornadomla.MlaException;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * One step's dataflow: buffers with a role, and kernel tasks in execution order. Task names are
 * {@code <graph>.<task>} as TornadoVM names them, so {@code -D<graph>.<task>.device=B:D} maps a task to a
 * device. Every array a task takes must be a buffer of the graph; scalars are shape constants (TornadoVM
 * bakes them into the compiled kernel), anything that changes between executions goes in an INPUT array.
 */
public final class KernelGraph {
    /** How a buffer moves between host and device. */
    public enum Role {
        /** Copied to the device once (weights, constant tables). */
        WEIGHT,
        /** Copied to the device before every execution. */
        INPUT,
        /** Copied back to the host after every execution. */
        OUTPUT,
        /** Used only between tasks; never copied after the first execution. */
        SCRATCH,
        /** Part of a {@link DeviceResident} state: stays on the device, copied back on demand. */
        STATE
    }

    /**
     * A named array of the graph and its role.
     *
     * @param name  its name in the graph
     * @param array the array
     * @param role  how executors move it
     */
    public record Buffer(String name, Object array, Role role) {
    }

    /**
     * One kernel call.
     *
     * @param name   "graph.task"
     * @param kernel the kernel method
     * @param handle a handle that calls it on the JVM
     * @param args   its arguments (a copy is kept)
     */
    public record Task(String name, Method kernel, MethodHandle handle, Object[] args) {
        /** Keeps a copy of the arguments. */
        public Task {
            args = args.clone();
        }

        /** A copy of the arguments (the arrays in it are the graph's buffers). */
        @Override
        public Object[] args() {
            return args.clone();
        }

        /** The arguments themselves, for this package's executor, which only reads them. */
        Object[] shared() {
            return args;
        }

        /** The task's name without the graph's prefix. */
        public String id() {
            return name.substring(name.indexOf('.') + 1);
        }
    }

    private final String name;
    private final List<Buffer> buffers = new ArrayList<>();
    private final Map<Object, Buffer> byArray = new IdentityHashMap<>();
    private final List<Task> tasks = new ArrayList<>();
    private final List<DeviceResident> states = new ArrayList<>();

    /** An empty graph; {@code name} prefixes its tasks' names. */
    public KernelGraph(String name) {
        this.name = name;
    }

    /** The graph's name. */
    public String name() {
        return name;
    }

    /** Every buffer, in the order declared. */
    public List<Buffer> buffers() {
        return Collections.unmodifiableList(buffers);
    }

    /** Every task, in the order they run. */
    public List<Task> tasks() {
        return Collections.unmodifiableList(tasks);
    }

    /** The device-resident states ({@link #state}) the graph reads and writes. */
    public List<DeviceResident> states() {
        return Collections.unmodifiableList(states);
    }

    /** Declares {@code array} a weight (copied to a device once) and returns it. */
    public <T> T weight(String name, T array) {
        return add(name, array, Role.WEIGHT);
    }

    /** Declares {@code array} an input (copied to the device before every run) and returns it. */
    public <T> T input(String name, T array) {
        return add(name, array, Role.INPUT);
    }

    /** Declares {@code array} an output (copied back after every run) and returns it. */
    public <T> T output(String name, T array) {
        return add(name, array, Role.OUTPUT);
    }

    /** Declares {@code array} scratch (device-only between tasks) and returns it. */
    public <T> T scratch(String name, T array) {
        return add(name, array, Role.SCRATCH);
    }

    /** Declares device-resident state; its arrays become STATE buffers named name.0, name.1, … */
    public KernelGraph state(String name, DeviceResident state) {
        states.add(state);
        Object[] arrays = state.arrays();
        for (int i = 0; i < arrays.length; i++) add(name + "." + i, arrays[i], Role.STATE);
        return this;
    }

    private <T> T add(String bufferName, T array, Role role) {
        if (array == null || !array.getClass().isArray() || !array.getClass().componentType().isPrimitive()) {
            throw new MlaException("graph " + name + ": buffer " + bufferName + " must be a primitive array");
        }
        Buffer existing = byArray.get(array);
        if (existing != null) {
            // one array may serve several names (e.g. a weight used by two tasks) but keeps its first role
            if (existing.role() != role) {
                throw new MlaException("graph " + name + ": array of buffer " + bufferName + " is already buffer "
                        + existing.name() + " with role " + existing.role());
            }
            return array;
        }
        Buffer b = new Buffer(bufferName, array, role);
        buffers.add(b);
        byArray.put(array, b);
        return array;
    }

    /** The buffer of {@code array}, or null when it is not one of this graph's. */
    public Buffer buffer(Object array) {
        return byArray.get(array);
    }

    /**
     * A copy of this graph for code that must reach neither the weights' storage nor a cache's: every WEIGHT and
     * STATE buffer is a new copy of its array, the state's from its current contents ({@link DeviceResident#toHost}
     * first), and the tasks take the copies; the other buffers (inputs, outputs, scratch) are this graph's own.
     * Running or writing the copy changes neither the weights nor the state, and the copy declares no device-resident
     * state of its own. Costs a copy of the weights and the state (checked against the heap).
     */
    public KernelGraph withCopiedWeightsAndState() {
        for (DeviceResident s : states) s.toHost();
        java.util.Set<Role> roles = java.util.EnumSet.of(Role.WEIGHT, Role.STATE);
        long bytes = 0;
        for (Buffer b : buffers) {
            if (roles.contains(b.role())) {
                bytes += (long) java.lang.reflect.Array.getLength(b.array()) * elementBytes(b.array().getClass().componentType());
            }
        }
        org.tornadomla.internal.Memory.require(bytes, "a copy of the weights and state of graph " + name);
        KernelGraph g = new KernelGraph(name);
        Map<Object, Object> copies = new IdentityHashMap<>();
        for (Buffer b : buffers) {
            Object a = b.array();
            if (roles.contains(b.role())) {
                int n = java.lang.reflect.Array.getLength(a);
                Object c = java.lang.reflect.Array.newInstance(a.getClass().componentType(), n);
                System.arraycopy(a, 0, c, 0, n);
                copies.put(a, c);
                a = c;
            }
            Buffer nb = new Buffer(b.name(), a, b.role());
            g.buffers.add(nb);
            g.byArray.put(a, nb);
        }
        for (Task t : tasks) {
            Object[] args = t.args();
            for (int i = 0; i < args.length; i++) args[i] = copies.getOrDefault(args[i], args[i]);
            g.tasks.add(new Task(t.name(), t.kernel(), t.handle(), args));
        }
        return g;
    }

    private static int elementBytes(Class<?> c) {
        return c == long.class || c == double.class ? 8 : c == int.class || c == float.class ? 4 : c == short.class || c == char.class ? 2 : 1;
    }

    /**
     * Appends a task running {@code kernel}, a method reference such as {@code Rope::rotatePairs}, on the
     * arguments that follow. The compiler checks the arguments' types against the kernel's parameters; here
     * every array is checked to be a buffer of this graph, so a wrong dataflow fails when the graph is built.
     */
    public <A> KernelGraph task(String name, KernelRef.K1<A> kernel, A a) {
        return add(name, kernel, a);
    }

    /** As {@link #task(String, KernelRef.K1, Object)}, for a kernel of 2 arguments. */
    public <A, B> KernelGraph task(String name, KernelRef.K2<A, B> kernel, A a, B b) {
        return add(name, kernel, a, b);
    }

    /** As {@link #task(String, KernelRef.K1, Object)}, for a kernel of 3 arguments. */
    public <A, B, C> KernelGraph task(String name, KernelRef.K3<A, B, C> kernel, A a, B b, C c) {
        return add(name, kernel, a, b, c);
    }

    /** As {@link #task(String, KernelRef.K1, Object)}, for a kernel of 4 arguments. */
    public <A, B, C, D> KernelGraph task(String name, KernelRef.K4<A, B, C, D> kernel, A a, B b, C c, D d) {
        return add(name, kernel, a, b, c, d);
    }

    /** As {@link #task(String, KernelRef.K1, Object)}, for a kernel of 5 arguments. */
    public <A, B, C, D, E> KernelGraph task(String name, KernelRef.K5<A, B, C, D, E> kernel, A a, B b, C c, D d, E e) {
        return add(name, kernel, a, b, c, d, e);
    }

    /** As {@link #task(String, KernelRef.K1, Object)}, for a kernel of 6 arguments. */
    public <A, B, C, D, E, F> KernelGraph task(String name, KernelRef.K6<A, B, C, D, E, F> kernel, A a, B b, C c, D d, E e, F f) {
        return add(name, kernel, a, b, c, d, e, f);
    }

    /** As {@link #task(String, KernelRef.K1, Object)}, for a kernel of 7 arguments. */
    public <A, B, C, D, E, F, G> KernelGraph task(String name, KernelRef.K7<A, B, C, D, E, F, G> kernel, A a, B b, C c, D d, E e, F f, G g) {
        return add(name, kernel, a, b, c, d, e, f, g);
    }

    /** As {@link #task(String, KernelRef.K1, Object)}, for a kernel of 8 arguments. */
    public <A, B, C, D, E, F, G, H> KernelGraph task(String name, KernelRef.K8<A, B, C, D, E, F, G, H> kernel, A a, B b, C c, D d, E e, F f, G g, H h) {
        return add(name, kernel, a, b, c, d, e, f, g, h);
    }

    /** As {@link #task(String, KernelRef.K1, Object)}, for a kernel of 9 arguments. */
    public <A, B, C, D, E, F, G, H, I> KernelGraph task(String name, KernelRef.K9<A, B, C, D, E, F, G, H, I> kernel, A a, B b, C c, D d, E e, F f, G g, H h, I i) {
        return add(name, kernel, a, b, c, d, e, f, g, h, i);
    }

    /** As {@link #task(String, KernelRef.K1, Object)}, for a kernel of 10 arguments. */
    public <A, B, C, D, E, F, G, H, I, J> KernelGraph task(String name, KernelRef.K10<A, B, C, D, E, F, G, H, I, J> kernel, A a, B b, C c, D d, E e, F f, G g, H h, I i, J j) {
        return add(name, kernel, a, b, c, d, e, f, g, h, i, j);
    }

    /** As {@link #task(String, KernelRef.K1, Object)}, for a kernel of 11 arguments. */
    public <A, B, C, D, E, F, G, H, I, J, K> KernelGraph task(String name, KernelRef.K11<A, B, C, D, E, F, G, H, I, J, K> kernel, A a, B b, C c, D d, E e, F f, G g, H h, I i, J j, K k) {
        return add(name, kernel, a, b, c, d, e, f, g, h, i, j, k);
    }

    /** As {@link #task(String, KernelRef.K1, Object)}, for a kernel of 12 arguments. */
    public <A, B, C, D, E, F, G, H, I, J, K, L> KernelGraph task(String name, KernelRef.K12<A, B, C, D, E, F, G, H, I, J, K, L> kernel, A a, B b, C c, D d, E e, F f, G g, H h, I i, J j, K k, L l) {
        return add(name, kernel, a, b, c, d, e, f, g, h, i, j, k, l);
    }

    /** As {@link #task(String, KernelRef.K1, Object)}, for a kernel of 13 arguments. */
    public <A, B, C, D, E, F, G, H, I, J, K, L, M> KernelGraph task(String name, KernelRef.K13<A, B, C, D, E, F, G, H, I, J, K, L, M> kernel, A a, B b, C c, D d, E e, F f, G g, H h, I i, J j, K k, L l, M m) {
        return add(name, kernel, a, b, c, d, e, f, g, h, i, j, k, l, m);
    }

    /** As {@link #task(String, KernelRef.K1, Object)}, for a kernel of 14 arguments. */
    public <A, B, C, D, E, F, G, H, I, J, K, L, M, N> KernelGraph task(String name, KernelRef.K14<A, B, C, D, E, F, G, H, I, J, K, L, M, N> kernel, A a, B b, C c, D d, E e, F f, G g, H h, I i, J j, K k, L l, M m, N n) {
        return add(name, kernel, a, b, c, d, e, f, g, h, i, j, k, l, m, n);
    }

    /** As {@link #task(String, KernelRef.K1, Object)}, for a kernel of 15 arguments. */
    public <A, B, C, D, E, F, G, H, I, J, K, L, M, N, O> KernelGraph task(String name, KernelRef.K15<A, B, C, D, E, F, G, H, I, J, K, L, M, N, O> kernel, A a, B b, C c, D d, E e, F f, G g, H h, I i, J j, K k, L l, M m, N n, O o) {
        return add(name, kernel, a, b, c, d, e, f, g, h, i, j, k, l, m, n, o);
    }

    /** As {@link #task(String, KernelRef.K1, Object)}, for a kernel of 16 arguments. */
    public <A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P> KernelGraph task(String name, KernelRef.K16<A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P> kernel, A a, B b, C c, D d, E e, F f, G g, H h, I i, J j, K k, L l, M m, N n, O o, P p) {
        return add(name, kernel, a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p);
    }

    /** As {@link #task(String, KernelRef.K1, Object)}, for a kernel of 17 arguments. */
    public <A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q> KernelGraph task(String name, KernelRef.K17<A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q> kernel, A a, B b, C c, D d, E e, F f, G g, H h, I i, J j, K k, L l, M m, N n, O o, P p, Q q) {
        return add(name, kernel, a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q);
    }

    /** As {@link #task(String, KernelRef.K1, Object)}, for a kernel of 18 arguments. */
    public <A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q, R> KernelGraph task(String name, KernelRef.K18<A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q, R> kernel, A a, B b, C c, D d, E e, F f, G g, H h, I i, J j, K k, L l, M m, N n, O o, P p, Q q, R r) {
        return add(name, kernel, a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q, r);
    }

    /** As {@link #task(String, KernelRef.K1, Object)}, for a kernel of 19 arguments. */
    public <A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q, R, S> KernelGraph task(String name, KernelRef.K19<A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q, R, S> kernel, A a, B b, C c, D d, E e, F f, G g, H h, I i, J j, K k, L l, M m, N n, O o, P p, Q q, R r, S s) {
        return add(name, kernel, a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q, r, s);
    }

    /** As {@link #task(String, KernelRef.K1, Object)}, for a kernel of 20 arguments. */
    public <A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q, R, S, T> KernelGraph task(String name, KernelRef.K20<A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q, R, S, T> kernel, A a, B b, C c, D d, E e, F f, G g, H h, I i, J j, K k, L l, M m, N n, O o, P p, Q q, R r, S s, T t) {
        return add(name, kernel, a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q, r, s, t);
    }

    private KernelGraph add(String taskName, KernelRef kernel, Object... args) {
        Method m = kernel.method();
        Class<?>[] params = m.getParameterTypes();
        String full = name + "." + taskName;
        String kernelName = m.getDeclaringClass().getSimpleName() + "." + m.getName();
        if (params.length != args.length) {   // the KN interfaces make this impossible from Java source; kept for reflection
            throw new MlaException("task " + full + ": " + kernelName + " takes " + params.length + " arguments, found " + args.length);
        }
        for (int i = 0; i < params.length; i++) {
            Object a = args[i];
            Class<?> p = params[i];
            boolean ok = p.isArray() ? a != null && a.getClass() == p && byArray.containsKey(a)
                    : p == int.class ? a instanceof Integer : p == float.class ? a instanceof Float : false;
            if (!ok) {
                throw new MlaException("task " + full + ": argument " + i + " (" + m.getParameters()[i].getName() + ") of "
                        + kernelName + " must be " + (p.isArray() ? "a buffer of the graph of type " : "") + p.getSimpleName() + ", found "
                        + (a == null ? "null" : a.getClass().getSimpleName()
                        + (a.getClass().isArray() && !byArray.containsKey(a) ? " that is not a buffer of the graph" : "")));
            }
        }
        for (Task t : tasks) {
            if (t.name().equals(full)) throw new MlaException("graph " + name + " already has a task " + taskName);
        }
        try {
            // the library's kernels through this module's own lookup (their packages are not exported from the module
            // org.tornadomla); any other kernel through the public lookup: a public method of an exported package
            MethodHandles.Lookup lookup = m.getDeclaringClass().getModule() == KernelGraph.class.getModule()
                    ? MethodHandles.lookup() : MethodHandles.publicLookup();
            tasks.add(new Task(full, m, lookup.unreflect(m), args));
        } catch (IllegalAccessException e) {
            throw new MlaException("kernel " + kernelName + " is not accessible", e);
        }
        return this;
    }
}
