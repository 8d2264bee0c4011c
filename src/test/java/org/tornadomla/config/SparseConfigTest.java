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

/** DeepSeek Sparse Attention in config.json (index_* keys, scale_fmt) and the presets added with it. */
class SparseConfigTest {
    /** The attention part of DeepSeek-V3.2-Exp's Hugging Face config.json. */
    static final String V32 = """
            {"architectures": ["DeepseekV32ForCausalLM"], "model_type": "deepseek_v32", "hidden_size": 7168,
             "num_attention_heads": 128, "num_key_value_heads": 128, "q_lora_rank": 1536, "kv_lora_rank": 512,
             "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "rope_theta": 10000,
             "rms_norm_eps": 1e-06, "max_position_embeddings": 163840, "num_hidden_layers": 61,
             "index_n_heads": 64, "index_head_dim": 128, "index_topk": 2048,
             "quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
                                     "scale_fmt": "ue8m0", "weight_block_size": [128, 128]},
             "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 1.0, "mscale_all_dim": 1.0,
                              "original_max_position_embeddings": 4096, "type": "yarn"}}""";

    /** Kimi-K2-Instruct's config.json (attention fields and some others). */
    static final String KIMI_K2 = """
            {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "kimi_k2", "hidden_size": 7168, "kv_lora_rank": 512,
             "max_position_embeddings": 131072, "num_attention_heads": 64, "num_hidden_layers": 61, "num_key_value_heads": 64,
             "n_routed_experts": 384, "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
             "quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8", "weight_block_size": [128, 128]},
             "rms_norm_eps": 1e-06, "rope_theta": 50000.0,
             "rope_scaling": {"beta_fast": 1.0, "beta_slow": 1.0, "factor": 32.0, "mscale": 1.0, "mscale_all_dim": 1.0,
                              "original_max_position_embeddings": 4096, "type": "yarn"},
             "v_head_dim": 128, "vocab_size": 163840}""";

    /** GLM-5's spelling (transformers 5): rope_parameters instead of rope_theta, rope_interleave, the DSA keys. */
    static final String GLM5 = """
            {"architectures": ["GlmMoeDsaForCausalLM"], "model_type": "glm_moe_dsa", "hidden_size": 6144, "num_attention_heads": 64,
             "num_key_value_heads": 64, "q_lora_rank": 2048, "kv_lora_rank": 512, "qk_nope_head_dim": 192, "qk_rope_head_dim": 64,
             "v_head_dim": 256, "num_hidden_layers": 78, "max_position_embeddings": 202752, "rms_norm_eps": 1e-05,
             "rope_parameters": {"rope_theta": 1000000, "rope_type": "default"}, "rope_interleave": true,
             "index_topk": 2048, "index_head_dim": 128, "index_n_heads": 32}""";

    private static String refused(String json) {
        String m = assertThrows(MlaException.class, () -> MlaConfig.fromJson(json)).getMessage();
        assertEquals(1, m.lines().count(), m);
        return m;
    }

    @Test
    void v32IsV3WithAnIndexer() {
        MlaConfig c = MlaConfig.fromJson(V32);
        assertTrue(c.sparse());
        assertEquals(new IndexerConfig(64, 128, 2048, true, false), c.indexer());
        assertEquals(MlaConfig.preset("deepseek-v3.2"), c);
        assertEquals(MlaConfig.deepseekV3(), c.withIndexer(null));
        assertEquals(132, c.indexer().cacheBytesPerToken());            // 128 e4m3 bytes + one fp32 scale
        assertEquals(1, c.indexer().blocks());
        assertEquals(0.125, c.indexer().headScale(), 1e-15);            // 64^-1/2
        assertEquals(1 / Math.sqrt(128), c.indexer().dimScale(), 1e-15);
        // the MLA part is V3's: same softmax scale and cache width
        assertEquals(MlaConfig.deepseekV3().softmaxScale(), c.softmaxScale());
        assertEquals(576, c.cacheWidth());
        // without scale_fmt the scales are amax/448 as they are (DeepSeek's act_quant with scale_fmt None)
        assertFalse(MlaConfig.fromJson(V32.replace("\"scale_fmt\": \"ue8m0\", ", "")).indexer().ue8m0());
        // DeepSeek's inference config writes scale_fmt at the top: read there too, and both must agree
        assertTrue(MlaConfig.fromJson(V32.replace("\"scale_fmt\": \"ue8m0\", ", "").replace("\"index_topk\": 2048,",
                "\"index_topk\": 2048, \"scale_fmt\": \"ue8m0\",")).indexer().ue8m0());
        assertEquals("invalid config: scale_fmt 'e8m0' differs from quantization_config.scale_fmt 'ue8m0'",
                refused(V32.replace("\"index_topk\": 2048,", "\"index_topk\": 2048, \"scale_fmt\": \"e8m0\",")));
        assertEquals("invalid config: unsupported scale_fmt 'e8m0' (supported: ue8m0, or none for amax/448 scales)",
                refused(V32.replace("\"scale_fmt\": \"ue8m0\"", "\"scale_fmt\": \"e8m0\"")));
    }

