package org.tornadomla.cli;

import org.tornadomla.internal.Messages;
import org.tornadomla.cache.PagedCacheSpec;
import org.tornadomla.cache.internal.CacheStorage;
import org.tornadomla.internal.Memory;
import org.tornadomla.MlaException;
import org.tornadomla.attention.AttentionOptions;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.attention.MlaLayer;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.graph.GraphExecutor;
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
import java.util.Arrays;
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
                + "Variable-length batch: prefill_input.<b> [T_b,hidden] for sequences b = 0, 1, ... (one step with "
                + "every prompt), then decode_input_<k> [B,1,hidden] (row b: sequence b's token); writes "
                + "prefill_output.<b> [T_b,hidden], decode_output_<k>, kv_cache.<b> [S_b,kv_lora_rank] and "
                + "pe_cache.<b> [S_b,qk_rope_head_dim]. --paged runs either on a paged cache. "
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

    @Option(names = "--output", required = true, description = "safetensors file to write (folders made as needed)")
    Path output;

    @Option(names = "--path", defaultValue = "absorbed", description = "naive, absorbed or tiled (default: ${DEFAULT-VALUE})")
    String path;

    @Option(names = "--weights-dtype", description = "how the projection weights are held in memory: f32, bf16 or fp8 "
            + "(default: fp8 when the layer's projections are F8_E4M3, as in DeepSeek-V3 and R1; f32 otherwise)")
    String weightsDtype;

    @Option(names = "--paged", description = "keep the cache in a pool of blocks with block tables (vLLM's and FlashMLA's "
            + "paged cache) instead of one contiguous block per sequence; the results are the same")
    boolean paged;

    @Option(names = "--block-size", description = "with --paged: tokens per block (default: " + LatentCache.DEFAULT_BLOCK_SIZE
            + ", FlashMLA's page size)")
    Integer blockSize;

    @Option(names = "--dense", description = "for a sparse config (DeepSeek-V3.2's DSA): attend to the whole context instead of the "
            + "indexer's top-k positions, to compare the two (docs/sparse-attention.md)")
    boolean dense;

    @Option(names = "--write-indices", description = "for a sparse config: also write the indexer's selected positions, "
            + "selected_prefill [B,T,k] (variable-length: selected_prefill.<b> [T_b,k]) and selected_decode_<k> [B,1,k] "
            + "(F32 holding integers, each row's positions increasing, -1 after; k = min(index_topk, capacity)), and its key "
            + "cache index_k_cache [B,S,index_head_dim] (F8_E4M3 codes) and index_k_scale_cache [B,S,index_head_dim/128] "
            + "(variable-length: .<b> per sequence); java-reference and java-fast backends only")
    boolean writeIndices;

    @picocli.CommandLine.Mixin
    KernelOptions kernel;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        AttentionOptions opt = kernel.options(AttentionPath.parse(path)).withDense(dense);
        CacheDtype dtype = kernel.dtype();
        List<Path> inputs = new ArrayList<>(List.of(config, input));
        MlaConfig cfg = MlaConfig.load(config);
        WeightDtype wanted = weightsDtype == null ? null : WeightDtype.parse(weightsDtype);
        // everything that does not need the weights is checked before they load (a V3 layer takes seconds)
        if (blockSize != null && !paged) throw new MlaException("--block-size " + blockSize + " needs --paged");
        if (blockSize != null && (blockSize < 1 || blockSize > (1 << 20))) {
            throw new MlaException("--block-size must be 1 … 1048576 tokens, found " + blockSize);
        }
        if (dense && !cfg.sparse()) throw new MlaException("--dense is for a sparse config (index_topk in config.json); " + config + " is dense MLA already");
        if (writeIndices && !cfg.sparse()) throw new MlaException("--write-indices is for a sparse config (index_topk in config.json); " + config + " is dense MLA");
        if (writeIndices && dense) throw new MlaException("--write-indices with --dense: a dense run selects no positions");
        Input in = read(input, cfg);
        GraphExecutor executor = kernel.executor(out);
        if (writeIndices && !(executor instanceof org.tornadomla.graph.JvmExecutor)) {
            executor.close();
            throw new MlaException("--write-indices reads the selection from the JVM's arrays: use --backend java-reference or java-fast, not "
                    + executor.device() + " (the selection stays on the device)");
        }
        try {
            MlaWeights w;
            Set<DType> stored = new TreeSet<>();
            try (TensorSource src = TensorSource.open(weights)) {
                inputs.addAll(src.files());
                OutputFiles.check(output, inputs);            // before any work: never compute what cannot be written
                OutputFiles.checkOwn("--output", output, "a file mla run-layer wrote",
                        head -> OutputFiles.writtenBy(head, "mla run-layer", "\"prefill_output"));
                if (layer >= 0) src.requireLayer(layer);     // --layer 5 on a file of layer 0 says which layers it holds
                w = MlaWeights.load(src, cfg, layer, wanted);
                for (MlaWeights.Tensor t : MlaWeights.tensors(cfg)) {
                    if (t.isProjection()) stored.add(src.info(MlaWeights.prefix(layer) + t.hfName()).dtype());
                }
            }
            out.printf("weights: layer %d, projections %s in memory (%s in the checkpoint%s), %.1f MB%n", layer, w.dtype(),
                    stored.stream().map(DType::name).collect(Collectors.joining(", ")), lossy(stored, w.dtype()) ? "; converting rounds them" : "",
                    w.bytes() / 1e6);
            out.printf("backend: %s%n", executor.device());
            try (MlaLayer mla = new MlaLayer(w, executor)) {
                run(out, mla, opt, dtype, in, inputs);
            }
        } finally {
            executor.close();
        }
        return 0;
    }

    /**
     * What run-layer reads: the prompts of B sequences (lengths[b] tokens each, [T_b, hidden] each) and the
     * decode steps ([B, 1, hidden] each); {@code uniform} when they came as one prefill_input [B, T, hidden].
     */
    record Input(boolean uniform, int[] lengths, List<float[]> prompts, List<float[]> decodes) {
        int batch() {
            return lengths.length;
        }
    }

    /** Reads and checks the input file: one format or the other, every tensor named and shaped as expected. */
    static Input read(Path input, MlaConfig cfg) {
        int d = cfg.hiddenSize();
        try (SafeTensorsFile in = SafeTensorsFile.open(input, "a config.json? --input is a .safetensors file of prefill_input and "
                + "decode_input_N tensors, such as ./mla example writes")) {
            int steps = decodeSteps(in);
            int sequences = sequences(in);
            boolean uniform = in.info("prefill_input") != null;
            int[] lengths;
            List<float[]> prompts = new ArrayList<>();
            if (uniform || sequences == 0) {
                TensorInfo p = require(in, "prefill_input", "[B, T, " + d + "] (or prefill_input.0, prefill_input.1, ... [T_b, " + d + "])");
                long[] ps = p.shape();
                if (ps.length != 3 || ps[2] != d || ps[0] < 1 || ps[1] < 1 || p.numel() > Memory.MAX_ARRAY) {
                    throw new MlaException("tensor 'prefill_input': expected shape [B, T, " + d + "], found " + p.shapeString());
                }
                lengths = new int[(int) ps[0]];
                Arrays.fill(lengths, (int) ps[1]);
            } else {
                lengths = new int[sequences];
                for (int b = 0; b < sequences; b++) {
                    TensorInfo p = require(in, "prefill_input." + b, "[T_" + b + ", " + d + "]");
                    long[] ps = p.shape();
                    if (ps.length != 2 || ps[1] != d || ps[0] < 1 || p.numel() > Memory.MAX_ARRAY) {
                        throw new MlaException("tensor 'prefill_input." + b + "': expected shape [T_" + b + ", " + d + "] with T_" + b
                                + " >= 1, found " + p.shapeString());
                    }
                    lengths[b] = (int) ps[0];
                }
            }
            int batch = lengths.length;
            for (int b = 0; b < batch; b++) {
                if ((long) lengths[b] + steps > cfg.maxPositionEmbeddings()) {
                    throw new MlaException("prefill of " + lengths[b] + " tokens" + (uniform ? "" : " (sequence " + b + ")") + " and " + steps
                            + " decode steps reach position " + (lengths[b] + steps - 1L) + ", past max_position_embeddings " + cfg.maxPositionEmbeddings());
                }
            }
            for (int k = 0; k < steps; k++) require(in, "decode_input_" + k, "").requireShape(batch, 1, d);
            if (uniform) {
                prompts.add(finite(in, input, "prefill_input"));
            } else {
                for (int b = 0; b < batch; b++) prompts.add(finite(in, input, "prefill_input." + b));
            }
            List<float[]> decodes = new ArrayList<>();
            for (int k = 0; k < steps; k++) decodes.add(finite(in, input, "decode_input_" + k));
            return new Input(uniform, lengths, prompts, decodes);
        }
    }

    /** An input tensor's numbers, refused (before the weights are loaded) where one is NaN or infinite. */
    private static float[] finite(SafeTensorsFile in, Path input, String name) {
        float[] x = in.readFloats(name);
        for (int i = 0; i < x.length; i++) {
            if (!Float.isFinite(x[i])) {
                long[] shape = in.info(name).shape();
                long[] at = new long[shape.length];
                long rest = i;
                for (int k = shape.length - 1; k >= 0; k--) {
                    at[k] = rest % shape[k];
                    rest /= shape[k];
                }
                throw new MlaException("input " + input + ": tensor '" + name + "' holds " + x[i] + " at " + Messages.shape(at)
                        + "; expected finite numbers");
            }
        }
        return x;
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
            if (name.equals("prefill_input") || name.matches("prefill_input\\.(0|[1-9][0-9]{0,8})")) continue;
            if (name.matches("decode_input_(0|[1-9][0-9]{0,8})")) {
                steps.add(Integer.parseInt(name.substring("decode_input_".length())));
                continue;
            }
            throw new MlaException("input " + in.path() + " holds tensor " + Messages.quote(name)
                    + ", which run-layer does not use (expected prefill_input, or prefill_input.0, prefill_input.1, …, and "
                    + "decode_input_0, decode_input_1, …)");
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

    /** The number of variable-length prompts prefill_input.0 … prefill_input.{B−1}, without a gap (0: none). */
    private static int sequences(SafeTensorsFile in) {
        java.util.TreeSet<Integer> seqs = new java.util.TreeSet<>();
        for (String name : in.names()) {
            if (name.matches("prefill_input\\.(0|[1-9][0-9]{0,8})")) seqs.add(Integer.parseInt(name.substring("prefill_input.".length())));
        }
        if (!seqs.isEmpty() && in.info("prefill_input") != null) {
            throw new MlaException("input " + in.path() + " holds both prefill_input and prefill_input." + seqs.first()
                    + ": use one format, [B, T, hidden] or one [T_b, hidden] per sequence");
        }
        int b = 0;
        for (int s : seqs) {
            if (s != b) {
                throw new MlaException("input " + in.path() + " has prefill_input." + s + " but no prefill_input." + b
                        + ": sequences must run from 0 without a gap");
            }
            b++;
        }
        return b;
    }

    private void run(PrintWriter out, MlaLayer mla, AttentionOptions opt, CacheDtype dtype, Input in, List<Path> inputs) {
        MlaConfig cfg = mla.config();
        int d = cfg.hiddenSize(), batch = in.batch(), steps = in.decodes().size();
        int bs = blockSize == null ? LatentCache.DEFAULT_BLOCK_SIZE : blockSize;     // checked in call(), before the weights load
        int[] finals = new int[batch];
        long blocks = 0;
        int longest = 0;
        for (int b = 0; b < batch; b++) {
            finals[b] = in.lengths()[b] + steps;
            longest = Math.max(longest, finals[b]);
            blocks += (finals[b] + bs - 1) / bs;
        }
        if (paged && blocks > Integer.MAX_VALUE - 8) throw new MlaException("--block-size " + bs + ": the pool would need " + blocks + " blocks");
        // a paged pool of exactly the blocks the sequences need; a contiguous cache sized for the longest
        LatentCache cache = paged ? mla.newPagedCache(PagedCacheSpec.builder().maxSequences(batch).maxSequenceLength(longest).numBlocks((int) blocks).blockSize(bs).dtype(dtype).build()) : mla.newCache(batch, longest, dtype);
        int[] ids = new int[batch], ones = new int[batch];
        for (int b = 0; b < batch; b++) {
            ids[b] = paged ? cache.addSequence() : b;
            ones[b] = 1;
        }
        out.printf("run-layer: layer %d, B=%d, prefill %s, %d decode step%s, path %s, cache %s%s, on %s%n", layer, batch,
                in.uniform() ? "T=" + in.lengths()[0] : "T_b=" + Arrays.toString(in.lengths()), steps, steps == 1 ? "" : "s", opt.path(), dtype,
                paged ? String.format(" paged (%d blocks of %d tokens, %.1f MB)", blocks, bs, cache.storageBytes() / 1e6)
                        : String.format(" contiguous (%.1f MB)", cache.storageBytes() / 1e6), mla.device());

        SafeTensorsWriter writer = new SafeTensorsWriter().metadata(OutputFiles.WRITTEN_BY, "mla run-layer");
        long t0 = System.nanoTime();
        if (in.uniform()) {
            int t = in.lengths()[0];
            writer.add("prefill_output", new long[] {batch, t, d}, in.uniform() && !paged
                    ? mla.forward(cache, in.prompts().get(0), t, opt)
                    : mla.forward(cache, in.prompts().get(0), ids, in.lengths(), opt));
            if (writeIndices) addSelection(writer, "selected_prefill", mla.lastSelection(), new long[] {batch, t});
        } else {
            // one variable-length step with every prompt, cu_seqlens order
            float[] x = new float[Memory.arrayLength((long) Arrays.stream(in.lengths()).asLongStream().sum() * d, "the prompts")];
            for (int b = 0, at = 0; b < batch; at += in.lengths()[b] * d, b++) System.arraycopy(in.prompts().get(b), 0, x, at, in.lengths()[b] * d);
            float[] y = mla.forward(cache, x, ids, in.lengths(), opt);
            for (int b = 0, at = 0; b < batch; at += in.lengths()[b] * d, b++) {
                writer.add("prefill_output." + b, new long[] {in.lengths()[b], d}, Arrays.copyOfRange(y, at, at + in.lengths()[b] * d));
            }
            if (writeIndices) {
                int[] sel = mla.lastSelection();
                int k = sel.length / Arrays.stream(in.lengths()).sum();
                for (int b = 0, at = 0; b < batch; at += in.lengths()[b] * k, b++) {
                    addSelection(writer, "selected_prefill." + b, Arrays.copyOfRange(sel, at, at + in.lengths()[b] * k), new long[] {in.lengths()[b]});
                }
            }
        }
        out.printf("  prefill: %.1f ms%n", (System.nanoTime() - t0) / 1e6);
        for (int k = 0; k < steps; k++) {
            long t = System.nanoTime();
            float[] y = in.uniform() && !paged ? mla.forward(cache, in.decodes().get(k), 1, opt) : mla.forward(cache, in.decodes().get(k), ids, ones, opt);
            writer.add("decode_output_" + k, new long[] {batch, 1, d}, y);
            if (writeIndices) addSelection(writer, "selected_decode_" + k, mla.lastSelection(), new long[] {batch, 1});
            out.printf("  decode %d/%d: %.1f ms%n", k + 1, steps, (System.nanoTime() - t) / 1e6);
        }
        int dc = cfg.kvLoraRank(), dr = cfg.qkRopeHeadDim();
        if (in.uniform()) {
            int s = finals[0];
            float[] kv = new float[Memory.arrayLength((long) batch * s * dc, "kv_cache")];
            float[] pe = new float[Memory.arrayLength((long) batch * s * dr, "pe_cache")];
            for (int b = 0; b < batch; b++) {
                System.arraycopy(cache.latent(ids[b]), 0, kv, b * s * dc, s * dc);
                System.arraycopy(cache.ropeKey(ids[b]), 0, pe, b * s * dr, s * dr);
            }
            writer.add("kv_cache", new long[] {batch, s, dc}, kv);
            writer.add("pe_cache", new long[] {batch, s, dr}, pe);
            if (writeIndices) {
                int di = cfg.indexer().headDim(), sc = cfg.indexer().blocks();
                byte[] codes = new byte[Memory.arrayLength((long) batch * s * di, "index_k_cache")];
                float[] scales = new float[batch * s * sc];
                for (int b = 0; b < batch; b++) {
                    CacheStorage.IndexKeys keys = CacheStorage.of(cache).indexKeys(ids[b]);
                    System.arraycopy(keys.codes(), 0, codes, b * s * di, s * di);
                    System.arraycopy(keys.scales(), 0, scales, b * s * sc, s * sc);
                }
                writer.addBytes("index_k_cache", DType.F8_E4M3, new long[] {batch, s, di}, codes);
                writer.add("index_k_scale_cache", new long[] {batch, s, sc}, scales);
            }
        } else {
            for (int b = 0; b < batch; b++) {
                writer.add("kv_cache." + b, new long[] {finals[b], dc}, cache.latent(ids[b]));
                writer.add("pe_cache." + b, new long[] {finals[b], dr}, cache.ropeKey(ids[b]));
                if (writeIndices) {
                    CacheStorage.IndexKeys keys = CacheStorage.of(cache).indexKeys(ids[b]);
                    writer.addBytes("index_k_cache." + b, DType.F8_E4M3, new long[] {finals[b], cfg.indexer().headDim()}, keys.codes());
                    writer.add("index_k_scale_cache." + b, new long[] {finals[b], cfg.indexer().blocks()}, keys.scales());
                }
            }
        }
        writer.write(output, inputs);
        int tensors = in.uniform() ? 3 + steps : 3 * batch + steps;
        if (writeIndices) tensors += in.uniform() ? 3 + steps : 3 * batch + steps;
        out.printf("wrote %s (%d tensors)%n", output, tensors);
    }

    /** A step's selection ([rows, k] ints, rows = the product of {@code lead}) as an F32 tensor [lead..., k] (exact integers). */
    private static void addSelection(SafeTensorsWriter writer, String name, int[] selected, long[] lead) {
        long rows = 1;
        for (long n : lead) rows *= n;
        int k = (int) (selected.length / rows);
        float[] f = new float[selected.length];
        for (int i = 0; i < f.length; i++) f[i] = selected[i];
        long[] shape = Arrays.copyOf(lead, lead.length + 1);
        shape[lead.length] = k;
        writer.add(name, shape, f);
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
