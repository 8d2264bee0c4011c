package org.tornadomla.config;

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
 */
public record MlaConfig(int hiddenSize, int numHeads, int qLoraRank, int kvLoraRank, int qkNopeHeadDim,
                        int qkRopeHeadDim, int vHeadDim, double ropeTheta, double rmsNormEps,
                        int maxPositionEmbeddings, int numHiddenLayers, RopeScaling ropeScaling, boolean fp8Weights) {

    /** A config without quantization_config. */
    public MlaConfig(int hiddenSize, int numHeads, int qLoraRank, int kvLoraRank, int qkNopeHeadDim,
                     int qkRopeHeadDim, int vHeadDim, double ropeTheta, double rmsNormEps,
                     int maxPositionEmbeddings, int numHiddenLayers, RopeScaling ropeScaling) {
        this(hiddenSize, numHeads, qLoraRank, kvLoraRank, qkNopeHeadDim, qkRopeHeadDim, vHeadDim, ropeTheta, rmsNormEps,
                maxPositionEmbeddings, numHiddenLayers, ropeScaling, false);
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
     * cos/sin multiplier finite and at most {@link #MAX_SCALE} as floats, the RoPE frequencies finite.
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

    /** s = (d_n + d_r)^(-1/2), times mscale² under YaRN (docs/design.md §1.2). */
    public double softmaxScale() {
        double s = 1.0 / Math.sqrt(qkHeadDim());
        return ropeScaling == null ? s : s * ropeScaling.softmaxScaleFactor();
    }

    /** A copy with another hidden size (used for demos that keep the attention geometry). */
    public MlaConfig withHiddenSize(int d) {
        return new MlaConfig(d, numHeads, qLoraRank, kvLoraRank, qkNopeHeadDim, qkRopeHeadDim, vHeadDim,
                ropeTheta, rmsNormEps, maxPositionEmbeddings, numHiddenLayers, ropeScaling, fp8Weights);
    }

    /** A copy with another number of query heads (decode shapes of a model cut across GPUs keep the rest). */
    public MlaConfig withHeads(int heads) {
        return new MlaConfig(hiddenSize, heads, qLoraRank, kvLoraRank, qkNopeHeadDim, qkRopeHeadDim, vHeadDim,
                ropeTheta, rmsNormEps, maxPositionEmbeddings, numHiddenLayers, ropeScaling, fp8Weights);
    }

    /** A copy with or without the FP8 quantization_config (what the layer computes is the same). */
    public MlaConfig withFp8Weights(boolean fp8) {
        return new MlaConfig(hiddenSize, numHeads, qLoraRank, kvLoraRank, qkNopeHeadDim, qkRopeHeadDim, vHeadDim,
                ropeTheta, rmsNormEps, maxPositionEmbeddings, numHiddenLayers, ropeScaling, fp8);
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
     * The preset names, comma-separated, as the commands' help shows them (a constant, so that an option's
     * description can name them): {@link #PRESETS} is this list.
     */
    public static final String PRESET_NAMES = "deepseek-v3, deepseek-r1, deepseek-v2, deepseek-v2-lite";

    /**
     * The MLA presets {@link #preset(String)} knows, the one registry of the API and every command ({@code demo
     * --preset}, {@code kv-memory --preset}): deepseek-v3, deepseek-r1 (DeepSeek-R1: the same attention config as
     * V3), deepseek-v2 and deepseek-v2-lite.
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
            default -> throw new MlaException("unknown preset " + MlaException.quote(name) + " (MLA presets: " + PRESET_NAMES + ")");
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
                    ? "model_type " + MlaException.quote(type.getAsString()) : type == null ? "no model_type" : "model_type " + Json.describe(type);
            throw new MlaException("invalid config: not an MLA model (" + what + "): it has no kv_lora_rank, the latent width of "
                    + "Multi-head Latent Attention (DeepSeek-V2/V3/R1 configs, model_type deepseek_v2 or deepseek_v3, have one)");
        }
        RopeScaling scaling = null;
        JsonElement rs = o.get("rope_scaling");
        if (rs != null && !rs.isJsonNull()) {
            if (!rs.isJsonObject()) throw new MlaException("invalid config: rope_scaling must be an object or null, found " + Json.describe(rs));
            JsonObject r = rs.getAsJsonObject();
            String type = optString(r, "type", "rope_scaling.type");
            if (type == null) type = optString(r, "rope_type", "rope_scaling.rope_type");
            if (type == null)
                throw new MlaException("invalid config: rope_scaling has neither 'type' nor 'rope_type' (expected \"yarn\")");
            if (!type.equals("yarn"))
                throw new MlaException("invalid config: unsupported rope_scaling type " + MlaException.quote(type) + " (supported: yarn)");
            if (!r.has("factor") || r.get("factor").isJsonNull()) throw new MlaException("invalid config: rope_scaling of type yarn needs 'factor'");
            scaling = new RopeScaling(num(r, "factor", 0, "rope_scaling."),
                    optInt(r, "original_max_position_embeddings", 4096, "rope_scaling."),
                    num(r, "beta_fast", 32, "rope_scaling."), num(r, "beta_slow", 1, "rope_scaling."),
                    num(r, "mscale", 1, "rope_scaling."), num(r, "mscale_all_dim", 0, "rope_scaling."));
        }
        return new MlaConfig(req(o, "hidden_size"), req(o, "num_attention_heads"), optInt(o, "q_lora_rank", 0, ""),
                req(o, "kv_lora_rank"), req(o, "qk_nope_head_dim"), req(o, "qk_rope_head_dim"), req(o, "v_head_dim"),
                num(o, "rope_theta", 10000, ""), num(o, "rms_norm_eps", 1e-6, ""), req(o, "max_position_embeddings"),
                optInt(o, "num_hidden_layers", 1, ""), scaling, fp8Weights(o.get("quantization_config")));
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
            throw new MlaException("invalid config: unsupported quantization_config.quant_method " + MlaException.quote(method) + " " + SUPPORTED_QUANTIZATION);
        }
        String fmt = optString(o, "fmt", "quantization_config.fmt");
        if (fmt != null && !fmt.equals("e4m3")) {
            throw new MlaException("invalid config: unsupported quantization_config.fmt " + MlaException.quote(fmt) + " " + SUPPORTED_QUANTIZATION);
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
        o.addProperty("model_type", "deepseek_v3");
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
        if (fp8Weights) {
            JsonObject q = new JsonObject();
            q.addProperty("activation_scheme", "dynamic");
            q.addProperty("fmt", "e4m3");
            q.addProperty("quant_method", "fp8");
            com.google.gson.JsonArray block = new com.google.gson.JsonArray();
            block.add(128);
            block.add(128);
            q.add("weight_block_size", block);
            o.add("quantization_config", q);
        }
        return new com.google.gson.GsonBuilder().setPrettyPrinting().create().toJson(o);
    }
}