    @Test
    void aConfigWithoutIndexKeysIsDenseAsBefore() {
        MlaConfig v3 = MlaConfig.fromJson(MlaConfigTest.V3);
        assertFalse(v3.sparse());
        assertNull(v3.indexer());
        // DeepSeek-V3.1 carries scale_fmt ue8m0 for its FP8 activations: validated, and it changes nothing here
        MlaConfig v31 = MlaConfig.fromJson(MlaConfigTest.V3.replace("\"quant_method\": \"fp8\",", "\"quant_method\": \"fp8\", \"scale_fmt\": \"ue8m0\","));
        assertEquals(v3, v31);
        // the canonical JSON of a dense config is unchanged (cache files and block keys hash it)
        assertFalse(v3.toJson().contains("index"));
        assertTrue(v3.toJson().contains("\"model_type\": \"deepseek_v3\""));
        assertEquals("invalid config: indexer_rope_interleave is set, but index_n_heads, index_head_dim and index_topk are not",
                refused(MlaConfigTest.V3.replace("\"hidden_size\": 7168,", "\"hidden_size\": 7168, \"indexer_rope_interleave\": false,")));
    }

    @Test
    void sparseConfigsRoundTripAndHashApart() {
        for (MlaConfig c : List.of(MlaConfig.deepseekV32(), MlaConfig.glm5(), MlaConfig.deepseekV32().withFp8Weights(false),
                MlaConfig.glm5().withIndexer(new IndexerConfig(32, 128, 2048, true, true)))) {
            assertEquals(c, MlaConfig.fromJson(c.toJson()), c.toJson());
        }
        String json = MlaConfig.deepseekV32().toJson();
        assertTrue(json.contains("\"model_type\": \"deepseek_v32\""), json);
        // the config hash leaves out quantization_config, so ue8m0 is also written at the top: it changes the indexer's keys
        String ue8m0 = org.tornadomla.cache.CacheIdentity.configHash(MlaConfig.deepseekV32());
        String plain = org.tornadomla.cache.CacheIdentity.configHash(MlaConfig.deepseekV32().withIndexer(new IndexerConfig(64, 128, 2048, false, false)));
        String dense = org.tornadomla.cache.CacheIdentity.configHash(MlaConfig.deepseekV3());
        assertEquals(3, java.util.Set.of(ue8m0, plain, dense).size());
        // copies keep the indexer
        assertEquals(MlaConfig.deepseekV32().indexer(), MlaConfig.deepseekV32().withHeads(16).withHiddenSize(64).withFp8Weights(false).indexer());
    }

