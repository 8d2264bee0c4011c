package org.tornadomla.weights;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tornadomla.MlaException;
import org.tornadomla.config.IndexerConfig;
import org.tornadomla.config.MlaConfig;

import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The lightning indexer's tensors ({@code self_attn.indexer.*}) of a sparse config, in synthetic safetensors files:
 * F32, BF16, and FP8 with block scales (weights_proj BF16 beside them, as DeepSeek-V3.2's checkpoint has it).
 */
class IndexerWeightsTest {
    @TempDir
    Path dir;

    /** A small sparse layer: D = 160 (a partial FP8 block), r_q = 96, indexer 3 heads × 128. */
    static final MlaConfig SPARSE = new MlaConfig(160, 2, 96, 64, 16, 16, 16, 10000, 1e-6, 4096, 2, null, false,
            new IndexerConfig(3, 128, 5, true, false));
    static final MlaConfig DENSE = SPARSE.withIndexer(null);
    static final List<String> INDEXER = List.of(MlaWeights.INDEXER_WQ_B, MlaWeights.INDEXER_WK, MlaWeights.INDEXER_K_NORM,
            MlaWeights.INDEXER_K_NORM_BIAS, MlaWeights.INDEXER_WEIGHTS_PROJ);

    private static void assertSameValues(Weight expected, Weight actual) {
        assertArrayEquals(expected.shape(), actual.shape(), expected.name());
        assertArrayEquals(expected.toFloats(), actual.toFloats(), 0f, expected.name());
    }

    @Test
    void theIndexersTensorsAndShapesComeWithASparseConfigOnly() {
        List<String> names = MlaWeights.tensors(SPARSE).stream().map(MlaWeights.Tensor::hfName).toList();
        assertEquals(INDEXER, names.subList(7, 12));
        assertEquals(MlaWeights.tensors(DENSE).stream().map(MlaWeights.Tensor::hfName).toList(), names.subList(0, 7));
        assertTrue(MlaWeights.tensors(DENSE).stream().noneMatch(t -> t.hfName().startsWith("indexer.")));
        MlaWeights.Tensor[] t = MlaWeights.tensors(SPARSE).subList(7, 12).toArray(new MlaWeights.Tensor[0]);
        assertArrayEquals(new long[] {3 * 128, 96}, t[0].shape());      // wq_b [n·d, q_lora_rank]
        assertArrayEquals(new long[] {128, 160}, t[1].shape());         // wk [d, D]
        assertArrayEquals(new long[] {128}, t[2].shape());
        assertArrayEquals(new long[] {128}, t[3].shape());
        assertArrayEquals(new long[] {3, 160}, t[4].shape());           // weights_proj [n, D]
        assertTrue(t[0].isProjection() && t[1].isProjection());
        assertTrue(!t[4].isProjection(), "weights_proj is held f32, not in the layer's form");
        MlaWeights dense = MlaWeights.random(DENSE, 1);
        for (String n : INDEXER) assertNull(dense.weight(n));
        assertNull(dense.indexerWqB());
    }

    @Test
    void f32AndBf16FilesLoadTheIndexer() {
        MlaWeights w = MlaWeights.random(SPARSE, 7, 3);
        // k_norm.bias is centred on 0, k_norm.weight on 1
        float[] bias = w.indexerKNormBias().toFloats(), scale = w.indexerKNorm().toFloats();
        double meanBias = 0, meanScale = 0;
        for (int i = 0; i < 128; i++) {
            meanBias += bias[i] / 128;
            meanScale += scale[i] / 128;
        }
        assertTrue(Math.abs(meanBias) < 0.05 && Math.abs(meanScale - 1) < 0.05, meanBias + " " + meanScale);
        for (DType dt : new DType[] {DType.F32, DType.BF16}) {
            Path f = dir.resolve(dt + ".safetensors");
            w.addTo(new SafeTensorsWriter(), 3, dt).write(f);
            MlaWeights loaded = MlaWeights.load(f, SPARSE, 3);
            assertEquals(WeightDtype.F32, loaded.dtype());
            for (String n : INDEXER) {
                // every tensor of a BF16 file, norms included, is the f32 value rounded to bf16
                Weight f32 = Weight.f32(n, w.weight(n).shape(), w.weight(n).toFloats());
                assertSameValues(dt == DType.F32 ? f32 : f32.to(WeightDtype.BF16), loaded.weight(n));
                assertEquals(WeightDtype.F32, loaded.weight(n).dtype(), n);
            }
            // the same latent weights without the indexer, under a dense config: the indexer is left out, and the latent's
            // digest (the caches' identity) is the sparse layer's (a dense config over the sparse file itself is refused,
            // aDenseConfigOverASparseCheckpointGetsOneClearError)
            Path denseFile = dir.resolve("dense-" + dt + ".safetensors");
            writeWithout(w, 3, dt, INDEXER, denseFile);
            MlaWeights dense = MlaWeights.load(denseFile, DENSE, 3);
            assertNull(dense.indexerWk());
            assertEquals(7, dense.all().size());
            assertEquals(loaded.kvDigest(), dense.kvDigest());
        }
    }

    /** V3.2's layout: wq_b and wk (and the MLA projections) F8_E4M3 with weight_scale_inv, k_norm F32, weights_proj BF16. */
    private static SafeTensorsWriter v32Layout(MlaWeights fp8, int layer, DType weightsProjDtype) {
        SafeTensorsWriter out = new SafeTensorsWriter();
        String p = MlaWeights.prefix(layer);
        for (MlaWeights.Tensor t : MlaWeights.tensors(fp8.config())) {
            Weight w = fp8.weight(t.hfName());
            if (t.hfName().equals(MlaWeights.INDEXER_WEIGHTS_PROJ)) {
                if (weightsProjDtype == DType.F8_E4M3) w.to(WeightDtype.FP8).addTo(out, p + t.hfName());
                else out.add(p + t.hfName(), weightsProjDtype, w.shape(), w.toFloats());
            } else if (t.shape().length == 1) {
                out.add(p + t.hfName(), DType.F32, w.shape(), w.toFloats());
            } else {
                w.addTo(out, p + t.hfName());
            }
        }
        return out;
    }

    @Test
    void anFp8CheckpointLoadsTheIndexerAsFp8AndWeightsProjAsF32() {
        MlaWeights w = MlaWeights.random(SPARSE, 9), fp8 = w.to(WeightDtype.FP8);
        assertEquals(WeightDtype.F32, fp8.indexerWeightsProj().dtype(), "to() leaves weights_proj f32");
        assertEquals(WeightDtype.FP8, fp8.indexerWqB().dtype());
        Path f = dir.resolve("v32.safetensors");
        v32Layout(fp8, 0, DType.BF16).write(f);
        MlaWeights loaded = MlaWeights.load(f, SPARSE, 0);
        assertEquals(WeightDtype.FP8, loaded.dtype(), "a BF16 weights_proj does not make the layer f32");
        assertEquals(WeightDtype.FP8, loaded.indexerWqB().dtype());
        assertEquals(WeightDtype.FP8, loaded.indexerWk().dtype());
        assertSameValues(fp8.indexerWqB(), loaded.indexerWqB());
        assertSameValues(fp8.indexerWk(), loaded.indexerWk());
        assertSameValues(w.indexerKNormBias(), loaded.indexerKNormBias());
        assertEquals(WeightDtype.F32, loaded.indexerWeightsProj().dtype());
        assertSameValues(w.indexerWeightsProj().to(WeightDtype.BF16).to(WeightDtype.F32), loaded.indexerWeightsProj());
        // held as f32 on request: the codes dequantised exactly
        assertSameValues(fp8.indexerWk().to(WeightDtype.F32), MlaWeights.load(f, SPARSE, 0, WeightDtype.F32).indexerWk());
        // an FP8 weights_proj (with its scales) is dequantised into f32
        Path g = dir.resolve("fp8-weights-proj.safetensors");
        v32Layout(fp8, 0, DType.F8_E4M3).write(g);
        Weight wp = MlaWeights.load(g, SPARSE, 0).indexerWeightsProj();
        assertEquals(WeightDtype.F32, wp.dtype());
        assertSameValues(w.indexerWeightsProj().to(WeightDtype.FP8).to(WeightDtype.F32), wp);
        // written back in their own form, the weights load again unchanged
        Path h = dir.resolve("again.safetensors");
        loaded.addInOwnForm(new SafeTensorsWriter(), 0, DType.F32).write(h);
        MlaWeights again = MlaWeights.load(h, SPARSE, 0);
        for (String n : INDEXER) assertSameValues(loaded.weight(n), again.weight(n));
    }

    @Test
    void aDenseConfigOverASparseCheckpointGetsOneClearError() {
        // a DeepSeek-V3.2 checkpoint loaded with a dense config would attend densely without a word: refused
        Path f = dir.resolve("sparse.safetensors");
        MlaWeights.random(SPARSE, 2).addTo(new SafeTensorsWriter(), 0, DType.F32).write(f);
        String m = assertThrows(MlaException.class, () -> MlaWeights.load(f, DENSE, 0)).getMessage();
        assertEquals(f + ": tensor 'model.layers.0.self_attn.indexer.wk.weight' is a lightning indexer's: the checkpoint is a sparse-attention "
                + "(DSA) model's, but the config is dense (no index_n_heads, index_head_dim and index_topk); to compare with dense attention, "
                + "load it with its sparse config and use AttentionOptions.withDense(true)", m);
        assertEquals(SPARSE, MlaWeights.load(f, SPARSE, 0).config());
    }

    @Test
    void aSparseConfigOverADenseCheckpointGetsOneClearError() {
        Path f = dir.resolve("dense.safetensors");
        MlaWeights.random(DENSE, 2).addTo(new SafeTensorsWriter(), 0, DType.F32).write(f);
        String m = assertThrows(MlaException.class, () -> MlaWeights.load(f, SPARSE, 0)).getMessage();
        assertEquals(f + ": missing tensor 'model.layers.0.self_attn.indexer.wq_b.weight' (expected shape [384, 96]) (the config is sparse, with "
                + "index_n_heads 3: a DeepSeek-V3.2-style checkpoint has the indexer's weights; is this a dense model's checkpoint?)", m);
        // each indexer tensor is required, by name
        MlaWeights w = MlaWeights.random(SPARSE, 2);
        for (String missing : INDEXER) {
            Path g = dir.resolve("without-" + missing + ".safetensors");
            writeWithout(w, 0, DType.F32, List.of(missing), g);
            String e = assertThrows(MlaException.class, () -> MlaWeights.load(g, SPARSE, 0)).getMessage();
            assertTrue(e.startsWith(g + ": missing tensor 'model.layers.0.self_attn." + missing + "'"), e);
        }
        // a wrong shape, and FP8 codes without their scales, are named
        SafeTensorsWriter out = new SafeTensorsWriter();
        for (Weight t : w.all()) {
            long[] shape = t.name().equals(MlaWeights.INDEXER_WK) ? new long[] {64, 160} : t.shape();
            out.add(MlaWeights.prefix(0) + t.name(), DType.F32, shape, t.name().equals(MlaWeights.INDEXER_WK) ? new float[64 * 160] : t.toFloats());
        }
        Path g = dir.resolve("wrong-shape.safetensors");
        out.write(g);
        assertEquals(g + ": tensor 'model.layers.0.self_attn.indexer.wk.weight': expected shape [128, 160], found [64, 160]",
                assertThrows(MlaException.class, () -> MlaWeights.load(g, SPARSE, 0)).getMessage());
        MlaWeights fp8 = w.to(WeightDtype.FP8);
        SafeTensorsWriter noScale = new SafeTensorsWriter();
        for (Weight t : fp8.all()) {
            String n = MlaWeights.prefix(0) + t.name();
            if (t.name().equals(MlaWeights.INDEXER_WK)) noScale.addBytes(n, DType.F8_E4M3, t.shape(), new byte[128 * 160]);
            else t.addTo(noScale, n);
        }
        Path h = dir.resolve("no-scale.safetensors");
        noScale.write(h);
        String e = assertThrows(MlaException.class, () -> MlaWeights.load(h, SPARSE, 0)).getMessage();
        assertTrue(e.startsWith(h + ": missing tensor 'model.layers.0.self_attn.indexer.wk.weight_scale_inv': expected F32 [1, 2]"), e);
    }

    /** Layer {@code layer} of {@code w} as a checkpoint of {@code dt} tensors, leaving out the weights named in {@code left}. */
    private static void writeWithout(MlaWeights w, int layer, DType dt, List<String> left, Path f) {
        SafeTensorsWriter out = new SafeTensorsWriter();
        for (Weight t : w.all()) if (!left.contains(t.name())) out.add(MlaWeights.prefix(layer) + t.name(), dt, t.shape(), t.toFloats());
        out.write(f);
    }
}
