package org.tornadomla.tornado;

import org.junit.jupiter.api.Test;
import org.tornadomla.graph.KernelGraph;
import org.tornadomla.kernels.OnlineSoftmax;
import org.tornadomla.kernels.Softmax;
import org.tornadomla.kernels.SoftmaxEdgeCases;
import uk.ac.manchester.tornado.api.annotations.Parallel;

import static org.tornadomla.kernels.SoftmaxEdgeCases.DC;
import static org.tornadomla.kernels.SoftmaxEdgeCases.DN;
import static org.tornadomla.kernels.SoftmaxEdgeCases.DR;
import static org.tornadomla.kernels.SoftmaxEdgeCases.H;
import static org.tornadomla.kernels.SoftmaxEdgeCases.LEN;

/**
 * Numerics at the edges of float on the TornadoVM device (OpenCL fast-math), against double precision (1e-5),
 * as on the JVM: {@link SoftmaxEdgeCases} through the two-pass softmax and the tiled path (the plain
 * split_tiles kernel and the KernelContext FlashDecode that replaces it), −∞ rows included; RMSNorm of rows
 * scaled up to the float range.
 */
public class NumericEdgesOnDeviceTest {
    /** Copies in to out: the softmax works in place, and a buffer is either copied in or copied out. */
    public static void copy(float[] in, float[] out, int n) {
        for (@Parallel int i = 0; i < n; i++) {
            out[i] = in[i];
        }
    }

    @Test
    void twoPassSoftmax() {
        SoftmaxEdgeCases.RowBatch rb = SoftmaxEdgeCases.rowBatch();
        KernelGraph g = new KernelGraph("softmax_edges");
        float[] in = g.input("in", rb.scores().clone());
        float[] s = g.output("s", new float[in.length]);
        int[] start = g.input("attnMeta", rb.attnMeta());
        g.task("copy", NumericEdgesOnDeviceTest::copy, in, s, in.length);
        g.task("softmax", Softmax::softmax, s, start, rb.rows(), rb.capacity(), 1);
        try (TornadoExecutor dev = new TornadoExecutor(null, null, true)) {
            dev.execute(g);
            SoftmaxEdgeCases.assertRows(rb, s, "(" + dev.device() + ")");
        }
    }

    @Test
    void rmsNormOfRowsAtEveryScale() {
        int dim = 24;
        double[] scales = {1, 1e30, 1e-30, 3e38 / 4, 1e19, 1e-19};
        float[] x = new float[scales.length * dim], g = org.tornadomla.TestData.gaussian(2, dim);
        float[] base = org.tornadomla.TestData.gaussian(1, dim);
        for (int r = 0; r < scales.length; r++) {
            for (int i = 0; i < dim; i++) x[r * dim + i] = (float) (base[i] * scales[r]);
        }
        double[] expected = new double[x.length];
        for (int r = 0; r < scales.length; r++) {
            double ss = 0;
            for (int i = 0; i < dim; i++) ss += (double) x[r * dim + i] * x[r * dim + i];
            for (int i = 0; i < dim; i++) expected[r * dim + i] = g[i] * x[r * dim + i] / Math.sqrt(ss / dim + 1e-6);
        }
        KernelGraph kg = new KernelGraph("norm_edges");
        float[] in = kg.input("x", x), w = kg.weight("w", g), out = kg.output("out", new float[x.length]);
        kg.task("norm", org.tornadomla.kernels.Norms::rmsNorm, in, dim, w, out, scales.length, dim, 1e-6f);
        try (TornadoExecutor dev = new TornadoExecutor(null, null, true)) {
            dev.execute(kg);
        }
        SoftmaxEdgeCases.assertMatches(expected, out, "rmsNorm on the device");
    }

    @Test
    void tiledPathPlainAndKernelContext() {
        SoftmaxEdgeCases.Batch b = SoftmaxEdgeCases.batch();
        int[][] tilings = {{2, 3}, {64, 1}, {3, 20}};           // {tile, splits}; 20 splits > 13 tokens: empty splits
        for (boolean kernelContext : new boolean[] {false, true}) {
            try (TornadoExecutor dev = new TornadoExecutor(null, null, kernelContext)) {
                for (int[] t : tilings) {
                    int parts = b.batch() * H * t[1];
                    KernelGraph g = new KernelGraph("tiled_edges");
                    float[] qLat = g.input("q_lat", b.qLat().clone()), q = g.input("q", b.q().clone());
                    int[] seqStart = new int[b.batch()];
                    java.util.Arrays.fill(seqStart, LEN - 1);
                    int[] start = g.input("attnMeta", org.tornadomla.kernels.Meta.contiguous(seqStart, b.batch(), 1, LEN));
                    float[] kv = g.weight("kv", b.kv().clone());
                    short[] kv16 = g.weight("kv16", new short[1]);
                    byte[] kv8 = g.weight("kv8", new byte[1]);
                    float[] sTile = g.scratch("s_tile", new float[parts * t[0]]), oPart = g.scratch("o_split", new float[parts * DC]);
                    float[] ml = g.scratch("ml", new float[2 * parts]);
                    float[] o = g.output("o_lat", new float[b.batch() * H * DC]);
                    g.task("split_tiles", OnlineSoftmax::splitTiles, qLat, q, kv, kv16, kv8, 0, sTile, oPart, ml, start,
                            b.batch(), LEN, H, DN, DR, DC, 1f, t[0], t[1]);
                    g.task("combine", OnlineSoftmax::combine, oPart, ml, o, b.batch(), H, t[1], DC);
                    dev.execute(g);
                    SoftmaxEdgeCases.assertBatch(b, o, "(" + (kernelContext ? "FlashDecode" : "plain splitTiles") + ", tile " + t[0]
                            + ", splits " + t[1] + ")");
                    dev.release(g);
                }
            }
        }
    }
}
