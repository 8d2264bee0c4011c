package org.tornadomla.weights;

import org.tornadomla.internal.Gaussians;
import org.tornadomla.internal.Messages;
import org.tornadomla.internal.Memory;
import org.tornadomla.MlaException;
import org.tornadomla.config.MlaConfig;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;

/**
 * The attention weights of one layer by their Hugging Face names ({@code model.layers.{i}.self_attn.*.weight}),
 * [out, in], immutable. The projections (q_a_proj, q_b_proj or q_proj, kv_a_proj_with_mqa, kv_b_proj, o_proj)
 * are held in one {@link WeightDtype} — f32, bf16, or DeepSeek's block-scaled FP8 — which the kernels read as
 * it is; the two norm weights are f32 (a few kB). With q_lora_rank = 0 the query is a plain q_proj and
 * {@link #qA()}, {@link #qANorm()}, {@link #qB()} are null; otherwise {@link #q()} is null.
 *
 * <p>A sparse config ({@link MlaConfig#sparse()}, DeepSeek-V3.2) adds the lightning indexer's
 * {@code self_attn.indexer.*}: wq_b and wk, projections held like the others; k_norm's weight and bias, f32; and
 * weights_proj, held f32 whatever the checkpoint stores (DeepSeek computes it in fp32; V3.2's FP8 checkpoint
 * stores it BF16). A dense config has none of them.
 *
 * <p>No array is exposed: each tensor is a {@link Weight}, which gives copies ({@link Weight#toFloats()}) and
 * adds its storage to a kernel graph only through the tasks that use it.
 *
 * <p>The weights know their layer index ({@link #layer()}) and a digest of the two weights that produce a
 * cache's rows ({@link #kvDigest()}): with the config, what {@code CacheIdentity.of(weights)} names.
 */
public final class MlaWeights {
    private final MlaConfig config;
    /** By HF name suffix (e.g. "kv_b_proj.weight"), in the order of {@link #tensors(MlaConfig)}. */
    private final Map<String, Weight> weights;
    private final WeightDtype dtype;
    private final int layer;
    private final String kvDigest;

    /**
     * The weights of {@code config} from one {@link Weight} per tensor of {@link #tensors(MlaConfig)}, matched by
     * the end of their names (a layer prefix is allowed); shapes are checked, projections must share one dtype.
     * The layer index is the N of the {@code model.layers.N.} prefix the names carry, 0 without one
     * ({@link #MlaWeights(MlaConfig, int, List)} names it).
     */
    public MlaWeights(MlaConfig config, List<Weight> tensors) {
        this(config, layerOf(tensors), tensors, null);
    }

    /**
     * The weights of layer {@code layer} of {@code config}, as {@link #MlaWeights(MlaConfig, List)}; a name whose
     * {@code model.layers.N.} prefix names another layer is refused.
     */
    public MlaWeights(MlaConfig config, int layer, List<Weight> tensors) {
        this(config, layer, tensors, null);
    }

    /** {@code weightsSha}: the digest of the values these weights were made from (null: of these). */
    private MlaWeights(MlaConfig config, int layer, List<Weight> tensors, String weightsSha) {
        this.config = Objects.requireNonNull(config, "config");
        Objects.requireNonNull(tensors, "tensors");
        if (layer < 0) throw new MlaException("layer must be >= 0, found " + layer);
        for (Weight t : tensors) {
            int named = layerIn(Objects.requireNonNull(t, "tensors holds null").name());
            if (named >= 0 && named != layer) throw new MlaException("weight " + Messages.quote(t.name()) + " is named for layer " + named + ", given for layer " + layer);
        }
        this.layer = layer;
        Map<String, Weight> byName = new LinkedHashMap<>();
        WeightDtype d = null;
        for (Tensor t : tensors(config)) {
            Weight w = null;
            for (Weight candidate : tensors) {
                Objects.requireNonNull(candidate, "tensors holds null");
                if (candidate.name().equals(t.hfName) || candidate.name().endsWith("." + t.hfName)) {
                    if (w != null) throw new MlaException("weight " + t.hfName + " given twice");
                    w = candidate;
                }
            }
            if (w == null) throw new MlaException("weight " + t.hfName + ": expected shape " + Messages.shape(t.shape) + ", found none");
            if (!java.util.Arrays.equals(w.shape(), t.shape)) {
                throw new MlaException("weight " + Messages.quote(w.name()) + ": expected shape " + Messages.shape(t.shape)
                        + ", found " + Messages.shape(w.shape()));
            }
            if (t.isProjection()) {
                if (d != null && d != w.dtype()) throw new MlaException("projection weights must share one dtype, found " + d + " and " + w.dtype());
                d = w.dtype();
            }
            byName.put(t.hfName, t.isProjection() ? w : w.to(WeightDtype.F32));     // the norm kernels read f32
        }
        if (byName.size() != tensors.size()) {
            throw new MlaException("expected the " + byName.size() + " weights " + byName.keySet() + " of this config, found " + tensors.size());
        }
        this.weights = Collections.unmodifiableMap(byName);
        this.dtype = d;
        this.kvDigest = weightsSha != null ? weightsSha : digest(kvA(), kvANorm());
    }

