package org.tornadomla.attention;

import org.tornadomla.cache.internal.CacheStorage;
import org.tornadomla.cache.PagedCacheSpec;
import org.junit.jupiter.api.Test;
import org.tornadomla.MlaException;
import org.tornadomla.ReferenceMla;
import org.tornadomla.TestData;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.fast.FastExecutor;
import org.tornadomla.graph.GraphExecutor;
import org.tornadomla.graph.JvmExecutor;
import org.tornadomla.weights.MlaWeights;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A paged cache and variable-length steps against each sequence run alone in a contiguous cache (the uniform
 * forward of batch 1, which never sees a block table or another sequence) and against the float64
 * {@link ReferenceMla}: every path × cache dtype × JVM backend, fork and copy-on-write, truncate, free, an
 * exhausted pool, and a seeded random schedule of all of them.
 */
public class PagedLayerTest {
    /** Paged against alone: the same arithmetic per token row (the bound). */
    static final double TOL = 1e-6;
    /** java-fast cuts the context into pieces by the number of token rows: sums in another order. */
    static final double FAST_TOL = 1e-5;

    public static final MlaConfig C = TestData.small();
    public static final MlaLayer REF = new MlaLayer(MlaWeights.random(C, 3));
    public static final int D = C.hiddenSize();

    /** Each sequence's chunks per step: mixed prefill chunks and decode tokens, different prompt lengths. */
    public static final int[][] CHUNKS = {{5, 1, 1, 2}, {9, 1, 1, 1}, {2, 1, 3, 1}};

    /** Sequence b alone: a contiguous batch-1 cache, its chunks as uniform forward calls; y [Σ chunks, D]. */
    public static float[] alone(MlaLayer layer, AttentionOptions opt, CacheDtype dtype, float[] x, int[] chunks) {
        int total = Arrays.stream(chunks).sum(), done = 0;
        LatentCache cache = layer.newCache(1, total, dtype);
        float[] y = new float[total * D];
        for (int n : chunks) {
            float[] yc = layer.forward(cache, Arrays.copyOfRange(x, done * D, (done + n) * D), n, opt);
            System.arraycopy(yc, 0, y, done * D, n * D);
            done += n;
        }
        return y;
    }

    public static float[] inputs(int b) {
        return TestData.gaussian(40 + b, Arrays.stream(CHUNKS[b]).sum() * D);
    }

    /** The three sequences' steps as variable-length calls on {@code cache}; y per sequence [Σ chunks, D]. */
    public static float[][] batched(MlaLayer layer, LatentCache cache, AttentionOptions opt) {
        int n = CHUNKS.length;
        int[] ids = new int[n];
        for (int b = 0; b < n; b++) ids[b] = cache.paged() ? cache.addSequence() : b;
        float[][] y = new float[n][];
        int[] done = new int[n];
        for (int b = 0; b < n; b++) y[b] = new float[Arrays.stream(CHUNKS[b]).sum() * D];
        for (int step = 0; step < CHUNKS[0].length; step++) {
            int[] counts = new int[n];
            int total = 0;
            for (int b = 0; b < n; b++) total += counts[b] = CHUNKS[b][step];
            float[] x = new float[total * D];
            for (int b = 0, at = 0; b < n; at += counts[b], b++) System.arraycopy(inputs(b), done[b] * D, x, at * D, counts[b] * D);
            float[] yStep = layer.forward(cache, x, ids, counts, opt);
            for (int b = 0, at = 0; b < n; at += counts[b], b++) {
                System.arraycopy(yStep, at * D, y[b], done[b] * D, counts[b] * D);
                done[b] += counts[b];
            }
        }
        return y;
    }

    static LatentCache paged(int blockSize, CacheDtype dtype, int blocks) {
        LatentCache cache = REF.newPagedCache(PagedCacheSpec.builder().maxSequences(4).maxSequenceLength(16).numBlocks(blocks).blockSize(blockSize).dtype(dtype).build());
        CacheStorage.of(cache).shuffleFreeBlocks(11);       // each sequence's blocks scattered over the pool
        return cache;
    }

    static AttentionOptions[] options() {
        return new AttentionOptions[] {AttentionOptions.of(AttentionPath.NAIVE), AttentionOptions.of(AttentionPath.ABSORBED),
                AttentionOptions.of(AttentionPath.TILED), new AttentionOptions(AttentionPath.TILED, 3, 2)};
    }

