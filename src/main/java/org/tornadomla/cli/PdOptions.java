package org.tornadomla.cli;

import org.tornadomla.internal.Gaussians;
import org.tornadomla.internal.Messages;
import org.tornadomla.cache.PagedCacheSpec;
import org.tornadomla.MlaException;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.attention.MlaLayer;
import org.tornadomla.backends.Backends;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.IndexerConfig;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.store.LatentStore;
import org.tornadomla.store.RedisBlockStore;
import org.tornadomla.store.StoreAddress;
import org.tornadomla.store.StoreOptions;
import org.tornadomla.weights.MlaWeights;
import picocli.CommandLine.Option;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * What the prefill and the decode process of {@code pd-demo} must agree on: the model (config, seeded weights,
 * layers), the cache dtype, the backend and the store. The prefill process hands its values to the decode
 * process as options ({@link #args}); the token ids go over the decode process's stdin.
 */
public final class PdOptions {
    @Option(names = "--store", description = "the Redis store: redis://[USER:PASSWORD@]HOST:PORT, rediss://… for TLS (trust store: "
            + "-Djavax.net.ssl.trustStore in MLA_JAVA_OPTS), or a comma-separated list of a Redis Cluster's seeds; default: $MLA_STORE, "
            + "which keeps a password out of the process list")
    String store;

    @Option(names = "--tokens", defaultValue = "200", description = "prompt tokens prefilled and handed over (default: ${DEFAULT-VALUE})")
    int tokens;

    @Option(names = "--steps", defaultValue = "8", description = "decode steps in the decode process (default: ${DEFAULT-VALUE})")
    int steps;

    @Option(names = "--dtype", defaultValue = "bf16", description = "latent cache dtype: f32, bf16, int8 or fp8 (default: ${DEFAULT-VALUE})")
    String dtype;

    @Option(names = "--layers", defaultValue = "2", description = "MLA layers, each feeding the next (default: ${DEFAULT-VALUE})")
    int layers;

    @Option(names = "--heads", defaultValue = "16", description = "attention heads (default: ${DEFAULT-VALUE}; DeepSeek-V3 has 128)")
    int heads;

    @Option(names = "--hidden", defaultValue = "1024", description = "hidden size (default: ${DEFAULT-VALUE}; DeepSeek-V3 has 7168)")
    int hidden;

    @Option(names = "--block-size", defaultValue = "" + StoreOptions.DEFAULT_BLOCK, description = "tokens per stored block (default: ${DEFAULT-VALUE})")
    int blockSize;

    @Option(names = "--seed", defaultValue = "42", description = "seed of the weights, token ids and embeddings (default: ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--backend", defaultValue = "java-reference", description = "java-reference or java-fast, the same in both processes (default: ${DEFAULT-VALUE})")
    String backend;

    @Option(names = "--path", defaultValue = "tiled", description = "attention path: naive, absorbed or tiled (default: ${DEFAULT-VALUE})")
    String path;

    @Option(names = "--connect-timeout-ms", defaultValue = "2000", description = "time to connect to the store (default: ${DEFAULT-VALUE})")
    int connectTimeoutMs;

    @Option(names = "--timeout-ms", defaultValue = "10000", description = "time to wait for a reply of the store (default: ${DEFAULT-VALUE})")
    int timeoutMs;

    @Option(names = "--ttl-s", defaultValue = "600", description = "seconds the pushed blocks live in the store, 0 for ever (default: ${DEFAULT-VALUE})")
    long ttlSeconds;

    @Option(names = "--index-topk", description = "a sparse layer (DeepSeek-V3.2's DSA): its lightning indexer (64 heads x 128, ue8m0 FP8 keys) "
            + "keeps the top N positions (V3.2: 2048; below --tokens the selection matters); the indexer's keys travel with the latent "
            + "(132 B per token and layer); default: dense MLA")
    Integer indexTopK;

    /** The options again, for the decode process. */
    List<String> args() {
        List<String> base = List.of("--tokens", "" + tokens, "--steps", "" + steps, "--dtype", dtype, "--layers", "" + layers,
                "--heads", "" + heads, "--hidden", "" + hidden, "--block-size", "" + blockSize, "--seed", "" + seed, "--backend", backend,
                "--path", path, "--connect-timeout-ms", "" + connectTimeoutMs, "--timeout-ms", "" + timeoutMs, "--ttl-s", "" + ttlSeconds);
        if (indexTopK == null) return base;
        List<String> out = new ArrayList<>(base);
        out.addAll(List.of("--index-topk", "" + indexTopK));
        return out;
    }

    private static void atLeastOne(String option, long value) {
        if (value < 1) throw new MlaException(option + " must be >= 1, found " + value);
    }

    /** Checks every option before anything is computed or connected. */
    void check() {
        atLeastOne("--tokens", tokens);
        atLeastOne("--steps", steps);
        atLeastOne("--heads", heads);
        atLeastOne("--hidden", hidden);
        if (layers < 1 || layers > 128) throw new MlaException("--layers must be in 1 … 128, found " + layers);
        if (heads > 128 || hidden > 7168) throw new MlaException("--heads at most 128 and --hidden at most 7168 (DeepSeek-V3's), found " + heads + ", " + hidden);
        if ((long) tokens + steps > config().maxPositionEmbeddings()) {
            throw new MlaException("--tokens " + tokens + " and --steps " + steps + " reach past max_position_embeddings " + config().maxPositionEmbeddings());
        }
        if (!backend.equals("java-reference") && !backend.equals("java") && !backend.matches("java-fast(:[0-9]+)?")) {
            throw new MlaException("--backend " + Messages.quote(backend) + ": pd-demo runs java-reference or java-fast in both processes");
        }
        if (indexTopK != null) atLeastOne("--index-topk", indexTopK);
        atLeastOne("--connect-timeout-ms", connectTimeoutMs);
        atLeastOne("--timeout-ms", timeoutMs);
        if (ttlSeconds < 0) throw new MlaException("--ttl-s must be >= 0 (0: no expiry), found " + ttlSeconds);
        cacheDtype();
        attentionPath();
        storeOptions();
        address();
    }

    /** --store, else $MLA_STORE (the decode process gets it there: an address with a password stays out of its command line). */
    String storeUri() {
        return storeUri(store);
    }

    /** {@code store}, else $MLA_STORE; refused in one line when neither is set (pd-demo, pd-decode, store-bench). */
    static String storeUri(String store) {
        String uri = store != null ? store : System.getenv(STORE_ENV);
        if (uri == null || uri.isBlank()) throw new MlaException("no store: give --store redis://HOST:PORT (or set " + STORE_ENV + ")");
        return uri;
    }

    StoreAddress address() {
        return StoreAddress.parse(storeUri());
    }

    /** The environment variable that holds the store's address when --store is not given. */
    static final String STORE_ENV = "MLA_STORE";

    /**
     * DeepSeek-V3's attention geometry (kv_lora_rank 512, rope 64, q_lora_rank 1536, d_n 128, d_v 128) with fewer heads and a smaller hidden
     * size; with --index-topk, DeepSeek-V3.2's indexer on top (sparse attention).
     */
    MlaConfig config() {
        MlaConfig c = MlaConfig.deepseekV3().withHeads(heads).withHiddenSize(hidden);
        if (indexTopK == null) return c;
        IndexerConfig v32 = IndexerConfig.deepseekV32();
        return c.withIndexer(new IndexerConfig(v32.nHeads(), v32.headDim(), indexTopK, v32.ue8m0(), v32.ropeInterleaved()));
    }

    CacheDtype cacheDtype() {
        return CacheDtype.parse(dtype);
    }

    AttentionPath attentionPath() {
        return AttentionPath.parse(path);
    }

    StoreOptions storeOptions() {
        return StoreOptions.defaults().withBlockSize(blockSize).withTtl(Duration.ofSeconds(ttlSeconds));
    }

    /** Names the weights in the block keys: only processes with the same seeded weights share blocks. */
    String model() {
        return "pd-demo random weights, seed " + seed;
    }

    RedisBlockStore connect() {
        return RedisBlockStore.connect(address(), Duration.ofMillis(connectTimeoutMs), Duration.ofMillis(timeoutMs));
    }

    LatentStore latentStore(RedisBlockStore s) {
        return new LatentStore(s, config(), model(), storeOptions());
    }

    /** Layer l's weights are MlaWeights.random(config, seed + l, l): the same in every process. */
    List<MlaLayer> layers() {
        MlaConfig c = config();
        List<MlaLayer> out = new ArrayList<>();
        for (int l = 0; l < layers; l++) out.add(new MlaLayer(MlaWeights.random(c, seed + l, l), Backends.create(backend)));
        return out;
    }

    static List<LatentCache> caches(List<MlaLayer> layers, int capacity, CacheDtype dtype) {
        return layers.stream().map(l -> l.newCache(1, capacity, dtype)).toList();
    }

    /**
     * The decode process's caches: paged, as a serving engine's would be (blocks of the store's block size, just
     * enough of them for one sequence of {@code capacity} tokens), with that one sequence added.
     */
    List<LatentCache> pagedCaches(List<MlaLayer> layers, int capacity, CacheDtype dtype) {
        int blocks = (capacity + blockSize - 1) / blockSize;
        return layers.stream().map(l -> {
            LatentCache c = l.newPagedCache(PagedCacheSpec.builder().maxSequences(1).maxSequenceLength(capacity).numBlocks(blocks).blockSize(blockSize).dtype(dtype).build());
            c.addSequence();
            return c;
        }).toList();
    }

    /** Input vectors of token ids: one seeded Gaussian vector per id (an embedding table nobody stores). */
    float[] embed(int[] ids) {
        float[] x = new float[ids.length * hidden];
        for (int t = 0; t < ids.length; t++) {
            float[] e = Gaussians.floats(new SplittableRandom(seed * 0x9E3779B97F4A7C15L + ids[t]), hidden, 1);
            System.arraycopy(e, 0, x, t * hidden, hidden);
        }
        return x;
    }

    /** Seeded token ids below DeepSeek-V3's vocabulary size (129,280): stand-ins for a tokenizer's output. */
    static int[] tokenIds(long seed, int n) {
        SplittableRandom r = new SplittableRandom(seed);
        int[] ids = new int[n];
        for (int i = 0; i < n; i++) ids[i] = r.nextInt(129_280);
        return ids;
    }

    /** Every layer on the input, each feeding the next; the last layer's output. */
    float[] forward(List<MlaLayer> ls, List<LatentCache> caches, float[] x, int n) {
        AttentionPath p = attentionPath();
        for (int l = 0; l < ls.size(); l++) x = ls.get(l).prefill(caches.get(l), x, n, p);
        return x;
    }
}
