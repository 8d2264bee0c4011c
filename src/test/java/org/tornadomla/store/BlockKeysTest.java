package org.tornadomla.store;

import org.junit.jupiter.api.Test;
import org.tornadomla.MlaException;
import org.tornadomla.TestData;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.CacheIdentity;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The key chain: its bytes as documented, and which keys two sequences share. */
class BlockKeysTest {
    static final String CONFIG = CacheIdentity.configHash(TestData.small());
    final BlockKeys keys = new BlockKeys(BlockKeys.PREFIX, "test-model", CONFIG, CacheDtype.BF16, 4);

    static int[] tokens(long seed, int n) {
        SplittableRandom r = new SplittableRandom(seed);
        int[] t = new int[n];
        for (int i = 0; i < n; i++) t[i] = r.nextInt(129280);
        return t;
    }

    /** The digest written out from BlockKeys' documentation, byte by byte, as the independent reference. */
    private static byte[] documented(String model, String config, int dtypeCode, int layer, byte[] prev, int kind, int[] ids) throws Exception {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.write("tornado-mla/block-key/1".getBytes(StandardCharsets.US_ASCII));
        byte[] m = model.getBytes(StandardCharsets.UTF_8);
        u32(b, m.length);
        b.write(m);
        b.write(HexFormat.of().parseHex(config));
        b.write(dtypeCode);
        u32(b, layer);
        b.write(prev);
        b.write(kind);
        u32(b, ids.length);
        for (int id : ids) u32(b, id);
        return MessageDigest.getInstance("SHA-256").digest(b.toByteArray());
    }

    private static void u32(ByteArrayOutputStream b, int v) {
        b.write(v);
        b.write(v >>> 8);
        b.write(v >>> 16);
        b.write(v >>> 24);
    }

    @Test
    void keysAreTheDocumentedHashChain() throws Exception {
        int[] t = tokens(1, 10);   // blocks of 4: [0,4) [4,8) and the partial [8,10)
        List<BlockKeys.Key> chain = keys.chain(t, 3);
        assertEquals(3, chain.size());
        byte[] d0 = documented("test-model", CONFIG, 1, 3, new byte[32], 0, Arrays.copyOfRange(t, 0, 4));
        byte[] d1 = documented("test-model", CONFIG, 1, 3, d0, 0, Arrays.copyOfRange(t, 4, 8));
        byte[] d2 = documented("test-model", CONFIG, 1, 3, d1, 1, Arrays.copyOfRange(t, 8, 10));
        assertEquals("mla:v1:" + HexFormat.of().formatHex(d0), chain.get(0).name());
        assertEquals("mla:v1:" + HexFormat.of().formatHex(d1), chain.get(1).name());
        assertEquals("mla:v1:" + HexFormat.of().formatHex(d2), chain.get(2).name());
        assertEquals(List.of(0, 4, 8), chain.stream().map(BlockKeys.Key::start).toList());
        assertEquals(List.of(4, 4, 2), chain.stream().map(BlockKeys.Key::count).toList());
        assertEquals(List.of(false, false, true), chain.stream().map(BlockKeys.Key::partial).toList());
    }

    @Test
    void sequencesShareExactlyTheFullBlocksOfTheirCommonPrefix() {
        int[] a = tokens(2, 18);
        int[] b = a.clone();
        b[9] ^= 1;   // differs in block 2
        List<BlockKeys.Key> ka = keys.chain(a, 0), kb = keys.chain(b, 0);
        assertEquals(ka.subList(0, 2), kb.subList(0, 2));
        for (int i = 2; i < ka.size(); i++) assertNotEquals(ka.get(i), kb.get(i), "block " + i + " and every later one differ");
        // a prefix of a: its full blocks are a's; its partial last block is not a's full block
        List<BlockKeys.Key> prefix = keys.chain(Arrays.copyOf(a, 10), 0);
        assertEquals(ka.subList(0, 2), prefix.subList(0, 2));
        assertNotEquals(ka.get(2), prefix.get(2));
        assertNotEquals(keys.chain(Arrays.copyOf(a, 9), 0).get(2), prefix.get(2), "a partial block's key covers its length");
    }

    @Test
    void layerModelConfigAndDtypeSeparateTheKeys() {
        int[] t = tokens(3, 8);
        String k = keys.chain(t, 0).get(0).name();
        assertNotEquals(k, keys.chain(t, 1).get(0).name());
        assertNotEquals(k, new BlockKeys(BlockKeys.PREFIX, "other-model", CONFIG, CacheDtype.BF16, 4).chain(t, 0).get(0).name());
        assertNotEquals(k, new BlockKeys(BlockKeys.PREFIX, "test-model", CacheIdentity.configHash(TestData.yarn()), CacheDtype.BF16, 4).chain(t, 0).get(0).name());
        assertNotEquals(k, new BlockKeys(BlockKeys.PREFIX, "test-model", CONFIG, CacheDtype.FP8, 4).chain(t, 0).get(0).name());
        assertEquals(k, new BlockKeys(BlockKeys.PREFIX, "test-model", CONFIG, CacheDtype.BF16, 4).chain(t, 0).get(0).name(), "deterministic");
        assertTrue(k.matches("mla:v1:[0-9a-f]{64}"), k);
    }

    @Test
    void badArgumentsAreRefused() {
        assertThrows(MlaException.class, () -> keys.chain(new int[] {1, -2}, 0));
        assertThrows(MlaException.class, () -> keys.chain(new int[] {1}, -1));
        assertThrows(MlaException.class, () -> new BlockKeys(BlockKeys.PREFIX, "m", CONFIG, CacheDtype.F32, 0));
        assertThrows(MlaException.class, () -> new BlockKeys(BlockKeys.PREFIX, "m", "abc", CacheDtype.F32, 4));
        assertEquals(List.of(), keys.chain(new int[0], 0));
    }
}