    @Test
    void pagedEqualsEachSequenceAloneOnEveryPathDtypeAndJvmBackend() {
        for (GraphExecutor ex : new GraphExecutor[] {new JvmExecutor(), new FastExecutor()}) {
            MlaLayer layer = new MlaLayer(REF.weights(), ex);
            double tol = ex instanceof FastExecutor ? FAST_TOL : TOL;
            for (AttentionOptions opt : options()) {
                for (CacheDtype dt : CacheDtype.values()) {
                    for (int blockSize : new int[] {4, 3}) {
                        float[][] y = batched(layer, paged(blockSize, dt, 16), opt);
                        for (int b = 0; b < CHUNKS.length; b++) {
                            float[] expected = alone(layer, opt, dt, inputs(b), CHUNKS[b]);
                            TestData.assertClose(expected, y[b], tol, ex.device() + " " + opt + " " + dt + " blocks of " + blockSize + " sequence " + b);
                        }
                    }
                    // the same variable-length steps over a contiguous cache (one block of 16 per sequence)
                    float[][] yc = batched(layer, layer.newCache(CHUNKS.length, 16, dt), opt);
                    for (int b = 0; b < CHUNKS.length; b++) {
                        TestData.assertClose(alone(layer, opt, dt, inputs(b), CHUNKS[b]), yc[b], tol, ex.device() + " " + opt + " " + dt + " contiguous, sequence " + b);
                    }
                }
            }
        }
    }

    @Test
    void pagedMatchesTheDoubleReference() {
        float[][] y = batched(REF, paged(4, CacheDtype.F32, 16), AttentionOptions.of(AttentionPath.TILED));
        for (int b = 0; b < CHUNKS.length; b++) {
            int total = Arrays.stream(CHUNKS[b]).sum();
            TestData.assertClose(ReferenceMla.prefill(REF.weights(), inputs(b), total, false).y(), y[b], 1e-4, "sequence " + b);
        }
    }

    /** The cache's state: what a refused step must leave unchanged. */
    public static String state(LatentCache cache) {
        StringBuilder s = new StringBuilder("free " + cache.freeBlocks());
        for (int b = 0; b < cache.maxSequences(); b++) {
            if (!cache.contains(b)) continue;
            s.append(" | ").append(b).append(": ").append(Arrays.toString(cache.blockTable(b))).append(' ')
                    .append(Arrays.hashCode(cache.latent(b))).append(' ').append(Arrays.hashCode(cache.ropeKey(b)));
        }
        return s.toString();
    }

    @Test
    void forkSharesFullBlocksAndCopiesThePartialOneBeforeAWrite() {
        AttentionOptions opt = AttentionOptions.of(AttentionPath.TILED);
        for (CacheDtype dt : CacheDtype.values()) {
            LatentCache cache = paged(4, dt, 8);
            float[] prompt = TestData.gaussian(1, 6 * D), xa = TestData.gaussian(2, D), xb = TestData.gaussian(3, D);
            int a = cache.addSequence();
            REF.forward(cache, prompt, new int[] {a}, new int[] {6}, opt);
            int[] table = cache.blockTable(a);
            assertEquals(2, table.length);
            int free = cache.freeBlocks();
            int b = cache.fork(a);
            assertArrayEquals(table, cache.blockTable(b), "a fork shares every block");
            assertEquals(2, cache.refCount(table[0]));
            assertEquals(2, cache.refCount(table[1]));
            assertEquals(free, cache.freeBlocks(), "a fork takes no block");
            float[] latentBefore = cache.latent(a);

            // a writes into the shared partial block: it gets a copy first; b keeps the original
            float[] ya = REF.forward(cache, xa, new int[] {a}, new int[] {1}, opt);
            assertEquals(table[0], cache.blockTable(a)[0], "the full block stays shared");
            assertTrue(cache.blockTable(a)[1] != table[1], "the partial block was copied");
            assertEquals(1, cache.refCount(table[1]));
            assertEquals(free - 1, cache.freeBlocks());
            assertArrayEquals(latentBefore, cache.latent(b), dt + ": the fork's tokens are untouched");
            assertArrayEquals(latentBefore, Arrays.copyOf(cache.latent(a), 6 * C.kvLoraRank()), dt + ": the copy holds the shared tokens");
            // b, now the partial block's only user, writes in place
            float[] yb = REF.forward(cache, xb, new int[] {b}, new int[] {1}, opt);
            assertArrayEquals(table, cache.blockTable(b));
            assertEquals(free - 1, cache.freeBlocks());

            float[] xA = concat(prompt, xa), xB = concat(prompt, xb);
            float[] ea = alone(REF, opt, dt, xA, new int[] {6, 1}), eb = alone(REF, opt, dt, xB, new int[] {6, 1});
            TestData.assertClose(Arrays.copyOfRange(ea, 6 * D, 7 * D), ya, TOL, dt + " parent after the fork");
            TestData.assertClose(Arrays.copyOfRange(eb, 6 * D, 7 * D), yb, TOL, dt + " fork");
            // both write in one step after a fork at a block boundary: each gets a new block, nothing to copy
            int c = cache.fork(b);
            cache.truncate(c, 4);
            cache.truncate(b, 4);
            assertArrayEquals(cache.blockTable(b), cache.blockTable(c));
            float[] x2 = TestData.gaussian(4, 2 * D);
            float[] y2 = REF.forward(cache, x2, new int[] {b, c}, new int[] {1, 1}, opt);
            float[] e2 = alone(REF, opt, dt, concat(Arrays.copyOf(prompt, 4 * D), Arrays.copyOf(x2, D)), new int[] {4, 1});
            TestData.assertClose(Arrays.copyOfRange(e2, 4 * D, 5 * D), Arrays.copyOf(y2, D), TOL, dt + " truncated fork");
        }
    }

