package org.tornadomla.store;

import org.tornadomla.internal.Messages;
import org.tornadomla.MlaException;
import redis.clients.jedis.AbstractPipeline;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.RedisClusterClient;
import redis.clients.jedis.Response;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisAskDataException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.exceptions.JedisMovedDataException;
import redis.clients.jedis.params.SetParams;

import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLSocketFactory;

import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

/**
 * {@link RedisBlockStore}'s work, through Jedis: the only class of the library that names Jedis's types, loaded
 * only once {@link RedisBlockStore} has found Jedis on the class path.
 */
final class JedisBlockStore implements BlockStore {
    private final StoreAddress address;
    private final Duration connectTimeout;
    private final Duration socketTimeout;
    private final UnifiedJedis client;
    private final boolean cluster;

    private JedisBlockStore(StoreAddress address, Duration connectTimeout, Duration socketTimeout, UnifiedJedis client) {
        this.address = address;
        this.connectTimeout = connectTimeout;
        this.socketTimeout = socketTimeout;
        this.client = client;
        this.cluster = client instanceof RedisClusterClient;
    }

    /**
     * Connects, logs in and checks that the store answers (PING), so an unreachable server, a refused password or
     * user, a failed TLS handshake or a cluster that is down is one error here, naming the address (password
     * masked) and the cause, rather than at the first transfer. Several seeds, or one server that says it is part
     * of a cluster ({@code cluster_enabled:1}), make a cluster client. {@code tls}: the socket factory for
     * {@code rediss://} (its trust store holds the server's certificate or CA); null: the JVM's default, which
     * reads {@code -Djavax.net.ssl.trustStore}.
     */
    static JedisBlockStore connect(StoreAddress address, Duration connectTimeout, Duration socketTimeout, SSLSocketFactory tls) {
        Objects.requireNonNull(address, "address");
        int connectMs = millis(connectTimeout, "connect timeout"), socketMs = millis(socketTimeout, "socket timeout");
        DefaultJedisClientConfig.Builder b = DefaultJedisClientConfig.builder().connectionTimeoutMillis(connectMs).socketTimeoutMillis(socketMs)
                .clientName("tornado-mla").ssl(address.tls());
        if (address.user() != null) b.user(address.user());
        if (address.password() != null) b.password(address.password());
        if (tls != null) b.sslSocketFactory(tls);
        DefaultJedisClientConfig config = b.build();
        Set<HostAndPort> seeds = new LinkedHashSet<>();
        for (StoreAddress.Node n : address.nodes()) seeds.add(new HostAndPort(n.host(), n.port()));
        JedisBlockStore store = null;
        try {
            UnifiedJedis client = address.listsSeeds() ? cluster(seeds, config)
                    : RedisClient.builder().hostAndPort(seeds.iterator().next()).clientConfig(config).build();
            store = new JedisBlockStore(address, Duration.ofMillis(connectMs), Duration.ofMillis(socketMs), client);
            String pong = client.ping();
            if (!"PONG".equals(pong)) throw new MlaException(address + ": not a Redis server: PING answered " + Messages.quote(pong));
            if (!store.cluster && client.info("cluster").contains("cluster_enabled:1")) {
                store.close();                                   // one seed of a cluster: talk to the whole cluster
                store = new JedisBlockStore(address, Duration.ofMillis(connectMs), Duration.ofMillis(socketMs), cluster(seeds, config));
                store.client.ping();
            }
            return store;
        } catch (JedisException e) {
            if (store != null) store.close();
            throw new MlaException(address + ": cannot reach the server: " + words(e, connectMs, socketMs), e);
        } catch (IllegalArgumentException e) {
            if (store != null) store.close();
            throw new MlaException(address + ": cannot set up a Redis client: " + words(e, connectMs, socketMs));
        } catch (RuntimeException e) {
            if (store != null) store.close();
            throw e;
        }
    }

    private static RedisClusterClient cluster(Set<HostAndPort> seeds, DefaultJedisClientConfig config) {
        return RedisClusterClient.builder().nodes(seeds).clientConfig(config).build();
    }

