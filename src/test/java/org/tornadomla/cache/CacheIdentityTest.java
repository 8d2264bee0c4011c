package org.tornadomla.cache;

import org.tornadomla.cache.internal.CacheStorage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tornadomla.Fp8Checkpoints;
import org.tornadomla.MlaException;
import org.tornadomla.TestData;
import org.tornadomla.attention.AttentionOptions;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.attention.MlaLayer;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.weights.DType;
import org.tornadomla.weights.MlaWeights;
import org.tornadomla.weights.SafeTensorsFile;
import org.tornadomla.weights.SafeTensorsWriter;
import org.tornadomla.weights.WeightDtype;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A cache belongs to one layer of one model (config, layer index, weights): a cache file says which, an import
 * into a cache of another identity is refused naming what differs, and a layer refuses a cache another layer
 * filled. Each refusal leaves the cache as it was.
 */
class CacheIdentityTest {
    @TempDir
    Path dir;
    final MlaConfig c = TestData.small();

    /** SHA-256 of the documented byte layout, written here independently of MlaWeights. */
    static String expectedDigest(long[] kvAShape, float[] kvA, float[] norm) throws Exception {
        MessageDigest md = MessageDigest.getInstance("SHA-256");
        Object[][] parts = {{"kv_a_proj_with_mqa.weight", kvAShape, kvA}, {"kv_a_layernorm.weight", new long[] {norm.length}, norm}};
        for (Object[] p : parts) {
            md.update(((String) p[0]).getBytes(StandardCharsets.UTF_8));
            md.update(new byte[] {0});
            for (long d : (long[]) p[1]) md.update(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(d).array());
            float[] v = (float[]) p[2];
            ByteBuffer b = ByteBuffer.allocate(4 * v.length).order(ByteOrder.LITTLE_ENDIAN);
            for (float x : v) b.putInt(x == 0 ? 0 : Float.floatToIntBits(x));
            md.update(b.array());
        }
        return HexFormat.of().formatHex(md.digest());
    }

    private LatentCache filled(MlaLayer layer, CacheDtype dt, int tokens) {
        LatentCache cache = layer.newCache(1, 16, dt);
        layer.prefill(cache, TestData.gaussian(11, tokens * layer.config().hiddenSize()), tokens, AttentionPath.ABSORBED);
        return cache;
    }

    private String refusedImport(Path file, LatentCache target) {
        int before = target.length(0);
        float[] latent = target.latent(0);
        String m = assertThrows(MlaException.class, () -> CacheFiles.importInto(target, 0, file)).getMessage();
        assertEquals(1, m.lines().count(), m);
        assertEquals(before, target.length(0), "the cache is unchanged");
        assertArrayEquals(latent, target.latent(0));
        return m;
    }

    // ---------------------------------------------------------------- the identity itself

    @Test
    void theWeightsDigestIsTheDocumentedSha256AndNamesLayerAndConfig() throws Exception {
        MlaWeights w = MlaWeights.random(c, 5, 3);
        CacheIdentity id = CacheIdentity.of(w);
        assertEquals(3, w.layer());
        assertEquals(3, id.layer());
        assertEquals(c, id.config());
        assertEquals(CacheIdentity.configHash(c), id.configSha256());
        assertEquals(expectedDigest(w.kvA().shape(), w.kvA().toFloats(), w.kvANorm().toFloats()), id.weightsSha256());
        assertEquals(0, MlaWeights.random(c, 5).layer());
        assertEquals(new CacheIdentity(c, 0, id.weightsSha256()), CacheIdentity.of(MlaWeights.random(c, 5)), "the same values, layer 0");
        assertNotEquals(id.weightsSha256(), CacheIdentity.of(MlaWeights.random(c, 6, 3)).weightsSha256());
        // kv_b_proj, q and o do not change what a cache holds: the same kv_a weights are the same identity
        MlaWeights other = MlaWeights.random(c, 6);
        java.util.List<org.tornadomla.weights.Weight> mixed = new java.util.ArrayList<>(other.all());
        mixed.replaceAll(t -> t.name().startsWith("kv_a") ? w.weight(t.name()) : t);
        assertEquals(CacheIdentity.of(w).weightsSha256(), CacheIdentity.of(new MlaWeights(c, 3, mixed)).weightsSha256());
        // a layer prefix in the names gives the layer; a prefix that names another layer than the one given is refused
        java.util.List<org.tornadomla.weights.Weight> named = w.all().stream()
                .map(t -> org.tornadomla.weights.Weight.f32(MlaWeights.prefix(7) + t.name(), t.shape(), t.toFloats())).toList();
        assertEquals(7, new MlaWeights(c, named).layer());
        assertEquals("weight 'model.layers.7.self_attn.q_a_proj.weight' is named for layer 7, given for layer 2",
                assertThrows(MlaException.class, () -> new MlaWeights(c, 2, named)).getMessage());
        assertEquals("layer must be >= 0, found -1", assertThrows(MlaException.class, () -> MlaWeights.random(c, 5, -1)).getMessage());
    }