    @Test
    void indexKeysAreAllOrNoneAndChecked() {
        assertEquals("invalid config: a sparse (DSA) config needs index_n_heads, index_head_dim and index_topk; 'index_topk' is missing",
                refused(V32.replace("\"index_topk\": 2048,", "")));
        // a V3.2 config whose indexer keys are all gone, or one of them mistyped, would run dense: refused
        assertEquals("invalid config: model_type 'deepseek_v32' is a sparse-attention (DSA) model, but index_n_heads, index_head_dim and "
                + "index_topk are missing: without them the layer would attend densely",
                refused(V32.replace("\"index_n_heads\": 64, \"index_head_dim\": 128, \"index_topk\": 2048,", "")));
        assertEquals("invalid config: architecture 'GlmMoeDsaForCausalLM' is a sparse-attention (DSA) model, but index_n_heads, index_head_dim and "
                + "index_topk are missing: without them the layer would attend densely",
                refused(GLM5.replace("\"model_type\": \"glm_moe_dsa\"", "\"model_type\": \"other\"")
                        .replace("\"index_topk\": 2048, \"index_head_dim\": 128, \"index_n_heads\": 32", "\"vocab_size\": 1")));
        assertTrue(refused(V32.replace("\"index_topk\": 2048", "\"index_top_k\": 2048")).startsWith("invalid config: unknown indexer key 'index_top_k' "),
                refused(V32.replace("\"index_topk\": 2048", "\"index_top_k\": 2048")));
        assertEquals("invalid config: index_head_dim must be 128 (one FP8 block of 128 numbers with one scale per head and per key, as DeepSeek's "
                + "fp8_index kernel takes them), found 64", refused(V32.replace("\"index_head_dim\": 128", "\"index_head_dim\": 64")));
        assertEquals("invalid config: index_n_heads must be in 1 … 4096, found 0", refused(V32.replace("\"index_n_heads\": 64", "\"index_n_heads\": 0")));
        assertEquals("invalid config: index_topk must be in 1 … 16777216, found -1", refused(V32.replace("\"index_topk\": 2048", "\"index_topk\": -1")));
        assertEquals("invalid config: index_topk must be an integer, found the string '2048'",
                refused(V32.replace("\"index_topk\": 2048", "\"index_topk\": \"2048\"")));
        assertTrue(refused(V32.replace("\"q_lora_rank\": 1536", "\"q_lora_rank\": null")).startsWith("invalid config: a sparse (DSA) config needs q_lora_rank > 0"));
        assertEquals("invalid config: index_head_dim (128) must hold the qk_rope_head_dim (192) rotated numbers it starts with",
                refused(V32.replace("\"qk_rope_head_dim\": 64", "\"qk_rope_head_dim\": 192")));
        // variants whose indexer computes something else are refused by key
        assertEquals("invalid config: index_kpool (pooled indexer keys) is not supported", refused(V32.replace("\"index_topk\": 2048,", "\"index_topk\": 2048, \"index_kpool\": 4,")));
        assertEquals("invalid config: index_topk_freq 2 (layers reusing another layer's selection) is not supported",
                refused(V32.replace("\"index_topk\": 2048,", "\"index_topk\": 2048, \"index_topk_freq\": 2,")));
        assertEquals("invalid config: indexer_types[1] is 'shared' (an indexer shared across layers is not supported; supported: full)",
                refused(V32.replace("\"index_topk\": 2048,", "\"index_topk\": 2048, \"indexer_types\": [\"full\", \"shared\"],")));
        assertTrue(MlaConfig.fromJson(V32.replace("\"index_topk\": 2048,", "\"index_topk\": 2048, \"indexer_types\": [\"full\", \"full\"], \"index_topk_freq\": 1,")).sparse());
        assertEquals("invalid config: indexer_rope_interleave must be true or false, found the number 1",
                refused(V32.replace("\"index_topk\": 2048,", "\"index_topk\": 2048, \"indexer_rope_interleave\": 1,")));
        assertTrue(MlaConfig.fromJson(V32.replace("\"index_topk\": 2048,", "\"index_topk\": 2048, \"indexer_rope_interleave\": true,")).indexer().ropeInterleaved());
    }

    @Test
    void kimiK2IsReadAsV3GeometryWith64Heads() {
        MlaConfig k = MlaConfig.fromJson(KIMI_K2);
        assertEquals(MlaConfig.preset("kimi-k2"), k);
        assertFalse(k.sparse());
        assertEquals(List.of(7168, 64, 1536, 512, 128, 64, 128, 61, 131072), List.of(k.hiddenSize(), k.numHeads(), k.qLoraRank(), k.kvLoraRank(),
                k.qkNopeHeadDim(), k.qkRopeHeadDim(), k.vHeadDim(), k.numHiddenLayers(), k.maxPositionEmbeddings()));
        assertEquals(50000, k.ropeTheta());
        assertEquals(new RopeScaling(32, 4096, 1, 1, 1, 1), k.ropeScaling());
        assertTrue(k.fp8Weights());
        // 192^-1/2·(0.1·ln 32 + 1)² = 0.0721688·1.346574² = 0.130861
        assertEquals(0.130861, k.softmaxScale(), 1e-6);
    }

