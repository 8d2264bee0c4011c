package org.tornadomla.store;

import org.junit.jupiter.api.Test;
import org.tornadomla.MlaException;
import org.tornadomla.TestData;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.CacheFiles;
import org.tornadomla.cache.CacheIdentity;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.MlaConfig;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The value format: its bytes as documented, and every way a value can be wrong is a one-line error naming it. */
class BlockValueTest {
    final MlaConfig c = TestData.small();   // d_c 32, d_r 8
    final byte[] sha = HexFormat.of().parseHex(CacheIdentity.configHash(c));
    /** The weights' digest the values carry: SHA-256 of a name (any 32 bytes do). */
    static final byte[] WEIGHTS = sha256("weights of BlockValueTest");

    static byte[] sha256(String s) {
        try {
            return java.security.MessageDigest.getInstance("SHA-256").digest(s.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    CacheIdentity id(int layer) {
        return new CacheIdentity(c, layer, HexFormat.of().formatHex(WEIGHTS));
    }
    static final String WHERE = "redis://h:1: block 1 (key mla:v1:abc)";

    /** Rows 4 … 7 of a cache of 10 seeded tokens. */
    LatentRows rows(CacheDtype dt) {
        LatentCache cache = new LatentCache(c, 1, 10, dt);
        cache.write(0, TestData.gaussian(5, 10 * c.kvLoraRank()), TestData.gaussian(6, 10 * c.qkRopeHeadDim()));
        return new LatentCacheRows(cache).read(0, 4, 4);
    }

    BlockKeys.Key key(CacheDtype dt, int layer) {
        return new BlockKeys(BlockKeys.PREFIX, "m", CacheIdentity.configHash(c), dt, 4).chain(new int[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, layer).get(1);
    }

    BlockValue.Expected expected(CacheDtype dt, int layer) {
        return new BlockValue.Expected(sha, WEIGHTS, dt, c.kvLoraRank(), c.qkRopeHeadDim(), layer, key(dt, layer));
    }

    @Test
    void theBytesAreTheDocumentedLayout() {
        for (CacheDtype dt : CacheDtype.values()) {
            LatentRows r = rows(dt);
            BlockKeys.Key k = key(dt, 2);
            byte[] v = BlockValue.encode(id(2), k, r);
            ByteBuffer b = ByteBuffer.wrap(v).order(ByteOrder.LITTLE_ENDIAN);
            assertEquals("MLAB", new String(v, 0, 4, java.nio.charset.StandardCharsets.US_ASCII));
            assertEquals(3, b.getShort(4), "format version");
            assertEquals(dt.code, v[6]);
            assertEquals(0, v[7], "a full block");
            assertEquals(2, b.getInt(8), "layer");
            assertEquals(4, b.getInt(12), "start");
            assertEquals(4, b.getInt(16), "rows");
            assertEquals(c.kvLoraRank(), b.getInt(20));
            assertEquals(c.qkRopeHeadDim(), b.getInt(24));
            assertArrayEquals(sha, Arrays.copyOfRange(v, 28, 60));
            assertArrayEquals(WEIGHTS, Arrays.copyOfRange(v, 60, 92), "the weights' digest");
            assertArrayEquals(WEIGHTS, BlockValue.weightsSha(v));
            assertArrayEquals(k.digest(), Arrays.copyOfRange(v, 92, 124));
            assertEquals(0, b.getInt(124), "index_head_dim of a dense cache's rows");
            assertArrayEquals(r.data(), Arrays.copyOfRange(v, 128, v.length - 4));
            CRC32C crc = new CRC32C();
            crc.update(v, 0, v.length - 4);
            assertEquals(crc.getValue(), Integer.toUnsignedLong(b.getInt(v.length - 4)));
            // bytes per row as CacheLayout states them for this geometry (d_c 32, d_r 8: one fp8 scale)
            int perRow = switch (dt) {
                case F32 -> 4 * 40;
                case BF16 -> 2 * 40;
                case INT8 -> 40 + 8;
                case FP8 -> 32 + 4 + 2 * 8;
            };
            assertEquals(128 + 4 * perRow + 4, v.length, dt.toString());
            assertEquals(r, BlockValue.decode(v, expected(dt, 2), WHERE), "round trip " + dt);
        }
    }

    private String refused(byte[] v, BlockValue.Expected e) {
        String m = assertThrows(MlaException.class, () -> BlockValue.decode(v, e, WHERE)).getMessage();
        assertEquals(1, m.lines().count(), m);
        assertTrue(m.startsWith(WHERE + ": "), m);
        return m;
    }

    @Test
    void anyFlippedByteIsRefused() {
        SplittableRandom rnd = new SplittableRandom(7);
        for (CacheDtype dt : CacheDtype.values()) {
            byte[] v = BlockValue.encode(id(1), key(dt, 1), rows(dt));
            for (int i = 0; i < v.length; i++) {
                if (i >= 124 && i < v.length - 4 && rnd.nextInt(8) != 0) continue;   // every header and trailer byte, an eighth of the rows
                byte[] bad = v.clone();
                bad[i] ^= (byte) (1 << rnd.nextInt(8));
                refused(bad, expected(dt, 1));
            }
            byte[] bad = v.clone();
            bad[130] ^= 0x10;
            assertTrue(refused(bad, expected(dt, 1)).contains("damaged: its bytes have CRC32C"), dt.toString());
        }
    }

    @Test
    void truncatedOrPaddedValuesAreRefused() {
        byte[] v = BlockValue.encode(id(1), key(CacheDtype.BF16, 1), rows(CacheDtype.BF16));
        assertTrue(refused(Arrays.copyOf(v, v.length - 1), expected(CacheDtype.BF16, 1)).contains("truncated"));
        assertTrue(refused(Arrays.copyOf(v, v.length / 2), expected(CacheDtype.BF16, 1)).contains("truncated"));
        assertTrue(refused(Arrays.copyOf(v, 10), expected(CacheDtype.BF16, 1)).contains("truncated"));
        assertTrue(refused(new byte[0], expected(CacheDtype.BF16, 1)).contains("truncated"));
        assertTrue(refused(Arrays.copyOf(v, v.length + 3), expected(CacheDtype.BF16, 1)).contains("longer than its header says"));
        assertTrue(refused(("hello, this is not a block at all, but long enough to have a header and a checksum......................."
                + "................................")
                .getBytes(java.nio.charset.StandardCharsets.US_ASCII), expected(CacheDtype.BF16, 1)).contains("not a latent block"));
    }

    @Test
    void foreignConfigWrongDtypeLayerOrKeyAreRefused() {
        byte[] v = BlockValue.encode(id(1), key(CacheDtype.BF16, 1), rows(CacheDtype.BF16));
        byte[] otherSha = HexFormat.of().parseHex(CacheIdentity.configHash(TestData.noQLora()));
        String m = refused(v, new BlockValue.Expected(otherSha, WEIGHTS, CacheDtype.BF16, c.kvLoraRank(), c.qkRopeHeadDim(), 1, key(CacheDtype.BF16, 1)));
        assertTrue(m.contains("made for another config"), m);
        m = refused(v, new BlockValue.Expected(sha, WEIGHTS, CacheDtype.FP8, c.kvLoraRank(), c.qkRopeHeadDim(), 1, key(CacheDtype.BF16, 1)));
        assertTrue(m.contains("holds bf16 rows, the cache stores fp8"), m);
        m = refused(v, new BlockValue.Expected(sha, WEIGHTS, CacheDtype.BF16, c.kvLoraRank(), c.qkRopeHeadDim(), 0, key(CacheDtype.BF16, 1)));
        assertTrue(m.contains("holds layer 1, expected layer 0"), m);
        m = refused(v, new BlockValue.Expected(sha, WEIGHTS, CacheDtype.BF16, c.kvLoraRank(), c.qkRopeHeadDim(), 1, key(CacheDtype.BF16, 0)));
        assertTrue(m.contains("not the block its key names"), m);
        // other weights (the same model name, config and layer: another checkpoint)
        byte[] other = sha256("other weights");
        m = refused(v, new BlockValue.Expected(sha, other, CacheDtype.BF16, c.kvLoraRank(), c.qkRopeHeadDim(), 1, key(CacheDtype.BF16, 1)));
        assertEquals(WHERE + ": made by other weights (kv_a_proj_with_mqa/kv_a_layernorm sha256 " + HexFormat.of().formatHex(WEIGHTS, 0, 6)
                + "…, this layer's are " + HexFormat.of().formatHex(other, 0, 6) + "…)", m);
        // a reader without weights of its own (a cache that belongs to no layer yet) takes any, and learns whose they are
        assertEquals(rows(CacheDtype.BF16), BlockValue.decode(v, new BlockValue.Expected(sha, null, CacheDtype.BF16, c.kvLoraRank(), c.qkRopeHeadDim(), 1,
                key(CacheDtype.BF16, 1)), WHERE));
        assertArrayEquals(WEIGHTS, BlockValue.weightsSha(v));
    }

    /** A value of format version 1 (before the weights' digest: 92-byte header) is refused by its version, whatever else it holds. */
    @Test
    void aVersion1ValueIsRefusedByItsVersion() {
        byte[] v2 = BlockValue.encode(id(1), key(CacheDtype.F32, 1), rows(CacheDtype.F32));
        byte[] v1 = new byte[v2.length - 32];
        System.arraycopy(v2, 0, v1, 0, 60);                                  // magic … config hash
        System.arraycopy(v2, 92, v1, 60, v2.length - 92);                    // block digest, rows, (stale) checksum
        ByteBuffer.wrap(v1).order(ByteOrder.LITTLE_ENDIAN).putShort(4, (short) 1);
        CRC32C crc = new CRC32C();
        crc.update(v1, 0, v1.length - 4);
        ByteBuffer.wrap(v1).order(ByteOrder.LITTLE_ENDIAN).putInt(v1.length - 4, (int) crc.getValue());
        assertEquals(WHERE + ": latent block of format version 1, this reader knows versions 2 and 3", refused(v1, expected(CacheDtype.F32, 1)));
    }

    /** A value of format version 2 (a dense cache's rows, no index_head_dim field: 124-byte header) is still read. */
    @Test
    void aVersion2ValueIsStillRead() {
        for (CacheDtype dt : CacheDtype.values()) {
            byte[] v3 = BlockValue.encode(id(1), key(dt, 1), rows(dt));
            byte[] v2 = new byte[v3.length - 4];
            System.arraycopy(v3, 0, v2, 0, 124);                                  // magic … block digest
            System.arraycopy(v3, 128, v2, 124, v3.length - 128);                  // rows, (stale) checksum
            ByteBuffer.wrap(v2).order(ByteOrder.LITTLE_ENDIAN).putShort(4, (short) 2);
            CRC32C crc = new CRC32C();
            crc.update(v2, 0, v2.length - 4);
            ByteBuffer.wrap(v2).order(ByteOrder.LITTLE_ENDIAN).putInt(v2.length - 4, (int) crc.getValue());
            assertEquals(rows(dt), BlockValue.decode(v2, expected(dt, 1), WHERE), dt.toString());
            // a sparse cache cannot take a version-2 value: it has no indexer keys
            BlockValue.Expected sparse = new BlockValue.Expected(sha, WEIGHTS, dt, c.kvLoraRank(), c.qkRopeHeadDim(), 128, 1, key(dt, 1));
            assertTrue(refused(v2, sparse).contains("a sparse cache"), dt.toString());
        }
    }

    @Test
    void numbersNoCacheHoldsAreRefusedEvenWithAValidChecksum() {
        BlockKeys.Key k = key(CacheDtype.F32, 0);
        LatentRows r = rows(CacheDtype.F32);
        byte[] d = r.data().clone();
        ByteBuffer.wrap(d).order(ByteOrder.LITTLE_ENDIAN).putFloat(4 * 45, Float.NaN);   // row 1, number 5
        byte[] v = BlockValue.encode(id(0), k, new LatentRows(CacheDtype.F32, 32, 8, 4, d));
        assertTrue(refused(v, expected(CacheDtype.F32, 0)).contains("row 1 number [5] (c_kv) is NaN"));

        LatentRows f = rows(CacheDtype.FP8);
        byte[] e = f.data().clone();
        e[f.rowBytes() + 3] = (byte) 0xFF;
        v = BlockValue.encode(id(0), key(CacheDtype.FP8, 0), new LatentRows(CacheDtype.FP8, 32, 8, 4, e));
        assertTrue(refused(v, expected(CacheDtype.FP8, 0)).contains("e4m3 NaN code 0xff"));

        LatentRows q = rows(CacheDtype.INT8);
        byte[] s = q.data().clone();
        ByteBuffer.wrap(s).order(ByteOrder.LITTLE_ENDIAN).putFloat(2 * q.rowBytes() + 40, -1f);
        v = BlockValue.encode(id(0), key(CacheDtype.INT8, 0), new LatentRows(CacheDtype.INT8, 32, 8, 4, s));
        assertTrue(refused(v, expected(CacheDtype.INT8, 0)).contains("row 2 scale [0] is -1.0"));
    }

    @Test
    void aValueOfTheWrongRowCountForItsKeyIsNotWritten() {
        assertThrows(MlaException.class, () -> BlockValue.encode(id(0), key(CacheDtype.F32, 0), rows(CacheDtype.F32).slice(0, 3)));
    }
}
