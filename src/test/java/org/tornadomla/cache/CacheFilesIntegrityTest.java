package org.tornadomla.cache;

import org.tornadomla.internal.Messages;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tornadomla.MlaException;
import org.tornadomla.TestData;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.attention.MlaLayer;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.weights.DType;
import org.tornadomla.weights.MlaWeights;
import org.tornadomla.weights.SafeTensorsWriter;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A cache file that is not exactly what was exported is refused, with the target cache unchanged. */
class CacheFilesIntegrityTest {
    @TempDir
    Path dir;
    final MlaConfig c = TestData.small();
    static final int N = 5;

    final MlaWeights weights = MlaWeights.random(c, 3);

    private LatentCache filled(CacheDtype dt) {
        MlaLayer layer = new MlaLayer(weights);
        LatentCache cache = layer.newCache(1, 8, dt);
        layer.prefill(cache, TestData.gaussian(4, N * c.hiddenSize()), N, AttentionPath.ABSORBED);
        return cache;
    }

    private String refused(Path file, CacheDtype dt) {
        LatentCache target = new LatentCache(c, 1, 8, dt);
        String m = assertThrows(MlaException.class, () -> CacheFiles.importInto(target, 0, file)).getMessage();
        assertEquals(0, target.length(0), "the cache is unchanged");
        assertEquals(1, m.lines().count(), m);
        return m;
    }

