package org.tornadomla.backends;

import org.tornadomla.internal.Messages;
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
         * @param threads       java-fast: threads of a pool of its own, stopped when the executor closes (0: one thread per
         *                      core, in a pool shared by every java-fast executor made with 0). Either pool's idle threads
         *                      spin for 50 ms before they park, so that the next kernel starts at once; a machine shared
         *                      with other work may want {@code -Dtornadomla.fast.spinMs=0}, which parks them at once
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
                throw new MlaException("java-fast:N takes a thread count, found '" + Messages.escape(n) + "'");
            }
        }
        if (name.equals("tornado")) return tornado(null, options);
        if (name.startsWith("tornado:")) return tornado(name.substring("tornado:".length()), options);
        throw new MlaException("unknown backend '" + Messages.escape(name) + "' (expected " + String.join(", ", NAMES) + ")");
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

    /** The throwable, and the deepest cause it carries when that says more ("X (cause: Y: message)"). */
    static String describe(Throwable t) {
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root) root = root.getCause();
        return root == t ? t.toString() : t + " (cause: " + root + ")";
    }

    /**
     * What an NVIDIA SDK's native library needs, when TornadoVM failed to start in a way a missing library explains
     * (an UnsatisfiedLinkError, or a backend's static initialiser that failed): the CUDA backend loads the driver's
     * libcuda.so.1 and NVRTC's libnvrtc.so.13, the PTX backend libcuda.so.1 alone. Null for other failures and SDKs.
     */
    static String nativeLibraryHint(String tornadoHome, Throwable failure) {
        if (tornadoHome == null) return null;
        boolean linkage = false;
        for (Throwable t = failure; t != null && !linkage; t = t.getCause() == t ? null : t.getCause()) {
            linkage = t instanceof UnsatisfiedLinkError || t instanceof ExceptionInInitializerError;
        }
        if (!linkage) return null;
        java.nio.file.Path lib = java.nio.file.Path.of(tornadoHome, "lib");
        if (java.nio.file.Files.exists(lib.resolve("libtornado-cuda.so"))) {
            return "TornadoVM's CUDA backend needs the NVIDIA driver's libcuda.so.1 (driver 580 or newer) and CUDA 13's "
                    + "libnvrtc.so.13 on the loader path (without a CUDA toolkit, '. $TORNADOVM_HOME/bin/cuda-pip-env.sh' finds "
                    + "them in PyTorch's CUDA 13 wheels; 'ldd $TORNADOVM_HOME/lib/libtornado-cuda.so' shows what is missing)";
        }
        if (java.nio.file.Files.exists(lib.resolve("libtornado-ptx.so"))) {
            return "TornadoVM's PTX backend needs the NVIDIA driver's libcuda.so.1 (driver 570 or newer) on the loader path "
                    + "('ldd $TORNADOVM_HOME/lib/libtornado-ptx.so' shows what is missing)";
        }
        return null;
    }

    /**
     * On the module path: lets the module org.tornadomla read TornadoVM's API module, which its descriptor does not
     * name (a build without TornadoVM has the same descriptor, and a JVM without TornadoVM must still resolve it), so
     * that the TornadoVM backend's classes can link. On the class path (an unnamed module reads every module) nothing
     * is needed. TornadoVM's runtime also makes the kernel methods accessible by reflection: the packages that hold the
     * kernels it is given ({@link #KERNEL_PACKAGES}) are opened to it. One line naming the JVM options when TornadoVM's
     * modules are not in this JVM.
     */
    static void readTornadoVM(Module self) {
        if (!self.isNamed()) return;
        ModuleLayer layer = self.getLayer() != null ? self.getLayer() : ModuleLayer.boot();
        Module api = layer.findModule("tornado.api").orElseThrow(() -> new MlaException(
                "TornadoVM is not loaded in this JVM (no module tornado.api beside the module org.tornadomla): start it with "
                        + "@$TORNADOVM_HOME/tornado-argfile and put org.tornadomla on that argfile's --module-path "
                        + "(see tornado-config/README.md)"));
        self.addReads(api);
        layer.findModule("tornado.runtime").ifPresent(runtime -> {
            for (String p : KERNEL_PACKAGES) {
                if (self.getPackages().contains(p)) self.addOpens(p, runtime);
            }
        });
    }

    /** The packages of the kernels the TornadoVM backend gives TornadoVM: the plain ones and its KernelContext ones. */
    static final List<String> KERNEL_PACKAGES = List.of("org.tornadomla.kernels", "org.tornadomla.tornado");

    /** Calls a constructor (method null) or a static method of a TornadoVM-backend class. */
    private static Object call(String className, String method, Object... args) {
        String home = System.getenv("TORNADOVM_HOME");
        if ((home == null || home.isEmpty()) && System.getProperty("tornado.load.api.implementation") == null) {
            // empty counts as unset, as ./mla counts it
            throw new MlaException("no TornadoVM installed: TORNADOVM_HOME is " + (home == null ? "not set" : "empty")
                    + " (see tornado-config/README.md); the java backends need none");
        }
        readTornadoVM(Backends.class.getModule());
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
            String hint = nativeLibraryHint(System.getenv("TORNADOVM_HOME"), cause);
            if (hint == null && cause instanceof IndexOutOfBoundsException && String.valueOf(cause.getMessage()).endsWith("length 0")) {
                // TornadoVM indexes the first device of a platform whose driver listed none (POCL_DEVICES=bogus)
                throw new MlaException("TornadoVM found no device: its driver listed none (check the driver: clinfo lists OpenCL devices; "
                        + "for PoCL, POCL_DEVICES)", cause);
            }
            if (cause instanceof NoClassDefFoundError || cause instanceof ExceptionInInitializerError) {
                throw new MlaException("TornadoVM could not start in this JVM (" + describe(cause) + ")"
                        + (hint != null ? ": " + hint : ": start through ./mla, which adds $TORNADOVM_HOME/tornado-argfile"), cause);
            }
            throw new MlaException("TornadoVM failed: " + describe(cause) + (hint != null ? "; " + hint : ""), cause);
        } catch (ReflectiveOperationException e) {
            throw new MlaException("TornadoVM backend is broken in this build: " + e, e);
        }
    }
}