    /** The digest is of the checkpoint's values: the same layer held as f32, bf16 or fp8 has one identity. */
    @Test
    void theSameCheckpointLayerHasOneIdentityInEveryWeightDtype() throws Exception {
        Fp8Checkpoints.Layer l = Fp8Checkpoints.random(Fp8Checkpoints.config(), 9);
        Path index = Fp8Checkpoints.write(dir.resolve("fp8"), l, 2, 2);
        MlaConfig fc = Fp8Checkpoints.config();
        long[] kvAShape = MlaWeights.tensors(fc).stream().filter(t -> t.hfName().equals("kv_a_proj_with_mqa.weight")).findFirst().orElseThrow().shape();
        String expected = expectedDigest(kvAShape, l.dequantised("kv_a_proj_with_mqa.weight"), l.norms().get("kv_a_layernorm.weight"));
        MlaWeights fp8 = MlaWeights.load(index, fc, 2);
        assertEquals(WeightDtype.FP8, fp8.dtype());
        assertEquals(new CacheIdentity(fc, 2, expected), CacheIdentity.of(fp8));
        for (WeightDtype d : WeightDtype.values()) {
            assertEquals(CacheIdentity.of(fp8), CacheIdentity.of(MlaWeights.load(index, fc, 2, d)), "loaded as " + d);
            assertEquals(CacheIdentity.of(fp8), CacheIdentity.of(fp8.to(d)), "converted to " + d);
        }
        // bf16 projections written as f32 and as bf16 (norms f32 in both): one identity (the values are the same)
        MlaWeights bf16 = MlaWeights.random(c, 4).to(WeightDtype.BF16);
        Path f32File = dir.resolve("f32.safetensors"), bf16File = dir.resolve("bf16.safetensors");
        bf16.addTo(new SafeTensorsWriter(), 1, DType.F32).write(f32File);
        bf16.addInOwnForm(new SafeTensorsWriter(), 1, DType.F32).write(bf16File);
        assertEquals(WeightDtype.F32, MlaWeights.load(f32File, c, 1).dtype());
        assertEquals(CacheIdentity.of(MlaWeights.load(f32File, c, 1)), CacheIdentity.of(MlaWeights.load(bf16File, c, 1)));
        assertEquals(1, CacheIdentity.of(MlaWeights.load(bf16File, c, 1)).layer());
    }

