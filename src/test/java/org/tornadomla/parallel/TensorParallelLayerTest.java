package org.tornadomla.parallel;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.tornadomla.MlaException;
import org.tornadomla.TestData;
import org.tornadomla.attention.AttentionOptions;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.attention.MlaLayer;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.cache.PagedCacheSpec;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.fast.FastExecutor;
import org.tornadomla.graph.GraphExecutor;
import org.tornadomla.graph.JvmExecutor;
import org.tornadomla.weights.MlaWeights;
import org.tornadomla.weights.WeightDtype;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.IntFunction;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Tensor-parallel heads against the single layer on one executor of the same kind (its own graphs over the whole
 * weights, no slicing, no sum): prefill then decode steps, contiguous and paged (variable-length, a fork), every
 * attention path, 2 and 4 shards, the JVM reference and java-fast, within 1e-5 of the largest output; every
 * device's cache holds the single layer's rows bit for bit. Refusals in one line; a device that fails mid-step
 * leaves every cache as it was.
 */
class TensorParallelLayerTest {
    static final double TOL = 1e-5;
    /** 128 rows a head in q_b_proj and kv_b_proj, 64 columns in o_proj: FP8 shards of 2 of its 4 heads keep whole scale blocks. */
    static final MlaConfig FP8_FRIENDLY = new MlaConfig(64, 4, 32, 32, 64, 64, 64, 10000, 1e-6, 4096, 2, null);
    static final List<GraphExecutor> OPEN = new ArrayList<>();

    static List<GraphExecutor> executors(IntFunction<GraphExecutor> make, int n) {
        List<GraphExecutor> list = new ArrayList<>();
        for (int d = 0; d < n; d++) list.add(make.apply(d));
        OPEN.addAll(list);
        return list;
    }

    @AfterAll
    static void closeExecutors() {
        for (GraphExecutor e : OPEN) e.close();
    }

    static final IntFunction<GraphExecutor> JVM = d -> new JvmExecutor(), FAST = d -> new FastExecutor(1);

    /** Contiguous, batch 2: a prefill of 5, a chunk of 2, three decode steps; outputs and caches against the single layer. */
    static void contiguous(MlaWeights w, IntFunction<GraphExecutor> kind, int shards, AttentionOptions opt, CacheDtype dtype) {
        MlaConfig c = w.config();
        int d = c.hiddenSize();
        String what = (kind == JVM ? "java-reference" : "java-fast") + " TP " + shards + " " + opt.path() + " " + dtype + " " + w.dtype() + " H " + c.numHeads();
        try (MlaLayer single = new MlaLayer(w, executors(kind, 1).getFirst());
             TensorParallelLayer tp = new TensorParallelLayer(w, executors(kind, shards))) {
            assertEquals(c.numHeads() / shards, tp.headsPerDevice());
            LatentCache ref = single.newCache(2, 16, dtype);
            TensorParallelCache cache = tp.newCache(2, 16, dtype);
            int step = 0;
            for (int tokens : new int[] {5, 2, 1, 1, 1}) {
                float[] x = TestData.gaussian(100 + step++, 2 * tokens * d);
                float[] expected = single.forward(ref, x, tokens, opt);
                float[] actual = tp.forward(cache, x, tokens, opt);
                Outputs.assertRelative(expected, actual, TOL, what + " step " + step);
            }
            sameRows(ref, cache, new int[] {0, 1}, what);
        }
    }

    /** Every device's cache holds the single layer's rows, bit for bit (the shared projections run whole on each). */
    static void sameRows(LatentCache ref, TensorParallelCache cache, int[] seqs, String what) {
        for (int dev = 0; dev < cache.devices(); dev++) {
            for (int b : seqs) {
                Outputs.assertBits(ref.latent(b), cache.shard(dev).latent(b), what + ": device " + dev + " c_kv of sequence " + b);
                Outputs.assertBits(ref.ropeKey(b), cache.shard(dev).ropeKey(b), what + ": device " + dev + " k_pe of sequence " + b);
            }
        }
    }

    @Test
    void contiguousPrefillThenDecodeOnTheJvmReferenceEveryPath() {
        MlaWeights w = MlaWeights.random(TestData.small(), 21);
        for (AttentionPath p : AttentionPath.values()) {
            for (int shards : new int[] {2, 4}) contiguous(w, JVM, shards, AttentionOptions.of(p), CacheDtype.F32);
        }
        contiguous(w, JVM, 2, new AttentionOptions(AttentionPath.TILED, 4, 3), CacheDtype.BF16);
        contiguous(MlaWeights.random(TestData.noQLora(), 22), JVM, 3, AttentionOptions.of(AttentionPath.ABSORBED), CacheDtype.F32);
        contiguous(MlaWeights.random(TestData.yarn(), 23), JVM, 2, AttentionOptions.of(AttentionPath.TILED), CacheDtype.INT8);
    }

    @Test
    void contiguousOnJavaFastEveryPath() {
        MlaWeights w = MlaWeights.random(TestData.small(), 24);
        for (AttentionPath p : AttentionPath.values()) {
            for (int shards : new int[] {2, 4}) contiguous(w, FAST, shards, AttentionOptions.of(p), CacheDtype.F32);
        }
    }

