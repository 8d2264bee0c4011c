package org.tornadomla.store;

import org.tornadomla.MlaException;

import javax.net.ssl.SSLSocketFactory;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * {@link BlockStore} on a Redis server or a Redis Cluster (or Valkey: the same protocol), through Jedis, with
 * ACL users and passwords ({@code AUTH}) and TLS as the {@link StoreAddress} says. Each call is one pipeline:
 * every command of the batch is written, then every reply read, so a batch costs one round trip (on a cluster,
 * one per node that holds some of the batch's keys: the batch is split by hash slot). A key that moved to
 * another node (MOVED/ASK, a resharding or a failover) makes the client reread the cluster's slots and send the
 * batch once more. Thread-safe (Jedis keeps a pool of connections per node). Jedis is an optional dependency of
 * the library: a program that uses this class puts {@code redis.clients:jedis} on its class path, and without it
 * {@link #connect} says so in one line. (This class names no Jedis type, so that it loads without Jedis.)
 */
public final class RedisBlockStore implements BlockStore {
    /** Default time to open a connection. */
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(2);
    /** Default time to wait for a reply (a batch of a few MB over a network takes well under this). */
    public static final Duration DEFAULT_SOCKET_TIMEOUT = Duration.ofSeconds(10);
    /** The Jedis this library is built and tested with. */
    static final String JEDIS = "redis.clients:jedis 8.0.2";

    private final JedisBlockStore store;

    private RedisBlockStore(JedisBlockStore store) {
        this.store = store;
    }

    /** Connects with the default timeouts; see {@link #connect(StoreAddress, Duration, Duration)}. */
    public static RedisBlockStore connect(StoreAddress address) {
        return connect(address, DEFAULT_CONNECT_TIMEOUT, DEFAULT_SOCKET_TIMEOUT);
    }

    /** Connects with the JVM's default TLS trust store; see {@link #connect(StoreAddress, Duration, Duration, SSLSocketFactory)}. */
    public static RedisBlockStore connect(StoreAddress address, Duration connectTimeout, Duration socketTimeout) {
        return connect(address, connectTimeout, socketTimeout, null);
    }

    /**
     * Connects, logs in and checks that the store answers (PING), so an unreachable server, a refused password or
     * user, a failed TLS handshake or a cluster that is down is one error here, naming the address (password
     * masked) and the cause, rather than at the first transfer. Several seeds, or one server that says it is part
     * of a cluster ({@code cluster_enabled:1}), make a cluster client. {@code tls}: the socket factory for
     * {@code rediss://} (its trust store holds the server's certificate or CA); null: the JVM's default, which
     * reads {@code -Djavax.net.ssl.trustStore}. Refused in one line when Jedis is not on the class path.
     */
    public static RedisBlockStore connect(StoreAddress address, Duration connectTimeout, Duration socketTimeout, SSLSocketFactory tls) {
        Objects.requireNonNull(address, "address");
        requireJedis("redis.clients.jedis.UnifiedJedis");
        return new RedisBlockStore(JedisBlockStore.connect(address, connectTimeout, socketTimeout, tls));
    }

    /** Throws unless {@code probe}, a class of Jedis, can be loaded where this library was. */
    static void requireJedis(String probe) {
        try {
            Class.forName(probe, false, RedisBlockStore.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            throw new MlaException("the Redis latent store needs Jedis (" + JEDIS + ", an optional dependency of this library) on the class path "
                    + "or module path; found no " + probe);
        }
    }

    /** Whether this store talks to a Redis Cluster. */
    public boolean isCluster() {
        return store.isCluster();
    }

    @Override
    public String address() {
        return store.address();
    }

    @Override
    public boolean[] exist(List<String> keys) {
        return store.exist(keys);
    }

    @Override
    public List<byte[]> get(List<String> keys) {
        return store.get(keys);
    }

    @Override
    public void put(List<String> keys, List<byte[]> values, long ttlMillis) {
        store.put(keys, values, ttlMillis);
    }

    @Override
    public void delete(List<String> keys) {
        store.delete(keys);
    }

    @Override
    public void close() {
        store.close();
    }
}
