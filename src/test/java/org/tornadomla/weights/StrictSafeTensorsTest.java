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
    @Test
    void numbersOfShapesAndOffsetsMustBeWrittenAsIntegers() throws IOException {
        // the format's reference reader takes these as unsigned integers: 64.0, 6.4e1 and 64e0 are floats there
        for (String n : new String[] {"2.0", "2e0", "0.2e1", "2E0"}) {
            String m = refused(file("f" + n + ".safetensors", "{\"a\":{\"dtype\":\"F32\",\"shape\":[" + n + "],\"data_offsets\":[0,8]}}", 8));
            assertTrue(m.contains("shape[0] must be a non-negative integer") && m.contains(n), m);
            m = refused(file("o" + n + ".safetensors", "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0," + n.replace("2", "8") + "]}}", 8));
            assertTrue(m.contains("data_offsets[1] must be a non-negative integer"), m);
        }
    }

    @Test
    void metadataListedTwiceIsRefused() throws IOException {
        String m = refused(file("meta2.safetensors", "{\"__metadata__\":{\"format\":\"pt\"}," + A + ",\"__metadata__\":{\"format\":\"x\"}}", 8));
        assertTrue(m.contains("duplicate key '__metadata__'"), m);
        m = refused(file("meta2e.safetensors", "{\"__metadata__\":{}," + A + ",\"__metadata\\u005f_\":{}}", 8));
        assertTrue(m.contains("duplicate key '__metadata__'"), m);
    }

    @Test
    void aFileTruncatedWhileOpenIsAnErrorNamingIt() throws IOException {
        Path f = dir.resolve("t.safetensors");
        new SafeTensorsWriter().add("a", new long[] {4096}, new float[4096]).add("b", new long[] {4096}, new float[4096]).write(f);
        try (SafeTensorsFile st = SafeTensorsFile.open(f)) {
            try (var ch = java.nio.channels.FileChannel.open(f, java.nio.file.StandardOpenOption.WRITE)) {
                ch.truncate(4096);                        // another writer cuts the file: the mapping's pages past it are gone
            }
            for (org.junit.jupiter.api.function.Executable read : new org.junit.jupiter.api.function.Executable[] {
                    () -> st.readFloats("b"), () -> st.crc32c("b"), () -> st.readFloats("b", 4096)}) {
                String m = assertThrows(MlaException.class, read).getMessage();
                assertTrue(m.contains(f.toString()) && m.contains("changed while it was open"), m);
            }
        }
    }

    @Test
    void readingAfterCloseAndNullArgumentsAreNamed() throws IOException {
        Path f = dir.resolve("c.safetensors");
        new SafeTensorsWriter().add("a", new long[] {2}, new float[] {1, 2}).addBytes("u", DType.U8, new long[] {1}, new byte[] {1}).write(f);
        SafeTensorsFile st = SafeTensorsFile.open(f);
        assertEquals("shape", assertThrows(NullPointerException.class, () -> st.readFloats("a", (long[]) null)).getMessage());
        assertEquals("name", assertThrows(NullPointerException.class, () -> st.readFloats(null, 2)).getMessage());
        st.close();
        for (org.junit.jupiter.api.function.Executable read : new org.junit.jupiter.api.function.Executable[] {
                () -> st.readFloats("a"), () -> st.readFloats("a", 2), () -> st.readBytes("u", DType.U8), () -> st.crc32c("a")}) {
            String m = assertThrows(MlaException.class, read).getMessage();
            assertTrue(m.contains(f.toString()) && m.contains("closed"), m);
        }
        st.close();                                       // twice: harmless
    }
}
