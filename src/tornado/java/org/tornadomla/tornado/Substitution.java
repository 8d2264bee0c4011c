package org.tornadomla.tornado;

import org.tornadomla.graph.KernelGraph;
import org.tornadomla.graph.KernelRef;
import uk.ac.manchester.tornado.api.GridScheduler;
import uk.ac.manchester.tornado.api.KernelContext;
import uk.ac.manchester.tornado.api.WorkerGrid1D;

import java.lang.reflect.Method;
import java.lang.reflect.Parameter;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Predicate;
import java.util.function.ToIntFunction;

/**
 * A KernelContext kernel that stands in for a plain {@code @Parallel} kernel of a graph on TornadoVM: same
 * inputs, same outputs, launched as work-groups. Arguments are matched <em>by parameter name</em>: each
 * parameter of the replacement takes the plain task's argument of the same name (and type), a
 * {@link KernelContext}, or a declared {@link #extra extra} computed from the plain arguments. So the two
 * signatures may differ in order and length, but a parameter renamed or re-typed on one side only is an
 * error ({@link #check()}, run for every substitution when the executor class loads, and by
 * {@code SubstitutionTest}), never a silent mis-wiring. Parameter names come from the class files, which
 * the build compiles with {@code -parameters}.
 */
final class Substitution {
    /** The plain task's arguments by parameter name. */
    record Args(Map<String, Object> byName) {
        /** Task t's arguments by the parameter names of its kernel. */
        static Args of(KernelGraph.Task t) {
            Parameter[] pp = t.kernel().getParameters();
            Map<String, Object> byName = new LinkedHashMap<>();
            for (int i = 0; i < pp.length; i++) byName.put(pp[i].getName(), t.args()[i]);
            return new Args(byName);
        }

        Object get(String name) {
            return byName.get(name);
        }

        int i(String name) {
            Object v = byName.get(name);
            if (!(v instanceof Integer n)) throw new IllegalStateException("no int argument '" + name + "' in " + byName.keySet());
            return n;
        }
    }

    final Method plain;
    final Method replacement;
    private final Map<String, ToIntFunction<Args>> extras = new LinkedHashMap<>();
    private Predicate<Args> when = a -> true;
    private ToIntFunction<Args> groups;
    private int local;

    private Substitution(KernelRef plain, KernelRef replacement) {
        this.plain = plain.method();
        this.replacement = replacement.method();
    }

    /** {@code replacement} (a KernelContext kernel) in place of {@code plain}. */
    static Substitution replace(KernelRef plain, KernelRef replacement) {
        return new Substitution(plain, replacement);
    }

    /** An int parameter of the replacement that the plain kernel does not have, computed from its arguments. */
    Substitution extra(String name, ToIntFunction<Args> value) {
        extras.put(name, value);
        return this;
    }

    /** Only where {@code condition} holds for the plain task's arguments (shapes the kernel supports). */
    Substitution when(Predicate<Args> condition) {
        this.when = condition;
        return this;
    }

    /** The launch: {@code groups} work-groups of {@code local} threads (1D). */
    Substitution grid(ToIntFunction<Args> groups, int local) {
        this.groups = groups;
        this.local = local;
        return this;
    }

    /** Throws, naming the parameter, unless every parameter of the replacement can be filled. */
    Substitution check() {
        Map<String, Class<?>> plainParams = new LinkedHashMap<>();
        for (Parameter p : plain.getParameters()) {
            if (!p.isNamePresent()) throw new IllegalStateException(plain + " was compiled without -parameters");
            plainParams.put(p.getName(), p.getType());
        }
        for (Parameter p : replacement.getParameters()) {
            if (p.getType() == KernelContext.class) continue;
            if (extras.containsKey(p.getName())) {
                if (p.getType() != int.class) throw new IllegalStateException(name() + ": extra parameter " + p.getName() + " must be an int");
                continue;
            }
            Class<?> t = plainParams.get(p.getName());
            if (t == null) throw new IllegalStateException(name() + ": parameter '" + p.getName() + "' has no argument of that name in " + plainParams.keySet());
            if (t != p.getType()) throw new IllegalStateException(name() + ": parameter '" + p.getName() + "' is " + p.getType().getSimpleName()
                    + " but the plain kernel's is " + t.getSimpleName());
        }
        if (groups == null) throw new IllegalStateException(name() + ": no grid");
        return this;
    }

    String name() {
        return replacement.getDeclaringClass().getSimpleName() + "." + replacement.getName() + " for "
                + plain.getDeclaringClass().getSimpleName() + "." + plain.getName();
    }

    /**
     * The replacement's arguments for task {@code t} (which runs {@link #plain}), with its grid added to
     * {@code grids}; null when the shapes are not supported.
     */
    Object[] arguments(KernelGraph.Task t, GridScheduler grids) {
        Args a = Args.of(t);
        Map<String, Object> byName = a.byName();
        if (!when.test(a)) return null;
        Parameter[] rp = replacement.getParameters();
        Object[] args = new Object[rp.length];
        for (int i = 0; i < rp.length; i++) {
            String n = rp[i].getName();
            args[i] = rp[i].getType() == KernelContext.class ? new KernelContext()
                    : extras.containsKey(n) ? (Object) extras.get(n).applyAsInt(a) : byName.get(n);
        }
        WorkerGrid1D grid = new WorkerGrid1D(groups.applyAsInt(a) * local);
        grid.setLocalWork(local, 1, 1);
        grids.addWorkerGrid(t.name(), grid);
        return args;
    }
}
