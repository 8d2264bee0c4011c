package org.tornadomla.store;

import org.tornadomla.cache.internal.CacheStorage;
import org.tornadomla.cache.PagedCacheSpec;
import org.junit.jupiter.api.Test;
import org.tornadomla.MlaException;
import org.tornadomla.TestData;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.MlaConfig;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * BlockRows over the contiguous and the paged cache: rows read are the stored numbers (checked by decoding the packed bytes
 * here, independently of the cache's own decoding), and rows appended to another cache make it hold the same
 * bits, for every dtype; a refused append leaves the cache as it was.
 */
class LatentCacheRowsTest {
    final MlaConfig c = new MlaConfig(64, 4, 32, 160, 16, 8, 12, 10000, 1e-6, 4096, 2, null);   // d_c 160: two fp8 scale blocks, the last partial
    static final int N = 11;

    LatentCache filled(CacheDtype dt, int seq) {
        LatentCache cache = new LatentCache(c, 2, 16, dt);
        float[] lat = TestData.gaussian(10 + seq, N * c.kvLoraRank());
        for (int i = 0; i < lat.length; i += 37) lat[i] *= 50;   // outliers: int8/fp8 scales matter
        cache.write(seq, lat, TestData.gaussian(20 + seq, N * c.qkRopeHeadDim()));
        return cache;
    }

    /** Element [t, i] (i &lt; d_c + d_r) of packed rows, decoded from the documented byte layout. */
    static double decode(LatentRows r, int t, int i) {
        int dc = r.kvLoraRank(), dr = r.ropeDim();
        ByteBuffer b = ByteBuffer.wrap(r.data()).order(ByteOrder.LITTLE_ENDIAN);
        int at = t * r.rowBytes();
        return switch (r.dtype()) {
            case F32 -> b.getFloat(at + 4 * i);
            case BF16 -> Float.intBitsToFloat((b.getShort(at + 2 * i) & 0xFFFF) << 16);
            case INT8 -> (double) r.data()[at + i] * b.getFloat(at + dc + dr + 4 * (i < dc ? 0 : 1));
            case FP8 -> {
                int blocks = (dc + 127) / 128;
                if (i >= dc) yield Float.intBitsToFloat((b.getShort(at + dc + 4 * blocks + 2 * (i - dc)) & 0xFFFF) << 16);
                yield e4m3(r.data()[at + i]) * b.getFloat(at + dc + 4 * (i / 128));
            }
        };
    }

    /** OCP e4m3fn: sign, 4 exponent bits (bias 7), 3 mantissa bits. */
    static double e4m3(byte v) {
        int e = (v >> 3) & 15, m = v & 7;
        double mag = e == 0 ? m * Math.pow(2, -9) : (1 + m / 8.0) * Math.pow(2, e - 7);
        return (v & 0x80) != 0 ? -mag : mag;
    }

    @Test
    void rowsReadAreTheStoredNumbers() {
        for (CacheDtype dt : CacheDtype.values()) {
            LatentCache cache = filled(dt, 1);
            LatentRows r = new LatentCacheRows(cache).read(1, 3, 6);
            assertEquals(6, r.count());
            assertEquals(cache.bytesPerToken() * 6, r.data().length, dt + ": CacheLayout's bytes per token");
            float[] lat = cache.latent(1), pe = cache.ropeKey(1);
            int dc = c.kvLoraRank(), dr = c.qkRopeHeadDim();
            for (int t = 0; t < 6; t++) {
                for (int i = 0; i < dc + dr; i++) {
                    double want = i < dc ? lat[(3 + t) * dc + i] : pe[(3 + t) * dr + i - dc];
                    // the cache decodes in float (one rounding of code × scale), this test in double
                    assertEquals(want, decode(r, t, i), 1e-6 * Math.abs(want), dt + " row " + t + " number " + i);
                }
            }
        }
    }

    @Test
    void appendedRowsMakeTheSameCacheBitForBit() {
        for (CacheDtype dt : CacheDtype.values()) {
            LatentCache src = filled(dt, 0);
            LatentCache dst = new LatentCache(c, 2, 16, dt);
            dst.write(1, TestData.gaussian(99, 2 * c.kvLoraRank()), TestData.gaussian(98, 2 * c.qkRopeHeadDim()));
            float[] otherLat = dst.latent(1);
            BlockRows from = new LatentCacheRows(src), to = new LatentCacheRows(dst);
            to.append(0, from.read(0, 0, 4));        // two appends, as two pulls of blocks would
            to.append(0, from.read(0, 4, N - 4));
            assertEquals(N, dst.length(0));
            assertEquals(16 - N, to.room(0));
            assertArrayEquals(src.latent(0), dst.latent(0), dt.toString());
            assertArrayEquals(src.ropeKey(0), dst.ropeKey(0), dt.toString());
            if (dt == CacheDtype.INT8 || dt == CacheDtype.FP8) {
                assertArrayEquals(CacheStorage.of(src).quantised(0).values(), CacheStorage.of(dst).quantised(0).values(), dt.toString());
                assertArrayEquals(CacheStorage.of(src).quantised(0).scales(), CacheStorage.of(dst).quantised(0).scales(), dt.toString());
            }
            assertEquals(from.read(0, 0, N), to.read(0, 0, N), dt + ": the packed rows are equal too");
            assertArrayEquals(otherLat, dst.latent(1), "the other sequence is untouched");

            // a cache of one sequence
            LatentCache one = new LatentCache(c, 1, 16, dt);
            BlockRows single = new LatentCacheRows(one);
            single.append(0, from.read(0, 0, 7));
            single.append(0, from.read(0, 7, N - 7));
            assertEquals(N, one.length(0));
            assertArrayEquals(src.latent(0), one.latent(0), dt + ", one sequence");
            assertArrayEquals(src.ropeKey(0), one.ropeKey(0), dt + ", one sequence");
            assertEquals(from.read(0, 0, N), single.read(0, 0, N), dt + ", one sequence");
            assertTrue(assertThrows(MlaException.class, () -> single.append(0, from.read(0, 0, 6))).getMessage().contains("latent cache full"));
            assertEquals(N, one.length(0));
        }
    }

    @Test
    void aRefusedAppendLeavesTheCacheAsItWas() {
        LatentCache src = filled(CacheDtype.BF16, 0);
        LatentCache dst = new LatentCache(c, 2, 12, CacheDtype.BF16);   // room for 7 more after 5
        BlockRows to = new LatentCacheRows(dst);
        to.append(0, new LatentCacheRows(src).read(0, 0, 5));
        float[] before = dst.latent(0);

        LatentRows fp8 = new LatentCacheRows(filled(CacheDtype.FP8, 0)).read(0, 0, 2);
        assertTrue(assertThrows(MlaException.class, () -> to.append(0, fp8)).getMessage().contains("expected bf16 rows"));
        LatentRows tooMany = new LatentCacheRows(filled(CacheDtype.BF16, 0)).read(0, 0, N);
        assertTrue(assertThrows(MlaException.class, () -> to.append(0, tooMany)).getMessage().contains("latent cache full"));
        byte[] nan = new LatentCacheRows(src).read(0, 0, 2).data().clone();
        nan[2 * 7 + 1] = (byte) 0x7F;   // number 7 of row 0: 0x7Fxx is a NaN or ∞ pattern in bf16
        nan[2 * 7] = (byte) 0xC1;
        assertTrue(assertThrows(MlaException.class, () -> to.append(0, new LatentRows(CacheDtype.BF16, 160, 8, 2, nan)))
                .getMessage().contains("finite"));
        assertThrows(MlaException.class, () -> to.read(0, 3, 3), "past the sequence's length");
        assertEquals(5, dst.length(0));
        assertArrayEquals(before, dst.latent(0));
    }

    @Test
    void pagedCacheScatteredBlocksForkAndAFullPool() {
        for (CacheDtype dt : CacheDtype.values()) {
            BlockRows from = new LatentCacheRows(filled(dt, 0));
            LatentRows src = from.read(0, 0, N);
            // blocks of 4 handed out in a shuffled order: the 11 rows land in 3 scattered blocks
            LatentCache paged = LatentCache.paged(c, PagedCacheSpec.builder().maxSequences(3).maxSequenceLength(32).numBlocks(6).blockSize(4).dtype(dt).build());
            CacheStorage.of(paged).shuffleFreeBlocks(7);
            int s0 = paged.addSequence();
            BlockRows to = new LatentCacheRows(paged);
            assertEquals(24, to.room(s0), dt + ": capacity 32, but only 6 free blocks of 4");
            to.append(s0, from.read(0, 0, 3));
            to.append(s0, from.read(0, 3, 6));      // fills block 0's last slot, then block 1, then half of block 2
            to.append(s0, from.read(0, 9, 2));
            assertEquals(N, paged.length(s0));
            assertEquals(src, to.read(s0, 0, N), dt + ": paged rows equal the contiguous ones");
            assertEquals(3, paged.blockTable(s0).length);
            assertEquals(3, paged.freeBlocks());

            // a fork shares all three blocks; its first append copies the partial third one (copy-on-write)
            int f = paged.fork(s0);
            LatentRows extra = new LatentCacheRows(filled(dt, 1)).read(1, 0, 2);
            assertEquals(1 + 2 * 4, to.room(f), dt + ": 1 slot left in the shared block, 3 free blocks, one of them for the copy");
            to.append(f, extra);                    // the copy, its last slot, and a new block for the second row
            assertEquals(N + 2, paged.length(f));
            assertEquals(src, to.read(f, 0, N), dt + ": the fork's copied block holds the shared rows");
            assertEquals(extra, to.read(f, N, 2), dt.toString());
            assertEquals(src, to.read(s0, 0, N), dt + ": the original is untouched");
            assertEquals(N, paged.length(s0));
            assertTrue(paged.blockTable(f)[2] != paged.blockTable(s0)[2] && paged.blockTable(f)[1] == paged.blockTable(s0)[1], dt.toString());
            assertEquals(1, paged.freeBlocks());

            // s0 now holds its third block alone: 1 slot there and 1 free block of 4
            assertEquals(5, to.room(s0), dt.toString());
            LatentRows six = new LatentCacheRows(filled(dt, 0)).read(0, 0, 6);
            int[] table = paged.blockTable(s0);
            assertTrue(assertThrows(MlaException.class, () -> to.append(s0, six)).getMessage().contains("room for 5"), dt.toString());
            assertEquals(N, paged.length(s0));
            assertArrayEquals(table, paged.blockTable(s0));
            assertEquals(1, paged.freeBlocks(), dt + ": a refused append takes no block");
            to.append(s0, new LatentCacheRows(filled(dt, 0)).read(0, 0, 5));   // exactly the room fits
            assertEquals(N + 5, paged.length(s0));
            assertEquals(0, to.room(s0));
            assertEquals(src, to.read(s0, 0, N), dt.toString());
        }
    }
}
