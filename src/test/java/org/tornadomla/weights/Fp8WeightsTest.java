package org.tornadomla.weights;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tornadomla.Fp8Checkpoints;
import org.tornadomla.MlaException;
import org.tornadomla.TestData;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.kernels.Bf16;
import org.tornadomla.kernels.Fp8;

import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * DeepSeek-V3 FP8 checkpoints written here (e4m3 codes, 128 × 128 block scales, BF16 norms, several shards and
 * an index), loaded in each weight form and checked against the test's own e4m3 decoder; every refusal.
 */
class Fp8WeightsTest {
    @TempDir
    Path dir;

    static int bits(float f) {
        return Float.floatToRawIntBits(f);
    }

    @Test
    void theTestsBitDecoderAndTheLibrarysAgreeOnAll254FiniteCodes() {
        float[] pow2 = Bf16.pow2();
        byte[] all = new byte[256];
        for (int b = 0; b < 256; b++) all[b] = (byte) b;
        int finite = 0;
        for (int b = 0; b < 256; b++) {
            float mine = Fp8Checkpoints.e4m3(b);
            if (Float.isNaN(mine)) {
                assertTrue(b == 0x7F || b == 0xFF, "NaN only at 0x7F and 0xFF, found at " + b);
                continue;
            }
            finite++;
            assertEquals(bits(mine), bits(Fp8.decode((byte) b, pow2)), "code 0x" + Integer.toHexString(b) + " (kernels)");
        }
        assertEquals(254, finite);
        // spot values from the format's definition: ±0, the smallest subnormal, the largest subnormal, 1, 448
        assertEquals(bits(0f), bits(Fp8Checkpoints.e4m3(0x00)));
        assertEquals(bits(-0f), bits(Fp8Checkpoints.e4m3(0x80)));
        assertEquals(0x1p-9f, Fp8Checkpoints.e4m3(0x01));
        assertEquals(7 * 0x1p-9f, Fp8Checkpoints.e4m3(0x07));
        assertEquals(1f, Fp8Checkpoints.e4m3(0x38));
        assertEquals(448f, Fp8Checkpoints.e4m3(0x7E));
        assertEquals(-448f, Fp8Checkpoints.e4m3(0xFE));
        // through a weight (host decoding), every finite code at scale 1, a matrix [2, 127]: no NaN codes allowed in it
        byte[] codes = new byte[254];
        float[] expected = new float[254];
        for (int b = 0, k = 0; b < 256; b++) {
            if ((b & 0x7F) == 0x7F) continue;
            codes[k] = (byte) b;
            expected[k++] = Fp8Checkpoints.e4m3(b);
        }
        float[] got = Weight.fp8("all", 2, 127, codes, new float[] {1f}).toFloats();
        for (int i = 0; i < 254; i++) assertEquals(bits(expected[i]), bits(got[i]), "code index " + i);
    }

