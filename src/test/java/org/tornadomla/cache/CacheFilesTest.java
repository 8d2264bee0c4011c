package org.tornadomla.cache;

import org.tornadomla.cache.internal.CacheStorage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tornadomla.MlaException;
import org.tornadomla.TestData;
import org.tornadomla.attention.AttentionOptions;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.attention.MlaLayer;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.weights.MlaWeights;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Export on one layer instance, import into another: decoding goes on bit-identically. */
class CacheFilesTest {
    @TempDir
    Path dir;

    @Test
    void anImportedCacheDecodesTheSameNextTokensBitForBit() {
        MlaConfig c = TestData.yarn();
        MlaWeights w = MlaWeights.random(c, 4);
        for (CacheDtype dt : CacheDtype.values()) {
            MlaLayer prefillNode = new MlaLayer(w), decodeNode = new MlaLayer(w);
            LatentCache original = prefillNode.newCache(2, 16, dt);
            prefillNode.prefill(original, TestData.gaussian(1, 2 * 7 * c.hiddenSize()), 7, AttentionPath.ABSORBED);
            Path file = dir.resolve("seq1-" + dt + ".safetensors");
            CacheFiles.export(original, 1, file);

            // what a restart reads first: whose cache, which dtype, how many tokens (from the metadata, before any import)
            CacheFiles.Contents seen = CacheFiles.describe(file);
            assertEquals(new CacheFiles.Contents(prefillNode.identity(), dt, 7), seen);
            LatentCache restored = decodeNode.newCache(1, 16, seen.dtype());
            CacheFiles.importInto(restored, 0, file);
            assertEquals(7, restored.length(0));
            for (int step = 0; step < 3; step++) {
                float[] x = TestData.gaussian(10 + step, c.hiddenSize());
                float[] both = new float[2 * c.hiddenSize()];
                System.arraycopy(x, 0, both, c.hiddenSize(), x.length);
                float[] a = prefillNode.decode(original, both, AttentionPath.TILED);
                float[] b = decodeNode.decode(restored, x, AttentionPath.TILED);
                assertArrayEquals(java.util.Arrays.copyOfRange(a, c.hiddenSize(), 2 * c.hiddenSize()), b, dt + " step " + step);
            }
            assertArrayEquals(original.latent(1), restored.latent(0));
            assertArrayEquals(original.ropeKey(1), restored.ropeKey(0));
        }
    }