    /** The N of a name starting "model.layers.N.", or −1. */
    private static int layerIn(String name) {
        String p = "model.layers.";
        if (!name.startsWith(p)) return -1;
        int end = name.indexOf('.', p.length());
        String n = end < 0 ? "" : name.substring(p.length(), end);
        return n.matches("0|[1-9][0-9]{0,8}") ? Integer.parseInt(n) : -1;
    }

    /** The layer the tensors' names share ({@code model.layers.N.}), 0 without one. */
    private static int layerOf(List<Weight> tensors) {
        Objects.requireNonNull(tensors, "tensors");
        for (Weight t : tensors) {
            int n = layerIn(Objects.requireNonNull(t, "tensors holds null").name());
            if (n >= 0) return n;      // the constructor refuses names of other layers
        }
        return 0;
    }

    /**
     * SHA-256, hex, of kv_a_proj_with_mqa then kv_a_layernorm: for each, its HF name suffix in UTF-8, a 0 byte,
     * its dimensions as 8-byte little-endian integers, then its values as f32 ({@link Weight#toFloats()}: fp8
     * and bf16 dequantised) in 4-byte little-endian IEEE bits, with −0 written as +0.
     */
    static String digest(Weight kvA, Weight kvANorm) {
        MessageDigest md;
        try {
            md = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        String[] names = {"kv_a_proj_with_mqa.weight", "kv_a_layernorm.weight"};
        Weight[] ws = {kvA, kvANorm};
        for (int k = 0; k < 2; k++) {
            md.update(names[k].getBytes(StandardCharsets.UTF_8));
            md.update((byte) 0);
            long[] shape = ws[k].shape();
            ByteBuffer dims = ByteBuffer.allocate(8 * shape.length).order(ByteOrder.LITTLE_ENDIAN);
            for (long n : shape) dims.putLong(n);
            md.update(dims.array());
            float[] v = ws[k].toFloats();
            ByteBuffer b = ByteBuffer.allocate(4 * 4096).order(ByteOrder.LITTLE_ENDIAN);
            for (int i = 0; i < v.length; i++) {
                b.putInt(Float.floatToIntBits(v[i] + 0.0f));       // −0 + 0 = +0
                if (!b.hasRemaining()) {
                    md.update(b.array(), 0, b.position());
                    b.clear();
                }
            }
            md.update(b.array(), 0, b.position());
        }
        return HexFormat.of().formatHex(md.digest());
    }

    // ------------------------------------------------------------------ reading

    /** The config these weights are shaped for. */
    public MlaConfig config() {
        return config;
    }

    /** The layer index these weights belong to ({@code model.layers.{layer}}). */
    public int layer() {
        return layer;
    }

    /**
     * SHA-256 (64 hex digits) of kv_a_proj_with_mqa and kv_a_layernorm, the weights that produce the cached rows,
     * taken from the values these weights were made from (as a checkpoint stores them, or as given to the
     * constructor), dequantised to f32; the byte layout is {@link #digest}'s. {@link #to} keeps it: the same
     * checkpoint layer loaded or converted to f32, bf16 or fp8 has one digest (the caches it fills differ only by
     * the rounding of the weights), while weights built from other values have another. With the config and
     * {@link #layer()} it is the identity of the caches this layer fills ({@code CacheIdentity.of}).
     */
    public String kvDigest() {
        return kvDigest;
    }

    /** The form the projection weights are held in. */
    public WeightDtype dtype() {
        return dtype;
    }

    /** The weight with HF name suffix {@code hfName} (e.g. {@code "kv_b_proj.weight"}), or null when this config has none. */
    public Weight weight(String hfName) {
        return weights.get(Objects.requireNonNull(hfName, "hfName"));
    }

    /** Every weight, in the order of {@link #tensors(MlaConfig)}. */
    public List<Weight> all() {
        return List.copyOf(weights.values());
    }

    /** q_a_proj [q_lora_rank, D], or null with a plain q_proj. */
    public Weight qA() {
        return weights.get("q_a_proj.weight");
    }

    /** q_a_layernorm [q_lora_rank], f32, or null with a plain q_proj. */
    public Weight qANorm() {
        return weights.get("q_a_layernorm.weight");
    }

    /** q_b_proj [H·(d_n+d_r), q_lora_rank], or null with a plain q_proj. */
    public Weight qB() {
        return weights.get("q_b_proj.weight");
    }

    /** q_proj [H·(d_n+d_r), D] (q_lora_rank = 0 only), or null. */
    public Weight q() {
        return weights.get("q_proj.weight");
    }

    /** kv_a_proj_with_mqa [d_c+d_r, D]. */
    public Weight kvA() {
        return weights.get("kv_a_proj_with_mqa.weight");
    }

    /** kv_a_layernorm [d_c], f32. */
    public Weight kvANorm() {
        return weights.get("kv_a_layernorm.weight");
    }

    /** kv_b_proj [H·(d_n+d_v), d_c]. */
    public Weight kvB() {
        return weights.get("kv_b_proj.weight");
    }

    /** o_proj [D, H·d_v]. */
    public Weight o() {
        return weights.get("o_proj.weight");
    }

    /** indexer.wq_b [n_idx·d_idx, q_lora_rank], or null for a dense config. */
    public Weight indexerWqB() {
        return weights.get(INDEXER_WQ_B);
    }

    /** indexer.wk [d_idx, D], or null for a dense config. */
    public Weight indexerWk() {
        return weights.get(INDEXER_WK);
    }

    /** indexer.k_norm.weight [d_idx], f32, or null for a dense config. */
    public Weight indexerKNorm() {
        return weights.get(INDEXER_K_NORM);
    }

    /** indexer.k_norm.bias [d_idx], f32, or null for a dense config. */
    public Weight indexerKNormBias() {
        return weights.get(INDEXER_K_NORM_BIAS);
    }

    /** indexer.weights_proj [n_idx, D], f32, or null for a dense config. */
    public Weight indexerWeightsProj() {
        return weights.get(INDEXER_WEIGHTS_PROJ);
    }

    /**
     * Bytes the weights hold, measured from the live arrays (the sum of {@link Weight#bytes()}). For
     * DeepSeek-V3's layer: 748.4 MB in f32, 374.2 MB in bf16, 187.2 MB in fp8 (docs/checkpoints.md).
     */
    public long bytes() {
        long n = 0;
        for (Weight w : weights.values()) n += w.bytes();
        return n;
    }

    /** These weights with the projections in another form ({@link Weight#to}: exact to f32, rounding to bf16, quantising to fp8). */
    public MlaWeights to(WeightDtype target) {
        Objects.requireNonNull(target, "target");
        if (target == dtype) return this;
        List<Weight> out = new ArrayList<>();
        for (Map.Entry<String, Weight> e : weights.entrySet()) out.add(isProjection(e.getKey(), e.getValue().shape()) ? e.getValue().to(target) : e.getValue());
        return new MlaWeights(config, layer, out, kvDigest);
    }

    /**
     * The weights of query heads [from, to) alone, as one device of a tensor-parallel layer holds them
     * (DeepSeek's {@code ColumnParallelLinear} wq_b and wkv_b, {@code RowParallelLinear} wo): the rows of q_b_proj
     * (q_proj without q_lora) of those heads, d_n + d_r each; the rows of kv_b_proj of those heads, d_n + d_v
     * each (its output is viewed [H, d_n + d_v]: W^UK_h then W^UV_h); the columns of o_proj of those heads, d_v
     * each. Everything the heads share is whole: q_a_proj, q_a_layernorm, kv_a_proj_with_mqa, kv_a_layernorm
     * (and a sparse config's indexer). The config is this one {@link MlaConfig#withHeads with} to − from heads:
     * the softmax scale depends on d_n + d_r and YaRN, not on the head count, so each head computes what it
     * computes in the whole layer. Layer index and {@link #kvDigest()} stay (the cached rows are the same).
     *
     * <p>Values are copied in their own form, never re-rounded. FP8 weights keep their 128 × 128 scale blocks,
     * so a slice must start each sliced projection at a block boundary: a head range that would cut a block
     * (for DeepSeek-V3's q_b_proj, 192 rows a head: a start at an odd head) is refused in one line.
     * {@code heads(0, H)} is these weights.
     */
    public MlaWeights heads(int from, int to) {
        int h = config.numHeads();
        if (from < 0 || to > h || from >= to) {
            throw new MlaException("heads [" + from + ", " + to + ") of a layer of " + h + " heads: expected 0 <= from < to <= " + h);
        }
        if (from == 0 && to == h) return this;
        int qk = config.qkHeadDim(), kvb = config.qkNopeHeadDim() + config.vHeadDim(), dv = config.vHeadDim();
        if (dtype == WeightDtype.FP8) {
            String q = config.hasQLora() ? "q_b_proj" : "q_proj";
            String[] names = {q, "kv_b_proj", "o_proj"};
            long[] starts = {(long) from * qk, (long) from * kvb, (long) from * dv};
            String[] axes = {"row", "row", "column"};
            for (int k = 0; k < 3; k++) {
                if (starts[k] % org.tornadomla.kernels.Fp8.WEIGHT_BLOCK != 0) {
                    throw new MlaException("heads [" + from + ", " + to + ") of FP8 weights: " + names[k] + " would start at " + axes[k] + " " + starts[k]
                            + ", inside a 128x128 scale block (" + from + " heads x " + (k == 0 ? qk : k == 1 ? kvb : dv)
                            + "); choose head ranges whose starts are block boundaries, or convert the weights first (to(WeightDtype.BF16))");
                }
            }
        }
        List<Weight> out = new ArrayList<>();
        for (Map.Entry<String, Weight> e : weights.entrySet()) {
            Weight w = e.getValue();
            out.add(switch (e.getKey()) {
                case "q_b_proj.weight", "q_proj.weight" -> w.rows((long) from * qk, (long) to * qk);
                case "kv_b_proj.weight" -> w.rows((long) from * kvb, (long) to * kvb);
                case "o_proj.weight" -> w.columns((long) from * dv, (long) to * dv);
                default -> w;
            });
        }
        return new MlaWeights(config.withHeads(to - from), layer, out, kvDigest);
    }

    // ------------------------------------------------------------------ names and shapes

    /** One weight: its HF name suffix and its shape from the config. */
    public record Tensor(String hfName, long[] shape) {
        /** Keeps a copy of the shape. */
        public Tensor {
            shape = shape.clone();
        }

        /** The shape, [out, in] or [n] (a copy). */
        @Override
        public long[] shape() {
            return shape.clone();
        }

        /**
         * A projection ([out, in]) held in the layer's weight form, rather than a norm ([n]) or the indexer's
         * weights_proj, which are held f32.
         */
        public boolean isProjection() {
            return MlaWeights.isProjection(hfName, shape);
        }

        /** Numbers it holds. */
        long numbers() {
            return shape.length == 1 ? shape[0] : shape[0] * shape[1];
        }
    }

    /** HF name suffixes of the indexer's tensors (sparse configs). */
    static final String INDEXER_WQ_B = "indexer.wq_b.weight", INDEXER_WK = "indexer.wk.weight",
            INDEXER_K_NORM = "indexer.k_norm.weight", INDEXER_K_NORM_BIAS = "indexer.k_norm.bias",
            INDEXER_WEIGHTS_PROJ = "indexer.weights_proj.weight";

    private static boolean isProjection(String hfName, long[] shape) {
        return shape.length == 2 && !hfName.equals(INDEXER_WEIGHTS_PROJ);
    }

    /** The weights a config needs, with HF names (without the layer prefix) and [out, in] shapes. */
    public static List<Tensor> tensors(MlaConfig c) {
        long d = c.hiddenSize(), h = c.numHeads(), rq = c.qLoraRank(), dc = c.kvLoraRank();
        long qOut = h * c.qkHeadDim();
        Tensor kvA = new Tensor("kv_a_proj_with_mqa.weight", new long[] {dc + c.qkRopeHeadDim(), d});
        Tensor kvNorm = new Tensor("kv_a_layernorm.weight", new long[] {dc});
        Tensor kvB = new Tensor("kv_b_proj.weight", new long[] {h * (c.qkNopeHeadDim() + c.vHeadDim()), dc});
        Tensor o = new Tensor("o_proj.weight", new long[] {d, h * c.vHeadDim()});
        if (!c.hasQLora()) return List.of(new Tensor("q_proj.weight", new long[] {qOut, d}), kvA, kvNorm, kvB, o);
        List<Tensor> out = new ArrayList<>(List.of(new Tensor("q_a_proj.weight", new long[] {rq, d}), new Tensor("q_a_layernorm.weight", new long[] {rq}),
                new Tensor("q_b_proj.weight", new long[] {qOut, rq}), kvA, kvNorm, kvB, o));
        if (c.sparse()) {                   // MlaConfig: a sparse config has a query latent
            long n = c.indexer().nHeads(), hd = c.indexer().headDim();
            out.add(new Tensor(INDEXER_WQ_B, new long[] {n * hd, rq}));
            out.add(new Tensor(INDEXER_WK, new long[] {hd, d}));
            out.add(new Tensor(INDEXER_K_NORM, new long[] {hd}));
            out.add(new Tensor(INDEXER_K_NORM_BIAS, new long[] {hd}));
            out.add(new Tensor(INDEXER_WEIGHTS_PROJ, new long[] {n, d}));
        }
        return List.copyOf(out);
    }

    /** The Hugging Face name prefix of layer {@code layer}'s attention: {@code model.layers.N.self_attn.}. */
    public static String prefix(int layer) {
        return "model.layers." + layer + ".self_attn.";
    }

    // ------------------------------------------------------------------ loading

    /**
     * Loads layer {@code layer}'s attention weights in their own form: FP8 when every projection of the layer is
     * stored as F8_E4M3 (DeepSeek-V3 and R1 checkpoints), f32 otherwise.
     */
    public static MlaWeights load(TensorSource src, MlaConfig c, int layer) {
        return load(src, c, layer, null);
    }

    /**
     * Loads layer {@code layer}'s attention weights, checking every shape against the config, and holds the
     * projections as {@code dtype} (null: FP8 when every projection is stored as F8_E4M3, f32 otherwise).
     * F32, BF16, F16 and F64 tensors are read as floats; an F8_E4M3 projection needs its block scales
     * {@code <name>_scale_inv}, F32 [ceil(out/128), ceil(in/128)] (a missing or wrong-shaped one is an error
     * naming both tensors and shapes), and e4m3 NaN codes are refused. Block scales beside a weight that is
     * not F8_E4M3 are refused too: the weight would be read without them. A sparse config also reads the
     * indexer's tensors (wq_b and wk as projections; weights_proj, F32/BF16 or F8_E4M3 with scales, into f32);
     * a checkpoint without them is refused naming the first one missing. A dense config over a checkpoint that has
     * an indexer (a sparse model's) is refused too.
     */
    public static MlaWeights load(TensorSource src, MlaConfig c, int layer, WeightDtype dtype) {
        Objects.requireNonNull(src, "src");
        Objects.requireNonNull(c, "c");
        if (layer < 0) throw new MlaException("layer must be >= 0, found " + layer);
        String p = prefix(layer);
        // a sparse model's checkpoint under a dense config would attend densely where the model was trained sparse;
        // dense attention over a sparse model is AttentionOptions.withDense(true) with the sparse config
        for (String idx : List.of(INDEXER_WK, INDEXER_WQ_B)) {
            if (!c.sparse() && src.info(p + idx) != null) {
                throw new MlaException("tensor " + Messages.quote(p + idx) + " is a lightning indexer's: the checkpoint is a sparse-attention (DSA) "
                        + "model's, but the config is dense (no index_n_heads, index_head_dim and index_topk); to compare with dense attention, "
                        + "load it with its sparse config and use AttentionOptions.withDense(true)");
            }
        }
        boolean allFp8 = true;
        for (Tensor t : tensors(c)) {
            TensorInfo info = require(src, c, p, t);
            allFp8 &= !t.isProjection() || info.dtype() == DType.F8_E4M3;
            if (t.shape.length == 1 && info.dtype() == DType.F8_E4M3) {
                throw new MlaException("tensor " + Messages.quote(p + t.hfName) + ": expected a float dtype for a norm weight, found F8_E4M3");
            }
        }
        WeightDtype target = dtype != null ? dtype : allFp8 ? WeightDtype.FP8 : WeightDtype.F32;
        // what is kept, plus, for the one tensor being converted, what is read and its f32 copy
        long held = 0, converting = 0;
        for (Tensor t : tensors(c)) {
            long n = t.numbers();
            held += n * (t.isProjection() ? target.bytesPerNumber : 4);
            boolean fp8 = src.info(p + t.hfName).dtype() == DType.F8_E4M3;
            boolean asStored = !t.isProjection() || (fp8 ? target == WeightDtype.FP8 : target == WeightDtype.F32);
            if (!asStored) converting = Math.max(converting, n * ((fp8 ? 1 : 4) + 4));
        }
        Memory.require(held + converting, "layer " + layer + "'s weights as " + target);
        List<Weight> out = new ArrayList<>();
        Weight kvA = null, kvANorm = null;       // as the checkpoint holds them, for the identity
        for (Tensor t : tensors(c)) {
            Weight w = Weight.read(src, p + t.hfName, t.shape);
            if (t.hfName.equals("kv_a_proj_with_mqa.weight")) kvA = w;
            if (t.hfName.equals("kv_a_layernorm.weight")) kvANorm = w;
            out.add(t.isProjection() ? w.to(target) : w.to(WeightDtype.F32));
        }
        return new MlaWeights(c, layer, out, digest(kvA, kvANorm));
    }

    /** The tensor's description; a missing tensor is an error with a hint when the config and the weights disagree about q_lora_rank. */
    private static TensorInfo require(TensorSource src, MlaConfig c, String p, Tensor t) {
        String name = p + t.hfName;
        TensorInfo info = src.info(name);
        if (info == null) {
            String hint = c.hasQLora() && src.info(p + "q_proj.weight") != null
                    ? " (the weights have q_proj: is q_lora_rank 0 for this model?)"
                    : !c.hasQLora() && src.info(p + "q_a_proj.weight") != null
                    ? " (the weights have q_a_proj: does the config lack q_lora_rank?)"
                    : t.hfName.startsWith("indexer.")
                    ? " (the config is sparse, with index_n_heads " + c.indexer().nHeads() + ": a DeepSeek-V3.2-style checkpoint has the indexer's "
                    + "weights; is this a dense model's checkpoint?)" : "";
            throw new MlaException("missing tensor '" + name + "' (expected shape " + Messages.shape(t.shape) + ")" + hint);
        }
        info.requireShape(t.shape);
        return info;
    }

    /**
     * Layer {@code layer} of a checkpoint at {@code path}: one .safetensors file, a directory of them, or a
     * sharded checkpoint's model.safetensors.index.json. Held as fp8 when every projection of the layer is
     * stored as F8_E4M3, f32 otherwise ({@link #load(Path, MlaConfig, int, WeightDtype)} chooses).
     */
    public static MlaWeights load(Path path, MlaConfig c, int layer) {
        return load(path, c, layer, null);
    }

    /**
     * As {@link #load(Path, MlaConfig, int)}, with the projections held as {@code dtype} (null: fp8 for an FP8
     * checkpoint, f32 otherwise). The files are memory-mapped while loading and closed before this returns.
     */
    public static MlaWeights load(Path path, MlaConfig c, int layer, WeightDtype dtype) {
        Objects.requireNonNull(path, "path");
        try (TensorSource src = TensorSource.open(path)) {
            return load(src, c, layer, dtype);
        } catch (MlaException e) {
            // a tensor missing, of another shape or not finite: say which checkpoint was read (the files' own errors name them already)
            if (e.getMessage().startsWith(path.toString())) throw e;
            throw new MlaException(path + ": " + e.getMessage(), e);
        }
    }

    // ------------------------------------------------------------------ writing and random weights

    /** Adds this layer's weights under HF names to a writer, dequantised to the float file dtype {@code dtype} (F32, BF16, F16). */
    public SafeTensorsWriter addTo(SafeTensorsWriter w, int layer, DType dtype) {
        for (Map.Entry<String, Weight> e : weights.entrySet()) w.add(prefix(layer) + e.getKey(), dtype, e.getValue().shape(), e.getValue().toFloats());
        return w;
    }

    /**
     * Adds this layer's weights under HF names in their own form, as a checkpoint stores them: projections as
     * F32, BF16, or F8_E4M3 with {@code <name>_scale_inv} (DeepSeek-V3's layout), norms as {@code normDtype}
     * (F32, BF16 or F16; V3 stores BF16).
     */
    public SafeTensorsWriter addInOwnForm(SafeTensorsWriter w, int layer, DType normDtype) {
        for (Map.Entry<String, Weight> e : weights.entrySet()) {
            Weight t = e.getValue();
            if (t.shape().length == 1) w.add(prefix(layer) + e.getKey(), normDtype, t.shape(), t.toFloats());
            else t.addTo(w, prefix(layer) + e.getKey());
        }
        return w;
    }

    /**
     * Seeded random f32 weights with the scale of a trained layer: projections N(0, 1/in), so activations stay
     * O(1), norm weights 1 + N(0, 0.1²), the indexer's k_norm bias N(0, 0.1²); layer 0.
     */
    public static MlaWeights random(MlaConfig c, long seed) {
        return random(c, seed, 0);
    }

    /** {@link #random(MlaConfig, long)} as the weights of layer {@code layer} (the same values for any layer). */
    public static MlaWeights random(MlaConfig c, long seed, int layer) {
        Objects.requireNonNull(c, "c");
        if (layer < 0) throw new MlaException("layer must be >= 0, found " + layer);
        long total = 0;
        for (Tensor t : tensors(c)) total += 4 * (t.shape.length == 1 ? t.shape[0] : t.shape[0] * t.shape[1]);
        Memory.require(total, "the weights of this config");
        SplittableRandom rnd = new SplittableRandom(seed);
        List<Weight> out = new ArrayList<>();
        for (Tensor t : tensors(c)) {
            int n = (int) (t.shape.length == 1 ? t.shape[0] : t.shape[0] * t.shape[1]);   // MlaConfig checked it fits
            float[] a = new float[n];
            if (t.hfName.equals(INDEXER_K_NORM_BIAS)) {
                for (int i = 0; i < n; i++) a[i] = (float) (0.1 * Gaussians.next(rnd));
            } else if (t.shape.length == 1) {
                for (int i = 0; i < n; i++) a[i] = (float) (1 + 0.1 * Gaussians.next(rnd));
            } else {
                double std = 1 / Math.sqrt(t.shape[1]);
                for (int i = 0; i < n; i++) a[i] = (float) (std * Gaussians.next(rnd));
            }
            out.add(Weight.ofF32(t.hfName, t.shape, a));
        }
        return new MlaWeights(c, layer, out);
    }
}
