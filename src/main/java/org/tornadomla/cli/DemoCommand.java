package org.tornadomla.cli;

import org.tornadomla.internal.Gaussians;
import org.tornadomla.internal.Memory;
import org.tornadomla.MlaException;
import org.tornadomla.attention.AttentionOptions;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.attention.MlaLayer;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.KvMemory;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.graph.GraphExecutor;
import org.tornadomla.weights.MlaWeights;
import org.tornadomla.weights.WeightDtype;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintWriter;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;

/**
 * The main job: one layer with DeepSeek-V3 attention geometry and seeded random weights, a prefill and
 * decode steps through all three attention paths, their agreement, ms per decode step, and the cache
 * memory MLA saves.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = "Prefill and decode one MLA layer (DeepSeek-V3 attention geometry, seeded random weights) "
                + "through the naive, absorbed and tiled paths; print their agreement, ms per decode step and "
                + "the latent-cache bytes per token next to MHA and GQA.")
public final class DemoCommand implements Callable<Integer> {
    @Option(names = "--preset", defaultValue = "deepseek-v3", description = "the attention config: " + MlaConfig.PRESET_NAMES
            + " (R1 has V3's attention config; default: ${DEFAULT-VALUE})")
    String preset;

    @Option(names = "--hidden", defaultValue = "2048",
            description = "hidden size D; the attention geometry is the preset's (default: ${DEFAULT-VALUE}; V3 has 7168)")
    int hidden;

    @Option(names = "--prefill", defaultValue = "32", description = "prompt tokens (default: ${DEFAULT-VALUE})")
    int prefill;

    @Option(names = "--steps", defaultValue = "8", description = "decode steps (default: ${DEFAULT-VALUE})")
    int steps;

    @Option(names = "--batch", defaultValue = "1", description = "sequences (default: ${DEFAULT-VALUE})")
    int batch;

    @picocli.CommandLine.Mixin
    KernelOptions kernel;

    @Option(names = "--seed", defaultValue = "42", description = "seed of weights and inputs (default: ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--weights-dtype", defaultValue = "f32",
            description = "how the projection weights are held: f32, bf16 (rounded) or fp8 (quantised to 128x128-block-scaled e4m3 "
                    + "as DeepSeek-V3 ships them) (default: ${DEFAULT-VALUE})")
    String weightsDtype;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        if (prefill < 1 || steps < 0 || batch < 1) {
            throw new MlaException("--prefill and --batch must be >= 1 and --steps >= 0, found " + prefill + ", " + batch + ", " + steps);
        }
        MlaConfig cfg = MlaConfig.preset(preset).withHiddenSize(hidden);
        if ((long) prefill + steps > cfg.maxPositionEmbeddings()) {
            throw new MlaException("--prefill " + prefill + " and --steps " + steps + " reach past max_position_embeddings " + cfg.maxPositionEmbeddings());
        }
        Memory.arrayLength((long) batch * (prefill + steps) * hidden, "the demo's inputs and outputs ([batch, prefill + steps, hidden])");
        // the prompt, the decode inputs, two paths' outputs and a prefill's y live at once (the layer checks its own)
        Memory.require(4L * hidden * batch * (4L * prefill + 3L * steps), "the demo's inputs and outputs for batch " + batch
                + ", " + prefill + " + " + steps + " tokens of hidden " + hidden);
        for (AttentionPath path : AttentionPath.values()) kernel.options(path);   // --tile, --splits: refused before any work
        CacheDtype dtype = kernel.dtype();
        WeightDtype wdt = WeightDtype.parse(weightsDtype);
        GraphExecutor executor = kernel.executor(out);
        out.printf("TornadoMLA demo: %s attention geometry: H=%d, q_lora_rank=%d, kv_lora_rank=%d, d_n=%d, d_r=%d, d_v=%d; hidden %d%s%n",
                preset, cfg.numHeads(), cfg.qLoraRank(), cfg.kvLoraRank(), cfg.qkNopeHeadDim(), cfg.qkRopeHeadDim(),
                cfg.vHeadDim(), hidden, hidden == MlaConfig.preset(preset).hiddenSize() ? "" : " (reduced from " + MlaConfig.preset(preset).hiddenSize() + ")");
        MlaWeights weights = MlaWeights.random(cfg, seed).to(wdt);
        out.printf("softmax scale %.6f (YaRN factor %.0f), seeded random weights (seed %d) held as %s (%.1f MB), cache %s%n",
                cfg.softmaxScale(), cfg.ropeScaling() == null ? 1.0 : cfg.ropeScaling().factor(), seed, wdt, weights.bytes() / 1e6, dtype);
        try (MlaLayer layer = new MlaLayer(weights, executor)) {
            out.printf("backend: %s%n", layer.device());
            out.printf("batch %d, prefill %d tokens, then %d decode steps%n%n", batch, prefill, steps);
            out.flush();
            runPaths(out, layer, dtype, executor);
        }
        printFootprint(out, cfg);
        return 0;
    }

    private void runPaths(PrintWriter out, MlaLayer layer, CacheDtype dtype, GraphExecutor executor) {
        SplittableRandom rnd = new SplittableRandom(seed + 1);
        float[] prompt = Gaussians.floats(rnd, batch * prefill * hidden, 1);
        float[][] next = new float[steps][];
        for (int k = 0; k < steps; k++) next[k] = Gaussians.floats(rnd, batch * hidden, 1);

        out.printf("%-30s %12s %16s %16s%n", "path", "prefill ms", "decode ms/step", "max |Δ| vs naive");
        float[] reference = null;
        for (AttentionPath path : AttentionPath.values()) {
            AttentionOptions opt = kernel.options(path);
            LatentCache cache = layer.newCache(batch, prefill + steps, dtype);
            float[] all = new float[batch * (prefill + steps) * hidden];
            long t0 = System.nanoTime();
            float[] y = layer.forward(cache, prompt, prefill, opt);
            double prefillMs = (System.nanoTime() - t0) / 1e6;
            System.arraycopy(y, 0, all, 0, y.length);
            long t1 = System.nanoTime();
            for (int k = 0; k < steps; k++) {
                float[] yk = layer.forward(cache, next[k], 1, opt);
                System.arraycopy(yk, 0, all, batch * (prefill + k) * hidden, yk.length);
            }
            double decodeMs = steps == 0 ? Double.NaN : (System.nanoTime() - t1) / 1e6 / steps;
            String diff;
            if (reference == null) {
                reference = all;
                diff = "(reference)";
            } else {
                double max = 0;
                for (int i = 0; i < all.length; i++) max = Math.max(max, Math.abs(all[i] - reference[i]));
                diff = String.format("%.2e", max);
            }
            String splits = kernel.splits == AttentionOptions.AUTO
                    ? "auto " + opt.resolved(batch, layer.config().numHeads(), prefill + steps, executor).numSplits() : "" + kernel.splits;
            String name = path == AttentionPath.TILED ? "tiled (Bc=" + kernel.tile + ", splits " + splits + ")" : path.toString();
            out.printf("%-30s %12.1f %16.1f %16s%n", name, prefillMs, decodeMs, diff);
            out.flush();
        }
        out.printf("(one run each, including JIT warm-up%s; use the benchmarks for timings to compare)%n%n",
                layer.device().startsWith("tornado") ? " and TornadoVM's kernel compilation" : "");
    }

    private static void printFootprint(PrintWriter out, MlaConfig cfg) {
        KvMemory.Model m = KvMemory.Model.of("this layer", cfg);
        java.util.List<KvMemory.Scheme> schemes = KvMemory.schemes(m, Math.max(2, cfg.numHeads() / 16));
        long mla = schemes.get(0).numbersPerTokenPerLayer();
        out.printf("KV cache per token, one layer, bf16 (same attention geometry; ./mla kv-memory for more):%n");
        for (KvMemory.Scheme s : schemes) {
            out.printf("  %-38s %,8d numbers %,10d B  %6.1f× MLA%n", s.name(), s.numbersPerTokenPerLayer(),
                    s.numbersPerTokenPerLayer() * 2, (double) s.numbersPerTokenPerLayer() / mla);
        }
        out.printf("Whole model (%d layers), bf16: MLA %,d B per token, MHA %,d B per token%n", cfg.numHiddenLayers(),
                mla * 2 * cfg.numHiddenLayers(), schemes.get(1).numbersPerTokenPerLayer() * 2 * cfg.numHiddenLayers());
    }

}
