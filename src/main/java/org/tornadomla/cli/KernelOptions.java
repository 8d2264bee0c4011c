package org.tornadomla.cli;

import org.tornadomla.attention.AttentionOptions;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.MlaException;
import org.tornadomla.backends.Backends;
import org.tornadomla.graph.GraphExecutor;
import picocli.CommandLine.Option;

import java.io.PrintWriter;

/** The options every command that runs the layer shares: backend, device, cache storage, tiling. */
public final class KernelOptions {
    @Option(names = "--backend", description = "java-reference (alias java: the reference kernels, sequential), java-fast "
            + "(multi-threaded, Vector API) or tornado (a TornadoVM device; on its CUDA backend the absorbed path's scores and values "
            + "over a bf16 or fp8 cache run on tensor cores, compiled for sm_90 but not yet run on a GPU by this project, and the "
            + "weight products of more than 128 token rows run as cuBLAS SGEMMs, checked only on the compile gate's stand-ins); "
            + "default: java-fast when the JVM has the Vector API module jdk.incubator.vector (./mla adds it), else java-reference")
    String backend;

    /** The default backend: java-fast when this JVM has the Vector API module, java-reference when it does not. */
    static String defaultBackend() {
        return ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent() ? "java-fast" : "java-reference";
    }

    @Option(names = "--device", description = "TornadoVM device backend:device as `mla devices` lists them (default: TornadoVM's default device)")
    String device;

    @Option(names = "--profile", description = "print TornadoVM's kernel and copy times of every graph execution")
    boolean profile;

    @Option(names = "--plain-kernels", description = "on TornadoVM, run the plain @Parallel kernels everywhere instead of the KernelContext ones")
    boolean plainKernels;

    @Option(names = "--cache-dtype", defaultValue = "f32", description = "latent cache storage: f32, bf16, int8 or fp8 (default: ${DEFAULT-VALUE})")
    String cacheDtype;

    @Option(names = "--tile", defaultValue = "" + AttentionOptions.DEFAULT_TILE, description = "tiled path: tile size Bc (default: ${DEFAULT-VALUE})")
    int tile;

    @Option(names = "--splits", defaultValue = "" + AttentionOptions.DEFAULT_SPLITS,
            description = "tiled path: KV splits, 0 = auto (enough to keep every core or multiprocessor busy; default: ${DEFAULT-VALUE})")
    int splits;

    /** The executor for --backend (or {@link #defaultBackend()})/--device; --profile prints to {@code out}. */
    GraphExecutor executor(PrintWriter out) {
        String backend = this.backend == null ? defaultBackend() : this.backend;
        if (this.backend == null && backend.equals("java-reference")) {
            // the default is java-fast; say why this JVM runs the slower reference kernels instead
            out.println("note: java-reference, not java-fast: this JVM was started without the Vector API (--add-modules "
                    + "jdk.incubator.vector, which ./mla adds)");
        }
        if ((profile || plainKernels) && !isTornado(backend)) {
            throw new MlaException((profile ? "--profile" : "--plain-kernels") + " needs --backend tornado");
        }
        return Backends.create(withDevice(backend, device), new Backends.Options(0, profile ? out : null, !plainKernels));
    }

    /** Whether {@code backend} is TornadoVM's: "tornado", or "tornado:B:D" naming its device. */
    static boolean isTornado(String backend) {
        return backend.equals("tornado") || backend.startsWith("tornado:");
    }

    /**
     * The backend to create for --backend and --device: "tornado:B:D" from --device; refused where --device goes with
     * a backend that runs on the JVM, or with one that names its device already (tornado:B:D).
     */
    static String withDevice(String backend, String device) {
        if (device == null) return backend;
        if (!isTornado(backend)) throw new MlaException("--device " + device + " needs --backend tornado (the " + backend + " backend runs on the JVM)");
        if (!backend.equals("tornado")) {
            throw new MlaException("--backend " + backend + " and --device " + device + " both name a device: give one of them");
        }
        return "tornado:" + device;
    }

    CacheDtype dtype() {
        return CacheDtype.parse(cacheDtype);
    }

    AttentionOptions options(AttentionPath path) {
        return new AttentionOptions(path, tile, splits);
    }
}
