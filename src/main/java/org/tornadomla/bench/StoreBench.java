package org.tornadomla.bench;

import org.tornadomla.cache.internal.CacheStorage;
import org.tornadomla.MlaException;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.CacheIdentity;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.internal.Gaussians;
import org.tornadomla.store.BlockRows;
import org.tornadomla.store.BlockStore;
import org.tornadomla.store.LatentCacheRows;
import org.tornadomla.store.LatentStore;
import org.tornadomla.store.OnMissing;
import org.tornadomla.store.StoreOptions;
import org.tornadomla.weights.MlaWeights;

import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Push and pull throughput of the latent store ({@code mla store-bench}): one layer of DeepSeek-V3 geometry
 * (576 numbers per token) holding a sequence of seeded rows, pushed and pulled whole, after warm-up runs. A
 * push reads the cache's rows, encodes and checksums the blocks and sends them; a pull fetches, verifies and
 * writes them into an empty cache (the last pulled rows are compared with the pushed ones).
 */
public final class StoreBench {
    private StoreBench() {
    }

    /**
     * One measurement: bytes moved per transfer (values: rows, headers, checksums), median and best wall time
     * of push and pull, and the median time spent inside the store's calls (network and server).
     */
    public record Result(CacheDtype dtype, int tokens, long bytes, double pushMs, double pushBestMs, double pushStoreMs,
                         double pullMs, double pullBestMs, double pullStoreMs, int runs) {
        public double pushGbs() {
            return bytes / (pushMs * 1e6);
        }

        public double pullGbs() {
            return bytes / (pullMs * 1e6);
        }
    }

    /** Shortest warm-up (when any is asked for). */
    static final long WARM_UP_NANOS = 1_000_000_000L;

    /** The geometry measured: DeepSeek-V3's attention (d_c 512, d_r 64). */
    public static MlaConfig config() {
        return MlaConfig.deepseekV3();
    }

    public static Result measure(BlockStore blocks, CacheDtype dtype, int tokens, StoreOptions options, int warmup, int runs, long seed) {
        if (tokens < 1 || warmup < 0 || runs < 1) throw new MlaException("store bench: tokens and runs must be >= 1 and warm-up >= 0, found " + tokens + ", " + runs + ", " + warmup);
        MlaConfig c = config();
        LatentCache source = new LatentCache(c, 1, tokens, dtype);
        SplittableRandom rnd = new SplittableRandom(seed);
        source.write(0, Gaussians.floats(rnd, tokens * c.kvLoraRank(), 1), Gaussians.floats(rnd, tokens * c.qkRopeHeadDim(), 1));
        // random rows, no weights: an identity that names the seed (a push needs one; the pull gives it to the target)
        CacheStorage.of(source).bind(new CacheIdentity(c, 0, HexFormat.of().formatHex(sha256("store-bench random rows, seed " + seed))));
        LatentCache target = new LatentCache(c, 1, tokens, dtype);
        List<BlockRows> from = LatentCacheRows.of(List.of(source)), to = LatentCacheRows.of(List.of(target));
        int[] ids = new int[tokens];
        for (int i = 0; i < tokens; i++) ids[i] = rnd.nextInt(129_280);
        LatentStore store = new LatentStore(blocks, c, "store-bench " + System.nanoTime() + " seed " + seed, options);
        double[] push = new double[runs], pushStore = new double[runs], pull = new double[runs], pullStore = new double[runs];
        long bytes = 0;
        try {
            // warm-up: the runs asked for, and at least a second (C2 compiles the copy and check loops meanwhile)
            long w0 = System.nanoTime();
            for (int r = 0; r < warmup || (warmup > 0 && System.nanoTime() - w0 < WARM_UP_NANOS); r++) {
                store.push(ids, 0, from);
                target.clear();
                store.pull(ids, 0, to, OnMissing.FAIL);
            }
            for (int r = 0; r < runs; r++) {
                LatentStore.Transfer p = store.push(ids, 0, from);
                target.clear();
                LatentStore.PullResult q = store.pull(ids, 0, to, OnMissing.FAIL);
                bytes = p.bytes();
                push[r] = p.nanos() / 1e6;
                pushStore[r] = p.storeNanos() / 1e6;
                pull[r] = q.transfer().nanos() / 1e6;
                pullStore[r] = q.transfer().storeNanos() / 1e6;
            }
            if (!from.getFirst().read(0, 0, tokens).equals(to.getFirst().read(0, 0, tokens))) {
                throw new IllegalStateException("store bench: the pulled rows differ from the pushed ones");
            }
        } finally {
            store.remove(ids, dtype, 1);
        }
        return new Result(dtype, tokens, bytes, median(push), min(push), median(pushStore), median(pull), min(pull), median(pullStore), runs);
    }

    private static byte[] sha256(String s) {
        try {
            return java.security.MessageDigest.getInstance("SHA-256").digest(s.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static double median(double[] a) {
        double[] s = a.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    private static double min(double[] a) {
        return Arrays.stream(a).min().orElse(Double.NaN);
    }
}
