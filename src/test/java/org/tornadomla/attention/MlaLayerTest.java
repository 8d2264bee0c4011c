package org.tornadomla.attention;

import org.tornadomla.cache.internal.CacheStorage;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;
import org.tornadomla.MlaException;
import org.tornadomla.ReferenceMla;
import org.tornadomla.TestData;
import org.tornadomla.weights.Bf16Bits;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.weights.MlaWeights;

import java.util.Arrays;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MlaLayerTest {
    /** f32 paths against each other (the bound). */
    static final double PATHS_TOL = 1e-5;
    /** f32 layer against the double-precision reference. */
    static final double REF_TOL = 1e-4;

    static Stream<Arguments> configs() {
        return Arrays.stream(TestData.all()).map(c -> Arguments.of(c.hasQLora() ? (c.ropeScaling() != null ? "yarn" : "q_lora") : "q_proj", c));
    }

    private static float[] run(MlaLayer layer, AttentionOptions opt, CacheDtype dtype, float[] x, int batch, int... chunks) {
        int total = Arrays.stream(chunks).sum(), d = layer.config().hiddenSize();
        LatentCache cache = layer.newCache(batch, total, dtype);
        float[] y = new float[batch * total * d];
        int done = 0;
        for (int n : chunks) {
            float[] xc = new float[batch * n * d];
            for (int b = 0; b < batch; b++) System.arraycopy(x, (b * total + done) * d, xc, b * n * d, n * d);
            float[] yc = layer.forward(cache, xc, n, opt);
            for (int b = 0; b < batch; b++) System.arraycopy(yc, b * n * d, y, (b * total + done) * d, n * d);
            done += n;
        }
        return y;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("configs")
    void threePathsAgreeAndMatchTheDoubleReference(String name, MlaConfig c) {
        MlaLayer layer = new MlaLayer(MlaWeights.random(c, 1));
        int T = 11;
        float[] x = TestData.gaussian(2, T * c.hiddenSize());
        ReferenceMla.Result ref = ReferenceMla.prefill(layer.weights(), x, T, false);
        float[] naive = run(layer, AttentionOptions.of(AttentionPath.NAIVE), CacheDtype.F32, x, 1, T);
        TestData.assertClose(ref.y(), naive, REF_TOL, name + " naive vs reference");
        for (AttentionOptions opt : new AttentionOptions[] {AttentionOptions.of(AttentionPath.ABSORBED),
                AttentionOptions.of(AttentionPath.TILED), new AttentionOptions(AttentionPath.TILED, 3, 2),
                new AttentionOptions(AttentionPath.TILED, 1, 16)}) {
            float[] y = run(layer, opt, CacheDtype.F32, x, 1, T);
            assertTrue(TestData.maxAbsDiff(naive, y) <= PATHS_TOL, name + " " + opt + " vs naive: " + TestData.maxAbsDiff(naive, y));
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("configs")
    void prefillThenDecodeEqualsOnePrefill(String name, MlaConfig c) {
        MlaLayer layer = new MlaLayer(MlaWeights.random(c, 3));
        int T = 6, k = 4;
        float[] x = TestData.gaussian(4, (T + k) * c.hiddenSize());
        for (AttentionPath p : AttentionPath.values()) {
            AttentionOptions opt = new AttentionOptions(p, 2, 3);
            float[] whole = run(layer, opt, CacheDtype.F32, x, 1, T + k);
            float[] stepped = run(layer, opt, CacheDtype.F32, x, 1, T, 1, 1, 1, 1);
            assertTrue(TestData.maxAbsDiff(whole, stepped) <= PATHS_TOL, name + " " + p + ": " + TestData.maxAbsDiff(whole, stepped));
        }
        ReferenceMla.Result ref = ReferenceMla.prefill(layer.weights(), x, T + k, false);
        TestData.assertClose(ref.y(), run(layer, AttentionOptions.of(AttentionPath.TILED), CacheDtype.F32, x, 1, T, 1, 1, 1, 1),
                REF_TOL, name + " decode steps vs reference");
    }

    @Test
    void chunkedPrefillEqualsSinglePrefillAndMultiTokenDecode() {
        MlaConfig c = TestData.yarn();
        MlaLayer layer = new MlaLayer(MlaWeights.random(c, 5));
        float[] x = TestData.gaussian(6, 12 * c.hiddenSize());
        for (AttentionPath p : AttentionPath.values()) {
            AttentionOptions opt = AttentionOptions.of(p);
            float[] single = run(layer, opt, CacheDtype.F32, x, 1, 12);
            float[] chunked = run(layer, opt, CacheDtype.F32, x, 1, 5, 4, 2, 1);
            assertTrue(TestData.maxAbsDiff(single, chunked) <= PATHS_TOL, p + ": " + TestData.maxAbsDiff(single, chunked));
        }
    }

    @Test
    void batchOfSequencesEqualsEachSequenceAlone() {
        MlaConfig c = TestData.small();
        MlaLayer layer = new MlaLayer(MlaWeights.random(c, 7));
        int B = 3, T = 5, d = c.hiddenSize();
        float[] x = TestData.gaussian(8, B * (T + 2) * d);
        for (AttentionPath p : AttentionPath.values()) {
            float[] batched = run(layer, AttentionOptions.of(p), CacheDtype.F32, x, B, T, 1, 1);
            for (int b = 0; b < B; b++) {
                float[] xb = Arrays.copyOfRange(x, b * (T + 2) * d, (b + 1) * (T + 2) * d);
                float[] alone = run(layer, AttentionOptions.of(p), CacheDtype.F32, xb, 1, T, 1, 1);
                float[] part = Arrays.copyOfRange(batched, b * (T + 2) * d, (b + 1) * (T + 2) * d);
                assertTrue(TestData.maxAbsDiff(alone, part) <= PATHS_TOL, p + " sequence " + b);
            }
        }
    }

    @Test
    void cacheHoldsExactlyTheNormalisedLatentAndRopedKey() {
        MlaConfig c = TestData.yarn();
        MlaLayer layer = new MlaLayer(MlaWeights.random(c, 9));
        int T = 7;
        float[] x = TestData.gaussian(10, T * c.hiddenSize());
        ReferenceMla.Result ref = ReferenceMla.prefill(layer.weights(), x, T, false);
        LatentCache f32 = layer.newCache(1, T, CacheDtype.F32);
        layer.prefill(f32, x, T, AttentionPath.ABSORBED);
        assertEquals(T, f32.length(0));
        TestData.assertClose(ref.ckv(), f32.latent(0), 1e-5, "c_kv");
        TestData.assertClose(ref.kpe(), f32.ropeKey(0), 1e-5, "k_pe");
        assertEquals((long) (c.kvLoraRank() + c.qkRopeHeadDim()) * 4, f32.bytesPerToken());

        // bf16 storage holds exactly the round-to-nearest-even of what f32 storage holds
        LatentCache bf16 = layer.newCache(1, T, CacheDtype.BF16);
        layer.prefill(bf16, x, T, AttentionPath.TILED);
        float[] a = f32.latent(0), b = bf16.latent(0);
        for (int i = 0; i < a.length; i++) assertEquals(Bf16Bits.decode(Bf16Bits.encode(a[i])), b[i], 0.0, "latent " + i);
        float[] pa = f32.ropeKey(0), pb = bf16.ropeKey(0);
        for (int i = 0; i < pa.length; i++) assertEquals(Bf16Bits.decode(Bf16Bits.encode(pa[i])), pb[i], 0.0, "k_pe " + i);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("configs")
    void bf16CacheMatchesTheReferenceWithABf16Cache(String name, MlaConfig c) {
        MlaLayer layer = new MlaLayer(MlaWeights.random(c, 11));
        int T = 6;
        float[] x = TestData.gaussian(12, (T + 2) * c.hiddenSize());
        ReferenceMla.Result ref = ReferenceMla.prefill(layer.weights(), x, T + 2, true);
        float[] naive = run(layer, AttentionOptions.of(AttentionPath.NAIVE), CacheDtype.BF16, x, 1, T, 1, 1);
        // a bf16 rounding that f32 and double see on different sides of a tie moves one number by 2^-8 relative
        TestData.assertClose(ref.y(), naive, 2e-3, name + " bf16 naive vs reference");
        for (AttentionPath p : new AttentionPath[] {AttentionPath.ABSORBED, AttentionPath.TILED}) {
            float[] y = run(layer, AttentionOptions.of(p), CacheDtype.BF16, x, 1, T, 1, 1);
            assertTrue(TestData.maxAbsDiff(naive, y) <= PATHS_TOL, name + " bf16 " + p + " vs naive");
        }
    }

    @Test
    void int8CacheHoldsTheQuantisedLatentAndAllPathsAgreeOverIt() {
        MlaConfig c = TestData.yarn();
        MlaLayer layer = new MlaLayer(MlaWeights.random(c, 15));
        int T = 6;
        float[] x = TestData.gaussian(16, (T + 2) * c.hiddenSize());
        LatentCache f32 = layer.newCache(1, T, CacheDtype.F32), int8 = layer.newCache(1, T, CacheDtype.INT8);
        layer.prefill(f32, java.util.Arrays.copyOf(x, T * c.hiddenSize()), T, AttentionPath.ABSORBED);
        layer.prefill(int8, java.util.Arrays.copyOf(x, T * c.hiddenSize()), T, AttentionPath.ABSORBED);
        assertEquals(c.cacheWidth() + 8, int8.bytesPerToken());
        float[] lat = f32.latent(0), pe = f32.ropeKey(0), lat8 = int8.latent(0), pe8 = int8.ropeKey(0);
        int dc = c.kvLoraRank(), dr = c.qkRopeHeadDim();
        for (int t = 0; t < T; t++) {
            float[] row = new float[dc + dr];
            System.arraycopy(lat, t * dc, row, 0, dc);
            System.arraycopy(pe, t * dr, row, dc, dr);
            double[] e = org.tornadomla.kernels.KernelsTest.int8Expected(row, dc);
            for (int i = 0; i < dc; i++) assertEquals(e[i], lat8[t * dc + i], 1e-6, "latent " + t + "," + i);
            for (int i = 0; i < dr; i++) assertEquals(e[dc + i], pe8[t * dr + i], 1e-6, "k_pe " + t + "," + i);
        }
        float[] naive = run(layer, AttentionOptions.of(AttentionPath.NAIVE), CacheDtype.INT8, x, 1, T, 1, 1);
        for (AttentionPath p : new AttentionPath[] {AttentionPath.ABSORBED, AttentionPath.TILED}) {
            float[] y = run(layer, AttentionOptions.of(p), CacheDtype.INT8, x, 1, T, 1, 1);
            assertTrue(TestData.maxAbsDiff(naive, y) <= PATHS_TOL, "int8 " + p + " vs naive: " + TestData.maxAbsDiff(naive, y));
        }
    }

    @Test
    void fullCacheIsAnErrorAndLeavesTheCacheUnchanged() {
        MlaConfig c = TestData.small();
        MlaLayer layer = new MlaLayer(MlaWeights.random(c, 13));
        LatentCache cache = layer.newCache(1, 5, CacheDtype.F32);
        layer.prefill(cache, TestData.gaussian(1, 4 * c.hiddenSize()), 4, AttentionPath.ABSORBED);
        float[] before = CacheStorage.of(cache).floats().clone();
        MlaException e = assertThrows(MlaException.class,
                () -> layer.prefill(cache, TestData.gaussian(2, 2 * c.hiddenSize()), 2, AttentionPath.ABSORBED));
        assertTrue(e.getMessage().contains("capacity 5") && e.getMessage().contains("holds 4") && e.getMessage().contains("appends 2"), e.getMessage());
        assertEquals(4, cache.length(0));
        assertArrayEquals(before, CacheStorage.of(cache).floats());
        layer.decode(cache, TestData.gaussian(3, c.hiddenSize()), AttentionPath.ABSORBED);   // the last slot still works
        assertEquals(5, cache.length(0));
    }

    @Test
    void badInputIsOneClearError() {
        MlaConfig c = TestData.small();
        MlaLayer layer = new MlaLayer(MlaWeights.random(c, 14));
        LatentCache cache = layer.newCache(2, 8, CacheDtype.F32);
        MlaException shape = assertThrows(MlaException.class, () -> layer.forward(cache, new float[64], 1, AttentionOptions.of(AttentionPath.NAIVE)));
        assertEquals("input x: expected shape [2, 1, 64] (128 floats), found 64 floats", shape.getMessage());
        float[] x = new float[2 * 64];
        x[64 + 3] = Float.NaN;
        MlaException nan = assertThrows(MlaException.class, () -> layer.forward(cache, x, 1, AttentionOptions.of(AttentionPath.NAIVE)));
        assertEquals("input x holds NaN at [1, 0, 3]; expected finite numbers", nan.getMessage());
        assertEquals(0, cache.length(0));
        LatentCache other = new LatentCache(TestData.noQLora(), 1, 4, CacheDtype.F32);
        assertThrows(MlaException.class, () -> layer.decode(other, new float[64], AttentionPath.TILED));
        assertThrows(MlaException.class, () -> new AttentionOptions(AttentionPath.TILED, 0, 1));
        assertThrows(MlaException.class, () -> CacheDtype.parse("fp4"));
    }
}
