package org.tornadomla.benchmarks;

import org.tornadomla.fast.FastExecutor;
import org.tornadomla.graph.GraphExecutor;
import org.tornadomla.graph.JvmExecutor;

import java.io.PrintWriter;

/** The backend @Param values: java-reference, java-fast, or tornado:B:D (TornadoVM device, needs its JVM options). */
final class Backends {
    private Backends() {
    }

    static GraphExecutor create(String backend) {
        switch (backend) {
            case "java-reference":
                return new JvmExecutor();
            case "java-fast":
                return new FastExecutor();
            default:
                if (!backend.startsWith("tornado")) throw new IllegalArgumentException("unknown backend " + backend);
                String device = backend.contains(":") ? backend.substring(backend.indexOf(':') + 1) : null;
                try {
                    return (GraphExecutor) Class.forName("org.tornadomla.tornado.TornadoExecutor")
                            .getConstructor(String.class, PrintWriter.class, boolean.class).newInstance(device, null, true);
                } catch (ReflectiveOperationException | LinkageError e) {
                    throw new IllegalStateException("backend " + backend + " needs the library built with TORNADOVM_HOME set and the "
                            + "JVM started with TornadoVM's options (see benchmarks/README.md): " + e, e);
                }
        }
    }
}