    @Test
    void aShardedV3CheckpointLoadsAsFp8ByDefaultAndEqualsTheTestsDequantisation() throws IOException {
        for (MlaConfig c : new MlaConfig[] {Fp8Checkpoints.config(), Fp8Checkpoints.plainQ()}) {
            Fp8Checkpoints.Layer l = Fp8Checkpoints.random(c, 11);
            Path index = Fp8Checkpoints.write(dir.resolve("ckpt-" + c.qLoraRank()), l, 1, 3);
            MlaWeights fp8 = MlaWeights.load(index, c, 1);
            assertEquals(WeightDtype.FP8, fp8.dtype());
            MlaWeights f32 = MlaWeights.load(index, c, 1, WeightDtype.F32), bf16 = MlaWeights.load(index, c, 1, WeightDtype.BF16);
            assertEquals(WeightDtype.F32, f32.dtype());
            assertEquals(WeightDtype.BF16, bf16.dtype());
            long fp8Bytes = 0, f32Bytes = 0, bf16Bytes = 0;
            for (MlaWeights.Tensor t : MlaWeights.tensors(c)) {
                String n = t.hfName();
                long numbers = t.shape()[0] * (t.isProjection() ? t.shape()[1] : 1);
                if (!t.isProjection()) {
                    assertArrayEquals(l.norms().get(n), fp8.weight(n).toFloats(), n);       // BF16 on disk, exact
                    assertEquals(WeightDtype.F32, fp8.weight(n).dtype());
                    fp8Bytes += 4 * numbers;
                    f32Bytes += 4 * numbers;
                    bf16Bytes += 4 * numbers;
                    continue;
                }
                float[] want = l.dequantised(n);
                float[] got = fp8.weight(n).toFloats(), gotF32 = f32.weight(n).toFloats(), gotBf16 = bf16.weight(n).toFloats();
                for (int i = 0; i < want.length; i++) {
                    assertEquals(bits(want[i]), bits(got[i]), n + " [" + i + "] fp8");
                    assertEquals(bits(want[i]), bits(gotF32[i]), n + " [" + i + "] f32");
                    assertEquals(bits(Bf16Bits.decode(Bf16Bits.encode(want[i]))), bits(gotBf16[i]), n + " [" + i + "] bf16 = the f32 value rounded");
                }
                fp8Bytes += numbers + 4L * l.scales().get(n).length;
                f32Bytes += 4 * numbers;
                bf16Bytes += 2 * numbers;
            }
            // the bytes the weights report are those of their arrays
            assertEquals(fp8Bytes, fp8.bytes());
            assertEquals(f32Bytes, f32.bytes());
            assertEquals(bf16Bytes, bf16.bytes());
            assertTrue(fp8.bytes() * 3.5 < f32.bytes(), fp8.bytes() + " vs " + f32.bytes());
            // tiny scales: products that underflow to subnormals and to 0 are kept exactly
            float[] kvb = fp8.kvB().toFloats();
            assertTrue(java.util.stream.IntStream.range(0, 128).anyMatch(i -> kvb[i] != 0 && Math.abs(kvb[i]) < Float.MIN_NORMAL), "subnormal weights");
        }
    }

    @Test
    void anFp8LayerSurvivesWritingInItsOwnFormAndConversions() {
        Fp8Checkpoints.Layer l = Fp8Checkpoints.random(Fp8Checkpoints.config(), 2);
        Path f = dir.resolve("one.safetensors");
        l.weights().addInOwnForm(new SafeTensorsWriter(), 0, DType.BF16).write(f);
        MlaWeights back = MlaWeights.load(f, l.config(), 0);
        assertEquals(WeightDtype.FP8, back.dtype());
        for (Weight w : l.weights().all()) assertArrayEquals(w.toFloats(), back.weight(w.name()).toFloats(), w.name());
        // fp8 → f32 → fp8 keeps f32 values of fp8 weights exactly representable; to BF16 rounds each value once
        MlaWeights f32 = l.weights().to(WeightDtype.F32);
        assertSame(f32, f32.to(WeightDtype.F32));
        assertArrayEquals(l.weights().kvB().toFloats(), f32.kvB().toFloats());
        // an f32 layer quantised: each block's scale is max |w| / 448, codes round to nearest: error ≤ half a step
        MlaWeights rnd = MlaWeights.random(TestData.small(), 3), q = rnd.to(WeightDtype.FP8);
        float[] w = rnd.kvB().toFloats(), wq = q.kvB().toFloats();
        double maxRel = 0;
        for (int i = 0; i < w.length; i++) maxRel = Math.max(maxRel, Math.abs(w[i] - wq[i]) / Math.max(Math.abs(w[i]), 1e-3));
        assertTrue(maxRel <= 1.0 / 16 + 1e-6, "e4m3 has 3 mantissa bits: relative rounding ≤ 2^-4 for normal values, found " + maxRel);
    }

