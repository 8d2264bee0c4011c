package org.tornadomla.tornado;

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
        int batch = 2, tokens = 2, cap = 37, heads = 3, dn = 8, dr = 64, dc = 512, rows = batch * tokens;
        MlaConfig c = new MlaConfig(64, heads, 0, dc, dn, dr, 8, 10000, 1e-6, 4096, 1, null);
        for (CacheDtype dt : CacheDtype.values()) {
            LatentCache cache = new LatentCache(c, batch, cap, dt);
            for (int b = 0; b < batch; b++) cache.write(b, TestData.gaussian(10 + b, cap * dc), TestData.gaussian(20 + b, cap * dr));
            KernelGraph g = new KernelGraph("scores_" + dt);
            float[] qLat = g.input("q_lat", TestData.gaussian(8, rows * heads * dc));
            float[] q = g.input("q", TestData.gaussian(9, rows * heads * (dn + dr)));
            int[] seqStart = g.input("seqStart", new int[batch]);
            g.state("cache", cache);
            float[] scores = g.output("scores", new float[rows * heads * cap]);
            g.task("scores", AbsorbedAttention::absorbedScores, qLat, q, cache.floats(), cache.halves(), cache.bytes(), dt.code, scores,
                    seqStart, batch, tokens, cap, heads, dn, dr, dc, 0.05f);
            g.task("softmax", Softmax::softmax, scores, seqStart, batch, tokens, cap, heads);
            for (int[] st : new int[][] {{0, 3}, {17, 0}, {cap - tokens, 20}}) {
                System.arraycopy(st, 0, seqStart, 0, batch);
                Arrays.fill(scores, 0f);
                new JvmExecutor().execute(g);
                float[] expected = scores.clone();
                Arrays.fill(scores, 0f);     // positions past a row's own are never written: both leave them 0
                device.execute(g);
                TestData.assertClose(expected, scores, TOL, "scores + softmax " + dt + " seqStart " + Arrays.toString(st));
            }
            assertEquals(GpuAttention.class, ranOnDevice(g, "scores"));
            assertEquals(GpuAttention.class, ranOnDevice(g, "softmax"));
        }
    }
}
