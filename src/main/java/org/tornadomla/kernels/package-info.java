/**
 * Plain-Java kernels: every hot step of MLA as a {@code public static void} method over primitive arrays,
 * with {@code @Parallel} loops. On the JVM they run sequentially and are the CPU reference; TornadoVM
 * compiles the same bytecode to OpenCL or PTX.
 *
 * <p>Rules every kernel here follows (docs/design.md §2): no allocation, exceptions, recursion or virtual calls;
 * only static calls to other methods of this package and {@code Math}; {@code @Parallel} loops start at 0
 * with stride 1; anything that changes between executions of one compiled graph (start positions,
 * context lengths) is read from an {@code int[]}, shape constants are scalars; no
 * {@code Float.intBitsToFloat}/{@code floatToRawIntBits} (bf16 is decoded arithmetically, see {@link
 * org.tornadomla.kernels.Bf16}). Inputs are validated by the caller, never inside a kernel.
 *
 * <p>Layouts are row-major; weights are [out, in] as in Hugging Face checkpoints. A "row" r is one token of
 * one sequence of the batch: r = b·tokens + t. Sequence b's token t sits at position seqStart[b] + t and
 * attends cache positions 0 … seqStart[b] + t (causal).
 */
package org.tornadomla.kernels;
