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
    public static final int DEFAULT_BLOCK = 64;
    public static final Duration DEFAULT_TTL = Duration.ofHours(1);
    public static final int DEFAULT_CHUNK = 4 << 20;

    public StoreOptions {
        Objects.requireNonNull(ttl, "ttl");
        if (blockSize < 1 || blockSize > BlockKeys.MAX_BLOCK) {
            throw new MlaException("block size must be in 1 … " + BlockKeys.MAX_BLOCK + " tokens, found " + blockSize);
        }
        if (ttl.isNegative()) throw new MlaException("store ttl must be >= 0 (0: no expiry), found " + ttl);
        if (chunkBytes < 1) throw new MlaException("store chunk must be >= 1 byte, found " + chunkBytes);
    }

    public static StoreOptions defaults() {
        return new StoreOptions(DEFAULT_BLOCK, DEFAULT_TTL, DEFAULT_CHUNK);
    }

    public StoreOptions withBlockSize(int tokens) {
        return new StoreOptions(tokens, ttl, chunkBytes);
    }

    public StoreOptions withTtl(Duration t) {
        return new StoreOptions(blockSize, t, chunkBytes);
    }

    public StoreOptions withChunkBytes(int bytes) {
        return new StoreOptions(blockSize, ttl, bytes);
    }
}