    @Test
    void differencesNameTheConfigFieldsTheLayerAndTheWeights() {
        String w = "ab".repeat(32), v = "cd".repeat(32);
        CacheIdentity a = new CacheIdentity(MlaConfig.deepseekV2Lite(), 0, w);
        assertEquals("", a.differences(a));
        assertEquals("config hidden_size 2048 vs 7168, num_attention_heads 16 vs 128, num_hidden_layers 27 vs 61, q_lora_rank null vs 1536, "
                        + "rope_scaling.mscale 0.707 vs 1.0, rope_scaling.mscale_all_dim 0.707 vs 1.0; layer 0 vs 4; weights (kv_a_proj_with_mqa/kv_a_layernorm "
                        + "sha256 abababababab… vs cdcdcdcdcdcd…)",
                a.differences(new CacheIdentity(MlaConfig.deepseekV3(), 4, v)));
        assertEquals(new CacheIdentity(MlaConfig.deepseekV3().withFp8Weights(false), 0, w), new CacheIdentity(MlaConfig.deepseekV3(), 0, w),
                "quantization_config is not part of it");
        assertEquals("cache identity: the weights' SHA-256 must be 64 lower-case hex digits, found 'AB'",
                assertThrows(MlaException.class, () -> new CacheIdentity(c, 0, "AB")).getMessage());
    }

    // ---------------------------------------------------------------- files

    /** The reported case: a DeepSeek-V2-Lite cache is stamped V2-Lite (there is no config argument to get wrong), and a V3 cache refuses it. */
    @Test
    void aV2LiteCacheIsStampedV2LiteAndRefusedByAV3Cache() throws Exception {
        MlaConfig lite = MlaConfig.deepseekV2Lite(), v3 = MlaConfig.deepseekV3();
        MlaLayer layer = new MlaLayer(MlaWeights.random(lite, 1));
        LatentCache cache = filled(layer, CacheDtype.BF16, 2);
        Path file = dir.resolve("lite.safetensors");
        CacheFiles.export(cache, 0, file);
        try (SafeTensorsFile f = SafeTensorsFile.open(file)) {
            Map<String, String> meta = f.metadata();
            assertEquals("tornado-mla/latent-cache/3", meta.get("format"));
            assertEquals(CacheIdentity.configHash(lite), meta.get("config_sha256"));
            assertNotEquals(CacheIdentity.configHash(v3), meta.get("config_sha256"));
            assertEquals(lite, MlaConfig.fromJson(meta.get("config")));
            assertEquals("0", meta.get("layer"));
            assertEquals(layer.identity().weightsSha256(), meta.get("weights_sha256"));
        }
        // a V3 layer's cache (the same d_c and d_r: 512 + 64)
        String v3Weights = "11".repeat(32);
        LatentCache target = new LatentCache(v3, 1, 8, CacheDtype.BF16);
        target.bind(new CacheIdentity(v3, 0, v3Weights));
        String m = refusedImport(file, target);
        assertEquals(file + ": the file's cache is " + layer.identity().describe() + ", the target cache's is " + target.identity().describe()
                + "; they differ in config hidden_size 2048 vs 7168, num_attention_heads 16 vs 128, num_hidden_layers 27 vs 61, q_lora_rank null vs 1536, "
                + "rope_scaling.mscale 0.707 vs 1.0, rope_scaling.mscale_all_dim 0.707 vs 1.0; weights (kv_a_proj_with_mqa/kv_a_layernorm sha256 "
                + layer.identity().weightsSha256().substring(0, 12) + "… vs 111111111111…)", m);
    }

    @Test
    void aConfigThatDiffersOnlyInRopeThetaIsRefusedNamingIt() {
        MlaConfig theta = new MlaConfig(64, 4, 32, 32, 16, 8, 12, 50000, 1e-6, 4096, 2, null);
        MlaWeights w = MlaWeights.random(c, 5);
        Path file = dir.resolve("c.safetensors");
        CacheFiles.export(filled(new MlaLayer(w), CacheDtype.F32, 3), 0, file);
        // the same weights' values for a config with another rope_theta: only the config differs
        MlaLayer other = new MlaLayer(new MlaWeights(theta, 0, w.all()));
        assertTrue(refusedImport(file, other.newCache(1, 8, CacheDtype.F32)).endsWith("; they differ in config rope_theta 10000.0 vs 50000.0"));
    }

