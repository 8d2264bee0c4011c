package org.tornadomla.graph;

import org.tornadomla.MlaException;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
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

    public record Buffer(String name, Object array, Role role) {
    }

    public record Task(String name, Method kernel, MethodHandle handle, Object[] args) {
        public String id() {
            return name.substring(name.indexOf('.') + 1);
        }
    }

    private final String name;
    private final List<Buffer> buffers = new ArrayList<>();
    private final Map<Object, Buffer> byArray = new IdentityHashMap<>();
    private final List<Task> tasks = new ArrayList<>();
    private final List<DeviceResident> states = new ArrayList<>();

    public KernelGraph(String name) {
        this.name = name;
    }

    public String name() {
        return name;
    }

    public List<Buffer> buffers() {
        return Collections.unmodifiableList(buffers);
    }

    public List<Task> tasks() {
        return Collections.unmodifiableList(tasks);
    }

    public List<DeviceResident> states() {
        return Collections.unmodifiableList(states);
    }

    public <T> T weight(String name, T array) {
        return add(name, array, Role.WEIGHT);
    }

    public <T> T input(String name, T array) {
        return add(name, array, Role.INPUT);
    }

    public <T> T output(String name, T array) {
        return add(name, array, Role.OUTPUT);
    }

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

    public Buffer buffer(Object array) {
        return byArray.get(array);
    }

    /**
     * Appends a task running the public static kernel {@code family.kernel} on {@code args}. The arguments
     * are checked against the kernel's parameters here, so a wrong dataflow fails when the graph is built.
     */
    public KernelGraph task(String taskName, Class<?> family, String kernel, Object... args) {
        Method m = find(family, kernel);
        Class<?>[] params = m.getParameterTypes();
        String full = name + "." + taskName;
        if (params.length != args.length) {
            throw new MlaException("task " + full + ": " + family.getSimpleName() + "." + kernel + " takes " + params.length
                    + " arguments, found " + args.length);
        }
        for (int i = 0; i < params.length; i++) {
            Object a = args[i];
            Class<?> p = params[i];
            boolean ok = p.isArray() ? a != null && a.getClass() == p && byArray.containsKey(a)
                    : p == int.class ? a instanceof Integer : p == float.class ? a instanceof Float : false;
            if (!ok) {
                throw new MlaException("task " + full + ": argument " + i + " must be " + (p.isArray() ? "a buffer of the graph of type " : "")
                        + p.getSimpleName() + ", found " + (a == null ? "null" : a.getClass().getSimpleName()
                        + (a.getClass().isArray() && !byArray.containsKey(a) ? " that is not a buffer of the graph" : "")));
            }
        }
        for (Task t : tasks) {
            if (t.name().equals(full)) throw new MlaException("graph " + name + " already has a task " + taskName);
        }
        try {
            tasks.add(new Task(full, m, MethodHandles.publicLookup().unreflect(m), args.clone()));
        } catch (IllegalAccessException e) {
            throw new MlaException("kernel " + family.getSimpleName() + "." + kernel + " is not accessible", e);
        }
        return this;
    }

    private static Method find(Class<?> family, String kernel) {
        Method found = null;
        for (Method m : family.getMethods()) {
            if (m.getName().equals(kernel) && Modifier.isStatic(m.getModifiers()) && m.getReturnType() == void.class) {
                if (found != null) throw new MlaException("kernel " + family.getSimpleName() + "." + kernel + " is overloaded");
                found = m;
            }
        }
        if (found == null) throw new MlaException("no kernel " + family.getSimpleName() + "." + kernel);
        return found;
    }
}
