package org.tornadomla.config;

import org.tornadomla.internal.Messages;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import org.tornadomla.MlaException;
import org.tornadomla.io.Json;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * The attention geometry of one DeepSeek MLA layer, with Hugging Face {@code config.json} names.
 * Symbols of docs/design.md: D = hiddenSize, H = numHeads, r_q = qLoraRank (0: plain q_proj), d_c = kvLoraRank,
 * d_n = qkNopeHeadDim, d_r = qkRopeHeadDim, d_v = vHeadDim.
 *
 * @param ropeScaling null when the config has no rope_scaling
 * @param fp8Weights  config.json declares DeepSeek's block-scaled FP8 weights ({@code quantization_config} with
 *                    quant_method fp8, fmt e4m3, weight_block_size [128, 128]; the only quantization read). It
 *                    does not choose how weights are loaded: that is read from the tensors' dtypes.
 * @param indexer     DeepSeek Sparse Attention's lightning indexer (config.json's index_n_heads, index_head_dim,
 *                    index_topk, scale_fmt), or null for dense MLA: see {@link #sparse()}
 */
public record MlaConfig(int hiddenSize, int numHeads, int qLoraRank, int kvLoraRank, int qkNopeHeadDim,
                        int qkRopeHeadDim, int vHeadDim, double ropeTheta, double rmsNormEps,
                        int maxPositionEmbeddings, int numHiddenLayers, RopeScaling ropeScaling, boolean fp8Weights,
                        IndexerConfig indexer) {

    /** A dense config (no indexer). */
    public MlaConfig(int hiddenSize, int numHeads, int qLoraRank, int kvLoraRank, int qkNopeHeadDim,
                     int qkRopeHeadDim, int vHeadDim, double ropeTheta, double rmsNormEps,
                     int maxPositionEmbeddings, int numHiddenLayers, RopeScaling ropeScaling, boolean fp8Weights) {
        this(hiddenSize, numHeads, qLoraRank, kvLoraRank, qkNopeHeadDim, qkRopeHeadDim, vHeadDim, ropeTheta, rmsNormEps,
                maxPositionEmbeddings, numHiddenLayers, ropeScaling, fp8Weights, null);
    }

    /** A config without quantization_config. */
    public MlaConfig(int hiddenSize, int numHeads, int qLoraRank, int kvLoraRank, int qkNopeHeadDim,
                     int qkRopeHeadDim, int vHeadDim, double ropeTheta, double rmsNormEps,
                     int maxPositionEmbeddings, int numHiddenLayers, RopeScaling ropeScaling) {
        this(hiddenSize, numHeads, qLoraRank, kvLoraRank, qkNopeHeadDim, qkRopeHeadDim, vHeadDim, ropeTheta, rmsNormEps,
                maxPositionEmbeddings, numHiddenLayers, ropeScaling, false, null);
    }

    /** Largest Java array: every weight matrix of a config must fit in one. */
    static final long MAX_ARRAY = Integer.MAX_VALUE - 8;
    /**
     * Largest |softmax scale| and |cos/sin multiplier| accepted (real configs: about 0.1 and 1). Beyond this,
     * query·key products of ordinary activations overflow float and every output is NaN.
     */
    public static final double MAX_SCALE = 1e4;

    /**
     * Checks every value, and what the kernels compute from them, so that a config that loads gives finite
     * outputs for finite inputs: dimensions positive and small enough for every weight to fit one Java array,
     * rope_theta, rms_norm_eps and the YaRN values finite (eps also as a float), the softmax scale and the
     * cos/sin multiplier finite and at most {@link #MAX_SCALE} as floats, the RoPE frequencies finite; a sparse
     * config's indexer reads the query latent (q_lora_rank &gt; 0) and its head holds the d_r rope numbers.
     */
    public MlaConfig {
        positive("hidden_size", hiddenSize);
        positive("num_attention_heads", numHeads);
        if (qLoraRank < 0) throw new MlaException("invalid config: q_lora_rank must be >= 0 (0 or null: plain q_proj), found " + qLoraRank);
        positive("kv_lora_rank", kvLoraRank);
        positive("qk_nope_head_dim", qkNopeHeadDim);
        positive("qk_rope_head_dim", qkRopeHeadDim);
        positive("v_head_dim", vHeadDim);
        positive("max_position_embeddings", maxPositionEmbeddings);
        positive("num_hidden_layers", numHiddenLayers);
        if (qkRopeHeadDim % 2 != 0)
            throw new MlaException("invalid config: qk_rope_head_dim must be even (RoPE rotates pairs), found " + qkRopeHeadDim);
        if (!(ropeTheta > 1) || Double.isInfinite(ropeTheta))
            throw new MlaException("invalid config: rope_theta must be a finite number > 1, found " + ropeTheta);
        float eps = (float) rmsNormEps;
        if (!(rmsNormEps > 0) || !(eps > 0) || Float.isInfinite(eps))
            throw new MlaException("invalid config: rms_norm_eps must be a number > 0 that is finite and not 0 as a float, found " + rmsNormEps);
        long h = numHeads, qk = (long) qkNopeHeadDim + qkRopeHeadDim;
        fits("q_b_proj", h * qk * Math.max(1, qLoraRank));
        fits("q_proj", h * qk * hiddenSize);
        fits("q_a_proj", (long) Math.max(1, qLoraRank) * hiddenSize);
        fits("kv_a_proj_with_mqa", ((long) kvLoraRank + qkRopeHeadDim) * hiddenSize);
        fits("kv_b_proj", h * ((long) qkNopeHeadDim + vHeadDim) * kvLoraRank);
        fits("o_proj", (long) hiddenSize * h * vHeadDim);
        if (indexer != null) {
            if (qLoraRank == 0) {
                throw new MlaException("invalid config: a sparse (DSA) config needs q_lora_rank > 0: the indexer's wq_b reads the query latent "
                        + "q_a_layernorm(q_a_proj·x), which a plain q_proj does not have");
            }
            if (indexer.headDim() < qkRopeHeadDim) {
                throw new MlaException("invalid config: index_head_dim (" + indexer.headDim() + ") must hold the qk_rope_head_dim (" + qkRopeHeadDim
                        + ") rotated numbers it starts with");
            }
            fits("indexer.wq_b", (long) indexer.nHeads() * indexer.headDim() * qLoraRank);
            fits("indexer.wk", (long) indexer.headDim() * hiddenSize);
            fits("indexer.weights_proj", (long) indexer.nHeads() * hiddenSize);
        }
        if (ropeScaling != null) {
            RopeScaling y = ropeScaling;
            if (!(y.factor() > 0) || Double.isInfinite(y.factor()))
                throw new MlaException("invalid config: rope_scaling.factor must be a finite number > 0, found " + y.factor());
            positive("rope_scaling.original_max_position_embeddings", y.originalMaxPositionEmbeddings());
            if (!(y.betaFast() > 0) || !(y.betaSlow() > 0) || Double.isInfinite(y.betaFast()) || Double.isInfinite(y.betaSlow()))
                throw new MlaException("invalid config: rope_scaling.beta_fast and beta_slow must be finite numbers > 0, found "
                        + y.betaFast() + " and " + y.betaSlow());
            if (!Double.isFinite(y.mscale()) || !Double.isFinite(y.mscaleAllDim()))
                throw new MlaException("invalid config: rope_scaling.mscale and mscale_all_dim must be finite numbers, found "
                        + y.mscale() + " and " + y.mscaleAllDim());
            scaleInRange("the cos/sin multiplier mscale(factor, mscale) / mscale(factor, mscale_all_dim)", y.cosSinScale());
        }
        double softmax = 1.0 / Math.sqrt(qk) * (ropeScaling == null ? 1.0 : ropeScaling.softmaxScaleFactor());
        scaleInRange("the softmax scale (d_n + d_r)^-1/2 · mscale(factor, mscale_all_dim)²", softmax);
        for (float f : RopeFrequencies.inverseFrequencies(qkRopeHeadDim, ropeTheta, ropeScaling)) {
            if (!Float.isFinite(f)) throw new MlaException("invalid config: rope_theta " + ropeTheta + " and rope_scaling give a RoPE frequency of " + f);
        }
    }

    private static void positive(String name, int v) {
        if (v <= 0) throw new MlaException("invalid config: " + name + " must be > 0, found " + v);
    }

    private static void fits(String weight, long numbers) {
        if (numbers > MAX_ARRAY) {
            throw new MlaException("invalid config: " + weight + " would hold " + numbers + " numbers, more than one Java array holds ("
                    + MAX_ARRAY + ")");
        }
    }

    private static void scaleInRange(String what, double v) {
        float f = (float) v;
        if (!Float.isFinite(f) || Math.abs(f) > MAX_SCALE) {
            throw new MlaException("invalid config: " + what + " is " + v + "; it must be finite and at most " + (long) MAX_SCALE
                    + " in magnitude (rope_scaling's factor, mscale and mscale_all_dim set it)");
        }
    }

    /** d_n + d_r: the width of one head's query and key. */
    public int qkHeadDim() {
        return qkNopeHeadDim + qkRopeHeadDim;
    }

    /** d_c + d_r: numbers cached per token per layer. */
    public int cacheWidth() {
        return kvLoraRank + qkRopeHeadDim;
    }

    /** Whether queries go through a low-rank latent (q_lora_rank set; V2-Lite has none). */
    public boolean hasQLora() {
        return qLoraRank > 0;
    }

    /**
     * Whether attention is sparse: DeepSeek Sparse Attention (DeepSeek-V3.2, GLM-5), where a lightning
     * {@link #indexer()} picks the index_topk cached positions each token attends. False for dense MLA
     * (a config.json without index_* keys).
     */
    public boolean sparse() {
        return indexer != null;
    }

    /** s = (d_n + d_r)^(-1/2), times mscale² under YaRN (docs/design.md §1.2). */
    public double softmaxScale() {
        double s = 1.0 / Math.sqrt(qkHeadDim());
        return ropeScaling == null ? s : s * ropeScaling.softmaxScaleFactor();
    }

    /** A copy with another hidden size (used for demos that keep the attention geometry). */
    public MlaConfig withHiddenSize(int d) {
        return new MlaConfig(d, numHeads, qLoraRank, kvLoraRank, qkNopeHeadDim, qkRopeHeadDim, vHeadDim,
                ropeTheta, rmsNormEps, maxPositionEmbeddings, numHiddenLayers, ropeScaling, fp8Weights, indexer);
    }

    /** A copy with another number of query heads (decode shapes of a model cut across GPUs keep the rest). */
    public MlaConfig withHeads(int heads) {
        return new MlaConfig(hiddenSize, heads, qLoraRank, kvLoraRank, qkNopeHeadDim, qkRopeHeadDim, vHeadDim,
                ropeTheta, rmsNormEps, maxPositionEmbeddings, numHiddenLayers, ropeScaling, fp8Weights, indexer);
    }

    /** A copy with or without the FP8 quantization_config (what the layer computes is the same). */
    public MlaConfig withFp8Weights(boolean fp8) {
        return new MlaConfig(hiddenSize, numHeads, qLoraRank, kvLoraRank, qkNopeHeadDim, qkRopeHeadDim, vHeadDim,
                ropeTheta, rmsNormEps, maxPositionEmbeddings, numHiddenLayers, ropeScaling, fp8, indexer);
    }

    /** A copy with another indexer (null: dense MLA). */
    public MlaConfig withIndexer(IndexerConfig idx) {
        return new MlaConfig(hiddenSize, numHeads, qLoraRank, kvLoraRank, qkNopeHeadDim, qkRopeHeadDim, vHeadDim,
                ropeTheta, rmsNormEps, maxPositionEmbeddings, numHiddenLayers, ropeScaling, fp8Weights, idx);
    }

    // ---------------------------------------------------------------- presets

    /**
     * DeepSeek-V3: D=7168, H=128, r_q=1536, d_c=512, d_n=128, d_r=64, d_v=128, 61 layers, YaRN factor 40 (mscale 1,
     * mscale_all_dim 1), FP8 weights. DeepSeek-R1 has the same attention config ({@link #preset(String)} "deepseek-r1").
     */
    public static MlaConfig deepseekV3() {
        return new MlaConfig(7168, 128, 1536, 512, 128, 64, 128, 10000, 1e-6, 163840, 61,
                new RopeScaling(40, 4096, 32, 1, 1.0, 1.0), true);
    }

    /**
     * DeepSeek-V2: D=5120, H=128, r_q=1536, d_c=512, d_n=128, d_r=64, d_v=128, 60 layers, YaRN factor 40 (mscale 0.707,
     * mscale_all_dim 0.707), BF16 weights.
     */
    public static MlaConfig deepseekV2() {
        return new MlaConfig(5120, 128, 1536, 512, 128, 64, 128, 10000, 1e-6, 163840, 60,
                new RopeScaling(40, 4096, 32, 1, 0.707, 0.707));
    }

    /** DeepSeek-V2-Lite: D=2048, H=16, plain q_proj, d_c=512, 27 layers, YaRN factor 40 (mscale 0.707, mscale_all_dim 0.707). */
    public static MlaConfig deepseekV2Lite() {
        return new MlaConfig(2048, 16, 0, 512, 128, 64, 128, 10000, 1e-6, 163840, 27,
                new RopeScaling(40, 4096, 32, 1, 0.707, 0.707));
    }

    /**
     * DeepSeek-V3.2 (V3.2-Exp's config.json): V3's attention (same geometry, YaRN and FP8 weights) plus DeepSeek
     * Sparse Attention's indexer, 64 heads × 128, top-2048, ue8m0 scales ({@link IndexerConfig#deepseekV32()}).
     */
    public static MlaConfig deepseekV32() {
        return deepseekV3().withIndexer(IndexerConfig.deepseekV32());
    }

    /**
     * Kimi K2 (moonshotai/Kimi-K2-Instruct's config.json, model_type kimi_k2, DeepSeek-V3's architecture): D=7168,
     * H=64, r_q=1536, d_c=512, d_n=128, d_r=64, d_v=128, 61 layers, rope_theta 50000, YaRN factor 32 over 4096
     * (beta_fast 1, beta_slow 1, mscale 1, mscale_all_dim 1), 131072 positions, FP8 weights. (K2-Instruct-0905
     * has YaRN factor 64 and 262144 positions.)
     */
    public static MlaConfig kimiK2() {
        return new MlaConfig(7168, 64, 1536, 512, 128, 64, 128, 50000, 1e-6, 131072, 61,
                new RopeScaling(32, 4096, 1, 1, 1.0, 1.0), true);
    }

    /**
     * GLM-5 (zai-org, model_type glm_moe_dsa; the defaults of Hugging Face's GlmMoeDsaConfig, which describe GLM-5):
     * D=6144, H=64, r_q=2048, d_c=512, d_n=192, d_r=64, d_v=256, 78 layers, 202752 positions, rope_theta 10^6
     * without YaRN (config.json's rope_parameters), rms_norm_eps 1e-5, and a DSA indexer of 32 heads × 128,
     * top-2048, RoPE in halves; BF16 weights (no quantization_config, so no ue8m0 scale_fmt).
     */
    public static MlaConfig glm5() {
        return new MlaConfig(6144, 64, 2048, 512, 192, 64, 256, 1_000_000, 1e-5, 202752, 78, null, false,
                new IndexerConfig(32, 128, 2048, false, false));
    }

    /**
     * The attention geometry of MiniCPM3-4B (openbmb): D=2560, H=40, r_q=768, d_c=256, d_n=64, d_r=32, d_v=64
     * (its modelling code's hidden_size / num_attention_heads), 62 layers, 32768 positions — a small latent
     * (288 numbers per token and layer). Geometry only: MiniCPM3's own config.json is refused (no v_head_dim,
     * longrope scaling), and this preset rotates RoPE as DeepSeek does, without rope scaling.
     */
    public static MlaConfig miniCpm3Geometry() {
        return new MlaConfig(2560, 40, 768, 256, 64, 32, 64, 10000, 1e-5, 32768, 62, null);
    }

    /**
     * The preset names, comma-separated, as the commands' help shows them (a constant, so that an option's
     * description can name them): {@link #PRESETS} is this list.
     */
    public static final String PRESET_NAMES = "deepseek-v3, deepseek-r1, deepseek-v2, deepseek-v2-lite, deepseek-v3.2, kimi-k2, glm-5, minicpm3-4b";

    /**
     * The MLA presets {@link #preset(String)} knows, the one registry of the API and every command ({@code demo
     * --preset}, {@code kv-memory --preset}): deepseek-v3, deepseek-r1 (DeepSeek-R1: the same attention config as
     * V3), deepseek-v2, deepseek-v2-lite, deepseek-v3.2 (sparse), kimi-k2, glm-5 (sparse) and minicpm3-4b (its
     * geometry).
     */
    public static final List<String> PRESETS = List.of(PRESET_NAMES.split(", "));

    /**
     * A built-in config by name, case-insensitive: one of {@link #PRESETS}. "deepseek-r1" gives DeepSeek-R1's config,
     * which is DeepSeek-V3's (R1 is trained from V3 with the same architecture). An unknown name is an
     * {@link MlaException} listing the known ones.
     */
    public static MlaConfig preset(String name) {
        Objects.requireNonNull(name, "name");
        return switch (name.toLowerCase(Locale.ROOT)) {
            case "deepseek-v3", "deepseek-r1" -> deepseekV3();
            case "deepseek-v2" -> deepseekV2();
            case "deepseek-v2-lite" -> deepseekV2Lite();
            case "deepseek-v3.2" -> deepseekV32();
            case "kimi-k2" -> kimiK2();
            case "glm-5" -> glm5();
            case "minicpm3-4b" -> miniCpm3Geometry();
            default -> throw new MlaException("unknown preset " + Messages.quote(name) + " (MLA presets: " + PRESET_NAMES + ")");
        };
    }

    // ---------------------------------------------------------------- config.json

    /** Reads a config.json file (strict JSON, at most {@link Json#MAX_CONFIG_BYTES}). */
    public static MlaConfig load(Path configJson) {
        Objects.requireNonNull(configJson, "configJson");
        JsonElement root = Json.readFile(configJson, Json.MAX_CONFIG_BYTES, "config");
        try {
            return fromJson(root);
        } catch (MlaException e) {
            throw new MlaException(configJson + ": " + e.getMessage(), e);
        }
    }

    /** Reads a Hugging Face DeepSeek config.json; fields this library does not use are ignored. */
    public static MlaConfig fromJson(String json) {
        Objects.requireNonNull(json, "json");
        JsonElement e;
        try {
            e = Json.parse(json);
        } catch (MlaException x) {
            throw new MlaException("invalid config: " + x.getMessage(), x);
        }
        return fromJson(e);
    }

    private static MlaConfig fromJson(JsonElement e) {
        if (!e.isJsonObject()) throw new MlaException("invalid config: expected a JSON object, found " + Json.describe(e));
        JsonObject o = e.getAsJsonObject();
        // what the file is comes first: a Llama or Qwen config fails here, not on its rope_scaling or a missing field
        JsonElement kvLora = o.get("kv_lora_rank");
        if (kvLora == null || kvLora.isJsonNull()) {
            JsonElement type = o.get("model_type");
            String what = type != null && type.isJsonPrimitive() && type.getAsJsonPrimitive().isString()
                    ? "model_type " + Messages.quote(type.getAsString()) : type == null ? "no model_type" : "model_type " + Json.describe(type);
            throw new MlaException("invalid config: not an MLA model (" + what + "): it has no kv_lora_rank, the latent width of "
                    + "Multi-head Latent Attention (DeepSeek-V2/V3/R1 configs, model_type deepseek_v2 or deepseek_v3, have one)");
        }
        refuseOtherSpellings(o);
        double theta;
        RopeScaling scaling;
        JsonElement rp = o.get("rope_parameters");
        if (rp != null && !rp.isJsonNull()) {
            // transformers 5 (GLM-5's config.json): rope_theta and the scaling live in one rope_parameters object
            if (!rp.isJsonObject()) throw new MlaException("invalid config: rope_parameters must be an object or null, found " + Json.describe(rp));
            JsonElement rs = o.get("rope_scaling");
            if (rs != null && !rs.isJsonNull()) throw new MlaException("invalid config: both rope_scaling and rope_parameters are set (one of them is read)");
            JsonObject r = rp.getAsJsonObject();
            theta = num(r, "rope_theta", 10000, "rope_parameters.");
            if (present(o, "rope_theta") && num(o, "rope_theta", 0, "") != theta) {
                throw new MlaException("invalid config: rope_theta " + num(o, "rope_theta", 0, "") + " differs from rope_parameters.rope_theta " + theta);
            }
            String type = ropeType(r, "rope_parameters");
            scaling = type.equals("default") ? null : yarn(r, type, "rope_parameters");
        } else {
            theta = num(o, "rope_theta", 10000, "");
            scaling = null;
            JsonElement rs = o.get("rope_scaling");
            if (rs != null && !rs.isJsonNull()) {
                if (!rs.isJsonObject()) throw new MlaException("invalid config: rope_scaling must be an object or null, found " + Json.describe(rs));
                JsonObject r = rs.getAsJsonObject();
                scaling = yarn(r, ropeType(r, "rope_scaling"), "rope_scaling");
            }
        }
        Boolean interleave = optBool(o, "rope_interleave");
        if (interleave != null && !interleave) {
            throw new MlaException("invalid config: rope_interleave is false, but MLA's RoPE here rotates interleaved pairs (2i, 2i+1), "
                    + "as DeepSeek's checkpoints store them");
        }
        boolean fp8 = fp8Weights(o.get("quantization_config"));
        return new MlaConfig(req(o, "hidden_size"), req(o, "num_attention_heads"), optInt(o, "q_lora_rank", 0, ""),
                req(o, "kv_lora_rank"), req(o, "qk_nope_head_dim"), req(o, "qk_rope_head_dim"), req(o, "v_head_dim"),
                theta, num(o, "rms_norm_eps", 1e-6, ""), req(o, "max_position_embeddings"),
                optInt(o, "num_hidden_layers", 1, ""), scaling, fp8, indexer(o, scaleFmt(o)));
    }

    /**
     * MLA configs this reader would otherwise misread, refused by name: DeepSeek's own inference config (its
     * {@code dim}, {@code n_heads}, whose YaRN depends on a max_seq_len the file does not hold) and MiniCPM3's.
     */
    private static void refuseOtherSpellings(JsonObject o) {
        if (!present(o, "hidden_size") && present(o, "dim") && present(o, "n_heads")) {
            throw new MlaException("invalid config: this is DeepSeek's inference config (dim, n_heads, n_layers; YaRN applied only when the run's "
                    + "max_seq_len exceeds original_seq_len), not read: use the model's Hugging Face config.json (hidden_size, num_attention_heads, "
                    + "num_hidden_layers, rope_scaling)");
        }
        JsonElement type = o.get("model_type");
        if (type != null && type.isJsonPrimitive() && type.getAsJsonPrimitive().isString() && type.getAsString().equals("minicpm3")) {
            throw new MlaException("invalid config: model_type 'minicpm3' is not read: MiniCPM3's config.json has no v_head_dim (its modelling "
                    + "code takes hidden_size / num_attention_heads) and scales RoPE with longrope; the preset minicpm3-4b has its geometry");
        }
    }

    /** rope_scaling's or rope_parameters' type ('type' or 'rope_type'): "yarn", or "default" (rope_parameters only). */
    private static String ropeType(JsonObject r, String where) {
        String type = optString(r, "type", where + ".type");
        if (type == null) type = optString(r, "rope_type", where + ".rope_type");
        boolean params = where.equals("rope_parameters");
        if (type == null) {
            if (params) return "default";
            throw new MlaException("invalid config: rope_scaling has neither 'type' nor 'rope_type' (expected \"yarn\")");
        }
        if (type.equals("yarn") || (params && type.equals("default"))) return type;
        throw new MlaException("invalid config: unsupported " + where + " type " + Messages.quote(type) + " (supported: yarn"
                + (params ? ", default" : "") + ")");
    }

    /** The YaRN values of rope_scaling or rope_parameters (of type yarn). */
    private static RopeScaling yarn(JsonObject r, String type, String where) {
        if (!r.has("factor") || r.get("factor").isJsonNull()) throw new MlaException("invalid config: " + where + " of type yarn needs 'factor'");
        String p = where + ".";
        return new RopeScaling(num(r, "factor", 0, p), optInt(r, "original_max_position_embeddings", 4096, p),
                num(r, "beta_fast", 32, p), num(r, "beta_slow", 1, p), num(r, "mscale", 1, p), num(r, "mscale_all_dim", 0, p));
    }

    /** The model types and architectures whose attention is sparse (DSA): DeepSeek-V3.2's and GLM-5's. */
    private static final List<String> SPARSE_MODEL_TYPES = List.of("deepseek_v32", "glm_moe_dsa"),
            SPARSE_ARCHITECTURES = List.of("DeepseekV32ForCausalLM", "GlmMoeDsaForCausalLM");

    /** How the config names a sparse model ("model_type 'deepseek_v32'"), or null where it names none. */
    private static String sparseModel(JsonObject o) {
        JsonElement type = o.get("model_type");
        if (type != null && type.isJsonPrimitive() && SPARSE_MODEL_TYPES.contains(type.getAsString())) {
            return "model_type " + Messages.quote(type.getAsString());
        }
        JsonElement arch = o.get("architectures");
        if (arch != null && arch.isJsonArray()) {
            for (JsonElement a : arch.getAsJsonArray()) {
                if (a.isJsonPrimitive() && SPARSE_ARCHITECTURES.contains(a.getAsString())) return "architecture " + Messages.quote(a.getAsString());
            }
        }
        return null;
    }

    /** Keys only a sparse config may carry; without index_n_heads, index_head_dim and index_topk they are refused. */
    private static final List<String> INDEXER_KEYS = List.of("indexer_rope_interleave", "indexer_types", "index_topk_freq", "index_kpool");

    /**
     * The indexer of a sparse config: index_n_heads, index_head_dim and index_topk all present (none: dense MLA),
     * indexer_rope_interleave (default false: RoPE in halves), the scales of {@code scaleFmt}. Variants whose
     * indexer computes something else are refused by key: pooled keys (index_kpool), indexers shared across layers
     * (indexer_types other than "full", index_topk_freq other than 1).
     */
    private static IndexerConfig indexer(JsonObject o, String scaleFmt) {
        List<String> keys = List.of("index_n_heads", "index_head_dim", "index_topk");
        // a mistyped indexer key (index_top_k) would otherwise be ignored and leave a sparse model dense
        for (String k : o.keySet()) {
            if ((k.startsWith("index_") || k.startsWith("indexer_")) && !keys.contains(k) && !INDEXER_KEYS.contains(k)) {
                throw new MlaException("invalid config: unknown indexer key " + Messages.quote(k) + " (the keys of DeepSeek-V3.2's indexer are "
                        + String.join(", ", keys) + ", and " + String.join(", ", INDEXER_KEYS) + ")");
            }
        }
        List<String> found = keys.stream().filter(k -> present(o, k)).toList();
        if (found.isEmpty()) {
            for (String k : INDEXER_KEYS) {
                if (present(o, k)) throw new MlaException("invalid config: " + k + " is set, but index_n_heads, index_head_dim and index_topk are not");
            }
            // a sparse model's config without its indexer would run dense attention where the model was trained sparse
            String sparseModel = sparseModel(o);
            if (sparseModel != null) {
                throw new MlaException("invalid config: " + sparseModel + " is a sparse-attention (DSA) model, but index_n_heads, index_head_dim "
                        + "and index_topk are missing: without them the layer would attend densely");
            }
            return null;
        }
        for (String k : keys) {
            if (!found.contains(k)) {
                throw new MlaException("invalid config: a sparse (DSA) config needs index_n_heads, index_head_dim and index_topk; " + Messages.quote(k)
                        + " is missing");
            }
        }
        if (present(o, "index_kpool")) throw new MlaException("invalid config: index_kpool (pooled indexer keys) is not supported");
        if (present(o, "index_topk_freq") && req(o, "index_topk_freq") != 1) {
            throw new MlaException("invalid config: index_topk_freq " + req(o, "index_topk_freq") + " (layers reusing another layer's selection) is not supported");
        }
        JsonElement types = o.get("indexer_types");
        if (types != null && !types.isJsonNull()) {
            if (!types.isJsonArray()) throw new MlaException("invalid config: indexer_types must be an array or null, found " + Json.describe(types));
            for (int i = 0; i < types.getAsJsonArray().size(); i++) {
                String t = Json.string(types.getAsJsonArray().get(i), "invalid config: indexer_types[" + i + "]");
                if (!t.equals("full")) {
                    throw new MlaException("invalid config: indexer_types[" + i + "] is " + Messages.quote(t)
                            + " (an indexer shared across layers is not supported; supported: full)");
                }
            }
        }
        Boolean interleave = optBool(o, "indexer_rope_interleave");
        return new IndexerConfig(req(o, "index_n_heads"), req(o, "index_head_dim"), req(o, "index_topk"), "ue8m0".equals(scaleFmt),
                interleave != null && interleave);
    }

    /**
     * scale_fmt of the FP8 activation scales: Hugging Face writes it in quantization_config (V3.1, V3.2), DeepSeek's
     * inference config at the top; both, if present, must agree. "ue8m0" or absent (null); anything else is refused.
     * Only the indexer's FP8 quantisation uses it here (other activations stay f32).
     */
    private static String scaleFmt(JsonObject o) {
        String top = optString(o, "scale_fmt", "scale_fmt");
        JsonElement q = o.get("quantization_config");
        String inQ = q != null && q.isJsonObject() ? optString(q.getAsJsonObject(), "scale_fmt", "quantization_config.scale_fmt") : null;
        if (top != null && inQ != null && !top.equals(inQ)) {
            throw new MlaException("invalid config: scale_fmt " + Messages.quote(top) + " differs from quantization_config.scale_fmt " + Messages.quote(inQ));
        }
        String f = top != null ? top : inQ;
        if (f != null && !f.equals("ue8m0")) {
            throw new MlaException("invalid config: unsupported scale_fmt " + Messages.quote(f) + " (supported: ue8m0, or none for amax/448 scales)");
        }
        return f;
    }

    private static boolean present(JsonObject o, String key) {
        JsonElement e = o.get(key);
        return e != null && !e.isJsonNull();
    }

    /** A boolean, or null when the key is absent or null. */
    private static Boolean optBool(JsonObject o, String key) {
        JsonElement e = o.get(key);
        if (e == null || e.isJsonNull()) return null;
        if (!e.isJsonPrimitive() || !e.getAsJsonPrimitive().isBoolean()) {
            throw new MlaException("invalid config: " + key + " must be true or false, found " + Json.describe(e));
        }
        return e.getAsBoolean();
    }

    /** What the refusals of quantization_config name as supported. */
    private static final String SUPPORTED_QUANTIZATION = "(supported: quant_method fp8 with fmt e4m3 and weight_block_size [128, 128], "
            + "DeepSeek-V3's block-scaled FP8 weights)";

    /**
     * Whether quantization_config declares DeepSeek's FP8 weights; any other quantization is refused, as the
     * weights would be read wrongly. activation_scheme is not used (activations stay f32 here).
     */
    private static boolean fp8Weights(JsonElement q) {
        if (q == null || q.isJsonNull()) return false;
        if (!q.isJsonObject()) throw new MlaException("invalid config: quantization_config must be an object or null, found " + Json.describe(q));
        JsonObject o = q.getAsJsonObject();
        String method = optString(o, "quant_method", "quantization_config.quant_method");
        if (method == null) throw new MlaException("invalid config: quantization_config has no quant_method " + SUPPORTED_QUANTIZATION);
        if (!method.equals("fp8")) {
            throw new MlaException("invalid config: unsupported quantization_config.quant_method " + Messages.quote(method) + " " + SUPPORTED_QUANTIZATION);
        }
        String fmt = optString(o, "fmt", "quantization_config.fmt");
        if (fmt != null && !fmt.equals("e4m3")) {
            throw new MlaException("invalid config: unsupported quantization_config.fmt " + Messages.quote(fmt) + " " + SUPPORTED_QUANTIZATION);
        }
        optString(o, "activation_scheme", "quantization_config.activation_scheme");
        JsonElement b = o.get("weight_block_size");
        if (b == null || b.isJsonNull()) {
            throw new MlaException("invalid config: quantization_config has no weight_block_size (per-tensor FP8 is not read) " + SUPPORTED_QUANTIZATION);
        }
        if (!b.isJsonArray()) throw new MlaException("invalid config: quantization_config.weight_block_size must be an array, found " + Json.describe(b));
        List<Integer> size = new java.util.ArrayList<>();
        for (int i = 0; i < b.getAsJsonArray().size(); i++) {
            size.add(Json.integer(b.getAsJsonArray().get(i), "invalid config: quantization_config.weight_block_size[" + i + "]"));
        }
        if (!size.equals(List.of(128, 128))) {
            throw new MlaException("invalid config: unsupported quantization_config.weight_block_size " + size + " " + SUPPORTED_QUANTIZATION);
        }
        return true;
    }

    private static int req(JsonObject o, String key) {
        JsonElement e = o.get(key);
        if (e == null || e.isJsonNull()) throw new MlaException("invalid config: missing '" + key + "'");
        return Json.integer(e, "invalid config: " + key);
    }

    /** An integer, or the default when the key is absent or null (HF writes "q_lora_rank": null). */
    private static int optInt(JsonObject o, String key, int dflt, String prefix) {
        JsonElement e = o.get(key);
        return e == null || e.isJsonNull() ? dflt : Json.integer(e, "invalid config: " + prefix + key);
    }

    /** A number, or the default when the key is absent or null. */
    private static double num(JsonObject o, String key, double dflt, String prefix) {
        JsonElement e = o.get(key);
        return e == null || e.isJsonNull() ? dflt : Json.number(e, "invalid config: " + prefix + key);
    }

    private static String optString(JsonObject o, String key, String name) {
        JsonElement e = o.get(key);
        return e == null || e.isJsonNull() ? null : Json.string(e, "invalid config: " + name);
    }

    /** The config as HF config.json text (the fields this library reads). */
    public String toJson() {
        JsonObject o = new JsonObject();
        o.addProperty("model_type", indexer != null ? "deepseek_v32" : "deepseek_v3");
        o.addProperty("hidden_size", hiddenSize);
        o.addProperty("num_attention_heads", numHeads);
        if (qLoraRank > 0) o.addProperty("q_lora_rank", qLoraRank); else o.add("q_lora_rank", com.google.gson.JsonNull.INSTANCE);
        o.addProperty("kv_lora_rank", kvLoraRank);
        o.addProperty("qk_nope_head_dim", qkNopeHeadDim);
        o.addProperty("qk_rope_head_dim", qkRopeHeadDim);
        o.addProperty("v_head_dim", vHeadDim);
        o.addProperty("rope_theta", ropeTheta);
        o.addProperty("rms_norm_eps", rmsNormEps);
        o.addProperty("max_position_embeddings", maxPositionEmbeddings);
        o.addProperty("num_hidden_layers", numHiddenLayers);
        if (ropeScaling != null) {
            JsonObject r = new JsonObject();
            r.addProperty("type", "yarn");
            r.addProperty("factor", ropeScaling.factor());
            r.addProperty("original_max_position_embeddings", ropeScaling.originalMaxPositionEmbeddings());
            r.addProperty("beta_fast", ropeScaling.betaFast());
            r.addProperty("beta_slow", ropeScaling.betaSlow());
            r.addProperty("mscale", ropeScaling.mscale());
            r.addProperty("mscale_all_dim", ropeScaling.mscaleAllDim());
            o.add("rope_scaling", r);
        }
        if (indexer != null) {
            o.addProperty("index_n_heads", indexer.nHeads());
            o.addProperty("index_head_dim", indexer.headDim());
            o.addProperty("index_topk", indexer.topK());
            if (indexer.ropeInterleaved()) o.addProperty("indexer_rope_interleave", true);
            // at the top, as DeepSeek's inference config has it, so that a cache's config hash (no quantization_config) keeps it
            if (indexer.ue8m0()) o.addProperty("scale_fmt", "ue8m0");
        }
        if (fp8Weights) {
            JsonObject q = new JsonObject();
            q.addProperty("activation_scheme", "dynamic");
            q.addProperty("fmt", "e4m3");
            q.addProperty("quant_method", "fp8");
            com.google.gson.JsonArray block = new com.google.gson.JsonArray();
            block.add(128);
            block.add(128);
            q.add("weight_block_size", block);
            if (indexer != null && indexer.ue8m0()) q.addProperty("scale_fmt", "ue8m0");
            o.add("quantization_config", q);
        }
        return new com.google.gson.GsonBuilder().setPrettyPrinting().create().toJson(o);
    }
}
