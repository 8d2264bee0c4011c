package org.tornadomla.cli;

import org.tornadomla.MlaException;
import org.tornadomla.bench.StoreBench;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.store.BlockValue;
import org.tornadomla.store.RedisBlockStore;
import org.tornadomla.store.StoreAddress;
import org.tornadomla.store.StoreOptions;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;

/** Push and pull GB/s of the Redis latent store for a few sequence lengths and cache dtypes (see {@link StoreBench}). */
@Command(name = "store-bench", mixinStandardHelpOptions = true,
        description = "Push and pull throughput of the Redis latent-cache store: one layer of DeepSeek-V3 geometry (576 numbers per token), "
                + "whole sequences, per cache dtype, after warm-up runs; median of the timed runs. The server needs room for one "
                + "sequence (32k tokens of f32: 76 MB). Removes its keys afterwards.")
public final class StoreBenchCommand implements Callable<Integer> {
    @Option(names = "--store", description = "the Redis store: redis://[USER:PASSWORD@]HOST:PORT, rediss://… for TLS, or a comma-separated list "
            + "of a Redis Cluster's seeds; default: $MLA_STORE")
    String store;

    @Option(names = "--tokens", split = ",", defaultValue = "4096,32768", description = "sequence lengths (default: ${DEFAULT-VALUE})")
    List<Integer> tokens;

    @Option(names = "--dtype", split = ",", defaultValue = "f32,bf16,fp8", description = "cache dtypes: f32, bf16, int8, fp8 (default: ${DEFAULT-VALUE})")
    List<String> dtypes;

    @Option(names = "--warmup", defaultValue = "3", description = "untimed push-and-pull runs first, and at least 1 s of them unless 0 (default: ${DEFAULT-VALUE})")
    int warmup;

    @Option(names = "--runs", defaultValue = "5", description = "timed runs (default: ${DEFAULT-VALUE})")
    int runs;

    @Option(names = "--block-size", defaultValue = "" + StoreOptions.DEFAULT_BLOCK, description = "tokens per block (default: ${DEFAULT-VALUE})")
    int blockSize;

    @Option(names = "--chunk-kb", defaultValue = "" + (StoreOptions.DEFAULT_CHUNK >> 10), description = "KiB of values per round trip (default: ${DEFAULT-VALUE})")
    int chunkKb;

    @Option(names = "--connect-timeout-ms", defaultValue = "2000", description = "time to connect (default: ${DEFAULT-VALUE})")
    int connectTimeoutMs;

    @Option(names = "--timeout-ms", defaultValue = "10000", description = "time to wait for a reply (default: ${DEFAULT-VALUE})")
    int timeoutMs;

    @Option(names = "--seed", defaultValue = "42", description = "seed of the rows and token ids (default: ${DEFAULT-VALUE})")
    long seed;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    /** The header's words for the warm-up: none for --warmup 0, else the runs and the second they last at least. */
    static String warmUpWords(int warmup) {
        return warmup == 0 ? "no warm-up" : warmup + " or more warm-up push+pull (at least 1 s)";
    }

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        for (int t : tokens) if (t < 1 || t > 1 << 20) throw new MlaException("--tokens must be in 1 … " + (1 << 20) + ", found " + t);
        if (warmup < 0 || runs < 1 || chunkKb < 1 || chunkKb > 1 << 20) {
            throw new MlaException("--warmup must be >= 0, --runs >= 1 and --chunk-kb in 1 … " + (1 << 20) + ", found " + warmup + ", " + runs + ", " + chunkKb);
        }
        List<CacheDtype> dts = dtypes.stream().map(CacheDtype::parse).toList();
        StoreOptions options = StoreOptions.defaults().withBlockSize(blockSize).withChunkBytes(chunkKb << 10);
        StoreAddress address = StoreAddress.parse(PdOptions.storeUri(store));
        if (connectTimeoutMs < 1 || timeoutMs < 1) throw new MlaException("--connect-timeout-ms and --timeout-ms must be >= 1, found " + connectTimeoutMs + ", " + timeoutMs);
        try (RedisBlockStore redis = RedisBlockStore.connect(address, Duration.ofMillis(connectTimeoutMs), Duration.ofMillis(timeoutMs))) {
            MlaConfig c = StoreBench.config();
            out.printf("store-bench: one layer of DeepSeek-V3 geometry (%d + %d numbers per token), blocks of %d tokens, %,d KiB per round trip, %s%n",
                    c.kvLoraRank(), c.qkRopeHeadDim(), blockSize, chunkKb, redis.address());
            out.printf("each row: %s, then the median of %d timed runs (best in brackets); GB/s = 10^9 bytes of values "
                    + "(rows + %d B per block) per second of the whole call; 'wire' = per second spent in the store's calls (network and server)%n%n",
                    warmUpWords(warmup), runs, BlockValue.HEADER + BlockValue.TRAILER);
            out.printf("%-5s %7s %8s %9s %14s %9s %9s %14s %9s %9s%n", "dtype", "tokens", "B/token", "MB moved",
                    "push ms", "push GB/s", "wire GB/s", "pull ms", "pull GB/s", "wire GB/s");
            out.flush();
            for (CacheDtype dt : dts) {
                for (int t : tokens) {
                    StoreBench.Result r = StoreBench.measure(redis, dt, t, options, warmup, runs, seed);
                    out.printf("%-5s %7d %8d %9.1f %14s %9.2f %9.2f %14s %9.2f %9.2f%n", dt, t, dt.bytesPerToken(c.kvLoraRank(), c.qkRopeHeadDim()),
                            r.bytes() / 1e6, String.format("%.1f (%.1f)", r.pushMs(), r.pushBestMs()), r.pushGbs(), r.bytes() / (r.pushStoreMs() * 1e6),
                            String.format("%.1f (%.1f)", r.pullMs(), r.pullBestMs()), r.pullGbs(), r.bytes() / (r.pullStoreMs() * 1e6));
                    out.flush();
                }
            }
        }
        return 0;
    }
}
