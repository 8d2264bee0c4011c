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
import org.tornadomla.fast.FastExecutor;
import org.tornadomla.graph.GraphExecutor;
import org.tornadomla.graph.JvmExecutor;
import org.tornadomla.weights.MlaWeights;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.IntFunction;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Data-parallel attention against the single layer's variable-length forward over one cache holding every
 * sequence, on one executor of the same kind: the same steps in the same caller's order, every path, paged and
 * contiguous. On the JVM reference the outputs and caches are the single layer's bit for bit; java-fast within
 * 1e-6 of the largest output. Placement, refusals in one line, a device failing mid-step.
 */
class DataParallelLayersTest {
    static final List<GraphExecutor> OPEN = new ArrayList<>();
    static final IntFunction<GraphExecutor> JVM = d -> new JvmExecutor(), FAST = d -> new FastExecutor(1);

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

    static void compare(boolean exact, float[] expected, float[] actual, String what) {
        if (exact) Outputs.assertBits(expected, actual, what);
        else Outputs.assertRelative(expected, actual, 1e-6, what);
    }

    /** Each step: which sequences (by index into the live ones), in the caller's order, and how many tokens each. */
    static final int[][][] STEPS = {
            {{0, 1, 2, 3, 4}, {5, 3, 7, 2, 4}},          // prompts
            {{3, 1, 4, 0, 2}, {1, 1, 1, 1, 1}},          // decode, shuffled
            {{2, 0}, {3, 1}},                            // a prefill chunk and one decode, two sequences only
            {{4, 2, 1, 3, 0, 5}, {1, 1, 2, 1, 1, 4}},    // a new sequence 5 (a fork of 1 joins here) and the rest
            {{5, 4, 3, 2, 1, 0}, {1, 1, 1, 1, 1, 1}}};

    static void paged(IntFunction<GraphExecutor> kind, int devices, AttentionOptions opt, CacheDtype dtype) {
        boolean exact = kind == JVM;
        MlaWeights w = MlaWeights.random(TestData.small(), 41);
        int d = w.config().hiddenSize();
        String what = (exact ? "java-reference" : "java-fast") + " DP " + devices + " paged " + opt.path() + " " + dtype;
        PagedCacheSpec one = PagedCacheSpec.builder().maxSequences(6).maxSequenceLength(32).numBlocks(40).blockSize(4).dtype(dtype).build();
        PagedCacheSpec each = PagedCacheSpec.builder().maxSequences(4).maxSequenceLength(32).numBlocks(20).blockSize(4).dtype(dtype).build();
        try (MlaLayer single = new MlaLayer(w, executors(kind, 1).getFirst());
             DataParallelLayers dp = new DataParallelLayers(w, executors(kind, devices))) {
            LatentCache ref = single.newPagedCache(one);
            DataParallelCache cache = dp.newPagedCache(each);
            int[] refIds = new int[6], ids = new int[6];
            for (int i = 0; i < 5; i++) {
                refIds[i] = ref.addSequence();
                ids[i] = cache.addSequence();
            }
            int[] perDevice = new int[devices];
            for (int i = 0; i < 5; i++) perDevice[cache.deviceOf(ids[i])]++;
            for (int n : perDevice) assertTrue(n >= 5 / devices && n <= (5 + devices - 1) / devices, what + ": balanced placement " + Arrays.toString(perDevice));
            for (int s = 0; s < STEPS.length; s++) {
                if (s == 3) {
                    refIds[5] = ref.fork(refIds[1]);
                    ids[5] = cache.fork(ids[1]);
                    assertEquals(cache.deviceOf(ids[1]), cache.deviceOf(ids[5]), "a fork stays on its device");
                }
                int[] which = STEPS[s][0], lens = STEPS[s][1];
                int[] refSeqs = new int[which.length], seqs = new int[which.length];
                int total = 0;
                for (int i = 0; i < which.length; i++) {
                    refSeqs[i] = refIds[which[i]];
                    seqs[i] = ids[which[i]];
                    total += lens[i];
                }
                float[] x = TestData.gaussian(300 + s, total * d);
                float[] expected = single.forward(ref, x, refSeqs, lens, opt);
                compare(exact, expected, dp.forward(cache, x, seqs, lens, opt), what + " step " + s);
            }
            for (int i = 0; i < 6; i++) {
                assertEquals(ref.length(refIds[i]), cache.length(ids[i]), what);
                compare(exact, ref.latent(refIds[i]), cache.cache(cache.deviceOf(ids[i])).latent(cache.localId(ids[i])), what + ": c_kv of " + i);
            }
        }
    }

