/**
 * One MLA layer over several devices, built from {@link org.tornadomla.attention.MlaLayer}s, one per device
 * ({@link org.tornadomla.graph.GraphExecutor}s, e.g. {@code Backends.create("tornado:0:0")} and
 * {@code "tornado:0:1"}):
 * <ul>
 *   <li>{@link org.tornadomla.parallel.TensorParallelLayer}: tensor-parallel heads. Each of D devices holds H/D
 *   heads ({@link org.tornadomla.weights.MlaWeights#heads}) and a full latent cache
 *   ({@link org.tornadomla.parallel.TensorParallelCache}); the hidden state goes to every device and the D
 *   partial o_proj outputs are summed on the host.</li>
 *   <li>{@link org.tornadomla.parallel.DataParallelLayers}: data-parallel attention. Each device holds the whole
 *   layer and the caches of the sequences placed on it ({@link org.tornadomla.parallel.DataParallelCache}); a
 *   step runs each device's sequences and puts the outputs back in the caller's order.</li>
 * </ul>
 * Both give the outputs of one layer on one device (TP within f32 rounding, DP with the same kernels per
 * token row). docs/scale-out.md has the bytes per device and what crosses devices per step.
 */
package org.tornadomla.parallel;
