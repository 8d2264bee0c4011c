package org.tornadomla.fast;

import org.junit.jupiter.api.Test;
import org.tornadomla.TestData;
import org.tornadomla.attention.AttentionOptions;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.attention.MlaLayer;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.weights.MlaWeights;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** java-fast against the reference kernels: every path and cache dtype, prefill then decode steps, ≤ 1e-4. */
class FastExecutorTest {
    /** Dimensions that are multiples of the vector length, so the register-blocked paths run too. */
    static MlaConfig blocked() {
        return new MlaConfig(96, 8, 48, 64, 16, 16, 16, 10000, 1e-6, 4096, 1, null);
    }

    @Test
    void theCpuFieldsAreTheFirstProcessorsAndTheChoicesFollowThem() throws java.io.IOException {
        // the rules per CPU, as they stand without a file of `mla tune` (the build runs with -Dtornadomla.fast.choices=none)
        org.junit.jupiter.api.Assumptions.assumeTrue(KernelChoices.measuredChoices().isEmpty(), "a file of measured choices is in use");
        // each field as grep would find its first line in /proc/cpuinfo ("model" is not "model name"); none without it
        java.nio.file.Path info = java.nio.file.Path.of("/proc/cpuinfo");
        List<String> lines = java.nio.file.Files.exists(info) ? java.nio.file.Files.readAllLines(info) : List.of();
        for (String field : new String[] {"vendor_id", "cpu family", "model"}) {
            String want = lines.stream().filter(l -> l.matches(java.util.regex.Pattern.quote(field) + "\\s*:.*"))
                    .map(l -> l.substring(l.indexOf(':') + 1).trim()).findFirst().orElse("");
            assertEquals(want, Vec.cpuInfo(field), field);
        }
        assertEquals("", Vec.cpuInfo("no such field"));
        // true and false override what the machine suggests; anything else leaves it
        String p = "tornadomla.test.choice";
        try {
            System.setProperty(p, "true");
            assertTrue(KernelChoices.choice(p, false));
            System.setProperty(p, "false");
            assertFalse(KernelChoices.choice(p, true));
            System.setProperty(p, "yes");
            assertTrue(KernelChoices.choice(p, true));
            assertFalse(KernelChoices.choice(p, false));
        } finally {
            System.clearProperty(p);
        }
        // one FloatVector shape per JVM: the 256-bit scores kernel (once a Zen 4's choice) runs on no CPU unless asked for
        // (docs/cpu-kernels.md §6)
        if (System.getProperty("tornadomla.fast.halfScores") == null) {
            assertFalse(Gemm.HALF_SCORES, "16 heads' scores on 256-bit halves are opt-in");
        }
        // the Zen 4 choice: 16 heads' scores two columns a broadcast (s8x2p), stated per machine as measured there
        if (System.getProperty("tornadomla.fast.pairScores") == null && System.getProperty("tornadomla.fast.halfScores") == null
                && System.getProperty("tornadomla.fast.registers") == null) {
            boolean zen4 = "AuthenticAMD".equals(Vec.cpuVendor()) && "25".equals(Vec.cpuInfo("cpu family")) && Vec.F.vectorBitSize() >= 512;
            assertEquals(zen4, Gemm.PAIR_SCORES, "column pairs on an AMD family 25 CPU with AVX-512 (a Zen 4) only");
        }
        // the Zen 5 choice: tiles touched before a single head vector's scores where the touch is on and the FMAs are full width
        if (System.getProperty("tornadomla.fast.touchScores") == null) {
            // stated per machine, as measured there, not as the code's formula
            if (Vec.F.vectorBitSize() < 512 && System.getProperty("tornadomla.fast.registers") == null) {
                assertFalse(Gemm.TOUCH_SCORES, "16 registers (AVX2) keep the read-ahead");
            }
            if ("AuthenticAMD".equals(Vec.cpuVendor()) && "25".equals(Vec.cpuInfo("cpu family"))
                    && System.getProperty("tornadomla.fast.halfScores") == null) {
                assertFalse(Gemm.TOUCH_SCORES, "a Zen 3 or Zen 4 keeps the read-ahead");
            }
            if ("AuthenticAMD".equals(Vec.cpuVendor()) && "26".equals(Vec.cpuInfo("cpu family")) && Vec.F.vectorBitSize() >= 512
                    && System.getProperty("tornadomla.fast.touch") == null && System.getProperty("tornadomla.fast.registers") == null
                    && System.getProperty("tornadomla.fast.halfScores") == null) {
                assertTrue(Gemm.TOUCH_SCORES, "a Zen 5 (AMD family 26 with AVX-512) touches before the 16-head scores");
            }
            if ("GenuineIntel".equals(Vec.cpuVendor()) && System.getProperty("tornadomla.fast.touch") == null) {
                assertFalse(Gemm.TOUCH_SCORES, "an Intel CPU keeps the 16-head scores' read-ahead (s16x1Ahead)");
            }
        }
        // the tiled path's touch before a tile, stated per machine: at one head vector a Zen 4 (family 25, AVX-512) and an
        // Intel CPU read the tile without it; at several head vectors an AMD CPU touches and an Intel CPU does not
        if (System.getProperty("tornadomla.fast.touch") == null && System.getProperty("tornadomla.fast.touchScores") == null
                && System.getProperty("tornadomla.fast.halfScores") == null && System.getProperty("tornadomla.fast.registers") == null) {
            boolean amd = "AuthenticAMD".equals(Vec.cpuVendor()), intel = "GenuineIntel".equals(Vec.cpuVendor());
            if (amd && "25".equals(Vec.cpuInfo("cpu family")) && Vec.F.vectorBitSize() >= 512) {
                assertFalse(FastOnlineSoftmax.touchesTile(Vec.L), "a Zen 4 reads 16 heads' tiles untouched in the tiled path");
            }
            if (amd && "26".equals(Vec.cpuInfo("cpu family")) && Vec.F.vectorBitSize() >= 512) {
                assertTrue(FastOnlineSoftmax.touchesTile(Vec.L), "a Zen 5 touches 16 heads' tiles in the tiled path");
            }
            if (intel) assertFalse(FastOnlineSoftmax.touchesTile(Vec.L) || FastOnlineSoftmax.touchesTile(2 * Vec.L), "an Intel CPU does not touch");
            if (amd) assertTrue(FastOnlineSoftmax.touchesTile(2 * Vec.L), "an AMD CPU touches tiles of several head vectors");
        }
        // the values' runs of two tiles: on AMD CPUs (where tiles are touched), single tiles on an Intel CPU
        if (System.getProperty("tornadomla.fast.valuesRuns") == null && System.getProperty("tornadomla.fast.touch") == null) {
            if ("GenuineIntel".equals(Vec.cpuVendor())) assertEquals(1, FastAttention.VALUES_RUN, "an Intel CPU keeps single tiles");
            if ("AuthenticAMD".equals(Vec.cpuVendor())) assertEquals(2, FastAttention.VALUES_RUN, "an AMD CPU runs the values over two tiles");
        }
        // the other Zen 5 choice: one token row's absorb_q in strips on an AMD family-26 CPU only
        if (System.getProperty("tornadomla.fast.absorbStrips") == null) {
            if ("AuthenticAMD".equals(Vec.cpuVendor()) && "26".equals(Vec.cpuInfo("cpu family"))) {
                assertTrue(FastAbsorb.STRIPS, "a Zen 5 runs one row's absorb_q in strips");
            } else {
                assertFalse(FastAbsorb.STRIPS, "every CPU but a Zen 5 reads W^UK in memory order at one row");
            }
        }
    }