    @Test
    void aFlippedBitAnywhereInTheDataIsAClearError() throws IOException {
        for (CacheDtype dt : CacheDtype.values()) {
            Path file = dir.resolve(dt + ".safetensors");
            CacheFiles.export(filled(dt), 0, file);
            byte[] bytes = Files.readAllBytes(file);
            long dataStart = 8 + ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).getLong();
            for (long at : new long[] {dataStart, dataStart + 7, bytes.length - 1, (dataStart + bytes.length) / 2}) {
                for (int bit : new int[] {0, 7}) {
                    byte[] damaged = bytes.clone();
                    damaged[(int) at] ^= (byte) (1 << bit);
                    Path bad = dir.resolve("bad-" + dt + ".safetensors");
                    Files.write(bad, damaged);
                    String m = refused(bad, dt);
                    assertTrue(m.contains("is damaged") && m.contains("CRC32C"), dt + " byte " + at + ": " + m);
                }
            }
            LatentCache ok = new LatentCache(c, 1, 8, dt);
            CacheFiles.importInto(ok, 0, file);
            assertEquals(N, ok.length(0));
        }
    }

    /** A cache file written by hand: correct metadata and checksums, chosen tensors. */
    private Path handMade(String name, CacheDtype dt, SafeTensorsWriter w) {
        Path f = dir.resolve(name);
        identity(w.checksums()).metadata("dtype", dt.toString()).metadata("length", Integer.toString(N)).write(f);
        return f;
    }

    /** The format and the identity of {@link #weights}' caches, as an export writes them. */
    private SafeTensorsWriter identity(SafeTensorsWriter w) {
        CacheIdentity id = CacheIdentity.of(weights);
        return w.metadata("format", CacheFiles.FORMAT).metadata("config", c.toJson()).metadata("config_sha256", CacheIdentity.configHash(c))
                .metadata("layer", Integer.toString(id.layer())).metadata("weights_sha256", id.weightsSha256());
    }

    /** What an import would refuse is not exported: a cache whose storage holds ∞ (as an overflow on a device could leave it) writes no file. */
    @Test
    void aCacheHoldingNonFiniteNumbersIsNotExported() {
        int dc = c.kvLoraRank(), dr = c.qkRopeHeadDim();
        LatentCache cache = filled(CacheDtype.F32);
        org.tornadomla.cache.internal.CacheStorage.of(cache).floats()[2 * (dc + dr) + 3] = Float.POSITIVE_INFINITY;
        Path file = dir.resolve("inf.safetensors");
        String m = assertThrows(MlaException.class, () -> CacheFiles.export(cache, 0, file)).getMessage();
        assertEquals("cache export: sequence 0's kv_cache holds Infinity at [2, 3]; an import would refuse it, so nothing was written", m);
        assertTrue(java.nio.file.Files.notExists(file), "no file");
    }

    @Test
    void nonFiniteValuesNegativeScalesAndFp8NanCodesAreRefused() {
        int dc = c.kvLoraRank(), dr = c.qkRopeHeadDim();
        float[] kv = TestData.gaussian(1, N * dc), pe = TestData.gaussian(2, N * dr);
        kv[2 * dc + 3] = Float.NaN;
        assertTrue(refused(handMade("nan.safetensors", CacheDtype.F32, new SafeTensorsWriter().add("kv_cache", new long[] {N, dc}, kv)
                .add("pe_cache", new long[] {N, dr}, pe)), CacheDtype.F32).contains("tensor kv_cache holds NaN at [2, 3]"));
        kv[2 * dc + 3] = 1f;
        pe[dr + 1] = Float.NEGATIVE_INFINITY;
        assertTrue(refused(handMade("inf.safetensors", CacheDtype.BF16, new SafeTensorsWriter().add("kv_cache", DType.BF16, new long[] {N, dc}, kv)
                .add("pe_cache", DType.BF16, new long[] {N, dr}, pe)), CacheDtype.BF16).contains("tensor pe_cache holds -Infinity at [1, 1]"));
        pe[dr + 1] = 0f;
        byte[] e4m3 = new byte[N * dc];
        e4m3[4 * dc + 1] = (byte) 0xFF;
        float[] scales = new float[N * ((dc + 127) / 128)];
        java.util.Arrays.fill(scales, 0.5f);
        assertTrue(refused(handMade("fp8nan.safetensors", CacheDtype.FP8, new SafeTensorsWriter().addBytes("kv_cache_fp8", DType.F8_E4M3, new long[] {N, dc}, e4m3)
                .add("kv_cache_scales", new long[] {N, scales.length / N}, scales).add("pe_cache", DType.BF16, new long[] {N, dr}, pe)), CacheDtype.FP8)
                .contains("e4m3 NaN code 0xff at [4, 1]"));
        byte[] int8 = new byte[N * (dc + dr)];
        float[] s2 = new float[2 * N];
        java.util.Arrays.fill(s2, 0.1f);
        s2[7] = -0.1f;
        assertTrue(refused(handMade("negscale.safetensors", CacheDtype.INT8, new SafeTensorsWriter().addBytes("kv_cache_int8", DType.I8, new long[] {N, dc + dr}, int8)
                .add("kv_cache_scales", new long[] {N, 2}, s2)), CacheDtype.INT8).contains("kv_cache_scales holds -0.1 at [3, 1]; scales must be finite and >= 0"));
    }

    @Test
    void anythingElseThanWhatExportWritesIsRefused() {
        int dc = c.kvLoraRank(), dr = c.qkRopeHeadDim();
        float[] kv = TestData.gaussian(1, N * dc), pe = TestData.gaussian(2, N * dr);
        assertTrue(refused(handMade("dtype.safetensors", CacheDtype.BF16, new SafeTensorsWriter().add("kv_cache", new long[] {N, dc}, kv)
                .add("pe_cache", DType.BF16, new long[] {N, dr}, pe)), CacheDtype.BF16).contains("tensor kv_cache has dtype F32, expected BF16"));
        assertTrue(refused(handMade("extra.safetensors", CacheDtype.F32, new SafeTensorsWriter().add("kv_cache", new long[] {N, dc}, kv)
                .add("pe_cache", new long[] {N, dr}, pe).add("spare", new long[] {1}, new float[1])), CacheDtype.F32).contains("unexpected tensor 'spare'"));
        Path noCrc = dir.resolve("nocrc.safetensors");
        identity(new SafeTensorsWriter()).metadata("dtype", "f32")
                .metadata("length", Integer.toString(N)).add("kv_cache", new long[] {N, dc}, kv).add("pe_cache", new long[] {N, dr}, pe).write(noCrc);
        assertTrue(refused(noCrc, CacheDtype.F32).contains("no valid checksum for tensor kv_cache"));
        Path v1 = dir.resolve("v1.safetensors");
        new SafeTensorsWriter().metadata("format", "tornado-mla/latent-cache/1").add("kv_cache", new long[] {N, dc}, kv).write(v1);
        assertTrue(refused(v1, CacheDtype.F32).contains("format 1, which has no checksums"));
        Path len = dir.resolve("len.safetensors");
        identity(new SafeTensorsWriter().checksums())
                .metadata("dtype", "f32").metadata("length", "+5").add("kv_cache", new long[] {N, dc}, kv).add("pe_cache", new long[] {N, dr}, pe).write(len);
        assertTrue(refused(len, CacheDtype.F32).contains("metadata length '+5' is not a token count"));
        // a length edited by one: the metadata and the tensors disagree, and the message says so, with the file
        Path edited = dir.resolve("edited.safetensors");
        identity(new SafeTensorsWriter().checksums()).metadata("dtype", "f32").metadata("length", Integer.toString(N - 1))
                .add("kv_cache", new long[] {N, dc}, kv).add("pe_cache", new long[] {N, dr}, pe).write(edited);
        assertEquals(edited + ": metadata length " + (N - 1) + ", but tensor kv_cache holds " + N + " tokens; the file's metadata and tensors "
                + "disagree (edited or damaged)", refused(edited, CacheDtype.F32));
        assertTrue(refused(handMade("width.safetensors", CacheDtype.F32, new SafeTensorsWriter().add("kv_cache", new long[] {N, dc - 1}, new float[N * (dc - 1)])
                .add("pe_cache", new long[] {N, dr}, pe)), CacheDtype.F32).startsWith(dir.resolve("width.safetensors") + ": tensor kv_cache has shape ["
                + N + ", " + (dc - 1) + "], expected [" + N + ", " + dc + "]"));
    }

    @Test
    void theApiChecksItsArguments() {
        LatentCache cache = filled(CacheDtype.F32);
        Path f = dir.resolve("c.safetensors");
        assertEquals("sequence 1 out of range: the cache holds sequences 0 … 0",
                assertThrows(MlaException.class, () -> CacheFiles.export(cache, 1, f)).getMessage());
        assertEquals("file", assertThrows(NullPointerException.class, () -> CacheFiles.export(cache, 0, null)).getMessage());
        CacheFiles.export(cache, 0, f);
        assertEquals("sequence -1 out of range: the cache holds sequences 0 … 0",
                assertThrows(MlaException.class, () -> CacheFiles.importInto(new LatentCache(c, 1, 8, CacheDtype.F32), -1, f)).getMessage());
        LatentCache other = new LatentCache(c, 1, 8, CacheDtype.F32);
        CacheFiles.importInto(other, 0, f);
        assertArrayEquals(cache.latent(0), other.latent(0));
    }
    @Test
    void metadataTheExporterDoesNotWriteIsRefused() {
        int dc = c.kvLoraRank(), dr = c.qkRopeHeadDim();
        java.util.function.Supplier<SafeTensorsWriter> ok = () -> new SafeTensorsWriter()
                .add("kv_cache", DType.F32, new long[] {N, dc}, new float[N * dc]).add("pe_cache", DType.F32, new long[] {N, dr}, new float[N * dr]);
        LatentCache target = new LatentCache(c, 1, 8, CacheDtype.F32);
        CacheFiles.importInto(target, 0, handMade("ok.safetensors", CacheDtype.F32, ok.get()));   // the hand-made file itself is fine
        assertEquals(N, target.length(0));
        for (String key : new String[] {"crc32c.extra", "crc32c.kv_cache_int8", "comment", "crc32c."}) {
            String m = refused(handMade(key + ".safetensors", CacheDtype.F32, ok.get().metadata(key, "00000000")), CacheDtype.F32);
            assertTrue(m.contains("unexpected metadata key " + org.tornadomla.internal.Messages.quote(key)), m);
        }
    }
}