    @Test
    void aCacheOfLayer0IsRefusedByLayer1AndOtherWeightsAreRefused() {
        Path file = dir.resolve("c.safetensors");
        CacheFiles.export(filled(new MlaLayer(MlaWeights.random(c, 5, 0)), CacheDtype.INT8, 3), 0, file);
        String m = refusedImport(file, new MlaLayer(MlaWeights.random(c, 5, 1)).newCache(1, 8, CacheDtype.INT8));
        assertTrue(m.endsWith("; they differ in layer 0 vs 1"), m);
        MlaWeights other = MlaWeights.random(c, 6, 0);
        m = refusedImport(file, new MlaLayer(other).newCache(1, 8, CacheDtype.INT8));
        assertTrue(m.endsWith("; they differ in weights (kv_a_proj_with_mqa/kv_a_layernorm sha256 "
                + CacheIdentity.of(MlaWeights.random(c, 5)).weightsSha256().substring(0, 12) + "… vs " + CacheIdentity.of(other).weightsSha256().substring(0, 12) + "…)"), m);
    }

    /** Same identity: every cache dtype, contiguous and paged, round-trips bit for bit, into a cache of the layer and into one without an identity (which takes the file's). */
    @Test
    void theSameIdentityRoundTripsBitForBit() {
        MlaWeights w = MlaWeights.random(c, 8, 2);
        MlaLayer a = new MlaLayer(w), b = new MlaLayer(w.to(WeightDtype.BF16));    // one identity: the same checkpoint values
        assertEquals(a.identity(), b.identity());
        for (CacheDtype dt : CacheDtype.values()) {
            for (boolean paged : new boolean[] {false, true}) {
                LatentCache src = paged ? a.newPagedCache(PagedCacheSpec.builder().maxSequences(2).maxSequenceLength(16).numBlocks(8).blockSize(4).dtype(dt).build()) : a.newCache(1, 16, dt);
                int s = paged ? src.addSequence() : 0;
                a.forward(src, TestData.gaussian(3, 6 * c.hiddenSize()), new int[] {s}, new int[] {6}, AttentionOptions.of(AttentionPath.TILED));
                Path file = dir.resolve(dt + "-" + paged + ".safetensors");
                CacheFiles.export(src, s, file);
                LatentCache same = paged ? b.newPagedCache(PagedCacheSpec.builder().maxSequences(2).maxSequenceLength(16).numBlocks(8).blockSize(4).dtype(dt).build()) : b.newCache(1, 16, dt);
                int t = paged ? same.addSequence() : 0;
                CacheFiles.importInto(same, t, file);
                LatentCache fresh = new LatentCache(c, 1, 16, dt);
                assertNull(fresh.identity());
                CacheFiles.importInto(fresh, 0, file);
                assertEquals(a.identity(), fresh.identity(), "an import gives a cache without an identity the file's");
                for (LatentCache got : new LatentCache[] {same, fresh}) {
                    int g = got == same ? t : 0;
                    String what = dt + (paged ? " paged" : " contiguous");
                    assertArrayEquals(bits(src.latent(s)), bits(got.latent(g)), what);
                    assertArrayEquals(bits(src.ropeKey(s)), bits(got.ropeKey(g)), what);
                    if (dt == CacheDtype.INT8 || dt == CacheDtype.FP8) {
                        assertArrayEquals(CacheStorage.of(src).quantised(s).values(), CacheStorage.of(got).quantised(g).values(), what);
                        assertArrayEquals(bits(CacheStorage.of(src).quantised(s).scales()), bits(CacheStorage.of(got).quantised(g).scales()), what);
                    }
                }
                // and the layer steps on the imported caches (a step of layer b on a's file: the same identity)
                b.forward(same, TestData.gaussian(4, c.hiddenSize()), new int[] {t}, new int[] {1}, AttentionOptions.of(AttentionPath.ABSORBED));
                assertEquals(7, same.length(t));
            }
        }
    }

    private static int[] bits(float[] a) {
        int[] b = new int[a.length];
        for (int i = 0; i < a.length; i++) b[i] = Float.floatToRawIntBits(a[i]);
        return b;
    }