    @Test
    void weightFormsBf16AndFp8() {
        MlaWeights w = MlaWeights.random(TestData.small(), 25);
        contiguous(w.to(WeightDtype.BF16), JVM, 4, AttentionOptions.of(AttentionPath.ABSORBED), CacheDtype.F32);
        MlaWeights fp8 = MlaWeights.random(FP8_FRIENDLY, 26).to(WeightDtype.FP8);
        contiguous(fp8, JVM, 2, AttentionOptions.of(AttentionPath.TILED), CacheDtype.F32);
        contiguous(fp8, FAST, 2, AttentionOptions.of(AttentionPath.ABSORBED), CacheDtype.F32);
    }

    /** Paged: three sequences with their own chunk schedules, variable-length steps, a fork; every path, both JVM backends. */
    static void paged(IntFunction<GraphExecutor> kind, int shards, AttentionPath path) {
        MlaWeights w = MlaWeights.random(TestData.small(), 27);
        int d = w.config().hiddenSize();
        String what = (kind == JVM ? "java-reference" : "java-fast") + " TP " + shards + " paged " + path;
        PagedCacheSpec spec = PagedCacheSpec.builder().maxSequences(4).maxSequenceLength(32).numBlocks(24).blockSize(4).dtype(CacheDtype.BF16).build();
        int[][] chunks = {{5, 1, 1, 2, 1}, {9, 1, 1, 1, 1}, {2, 1, 3, 1, 1}};
        try (MlaLayer single = new MlaLayer(w, executors(kind, 1).getFirst());
             TensorParallelLayer tp = new TensorParallelLayer(w, executors(kind, shards))) {
            LatentCache ref = single.newPagedCache(spec);
            TensorParallelCache cache = tp.newPagedCache(spec);
            int[] ids = new int[3];
            for (int b = 0; b < 3; b++) {
                ids[b] = ref.addSequence();
                assertEquals(ids[b], cache.addSequence());
            }
            for (int step = 0; step < chunks[0].length; step++) {
                if (step == 2) {                     // sequence 1 forks: a shared prefix, copy-on-write on both sides
                    assertEquals(ref.fork(ids[1]), cache.fork(ids[1]));
                }
                int live = step >= 2 ? 4 : 3;
                int[] seqs = new int[live], lens = new int[live];
                int total = 0;
                for (int i = 0; i < live; i++) {
                    // the caller's order: reversed
                    seqs[i] = i < 3 ? ids[2 - i] : 3;
                    lens[i] = i < 3 ? chunks[2 - i][step] : 1;
                    total += lens[i];
                }
                float[] x = TestData.gaussian(200 + step, total * d);
                float[] expected = single.forward(ref, x, seqs, lens, AttentionOptions.of(path));
                float[] actual = tp.forward(cache, x, seqs, lens, path);
                Outputs.assertRelative(expected, actual, TOL, what + " step " + step);
            }
            sameRows(ref, cache, new int[] {0, 1, 2, 3}, what);
            cache.free(ids[0]);
            assertFalse(cache.contains(ids[0]));
            for (int dev = 0; dev < shards; dev++) assertFalse(cache.shard(dev).contains(ids[0]));
        }
    }

    @Test
    void pagedVariableLengthStepsWithAForkEveryPath() {
        for (AttentionPath p : AttentionPath.values()) {
            paged(JVM, 2, p);
            paged(FAST, 4, p);
        }
        paged(JVM, 4, AttentionPath.TILED);
    }

    @Test
    void aShardsPartialOutputIsNotTheSum() {
        // the test can fail: one shard alone (or the shards without the sum) is far from the layer
        MlaWeights w = MlaWeights.random(TestData.small(), 28);
        float[] x = TestData.gaussian(5, 3 * w.config().hiddenSize());
        try (MlaLayer single = new MlaLayer(w); TensorParallelLayer tp = new TensorParallelLayer(w, executors(JVM, 2))) {
            float[] whole = single.forward(single.newCache(1, 8, CacheDtype.F32), x, 3, AttentionPath.ABSORBED);
            MlaLayer s0 = tp.shard(0);
            float[] part = s0.forward(s0.newCache(1, 8, CacheDtype.F32), x, 3, AttentionPath.ABSORBED);
            assertThrows(AssertionError.class, () -> Outputs.assertRelative(whole, part, 0.1, "one shard"));
            Outputs.assertRelative(whole, tp.forward(tp.newCache(1, 8, CacheDtype.F32), x, 3, AttentionPath.ABSORBED), TOL, "TP 2");
        }
    }

    static void oneLine(MlaException e, String start) {
        assertFalse(e.getMessage().contains("\n"), e.getMessage());
        assertTrue(e.getMessage().startsWith(start), e.getMessage());
    }

