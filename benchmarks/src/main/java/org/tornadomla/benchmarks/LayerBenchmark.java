package org.tornadomla.benchmarks;

import org.tornadomla.backends.Backends;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.tornadomla.attention.AttentionOptions;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.attention.MlaLayer;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.internal.Gaussians;
import org.tornadomla.weights.MlaWeights;
import org.tornadomla.weights.WeightDtype;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * The whole layer (projections, RoPE, cache append, attention, o_proj) with DeepSeek-V3's geometry
 * (hidden 7168, 128 heads, q_lora_rank 1536): one decode step over a cache of {@code context} tokens, and a
 * prefill of {@code prefill} tokens into an empty cache. {@code weights} is how the projection weights are
 * held: f32 (748 MB), bf16 (374 MB) or fp8 (187 MB, DeepSeek's 128x128-block-scaled e4m3, here the seeded
 * random weights quantised).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 2, time = 3)
@Measurement(iterations = 3, time = 3)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector", "-Xmx12g"})
@State(Scope.Benchmark)
public class LayerBenchmark {
    @Param({"1024", "4096"})
    public int context;
    @Param({"1"})
    public int batch;
    @Param({"128"})
    public int prefill;
    @Param({"f32"})
    public String dtype;
    @Param({"absorbed", "tiled"})
    public String path;
    @Param({"java-fast"})
    public String backend;
    @Param({"f32", "bf16", "fp8"})
    public String weights;

    MlaLayer layer;
    LatentCache decodeCache, prefillCache;
    AttentionOptions opt;
    float[] x1, xPrefill;

    @Setup(Level.Trial)
    public void setup() {
        MlaConfig c = MlaConfig.deepseekV3();
        layer = new MlaLayer(MlaWeights.random(c, 1).to(WeightDtype.parse(weights)), Backends.create(backend));
        opt = AttentionOptions.of(AttentionPath.parse(path));
        CacheDtype dt = CacheDtype.parse(dtype);
        SplittableRandom rnd = new SplittableRandom(2);
        decodeCache = layer.newCache(batch, context + 1, dt);
        for (int b = 0; b < batch; b++) {
            decodeCache.write(b, Gaussians.floats(rnd, context * c.kvLoraRank(), 1), Gaussians.floats(rnd, context * c.qkRopeHeadDim(), 1));
        }
        prefillCache = layer.newCache(batch, prefill, dt);
        x1 = Gaussians.floats(rnd, batch * c.hiddenSize(), 1);
        xPrefill = Gaussians.floats(rnd, batch * prefill * c.hiddenSize(), 1);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        layer.close();
    }

    /** Each decode step overwrites the last slot: the context stays {@code context} tokens. */
    @Benchmark
    public float[] decodeStep() {
        float[] y = layer.forward(decodeCache, x1, 1, opt);
        rewind(decodeCache, context);
        return y;
    }

    @Benchmark
    public float[] prefill() {
        prefillCache.clear();
        return layer.forward(prefillCache, xPrefill, prefill, opt);
    }

    private static void rewind(LatentCache cache, int length) {
        cache.truncate(length);
    }

}
