package org.tornadomla.cli;

import org.tornadomla.Memory;
import org.tornadomla.MlaException;
import org.tornadomla.attention.AttentionOptions;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.attention.MlaLayer;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.io.OutputFiles;
import org.tornadomla.weights.MlaWeights;
import org.tornadomla.weights.SafeTensorsFile;
import org.tornadomla.weights.SafeTensorsWriter;
import org.tornadomla.weights.TensorInfo;
import org.tornadomla.weights.TensorSource;
import org.tornadomla.weights.DType;
import org.tornadomla.weights.WeightDtype;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
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

    @Option(names = "--weights-dtype", description = "how the projection weights are held in memory: f32, bf16 or fp8 "
            + "(default: fp8 when the layer's projections are F8_E4M3, as in DeepSeek-V3 and R1; f32 otherwise)")
    String weightsDtype;

    @picocli.CommandLine.Mixin
    KernelOptions kernel;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        AttentionOptions opt = kernel.options(AttentionPath.parse(path));
        CacheDtype dtype = kernel.dtype();
        List<Path> inputs = new ArrayList<>(List.of(config, input));
        MlaConfig cfg = MlaConfig.load(config);
        WeightDtype wanted = weightsDtype == null ? null : WeightDtype.parse(weightsDtype);
        MlaWeights w;
        Set<DType> stored = new TreeSet<>();
        try (TensorSource src = TensorSource.open(weights)) {
            inputs.addAll(src.files());
            OutputFiles.check(output, inputs);            // before any work: never compute what cannot be written
            w = MlaWeights.load(src, cfg, layer, wanted);
            for (MlaWeights.Tensor t : MlaWeights.tensors(cfg)) {
                if (t.isProjection()) stored.add(src.info(MlaWeights.prefix(layer) + t.hfName()).dtype());
            }
        }
        out.printf("weights: layer %d, projections %s in memory (%s in the checkpoint%s), %.1f MB%n", layer, w.dtype(),
                stored.stream().map(DType::name).collect(Collectors.joining(", ")), lossy(stored, w.dtype()) ? "; converting rounds them" : "",
                w.bytes() / 1e6);
        int d = cfg.hiddenSize();

        float[] prefill;
        List<float[]> decodes = new ArrayList<>();
        int batch, tokens;
        try (SafeTensorsFile in = SafeTensorsFile.open(input)) {
            int steps = decodeSteps(in);
            TensorInfo p = require(in, "prefill_input", "[B, T, " + d + "]");
            long[] ps = p.shape();
            if (ps.length != 3 || ps[2] != d || ps[0] < 1 || ps[1] < 1 || p.numel() > Memory.MAX_ARRAY) {
                throw new MlaException("tensor 'prefill_input': expected shape [B, T, " + d + "], found " + p.shapeString());
            }
            batch = (int) ps[0];
            tokens = (int) ps[1];
            if ((long) tokens + steps > cfg.maxPositionEmbeddings()) {
                throw new MlaException("prefill of " + tokens + " tokens and " + steps + " decode steps reach position " + (tokens + steps - 1L)
                        + ", past max_position_embeddings " + cfg.maxPositionEmbeddings());
            }
            for (int k = 0; k < steps; k++) require(in, "decode_input_" + k, "").requireShape(batch, 1, d);
            prefill = in.readFloats("prefill_input");
            for (int k = 0; k < steps; k++) decodes.add(in.readFloats("decode_input_" + k));
        }
        try (MlaLayer mla = new MlaLayer(w, kernel.executor(out, "java-reference"))) {
            run(out, mla, opt, dtype, batch, tokens, prefill, decodes, inputs);
        }
        return 0;
    }

    /** Whether holding weights stored as {@code stored} in {@code dtype} rounds them. */
    static boolean lossy(Set<DType> stored, WeightDtype dtype) {
        for (DType d : stored) {
            boolean exact = switch (dtype) {
                case F32 -> true;
                case BF16 -> d == DType.BF16;
                case FP8 -> d == DType.F8_E4M3;
            };
            if (!exact) return true;
        }
        return false;
    }

    /**
     * The number of decode steps: decode_input_0 … decode_input_{K−1}, without a gap. Any other tensor than
     * those and prefill_input is an error: it would otherwise be silently left out.
     */
    private static int decodeSteps(SafeTensorsFile in) {
        java.util.TreeSet<Integer> steps = new java.util.TreeSet<>();
        for (String name : in.names()) {
            if (name.equals("prefill_input")) continue;
            if (name.matches("decode_input_(0|[1-9][0-9]{0,8})")) {
                steps.add(Integer.parseInt(name.substring("decode_input_".length())));
                continue;
            }
            throw new MlaException("input " + in.path() + " holds tensor " + MlaException.quote(name)
                    + ", which run-layer does not use (expected prefill_input and decode_input_0, decode_input_1, …)");
        }
        int k = 0;
        for (int step : steps) {
            if (step != k) {
                throw new MlaException("input " + in.path() + " has decode_input_" + step + " but no decode_input_" + k
                        + ": decode steps must run from 0 without a gap");
            }
            k++;
        }
        return k;
    }

    private void run(PrintWriter out, MlaLayer mla, AttentionOptions opt, CacheDtype dtype, int batch, int tokens,
                     float[] prefill, List<float[]> decodes, List<Path> inputs) {
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
        writer.write(output, inputs);
        out.printf("wrote %s (%d tensors)%n", output, 3 + decodes.size());
    }

    private static TensorInfo require(SafeTensorsFile in, String name, String shape) {
        TensorInfo t = in.info(name);
        if (t == null) throw new MlaException("input " + in.path() + " has no tensor '" + name + "' (expected shape " + shape + ")");
        if (!t.dtype().isFloat()) {
            throw new MlaException("tensor '" + name + "': expected dtype F32, BF16, F16 or F64, found " + t.dtype());
        }
        return t;
    }
}
