package org.tornadomla.cli;

import org.tornadomla.MlaException;
import org.tornadomla.attention.AttentionOptions;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.attention.MlaLayer;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.weights.MlaWeights;
import org.tornadomla.weights.SafeTensorsFile;
import org.tornadomla.weights.SafeTensorsWriter;
import org.tornadomla.weights.TensorInfo;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * Runs one layer on inputs from a safetensors file: a prefill from position 0, then decode steps, and
 * writes the outputs and the final caches. Everything is checked before the layer runs; the output file
 * appears only when the whole run succeeded.
 */
@Command(name = "run-layer", mixinStandardHelpOptions = true,
        description = "Run one MLA layer: prefill_input [B,T,hidden] as a prefill from position 0, then each "
                + "decode_input_<k> [B,1,hidden] as one decode step. Writes F32 prefill_output, decode_output_<k>, "
                + "kv_cache [B,S,kv_lora_rank] and pe_cache [B,S,qk_rope_head_dim] (interleaved rope order). "
                + "Bad input: one line on stderr, exit code 2, no output file.")
public final class RunLayerCommand implements Callable<Integer> {
    @Option(names = "--config", required = true, description = "Hugging Face config.json")
    Path config;

    @Option(names = "--weights", required = true, description = "safetensors file, index.json or checkpoint directory")
    Path weights;

    @Option(names = "--layer", defaultValue = "0", description = "layer index (default: ${DEFAULT-VALUE})")
    int layer;

    @Option(names = "--input", required = true, description = "safetensors file with prefill_input and decode_input_<k>")
    Path input;

    @Option(names = "--output", required = true, description = "safetensors file to write")
    Path output;

    @Option(names = "--path", defaultValue = "absorbed", description = "naive, absorbed or tiled (default: ${DEFAULT-VALUE})")
    String path;

    @picocli.CommandLine.Mixin
    KernelOptions kernel;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        AttentionOptions opt = kernel.options(AttentionPath.parse(path));
        CacheDtype dtype = kernel.dtype();
        MlaConfig cfg = MlaConfig.load(config);
        MlaWeights w = MlaWeights.load(weights, cfg, layer);
        int d = cfg.hiddenSize();

        float[] prefill;
        List<float[]> decodes = new ArrayList<>();
        int batch, tokens;
        try (SafeTensorsFile in = SafeTensorsFile.open(input)) {
            TensorInfo p = require(in, "prefill_input", "[B, T, " + d + "]");
            if (p.shape().length != 3 || p.shape()[2] != d || p.shape()[0] < 1 || p.shape()[1] < 1) {
                throw new MlaException("tensor 'prefill_input': expected shape [B, T, " + d + "], found " + p.shapeString());
            }
            batch = (int) p.shape()[0];
            tokens = (int) p.shape()[1];
            prefill = in.readFloats("prefill_input");
            for (int k = 0; in.info("decode_input_" + k) != null; k++) {
                TensorInfo di = require(in, "decode_input_" + k, "");
                di.requireShape(batch, 1, d);
                decodes.add(in.readFloats(di.name()));
            }
        }
        try (MlaLayer mla = new MlaLayer(w, kernel.executor(out, "java-reference"))) {
            run(out, mla, opt, dtype, batch, tokens, prefill, decodes);
        }
        return 0;
    }

    private void run(PrintWriter out, MlaLayer mla, AttentionOptions opt, CacheDtype dtype, int batch, int tokens,
                     float[] prefill, List<float[]> decodes) {
        MlaConfig cfg = mla.config();
        int d = cfg.hiddenSize();
        int capacity = tokens + decodes.size();
        LatentCache cache = mla.newCache(batch, capacity, dtype);
        out.printf("run-layer: layer %d, B=%d, prefill T=%d, %d decode steps, path %s, cache %s, on %s%n",
                layer, batch, tokens, decodes.size(), opt.path(), dtype, mla.device());

        SafeTensorsWriter writer = new SafeTensorsWriter();
        long t0 = System.nanoTime();
        writer.add("prefill_output", new long[] {batch, tokens, d}, mla.forward(cache, prefill, tokens, opt));
        out.printf("  prefill: %.1f ms%n", (System.nanoTime() - t0) / 1e6);
        for (int k = 0; k < decodes.size(); k++) {
            long t = System.nanoTime();
            writer.add("decode_output_" + k, new long[] {batch, 1, d}, mla.forward(cache, decodes.get(k), 1, opt));
            out.printf("  decode %d/%d: %.1f ms%n", k + 1, decodes.size(), (System.nanoTime() - t) / 1e6);
        }
        int dc = cfg.kvLoraRank(), dr = cfg.qkRopeHeadDim();
        float[] kv = new float[batch * capacity * dc];
        float[] pe = new float[batch * capacity * dr];
        for (int b = 0; b < batch; b++) {
            System.arraycopy(cache.latent(b), 0, kv, b * capacity * dc, capacity * dc);
            System.arraycopy(cache.ropeKey(b), 0, pe, b * capacity * dr, capacity * dr);
        }
        writer.add("kv_cache", new long[] {batch, capacity, dc}, kv);
        writer.add("pe_cache", new long[] {batch, capacity, dr}, pe);
        writer.write(output);
        out.printf("wrote %s (%d tensors)%n", output, 3 + decodes.size());
    }

    private static TensorInfo require(SafeTensorsFile in, String name, String shape) {
        TensorInfo t = in.info(name);
        if (t == null) throw new MlaException("input " + in.path() + " has no tensor '" + name + "' (expected shape " + shape + ")");
        if (!t.dtype().isFloat()) {
            throw new MlaException("tensor '" + name + "': expected dtype F32, BF16 or F16, found " + t.dtype());
        }
        return t;
    }
}
