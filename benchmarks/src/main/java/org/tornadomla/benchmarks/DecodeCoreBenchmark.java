package org.tornadomla.benchmarks;

import org.tornadomla.backends.Backends;

import org.openjdk.jmh.annotations.AuxCounters;
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
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.bench.DecodeBench;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.graph.GraphExecutor;

import java.util.concurrent.TimeUnit;

/**
 * One decode step of the attention core (absorb_q … unabsorb_v over the latent cache), DeepSeek-V3 latent
 * geometry. Throughput mode, so the score is decode steps per second (ms per step = 1000 / score) and the
 * aux counters are rates: {@code gbLatent} = GB/s of latent read, {@code gflop} = GFLOP/s (docs/design.md §1.3).
 * Setup (cache fill, weights, TornadoVM plan and its compilation by one warm step) is never timed.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector", "-Xmx12g"})
@State(Scope.Benchmark)
public class DecodeCoreBenchmark {
    @Param({"16", "128"})
    public int heads;
    @Param({"1024", "4096", "16384"})
    public int context;
    @Param({"1", "8"})
    public int batch;
    @Param({"f32", "bf16"})
    public String dtype;
    @Param({"absorbed", "tiled"})
    public String path;
    @Param({"java-fast", "java-reference"})
    public String backend;

    /** The reference kernels are sequential: shapes above this many GFLOP per step are refused, not run for hours. */
    static final double REFERENCE_LIMIT_GFLOP = 5;

    DecodeBench bench;
    GraphExecutor executor;

    @Setup(Level.Trial)
    public void setup() {
        DecodeBench.Shape shape = new DecodeBench.Shape(AttentionPath.parse(path), CacheDtype.parse(dtype), batch, heads, context);
        if (backend.equals("java-reference") && DecodeBench.flops(shape) > REFERENCE_LIMIT_GFLOP * 1e9) {
            throw new IllegalStateException("java-reference on " + shape.label() + " (" + DecodeBench.flops(shape) / 1e9
                    + " GFLOP per step) would take minutes per operation: skipped");
        }
        bench = new DecodeBench(shape, 42);
        executor = Backends.create(backend);
        bench.step(executor);                 // TornadoVM compiles here, not in the measurement
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        bench.release(executor);
        executor.close();
    }

    /** Rates JMH reports per second: GB of latent read and GFLOP. */
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    @State(Scope.Thread)
    public static class Rates {
        public double gbLatent;
        public double gflop;
    }

    @Benchmark
    public void decodeStep(Rates rates) {
        bench.step(executor);
        rates.gbLatent += DecodeBench.latentBytes(bench.shape()) / 1e9;
        rates.gflop += DecodeBench.flops(bench.shape()) / 1e9;
    }
}