    @Test
    void glm5ReadsRopeParametersAndTheIndexer() {
        MlaConfig g = MlaConfig.fromJson(GLM5);
        assertEquals(MlaConfig.preset("glm-5"), g);
        assertTrue(g.sparse());
        assertEquals(new IndexerConfig(32, 128, 2048, false, false), g.indexer());
        assertEquals(1_000_000, g.ropeTheta());
        assertNull(g.ropeScaling());
        assertEquals(0.0625, g.softmaxScale(), 1e-15);                  // (192 + 64)^-1/2, no YaRN
        assertEquals(List.of(6144, 64, 2048, 512, 192, 64, 256, 78), List.of(g.hiddenSize(), g.numHeads(), g.qLoraRank(), g.kvLoraRank(),
                g.qkNopeHeadDim(), g.qkRopeHeadDim(), g.vHeadDim(), g.numHiddenLayers()));
        // rope_parameters of type yarn reads as rope_scaling does
        MlaConfig y = MlaConfig.fromJson(GLM5.replace("\"rope_type\": \"default\"", "\"rope_type\": \"yarn\", \"factor\": 4, \"original_max_position_embeddings\": 8192"));
        assertEquals(new RopeScaling(4, 8192, 32, 1, 1, 0), y.ropeScaling());
        // an agreeing top-level rope_theta is fine, a disagreeing one or a second scaling is refused
        assertEquals(g, MlaConfig.fromJson(GLM5.replace("\"rope_interleave\": true,", "\"rope_interleave\": true, \"rope_theta\": 1000000,")));
        assertEquals("invalid config: rope_theta 10000.0 differs from rope_parameters.rope_theta 1000000.0",
                refused(GLM5.replace("\"rope_interleave\": true,", "\"rope_interleave\": true, \"rope_theta\": 10000,")));
        assertEquals("invalid config: both rope_scaling and rope_parameters are set (one of them is read)",
                refused(GLM5.replace("\"rope_interleave\": true,", "\"rope_interleave\": true, \"rope_scaling\": {\"type\": \"yarn\", \"factor\": 2},")));
        assertEquals("invalid config: unsupported rope_parameters type 'longrope' (supported: yarn, default)",
                refused(GLM5.replace("\"rope_type\": \"default\"", "\"rope_type\": \"longrope\"")));
        // MLA's RoPE here is interleaved: a config saying otherwise is refused, not read as if it were
        assertEquals("invalid config: rope_interleave is false, but MLA's RoPE here rotates interleaved pairs (2i, 2i+1), as DeepSeek's checkpoints store them",
                refused(GLM5.replace("\"rope_interleave\": true", "\"rope_interleave\": false")));
        // GLM-5.1's indexer_rope_interleave true is read as such
        assertTrue(MlaConfig.fromJson(GLM5.replace("\"index_topk\"", "\"indexer_rope_interleave\": true, \"index_topk\"")).indexer().ropeInterleaved());
    }

    @Test
    void otherSpellingsAreRefusedByName() {
        String inference = """
                {"vocab_size": 129280, "dim": 7168, "n_layers": 61, "n_heads": 128, "q_lora_rank": 1536, "kv_lora_rank": 512,
                 "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "dtype": "fp8", "scale_fmt": "ue8m0",
                 "index_n_heads": 64, "index_head_dim": 128, "index_topk": 2048}""";
        assertTrue(refused(inference).startsWith("invalid config: this is DeepSeek's inference config (dim, n_heads, n_layers;"), refused(inference));
        String minicpm3 = """
                {"model_type": "minicpm3", "hidden_size": 2560, "num_hidden_layers": 62, "num_attention_heads": 40, "q_lora_rank": 768,
                 "kv_lora_rank": 256, "qk_nope_head_dim": 64, "qk_rope_head_dim": 32, "max_position_embeddings": 32768,
                 "rope_scaling": {"type": "longrope", "long_factor": [1.0], "short_factor": [1.0], "original_max_position_embeddings": 32768}}""";
        assertTrue(refused(minicpm3).startsWith("invalid config: model_type 'minicpm3' is not read: MiniCPM3's config.json has no v_head_dim"), refused(minicpm3));
        // DeepSeek-V4 has index_* keys but no kv_lora_rank: not an MLA model
        assertTrue(refused("{\"model_type\": \"deepseek_v4\", \"hidden_size\": 4096, \"index_n_heads\": 64, \"index_head_dim\": 128, \"head_dim\": 512}")
                .startsWith("invalid config: not an MLA model (model_type 'deepseek_v4')"));
    }

    @Test
    void miniCpm3PresetHoldsItsSmallLatent() {
        MlaConfig m = MlaConfig.preset("minicpm3-4b");
        assertEquals(List.of(2560, 40, 768, 256, 64, 32, 64, 62), List.of(m.hiddenSize(), m.numHeads(), m.qLoraRank(), m.kvLoraRank(),
                m.qkNopeHeadDim(), m.qkRopeHeadDim(), m.vHeadDim(), m.numHiddenLayers()));
        assertEquals(288, m.cacheWidth());
        assertEquals(2560 / 40, m.vHeadDim());
        assertFalse(m.sparse());
    }

    @Test
    void everyPresetRoundTripsAndIsValid() {
        for (String name : MlaConfig.PRESETS) {
            MlaConfig c = MlaConfig.preset(name);
            assertEquals(c, MlaConfig.fromJson(c.toJson()), name);
            assertEquals(name.equals("deepseek-v3.2") || name.equals("glm-5"), c.sparse(), name);
        }
    }
}