    /** Whether this store talks to a Redis Cluster. */
    boolean isCluster() {
        return cluster;
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
        List<Boolean> r = batch("EXISTS of " + keys.size() + " keys failed", p -> {
            List<Response<Boolean>> rs = new ArrayList<>(keys.size());
            for (String k : keys) rs.add(p.exists(bytes(k)));
            return rs;
        });
        for (int i = 0; i < out.length; i++) out[i] = r.get(i);
        return out;
    }

    @Override
    public List<byte[]> get(List<String> keys) {
        if (keys.isEmpty()) return List.of();
        return batch("GET of " + keys.size() + " blocks failed", p -> {
            List<Response<byte[]>> rs = new ArrayList<>(keys.size());
            for (String k : keys) rs.add(p.get(bytes(k)));
            return rs;
        });
    }

    @Override
    public void put(List<String> keys, List<byte[]> values, long ttlMillis) {
        if (keys.size() != values.size()) throw new MlaException("store put: " + keys.size() + " keys, " + values.size() + " values");
        if (keys.isEmpty()) return;
        SetParams params = ttlMillis > 0 ? SetParams.setParams().px(ttlMillis) : SetParams.setParams();
        batch("SET of " + keys.size() + " blocks failed", p -> {       // reading each reply throws the server's error of a refused SET
            List<Response<String>> rs = new ArrayList<>(keys.size());
            for (int i = 0; i < keys.size(); i++) rs.add(p.set(bytes(keys.get(i)), values.get(i), params));
            return rs;
        });
    }

    @Override
    public void delete(List<String> keys) {
        if (keys.isEmpty()) return;
        batch("DEL of " + keys.size() + " keys failed", p -> {
            List<Response<Long>> rs = new ArrayList<>(keys.size());
            for (String k : keys) rs.add(p.del(bytes(k)));
            return rs;
        });
    }

    /**
     * One pipeline of commands, their replies in order. On a cluster, a reply saying a key lives elsewhere now
     * (MOVED, ASK) makes the client reread the slots and the batch go once more (every command here can be
     * repeated: SET, GET, EXISTS, DEL).
     */
    private <T> List<T> batch(String what, Function<AbstractPipeline, List<Response<T>>> commands) {
        for (int attempt = 0; ; attempt++) {
            try (AbstractPipeline p = client.pipelined()) {
                List<Response<T>> rs = commands.apply(p);
                p.sync();
                List<T> out = new ArrayList<>(rs.size());
                for (Response<T> r : rs) out.add(r.get());
                return out;
            } catch (JedisMovedDataException | JedisAskDataException e) {
                if (!cluster || attempt > 0) throw failure(what, e);
                ((RedisClusterClient) client).refreshClusterTopology();
            } catch (JedisException e) {
                throw failure(what, e);
            }
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
        List<Throwable> all = chain(e, new ArrayList<>());
        for (Throwable t : all) {
            String m = String.valueOf(t.getMessage());
            if (m.startsWith("WRONGPASS")) return "login refused: the server knows no such user, or the password is wrong (WRONGPASS)";
            if (m.startsWith("NOAUTH")) return "the server needs a password: give it in the address, redis://[USER]:PASSWORD@HOST:PORT (NOAUTH)";
            if (m.startsWith("NOPERM")) return "the user may not run this command or touch these keys (NOPERM: check its ACL rules)";
            if (m.startsWith("CLUSTERDOWN")) return "the cluster is down or a hash slot has no node (" + Messages.quote(m) + ")";
            if (t instanceof SSLHandshakeException) {
                return "TLS handshake failed (" + Messages.escape(m) + "): does the trust store (-Djavax.net.ssl.trustStore) hold the "
                        + "server's certificate or CA, and does the server speak TLS on this port?";
            }
        }
        if (e instanceof JedisDataException) return "the server refused: " + Messages.quote(e.getMessage());
        for (Throwable t : all) {
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
            if (t instanceof java.net.SocketException && m != null) return "connection lost (" + Messages.escape(m) + ")";
        }
        String m = e.getMessage();
        return m == null ? e.getClass().getSimpleName() : Messages.quote(m);
    }

    /** e, its causes and what they suppressed (Jedis puts the socket's exception in either), depth first. */
    private static List<Throwable> chain(Throwable e, List<Throwable> out) {
        if (e == null || out.contains(e) || out.size() > 32) return out;
        out.add(e);
        for (Throwable s : e.getSuppressed()) chain(s, out);
        return chain(e.getCause(), out);
    }
}