    @Test
    void everyPathAndDtypeMatchesTheReference() {
        List<MlaConfig> configs = new ArrayList<>(List.of(TestData.all()));
        configs.add(blocked());
        FastExecutor fast = new FastExecutor();
        for (MlaConfig c : configs) {
            MlaWeights w = MlaWeights.random(c, 9);
            MlaLayer ref = new MlaLayer(w), fst = new MlaLayer(w, fast);
            for (AttentionPath p : AttentionPath.values()) {
                for (CacheDtype dt : CacheDtype.values()) {
                    AttentionOptions opt = new AttentionOptions(p, 5, 3);
                    LatentCache cr = ref.newCache(2, 24, dt), cf = fst.newCache(2, 24, dt);
                    String what = p + " " + dt + " H=" + c.numHeads() + " dc=" + c.kvLoraRank();
                    float[] x = TestData.gaussian(1, 2 * 13 * c.hiddenSize());
                    TestData.assertClose(ref.forward(cr, x, 13, opt), fst.forward(cf, x, 13, opt), 1e-4, what + " prefill");
                    for (int s = 0; s < 3; s++) {
                        float[] xs = TestData.gaussian(10 + s, 2 * c.hiddenSize());
                        TestData.assertClose(ref.forward(cr, xs, 1, opt), fst.forward(cf, xs, 1, opt), 1e-4, what + " decode " + s);
                    }
                }
            }
        }
    }

