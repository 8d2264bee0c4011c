package org.tornadomla.cache;

import org.tornadomla.internal.Messages;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import org.tornadomla.MlaException;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.weights.MlaWeights;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.TreeSet;

/**
 * Which layer of which model a latent cache belongs to: everything that changes what its rows mean.
 * <ul>
 *   <li>{@code config}: the attention config without quantization_config (how the weights are stored does not
 *   change a cache; rope_theta, rope_scaling, rms_norm_eps and every dimension do), hashed as
 *   {@link #configSha256()}: SHA-256 of its canonical JSON ({@link MlaConfig#toJson()});</li>
 *   <li>{@code layer}: the layer index ({@code model.layers.{layer}});</li>
 *   <li>{@code weightsSha256}: SHA-256 of the two weights that produce the cached rows, kv_a_proj_with_mqa and
 *   kv_a_layernorm, taken from their values as the checkpoint (or the given tensors) holds them, dequantised to
 *   f32 ({@link MlaWeights#kvDigest()} says exactly how): the same layer of one checkpoint held as f32, bf16 or
 *   fp8 has one identity.</li>
 * </ul>
 * A layer stamps the caches it makes ({@code MlaLayer.newCache}) and the caches it fills; a cache refuses a
 * step from a layer of another identity, and a cache file or a store's block value carries the identity of the
 * cache it came from, so that an import into a cache of another identity is refused naming what differs
 * ({@link #differences}).
 */
public record CacheIdentity(MlaConfig config, int layer, String weightsSha256) {
    /** Checks the components. */
    public CacheIdentity {
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(weightsSha256, "weightsSha256");
        if (layer < 0) throw new MlaException("cache identity: layer must be >= 0, found " + layer);
        if (!weightsSha256.matches("[0-9a-f]{64}")) {
            throw new MlaException("cache identity: the weights' SHA-256 must be 64 lower-case hex digits, found " + Messages.quote(weightsSha256));
        }
        config = config.withFp8Weights(false);
    }

    /** The identity of the caches a layer of these weights fills: their config, {@link MlaWeights#layer()} and {@link MlaWeights#kvDigest()}. */
    public static CacheIdentity of(MlaWeights weights) {
        Objects.requireNonNull(weights, "weights");
        return new CacheIdentity(weights.config(), weights.layer(), weights.kvDigest());
    }

    /** SHA-256 (hex) of the config's canonical JSON without quantization_config. */
    public String configSha256() {
        return configHash(config);
    }

    /** SHA-256 (hex) of {@code c}'s canonical JSON without quantization_config: what a cache file and a block key record. */
    public static String configHash(MlaConfig c) {
        return HexFormat.of().formatHex(sha256().digest(c.withFp8Weights(false).toJson().getBytes(StandardCharsets.UTF_8)));
    }

    /** A new SHA-256 digest. */
    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The config's SHA-256 as 32 bytes. */
    public byte[] configShaBytes() {
        return HexFormat.of().parseHex(configSha256());
    }

    /** The weights' SHA-256 as 32 bytes. */
    public byte[] weightsShaBytes() {
        return HexFormat.of().parseHex(weightsSha256);
    }

    /** In words: "layer 3 (config sha256 1a2b3c4d5e6f…, weights sha256 …)". */
    public String describe() {
        return "layer " + layer + " (config sha256 " + configSha256().substring(0, 12) + "…, weights sha256 " + weightsSha256.substring(0, 12) + "…)";
    }

    @Override
    public String toString() {
        return describe();
    }

    /**
     * What differs between this identity and {@code other}, in words, each part once: the config fields by their
     * config.json names with both values ({@code rope_theta 10000.0 vs 50000.0}; rope_scaling's fields as
     * {@code rope_scaling.factor}), the layer index, the weights. Empty when they are equal.
     */
    public String differences(CacheIdentity other) {
        Objects.requireNonNull(other, "other");
        List<String> parts = new ArrayList<>();
        List<String> fields = configDifferences(config, other.config);
        if (!fields.isEmpty()) parts.add("config " + String.join(", ", fields));
        if (layer != other.layer) parts.add("layer " + layer + " vs " + other.layer);
        if (!weightsSha256.equals(other.weightsSha256)) {
            parts.add("weights (kv_a_proj_with_mqa/kv_a_layernorm sha256 " + weightsSha256.substring(0, 12) + "… vs " + other.weightsSha256.substring(0, 12) + "…)");
        }
        return String.join("; ", parts);
    }

    /** The config.json fields in which a and b differ, each "name valueA vs valueB", in name order. */
    public static List<String> configDifferences(MlaConfig a, MlaConfig b) {
        JsonObject ja = flatten(a), jb = flatten(b);
        TreeSet<String> names = new TreeSet<>(ja.keySet());
        names.addAll(jb.keySet());
        List<String> out = new ArrayList<>();
        for (String n : names) {
            JsonElement x = ja.get(n), y = jb.get(n);
            if (!Objects.equals(x, y)) out.add(n + " " + (x == null ? "null" : x) + " vs " + (y == null ? "null" : y));   // toJson leaves out a null q_lora_rank
        }
        return out;
    }

    /** The config's canonical JSON as one level of fields (rope_scaling's as rope_scaling.NAME). */
    private static JsonObject flatten(MlaConfig c) {
        JsonObject o = JsonParser.parseString(c.withFp8Weights(false).toJson()).getAsJsonObject(), flat = new JsonObject();
        for (String k : o.keySet()) {
            if (o.get(k).isJsonObject()) {
                JsonObject inner = o.getAsJsonObject(k);
                for (String i : inner.keySet()) flat.add(k + "." + i, inner.get(i));
            } else {
                flat.add(k, o.get(k));
            }
        }
        return flat;
    }

    /**
     * Throws unless {@code actual} equals {@code expected}: "ACTUAL_WHAT is layer 1 (…), EXPECTED_WHAT is layer 0
     * (…); they differ in layer 1 vs 0".
     */
    public static void requireSame(CacheIdentity expected, CacheIdentity actual, String actualWhat, String expectedWhat) {
        Objects.requireNonNull(expected, "expected");
        Objects.requireNonNull(actual, "actual");
        if (!expected.equals(actual)) {
            throw new MlaException(actualWhat + " is " + actual.describe() + ", " + expectedWhat + " is " + expected.describe()
                    + "; they differ in " + actual.differences(expected));
        }
    }
}
