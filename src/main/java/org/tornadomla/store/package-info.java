/**
 * A latent-cache tier in a key-value store (Redis): prefill and decode in different processes or machines,
 * prompt prefixes reused. {@link org.tornadomla.store.LatentStore} pushes and pulls a sequence's cache rows
 * in blocks named by a hash chain over the token ids ({@link org.tornadomla.store.BlockKeys}), stored with a
 * checksum ({@link org.tornadomla.store.BlockValue}), through a {@link org.tornadomla.store.BlockStore}
 * ({@link org.tornadomla.store.RedisBlockStore}); a cache takes part through
 * {@link org.tornadomla.store.BlockRows}. docs/scale-out.md has the design.
 */
package org.tornadomla.store;