    @Test
    void aCacheWithoutAnIdentityIsNotExported() {
        LatentCache raw = new LatentCache(c, 1, 8, CacheDtype.F32);
        raw.write(0, TestData.gaussian(1, 2 * c.kvLoraRank()), TestData.gaussian(2, 2 * c.qkRopeHeadDim()));
        Path file = dir.resolve("raw.safetensors");
        String m = assertThrows(MlaException.class, () -> CacheFiles.export(raw, 0, file)).getMessage();
        assertTrue(m.startsWith("cache export: the cache belongs to no layer yet"), m);
        assertTrue(Files.notExists(file));
        raw.bind(CacheIdentity.of(MlaWeights.random(c, 1)));
        CacheFiles.export(raw, 0, file);
        assertTrue(Files.exists(file));
    }

    /** Format 2 (config hash only) cannot say which layer and weights it belongs to: refused, "export it again". */
    @Test
    void aFormat2FileIsRefused() {
        int n = 3, dc = c.kvLoraRank(), dr = c.qkRopeHeadDim();
        Path v2 = dir.resolve("v2.safetensors");
        new SafeTensorsWriter().checksums().metadata("format", "tornado-mla/latent-cache/2").metadata("config_sha256", CacheIdentity.configHash(c))
                .metadata("dtype", "f32").metadata("length", Integer.toString(n))
                .add("kv_cache", new long[] {n, dc}, TestData.gaussian(1, n * dc)).add("pe_cache", new long[] {n, dr}, TestData.gaussian(2, n * dr)).write(v2);
        LatentCache unbound = new LatentCache(c, 1, 8, CacheDtype.F32), bound = new MlaLayer(MlaWeights.random(c, 1)).newCache(1, 8, CacheDtype.F32);
        for (LatentCache target : new LatentCache[] {unbound, bound}) {
            assertEquals(v2 + ": a latent-cache file of format 2, which does not name the layer and weights it belongs to; export it again with this version",
                    refusedImport(v2, target));
        }
        assertNull(unbound.identity(), "a refused import gives no identity");
    }

    @Test
    void metadataOfTheIdentityMustBeConsistent() throws Exception {
        MlaLayer layer = new MlaLayer(MlaWeights.random(c, 5));
        Path file = dir.resolve("c.safetensors");
        CacheFiles.export(filled(layer, CacheDtype.F32, 2), 0, file);
        String header = header(file);
        String otherConfig = header.replace("\\\"rope_theta\\\": 10000.0", "\\\"rope_theta\\\": 20000.0");
        assertNotEquals(header, otherConfig);
        assertTrue(refusedImport(withHeader(file, otherConfig, "cfg"), new LatentCache(c, 1, 8, CacheDtype.F32)).contains("metadata config_sha256"));
        String layer9 = header.replace("\"layer\":\"0\"", "\"layer\":\"x\"");
        assertNotEquals(header, layer9);
        assertTrue(refusedImport(withHeader(file, layer9, "layer"), new LatentCache(c, 1, 8, CacheDtype.F32)).contains("metadata layer 'x' is not a layer index"));
    }

