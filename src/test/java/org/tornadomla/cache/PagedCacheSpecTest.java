package org.tornadomla.cache;

import org.junit.jupiter.api.Test;
import org.tornadomla.MlaException;
import org.tornadomla.TestData;
import org.tornadomla.config.MlaConfig;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The paged cache's spec is set by name: required counts, defaults, and one clear refusal per bad count. */
class PagedCacheSpecTest {
    @Test
    void defaultsAreAFullPoolOf64TokenBlocksInBf16() {
        PagedCacheSpec s = PagedCacheSpec.builder().maxSequences(3).maxSequenceLength(130).build();
        assertEquals(64, s.blockSize());
        assertEquals(CacheDtype.BF16, s.dtype());
        assertEquals(3, s.maxBlocksPerSequence(), "⌈130 / 64⌉");
        assertEquals(9, s.numBlocks(), "every sequence at full length: 3 × 3 blocks");
        MlaConfig c = TestData.small();
        LatentCache cache = LatentCache.paged(c, s);
        assertTrue(cache.paged());
        assertEquals(3, cache.maxSequences());
        assertEquals(192, cache.capacity(), "whole blocks: 3 × 64");
        assertEquals(9, cache.numBlocks());
        assertEquals(9, cache.freeBlocks());
        assertEquals(0, cache.sequences().length, "no sequence until added");
    }

    @Test
    void namedCountsLandWhereTheirNamesSay() {
        PagedCacheSpec s = PagedCacheSpec.builder().numBlocks(7).blockSize(4).maxSequenceLength(10).maxSequences(2).dtype(CacheDtype.FP8).build();
        assertEquals(new PagedCacheSpec(2, 10, 7, 4, CacheDtype.FP8), s);
        LatentCache cache = LatentCache.paged(TestData.small(), s);
        assertEquals(2, cache.maxSequences());
        assertEquals(12, cache.capacity());
        assertEquals(7, cache.numBlocks());
        assertEquals(4, cache.blockSize());
        assertEquals(CacheDtype.FP8, cache.dtype());
        int a = cache.addSequence(), b = cache.addSequence();
        cache.free(a);
        assertArrayEquals(new int[] {b}, cache.sequences());
        assertFalse(cache.contains(a));
    }

    @Test
    void aMissingOrBadCountIsOneLineNamingIt() {
        assertEquals("paged cache: maxSequences is not set",
                assertThrows(MlaException.class, () -> PagedCacheSpec.builder().maxSequenceLength(8).build()).getMessage());
        assertEquals("paged cache: maxSequenceLength is not set",
                assertThrows(MlaException.class, () -> PagedCacheSpec.builder().maxSequences(8).build()).getMessage());
        assertEquals("paged cache: max sequences must be > 0, found 0",
                assertThrows(MlaException.class, () -> PagedCacheSpec.builder().maxSequences(0).maxSequenceLength(8).build()).getMessage());
        // an explicit −1 is a count like any other, not "not set" (or, for the pool, its default)
        assertEquals("paged cache: max sequences must be > 0, found -1",
                assertThrows(MlaException.class, () -> PagedCacheSpec.builder().maxSequences(-1).maxSequenceLength(8).build()).getMessage());
        assertEquals("paged cache: the pool needs at least 1 block, found -1",
                assertThrows(MlaException.class, () -> PagedCacheSpec.builder().maxSequences(2).maxSequenceLength(8).numBlocks(-1).build()).getMessage());
        assertEquals("paged cache: the pool needs at least 1 block, found 0",
                assertThrows(MlaException.class, () -> PagedCacheSpec.builder().maxSequences(1).maxSequenceLength(8).numBlocks(0).build()).getMessage());
        assertEquals("paged cache: block size must be 1 … 1048576 tokens, found 0",
                assertThrows(MlaException.class, () -> PagedCacheSpec.builder().maxSequences(1).maxSequenceLength(8).blockSize(0).build()).getMessage());
        assertTrue(assertThrows(MlaException.class, () -> PagedCacheSpec.builder().maxSequences(1 << 20).maxSequenceLength(1 << 30).blockSize(1).build())
                .getMessage().contains("set numBlocks"));
        assertThrows(NullPointerException.class, () -> PagedCacheSpec.builder().dtype(null));
    }
}
