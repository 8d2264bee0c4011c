package org.tornadomla.cli;

import org.tornadomla.MlaException;
import org.tornadomla.graph.GraphExecutor;
import org.tornadomla.fast.FastExecutor;
import org.tornadomla.graph.JvmExecutor;

import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.util.List;

/**
 * Where the CLI runs the layer's graphs: "java-reference" (alias "java": the reference kernels on the JVM,
 * always there), "java-fast" (multi-threaded Vector API kernels) or "tornado" (a TornadoVM device). The TornadoVM classes are looked up reflectively, so this build works
 * without TornadoVM and says clearly what is missing when it is asked for.
 */
final class Backends {
    static final String TORNADO_EXECUTOR = "org.tornadomla.tornado.TornadoExecutor";
    static final String TORNADO_DEVICES = "org.tornadomla.tornado.TornadoDevices";

    private Backends() {
    }

    static GraphExecutor create(String backend, String device, PrintWriter profileOut, boolean kernelContext) {
        if ((backend.equals("java") || backend.equals("java-reference") || backend.equals("java-fast")) && device != null) {
            throw new MlaException("--device " + device + " needs --backend tornado (the " + backend + " backend runs on the JVM)");
        }
        switch (backend) {
            case "java", "java-reference" -> {
                return new JvmExecutor();
            }
            case "java-fast" -> {
                return new FastExecutor();
            }
            case "tornado" -> {
                return (GraphExecutor) call(TORNADO_EXECUTOR, null, device, profileOut, kernelContext);
            }
            default -> throw new MlaException("unknown backend '" + backend + "' (expected java-reference, java-fast or tornado)");
        }
    }

    @SuppressWarnings("unchecked")
    static List<String> tornadoDevices() {
        return (List<String>) call(TORNADO_DEVICES, "list");
    }

    /** Calls a constructor (method null) or a static method of a TornadoVM-backend class. */
    private static Object call(String className, String method, Object... args) {
        if (System.getenv("TORNADOVM_HOME") == null && System.getProperty("tornado.load.api.implementation") == null) {
            throw new MlaException("no TornadoVM installed: TORNADOVM_HOME is not set (see tornado-config/README.md); "
                    + "the java backend needs none");
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