    private static String header(Path f) throws Exception {
        byte[] b = Files.readAllBytes(f);
        int n = (int) ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).getLong();
        return new String(b, 8, n, StandardCharsets.UTF_8);
    }

    /** The file with another header (padded with spaces to a multiple of 8). */
    private Path withHeader(Path f, String header, String name) throws Exception {
        byte[] b = Files.readAllBytes(f);
        int n = (int) ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).getLong();
        byte[] h = header.getBytes(StandardCharsets.UTF_8);
        int padded = (h.length + 7) / 8 * 8;
        byte[] out = new byte[8 + padded + b.length - 8 - n];
        ByteBuffer.wrap(out).order(ByteOrder.LITTLE_ENDIAN).putLong(padded);
        Arrays.fill(out, 8, 8 + padded, (byte) ' ');
        System.arraycopy(h, 0, out, 8, h.length);
        System.arraycopy(b, 8 + n, out, 8 + padded, b.length - 8 - n);
        Path g = dir.resolve(name + ".safetensors");
        Files.write(g, out);
        return g;
    }

    // ---------------------------------------------------------------- steps

    /** A cache filled by a 16-head layer is refused by a 128-head layer of another config (the same d_c and d_r), with the cache unchanged. */
    @Test
    void aCacheFilledBy16HeadsIsRefusedByA128HeadLayer() {
        MlaLayer h16 = new MlaLayer(MlaWeights.random(c.withHeads(16), 2)), h128 = new MlaLayer(MlaWeights.random(c.withHeads(128), 2));
        for (boolean made : new boolean[] {true, false}) {
            // made by the 16-head layer, or made with the constructor and filled by it first
            LatentCache cache = made ? h16.newCache(1, 8, CacheDtype.BF16) : new LatentCache(c, 1, 8, CacheDtype.BF16);
            h16.prefill(cache, TestData.gaussian(1, 3 * c.hiddenSize()), 3, AttentionPath.TILED);
            assertEquals(h16.identity(), cache.identity());
            float[] before = cache.latent(0);
            float[] x = TestData.gaussian(2, c.hiddenSize());
            String m = assertThrows(MlaException.class, () -> h128.decode(cache, x, AttentionPath.TILED)).getMessage();
            assertEquals("refused: this layer is " + h128.identity().describe() + ", the layer the cache belongs to is " + h16.identity().describe()
                    + "; they differ in config num_attention_heads 128 vs 16; weights (kv_a_proj_with_mqa/kv_a_layernorm sha256 "
                    + h128.identity().weightsSha256().substring(0, 12) + "… vs " + h16.identity().weightsSha256().substring(0, 12) + "…)", m);
            assertEquals(3, cache.length(0));
            assertArrayEquals(before, cache.latent(0));
            assertThrows(MlaException.class, () -> h128.forward(cache, x, new int[] {0}, new int[] {1}, AttentionOptions.of(AttentionPath.NAIVE)));
            assertThrows(MlaException.class, () -> h128.graph(cache, 1, AttentionOptions.of(AttentionPath.TILED)));
            h16.decode(cache, x, AttentionPath.TILED);           // its own layer goes on
            assertEquals(4, cache.length(0));
        }
    }

    @Test
    void aStepOfAnotherLayerOrOtherWeightsIsRefused() {
        MlaLayer l0 = new MlaLayer(MlaWeights.random(c, 2, 0)), l1 = new MlaLayer(MlaWeights.random(c, 2, 1)), other = new MlaLayer(MlaWeights.random(c, 3, 0));
        LatentCache cache = l0.newPagedCache(PagedCacheSpec.builder().maxSequences(2).maxSequenceLength(16).numBlocks(8).blockSize(4).dtype(CacheDtype.FP8).build());
        int s = cache.addSequence();
        float[] x = TestData.gaussian(1, c.hiddenSize());
        AttentionOptions opt = AttentionOptions.of(AttentionPath.ABSORBED);
        assertTrue(assertThrows(MlaException.class, () -> l1.forward(cache, x, new int[] {s}, new int[] {1}, opt)).getMessage().endsWith("they differ in layer 1 vs 0"));
        assertTrue(assertThrows(MlaException.class, () -> other.forward(cache, x, new int[] {s}, new int[] {1}, opt)).getMessage().contains("they differ in weights"));
        assertEquals(0, cache.length(s));
        l0.forward(cache, x, new int[] {s}, new int[] {1}, opt);
        assertEquals(1, cache.length(s));
        cache.clear();
        assertEquals(l0.identity(), cache.identity(), "an identity stays through clear()");
        String m = assertThrows(MlaException.class, () -> cache.bind(l1.identity())).getMessage();
        assertTrue(m.endsWith("they differ in layer 1 vs 0"), m);
        cache.bind(l0.identity());                             // the same again: nothing changes
        LatentCache narrow = new LatentCache(TestData.yarn(), 1, 4, CacheDtype.F32);
        assertEquals("cache [16 + 8] does not belong to a config with kv_lora_rank 32 and qk_rope_head_dim 8",
                assertThrows(MlaException.class, () -> narrow.bind(l0.identity())).getMessage());
    }
}