    @Test
    void refusalsNameTheTensorAndWhatWasExpected() throws IOException {
        MlaConfig c = Fp8Checkpoints.config();
        Fp8Checkpoints.Layer l = Fp8Checkpoints.random(c, 5);
        String kvb = MlaWeights.prefix(0) + "kv_b_proj.weight";
        // a missing scale
        assertEquals("missing tensor '" + kvb + "_scale_inv': expected F32 [3, 2] (128x128 block scales of F8_E4M3 weight '" + kvb + "' [264, 144])",
                refused(l, Change.omit(kvb + "_scale_inv")));
        // a scale of the wrong shape, of the wrong dtype
        assertEquals("tensor '" + kvb + "_scale_inv': expected shape [3, 2] (128x128 block scales of F8_E4M3 weight '" + kvb + "' [264, 144]), found [2, 3]",
                refused(l, Change.shape(kvb + "_scale_inv", 2, 3)));
        assertEquals("tensor '" + kvb + "_scale_inv': expected dtype F32 (128x128 block scales of F8_E4M3 weight '" + kvb + "' [264, 144]), found BF16",
                refused(l, Change.dtype(kvb + "_scale_inv", DType.BF16)));
        // NaN codes, named with their index
        for (int nan : new int[] {0x7F, 0xFF}) {
            Fp8Checkpoints.Layer bad = withCode(l, "kv_b_proj.weight", 3 * 144 + 7, (byte) nan);
            assertEquals("weight '" + kvb + "' holds the e4m3 NaN code 0x" + Integer.toHexString(nan) + " at [3, 7]; weights must be finite",
                    refusedFile(bad));
        }
        // scales that are not finite, negative, or so large that 448·scale overflows
        for (float s : new float[] {Float.NaN, Float.POSITIVE_INFINITY, -1e-3f, 1e37f}) {
            Fp8Checkpoints.Layer bad = withScale(l, "kv_b_proj.weight", 3, s);
            String m = refusedFile(bad);
            assertTrue(m.startsWith("weight '" + kvb + "': block scale " + s + " at [1, 1] must be finite, not negative"), m);
        }
        // block scales beside a weight that is not F8_E4M3 (a partly converted checkpoint)
        Path f = dir.resolve("stray.safetensors");
        SafeTensorsWriter w = l.weights().to(WeightDtype.F32).addTo(new SafeTensorsWriter(), 0, DType.BF16);
        w.add(kvb + "_scale_inv", DType.F32, new long[] {3, 2}, new float[6]);
        w.write(f);
        assertEquals(f + ": tensor '" + kvb + "_scale_inv': block scales belong to F8_E4M3 weights, but '" + kvb + "' is BF16 (a partly converted checkpoint?)",
                assertThrows(MlaException.class, () -> MlaWeights.load(f, c, 0)).getMessage());
        // a norm stored as F8_E4M3, a projection as F8_E5M2
        assertEquals("tensor 'model.layers.0.self_attn.kv_a_layernorm.weight': expected a float dtype for a norm weight, found F8_E4M3",
                refused(l, Change.dtype(MlaWeights.prefix(0) + "kv_a_layernorm.weight", DType.F8_E4M3)));
        assertEquals("tensor '" + kvb + "': dtype F8_E5M2 is not read (expected F8_E4M3 with block scales, or F32, BF16, F16, F64)",
                refused(l, Change.dtype(kvb, DType.F8_E5M2)));
        assertEquals("missing tensor '" + kvb + "' (expected shape [264, 144])", refused(l, Change.omit(kvb)));
        assertEquals("tensor '" + kvb + "': expected shape [264, 144], found [264, 143]", refused(l, Change.shape(kvb, 264, 143)));
    }

    @Test
    void weightsExposeNoMutableArrays() {
        for (Class<?> k : List.of(MlaWeights.class, Weight.class)) {
            assertEquals(0, k.getFields().length, k + " has public fields");
            for (Method m : k.getMethods()) {
                // a graph's buffers belong to its executor: handing storage to a KernelGraph is how kernels get it
                boolean toAGraph = List.of(m.getParameterTypes()).contains(org.tornadomla.graph.KernelGraph.class);
                if (m.getReturnType().isArray() && !Modifier.isStatic(m.getModifiers()) && !toAGraph) {
                    assertTrue(List.of("toFloats", "shape").contains(m.getName()), k.getSimpleName() + "." + m.getName() + " returns an array");
                }
            }
        }
        Fp8Checkpoints.Layer l = Fp8Checkpoints.random(Fp8Checkpoints.config(), 9);
        Weight kvb = l.weights().kvB();
        float[] a = kvb.toFloats();
        assertNotSame(a, kvb.toFloats());
        float before = a[200];
        a[200] = 1234f;
        kvb.shape()[0] = 1;
        assertEquals(before, kvb.toFloats()[200]);
        assertEquals(264, kvb.shape()[0]);
        // factories copy: the caller's arrays can change afterwards
        byte[] codes = l.codes().get("kv_b_proj.weight").clone();
        float[] scales = l.scales().get("kv_b_proj.weight").clone();
        Weight w = Weight.fp8("kv_b_proj.weight", 264, 144, codes, scales);
        float first = w.toFloats()[300];
        codes[300] = 0x40;
        scales[0] = 5f;
        assertEquals(first, w.toFloats()[300]);
        assertThrows(UnsupportedOperationException.class, () -> l.weights().all().clear());
    }

