package org.tornadomla.store;

import org.tornadomla.cache.internal.CacheStorage;
import org.tornadomla.cache.PagedCacheSpec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.tornadomla.MlaException;
import org.tornadomla.ReferenceMla;
import org.tornadomla.TestData;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.attention.MlaLayer;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.fast.FastExecutor;
import org.tornadomla.graph.GraphExecutor;
import org.tornadomla.graph.JvmExecutor;
import org.tornadomla.weights.MlaWeights;
import redis.clients.jedis.RedisClient;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The store on a real redis-server started by the test on a free loopback port (skipped when redis-server
 * is not installed; .ci/run installs it and requires this class to have run): a prefill process's sequence
 * pulled by a decode process continues exactly as one process doing both; a second sequence reuses a shared
 * prefix; an evicted block, a damaged value, a killed or stopped server are clear errors with the cache
 * unchanged, or with RECOMPUTE a load of the blocks before the hole.
 *
 * <p>"Processes" here are separate layers, caches and store connections in one JVM; {@code PdDemoCliTest} runs
 * the decode side in a second JVM.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedisLatentStoreTest {
    final MlaConfig c = TestData.small();   // H 4, d_c 32, d_r 8, hidden 64
    static final int BLOCK = 64;
    final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable a : open.reversed()) a.close();
    }

    RedisServer server(String maxmemory) throws IOException, InterruptedException {
        RedisServer s = RedisServer.start(maxmemory);
        open.add(s);
        return s;
    }

    BlockStore connect(RedisServer s) {
        RedisBlockStore b = RedisBlockStore.connect(s.address());
        open.add(b);
        return b;
    }

    LatentStore store(BlockStore b) {
        return new LatentStore(b, c, "test-model", StoreOptions.defaults().withBlockSize(BLOCK));
    }

    RedisClient jedis(RedisServer s) {
        RedisClient j = RedisClient.create("127.0.0.1", s.port());
        open.add(j);
        return j;
    }

    // ---------------------------------------------------------------- a two-layer "model"

    /** The input vector of a token id: a fixed seeded Gaussian per id (an embedding table). */
    float[] embed(int[] ids) {
        int d = c.hiddenSize();
        float[] x = new float[ids.length * d];
        for (int t = 0; t < ids.length; t++) {
            float[] e = TestData.gaussian(1_000_003L * ids[t] + 17, d);
            System.arraycopy(e, 0, x, t * d, d);
        }
        return x;
    }

    /** One process's layers (its own objects; the same seeded weights in every process) and its caches. */
    final class Model {
        final List<MlaLayer> layers = new ArrayList<>();
        final List<LatentCache> caches = new ArrayList<>();
        final AttentionPath path;

        Model(int n, CacheDtype dt, int capacity, AttentionPath path, Supplier<GraphExecutor> executor) {
            this(n, dt, capacity, path, executor, 0);
        }

        /** pagedBlock > 0: paged caches of blocks of that many tokens, handed out in a shuffled order. */
        Model(int n, CacheDtype dt, int capacity, AttentionPath path, Supplier<GraphExecutor> executor, int pagedBlock) {
            this.path = path;
            for (int l = 0; l < n; l++) {
                MlaLayer layer = new MlaLayer(MlaWeights.random(c, 40 + l, l), executor.get());
                layers.add(layer);
                if (pagedBlock > 0) {
                    LatentCache cache = layer.newPagedCache(PagedCacheSpec.builder().maxSequences(1).maxSequenceLength(capacity).numBlocks(2 * ((capacity + pagedBlock - 1) / pagedBlock)).blockSize(pagedBlock).dtype(dt).build());
                    CacheStorage.of(cache).shuffleFreeBlocks(l + 1);
                    cache.addSequence();
                    caches.add(cache);
                } else {
                    caches.add(layer.newCache(1, capacity, dt));
                }
            }
        }

        /** The input through every layer (layer l's output is layer l+1's input); the last layer's output. */
        float[] forward(float[] x, int tokens) {
            for (int l = 0; l < layers.size(); l++) x = layers.get(l).prefill(caches.get(l), x, tokens, path);
            return x;
        }

        float[] decode(int id) {
            return forward(embed(new int[] {id}), 1);
        }

        List<BlockRows> rows() {
            return LatentCacheRows.of(caches);
        }
    }

    static int[] ids(long seed, int n) {
        return BlockKeysTest.tokens(seed, n);
    }

    // ---------------------------------------------------------------- handoff

    private void handoff(CacheDtype dt, AttentionPath path, Supplier<GraphExecutor> executor, boolean exact) throws Exception {
        RedisServer s = server("256mb");
        int n = 150, steps = 3;   // two full blocks and a partial one of 22
        int[] prompt = ids(1, n), next = ids(2, steps);
        // prefill process: prefill, push, then decode on as one process doing both would (the reference)
        Model prefill = new Model(2, dt, n + steps, path, executor);
        prefill.forward(embed(prompt), n);
        LatentStore.Transfer pushed = store(connect(s)).push(prompt, 0, prefill.rows());
        assertEquals(2 * 3, pushed.blocks());
        float[][] single = new float[steps][];
        for (int k = 0; k < steps; k++) single[k] = prefill.decode(next[k]);
        // decode process: its own layers, connection and paged caches (blocks of 16 in shuffled order, so the
        // store's blocks of 64 land in scattered pages)
        Model decode = new Model(2, dt, n + steps, path, executor, 16);
        LatentStore.PullResult r = store(connect(s)).pull(prompt, 0, decode.rows(), OnMissing.FAIL);
        assertEquals(n, r.tokens());
        assertEquals(pushed.bytes(), r.transfer().bytes());
        for (int k = 0; k < steps; k++) {
            float[] y = decode.decode(next[k]);
            if (exact) {
                // the sequential reference kernels over the same cache bits: identical outputs (tolerance 0)
                assertArrayEquals(single[k], y, dt + " " + path + " step " + k);
            } else {
                // java-fast sums vector lanes (reduceLanes(ADD)) in an unspecified order, which changes once C2 compiles
                // a loop: a warm and a cold run may differ in the last bits, so 1e-5 of the largest magnitude
                double scale = 1;
                for (float v : single[k]) scale = Math.max(scale, Math.abs(v));
                assertTrue(TestData.maxAbsDiff(single[k], y) <= 1e-5 * scale, dt + " " + path + " step " + k);
            }
        }
    }

    @Test
    void aDecodeProcessContinuesExactlyAsOneProcessWould() throws Exception {
        for (CacheDtype dt : CacheDtype.values()) handoff(dt, AttentionPath.TILED, JvmExecutor::new, true);
        handoff(CacheDtype.FP8, AttentionPath.ABSORBED, () -> new FastExecutor(2), false);
    }

    @Test
    void thePulledCacheIsTheLayersOwnCacheByAnIndependentReference() throws Exception {
        // layer 0 alone, f32 cache: decode outputs after a pull against a float64 prefill of the whole sequence
        RedisServer s = server("64mb");
        int n = 70, steps = 2;
        int[] ids = ids(3, n + steps);
        int[] prompt = Arrays.copyOf(ids, n);
        MlaWeights w = MlaWeights.random(c, 40);
        MlaLayer a = new MlaLayer(w);
        LatentCache ca = a.newCache(1, n, CacheDtype.F32);
        a.prefill(ca, embed(prompt), n, AttentionPath.ABSORBED);
        store(connect(s)).push(prompt, 0, LatentCacheRows.of(List.of(ca)));
        MlaLayer b = new MlaLayer(MlaWeights.random(c, 40));
        LatentCache cb = b.newCache(1, n + steps, CacheDtype.F32);
        assertEquals(n, store(connect(s)).pull(prompt, 0, LatentCacheRows.of(List.of(cb)), OnMissing.FAIL).tokens());
        ReferenceMla.Result ref = ReferenceMla.prefill(w, embed(ids), n + steps, false);
        int d = c.hiddenSize();
        for (int k = 0; k < steps; k++) {
            float[] y = b.decode(cb, embed(new int[] {ids[n + k]}), AttentionPath.TILED);
            double[] want = Arrays.copyOfRange(ref.y(), (n + k) * d, (n + k + 1) * d);
            TestData.assertClose(want, y, 1e-4, "decode step " + k + " after a pull, against the float64 layer");
        }
    }

    // ---------------------------------------------------------------- prefix reuse

    @Test
    void aSecondSequenceReusesTheSharedFullBlocks() throws Exception {
        RedisServer s = server("256mb");
        int n = 200, shared = 2 * BLOCK + 10, steps = 2;
        int[] first = ids(4, n);
        int[] second = ids(5, n);
        System.arraycopy(first, 0, second, 0, shared);   // 138 tokens in common: blocks 0 and 1 are shared
        int[] next = ids(6, steps);
        Model a = new Model(2, CacheDtype.BF16, n, AttentionPath.ABSORBED, JvmExecutor::new);
        a.forward(embed(first), n);
        store(connect(s)).push(first, 0, a.rows());

        LatentStore other = store(connect(s));
        assertEquals(2 * BLOCK, other.longestPrefix(second, CacheDtype.BF16, 2));
        Model b = new Model(2, CacheDtype.BF16, n + steps, AttentionPath.ABSORBED, JvmExecutor::new);
        LatentStore.PullResult r = other.pull(second, 0, b.rows(), OnMissing.RECOMPUTE);
        assertEquals(2 * BLOCK, r.tokens(), "tokens skipped");
        assertTrue(r.stopped().contains("block 2 (tokens 128 … 191) of layer 0") && r.stopped().contains("missing"), r.stopped());
        float[] rest = b.forward(embed(Arrays.copyOfRange(second, 2 * BLOCK, n)), n - 2 * BLOCK);

        // one process computing the second sequence itself, in the same two chunks
        Model single = new Model(2, CacheDtype.BF16, n + steps, AttentionPath.ABSORBED, JvmExecutor::new);
        single.forward(embed(Arrays.copyOf(second, 2 * BLOCK)), 2 * BLOCK);
        assertArrayEquals(single.forward(embed(Arrays.copyOfRange(second, 2 * BLOCK, n)), n - 2 * BLOCK), rest,
                "the computed rest of the sequence (tolerance 0: same rows, same kernels)");
        for (int k = 0; k < steps; k++) assertArrayEquals(single.decode(next[k]), b.decode(next[k]), "decode step " + k);
        // and against one prefill of the whole sequence (other chunking: float rounding may differ)
        Model whole = new Model(2, CacheDtype.BF16, n, AttentionPath.ABSORBED, JvmExecutor::new);
        float[] all = whole.forward(embed(second), n);
        float[] tail = Arrays.copyOfRange(all, 2 * BLOCK * c.hiddenSize(), all.length);
        double scale = 0;
        for (float v : tail) scale = Math.max(scale, Math.abs(v));
        assertTrue(TestData.maxAbsDiff(tail, rest) <= 1e-5 * Math.max(1, scale), "within 1e-5 of the unchunked prefill");
    }

    // ---------------------------------------------------------------- failures

    @Test
    void aBlockEvictedMidSequence() throws Exception {
        RedisServer s = server("64mb");
        int n = 300;
        int[] ids = ids(7, n);
        Model a = new Model(2, CacheDtype.FP8, n, AttentionPath.ABSORBED, JvmExecutor::new);
        a.forward(embed(ids), n);
        LatentStore st = store(connect(s));
        st.push(ids, 0, a.rows());
        String key = st.keys(CacheDtype.FP8).chain(ids, 1).get(2).name();
        assertEquals(1, jedis(s).del(key));

        Model b = new Model(2, CacheDtype.FP8, n, AttentionPath.ABSORBED, JvmExecutor::new);
        String m = assertThrows(MlaException.class, () -> st.pull(ids, 0, b.rows(), OnMissing.FAIL)).getMessage();
        assertEquals(s.uri() + ": block 2 (tokens 128 … 191) of layer 1 (key " + key + ") is missing (never pushed, expired or evicted); nothing was loaded", m);
        for (LatentCache cache : b.caches) assertEquals(0, cache.length(0), "cache unchanged");

        LatentStore.PullResult r = st.pull(ids, 0, b.rows(), OnMissing.RECOMPUTE);
        assertEquals(2 * BLOCK, r.tokens(), "only the prefix before the hole, in both layers");
        for (int l = 0; l < 2; l++) {
            assertEquals(new LatentCacheRows(a.caches.get(l)).read(0, 0, 2 * BLOCK), new LatentCacheRows(b.caches.get(l)).read(0, 0, 2 * BLOCK));
        }
    }

    @Test
    void blocksEvictedByTheServersLruPolicy() throws Exception {
        RedisServer s = server("3mb");   // allkeys-lru: the oldest blocks go first
        MlaConfig v3 = MlaConfig.deepseekV3();
        LatentCache cache = new LatentCache(v3, 1, 4096, CacheDtype.F32);
        cache.write(0, TestData.gaussian(8, 4096 * 512), TestData.gaussian(9, 4096 * 64));   // 9.4 MB of rows
        cache.bind(RAW.apply(v3));
        int[] ids = ids(10, 4096);
        LatentStore st = new LatentStore(connect(s), v3, "test-model", StoreOptions.defaults());
        st.push(ids, 0, LatentCacheRows.of(List.of(cache)));
        int have = st.longestPrefix(ids, CacheDtype.F32, 1);
        assertEquals(0, have, "block 0 was evicted first");
        LatentCache target = new LatentCache(v3, 1, 4096, CacheDtype.F32);
        assertTrue(assertThrows(MlaException.class, () -> st.pull(ids, 0, LatentCacheRows.of(List.of(target)), OnMissing.FAIL))
                .getMessage().contains("block 0 (tokens 0 … 63) of layer 0"));
        assertEquals(0, st.pull(ids, 0, LatentCacheRows.of(List.of(target)), OnMissing.RECOMPUTE).tokens());
        assertEquals(0, target.length(0));
    }

    @Test
    void aCorruptedValueIsAChecksumErrorNamingItsKey() throws Exception {
        RedisServer s = server("64mb");
        int n = 130;
        int[] ids = ids(11, n);
        Model a = new Model(2, CacheDtype.BF16, n, AttentionPath.ABSORBED, JvmExecutor::new);
        a.forward(embed(ids), n);
        LatentStore st = store(connect(s));
        st.push(ids, 0, a.rows());
        String key = st.keys(CacheDtype.BF16).chain(ids, 0).get(1).name();
        jedis(s).setrange(key.getBytes(StandardCharsets.UTF_8), 500, new byte[] {(byte) 0xA5});
        Model b = new Model(2, CacheDtype.BF16, n, AttentionPath.ABSORBED, JvmExecutor::new);
        String m = assertThrows(MlaException.class, () -> st.pull(ids, 0, b.rows(), OnMissing.FAIL)).getMessage();
        assertTrue(m.startsWith(s.uri() + ": block 1 (tokens 64 … 127) of layer 0 (key " + key + "): damaged: its bytes have CRC32C "), m);
        assertTrue(m.endsWith("; nothing was loaded"), m);
        for (LatentCache cache : b.caches) assertEquals(0, cache.length(0), "cache unchanged");
        assertEquals(BLOCK, st.pull(ids, 0, b.rows(), OnMissing.RECOMPUTE).tokens());
    }

    /** A store that kills the server during its {@code at}-th batch (from another thread, while the batch is on the wire). */
    static final class Killing implements BlockStore {
        final BlockStore inner;
        final RedisServer server;
        final int at;
        int calls;

        Killing(BlockStore inner, RedisServer server, int at) {
            this.inner = inner;
            this.server = server;
            this.at = at;
        }

        private void maybeKill() {
            if (++calls == at) {
                Thread.ofPlatform().start(() -> {
                    try {
                        server.kill();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
            }
        }

        @Override
        public String address() {
            return inner.address();
        }

        @Override
        public boolean[] exist(List<String> keys) {
            return inner.exist(keys);
        }

        @Override
        public List<byte[]> get(List<String> keys) {
            maybeKill();
            return inner.get(keys);
        }

        @Override
        public void put(List<String> keys, List<byte[]> values, long ttlMillis) {
            maybeKill();
            inner.put(keys, values, ttlMillis);
        }

        @Override
        public void delete(List<String> keys) {
            inner.delete(keys);
        }

        @Override
        public void close() {
            inner.close();
        }
    }

    /** The identity of layer 0 of a config for rows written directly (no weights made them: any 64 hex digits name them). */
    static final java.util.function.Function<MlaConfig, org.tornadomla.cache.CacheIdentity> RAW =
            cfg -> new org.tornadomla.cache.CacheIdentity(cfg, 0, "ab".repeat(32));

    /** One layer of DeepSeek-V3 geometry, 16k tokens of f32: 37.7 MB, about ten batches. */
    LatentCache large() {
        MlaConfig v3 = MlaConfig.deepseekV3();
        LatentCache cache = new LatentCache(v3, 1, 16384, CacheDtype.F32);
        cache.write(0, TestData.gaussian(12, 16384 * 512), TestData.gaussian(13, 16384 * 64));
        cache.bind(RAW.apply(v3));
        return cache;
    }

    private static void oneLineNaming(String m, RedisServer s) {
        assertEquals(1, m.lines().count(), m);
        assertTrue(m.startsWith(s.uri() + ": "), m);
        assertTrue(m.contains("the server closed the connection") || m.contains("connection refused") || m.contains("connection lost"), m);
    }

    @Test
    void theServerKilledMidPull() throws Exception {
        RedisServer s = server("512mb");
        LatentCache src = large();
        int[] ids = ids(14, 16384);
        MlaConfig v3 = MlaConfig.deepseekV3();
        new LatentStore(connect(s), v3, "test-model", StoreOptions.defaults()).push(ids, 0, LatentCacheRows.of(List.of(src)));
        LatentStore st = new LatentStore(new Killing(connect(s), s, 3), v3, "test-model", StoreOptions.defaults());
        LatentCache target = new LatentCache(v3, 1, 16384, CacheDtype.F32);
        String m = assertThrows(MlaException.class, () -> st.pull(ids, 0, LatentCacheRows.of(List.of(target)), OnMissing.FAIL)).getMessage();
        oneLineNaming(m, s);
        assertTrue(m.contains("GET of ") && m.endsWith("; nothing was loaded"), m);
        assertEquals(0, target.length(0), "cache unchanged");
        // the server stays down: RECOMPUTE loads nothing and says why
        LatentStore.PullResult r = st.pull(ids, 0, LatentCacheRows.of(List.of(target)), OnMissing.RECOMPUTE);
        assertEquals(0, r.tokens());
        assertTrue(r.stopped().startsWith(s.uri() + ": EXISTS of 256 keys failed: "), r.stopped());
        assertEquals(0, target.length(0));
    }

    @Test
    void theServerKilledMidPush() throws Exception {
        RedisServer s = server("512mb");
        LatentCache src = large();
        LatentStore st = new LatentStore(new Killing(connect(s), s, 2), MlaConfig.deepseekV3(), "test-model", StoreOptions.defaults());
        float[] before = src.latent(0);
        String m = assertThrows(MlaException.class, () -> st.push(ids(15, 16384), 0, LatentCacheRows.of(List.of(src)))).getMessage();
        oneLineNaming(m, s);
        assertTrue(m.contains("SET of ") && m.contains("of 256 blocks stored before"), m);
        assertArrayEquals(before, src.latent(0), "the pushed cache is only read");
    }

    @Test
    void aStoppedServerIsATimeoutAndAnAbsentOneConnectionRefused() throws Exception {
        RedisServer s = server("16mb");
        s.pause(true);
        try {
            String m = assertThrows(MlaException.class, () -> RedisBlockStore.connect(s.address(), Duration.ofMillis(500), Duration.ofMillis(300)))
                    .getMessage();
            assertEquals(s.uri() + ": cannot reach the server: no reply within the socket timeout of 300 ms", m);
        } finally {
            s.pause(false);
        }
        int port = RedisServer.freePort();
        String m = assertThrows(MlaException.class, () -> RedisBlockStore.connect(new StoreAddress("127.0.0.1", port))).getMessage();
        assertEquals("redis://127.0.0.1:" + port + ": cannot reach the server: connection refused (is the server running and listening there?)", m);
    }

    @Test
    void blocksExpireAfterTheirTtl() throws Exception {
        RedisServer s = server("16mb");
        LatentCache cache = new LatentCache(c, 1, 10, CacheDtype.BF16);
        cache.write(0, TestData.gaussian(1, 10 * 32), TestData.gaussian(2, 10 * 8));
        cache.bind(RAW.apply(c));
        int[] ids = ids(16, 10);
        LatentStore st = new LatentStore(connect(s), c, "m", StoreOptions.defaults().withBlockSize(4).withTtl(Duration.ofSeconds(30)));
        st.push(ids, 0, LatentCacheRows.of(List.of(cache)));
        for (BlockKeys.Key k : st.keys(CacheDtype.BF16).chain(ids, 0)) {
            long ttl = jedis(s).pttl(k.name());
            assertTrue(ttl > 0 && ttl <= 30_000, k + ": " + ttl + " ms");
        }
        LatentStore forever = new LatentStore(connect(s), c, "m2", StoreOptions.defaults().withBlockSize(4).withTtl(Duration.ZERO));
        forever.push(ids, 0, LatentCacheRows.of(List.of(cache)));
        assertEquals(-1, jedis(s).pttl(forever.keys(CacheDtype.BF16).chain(ids, 0).get(0).name()), "no expiry");
    }
}
