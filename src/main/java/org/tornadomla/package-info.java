/**
 * TornadoMLA: DeepSeek-V3's Multi-head Latent Attention as a Java library. Start at
 * {@link org.tornadomla.attention.MlaLayer} (one layer: prefill, decode, variable-length steps over a
 * {@link org.tornadomla.cache.LatentCache}), with a config from {@link org.tornadomla.config.MlaConfig}, weights
 * from {@link org.tornadomla.weights.MlaWeights} and, for speed, an executor from
 * {@link org.tornadomla.backends.Backends}. Every error about the caller's input is an {@link MlaException}
 * with one line naming what was expected and what was found.
 *
 * <p>The packages follow the dataflow: {@code config} → {@code weights} → {@code attention} (the layer and its
 * graph) → {@code kernels} (the plain-Java kernels, the CPU reference) run by a {@code graph} executor on the
 * JVM, by {@code fast} (Vector API) or by TornadoVM; {@code cache} holds the latent cache, {@code store} its Redis
 * tier. {@code cli}, {@code bench}, {@code analysis} and {@code ladder} are the {@code mla} command's tools and
 * the teaching ladder, not API.
 */
package org.tornadomla;
