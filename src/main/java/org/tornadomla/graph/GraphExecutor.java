package org.tornadomla.graph;

/** Runs kernel graphs somewhere: on the JVM, or on a TornadoVM device. */
public interface GraphExecutor extends AutoCloseable {
    /** Runs every task of the graph once, in order. INPUT buffers are read as they are now. */
    void execute(KernelGraph graph);

    /** What ran the last graph, in words, e.g. "java-reference (reference kernels, sequential on the JVM)". */
    String device();

    /**
     * How many independent work items this executor runs at once (1 on the sequential JVM reference, the
     * cores for java-fast, compute units × 2 on a TornadoVM device): what an automatic KV split count fills.
     */
    default int parallelism() {
        return 1;
    }

    /**
     * Whether each graph keeps its own copy of device-resident state (TornadoVM: one device copy of the cache
     * per execution plan), so that running another graph over the same cache moves it. A layer then serves a
     * variable-length step with a graph it already built when one is large enough, rather than a new one.
     */
    default boolean statePerGraph() {
        return false;
    }

    /**
     * True when this executor's ABSORBED scores and values over a bf16 or fp8 cache take the query and the softmax's
     * probabilities rounded to bf16 (tensor-core products, as FlashMLA does): {@code mla check} then allows
     * {@code LayerCheck.TOL_BF16_PRODUCTS} for those cases.
     */
    default boolean bf16TensorCores() {
        return false;
    }

    /**
     * What runs this executor's weight products of many token rows where a vendor library does (TornadoVM's CUDA
     * backend: cuBLAS), for {@code mla check} to say; null where the executor's own kernels do.
     */
    default String libraryGemms() {
        return null;
    }

    /**
     * How many heads one work item of this executor's tiled kernels serves: 8 for the plain kernels and
     * TornadoVM's (a head group), every head for java-fast (one task reads a tile for all heads).
     */
    default int headsPerWorkItem() {
        return 8;
    }

    /**
     * What one execution moved and how long its kernels ran: bytes host to device, bytes device to host, the
     * device's kernel time in ms (NaN where the executor cannot tell).
     */
    record Transfers(long toDevice, long toHost, double kernelMs) {
    }

    /**
     * Runs the graph once more and returns what that execution copied. The JVM copies nothing; TornadoVM reads
     * its profiler, switched on for this one execution only (so timed executions run without it).
     */
    default Transfers measureTransfers(KernelGraph graph) {
        execute(graph);
        return new Transfers(0, 0, Double.NaN);
    }

    /** Releases device resources of graphs that will not run again. */
    default void release(KernelGraph graph) {
    }

    /**
     * Releases what the executor holds. Whoever made the executor closes it, once no layer uses it (an
     * {@code MlaLayer} does not close its executor: one executor may serve several layers). A java-fast executor
     * refuses to run afterwards; the reference executor holds nothing, and TornadoVM's releases its device plans and
     * makes them again if it is used once more. Closing twice is harmless.
     */
    @Override
    default void close() {
    }
}