    public static float[] concat(float[] a, float[] b) {
        float[] r = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, r, a.length, b.length);
        return r;
    }

    @Test
    void truncateRollsBackRejectedDraftTokensWithoutACopy() {
        AttentionOptions opt = AttentionOptions.of(AttentionPath.ABSORBED);
        LatentCache cache = paged(4, CacheDtype.BF16, 8);
        int s = cache.addSequence();
        float[] prompt = TestData.gaussian(5, 7 * D), drafts = TestData.gaussian(6, 3 * D), next = TestData.gaussian(7, D);
        REF.forward(cache, prompt, new int[] {s}, new int[] {7}, opt);
        int[] before = cache.blockTable(s);
        // verify 3 draft tokens in one call, accept the first: keep 8 tokens
        REF.forward(cache, drafts, new int[] {s}, new int[] {3}, opt);
        assertEquals(3, cache.blockTable(s).length);
        cache.truncate(s, 8);
        assertEquals(8, cache.length(s));
        assertArrayEquals(before, cache.blockTable(s), "the kept prefix stays where it was (no copy), the third block is released");
        assertEquals(6, cache.freeBlocks());
        float[] y = REF.forward(cache, next, new int[] {s}, new int[] {1}, opt);
        float[] e = alone(REF, opt, CacheDtype.BF16, concat(concat(prompt, Arrays.copyOf(drafts, D)), next), new int[] {8, 1});
        TestData.assertClose(Arrays.copyOfRange(e, 8 * D, 9 * D), y, TOL, "decode after the rollback");
    }

    @Test
    void freeReturnsBlocksToThePoolAndTheIdIsReused() {
        LatentCache cache = paged(4, CacheDtype.F32, 8);
        int a = cache.addSequence(), b = cache.addSequence();
        REF.forward(cache, TestData.gaussian(8, 8 * D), new int[] {a, b}, new int[] {5, 3}, AttentionOptions.of(AttentionPath.TILED));
        assertEquals(5, cache.freeBlocks());
        int c = cache.fork(a);
        cache.free(a);
        assertEquals(5, cache.freeBlocks(), "the fork still uses a's blocks");
        cache.free(c);
        assertEquals(7, cache.freeBlocks());
        cache.free(b);
        assertEquals(8, cache.freeBlocks());
        assertEquals(0, cache.addSequence(), "the lowest free id");
        MlaException e = assertThrows(MlaException.class, () -> cache.length(1));
        assertTrue(e.getMessage().contains("not in the cache"), e.getMessage());
    }

    @Test
    void aUniformStepOverAPagedCacheWithFreeSlotsSaysWhatToDo() {
        LatentCache cache = REF.newPagedCache(PagedCacheSpec.builder().maxSequences(4).maxSequenceLength(64).numBlocks(8).blockSize(16).dtype(CacheDtype.F32).build());     // 4 slots, 2 in use
        cache.addSequence();
        cache.addSequence();
        int d = C.hiddenSize();
        // the free slots are named first, whatever x holds: rows for the 2 live sequences (what a user tries
        // first) must not get "expected shape [4, 1, d]" back, which would send them to pad a free slot
        for (int rows : new int[] {2, 4}) {
            MlaException slots = assertThrows(MlaException.class, () -> REF.decode(cache, new float[rows * d], AttentionPath.TILED));
            assertTrue(slots.getMessage().contains("every sequence slot of the cache (0 … 3), but sequence 2 is not in it")
                    && slots.getMessage().contains("forward(cache, x, seqIds, queryLens, opt)"), slots.getMessage());
        }
        assertEquals(0, cache.length(0));
        // every slot in use: a wrong length names the shape a uniform step expects
        cache.addSequence();
        cache.addSequence();
        MlaException wrong = assertThrows(MlaException.class, () -> REF.decode(cache, new float[3], AttentionPath.TILED));
        assertEquals("input x: expected shape [4, 1, " + d + "] (" + 4 * d + " floats), found 3 floats", wrong.getMessage());
    }

    @Test
    void anExhaustedPoolIsAClearErrorAndChangesNothing() {
        AttentionOptions opt = AttentionOptions.of(AttentionPath.TILED);
        LatentCache cache = paged(4, CacheDtype.INT8, 3);
        int a = cache.addSequence(), b = cache.addSequence();
        REF.forward(cache, TestData.gaussian(9, 6 * D), new int[] {a}, new int[] {6}, opt);
        String before = state(cache);
        MlaException e = assertThrows(MlaException.class,
                () -> REF.forward(cache, TestData.gaussian(10, 7 * D), new int[] {a, b}, new int[] {1, 6}, opt));
        assertEquals("latent cache pool exhausted: the step needs 2 more blocks of 4 tokens (sequence " + b + ": 2), 1 of 3 is free "
                + "(free or truncate sequences, or make a larger pool)", e.getMessage());
        assertEquals(before, state(cache));
        assertEquals(0, cache.length(b));
        // a copy-on-write needs a block too
        REF.forward(cache, TestData.gaussian(11, 2 * D), new int[] {b}, new int[] {2}, opt);
        int f = cache.fork(b);
        String full = state(cache);
        MlaException cow = assertThrows(MlaException.class, () -> REF.forward(cache, TestData.gaussian(12, D), new int[] {f}, new int[] {1}, opt));
        assertTrue(cow.getMessage().startsWith("latent cache pool exhausted: the step needs 1 more block of 4 tokens (sequence " + f + ": 1), 0 of 3 are free"), cow.getMessage());
        assertEquals(full, state(cache));
        // past a sequence's own capacity (16 tokens): the same one-line refusal as a contiguous cache's
        MlaException cap = assertThrows(MlaException.class, () -> REF.forward(cache, TestData.gaussian(13, 11 * D), new int[] {a}, new int[] {11}, opt));
        assertEquals("latent cache full: capacity 16 tokens per sequence, sequence 0 holds 6, request appends 11 (needs 17)", cap.getMessage());
        for (int i = cache.addSequence(); i < 3; i = cache.addSequence()) {
            // fill the sequence slots
        }
        MlaException slots = assertThrows(MlaException.class, cache::addSequence);
        assertEquals("no free sequence slot: the cache holds at most 4 sequences, all in use", slots.getMessage());
        assertEquals(full, state(cache).replaceAll(" \\| 3: \\[\\].*", ""));
    }

    /**
     * A parent and its forks decoding in one step (parallel sampling) share one partial block: the first writer
     * gets a copy, the last is then its only user and writes in place. One free block per shared block less than
     * the writers is enough, on a paged cache and on a contiguous one (one block per sequence).
     */
    @Test
    void sequencesSharingAPartialBlockWriteItInOneStepWithOneCopyLess() {
        AttentionOptions opt = AttentionOptions.of(AttentionPath.TILED);
        for (CacheDtype dt : CacheDtype.values()) {
            // paged: 3 blocks; a holds 6 tokens (blocks 0, 1), its fork shares both, 1 block free
            LatentCache cache = paged(4, dt, 3);
            float[] prompt = TestData.gaussian(14, 6 * D), x = TestData.gaussian(15, 2 * D);
            int a = cache.addSequence();
            REF.forward(cache, prompt, new int[] {a}, new int[] {6}, opt);
            int b = cache.fork(a);
            assertEquals(1, cache.freeBlocks());
            float[] y = REF.forward(cache, x, new int[] {a, b}, new int[] {1, 1}, opt);
            assertEquals(0, cache.freeBlocks());
            for (int i = 0; i < 2; i++) {
                float[] e = alone(REF, opt, dt, concat(prompt, Arrays.copyOfRange(x, i * D, (i + 1) * D)), new int[] {6, 1});
                TestData.assertClose(Arrays.copyOfRange(e, 6 * D, 7 * D), Arrays.copyOfRange(y, i * D, (i + 1) * D), TOL, dt + " paged, sequence " + i);
            }
            // contiguous, 2 sequences: 1 freed, its slot taken by a fork of 0; the step needs 1 copy, 1 block is free
            LatentCache contiguous = REF.newCache(2, 8, dt);
            REF.forward(contiguous, Arrays.copyOf(prompt, 3 * D), new int[] {0}, new int[] {3}, opt);
            contiguous.free(1);
            assertEquals(1, contiguous.fork(0));
            float[] yc = REF.forward(contiguous, x, new int[] {0, 1}, new int[] {1, 1}, opt);
            for (int i = 0; i < 2; i++) {
                float[] e = alone(REF, opt, dt, concat(Arrays.copyOf(prompt, 3 * D), Arrays.copyOfRange(x, i * D, (i + 1) * D)), new int[] {3, 1});
                TestData.assertClose(Arrays.copyOfRange(e, 3 * D, 4 * D), Arrays.copyOfRange(yc, i * D, (i + 1) * D), TOL, dt + " contiguous, sequence " + i);
            }
        }
    }

    @Test
    void badStepsAreRefusedBeforeAnyWork() {
        AttentionOptions opt = AttentionOptions.of(AttentionPath.TILED);
        LatentCache cache = paged(4, CacheDtype.F32, 8);
        int a = cache.addSequence();
        String before = state(cache);
        assertEquals("sequence 1 is not in the cache (freed, or never added)",
                assertThrows(MlaException.class, () -> REF.forward(cache, new float[D], new int[] {1}, new int[] {1}, opt)).getMessage());
        assertEquals("sequence 0 appears twice in one step",
                assertThrows(MlaException.class, () -> REF.forward(cache, new float[2 * D], new int[] {a, a}, new int[] {1, 1}, opt)).getMessage());
        assertEquals("tokens of sequence 0 must be > 0, found 0",
                assertThrows(MlaException.class, () -> REF.forward(cache, new float[0], new int[] {a}, new int[] {0}, opt)).getMessage());
        assertEquals("input x: expected shape [3, 64] (192 floats), found 64 floats",
                assertThrows(MlaException.class, () -> REF.forward(cache, new float[D], new int[] {a}, new int[] {3}, opt)).getMessage());
        assertEquals("a step names 1 sequences but gives 2 token counts",
                assertThrows(MlaException.class, () -> REF.forward(cache, new float[D], new int[] {a}, new int[] {1, 1}, opt)).getMessage());
        assertEquals(before, state(cache));
    }

    /**
     * A seeded random schedule of joins, leaves, forks, truncations and steps mixing prefill chunks with decode
     * tokens over a small pool (refused steps included), every output checked against the sequence's whole
     * history run alone in a contiguous cache.
     */
    @Test
    void aRandomScheduleMatchesEachSequenceAlone() {
        for (CacheDtype dt : CacheDtype.values()) schedule(new JvmExecutor(), dt, 20 + dt.ordinal(), TOL);
        schedule(new FastExecutor(), CacheDtype.F32, 31, FAST_TOL);
    }

    private static void schedule(GraphExecutor ex, CacheDtype dt, long seed, double tol) {
        MlaLayer layer = new MlaLayer(REF.weights(), ex);
        java.util.SplittableRandom rnd = new java.util.SplittableRandom(seed);
        LatentCache cache = layer.newPagedCache(PagedCacheSpec.builder().maxSequences(5).maxSequenceLength(24).numBlocks(20).blockSize(3).dtype(dt).build());
        CacheStorage.of(cache).shuffleFreeBlocks(seed);
        List<List<float[]>> history = new ArrayList<>();
        for (int b = 0; b < 5; b++) history.add(null);
        AttentionOptions[] opts = options();
        int steps = 0, refused = 0, forks = 0, truncations = 0, leaves = 0;
        for (int event = 0; event < 70; event++) {
            List<Integer> live = new ArrayList<>();
            for (int b = 0; b < 5; b++) if (cache.contains(b)) live.add(b);
            int action = rnd.nextInt(10);
            String what = dt + " seed " + seed + " event " + event;
            if (action == 0 && live.size() < 5 || live.isEmpty()) {
                history.set(cache.addSequence(), new ArrayList<>());
            } else if (action == 1 && live.size() > 1) {
                int b = live.get(rnd.nextInt(live.size()));
                cache.free(b);
                history.set(b, null);
                leaves++;
            } else if (action == 2 && live.size() < 5) {
                int p = live.get(rnd.nextInt(live.size()));
                history.set(cache.fork(p), new ArrayList<>(history.get(p)));
                forks++;
            } else if (action == 3) {
                int b = live.get(rnd.nextInt(live.size()));
                int keep = rnd.nextInt(cache.length(b) + 1);
                cache.truncate(b, keep);
                history.set(b, new ArrayList<>(history.get(b).subList(0, keep)));
                truncations++;
            } else {
                // a mixed step: some sequences bring a prefill chunk, the others one decode token
                List<Integer> ids = new ArrayList<>(), counts = new ArrayList<>();
                for (int b : live) {
                    if (rnd.nextInt(3) == 0) continue;
                    int room = cache.capacity() - cache.length(b);
                    int n = Math.min(room, cache.length(b) == 0 || rnd.nextInt(4) == 0 ? 1 + rnd.nextInt(6) : 1);
                    if (n > 0) {
                        ids.add(b);
                        counts.add(n);
                    }
                }
                if (ids.isEmpty()) continue;
                int total = counts.stream().mapToInt(Integer::intValue).sum();
                float[] x = TestData.gaussian(1000 + event, total * D);
                AttentionOptions opt = opts[rnd.nextInt(opts.length)];
                int[] idArr = ids.stream().mapToInt(Integer::intValue).toArray(), nArr = counts.stream().mapToInt(Integer::intValue).toArray();
                String before = state(cache);
                float[] y;
                try {
                    y = layer.forward(cache, x, idArr, nArr, opt);
                } catch (MlaException e) {
                    assertTrue(e.getMessage().startsWith("latent cache pool exhausted"), what + ": " + e.getMessage());
                    assertEquals(before, state(cache), what + ": a refused step changed the cache");
                    refused++;
                    // as a scheduler would: preempt the longest sequence to make room
                    int longest = live.stream().max(java.util.Comparator.comparingInt(cache::length)).orElseThrow();
                    cache.free(longest);
                    history.set(longest, null);
                    checkPool(cache, what);
                    continue;
                }
                steps++;
                for (int i = 0, at = 0; i < idArr.length; at += nArr[i], i++) {
                    List<float[]> h = history.get(idArr[i]);
                    for (int t = 0; t < nArr[i]; t++) h.add(Arrays.copyOfRange(x, (at + t) * D, (at + t + 1) * D));
                    float[] all = new float[h.size() * D];
                    for (int t = 0; t < h.size(); t++) System.arraycopy(h.get(t), 0, all, t * D, D);
                    float[] e = alone(layer, opt, dt, all, new int[] {h.size()});
                    TestData.assertClose(Arrays.copyOfRange(e, (h.size() - nArr[i]) * D, h.size() * D),
                            Arrays.copyOfRange(y, at * D, (at + nArr[i]) * D), tol, what + " " + opt + " sequence " + idArr[i]);
                }
            }
            checkPool(cache, what);
        }
        assertTrue(steps > 20 && forks > 2 && truncations > 2 && leaves > 1, "the schedule exercised too little: steps " + steps
                + ", refused " + refused + ", forks " + forks + ", truncations " + truncations + ", leaves " + leaves);
    }

    /** Every block is free or used, and used blocks' reference counts are the number of tables naming them. */
    private static void checkPool(LatentCache cache, String what) {
        int[] uses = new int[cache.numBlocks()];
        for (int b = 0; b < cache.maxSequences(); b++) {
            if (cache.contains(b)) for (int block : cache.blockTable(b)) uses[block]++;
        }
        int free = 0;
        for (int k = 0; k < uses.length; k++) {
            assertEquals(uses[k], cache.refCount(k), what + ": reference count of block " + k);
            free += uses[k] == 0 ? 1 : 0;
        }
        assertEquals(free, cache.freeBlocks(), what + ": free blocks");
    }
}
