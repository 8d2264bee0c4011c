/**
 * Benchmarks and reports behind {@code mla bench}, {@code mla check} and {@code mla gpu-report}: timing
 * ({@link org.tornadomla.bench.Timing}), the measured roofline, charts. A tool, not library API.
 */
package org.tornadomla.bench;