    @Test
    void pagedStepsOverTwoDevicesOnTheJvmReferenceAreTheSingleLayersBitForBit() {
        for (AttentionPath p : AttentionPath.values()) paged(JVM, 2, AttentionOptions.of(p), CacheDtype.F32);
        paged(JVM, 2, new AttentionOptions(AttentionPath.TILED, 4, 2), CacheDtype.BF16);
        paged(JVM, 3, AttentionOptions.of(AttentionPath.ABSORBED), CacheDtype.FP8);
    }

    @Test
    void pagedStepsOnJavaFast() {
        for (AttentionPath p : AttentionPath.values()) paged(FAST, 2, AttentionOptions.of(p), CacheDtype.F32);
    }

    /** Contiguous: 2 sequences on each device, uniform steps, against the single layer's variable-length steps over 4. */
    static void contiguous(IntFunction<GraphExecutor> kind, AttentionPath path) {
        boolean exact = kind == JVM;
        MlaWeights w = MlaWeights.random(TestData.yarn(), 42);
        int d = w.config().hiddenSize();
        try (MlaLayer single = new MlaLayer(w, executors(kind, 1).getFirst());
             DataParallelLayers dp = new DataParallelLayers(w, executors(kind, 2))) {
            LatentCache ref = single.newCache(4, 16, CacheDtype.F32);
            DataParallelCache cache = dp.newCache(2, 16, CacheDtype.F32);
            assertArrayEquals(new int[] {0, 1, 2, 3}, cache.sequences());
            assertEquals(1, cache.deviceOf(2));
            assertEquals(0, cache.localId(2));
            int[] all = {0, 1, 2, 3};
            int step = 0;
            for (int tokens : new int[] {6, 1, 1, 3}) {
                int[] lens = new int[4];
                Arrays.fill(lens, tokens);
                float[] x = TestData.gaussian(400 + step++, 4 * tokens * d);
                compare(exact, single.forward(ref, x, all, lens, path), dp.forward(cache, x, tokens, path), "contiguous " + path + " step " + step);
            }
            // a variable-length step in another order, some sequences only
            float[] x = TestData.gaussian(499, 3 * d);
            compare(exact, single.forward(ref, x, new int[] {3, 0}, new int[] {2, 1}, path), dp.forward(cache, x, new int[] {3, 0}, new int[] {2, 1}, path),
                    "contiguous " + path + " variable-length");
        }
    }

    @Test
    void contiguousEveryPath() {
        for (AttentionPath p : AttentionPath.values()) {
            contiguous(JVM, p);
            contiguous(FAST, p);
        }
    }

    /** A device executor (not the JVM's) named by {@code device}, running the reference kernels. */
    static final class OnDevice implements GraphExecutor {
        private final JvmExecutor jvm = new JvmExecutor();
        private final String device;

        OnDevice(String device) {
            this.device = device;
        }

        @Override
        public void execute(org.tornadomla.graph.KernelGraph graph) {
            jvm.execute(graph);
        }

        @Override
        public String device() {
            return device;
        }
    }

    static void oneLine(MlaException e, String start) {
        assertFalse(e.getMessage().contains("\n"), e.getMessage());
        assertTrue(e.getMessage().startsWith(start), e.getMessage());
    }

