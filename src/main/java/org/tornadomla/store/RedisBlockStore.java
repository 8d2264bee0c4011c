package org.tornadomla.store;

import org.tornadomla.MlaException;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.Response;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.params.SetParams;

import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * {@link BlockStore} on a Redis server (or Valkey: the same protocol), through Jedis. Each call is one
 * pipeline: every command of the batch is written, then every reply read, so a batch costs one round trip.
 * Thread-safe (Jedis's {@link RedisClient} keeps a pool of connections). Jedis is an optional dependency of
 * the library: a program that uses this class puts {@code redis.clients:jedis} on its class path.
 */
public final class RedisBlockStore implements BlockStore {
    /** Default time to open a connection. */
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(2);
    /** Default time to wait for a reply (a batch of a few MB over a network takes well under this). */
    public static final Duration DEFAULT_SOCKET_TIMEOUT = Duration.ofSeconds(10);

    private final StoreAddress address;
    private final Duration connectTimeout;
    private final Duration socketTimeout;
    private final RedisClient client;

    private RedisBlockStore(StoreAddress address, Duration connectTimeout, Duration socketTimeout, RedisClient client) {
        this.address = address;
        this.connectTimeout = connectTimeout;
        this.socketTimeout = socketTimeout;
        this.client = client;
    }

    /** Connects with the default timeouts; see {@link #connect(StoreAddress, Duration, Duration)}. */
    public static RedisBlockStore connect(StoreAddress address) {
        return connect(address, DEFAULT_CONNECT_TIMEOUT, DEFAULT_SOCKET_TIMEOUT);
    }

    /**
     * Connects and checks that the server answers (PING), so an unreachable server is one error here, naming
     * host:port and the cause, rather than at the first transfer.
     */
    public static RedisBlockStore connect(StoreAddress address, Duration connectTimeout, Duration socketTimeout) {
        Objects.requireNonNull(address, "address");
        int connectMs = millis(connectTimeout, "connect timeout"), socketMs = millis(socketTimeout, "socket timeout");
        DefaultJedisClientConfig config = DefaultJedisClientConfig.builder().connectionTimeoutMillis(connectMs).socketTimeoutMillis(socketMs)
                .clientName("tornado-mla").build();
        RedisClient client;
        try {
            client = RedisClient.builder().hostAndPort(new HostAndPort(address.host(), address.port())).clientConfig(config).build();
        } catch (JedisException | IllegalArgumentException e) {
            throw new MlaException(address + ": cannot set up a Redis client: " + words(e, connectMs, socketMs));
        }
        RedisBlockStore store = new RedisBlockStore(address, Duration.ofMillis(connectMs), Duration.ofMillis(socketMs), client);
        try {
            String pong = client.ping();
            if (!"PONG".equals(pong)) throw new MlaException(address + ": not a Redis server: PING answered " + MlaException.quote(pong));
        } catch (JedisException e) {
            store.close();
            throw store.failure("cannot reach the server", e);
        } catch (RuntimeException e) {
            store.close();
            throw e;
        }
        return store;
    }

    private static int millis(Duration d, String what) {
        Objects.requireNonNull(d, what);
        if (d.isNegative() || d.isZero() || d.toMillis() > Integer.MAX_VALUE) {
            throw new MlaException(what + " must be in 1 ms … " + Integer.MAX_VALUE + " ms, found " + d.toMillis() + " ms");
        }
        return (int) d.toMillis();
    }

    @Override
    public String address() {
        return address.toString();
    }

    @Override
    public boolean[] exist(List<String> keys) {
        boolean[] out = new boolean[keys.size()];
        if (keys.isEmpty()) return out;
        try (Pipeline p = client.pipelined()) {
            List<Response<Boolean>> r = new ArrayList<>(keys.size());
            for (String k : keys) r.add(p.exists(bytes(k)));
            p.sync();
            for (int i = 0; i < out.length; i++) out[i] = r.get(i).get();
        } catch (JedisException e) {
            throw failure("EXISTS of " + keys.size() + " keys failed", e);
        }
        return out;
    }

    @Override
    public List<byte[]> get(List<String> keys) {
        if (keys.isEmpty()) return List.of();
        List<byte[]> out = new ArrayList<>(keys.size());
        try (Pipeline p = client.pipelined()) {
            List<Response<byte[]>> r = new ArrayList<>(keys.size());
            for (String k : keys) r.add(p.get(bytes(k)));
            p.sync();
            for (Response<byte[]> v : r) out.add(v.get());
        } catch (JedisException e) {
            throw failure("GET of " + keys.size() + " blocks failed", e);
        }
        return out;
    }

    @Override
    public void put(List<String> keys, List<byte[]> values, long ttlMillis) {
        if (keys.size() != values.size()) throw new MlaException("store put: " + keys.size() + " keys, " + values.size() + " values");
        if (keys.isEmpty()) return;
        SetParams params = ttlMillis > 0 ? SetParams.setParams().px(ttlMillis) : SetParams.setParams();
        try (Pipeline p = client.pipelined()) {
            List<Response<String>> r = new ArrayList<>(keys.size());
            for (int i = 0; i < keys.size(); i++) r.add(p.set(bytes(keys.get(i)), values.get(i), params));
            p.sync();
            for (Response<String> s : r) s.get();   // throws the server's error of a refused SET
        } catch (JedisException e) {
            throw failure("SET of " + keys.size() + " blocks failed", e);
        }
    }

    @Override
    public void delete(List<String> keys) {
        if (keys.isEmpty()) return;
        try (Pipeline p = client.pipelined()) {
            for (String k : keys) p.del(bytes(k));
            p.sync();
        } catch (JedisException e) {
            throw failure("DEL of " + keys.size() + " keys failed", e);
        }
    }

    @Override
    public void close() {
        try {
            client.close();
        } catch (RuntimeException e) {
            // closing a client whose server is gone: nothing left to release
        }
    }

    private static byte[] bytes(String key) {
        return key.getBytes(StandardCharsets.UTF_8);
    }

    /** One line: address, what failed and why, in words (the server's own reply quoted). */
    private MlaException failure(String what, JedisException e) {
        return new MlaException(address + ": " + what + ": " + words(e, (int) connectTimeout.toMillis(), (int) socketTimeout.toMillis()), e);
    }

    private static String words(Throwable e, int connectMs, int socketMs) {
        if (e instanceof JedisDataException) return "the server refused: " + MlaException.quote(e.getMessage());
        for (Throwable t : chain(e, new ArrayList<>())) {
            if (t instanceof ConnectException) return "connection refused (is the server running and listening there?)";
            if (t instanceof UnknownHostException) return "unknown host";
            if (t instanceof NoRouteToHostException) return "no route to host";
            if (t instanceof SocketTimeoutException s) {
                String m = String.valueOf(s.getMessage()).toLowerCase(java.util.Locale.ROOT);
                return m.contains("connect") ? "no connection within the connect timeout of " + connectMs + " ms"
                        : "no reply within the socket timeout of " + socketMs + " ms";
            }
            String m = t.getMessage();
            if (m != null && m.contains("Unexpected end of stream")) return "the server closed the connection (stopped or killed?)";
            if (t instanceof java.net.SocketException && m != null) return "connection lost (" + MlaException.escape(m) + ")";
        }
        String m = e.getMessage();
        return m == null ? e.getClass().getSimpleName() : MlaException.quote(m);
    }

    /** e, its causes and what they suppressed (Jedis puts the socket's exception in either), depth first. */
    private static List<Throwable> chain(Throwable e, List<Throwable> out) {
        if (e == null || out.contains(e) || out.size() > 32) return out;
        out.add(e);
        for (Throwable s : e.getSuppressed()) chain(s, out);
        return chain(e.getCause(), out);
    }
}
