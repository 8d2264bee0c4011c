package org.tornadomla.graph;

/** Runs kernel graphs somewhere: on the JVM, or on a TornadoVM device. */
public interface GraphExecutor extends AutoCloseable {
    /** Runs every task of the graph once, in order. INPUT buffers are read as they are now. */
    void execute(KernelGraph graph);

    /** What ran the last graph, in words, e.g. "java (reference kernels, sequential)". */
    String device();

    /** Releases device resources of graphs that will not run again. */
    default void release(KernelGraph graph) {
    }

    @Override
    default void close() {
    }
}
