/**
 * The latent cache: per token the normalised latent c_kv (d_c numbers) and one roped shared key k_pe (d_r), held
 * as f32, bf16, int8 or fp8 ({@link org.tornadomla.cache.CacheDtype}), contiguous or paged in blocks
 * ({@link org.tornadomla.cache.LatentCache}); {@link org.tornadomla.cache.CacheFiles} saves and loads it,
 * {@link org.tornadomla.cache.KvMemory} compares its size with other attention designs.
 */
package org.tornadomla.cache;
