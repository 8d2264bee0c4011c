package org.tornadomla.backends;

import org.tornadomla.MlaException;
import org.tornadomla.fast.FastExecutor;
import org.tornadomla.graph.GraphExecutor;
import org.tornadomla.graph.JvmExecutor;

import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.util.List;
import java.util.Objects;

/**
 * Where graphs run, chosen by name: the one parser the CLI, the benchmarks, the ladder and a library user share.
 *
 * <pre>
 *  java-reference (alias java)   the reference kernels on the JVM, sequential: the CPU reference, always there
 *  java-fast                     Vector API kernels on every core (JVM flag --add-modules jdk.incubator.vector)
 *  java-fast:N                   the same on a pool of N threads of its own
 *  tornado                       TornadoVM's default device (needs a TornadoVM SDK and its JVM options)
 *  tornado:B:D                   TornadoVM device B:D as {@code mla devices} lists them
 * </pre>
 *
 * {@code MlaLayer layer = new MlaLayer(weights, Backends.create("java-fast"));} The TornadoVM classes are
 * looked up by name, so a build or a JVM without TornadoVM still runs the JVM backends and says clearly what is
 * missing when {@code tornado} is asked for.
 */
public final class Backends {
    private Backends() {
    }

    /** What a backend may be told besides its name. */
    public record Options(int threads, PrintWriter profile, boolean kernelContext) {
        /**
         * @param threads       java-fast: threads of a pool of its own (0: the JVM's common pool, every core)
         * @param profile       tornado: where to print the profiler's kernel and copy times of every execution, or null
         * @param kernelContext tornado: run the KernelContext kernels shaped for GPUs in place of the plain ones
         */
        public Options {
            if (threads < 0) throw new MlaException("threads must be >= 0 (0: every core), found " + threads);
        }

        public static final Options DEFAULT = new Options(0, null, true);
    }

    /** The backends' names as {@link #create} takes them. */
    public static final List<String> NAMES = List.of("java-reference", "java-fast", "java-fast:N", "tornado", "tornado:B:D");

    /** The executor for {@code name} with default options. */
    public static GraphExecutor create(String name) {
        return create(name, Options.DEFAULT);
    }

    /** The executor for {@code name} (see the class comment); one line naming the choices when it is unknown. */
    public static GraphExecutor create(String name, Options options) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(options, "options");
        if (name.equals("java") || name.equals("java-reference")) return new JvmExecutor();
        if (name.equals("java-fast")) return options.threads() > 0 ? new FastExecutor(options.threads()) : new FastExecutor();
        if (name.startsWith("java-fast:")) {
            String n = name.substring("java-fast:".length());
            try {
                return new FastExecutor(Integer.parseInt(n));
            } catch (NumberFormatException e) {
                throw new MlaException("java-fast:N takes a thread count, found '" + MlaException.escape(n) + "'");
            }
        }
        if (name.equals("tornado")) return tornado(null, options);
        if (name.startsWith("tornado:")) return tornado(name.substring("tornado:".length()), options);
        throw new MlaException("unknown backend '" + MlaException.escape(name) + "' (expected " + String.join(", ", NAMES) + ")");
    }

    static final String TORNADO_EXECUTOR = "org.tornadomla.tornado.TornadoExecutor";
    static final String TORNADO_DEVICES = "org.tornadomla.tornado.TornadoDevices";

    private static GraphExecutor tornado(String device, Options options) {
        return (GraphExecutor) call(TORNADO_EXECUTOR, null, device, options.profile(), options.kernelContext());
    }

    /** TornadoVM's devices, one line each ("B:D  BACKEND  name  memory"). */
    @SuppressWarnings("unchecked")
    public static List<String> tornadoDevices() {
        return (List<String>) call(TORNADO_DEVICES, "list");
    }

    /** Calls a constructor (method null) or a static method of a TornadoVM-backend class. */
    private static Object call(String className, String method, Object... args) {
        if (System.getenv("TORNADOVM_HOME") == null && System.getProperty("tornado.load.api.implementation") == null) {
            throw new MlaException("no TornadoVM installed: TORNADOVM_HOME is not set (see tornado-config/README.md); "
                    + "the java backends need none");
        }
        try {
            Class<?> c = Class.forName(className);
            if (method == null) {
                return c.getConstructor(String.class, PrintWriter.class, boolean.class).newInstance(args);
            }
            return c.getMethod(method).invoke(null);
        } catch (ClassNotFoundException e) {
            throw new MlaException("this build of TornadoMLA has no TornadoVM backend: rebuild with TORNADOVM_HOME set "
                    + "(./mla does so by itself)");
        } catch (NoClassDefFoundError e) {
            throw new MlaException("TornadoVM is not loaded in this JVM (" + e.getMessage() + "): start through ./mla, "
                    + "which adds $TORNADOVM_HOME/tornado-argfile");
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            if (cause instanceof MlaException m) throw m;
            if (cause instanceof NoClassDefFoundError || cause instanceof ExceptionInInitializerError) {
                throw new MlaException("TornadoVM could not start in this JVM (" + cause + "): start through ./mla, "
                        + "which adds $TORNADOVM_HOME/tornado-argfile", cause);
            }
            throw new MlaException("TornadoVM failed: " + cause, cause);
        } catch (ReflectiveOperationException e) {
            throw new MlaException("TornadoVM backend is broken in this build: " + e, e);
        }
    }
}
