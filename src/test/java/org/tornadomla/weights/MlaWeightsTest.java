package org.tornadomla.weights;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tornadomla.MlaException;
import org.tornadomla.TestData;
import org.tornadomla.config.MlaConfig;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MlaWeightsTest {
    @TempDir
    Path dir;

    @Test
    void savesAndLoadsALayerByHuggingFaceNames() {
        MlaConfig c = TestData.small();
        MlaWeights w = MlaWeights.random(c, 1);
        Path f = dir.resolve("w.safetensors");
        w.addTo(new SafeTensorsWriter(), 3, DType.F32).write(f);
        try (SafeTensorsFile st = SafeTensorsFile.open(f)) {
            assertArrayEquals(new long[] {c.numHeads() * 28L, c.kvLoraRank()}, st.info("model.layers.3.self_attn.kv_b_proj.weight").shape());
            assertArrayEquals(new long[] {40, 64}, st.info("model.layers.3.self_attn.kv_a_proj_with_mqa.weight").shape());
        }
        MlaWeights back = MlaWeights.load(f, c, 3);
        assertArrayEquals(w.kvB().toFloats(), back.kvB().toFloats());
        assertArrayEquals(w.qA().toFloats(), back.qA().toFloats());
        assertArrayEquals(w.o().toFloats(), back.o().toFloats());
        assertNull(back.q());
        assertEquals(WeightDtype.F32, back.dtype());
        assertEquals(f + ": missing tensor 'model.layers.0.self_attn.q_a_proj.weight' (expected shape [32, 64])",
                assertThrows(MlaException.class, () -> MlaWeights.load(f, c, 0)).getMessage());
    }

    @Test
    void configAndWeightsMismatchNamesTheTensorAndBothShapes() {
        MlaConfig c = TestData.small();
        Path f = dir.resolve("w.safetensors");
        MlaWeights.random(c, 2).addTo(new SafeTensorsWriter(), 0, DType.BF16).write(f);
        MlaConfig wider = new MlaConfig(64, 4, 32, 48, 16, 8, 12, 10000, 1e-6, 4096, 1, null);
        assertEquals(f + ": tensor 'model.layers.0.self_attn.kv_a_proj_with_mqa.weight': expected shape [56, 64], found [40, 64]",
                assertThrows(MlaException.class, () -> MlaWeights.load(f, wider, 0)).getMessage());
        MlaConfig plain = new MlaConfig(64, 4, 0, 32, 16, 8, 12, 10000, 1e-6, 4096, 1, null);
        String m = assertThrows(MlaException.class, () -> MlaWeights.load(f, plain, 0)).getMessage();
        assertTrue(m.contains("missing tensor 'model.layers.0.self_attn.q_proj.weight'") && m.contains("does the config lack q_lora_rank?"), m);
        MlaWeights back = MlaWeights.load(f, c, 0);        // bf16 on disk loads as f32
        assertEquals(c.kvLoraRank(), back.kvANorm().toFloats().length);
        assertEquals(WeightDtype.F32, back.dtype());
    }

    @Test
    void constructorChecksEveryWeight() {
        MlaConfig c = TestData.noQLora();
        MlaWeights w = MlaWeights.random(c, 3);
        assertEquals("weight 'kv_b_proj.weight': expected shape [72, 24] (1728 numbers), found 5 numbers",
                assertThrows(MlaException.class, () -> Weight.f32("kv_b_proj.weight", new long[] {72, 24}, new float[5])).getMessage());
        java.util.List<Weight> wrong = new java.util.ArrayList<>(w.all());
        wrong.set(3, Weight.f32("kv_b_proj.weight", new long[] {24, 72}, w.kvB().toFloats()));
        assertEquals("weight 'kv_b_proj.weight': expected shape [72, 24], found [24, 72]",
                assertThrows(MlaException.class, () -> new MlaWeights(c, wrong)).getMessage());
        java.util.List<Weight> missing = new java.util.ArrayList<>(w.all());
        missing.remove(3);
        assertEquals("weight kv_b_proj.weight: expected shape [72, 24], found none",
                assertThrows(MlaException.class, () -> new MlaWeights(c, missing)).getMessage());
        java.util.List<Weight> mixed = new java.util.ArrayList<>(w.all());
        mixed.set(3, w.kvB().to(WeightDtype.BF16));
        assertEquals("projection weights must share one dtype, found f32 and bf16",
                assertThrows(MlaException.class, () -> new MlaWeights(c, mixed)).getMessage());
    }

    @Test
    void weightsWithNanOrInfinityAreRefusedNamingTensorAndIndex() {
        MlaConfig c = TestData.small();
        MlaWeights w = MlaWeights.random(c, 4);
        for (float bad : new float[] {Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY}) {
            float[] wkvB = w.kvB().toFloats();
            wkvB[3 * c.kvLoraRank() + 5] = bad;
            Path f = dir.resolve("bad.safetensors");
            // the writer takes any float: the layer's tensors with the bad value in kv_b_proj
            SafeTensorsWriter writer = new SafeTensorsWriter();
            for (MlaWeights.Tensor t : MlaWeights.tensors(c)) {
                writer.add(MlaWeights.prefix(0) + t.hfName(), t.shape(), t.hfName().equals("kv_b_proj.weight") ? wkvB : w.weight(t.hfName()).toFloats());
            }
            writer.write(f);
            assertEquals(f + ": weight 'model.layers.0.self_attn.kv_b_proj.weight' holds " + bad + " at [3, 5]; weights must be finite",
                    assertThrows(MlaException.class, () -> MlaWeights.load(f, c, 0)).getMessage());
            assertTrue(assertThrows(MlaException.class, () -> Weight.f32("kv_b_proj.weight", w.kvB().shape(), wkvB))
                    .getMessage().contains("kv_b_proj.weight' holds " + bad + " at [3, 5]"));
        }
    }
}