    // ------------------------------------------------------------------ damaged checkpoints

    /** One tensor of the written checkpoint left out, or written with another shape (zeros) or dtype (zeros). */
    record Change(String tensor, boolean omit, long[] shape, DType dtype) {
        static Change omit(String tensor) {
            return new Change(tensor, true, null, null);
        }

        static Change shape(String tensor, long... shape) {
            return new Change(tensor, false, shape, null);
        }

        static Change dtype(String tensor, DType dtype) {
            return new Change(tensor, false, null, dtype);
        }
    }

    /** Writes l as one V3-layout file with {@code change} applied and returns the load's one-line refusal. */
    private String refused(Fp8Checkpoints.Layer l, Change change) throws IOException {
        Path f = dir.resolve("damaged.safetensors");
        Files.deleteIfExists(f);
        SafeTensorsWriter w = new SafeTensorsWriter();
        String p = MlaWeights.prefix(0);
        for (MlaWeights.Tensor t : MlaWeights.tensors(l.config())) {
            String n = p + t.hfName();
            if (t.isProjection()) {
                put(w, n, DType.F8_E4M3, t.shape(), l.codes().get(t.hfName()), null, change);
                put(w, n + "_scale_inv", DType.F32, Weight.scaleShape(t.shape()[0], t.shape()[1]), null, l.scales().get(t.hfName()), change);
            } else {
                put(w, n, DType.BF16, t.shape(), null, l.norms().get(t.hfName()), change);
            }
        }
        w.write(f);
        String m = assertThrows(MlaException.class, () -> MlaWeights.load(f, l.config(), 0)).getMessage();
        assertEquals(1, m.lines().count(), m);
        assertTrue(m.startsWith(f + ": "), "the error names the checkpoint: " + m);
        return m.substring((f + ": ").length());
    }

    private static void put(SafeTensorsWriter w, String name, DType dtype, long[] shape, byte[] bytes, float[] floats, Change change) {
        if (change != null && change.tensor.equals(name)) {
            if (change.omit) return;
            long[] s = change.shape != null ? change.shape : shape;
            DType d = change.dtype != null ? change.dtype : dtype;
            int n = (int) java.util.Arrays.stream(s).reduce(1, (a, b) -> a * b);
            if (d.bytes == 1 && !d.isFloat()) w.addBytes(name, d, s, new byte[n]);
            else w.add(name, d, s, new float[n]);
        } else if (bytes != null) {
            w.addBytes(name, dtype, shape, bytes);
        } else {
            w.add(name, dtype, shape, floats);
        }
    }

    private String refusedFile(Fp8Checkpoints.Layer l) throws IOException {
        return refused(l, null);
    }

    private static Fp8Checkpoints.Layer withCode(Fp8Checkpoints.Layer l, String tensor, int at, byte code) {
        var codes = new java.util.LinkedHashMap<>(l.codes());
        byte[] q = codes.get(tensor).clone();
        q[at] = code;
        codes.put(tensor, q);
        return new Fp8Checkpoints.Layer(l.config(), l.weights(), codes, l.scales(), l.norms());
    }

    private static Fp8Checkpoints.Layer withScale(Fp8Checkpoints.Layer l, String tensor, int at, float s) {
        var scales = new java.util.LinkedHashMap<>(l.scales());
        float[] q = scales.get(tensor).clone();
        q[at] = s;
        scales.put(tensor, q);
        return new Fp8Checkpoints.Layer(l.config(), l.weights(), l.codes(), scales, l.norms());
    }
}