    @Test
    void refusals() {
        MlaWeights w = MlaWeights.random(TestData.small(), 43);
        int d = w.config().hiddenSize();
        GraphExecutor one = new JvmExecutor();
        oneLine(assertThrows(MlaException.class, () -> new DataParallelLayers(w, List.of(one, one))), "Data parallel layers: executors 0 and 1 are the same executor");
        FastExecutor fast = new FastExecutor(1);
        OPEN.add(fast);
        oneLine(assertThrows(MlaException.class, () -> new DataParallelLayers(w, List.of(one, fast))), "Data parallel layers: mismatched devices: executor 1 runs on java-fast");
        // two executors of one device (as tornado:0:0 twice) are not two devices; two of different devices are
        oneLine(assertThrows(MlaException.class, () -> new DataParallelLayers(w, List.of(new OnDevice("gpu 0:0"), new OnDevice("gpu 0:0")))),
                "Data parallel layers: executors 0 and 1 run on the same device (gpu 0:0)");
        oneLine(assertThrows(MlaException.class, () -> new TensorParallelLayer(w, List.of(new OnDevice("gpu 0:1"), new OnDevice("gpu 0:1")))),
                "Tensor parallel");
        new DataParallelLayers(w, List.of(new OnDevice("gpu 0:0"), new OnDevice("gpu 0:1"))).close();
        try (DataParallelLayers a = new DataParallelLayers(w, executors(JVM, 2)); DataParallelLayers b = new DataParallelLayers(w, executors(JVM, 2))) {
            DataParallelCache other = b.newCache(1, 8, CacheDtype.F32);
            oneLine(assertThrows(MlaException.class, () -> a.forward(other, new float[2 * d], 1, AttentionPath.ABSORBED)),
                    "mismatched devices: this data-parallel cache (2 devices) was made by other DataParallelLayers");
            DataParallelCache c = a.newPagedCache(PagedCacheSpec.builder().maxSequences(2).maxSequenceLength(8).numBlocks(4).blockSize(4).build());
            int s = c.addSequence(), t = c.addSequence();
            assertTrue(c.deviceOf(s) != c.deviceOf(t), "two sequences on two empty devices go to both");
            oneLine(assertThrows(MlaException.class, () -> a.forward(c, new float[2 * d], new int[] {s, s}, new int[] {1, 1}, AttentionPath.ABSORBED)),
                    "sequence " + s + " is named twice in one step");
            oneLine(assertThrows(MlaException.class, () -> a.forward(c, new float[d], new int[] {9}, new int[] {1}, AttentionPath.ABSORBED)),
                    "sequence 9 is not an id of this data-parallel cache (0 … 3: 2 devices of 2)");
            oneLine(assertThrows(MlaException.class, () -> a.forward(c, new float[d], new int[] {s, t}, new int[] {1, 1}, AttentionPath.ABSORBED)),
                    "input x: expected shape [2, 64]");
            oneLine(assertThrows(MlaException.class, () -> a.forward(c, new float[2 * d], 1, AttentionPath.ABSORBED)), "a step with one token count for all runs every sequence slot");
            // a device refuses (sequence t's device has no room for 9 tokens): nothing changes on either device
            float[] x = TestData.gaussian(7, 10 * d);
            MlaException full = assertThrows(MlaException.class, () -> a.forward(c, x, new int[] {s, t}, new int[] {1, 9}, AttentionPath.ABSORBED));
            // named by the caller's id and the device, not only by the id within that device's cache
            oneLine(full, "device " + c.deviceOf(t) + " (");
            assertTrue(full.getMessage().contains("sequences [" + t + "] (there [" + c.localId(t) + "]): latent cache full"), full.getMessage());
            assertEquals(0, c.length(s));
            assertEquals(0, c.length(t));
            c.addSequence();
            c.addSequence();
            oneLine(assertThrows(MlaException.class, c::addSequence), "all 4 sequence slots (2 devices of 2) are in use");
        }
    }

    @Test
    void aDeviceThatFailsMidStepLeavesEveryCacheAsItWas() {
        MlaWeights w = MlaWeights.random(TestData.small(), 44);
        int d = w.config().hiddenSize();
        Flaky a = new Flaky(), b = new Flaky();
        try (MlaLayer single = new MlaLayer(w); DataParallelLayers dp = new DataParallelLayers(w, List.of(a, b))) {
            LatentCache ref = single.newCache(2, 16, CacheDtype.F32);
            DataParallelCache cache = dp.newCache(1, 16, CacheDtype.F32);
            float[] x0 = TestData.gaussian(1, 2 * 4 * d), x1 = TestData.gaussian(2, 2 * d);
            int[] both = {0, 1};
            Outputs.assertBits(single.forward(ref, x0, both, new int[] {4, 4}, AttentionPath.TILED), dp.forward(cache, x0, 4, AttentionPath.TILED), "prefill");
            b.fail = true;
            assertEquals("device lost", assertThrows(IllegalStateException.class, () -> dp.forward(cache, x1, 1, AttentionPath.TILED)).getMessage());
            assertEquals(4, cache.length(0), "device 0's step rolled back");
            assertEquals(4, cache.length(1));
            b.fail = false;
            Outputs.assertBits(single.forward(ref, x1, both, new int[] {1, 1}, AttentionPath.TILED), dp.forward(cache, x1, 1, AttentionPath.TILED), "decode after");
        }
    }
}
