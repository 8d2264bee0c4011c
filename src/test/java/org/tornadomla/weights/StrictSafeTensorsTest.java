package org.tornadomla.weights;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tornadomla.MlaException;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Safetensors are read strictly: what is not exactly a valid file is refused, in one line, names escaped. */
class StrictSafeTensorsTest {
    @TempDir
    Path dir;

    /** A file: 8-byte length of the header bytes, the header, then {@code data}. */
    private Path file(String name, byte[] header, byte[] data) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(8 + header.length + data.length).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(header.length).put(header).put(data);
        Path f = dir.resolve(name);
        Files.write(f, b.array());
        return f;
    }

    private Path file(String name, String header, int dataBytes) throws IOException {
        return file(name, header.getBytes(StandardCharsets.UTF_8), new byte[dataBytes]);
    }

    private static String refused(Path f) {
        String m = assertThrows(MlaException.class, () -> SafeTensorsFile.open(f).close()).getMessage();
        assertEquals(1, m.lines().count(), m);
        assertFalse(m.chars().anyMatch(c -> c < 0x20 || (c >= 0x7F && c < 0xA0)), m);
        return m;
    }

    static final String A = "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}";
    static final String B = "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}";

    @Test
    void aValidHandMadeFileIsRead() throws IOException {
        byte[] data = ByteBuffer.allocate(12).order(ByteOrder.LITTLE_ENDIAN).putFloat(1.5f).putFloat(-2f).putFloat(3f).array();
        Path f = file("ok.safetensors", ("{" + A + "," + B + "}    ").getBytes(StandardCharsets.UTF_8), data);
        try (SafeTensorsFile st = SafeTensorsFile.open(f)) {
            assertArrayEquals(new float[] {1.5f, -2f}, st.readFloats("a"));
            assertArrayEquals(new float[] {3f}, st.readFloats("b"));
        }
    }

    @Test
    void tensorsMustTileTheDataSectionExactly() throws IOException {
        assertTrue(refused(file("gap.safetensors", "{" + A + ",\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[12,16]}}", 16))
                .contains("tensor 'b' starts at byte 12 but tensor 'a' ends at 8 (a gap)"));
        assertTrue(refused(file("start.safetensors", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8))
                .contains("the data section starts at 0"));
        assertTrue(refused(file("trailing.safetensors", "{" + A + "," + B + "}", 13)).contains("the tensors cover 12 bytes, the data section holds 13"));
        assertTrue(refused(file("overlap.safetensors", "{" + A + ",\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 12))
                .contains("(overlap)"));
    }

    @Test
    void theHeaderLengthMustPointAtTheData() throws IOException {
        // a header length 4 too long swallows the first tensor's bytes as "padding" that is not spaces
        byte[] h = ("{" + A + "," + B + "}").getBytes(StandardCharsets.UTF_8);
        byte[] all = Files.readAllBytes(file("x.safetensors", h, new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
        ByteBuffer.wrap(all).order(ByteOrder.LITTLE_ENDIAN).putLong(0, h.length + 4);
        Path longer = dir.resolve("longer.safetensors");
        Files.write(longer, all);
        assertTrue(refused(longer).contains("expected a JSON object padded with spaces"), refused(longer));
        // padding with something else than spaces
        assertTrue(refused(file("pad.safetensors", "{" + A + "}\n\n\n", 8)).contains("padded with spaces"));
    }

    @Test
    void duplicatesNonUtf8AndNonStrictJsonAreRefused() throws IOException {
        assertTrue(refused(file("dup.safetensors", "{" + A + "," + A.replace("[0,8]", "[8,16]") + "}", 16)).contains("duplicate key 'a'"));
        assertTrue(refused(file("dupfield.safetensors", "{\"a\":{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8))
                .contains("duplicate key 'dtype'"));
        byte[] h = ("{\"\u00e9" + A.substring(1) + "}").getBytes(StandardCharsets.UTF_8);
        h[2] = (byte) 0xFF;                               // a byte that is never UTF-8
        assertTrue(refused(file("utf8.safetensors", h, new byte[8])).contains("not valid UTF-8"));
        for (String bad : new String[] {"{/* c */" + A + "}", "{'a':{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}",
                "{a:{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", "{" + A + ",}",
                "{\"a\":{\"dtype\":\"F32\",\"shape\":[NaN],\"data_offsets\":[0,8]}}"}) {
            String m = refused(file("lenient.safetensors", bad, 8));
            assertTrue(m.contains("not valid JSON"), m);
            assertFalse(m.contains("http") || m.contains("setStrictness"), m);
        }
        assertTrue(refused(file("float.safetensors", "{\"a\":{\"dtype\":\"F32\",\"shape\":[2.5],\"data_offsets\":[0,8]}}", 8))
                .contains("non-negative integer"));
    }

    @Test
    void namesAreEscapedInMessages() throws IOException {
        String m = refused(file("ctl.safetensors", "{\"evil\\u0007\\n\\u001b[2Jname\":{\"dtype\":\"Q9\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1));
        assertTrue(m.contains("'evil\\u0007\\u000A\\u001B[2Jname'"), m);
        String longName = "x".repeat(5000);
        m = refused(file("long.safetensors", "{\"" + longName + "\":{\"dtype\":\"Q9\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1));
        assertTrue(m.length() < 600, m);
    }

    @Test
    void aDtypeIsReadOnlyAsItself() throws IOException {
        Path f = dir.resolve("bytes.safetensors");
        new SafeTensorsWriter().addBytes("e5", DType.F8_E5M2, new long[] {2}, new byte[] {1, 2})
                .addBytes("u8", DType.U8, new long[] {2}, new byte[] {(byte) 200, 3}).write(f);
        try (SafeTensorsFile st = SafeTensorsFile.open(f)) {
            assertTrue(assertThrows(MlaException.class, () -> st.readBytes("e5", DType.F8_E4M3)).getMessage()
                    .contains("expected dtype F8_E4M3, found F8_E5M2"));
            assertTrue(assertThrows(MlaException.class, () -> st.readBytes("u8", DType.I8)).getMessage().contains("expected dtype I8, found U8"));
            assertArrayEquals(new byte[] {(byte) 200, 3}, st.readBytes("u8", DType.U8));
            assertTrue(assertThrows(MlaException.class, () -> st.readFloats("u8")).getMessage().contains("cannot be read as floats"));
        }
    }

    @Test
    void shardsResolveOnlyInsideTheIndexFolder() throws IOException {
        Path model = Files.createDirectory(dir.resolve("model"));
        new SafeTensorsWriter().add("x", new long[] {1}, new float[] {1}).write(dir.resolve("outside.safetensors"));
        new SafeTensorsWriter().add("x", new long[] {1}, new float[] {2}).write(model.resolve("in.safetensors"));
        Files.createSymbolicLink(model.resolve("escape.safetensors"), dir.resolve("outside.safetensors"));
        Path index = model.resolve("model.safetensors.index.json");
        for (String[] c : new String[][] {{"../outside.safetensors", "must not leave the index's folder"},
                {dir.resolve("outside.safetensors").toString(), "relative to the index's folder"},
                {"escape.safetensors", "outside the index's folder"}, {"", "relative to the index's folder"}}) {
            Files.writeString(index, "{\"weight_map\":{\"x\":\"" + c[0].replace("\\", "\\\\") + "\"}}");
            String m = assertThrows(MlaException.class, () -> TensorSource.open(model).close()).getMessage();
            assertTrue(m.contains(c[1]), m);
        }
        Files.writeString(index, "{\"weight_map\":{\"x\":\"in.safetensors\"}}");
        try (TensorSource src = TensorSource.open(model)) {
            assertArrayEquals(new float[] {2}, src.readFloats("x"));
            assertEquals(2, src.files().size());
        }
        // the Hugging Face cache: snapshots/REV/ holds links into blobs/, the index too
        Path blobs = Files.createDirectories(dir.resolve("hf/blobs")), snap = Files.createDirectories(dir.resolve("hf/snapshots/rev"));
        Files.writeString(blobs.resolve("idx"), "{\"weight_map\":{\"x\":\"model-1.safetensors\"}}");
        Files.copy(model.resolve("in.safetensors"), blobs.resolve("shard"));
        Files.createSymbolicLink(snap.resolve("model.safetensors.index.json"), Path.of("../../blobs/idx"));
        Files.createSymbolicLink(snap.resolve("model-1.safetensors"), Path.of("../../blobs/shard"));
        try (TensorSource src = TensorSource.open(snap)) {
            assertArrayEquals(new float[] {2}, src.readFloats("x"));
        }
    }

    @Test
    void jsonFilesAreReadOnlyUpToTheirLimit() throws IOException {
        Path big = dir.resolve("model.safetensors.index.json");
        try (RandomAccessFile r = new RandomAccessFile(big.toFile(), "rw")) {
            r.setLength(65L << 20);                       // sparse: 65 MiB of zeros
        }
        long t0 = System.nanoTime();
        String m = assertThrows(MlaException.class, () -> TensorSource.open(big)).getMessage();
        assertTrue(m.contains("larger than 64 MiB"), m);
        assertTrue((System.nanoTime() - t0) / 1e9 < 10);
        m = assertThrows(MlaException.class, () -> TensorSource.open(Path.of("/dev/zero"))).getMessage();
        assertTrue(m.contains("not a regular file"), m);
    }
}
