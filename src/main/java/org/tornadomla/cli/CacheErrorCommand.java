package org.tornadomla.cli;

import org.tornadomla.MlaException;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.bench.DecodeBench;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.fast.FastExecutor;
import org.tornadomla.graph.GraphExecutor;
import org.tornadomla.graph.JvmExecutor;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintWriter;
import java.util.concurrent.Callable;

/** What each cache dtype costs in accuracy: the attention output over a quantised cache against an f32 cache. */
@Command(name = "cache-error", mixinStandardHelpOptions = true,
        description = "Bytes per token and attention-output error of each cache dtype against an f32 cache, for one decode "
                + "step of the attention core over random and over structured (low-rank, outlier channels, noise) latents.")
public final class CacheErrorCommand implements Callable<Integer> {
    @Option(names = "--heads", defaultValue = "16", description = "heads (default: ${DEFAULT-VALUE})")
    int heads;

    @Option(names = "--context", defaultValue = "1024", description = "cached tokens (default: ${DEFAULT-VALUE})")
    int context;

    @Option(names = "--seeds", defaultValue = "3", description = "random draws per latent kind (default: ${DEFAULT-VALUE})")
    int seeds;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        if (heads < 1 || context < 1 || seeds < 1 || seeds > 1000) {
            throw new MlaException("--heads and --context must be >= 1 and --seeds in 1 … 1000, found " + heads + ", " + context + ", " + seeds);
        }
        // one thread: java-fast's sums then go in one order in every step, so the f32 cache against itself gives 0 (or
        // about 1e-7 where the JIT recompiled a kernel between the two steps: its tiers add a vector's lanes in other
        // orders) and each dtype's error is its rounding; on two threads the values' runs go to whichever thread is
        // free, and the f32 rows read up to 3e-6
        try (GraphExecutor ex = FastExecutor.available() ? new FastExecutor(1) : new JvmExecutor()) {
            report(out, ex);
        }
        return 0;
    }

    private void report(PrintWriter out, GraphExecutor ex) {
        MlaConfig v3 = MlaConfig.deepseekV3();
        out.printf("attention core, DeepSeek-V3 latent, H=%d, T=%d, absorbed path, %d draws; error of o against an f32 cache%n", heads, context, seeds);
        out.printf("%-11s %-6s %14s %14s %14s%n", "latent", "dtype", "bytes/token", "max |Δ|", "rel. RMS");
        for (boolean structured : new boolean[] {false, true}) {
            for (CacheDtype dt : CacheDtype.values()) {
                double maxAbs = 0, se = 0, ss = 0;
                for (int seed = 0; seed < seeds; seed++) {
                    float[] ref = new DecodeBench(new DecodeBench.Shape(AttentionPath.ABSORBED, CacheDtype.F32, 1, heads, context), seed, structured).runOnce(ex);
                    float[] got = new DecodeBench(new DecodeBench.Shape(AttentionPath.ABSORBED, dt, 1, heads, context), seed, structured).runOnce(ex);
                    for (int i = 0; i < ref.length; i++) {
                        double d = got[i] - ref[i];
                        maxAbs = Math.max(maxAbs, Math.abs(d));
                        se += d * d;
                        ss += (double) ref[i] * ref[i];
                    }
                }
                long bytes = new LatentCache(v3, 1, 1, dt).bytesPerToken();
                out.printf("%-11s %-6s %,14d %14.2e %14.2e%n", structured ? "structured" : "random", dt, bytes, maxAbs, Math.sqrt(se / ss));
            }
        }
    }
}
