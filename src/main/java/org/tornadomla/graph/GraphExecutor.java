package org.tornadomla.graph;

/** Runs kernel graphs somewhere: on the JVM, or on a TornadoVM device. */
public interface GraphExecutor extends AutoCloseable {
    /** Runs every task of the graph once, in order. INPUT buffers are read as they are now. */
    void execute(KernelGraph graph);

    /** What ran the last graph, in words, e.g. "java (reference kernels, sequential)". */
    String device();

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

    @Override
    default void close() {
    }
}
