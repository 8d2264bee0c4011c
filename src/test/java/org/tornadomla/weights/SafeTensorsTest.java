package org.tornadomla.weights;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tornadomla.MlaException;
import org.tornadomla.TestData;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SafeTensorsTest {
    @TempDir
    Path dir;

    @Test
    void roundTripsF32Bf16AndF16() {
        float[] a = TestData.gaussian(1, 6), b = TestData.gaussian(2, 12), h = TestData.gaussian(3, 5);
        Path f = dir.resolve("t.safetensors");
        new SafeTensorsWriter().metadata("format", "pt")
                .add("a", new long[] {2, 3}, a).add("b", DType.BF16, new long[] {3, 4}, b).add("h", DType.F16, new long[] {5}, h).write(f);
        try (SafeTensorsFile st = SafeTensorsFile.open(f)) {
            assertEquals("pt", st.metadata().get("format"));
            assertEquals(java.util.Set.of("a", "b", "h"), st.names());
            assertArrayEquals(new long[] {3, 4}, st.info("b").shape());
            assertEquals(DType.BF16, st.info("b").dtype());
            assertArrayEquals(a, st.readFloats("a"));
            float[] rb = st.readFloats("b");
            for (int i = 0; i < b.length; i++) assertEquals(Bf16Bits.decode(Bf16Bits.encode(b[i])), rb[i], 0f);
            float[] rh = st.readFloats("h");
            for (int i = 0; i < h.length; i++) assertEquals(Float.float16ToFloat(Float.floatToFloat16(h[i])), rh[i], 0f);
            assertNull(st.info("missing"));
        }
        // data starts 8-byte aligned, as the format recommends
        assertEquals(0, header(f).length() % 8);
    }

    /** Reads the header length and JSON of a file written here. */
    private static String header(Path f) {
        try {
            byte[] all = Files.readAllBytes(f);
            long n = ByteBuffer.wrap(all, 0, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
            return new String(all, 8, (int) n, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new RuntimeException(e);
        }
    }

    /** Writes a file with a hand-made header and {@code dataBytes} bytes of data. */
    private Path raw(String name, String json, int dataBytes) throws IOException {
        byte[] h = json.getBytes(StandardCharsets.UTF_8);
        ByteBuffer buf = ByteBuffer.allocate(8 + h.length + dataBytes).order(ByteOrder.LITTLE_ENDIAN);
        buf.putLong(h.length).put(h);
        Path f = dir.resolve(name);
        Files.write(f, buf.array());
        return f;
    }

    private static String openError(Path f) {
        return assertThrows(MlaException.class, () -> SafeTensorsFile.open(f).close()).getMessage();
    }

    @Test
    void rejectsTruncatedData() throws IOException {
        Path f = dir.resolve("full.safetensors");
        new SafeTensorsWriter().add("w", new long[] {4, 4}, new float[16]).write(f);
        byte[] all = Files.readAllBytes(f);
        Path cut = dir.resolve("cut.safetensors");
        Files.write(cut, Arrays.copyOf(all, all.length - 4));
        String m = openError(cut);
        assertTrue(m.contains("tensor 'w'") && m.contains("out of range") && m.contains("holds 60 bytes"), m);
    }

    @Test
    void aSourceSaysWhichLayersItHolds() throws IOException {
        Path f = dir.resolve("layers.safetensors");
        SafeTensorsWriter w = new SafeTensorsWriter();
        for (int layer : new int[] {7, 0, 2, 1, 12}) w.add("model.layers." + layer + ".self_attn.o_proj.weight", new long[] {1}, new float[1]);
        w.add("model.embed_tokens.weight", new long[] {1}, new float[1]);
        w.write(f);
        try (SafeTensorsFile s = SafeTensorsFile.open(f)) {
            assertEquals(java.util.List.of(0, 1, 2, 7, 12), java.util.List.copyOf(s.layers()));
            s.requireLayer(7);
            String m = assertThrows(MlaException.class, () -> s.requireLayer(3)).getMessage();
            assertEquals("layer 3: " + f + " holds no tensor of it (model.layers.3.*); it holds layers 0-2, 7, 12", m);
        }
        Path none = dir.resolve("none.safetensors");
        new SafeTensorsWriter().add("w", new long[] {1}, new float[1]).write(none);
        try (SafeTensorsFile s = SafeTensorsFile.open(none)) {
            assertTrue(assertThrows(MlaException.class, () -> s.requireLayer(0)).getMessage().endsWith("it holds no model.layers.N tensor at all"));
        }
    }

    @Test
    void aJsonFileIsNamedAsJson() throws IOException {
        Path f = dir.resolve("config.json");
        Files.writeString(f, "{\"model_type\": \"deepseek_v3\", \"hidden_size\": 7168}");
        String m = openError(f);
        assertTrue(m.startsWith(f + ": this is JSON (it starts with '{'), not a safetensors file"), m);
    }

    @Test
    void rejectsHeaderLengthPastTheEnd() throws IOException {
        Path f = dir.resolve("h.safetensors");
        ByteBuffer buf = ByteBuffer.allocate(20).order(ByteOrder.LITTLE_ENDIAN).putLong(1_000_000L);
        Files.write(f, buf.array());
        String m = openError(f);
        assertTrue(m.contains("header length 1000000 does not fit the file (file size 20 bytes"), m);
        Path neg = dir.resolve("neg.safetensors");
        Files.write(neg, ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putLong(-1L).array());
        assertTrue(openError(neg).contains("header length 18446744073709551615 does not fit the file"));
        Path tiny = dir.resolve("tiny.safetensors");
        Files.write(tiny, new byte[] {1, 2, 3});
        assertTrue(openError(tiny).contains("3 bytes, expected at least 8"));
    }

    @Test
    void rejectsOverlappingAndOutOfRangeOffsetsAndWrongSizes() throws IOException {
        String overlap = "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}";
        String m = openError(raw("o.safetensors", overlap, 12));
        assertTrue(m.contains("tensor 'b' starts at byte 4 but tensor 'a' ends at 8 (overlap)"), m);
        String range = "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[8,24]}}";
        m = openError(raw("r.safetensors", range, 16));
        assertTrue(m.contains("data_offsets [8, 24] out of range: the data section holds 16 bytes"), m);
        String reversed = "{\"a\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[8,4]}}";
        assertTrue(openError(raw("rev.safetensors", reversed, 16)).contains("out of range"));
        String size = "{\"a\":{\"dtype\":\"BF16\",\"shape\":[3],\"data_offsets\":[0,8]}}";
        m = openError(raw("s.safetensors", size, 8));
        assertTrue(m.contains("hold 8 bytes, expected 6 for BF16 [3]"), m);
        assertTrue(openError(raw("d.safetensors", "{\"a\":{\"dtype\":\"Q4\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1)).contains("unknown dtype 'Q4'"));
        m = openError(raw("lc.safetensors", "{\"a\":{\"dtype\":\"bf16\",\"shape\":[1],\"data_offsets\":[0,2]}}", 2));
        assertTrue(m.contains("corrupt safetensors header: tensor 'a': unknown dtype 'bf16' (the format's dtypes are upper case: BF16)"), m);
        // __metadata__ with one bit flipped (a cache file's metadata holds a lower-case "dtype"): named as a damaged key,
        // not judged as a tensor whose dtype is unknown
        m = openError(raw("k.safetensors", "{\"__letadata__\":{\"dtype\":\"bf16\"},\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4));
        assertTrue(m.contains("corrupt safetensors header: unknown key '__letadata__' (the only key that is not a tensor is __metadata__)"), m);
        Path odd = raw("u.safetensors", "{\"__x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4);
        try (SafeTensorsFile st = SafeTensorsFile.open(odd)) {       // a tensor may be named so: it has data_offsets
            assertEquals(DType.F32, st.info("__x").dtype());
        }
        assertTrue(openError(raw("j.safetensors", "{\"a\": [}", 0)).contains("not valid JSON"));
        assertTrue(openError(raw("n.safetensors", "{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,0]}}", 0)).contains("must be a non-negative integer, found the number -1"));
    }

    @Test
    void nonFloatTensorsAreListedButNotReadAsFloats() throws IOException {
        Path f = raw("i.safetensors", "{\"ids\":{\"dtype\":\"I64\",\"shape\":[2],\"data_offsets\":[0,16]}}", 16);
        try (SafeTensorsFile st = SafeTensorsFile.open(f)) {
            assertEquals(DType.I64, st.info("ids").dtype());
            assertTrue(assertThrows(MlaException.class, () -> st.readFloats("ids")).getMessage().contains("dtype I64 cannot be read as floats"));
        }
    }

    @Test
    void readsShardedCheckpointsThroughTheIndex() throws IOException {
        float[] a = TestData.gaussian(4, 4), b = TestData.gaussian(5, 3);
        new SafeTensorsWriter().add("x.a", new long[] {2, 2}, a).write(dir.resolve("model-00001-of-00002.safetensors"));
        new SafeTensorsWriter().add("x.b", new long[] {3}, b).write(dir.resolve("model-00002-of-00002.safetensors"));
        Files.writeString(dir.resolve("model.safetensors.index.json"),
                "{\"metadata\":{\"total_size\":28},\"weight_map\":{\"x.a\":\"model-00001-of-00002.safetensors\",\"x.b\":\"model-00002-of-00002.safetensors\"}}");
        try (TensorSource src = TensorSource.open(dir)) {
            assertArrayEquals(a, src.readFloats("x.a", 2, 2));
            assertArrayEquals(b, src.readFloats("x.b"));
            assertEquals("tensor 'x.b': expected shape [4], found [3]",
                    assertThrows(MlaException.class, () -> src.readFloats("x.b", 4)).getMessage());
            assertEquals("missing tensor 'x.c' (expected shape [1])", assertThrows(MlaException.class, () -> src.readFloats("x.c", 1)).getMessage());
        }
        Files.writeString(dir.resolve("bad.index.json"), "{\"weight_map\":{\"x.a\":\"nope.safetensors\"}}");
        assertTrue(assertThrows(MlaException.class, () -> TensorSource.open(dir.resolve("bad.index.json"))).getMessage()
                .contains("shard 'nope.safetensors' listed in weight_map does not exist"));
    }

    @Test
    void aFailedWriteLeavesNoFile() {
        Path target = dir.resolve("out.safetensors");
        SafeTensorsWriter w = new SafeTensorsWriter().add("a", new long[] {1}, new float[1]);
        assertThrows(MlaException.class, () -> w.add("b", new long[] {2}, new float[3]));
        w.write(target);
        assertTrue(Files.exists(target));
        Path blocked = dir.resolve("file-not-dir").resolve("x.safetensors");
        try {
            Files.writeString(dir.resolve("file-not-dir"), "x");
        } catch (IOException e) {
            throw new RuntimeException(e);
        }
        assertThrows(MlaException.class, () -> w.write(blocked));
        assertEquals(2, dir.toFile().list().length, Arrays.toString(dir.toFile().list()));
    }
}
