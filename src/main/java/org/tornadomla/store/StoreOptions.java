package org.tornadomla.store;

import org.tornadomla.MlaException;

import java.time.Duration;
import java.util.Objects;

/**
 * How a {@link LatentStore} cuts and moves a sequence: tokens per block, how long blocks live in the store,
 * and how many bytes one network round trip carries.
 *
 * @param blockSize  tokens per block (default 64; 1 … {@link BlockKeys#MAX_BLOCK})
 * @param ttl        how long a pushed block lives; {@link Duration#ZERO} for no expiry (then only the server's
 *                   eviction, e.g. maxmemory-policy allkeys-lru, removes it). Default 1 hour.
 * @param chunkBytes values moved per round trip (default 4 MiB): large enough to hide the latency, small
 *                   enough to keep memory and the server's buffers low
 */
public record StoreOptions(int blockSize, Duration ttl, int chunkBytes) {
    /** Tokens per block unless chosen. */
    public static final int DEFAULT_BLOCK = 64;
    /** How long a pushed block lives unless chosen. */
    public static final Duration DEFAULT_TTL = Duration.ofHours(1);
    /** Bytes per round trip unless chosen. */
    public static final int DEFAULT_CHUNK = 4 << 20;

    /** Checks the block size, a ttl &ge; 0 and a chunk of at least one byte. */
    public StoreOptions {
        Objects.requireNonNull(ttl, "ttl");
        if (blockSize < 1 || blockSize > BlockKeys.MAX_BLOCK) {
            throw new MlaException("block size must be in 1 … " + BlockKeys.MAX_BLOCK + " tokens, found " + blockSize);
        }
        if (ttl.isNegative()) throw new MlaException("store ttl must be >= 0 (0: no expiry), found " + ttl);
        if (chunkBytes < 1) throw new MlaException("store chunk must be >= 1 byte, found " + chunkBytes);
    }

    /** Blocks of {@value #DEFAULT_BLOCK} tokens, a ttl of one hour, 4 MiB per round trip. */
    public static StoreOptions defaults() {
        return new StoreOptions(DEFAULT_BLOCK, DEFAULT_TTL, DEFAULT_CHUNK);
    }

    /** These options with another block size. */
    public StoreOptions withBlockSize(int tokens) {
        return new StoreOptions(tokens, ttl, chunkBytes);
    }

    /** These options with another ttl ({@link Duration#ZERO}: no expiry). */
    public StoreOptions withTtl(Duration t) {
        return new StoreOptions(blockSize, t, chunkBytes);
    }

    /** These options with another round-trip size. */
    public StoreOptions withChunkBytes(int bytes) {
        return new StoreOptions(blockSize, ttl, bytes);
    }
}
