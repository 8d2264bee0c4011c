package org.tornadomla.store;

import java.util.List;

/**
 * Where block values live: a key-value store spoken to in batches (one network round trip per call, however
 * many keys). {@link RedisBlockStore} is the implementation on Redis (and Valkey); tests use one in memory.
 * Every failure to reach or use the store is an {@code MlaException} naming {@link #address()} and the cause.
 */
public interface BlockStore extends AutoCloseable {
    /** The store in words for messages, e.g. "redis://127.0.0.1:6379". */
    String address();

    /** Whether each key exists, in the order given. */
    boolean[] exist(List<String> keys);

    /** Each key's value, null where there is none, in the order given. */
    List<byte[]> get(List<String> keys);

    /** Stores each value under its key; with ttlMillis &gt; 0 each expires after that many milliseconds. */
    void put(List<String> keys, List<byte[]> values, long ttlMillis);

    /** Removes the keys (absent ones are ignored). */
    void delete(List<String> keys);

    @Override
    void close();
}
