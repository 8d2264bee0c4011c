package org.tornadomla.config;

import org.junit.jupiter.api.Test;
import org.tornadomla.MlaException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MlaConfigTest {
    /** The attention part of DeepSeek-V3's config.json, with some of its other fields. */
    static final String V3 = """
            {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 7168,
             "num_attention_heads": 128, "num_key_value_heads": 128, "q_lora_rank": 1536, "kv_lora_rank": 512,
             "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "rope_theta": 10000,
             "rms_norm_eps": 1e-06, "max_position_embeddings": 163840, "num_hidden_layers": 61,
             "n_routed_experts": 256, "torch_dtype": "bfloat16",
             "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 1.0, "mscale_all_dim": 1.0,
                              "original_max_position_embeddings": 4096, "type": "yarn"}}""";

    @Test
    void readsHuggingFaceConfigAndIgnoresOtherFields() {
        MlaConfig c = MlaConfig.fromJson(V3);
        assertEquals(MlaConfig.deepseekV3(), c);
        assertEquals(576, c.cacheWidth());
    }

    @Test
    void softmaxScalesOfThePresets() {
        // docs/design.md §1.2: V3 0.135234, V2-Lite 0.114721
        // V3: 192^(−1/2)·(0.1·ln 40 + 1)² = 0.0721688·1.368888² = 0.135234
        assertEquals(0.135234, MlaConfig.deepseekV3().softmaxScale(), 1e-6);
        // V2-Lite: 0.0721688·(0.1·0.707·ln 40 + 1)² = 0.0721688·1.260804² = 0.114721
        assertEquals(0.114721, MlaConfig.deepseekV2Lite().softmaxScale(), 1e-6);
        assertEquals(1.0, MlaConfig.deepseekV3().ropeScaling().cosSinScale(), 1e-12);
    }

    @Test
    void nullQLoraRankMeansPlainQProjAndRopeTypeIsAccepted() {
        MlaConfig c = MlaConfig.fromJson(V3.replace("\"q_lora_rank\": 1536", "\"q_lora_rank\": null")
                .replace("\"type\": \"yarn\"", "\"rope_type\": \"yarn\""));
        assertEquals(0, c.qLoraRank());
        assertTrue(!c.hasQLora());
        assertEquals(40, c.ropeScaling().factor());
        MlaConfig none = MlaConfig.fromJson(V3.replaceAll("\"rope_scaling\": \\{[^}]*}", "\"rope_scaling\": null"));
        assertNull(none.ropeScaling());
        assertEquals(1 / Math.sqrt(192), none.softmaxScale(), 1e-15);
    }

    @Test
    void roundTripsThroughJson() {
        for (MlaConfig c : new MlaConfig[] {MlaConfig.deepseekV3(), MlaConfig.deepseekV2Lite()}) {
            assertEquals(c, MlaConfig.fromJson(c.toJson()));
        }
        assertEquals(MlaConfig.deepseekV2Lite(), MlaConfig.preset("DeepSeek-V2-Lite"));
    }

    @Test
    void invalidConfigsFailWithOneClearMessage() {
        assertEquals("invalid config: qk_rope_head_dim must be even (RoPE rotates pairs), found 63",
                assertThrows(MlaException.class, () -> MlaConfig.fromJson(V3.replace("\"qk_rope_head_dim\": 64", "\"qk_rope_head_dim\": 63"))).getMessage());
        assertEquals("invalid config: kv_lora_rank must be > 0, found 0",
                assertThrows(MlaException.class, () -> MlaConfig.fromJson(V3.replace("\"kv_lora_rank\": 512", "\"kv_lora_rank\": 0"))).getMessage());
        assertEquals("invalid config: unsupported rope_scaling type 'linear' (supported: yarn)",
                assertThrows(MlaException.class, () -> MlaConfig.fromJson(V3.replace("\"type\": \"yarn\"", "\"type\": \"linear\""))).getMessage());
        assertEquals("invalid config: missing 'hidden_size'",
                assertThrows(MlaException.class, () -> MlaConfig.fromJson(V3.replace("\"hidden_size\": 7168,", ""))).getMessage());
        assertEquals("invalid config: num_attention_heads must be a number, found \"many\"",
                assertThrows(MlaException.class, () -> MlaConfig.fromJson(V3.replace("\"num_attention_heads\": 128", "\"num_attention_heads\": \"many\""))).getMessage());
        assertTrue(assertThrows(MlaException.class, () -> MlaConfig.fromJson("{not json")).getMessage().startsWith("invalid config: not valid JSON"));
        assertTrue(assertThrows(MlaException.class, () -> MlaConfig.preset("llama")).getMessage().contains("deepseek-v3, deepseek-v2-lite"));
    }
}