    @Test
    void refusals() {
        MlaWeights w = MlaWeights.random(TestData.small(), 29);       // 4 heads
        oneLine(assertThrows(MlaException.class, () -> new TensorParallelLayer(w, executors(JVM, 3))),
                "tensor parallelism over 3 devices needs num_attention_heads divisible by 3, found 4 heads (4 % 3 = 1)");
        GraphExecutor one = new JvmExecutor();
        oneLine(assertThrows(MlaException.class, () -> new TensorParallelLayer(w, List.of(one, one))),
                "Tensor parallel layer: executors 0 and 1 are the same executor");
        FastExecutor fast = new FastExecutor(1);
        OPEN.add(fast);
        oneLine(assertThrows(MlaException.class, () -> new TensorParallelLayer(w, List.of(one, fast))),
                "Tensor parallel layer: mismatched devices: executor 1 runs on java-fast");
        oneLine(assertThrows(MlaException.class, () -> new TensorParallelLayer(w, List.of())), "Tensor parallel layer: at least one device (executor) needed, found none");
        try (TensorParallelLayer a = new TensorParallelLayer(w, executors(JVM, 2)); TensorParallelLayer b = new TensorParallelLayer(w, executors(JVM, 2))) {
            TensorParallelCache other = b.newCache(1, 8, CacheDtype.F32);
            oneLine(assertThrows(MlaException.class, () -> a.forward(other, new float[w.config().hiddenSize()], 1, AttentionPath.ABSORBED)),
                    "mismatched devices: this tensor-parallel cache (2 devices) was made by another TensorParallelLayer");
            // a step the layers refuse is refused once, for all devices, with the cache unchanged
            TensorParallelCache mine = a.newCache(1, 8, CacheDtype.F32);
            oneLine(assertThrows(MlaException.class, () -> a.forward(mine, new float[3], 1, AttentionPath.ABSORBED)), "input x: expected shape");
            assertEquals(0, mine.length(0));
            // a device's cache changed behind the layer's back: refused before any device steps
            float[] x = TestData.gaussian(31, 3 * w.config().hiddenSize());
            a.forward(mine, x, 3, AttentionPath.ABSORBED);
            mine.shard(1).truncate(0, 1);
            oneLine(assertThrows(MlaException.class, () -> a.forward(mine, new float[w.config().hiddenSize()], 1, AttentionPath.ABSORBED)),
                    "tensor-parallel cache out of step: sequence 0 holds 3 tokens on device 0 but holds 1 token on device 1");
            assertEquals(3, mine.shard(0).length(0));
            assertEquals(1, mine.shard(1).length(0));
        }
        MlaWeights fp8 = MlaWeights.random(TestData.small(), 30).to(WeightDtype.FP8);
        oneLine(assertThrows(MlaException.class, () -> new TensorParallelLayer(fp8, executors(JVM, 2))),
                "heads [2, 4) of FP8 weights: q_b_proj would start at row 48, inside a 128x128 scale block");
    }

    @Test
    void aDeviceThatFailsMidStepLeavesEveryCacheAsItWas() {
        MlaWeights w = MlaWeights.random(TestData.small(), 31);
        int d = w.config().hiddenSize();
        Flaky a = new Flaky(), b = new Flaky();
        try (MlaLayer single = new MlaLayer(w); TensorParallelLayer tp = new TensorParallelLayer(w, List.of(a, b))) {
            LatentCache ref = single.newCache(2, 16, CacheDtype.F32);
            TensorParallelCache cache = tp.newCache(2, 16, CacheDtype.F32);
            float[] x0 = TestData.gaussian(1, 2 * 4 * d), x1 = TestData.gaussian(2, 2 * d);
            Outputs.assertRelative(single.forward(ref, x0, 4, AttentionPath.TILED), tp.forward(cache, x0, 4, AttentionPath.TILED), TOL, "prefill");
            b.fail = true;
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> tp.forward(cache, x1, 1, AttentionPath.TILED));
            assertEquals("device lost", e.getMessage());
            for (int dev = 0; dev < 2; dev++) for (int s = 0; s < 2; s++) assertEquals(4, cache.shard(dev).length(s), "device " + dev + " rolled back");
            b.fail = false;
            Outputs.assertRelative(single.forward(ref, x1, 1, AttentionPath.TILED), tp.forward(cache, x1, 1, AttentionPath.TILED), TOL, "decode after");
            sameRows(ref, cache, new int[] {0, 1}, "after the rollback");
        }
    }

    @Test
    void theLayerStaysUsableAfterClose() {
        MlaWeights w = MlaWeights.random(TestData.small(), 32);
        float[] x = TestData.gaussian(3, w.config().hiddenSize());
        TensorParallelLayer tp = new TensorParallelLayer(w, executors(JVM, 2));
        float[] first = tp.forward(tp.newCache(1, 4, CacheDtype.F32), x, 1, AttentionPath.NAIVE);
        tp.close();
        Outputs.assertBits(first, tp.forward(tp.newCache(1, 4, CacheDtype.F32), x, 1, AttentionPath.NAIVE), "after close");
        tp.close();
        assertEquals(Arrays.toString(new int[] {0}), Arrays.toString(tp.newCache(1, 4, CacheDtype.F32).sequences()));
    }
}
