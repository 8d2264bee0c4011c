/**
 * Plain-Java kernels: every hot step of MLA as a {@code public static void} method over primitive arrays,
 * with {@code @Parallel} loops. On the JVM they run sequentially and are the CPU reference; TornadoVM
 * compiles the same bytecode to OpenCL or PTX.
 *
 * <p>Rules every kernel here follows (docs/design.md §2): no allocation, exceptions, recursion or virtual calls;
 * only static calls to other methods of this package and {@code Math}; {@code @Parallel} loops start at 0
 * with stride 1; anything that changes between executions of one compiled graph (start positions,
 * context lengths, block tables) is read from an {@code int[]} (the step's {@code attnMeta},
 * {@link org.tornadomla.kernels.CacheLayout}), shape constants are scalars; no
 * {@code Float.intBitsToFloat}/{@code floatToRawIntBits} (bf16 is decoded arithmetically, see {@link
 * org.tornadomla.kernels.Bf16}). Inputs are validated by the caller, never inside a kernel.
 *
 * <p>Layouts are row-major; weights are [out, in] as in Hugging Face checkpoints. A "row" r is one new token of
 * one sequence of the step (rows of a sequence are consecutive, cu_seqlens-style; sequences may bring
 * different numbers of tokens). Row r sits at position attnMeta[2r] of its sequence and attends that
 * sequence's positions 0 … attnMeta[2r] (causal), each read from the slot its block table gives
 * ({@link org.tornadomla.kernels.CacheLayout#slot}).
 */
package org.tornadomla.kernels;