    /**
     * A sequence of a paged cache (a fork whose blocks are scattered over the pool, one of them shared) exports
     * the same file, byte for byte, as the same sequence in a contiguous cache; it imports into a paged cache
     * (fresh blocks) and a contiguous one, and decoding goes on bit-identically; a pool without the blocks is
     * refused with the cache unchanged.
     */
    @Test
    void aPagedSequenceExportsAndImportsLikeAContiguousOne() throws Exception {
        MlaConfig c = TestData.small();
        MlaWeights w = MlaWeights.random(c, 6);
        int d = c.hiddenSize();
        for (CacheDtype dt : CacheDtype.values()) {
            MlaLayer layer = new MlaLayer(w);
            float[] prompt = TestData.gaussian(3, 7 * d), next = TestData.gaussian(4, d);
            LatentCache contiguous = layer.newCache(1, 16, dt);
            layer.prefill(contiguous, prompt, 7, AttentionPath.TILED);
            layer.decode(contiguous, next, AttentionPath.TILED);
            LatentCache paged = layer.newPagedCache(PagedCacheSpec.builder().maxSequences(3).maxSequenceLength(16).numBlocks(9).blockSize(3).dtype(dt).build());
            CacheStorage.of(paged).shuffleFreeBlocks(2);
            int other = paged.addSequence(), a = paged.addSequence();
            layer.forward(paged, TestData.concatRows(TestData.gaussian(5, 4 * d), prompt), new int[] {other, a}, new int[] {4, 7}, AttentionOptions.of(AttentionPath.TILED));
            int fork = paged.fork(a);
            layer.forward(paged, next, new int[] {fork}, new int[] {1}, AttentionOptions.of(AttentionPath.TILED));
            Path fromContiguous = dir.resolve("c-" + dt + ".safetensors"), fromPaged = dir.resolve("p-" + dt + ".safetensors");
            CacheFiles.export(contiguous, 0, fromContiguous);
            CacheFiles.export(paged, fork, fromPaged);
            assertArrayEquals(Files.readAllBytes(fromContiguous), Files.readAllBytes(fromPaged), dt + ": the same file");

            LatentCache target = layer.newPagedCache(PagedCacheSpec.builder().maxSequences(3).maxSequenceLength(16).numBlocks(4).blockSize(4).dtype(dt).build());
            int t = target.addSequence();
            CacheFiles.importInto(target, t, fromPaged);
            assertEquals(8, target.length(t));
            assertEquals(2, target.blockTable(t).length);
            float[] x = TestData.gaussian(6, d);
            float[] expected = layer.decode(contiguous, x, AttentionPath.ABSORBED);
            assertArrayEquals(expected, layer.forward(target, x, new int[] {t}, new int[] {1}, AttentionOptions.of(AttentionPath.ABSORBED)), dt + " after import");
            // a pool with too few free blocks: refused, nothing changed
            int u = target.addSequence();
            layer.forward(target, TestData.gaussian(7, 4 * d), new int[] {u}, new int[] {4}, AttentionOptions.of(AttentionPath.TILED));
            int v = target.addSequence();
            float[] before = target.latent(u);
            MlaException e = assertThrows(MlaException.class, () -> CacheFiles.importInto(target, v, fromContiguous));
            assertEquals("latent cache pool exhausted: a write of 8 tokens needs 2 blocks of 4, 0 are free", e.getMessage());
            assertEquals(0, target.length(v));
            assertArrayEquals(before, target.latent(u));
        }
    }

