/**
 * Kernel graphs: the dataflow of a step written once, as an ordered list of kernel tasks over named
 * buffers, and run by an executor. {@link org.tornadomla.graph.JvmExecutor} calls the kernels on the JVM
 * (the CPU reference); the TornadoVM backend turns the same {@link org.tornadomla.graph.KernelGraph} into a
 * TornadoVM {@code TaskGraph}, so both run exactly the same kernels in the same order on the same buffers.
 */
package org.tornadomla.graph;
