/**
 * The java-fast backend: the same kernels, with the same signatures and results, multi-threaded over their
 * {@code @Parallel} dimensions and vectorised with the JDK Vector API ({@code jdk.incubator.vector}, so the
 * JVM needs {@code --add-modules jdk.incubator.vector}). {@link org.tornadomla.fast.FastExecutor} runs a
 * kernel graph with these where they exist and with the reference kernels elsewhere.
 */
package org.tornadomla.fast;
