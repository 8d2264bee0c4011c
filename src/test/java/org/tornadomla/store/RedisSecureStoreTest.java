package org.tornadomla.store;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tornadomla.MlaException;
import org.tornadomla.TestData;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.attention.MlaLayer;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.weights.MlaWeights;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManagerFactory;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Redis tier past one open server, on real servers started on loopback: a password ({@code requirepass}),
 * an ACL user, TLS with a throw-away certificate, and a 3-master Redis Cluster with a password. Every refusal is
 * one line that never shows the password. Skipped where redis-server (and, for TLS, openssl) is not installed;
 * .ci/run installs them.
 */
class RedisSecureStoreTest {
    static final String PASSWORD = "s3cret-Pa55";
    final List<AutoCloseable> open = new ArrayList<>();
    @TempDir
    Path dir;

    @AfterEach
    void stop() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) open.get(i).close();
    }

    <T extends AutoCloseable> T keep(T t) {
        open.add(t);
        return t;
    }

    /** 300 keys over many hash slots: written, found, read back byte for byte, deleted. */
    static void roundTrip(BlockStore s) {
        SplittableRandom rnd = new SplittableRandom(11);
        List<String> keys = new ArrayList<>();
        List<byte[]> values = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            keys.add("tornado-mla:test:" + i);
            byte[] v = new byte[1 + rnd.nextInt(3000)];
            rnd.nextBytes(v);
            values.add(v);
        }
        s.put(keys, values, 60_000);
        boolean[] exist = s.exist(keys);
        for (boolean e : exist) assertTrue(e);
        List<byte[]> got = s.get(keys);
        for (int i = 0; i < keys.size(); i++) assertArrayEquals(values.get(i), got.get(i), keys.get(i));
        s.delete(keys);
        for (boolean e : s.exist(keys)) assertFalse(e);
    }

    static void oneLineWithoutThePassword(String m) {
        assertEquals(1, m.lines().count(), m);
        assertFalse(m.contains(PASSWORD), "the password shows in: " + m);
        assertFalse(m.contains("wrong-" + PASSWORD), m);
    }

    @Test
    void addressesParseAndNeverShowThePassword() {
        StoreAddress a = StoreAddress.parse("redis://:" + PASSWORD + "@127.0.0.1:6379");
        assertTrue(a.hasPassword());
        assertEquals(null, a.user());
        assertEquals("redis://:***@127.0.0.1:6379", a.toString());
        StoreAddress u = StoreAddress.parse("rediss://alice:" + PASSWORD + "@[::1]:7000");
        assertTrue(u.tls());
        assertEquals("alice", u.user());
        assertEquals("rediss://alice:***@[::1]:7000", u.toString());
        StoreAddress c = StoreAddress.parse("redis://:p@h1:1,redis://:p@h2:2, redis://:p@h3:3");
        assertEquals(List.of(new StoreAddress.Node("h1", 1), new StoreAddress.Node("h2", 2), new StoreAddress.Node("h3", 3)), c.nodes());
        assertTrue(c.listsSeeds());
        String m = assertThrows(MlaException.class, () -> StoreAddress.parse("redis://:" + PASSWORD + "@host")).getMessage();
        oneLineWithoutThePassword(m);
        assertTrue(m.contains("'redis://:***@host'"), m);
        m = assertThrows(MlaException.class, () -> StoreAddress.parse("redis://:" + PASSWORD + "@h:1,redis://h:2")).getMessage();
        oneLineWithoutThePassword(m);
        assertTrue(m.contains("one scheme and one login"), m);
        oneLineWithoutThePassword(assertThrows(MlaException.class, () -> StoreAddress.parse("http://u:" + PASSWORD + "@h:1")).getMessage());
        assertEquals("redis://u:***@h:1,x", StoreAddress.mask("redis://u:" + PASSWORD + "@h:1,x"));
    }

    @Test
    void aPasswordProtectedServer() throws Exception {
        RedisServer s = keep(RedisServer.start("32mb", List.of("--requirepass", PASSWORD)));
        String uri = "redis://:" + PASSWORD + "@127.0.0.1:" + s.port();
        roundTrip(keep(RedisBlockStore.connect(StoreAddress.parse(uri))));
        String wrong = assertThrows(MlaException.class,
                () -> RedisBlockStore.connect(StoreAddress.parse("redis://:wrong-" + PASSWORD + "@127.0.0.1:" + s.port()))).getMessage();
        oneLineWithoutThePassword(wrong);
        assertEquals("redis://:***@127.0.0.1:" + s.port() + ": cannot reach the server: login refused: the server knows no such user, or the "
                + "password is wrong (WRONGPASS)", wrong);
        String none = assertThrows(MlaException.class, () -> RedisBlockStore.connect(StoreAddress.parse("redis://127.0.0.1:" + s.port()))).getMessage();
        assertTrue(none.contains("the server needs a password") && none.contains("NOAUTH"), none);
    }

    @Test
    void anAclUser() throws Exception {
        RedisServer s = keep(RedisServer.start("32mb", List.of("--user", "default", "off", "--user", "mla", "on", ">" + PASSWORD, "~tornado-mla:*", "+@all")));
        roundTrip(keep(RedisBlockStore.connect(StoreAddress.parse("redis://mla:" + PASSWORD + "@127.0.0.1:" + s.port()))));
        String unknown = assertThrows(MlaException.class,
                () -> RedisBlockStore.connect(StoreAddress.parse("redis://nobody:" + PASSWORD + "@127.0.0.1:" + s.port()))).getMessage();
        oneLineWithoutThePassword(unknown);
        assertTrue(unknown.contains("login refused") && unknown.contains("redis://nobody:***@"), unknown);
        // the user may touch tornado-mla:* only: another key is one line naming the ACL
        RedisBlockStore st = keep(RedisBlockStore.connect(StoreAddress.parse("redis://mla:" + PASSWORD + "@127.0.0.1:" + s.port())));
        String noperm = assertThrows(MlaException.class, () -> st.put(List.of("other:key"), List.of(new byte[] {1}), 0)).getMessage();
        assertTrue(noperm.contains("NOPERM"), noperm);
        oneLineWithoutThePassword(noperm);
    }

    /** A self-signed certificate for 127.0.0.1 made by openssl, and an SSL socket factory trusting it. */
    record Tls(Path cert, Path key, SSLSocketFactory trusting) {
    }

    Tls certificate() throws Exception {
        Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/bin/openssl")), "openssl is not installed: TLS test skipped");
        Path cert = dir.resolve("redis.crt"), key = dir.resolve("redis.key");
        Process p = new ProcessBuilder("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", "-keyout", key.toString(), "-out", cert.toString())
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0, "openssl made no certificate");
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        try (InputStream in = Files.newInputStream(cert)) {
            trust.setCertificateEntry("redis", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, tmf.getTrustManagers(), null);
        return new Tls(cert, key, ctx.getSocketFactory());
    }

    @Test
    void tlsWithATrustStoreAndAPassword() throws Exception {
        Tls tls = certificate();
        int tlsPort = RedisServer.freePort();
        RedisServer s = keep(RedisServer.start("32mb", List.of("--tls-port", Integer.toString(tlsPort), "--tls-cert-file", tls.cert().toString(),
                "--tls-key-file", tls.key().toString(), "--tls-ca-cert-file", tls.cert().toString(), "--tls-auth-clients", "no",
                "--requirepass", PASSWORD)));
        Duration t = Duration.ofSeconds(5);
        StoreAddress a = StoreAddress.parse("rediss://:" + PASSWORD + "@127.0.0.1:" + tlsPort);
        roundTrip(keep(RedisBlockStore.connect(a, t, t, tls.trusting())));
        // the JVM's default trust store does not know the throw-away certificate: one line naming the trust store
        String m = assertThrows(MlaException.class, () -> RedisBlockStore.connect(a, t, t, null)).getMessage();
        oneLineWithoutThePassword(m);
        assertTrue(m.contains("TLS handshake failed") && m.contains("trust store"), m);
        // plain text to the TLS port: refused in one line too
        String plain = assertThrows(MlaException.class,
                () -> RedisBlockStore.connect(StoreAddress.parse("redis://:" + PASSWORD + "@127.0.0.1:" + tlsPort), t, Duration.ofSeconds(2), null)).getMessage();
        oneLineWithoutThePassword(plain);
        assertTrue(plain.startsWith("redis://:***@127.0.0.1:" + tlsPort + ": cannot reach the server: "), plain);
        assertTrue(s.port() > 0);
    }

    List<RedisServer> cluster() throws Exception {
        List<RedisServer> nodes = RedisServer.startCluster(3, PASSWORD, dir);
        open.addAll(nodes);
        return nodes;
    }

    static String seeds(List<RedisServer> nodes, String password) {
        return RedisServer.seeds(nodes, password);
    }

    @Test
    void aRedisClusterWithAPassword() throws Exception {
        List<RedisServer> nodes = cluster();
        RedisBlockStore st = keep(RedisBlockStore.connect(StoreAddress.parse(seeds(nodes, PASSWORD))));
        assertTrue(st.isCluster());
        roundTrip(st);
        // one seed of a cluster is found to be one
        RedisBlockStore one = keep(RedisBlockStore.connect(StoreAddress.parse("redis://:" + PASSWORD + "@127.0.0.1:" + nodes.get(1).port())));
        assertTrue(one.isCluster());
        roundTrip(one);
        oneLineWithoutThePassword(assertThrows(MlaException.class,
                () -> RedisBlockStore.connect(StoreAddress.parse(seeds(nodes, "wrong-" + PASSWORD)))).getMessage());

        // a sequence's latent through the cluster: its blocks spread over the nodes, pulled back bit for bit
        MlaConfig c = TestData.small();
        MlaLayer layer = new MlaLayer(MlaWeights.random(c, 3));
        int n = 200;
        int[] ids = new int[n];
        for (int i = 0; i < n; i++) ids[i] = 1000 + 7 * i;
        LatentCache a = layer.newCache(1, n, CacheDtype.BF16);
        layer.prefill(a, TestData.gaussian(5, n * c.hiddenSize()), n, AttentionPath.ABSORBED);
        LatentStore ls = new LatentStore(st, c, "cluster-test", StoreOptions.defaults().withBlockSize(16));
        ls.push(ids, 0, LatentCacheRows.of(List.of(a)));
        LatentCache b = layer.newCache(1, n, CacheDtype.BF16);
        assertEquals(n, ls.pull(ids, 0, LatentCacheRows.of(List.of(b)), OnMissing.FAIL).tokens());
        assertArrayEquals(a.latent(0), b.latent(0));
        assertArrayEquals(a.ropeKey(0), b.ropeKey(0));
        int[] keysPerNode = new int[3];
        for (int i = 0; i < 3; i++) keysPerNode[i] = dbsize(nodes.get(i));
        assertTrue(Arrays.stream(keysPerNode).filter(k -> k > 0).count() >= 2, "blocks on more than one node: " + Arrays.toString(keysPerNode));

        // a master gone: its slots have no node; the next batch over them is one line
        nodes.get(2).kill();
        String down = assertThrows(MlaException.class, () -> roundTrip(st)).getMessage();
        oneLineWithoutThePassword(down);
        assertTrue(down.startsWith("redis://:***@127.0.0.1:"), down);
    }

    static int dbsize(RedisServer n) throws IOException, InterruptedException {
        return Integer.parseInt(n.cli(PASSWORD, "dbsize").strip());
    }
}
