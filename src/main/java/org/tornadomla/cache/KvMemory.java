package org.tornadomla.cache;

import org.tornadomla.internal.Messages;
import org.tornadomla.MlaException;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.io.Json;

import java.nio.file.Path;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * KV-cache memory of a model per token and per request, for MLA and the standard schemes. Numbers cached
 * per token and layer:
 * <ul>
 *   <li>MHA and GQA: kvHeads·(d_k + d_v) — a key and a value per key/value head (MHA: kvHeads = heads,
 *       MQA: 1);</li>
 *   <li>MLA: d_c + d_r — the latent serves as key and value (no ×2), plus one roped key shared by all heads.</li>
 * </ul>
 * Bytes multiply by the storage size: f32 4, bf16/f16 2, fp8/int8 1 (the per-token scales of a quantised
 * cache are extra: see {@link #MLA_FP8_FLASHMLA_BYTES}).
 */
public final class KvMemory {
    private KvMemory() {
    }

    /** FlashMLA's fp8 cache row: 512 e4m3 bytes + 4 fp32 scales + 64 bf16 rope numbers = 656 bytes. */
    public static final int MLA_FP8_FLASHMLA_BYTES = 512 + 4 * 4 + 64 * 2;

    /**
     * A model's attention cache geometry. kvLoraRank &gt; 0 marks MLA; indexerBytes &gt; 0 marks DeepSeek Sparse
     * Attention, whose lightning indexer caches that many bytes per token and layer beside the latent (V3.2: an
     * e4m3 key of 128 and its fp32 scale, 132), whatever the latent's dtype.
     */
    public record Model(String name, int layers, int heads, int kvHeads, int keyDim, int valueDim, int kvLoraRank, int ropeDim, int indexerBytes) {
        /** A model without an indexer (dense attention). */
        public Model(String name, int layers, int heads, int kvHeads, int keyDim, int valueDim, int kvLoraRank, int ropeDim) {
            this(name, layers, heads, kvHeads, keyDim, valueDim, kvLoraRank, ropeDim, 0);
        }

        /** Whether this is an MLA model (a latent cache). */
        public boolean isMla() {
            return kvLoraRank > 0;
        }

        /** An MLA model's geometry from its config. */
        public static Model of(String name, MlaConfig c) {
            return new Model(name, c.numHiddenLayers(), c.numHeads(), c.numHeads(), c.qkHeadDim(), c.vHeadDim(), c.kvLoraRank(), c.qkRopeHeadDim(),
                    c.sparse() ? c.indexer().cacheBytesPerToken() : 0);
        }

        /** A multi-head or grouped-query model (kvHeads = heads: MHA) for comparison. */
        public static Model gqa(String name, int layers, int heads, int kvHeads, int headDim) {
            return new Model(name, layers, heads, kvHeads, headDim, headDim, 0, 0);
        }
    }

    /** One way to cache a model's keys and values. */
    public record Scheme(String name, long numbersPerTokenPerLayer) {
    }

    /**
     * A model `mla kv-memory` knows by name: an MLA preset of {@link MlaConfig#PRESETS} (the one preset registry), or
     * one of the MHA/GQA {@link #COMPARISON_MODELS}, which are no MLA configs and exist only to compare caches with.
     */
    public static Model preset(String name) {
        String n = name.toLowerCase(Locale.ROOT);
        if (MlaConfig.PRESETS.contains(n)) return Model.of(n, MlaConfig.preset(n));
        return switch (n) {
            case "llama-3.1-405b" -> Model.gqa("llama-3.1-405b", 126, 128, 8, 128);
            case "qwen-2.5-72b" -> Model.gqa("qwen-2.5-72b", 80, 64, 8, 128);
            case "llama-2-7b" -> Model.gqa("llama-2-7b", 32, 32, 32, 128);
            default -> throw new MlaException("unknown model " + Messages.quote(name) + " (MLA presets: " + MlaConfig.PRESET_NAMES
                    + "; MHA/GQA comparison models: " + COMPARISON_NAMES + ")");
        };
    }

    /** The MHA/GQA comparison models' names, comma-separated (a constant, for the command's help). */
    public static final String COMPARISON_NAMES = "llama-3.1-405b, qwen-2.5-72b, llama-2-7b";

    /** MHA/GQA models kv-memory compares MLA with (their cache shapes only: they are no MLA presets). */
    public static final List<String> COMPARISON_MODELS = List.of(COMPARISON_NAMES.split(", "));

    /** Every name {@link #preset} knows: the MLA presets, then the comparison models. */
    public static final List<String> PRESETS = java.util.stream.Stream.concat(MlaConfig.PRESETS.stream(), COMPARISON_MODELS.stream()).toList();

    /**
     * The schemes to compare for a model: an MLA model's own cache and what MHA, GQA with {@code groups}
     * key/value heads and MQA would cache with its attention geometry (keys d_n + d_r wide, values d_v); a
     * GQA/MHA model's own cache.
     */
    public static List<Scheme> schemes(Model m, int groups) {
        List<Scheme> out = new ArrayList<>();
        long kv = m.keyDim() + m.valueDim();
        if (m.isMla()) {
            out.add(new Scheme("MLA (c_kv " + m.kvLoraRank() + " + k_pe " + m.ropeDim() + ")", m.kvLoraRank() + m.ropeDim()));
            out.add(new Scheme("MHA (" + m.heads() + " × (" + m.keyDim() + " + " + m.valueDim() + "))", m.heads() * kv));
            if (groups > 1 && groups < m.heads()) out.add(new Scheme("GQA (" + groups + " KV heads)", groups * kv));
            out.add(new Scheme("MQA (1 KV head)", kv));
        } else {
            String kind = m.kvHeads() == m.heads() ? "MHA" : m.kvHeads() == 1 ? "MQA" : "GQA";
            out.add(new Scheme(kind + " (" + m.kvHeads() + " KV heads × (" + m.keyDim() + " + " + m.valueDim() + "))", m.kvHeads() * kv));
        }
        return out;
    }

    /** Bytes per stored number for a dtype name: f32 4, bf16/f16 2, fp8/int8 1. */
    public static int bytes(String dtype) {
        return switch (dtype.toLowerCase(Locale.ROOT)) {
            case "f32", "fp32" -> 4;
            case "bf16", "f16", "fp16" -> 2;
            case "fp8", "int8", "e4m3" -> 1;
            default -> throw new MlaException("unknown dtype '" + dtype + "' (expected f32, bf16, f16, fp8 or int8)");
        };
    }

    /** "1.2 GB", "70.3 KB": decimal units. */
    public static String human(double bytes) {
        String[] u = {"B", "KB", "MB", "GB", "TB"};
        int i = 0;
        while (bytes >= 1000 && i < u.length - 1) {
            bytes /= 1000;
            i++;
        }
        return i == 0 ? String.format(Locale.ROOT, "%.0f B", bytes) : String.format(Locale.ROOT, "%.1f %s", bytes, u[i]);
    }

    /** Largest head count, head size or layer count read from an MHA/GQA config (real ones are below 1,000). */
    static final int MAX_DIM = 1_000_000;

    /**
     * The cache shape of the model a Hugging Face config.json describes: MLA (read by {@link MlaConfig#load}) when it
     * has kv_lora_rank, else MHA/GQA from num_attention_heads, num_key_value_heads (default: the heads),
     * head_dim (default: hidden_size / heads) and num_hidden_layers, read as strictly as MlaConfig reads.
     */
    public static Model fromConfig(Path file) {
        JsonElement root = Json.readFile(file, Json.MAX_CONFIG_BYTES, "config");
        if (!root.isJsonObject()) throw new MlaException(file + ": invalid config: expected a JSON object, found " + Json.describe(root));
        JsonObject o = root.getAsJsonObject();
        String name = String.valueOf(file.getFileName());
        if (o.has("kv_lora_rank") && !o.get("kv_lora_rank").isJsonNull()) return Model.of(name, MlaConfig.load(file));
        int heads = intField(o, "num_attention_heads", null, file);
        int hidden = intField(o, "hidden_size", null, file);
        int kvHeads = intField(o, "num_key_value_heads", heads, file);
        int headDim = intField(o, "head_dim", Math.max(1, hidden / heads), file);
        return Model.gqa(name, intField(o, "num_hidden_layers", null, file), heads, kvHeads, headDim);
    }

    /** A whole number in 1 … {@link #MAX_DIM}; {@code dflt} when absent or null (null: required). */
    private static int intField(JsonObject o, String key, Integer dflt, Path file) {
        JsonElement e = o.get(key);
        if (e == null || e.isJsonNull()) {
            if (dflt == null) throw new MlaException(file + ": invalid config: missing '" + key + "'");
            return dflt;
        }
        int v = Json.integer(e, file + ": invalid config: " + key);
        if (v < 1 || v > MAX_DIM) throw new MlaException(file + ": invalid config: " + key + " must be in 1 … " + MAX_DIM + ", found " + v);
        return v;
    }

}