    /** An existing file is never replaced unless the caller says so: not the checkpoint the layer was loaded from, not another sequence's file. */
    @Test
    void exportLeavesAnExistingFileAloneUnlessToldToReplaceIt() throws Exception {
        MlaConfig c = TestData.small();
        MlaWeights w = MlaWeights.random(c, 8);
        Path weights = dir.resolve("model.safetensors");
        w.addTo(new org.tornadomla.weights.SafeTensorsWriter(), 0, org.tornadomla.weights.DType.F32).write(weights);
        MlaLayer layer = new MlaLayer(MlaWeights.load(weights, c, 0));
        LatentCache cache = layer.newCache(1, 16, CacheDtype.F32);
        layer.prefill(cache, TestData.gaussian(2, 3 * c.hiddenSize()), 3, AttentionPath.ABSORBED);
        byte[] checkpoint = Files.readAllBytes(weights);

        // a weights file is no cache file: describe says so, naming it
        assertEquals(weights + ": not a latent-cache file (format null, expected '" + CacheFiles.FORMAT + "')",
                assertThrows(MlaException.class, () -> CacheFiles.describe(weights)).getMessage());
        String m = assertThrows(MlaException.class, () -> CacheFiles.export(cache, 0, weights)).getMessage();
        assertTrue(m.contains("exists") && m.contains("REPLACE_EXISTING") && m.contains(weights.toString()), m);
        assertArrayEquals(checkpoint, Files.readAllBytes(weights), "the checkpoint is untouched");
        MlaWeights.load(weights, c, 0);                                       // and still loads

        Path seq = dir.resolve("seq.safetensors");
        CacheFiles.export(cache, 0, seq);
        byte[] first = Files.readAllBytes(seq);
        layer.decode(cache, TestData.gaussian(3, c.hiddenSize()), AttentionPath.ABSORBED);
        assertThrows(MlaException.class, () -> CacheFiles.export(cache, 0, seq));
        assertArrayEquals(first, Files.readAllBytes(seq));
        CacheFiles.export(cache, 0, seq, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        LatentCache back = layer.newCache(1, 16, CacheDtype.F32);
        CacheFiles.importInto(back, 0, seq);
        assertEquals(4, back.length(0), "replaced with the four-token sequence");
        m = assertThrows(MlaException.class, () -> CacheFiles.export(cache, 0, dir.resolve("x"), java.nio.file.StandardCopyOption.ATOMIC_MOVE)).getMessage();
        assertTrue(m.contains("ATOMIC_MOVE"), m);
        assertTrue(Files.notExists(dir.resolve("x")));
    }

    @Test
    void refusesAnotherConfigDtypeOrAFileThatDoesNotFit() throws Exception {
        MlaConfig c = TestData.small();
        MlaLayer layer = new MlaLayer(MlaWeights.random(c, 5));
        LatentCache cache = layer.newCache(1, 8, CacheDtype.BF16);
        layer.prefill(cache, TestData.gaussian(2, 6 * c.hiddenSize()), 6, AttentionPath.NAIVE);
        Path file = dir.resolve("c.safetensors");
        CacheFiles.export(cache, 0, file);

        MlaConfig otherTheta = new MlaConfig(64, 4, 32, 32, 16, 8, 12, 50000, 1e-6, 4096, 2, null);
        LatentCache otherThetas = new MlaLayer(MlaWeights.random(otherTheta, 5)).newCache(1, 8, CacheDtype.BF16);
        String m = assertThrows(MlaException.class, () -> CacheFiles.importInto(otherThetas, 0, file)).getMessage();
        assertTrue(m.endsWith("they differ in config rope_theta 10000.0 vs 50000.0"), m);
        LatentCache f32 = new LatentCache(c, 1, 8, CacheDtype.F32);
        m = assertThrows(MlaException.class, () -> CacheFiles.importInto(f32, 0, file)).getMessage();
        assertTrue(m.contains("cache dtype 'bf16', the target cache stores f32"), m);
        assertEquals(0, f32.length(0));
        LatentCache small = new LatentCache(c, 1, 4, CacheDtype.BF16);
        assertTrue(assertThrows(MlaException.class, () -> CacheFiles.importInto(small, 0, file)).getMessage().contains("do not fit"));
        Path notACache = dir.resolve("w.safetensors");
        new org.tornadomla.weights.SafeTensorsWriter().add("kv_cache", new long[] {1}, new float[1]).write(notACache);
        assertTrue(assertThrows(MlaException.class, () -> CacheFiles.importInto(small, 0, notACache)).getMessage().contains("not a latent-cache file"));
        assertTrue(Files.size(file) > 6 * 40 * 2);
    }

    /**
     * An import reads and checks its file before it takes the cache's lock: while another thread holds it (a step on
     * the cache), a bad file is refused at once instead of after the step, and a good one lands once the lock is free.
     */
    @Test
    void importReadsItsFileBeforeTakingTheCachesLock() throws Exception {
        MlaConfig c = TestData.small();
        MlaLayer layer = new MlaLayer(MlaWeights.random(c, 8));
        LatentCache cache = layer.newCache(1, 16, CacheDtype.F32);
        layer.prefill(cache, TestData.gaussian(2, 3 * c.hiddenSize()), 3, AttentionPath.ABSORBED);
        Path good = dir.resolve("good.safetensors"), bad = dir.resolve("bad.safetensors");
        CacheFiles.export(cache, 0, good);
        Files.write(bad, new byte[] {1, 2, 3});
        LatentCache target = layer.newCache(1, 16, CacheDtype.F32);
        java.util.concurrent.CountDownLatch held = new java.util.concurrent.CountDownLatch(1), release = new java.util.concurrent.CountDownLatch(1);
        Thread holder = new Thread(() -> {
            synchronized (CacheStorage.of(target)) {
                held.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        holder.start();
        held.await();
        Thread importer = new Thread(() -> CacheFiles.importInto(target, 0, good));
        try {
            org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(java.time.Duration.ofSeconds(20),
                    () -> assertThrows(MlaException.class, () -> CacheFiles.importInto(target, 0, bad)), "a bad file waited for the lock");
            importer.start();
            importer.join(300);
            assertTrue(importer.isAlive(), "the good file's rows wait for the lock");
        } finally {
            release.countDown();
            holder.join();
        }
        importer.join();
        assertEquals(3, target.length(0));
        assertArrayEquals(cache.latent(0), target.latent(0));
    }
}
