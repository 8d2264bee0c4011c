package org.tornadomla.config;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import org.tornadomla.MlaException;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The attention geometry of one DeepSeek MLA layer, with Hugging Face {@code config.json} names.
 * Symbols of docs/design.md: D = hiddenSize, H = numHeads, r_q = qLoraRank (0: plain q_proj), d_c = kvLoraRank,
 * d_n = qkNopeHeadDim, d_r = qkRopeHeadDim, d_v = vHeadDim.
 *
 * @param ropeScaling null when the config has no rope_scaling
 */
public record MlaConfig(int hiddenSize, int numHeads, int qLoraRank, int kvLoraRank, int qkNopeHeadDim,
                        int qkRopeHeadDim, int vHeadDim, double ropeTheta, double rmsNormEps,
                        int maxPositionEmbeddings, int numHiddenLayers, RopeScaling ropeScaling) {

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
        if (!(rmsNormEps > 0) || Double.isInfinite(rmsNormEps))
            throw new MlaException("invalid config: rms_norm_eps must be a finite number > 0, found " + rmsNormEps);
        if (ropeScaling != null) {
            if (!(ropeScaling.factor() > 0))
                throw new MlaException("invalid config: rope_scaling.factor must be > 0, found " + ropeScaling.factor());
            positive("rope_scaling.original_max_position_embeddings", ropeScaling.originalMaxPositionEmbeddings());
            if (!(ropeScaling.betaFast() > 0) || !(ropeScaling.betaSlow() > 0))
                throw new MlaException("invalid config: rope_scaling.beta_fast and beta_slow must be > 0, found "
                        + ropeScaling.betaFast() + " and " + ropeScaling.betaSlow());
        }
    }

    private static void positive(String name, int v) {
        if (v <= 0) throw new MlaException("invalid config: " + name + " must be > 0, found " + v);
    }

    /** d_n + d_r: the width of one head's query and key. */
    public int qkHeadDim() {
        return qkNopeHeadDim + qkRopeHeadDim;
    }

    /** d_c + d_r: numbers cached per token per layer. */
    public int cacheWidth() {
        return kvLoraRank + qkRopeHeadDim;
    }

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
                ropeTheta, rmsNormEps, maxPositionEmbeddings, numHiddenLayers, ropeScaling);
    }

    // ---------------------------------------------------------------- presets

    /** DeepSeek-V3 (and R1): D=7168, H=128, r_q=1536, d_c=512, YaRN factor 40. */
    public static MlaConfig deepseekV3() {
        return new MlaConfig(7168, 128, 1536, 512, 128, 64, 128, 10000, 1e-6, 163840, 61,
                new RopeScaling(40, 4096, 32, 1, 1.0, 1.0));
    }

    /** DeepSeek-V2-Lite: D=2048, H=16, plain q_proj, d_c=512, YaRN factor 40. */
    public static MlaConfig deepseekV2Lite() {
        return new MlaConfig(2048, 16, 0, 512, 128, 64, 128, 10000, 1e-6, 163840, 27,
                new RopeScaling(40, 4096, 32, 1, 0.707, 0.707));
    }

    /** The preset names {@link #preset(String)} knows. */
    public static final String[] PRESETS = {"deepseek-v3", "deepseek-v2-lite"};

    public static MlaConfig preset(String name) {
        return switch (name.toLowerCase(Locale.ROOT)) {
            case "deepseek-v3" -> deepseekV3();
            case "deepseek-v2-lite" -> deepseekV2Lite();
            default -> throw new MlaException("unknown preset '" + name + "' (expected one of: "
                    + String.join(", ", PRESETS) + ")");
        };
    }

    // ---------------------------------------------------------------- config.json

    public static MlaConfig load(Path configJson) {
        String text;
        try {
            text = Files.readString(configJson, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw new MlaException("config file not found: " + configJson);
        } catch (IOException e) {
            throw new MlaException("cannot read config " + configJson + ": " + e.getMessage(), e);
        }
        try {
            return fromJson(text);
        } catch (MlaException e) {
            throw new MlaException(configJson + ": " + e.getMessage(), e);
        }
    }

    /** Reads a Hugging Face DeepSeek config.json; fields this library does not use are ignored. */
    public static MlaConfig fromJson(String json) {
        JsonObject o;
        try {
            JsonElement e = JsonParser.parseString(json);
            if (!e.isJsonObject()) throw new MlaException("invalid config: expected a JSON object, found " + kind(e));
            o = e.getAsJsonObject();
        } catch (JsonParseException e) {
            throw new MlaException("invalid config: not valid JSON (" + e.getMessage() + ")", e);
        }
        RopeScaling scaling = null;
        JsonElement rs = o.get("rope_scaling");
        if (rs != null && !rs.isJsonNull()) {
            if (!rs.isJsonObject()) throw new MlaException("invalid config: rope_scaling must be an object or null, found " + kind(rs));
            JsonObject r = rs.getAsJsonObject();
            String type = optString(r, "type", optString(r, "rope_type", null));
            if (type == null)
                throw new MlaException("invalid config: rope_scaling has neither 'type' nor 'rope_type' (expected \"yarn\")");
            if (!type.equals("yarn"))
                throw new MlaException("invalid config: unsupported rope_scaling type '" + type + "' (supported: yarn)");
            if (!r.has("factor")) throw new MlaException("invalid config: rope_scaling of type yarn needs 'factor'");
            scaling = new RopeScaling(num(r, "factor", 0), (int) num(r, "original_max_position_embeddings", 4096),
                    num(r, "beta_fast", 32), num(r, "beta_slow", 1), num(r, "mscale", 1), num(r, "mscale_all_dim", 0));
        }
        return new MlaConfig(req(o, "hidden_size"), req(o, "num_attention_heads"), (int) num(o, "q_lora_rank", 0),
                req(o, "kv_lora_rank"), req(o, "qk_nope_head_dim"), req(o, "qk_rope_head_dim"), req(o, "v_head_dim"),
                num(o, "rope_theta", 10000), num(o, "rms_norm_eps", 1e-6), req(o, "max_position_embeddings"),
                (int) num(o, "num_hidden_layers", 1), scaling);
    }

    private static String kind(JsonElement e) {
        return e.isJsonArray() ? "an array" : e.isJsonPrimitive() ? "'" + e + "'" : e.isJsonNull() ? "null" : "an object";
    }

    private static int req(JsonObject o, String key) {
        JsonElement e = o.get(key);
        if (e == null || e.isJsonNull()) throw new MlaException("invalid config: missing '" + key + "'");
        double v = number(key, e);
        if (v != Math.rint(v) || Math.abs(v) > Integer.MAX_VALUE)
            throw new MlaException("invalid config: " + key + " must be an integer, found " + e);
        return (int) v;
    }

    /** A number, or the default when the key is absent or null (HF writes "q_lora_rank": null). */
    private static double num(JsonObject o, String key, double dflt) {
        JsonElement e = o.get(key);
        return e == null || e.isJsonNull() ? dflt : number(key, e);
    }

    private static double number(String key, JsonElement e) {
        if (!e.isJsonPrimitive() || !e.getAsJsonPrimitive().isNumber())
            throw new MlaException("invalid config: " + key + " must be a number, found " + e);
        return e.getAsDouble();
    }

    private static String optString(JsonObject o, String key, String dflt) {
        JsonElement e = o.get(key);
        return e == null || e.isJsonNull() ? dflt : e.getAsString();
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
        return new com.google.gson.GsonBuilder().setPrettyPrinting().create().toJson(o);
    }
}
