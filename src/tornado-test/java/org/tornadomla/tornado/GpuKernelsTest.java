package org.tornadomla.tornado;

import org.tornadomla.cache.internal.CacheStorage;
import org.tornadomla.cache.PagedCacheSpec;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.tornadomla.TestData;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.graph.JvmExecutor;
import org.tornadomla.graph.KernelGraph;
import org.tornadomla.kernels.Absorb;
import org.tornadomla.kernels.AbsorbedAttention;
import org.tornadomla.kernels.Norms;
import org.tornadomla.kernels.Projections;
import org.tornadomla.kernels.Softmax;

import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Each KernelContext kernel of {@link TornadoExecutor#SUBSTITUTIONS} on the device against the plain kernel it
 * replaces on the JVM: one-task graphs on shapes that are not multiples of the work-group size, sequences
 * of different lengths, several executions of one plan with changing positions. Relative error ≤ 1e-4
 * (the device sums in another order, with fused multiply-adds).
 */
class GpuKernelsTest {
    static final double TOL = 1e-4;
    static TornadoExecutor device;

    @BeforeAll
    static void open() {
        device = new TornadoExecutor(null, null, true);
    }

    @AfterAll
    static void close() {
        device.close();
    }

    /** Runs g on the JVM, then (output poisoned) on the device, and compares {@code out}. */
    private static void compare(KernelGraph g, float[] out, String what) {
        new JvmExecutor().execute(g);
        float[] expected = out.clone();
        Arrays.fill(out, Float.NaN);
        device.execute(g);
        TestData.assertClose(expected, out, TOL, what);
    }

    /** The class of the kernel that task {@code id} of g ran on the device. */
    private static Class<?> ranOnDevice(KernelGraph g, String id) {
        return device.kernelOf(g, id).getDeclaringClass();
    }

    @Test
    void projections() {
        int in = 301, out = 37;
        KernelGraph v = new KernelGraph("mv");
        float[] x = v.input("x", TestData.gaussian(1, in));
        float[] w = v.weight("w", TestData.gaussian(2, out * in));
        float[] y = v.output("y", new float[out]);
        v.task("p", Projections::matVec, x, w, y, in, out);
        compare(v, y, "matVec");
        assertEquals(GpuProjections.class, ranOnDevice(v, "p"));
        for (int rows : new int[] {1, 5, 8, GpuProjections.MAX_ROWS + 3}) {   // the last stays the plain kernel
            KernelGraph m = new KernelGraph("mm" + rows);
            float[] xr = m.input("x", TestData.gaussian(3, rows * in));
            float[] yr = m.output("y", new float[rows * out]);
            m.task("p", Projections::matMul, xr, m.weight("w", w), yr, rows, in, out);
            compare(m, yr, "matMul rows " + rows);
            assertEquals(rows <= GpuProjections.MAX_ROWS ? GpuProjections.class : Projections.class, ranOnDevice(m, "p"));
        }
    }

    @Test
    void unabsorbValue() {
        int rows = 5, heads = 3, dn = 4, dv = 7, dc = 300;
        KernelGraph g = new KernelGraph("unabsorb");
        float[] oLat = g.input("o_lat", TestData.gaussian(4, rows * heads * dc));
        float[] wkvB = g.weight("kv_b_proj", TestData.gaussian(5, heads * (dn + dv) * dc));
        float[] o = g.output("o", new float[rows * heads * dv]);
        g.task("unabsorb_v", Absorb::unabsorbValue, oLat, wkvB, o, rows, heads, dn, dv, dc);
        compare(g, o, "unabsorbValue");
        assertEquals(GpuProjections.class, ranOnDevice(g, "unabsorb_v"));
    }

    /** Block-scaled FP8 test weights [rows, cols]: every finite code, varied block scales. */
    private static byte[] fp8Codes(int n, long seed) {
        java.util.SplittableRandom r = new java.util.SplittableRandom(seed);
        byte[] q = new byte[n];
        for (int i = 0; i < n; i++) {
            int c = i < 254 ? (i < 127 ? i : i + 1) : r.nextInt(256);
            q[i] = (byte) ((c & 0x7F) == 0x7F ? 0x7E : c);
        }
        return q;
    }

    private static float[] fp8Scales(int rows, int cols, long seed) {
        float[] s = TestData.gaussian(seed, ((rows + 127) / 128) * ((cols + 127) / 128));
        for (int i = 0; i < s.length; i++) s[i] = (float) ((0.5 + Math.abs(s[i])) / (100 * Math.sqrt(cols)));
        return s;
    }

    private static short[] bf16(int n, int in, long seed) {
        float[] g = TestData.gaussian(seed, n);
        short[] b = new short[n];
        for (int i = 0; i < n; i++) b[i] = org.tornadomla.weights.Bf16Bits.encode((float) (g[i] / Math.sqrt(in)));
        return b;
    }

    @Test
    void projectionsAndUnabsorbOverBf16AndFp8Weights() {
        int in = 301, out = 261;                         // partial blocks and partial work-groups
        float[] pow2 = org.tornadomla.kernels.Bf16.pow2();
        byte[] w8 = fp8Codes(out * in, 1);
        float[] s8 = fp8Scales(out, in, 2);
        short[] w16 = bf16(out * in, in, 3);
        for (int rows : new int[] {1, 5}) {
            KernelGraph g = new KernelGraph("wp" + rows);
            float[] x = g.input("x", TestData.gaussian(4, rows * in));
            float[] p = g.weight("pow2", pow2);
            float[] y8 = g.output("y8", new float[rows * out]), y16 = g.output("y16", new float[rows * out]);
            if (rows == 1) {
                g.task("fp8", Projections::matVecFp8, x, g.weight("w8", w8), g.weight("s8", s8), p, y8, in, out);
                g.task("bf16", Projections::matVecBf16, x, g.weight("w16", w16), p, y16, in, out);
            } else {
                g.task("fp8", Projections::matMulFp8, x, g.weight("w8", w8), g.weight("s8", s8), p, y8, rows, in, out);
                g.task("bf16", Projections::matMulBf16, x, g.weight("w16", w16), p, y16, rows, in, out);
            }
            new JvmExecutor().execute(g);
            float[] e8 = y8.clone(), e16 = y16.clone();
            Arrays.fill(y8, Float.NaN);
            Arrays.fill(y16, Float.NaN);
            device.execute(g);
            TestData.assertClose(e8, y8, TOL, "fp8 projection rows " + rows);
            TestData.assertClose(e16, y16, TOL, "bf16 projection rows " + rows);
            assertEquals(GpuWeightProjections.class, ranOnDevice(g, "fp8"));
            assertEquals(GpuWeightProjections.class, ranOnDevice(g, "bf16"));
        }
        int rows = 5, heads = 3, dn = 40, dv = 48, dc = 144;
        KernelGraph g = new KernelGraph("unabsorb_forms");
        float[] oLat = g.input("o_lat", TestData.gaussian(5, rows * heads * dc));
        float[] p = g.weight("pow2", pow2);
        float[] o8 = g.output("o8", new float[rows * heads * dv]), o16 = g.output("o16", new float[rows * heads * dv]);
        g.task("fp8", Absorb::unabsorbValueFp8, oLat, g.weight("w8", fp8Codes(heads * (dn + dv) * dc, 6)),
                g.weight("s8", fp8Scales(heads * (dn + dv), dc, 7)), p, o8, rows, heads, dn, dv, dc);
        g.task("bf16", Absorb::unabsorbValueBf16, oLat, g.weight("w16", bf16(heads * (dn + dv) * dc, dc, 8)), p, o16, rows, heads, dn, dv, dc);
        new JvmExecutor().execute(g);
        float[] e8 = o8.clone(), e16 = o16.clone();
        Arrays.fill(o8, Float.NaN);
        Arrays.fill(o16, Float.NaN);
        device.execute(g);
        TestData.assertClose(e8, o8, TOL, "fp8 unabsorbValue");
        TestData.assertClose(e16, o16, TOL, "bf16 unabsorbValue");
        assertEquals(GpuWeightProjections.class, ranOnDevice(g, "fp8"));
        assertEquals(GpuWeightProjections.class, ranOnDevice(g, "bf16"));
    }

    @Test
    void rmsNormOverAStridedRow() {
        int rows = 3, dim = 300, stride = 333;
        KernelGraph g = new KernelGraph("norm");
        float[] x = g.input("x", TestData.gaussian(6, rows * stride));
        for (int i = 0; i < stride; i++) x[stride + i] *= 1e-3f;    // rows of different magnitudes
        float[] out = g.output("out", new float[rows * dim]);
        g.task("norm", Norms::rmsNorm, x, stride, g.weight("w", TestData.gaussian(7, dim)), out, rows, dim, 1e-6f);
        compare(g, out, "rmsNorm");
        assertEquals(GpuNorms.class, ranOnDevice(g, "norm"));
    }

    @Test
    void absorbedScoresAndSoftmaxOverEveryCacheDtype() {
        for (int blockSize : new int[] {0, 5}) scoresAndSoftmax(blockSize);
    }

    /** Over a contiguous cache (blockSize 0) or a paged one with scattered blocks of blockSize tokens. */
    private void scoresAndSoftmax(int blockSize) {
        int batch = 2, tokens = 2, heads = 3, dn = 8, dr = 64, dc = 512, rows = batch * tokens;
        MlaConfig c = new MlaConfig(64, heads, 0, dc, dn, dr, 8, 10000, 1e-6, 4096, 1, null);
        for (CacheDtype dt : CacheDtype.values()) {
            LatentCache cache;
            if (blockSize == 0) {
                cache = new LatentCache(c, batch, 37, dt);
            } else {
                cache = LatentCache.paged(c, PagedCacheSpec.builder().maxSequences(batch).maxSequenceLength(37).numBlocks(batch * 8).blockSize(blockSize).dtype(dt).build());   // capacity 40
                CacheStorage.of(cache).shuffleFreeBlocks(3);
                for (int b = 0; b < batch; b++) cache.addSequence();
            }
            int cap = cache.capacity();
            for (int b = 0; b < batch; b++) cache.write(b, TestData.gaussian(10 + b, 37 * dc), TestData.gaussian(20 + b, 37 * dr));
            KernelGraph g = new KernelGraph("scores_" + dt);
            float[] qLat = g.input("q_lat", TestData.gaussian(8, rows * heads * dc));
            float[] q = g.input("q", TestData.gaussian(9, rows * heads * (dn + dr)));
            int[] meta = g.input("attnMeta", new int[CacheStorage.of(cache).metaLength(rows)]);
            g.state("cache", CacheStorage.of(cache));
            float[] scores = g.output("scores", new float[rows * heads * cap]);
            g.task("scores", AbsorbedAttention::absorbedScores, qLat, q, CacheStorage.of(cache).floats(), CacheStorage.of(cache).halves(), CacheStorage.of(cache).bytes(), dt.code, scores,
                    meta, rows, cap, cache.blockSize(), heads, dn, dr, dc, 0.05f);
            g.task("softmax", Softmax::softmax, scores, meta, rows, cap, heads);
            for (int[] st : new int[][] {{0, 3}, {17, 0}, {37 - tokens, 20}}) {
                CacheStorage.of(cache).describe(meta, rows, new int[] {0, 1}, st, new int[] {tokens, tokens}, null);
                Arrays.fill(scores, 0f);
                new JvmExecutor().execute(g);
                float[] expected = scores.clone();
                Arrays.fill(scores, 0f);     // positions past a row's own are never written: both leave them 0
                device.execute(g);
                TestData.assertClose(expected, scores, TOL, "scores + softmax " + dt + (blockSize > 0 ? " paged by " + blockSize : "")
                        + " positions " + Arrays.toString(st));
            }
            assertEquals(GpuAttention.class, ranOnDevice(g, "scores"));
            assertEquals(GpuAttention.class, ranOnDevice(g, "softmax"));
        }
    }
}
