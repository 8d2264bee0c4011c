package org.tornadomla.config;

import org.tornadomla.cache.CacheIdentity;
import org.junit.jupiter.api.Test;
import org.tornadomla.MlaException;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
             "quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
                                     "weight_block_size": [128, 128]},
             "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 1.0, "mscale_all_dim": 1.0,
                              "original_max_position_embeddings": 4096, "type": "yarn"}}""";

    @Test
    void readsHuggingFaceConfigAndIgnoresOtherFields() {
        MlaConfig c = MlaConfig.fromJson(V3);
        assertEquals(MlaConfig.deepseekV3(), c);
        assertEquals(576, c.cacheWidth());
    }

    @Test
    void copiesChangeOnlyTheirField() {
        MlaConfig v3 = MlaConfig.deepseekV3(), h16 = v3.withHeads(16), d1k = v3.withHiddenSize(1024);
        assertEquals(16, h16.numHeads());
        assertEquals(16 * 192, h16.numHeads() * h16.qkHeadDim());
        assertEquals(v3, h16.withHeads(128));
        assertEquals(1024, d1k.hiddenSize());
        assertEquals(v3, d1k.withHiddenSize(7168));
        assertEquals(v3.softmaxScale(), h16.softmaxScale());
    }

    @Test
    void quantizationConfigIsDeepSeeksFp8OrRefusedClearly() {
        assertTrue(MlaConfig.fromJson(V3).fp8Weights());
        String q = V3.substring(V3.indexOf("\"quantization_config\""), V3.indexOf("]},") + 3);
        assertTrue(!MlaConfig.fromJson(V3.replace(q, "")).fp8Weights());
        assertTrue(!MlaConfig.fromJson(V3.replace(q, "\"quantization_config\": null,")).fp8Weights());
        assertTrue(MlaConfig.fromJson(V3.replace(q, "\"quantization_config\": {\"quant_method\": \"fp8\", \"weight_block_size\": [128, 128]},")).fp8Weights());
        String supported = "(supported: quant_method fp8 with fmt e4m3 and weight_block_size [128, 128], DeepSeek-V3's block-scaled FP8 weights)";
        assertEquals("invalid config: unsupported quantization_config.fmt 'e5m2' " + supported, refused(V3.replace("\"fmt\": \"e4m3\"", "\"fmt\": \"e5m2\"")));
        assertEquals("invalid config: unsupported quantization_config.quant_method 'awq' " + supported,
                refused(V3.replace("\"quant_method\": \"fp8\"", "\"quant_method\": \"awq\"")));
        assertEquals("invalid config: unsupported quantization_config.weight_block_size [64, 64] " + supported,
                refused(V3.replace("[128, 128]", "[64, 64]")));
        assertEquals("invalid config: unsupported quantization_config.weight_block_size [128] " + supported, refused(V3.replace("[128, 128]", "[128]")));
        assertEquals("invalid config: quantization_config has no weight_block_size (per-tensor FP8 is not read) " + supported,
                refused(V3.replace(q, "\"quantization_config\": {\"quant_method\": \"fp8\", \"fmt\": \"e4m3\"},")));
        assertEquals("invalid config: quantization_config has no quant_method " + supported, refused(V3.replace("\"quant_method\": \"fp8\",", "")));
        assertEquals("invalid config: quantization_config.weight_block_size[0] must be an integer, found the string '128'",
                refused(V3.replace("[128, 128]", "[\"128\", 128]")));
        assertEquals("invalid config: quantization_config must be an object or null, found the string 'fp8'",
                refused(V3.replace(q, "\"quantization_config\": \"fp8\",")));
        // the quantization does not change what a cache holds: cache files of both configs are interchangeable
        assertEquals(org.tornadomla.cache.CacheIdentity.configHash(MlaConfig.fromJson(V3)),
                org.tornadomla.cache.CacheIdentity.configHash(MlaConfig.fromJson(V3.replace(q, ""))));
        assertEquals(MlaConfig.deepseekV3(), MlaConfig.fromJson(MlaConfig.deepseekV3().toJson()));
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
    void presetsHoldThePublishedConfigs() {
        // the values of DeepSeek's published config.json files (Hugging Face deepseek-ai/DeepSeek-V2, -V2-Lite, -V3, -R1)
        MlaConfig v2 = MlaConfig.preset("deepseek-v2");
        assertEquals(List.of(5120, 128, 1536, 512, 128, 64, 128, 60, 163840),
                List.of(v2.hiddenSize(), v2.numHeads(), v2.qLoraRank(), v2.kvLoraRank(), v2.qkNopeHeadDim(), v2.qkRopeHeadDim(),
                        v2.vHeadDim(), v2.numHiddenLayers(), v2.maxPositionEmbeddings()));
        assertEquals(10000, v2.ropeTheta());
        assertEquals(new RopeScaling(40, 4096, 32, 1, 0.707, 0.707), v2.ropeScaling());
        assertFalse(v2.fp8Weights());
        MlaConfig lite = MlaConfig.preset("deepseek-v2-lite");
        assertEquals(List.of(2048, 16, 0, 512, 128, 64, 128, 27),
                List.of(lite.hiddenSize(), lite.numHeads(), lite.qLoraRank(), lite.kvLoraRank(), lite.qkNopeHeadDim(), lite.qkRopeHeadDim(),
                        lite.vHeadDim(), lite.numHiddenLayers()));
        MlaConfig v3 = MlaConfig.preset("deepseek-v3");
        assertEquals(List.of(7168, 128, 1536, 512, 128, 64, 128, 61),
                List.of(v3.hiddenSize(), v3.numHeads(), v3.qLoraRank(), v3.kvLoraRank(), v3.qkNopeHeadDim(), v3.qkRopeHeadDim(),
                        v3.vHeadDim(), v3.numHiddenLayers()));
        assertEquals(new RopeScaling(40, 4096, 32, 1, 1.0, 1.0), v3.ropeScaling());
        assertTrue(v3.fp8Weights());
        // DeepSeek-R1 is V3's architecture: the same attention config
        assertEquals(v3, MlaConfig.preset("DeepSeek-R1"));
        assertEquals(List.of("deepseek-v3", "deepseek-r1", "deepseek-v2", "deepseek-v2-lite", "deepseek-v3.2", "kimi-k2", "glm-5", "minicpm3-4b"),
                MlaConfig.PRESETS);
        for (String name : MlaConfig.PRESETS) assertEquals(MlaConfig.preset(name), MlaConfig.fromJson(MlaConfig.preset(name).toJson()));
        // V2: 192^(-1/2)·(0.1·0.707·ln 40 + 1)² = 0.114721, as V2-Lite (the same YaRN values)
        assertEquals(0.114721, v2.softmaxScale(), 1e-6);
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
        // a config of another family is refused for what it is before any of its fields is read
        assertEquals("invalid config: not an MLA model (model_type 'qwen2'): it has no kv_lora_rank, the latent width of Multi-head "
                + "Latent Attention (DeepSeek-V2/V3/R1 configs, model_type deepseek_v2 or deepseek_v3, have one)",
                refused("{\"model_type\": \"qwen2\", \"hidden_size\": 8192, \"rope_scaling\": {\"type\": \"dynamic\", \"factor\": 4}}"));
        assertTrue(refused(V3.replace("\"kv_lora_rank\": 512,", "")).contains("not an MLA model ("), V3);
        assertEquals("invalid config: missing 'hidden_size'",
                assertThrows(MlaException.class, () -> MlaConfig.fromJson(V3.replace("\"hidden_size\": 7168,", ""))).getMessage());
        assertEquals("invalid config: num_attention_heads must be an integer, found the string 'many'",
                assertThrows(MlaException.class, () -> MlaConfig.fromJson(V3.replace("\"num_attention_heads\": 128", "\"num_attention_heads\": \"many\""))).getMessage());
        assertTrue(assertThrows(MlaException.class, () -> MlaConfig.fromJson("{not json")).getMessage().startsWith("invalid config: not valid JSON"));
        String unknown = assertThrows(MlaException.class, () -> MlaConfig.preset("llama")).getMessage();
        for (String name : List.of("deepseek-v3", "deepseek-r1", "deepseek-v2", "deepseek-v2-lite")) assertTrue(unknown.contains(name), unknown);
    }

    private static String refused(String json) {
        String m = assertThrows(MlaException.class, () -> MlaConfig.fromJson(json)).getMessage();
        assertEquals(1, m.lines().count(), m);
        assertTrue(!m.contains("http"), m);
        return m;
    }

    @Test
    void valuesThatMakeOutputsNonFiniteAreRefused() {
        assertTrue(refused(V3.replace("\"factor\": 40", "\"factor\": 1e999")).contains("rope_scaling.factor must be a finite number > 0, found Infinity"));
        assertTrue(refused(V3.replace("\"mscale\": 1.0,", "\"mscale\": 1e300,")).contains("the cos/sin multiplier"));
        assertTrue(refused(V3.replace("\"mscale_all_dim\": 1.0", "\"mscale_all_dim\": 1e300")).contains("the softmax scale"));
        assertTrue(refused(V3.replace("\"mscale_all_dim\": 1.0", "\"mscale_all_dim\": -2.7108")).contains("the cos/sin multiplier"));
        assertTrue(refused(V3.replace("\"rms_norm_eps\": 1e-06", "\"rms_norm_eps\": 1e-300")).contains("rms_norm_eps must be"));
        assertTrue(refused(V3.replace("\"rope_theta\": 10000", "\"rope_theta\": 1e999")).contains("rope_theta must be a finite number"));
        assertTrue(refused(V3.replace("\"beta_fast\": 32", "\"beta_fast\": -1")).contains("beta_fast and beta_slow"));
        assertTrue(refused(V3.replace("\"hidden_size\": 7168", "\"hidden_size\": 2000000000")).contains("more than one Java array holds"));
        // every config that loads gives a finite softmax scale, cos/sin multiplier and RoPE frequencies
        MlaConfig ok = MlaConfig.fromJson(V3.replace("\"mscale\": 1.0,", "\"mscale\": 30,"));
        assertTrue(Float.isFinite((float) ok.softmaxScale()) && Float.isFinite(RopeFrequencies.cosSinScale(ok)));
    }

    @Test
    void wrongTypesAreNamedAndJsonIsStrict() {
        assertEquals("invalid config: rope_scaling.type must be a string, found an object",
                refused(V3.replace("\"type\": \"yarn\"", "\"type\": {}")));
        assertEquals("invalid config: q_lora_rank must be an integer in -2147483648 … 2147483647, found the number 1.5",
                refused(V3.replace("\"q_lora_rank\": 1536", "\"q_lora_rank\": 1.5")));
        assertEquals("invalid config: rope_scaling.original_max_position_embeddings must be an integer in -2147483648 … 2147483647, found the number 1e20",
                refused(V3.replace("\"original_max_position_embeddings\": 4096", "\"original_max_position_embeddings\": 1e20")));
        assertTrue(refused(V3.replace("\"hidden_size\": 7168,", "\"hidden_size\": 7168, \"hidden_size\": 1024,")).contains("duplicate key 'hidden_size'"));
        for (String lenient : new String[] {V3 + " trailing", "// comment\n" + V3, V3.replace("\"hidden_size\"", "hidden_size"),
                V3.replace("10000", "NaN"), V3.replace("\"model_type\": \"deepseek_v3\"", "'model_type': 'x'")}) {
            String m = refused(lenient);
            assertTrue(m.startsWith("invalid config: not valid JSON"), m);
        }
    }

    @Test
    void configFilesAreReadOnlyUpToOneMebibyte(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws java.io.IOException {
        java.nio.file.Path big = dir.resolve("config.json");
        java.nio.file.Files.writeString(big, V3 + " ".repeat(1 << 20));
        assertTrue(assertThrows(MlaException.class, () -> MlaConfig.load(big)).getMessage().contains("larger than 1 MiB"));
        assertTrue(assertThrows(MlaException.class, () -> MlaConfig.load(java.nio.file.Path.of("/dev/zero"))).getMessage().contains("not a regular file"));
        assertTrue(assertThrows(MlaException.class, () -> MlaConfig.load(dir)).getMessage().contains("not a regular file"));
    }
}