    @Test
    void runsOnTheCallersPoolOrItsOwn() {
        MlaConfig c = blocked();
        MlaWeights w = MlaWeights.random(c, 4);
        java.util.concurrent.atomic.AtomicInteger made = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.ForkJoinPool pool = new java.util.concurrent.ForkJoinPool(3, p -> {
            made.incrementAndGet();
            return java.util.concurrent.ForkJoinPool.defaultForkJoinWorkerThreadFactory.newThread(p);
        }, null, false);
        float[] x = TestData.gaussian(3, 2 * 9 * c.hiddenSize());
        AttentionOptions opt = AttentionOptions.of(AttentionPath.TILED);
        float[] expected = new MlaLayer(w).forward(new MlaLayer(w).newCache(2, 16, CacheDtype.F32), x, 9, opt);
        try (FastExecutor callers = new FastExecutor(pool); FastExecutor own = new FastExecutor(2)) {
            assertEquals(3, callers.parallelism());
            assertEquals(2, own.parallelism());
            for (FastExecutor f : List.of(callers, own)) {
                MlaLayer layer = new MlaLayer(w, f);
                TestData.assertClose(expected, layer.forward(layer.newCache(2, 16, CacheDtype.F32), x, 9, opt), 1e-4, f.device());
            }
        }
        assertTrue(made.get() >= 1, "the kernels ran on the caller's pool");
        assertFalse(pool.isShutdown(), "a caller's pool is left running");
        pool.shutdown();
        assertThrows(org.tornadomla.MlaException.class, () -> new FastExecutor(0));
    }

    @Test
    void heavyKernelsHaveFastVersions() {
        FastExecutor fast = new FastExecutor();
        MlaLayer layer = new MlaLayer(MlaWeights.random(blocked(), 1));
        LatentCache cache = layer.newCache(1, 8, CacheDtype.F32);
        for (AttentionPath p : AttentionPath.values()) {
            layer.graph(cache, 2, AttentionOptions.of(p)).tasks().stream()
                    .filter(t -> t.name().matches(".*(proj|absorb_q|unabsorb_v|scores|values|split_tiles|decompress)"))
                    .forEach(t -> assertNotNull(fast.fastVersion(t.kernel()), t.name()));
        }
        assertTrue(fast.device().startsWith("java-fast"));
    }

    @Test
    void aClosedExecutorOrAShutDownPoolRefusesToRun() {
        MlaConfig c = blocked();
        MlaWeights w = MlaWeights.random(c, 4);
        float[] x = TestData.gaussian(3, c.hiddenSize());
        FastExecutor own = new FastExecutor(2);
        MlaLayer layer = new MlaLayer(w, own);
        LatentCache cache = layer.newCache(1, 8, CacheDtype.F32);
        layer.decode(cache, x, AttentionPath.ABSORBED);
        own.close();
        own.close();                                                   // twice: harmless
        org.tornadomla.MlaException closed = assertThrows(org.tornadomla.MlaException.class,
                () -> layer.decode(cache, x, AttentionPath.ABSORBED));
        assertTrue(closed.getMessage().contains("executor is closed"), closed.getMessage());
        assertEquals(1, cache.length(0), "the refused step appended nothing");

        java.util.concurrent.ForkJoinPool pool = new java.util.concurrent.ForkJoinPool(2);
        MlaLayer onPool = new MlaLayer(w, new FastExecutor(pool));
        LatentCache c2 = onPool.newCache(1, 8, CacheDtype.F32);
        pool.shutdown();
        org.tornadomla.MlaException down = assertThrows(org.tornadomla.MlaException.class,
                () -> onPool.decode(c2, x, AttentionPath.ABSORBED));
        assertTrue(down.getMessage().contains("ForkJoinPool") && down.getMessage().contains("shut down"), down.getMessage());
    }

    /**
     * A mistyped -Dtornadomla.fast switch (name or value) is refused when an executor is made, naming it: before, the
     * JVM ran on the default, and an A/B run compared the default with itself.
     */
    @Test
    void mistypedKernelSwitchesAreRefused() {
        String[][] bad = {
                {"tornadomla.fast.tuch", "false", "unknown property -Dtornadomla.fast.tuch: java-fast reads tornadomla.fast.{touch, "},
                {"tornadomla.fast.touch", "flase", "-Dtornadomla.fast.touch='flase': expected true or false"},
                {"tornadomla.fast.registers", "24", "-Dtornadomla.fast.registers='24': expected 16 or 32"},
                {"tornadomla.fast.spinMs", "-1", "-Dtornadomla.fast.spinMs='-1': expected a whole number of milliseconds, 0 or more"},
        };
        for (String[] b : bad) {
            String before = System.getProperty(b[0]);
            System.setProperty(b[0], b[1]);
            try {
                org.tornadomla.MlaException e = assertThrows(org.tornadomla.MlaException.class, () -> new FastExecutor(2).close());
                assertTrue(e.getMessage().startsWith(b[2]), e.getMessage());
            } finally {
                if (before == null) System.clearProperty(b[0]);
                else System.setProperty(b[0], before);
            }
        }
        System.setProperty("tornadomla.fast.touch", "true");     // a good value of a known switch
        try {
            new FastExecutor(2).close();
        } finally {
            System.clearProperty("tornadomla.fast.touch");
        }
    }
}
