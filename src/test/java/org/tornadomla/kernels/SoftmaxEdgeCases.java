package org.tornadomla.kernels;

import org.tornadomla.TestData;

import java.util.ArrayList;
import java.util.List;

/**
 * Softmax problems at the edges of float, with their answers computed here in double precision: scores far
 * below −1e30 (where a running max that starts at −1e30 gave 0/0), scores of exactly −Float.MAX_VALUE, rows
 * of −∞ (defined: every weight 0, output 0), mixed −∞ and finite scores, and equal scores whose weights must
 * stay exact across unequal KV splits. Shared by the JVM tests and the TornadoVM device tests.
 */
public final class SoftmaxEdgeCases {
    private SoftmaxEdgeCases() {
    }

    /** Heads, query/key widths, latent width and context length of the attention problems. */
    public static final int H = 2, DN = 3, DR = 4, DC = 16, W = DC + DR, LEN = 13;

    /** One row of scores for {@link Softmax#softmax} and its expected weights. */
    public record Row(String name, float[] scores, double[] expected) {
    }

    /**
     * One attention-core problem: for each of H heads a query (q_lat [H, DC], q [H, DN + DR]) over LEN cached
     * tokens (an f32 cache [LEN, DC + DR]) with a softmax scale; expected o_lat [H, DC].
     */
    public record Attention(String name, float scale, float[] qLat, float[] q, float[] kv, double[] expected) {
    }

    /** Softmax weights by definition: exp(s − max) / Σ over the finite max; all −∞: every weight 0. */
    public static double[] softmax(double[] s) {
        double max = Double.NEGATIVE_INFINITY;
        for (double v : s) max = Math.max(max, v);
        double[] w = new double[s.length];
        if (max == Double.NEGATIVE_INFINITY) return w;
        double sum = 0;
        for (int j = 0; j < s.length; j++) sum += w[j] = Math.exp(s[j] - max);
        for (int j = 0; j < s.length; j++) w[j] /= sum;
        return w;
    }

    private static Row row(String name, float... scores) {
        double[] d = new double[scores.length];
        for (int j = 0; j < d.length; j++) d[j] = scores[j];
        return new Row(name, scores, softmax(d));
    }

    public static List<Row> rows() {
        float ninf = Float.NEGATIVE_INFINITY, lowest = -Float.MAX_VALUE;
        List<Row> rows = new ArrayList<>();
        rows.add(row("equal scores at -1e35", -1e35f, -1e35f, -1e35f, -1e35f, -1e35f));
        rows.add(row("distinct scores below -1e30", -2e35f, -1e35f, -3e35f, -1.5e35f));
        rows.add(row("scores at -Float.MAX_VALUE", lowest, -3e38f, lowest, lowest));
        rows.add(row("only -Float.MAX_VALUE", lowest, lowest, lowest));
        rows.add(row("all -inf", ninf, ninf, ninf));
        rows.add(row("-inf and finite", ninf, 0.5f, ninf, 1.5f, -2f));
        rows.add(row("-inf first, then scores below -1e30", ninf, -1e35f, -1e35f));
        rows.add(row("one -inf", ninf));
        rows.add(row("huge spread", 3e38f, -3e38f, 1e38f));
        rows.add(row("ordinary", TestData.gaussian(5, 11)));
        return rows;
    }

    /** kv [LEN, W]: random latents, rope part e0 · k0[j] (so q_pe = e0 reads k0[j] exactly; other entries 0). */
    private static float[] cache(float[] k0) {
        float[] kv = TestData.gaussian(7, LEN * W);
        for (int j = 0; j < LEN; j++) {
            for (int d = 0; d < DR; d++) kv[j * W + DC + d] = d == 0 ? k0[j] : 0f;
        }
        return kv;
    }

    /**
     * q_lat = 0 and q_pe = e0, so that head h's score of token j is exactly scale·k0[j] (as a float product, the
     * kernels' arithmetic); the expected output is the softmax-weighted sum of the latents, in double.
     */
    private static Attention exact(String name, float scale, float[] k0) {
        float[] kv = cache(k0), qLat = new float[H * DC], q = new float[H * (DN + DR)];
        for (int h = 0; h < H; h++) q[h * (DN + DR) + DN] = 1f;
        double[] s = new double[LEN];
        for (int j = 0; j < LEN; j++) s[j] = scale * k0[j];
        double[] w = softmax(s), expected = new double[H * DC];
        for (int h = 0; h < H; h++) {
            for (int c = 0; c < DC; c++) {
                for (int j = 0; j < LEN; j++) expected[h * DC + c] += w[j] * kv[j * W + c];
            }
        }
        return new Attention(name, scale, qLat, q, kv, expected);
    }

    /**
     * The problems, all with scale 1 (the magnitudes are in the data: TornadoVM bakes a scalar argument into
     * the compiled kernel, and an infinite constant is undefined under OpenCL fast-math, an infinite datum not).
     */
    public static List<Attention> attention() {
        float[] equal = new float[LEN], maxed = new float[LEN], steps = new float[LEN], near = new float[LEN], ninf = new float[LEN];
        for (int j = 0; j < LEN; j++) {
            equal[j] = -1e35f;
            maxed[j] = -Float.MAX_VALUE;
            steps[j] = -1e35f * (1f + j / 64f);            // distinct scores below −1e30: one-hot at j = 0
            near[j] = -3e4f * (1f + (j % 3) / 4096f);      // three levels about 7 apart near −3e4
            ninf[j] = Float.NEGATIVE_INFINITY;
        }
        List<Attention> out = new ArrayList<>();
        out.add(exact("equal scores at -1e35 (weights by count across splits)", 1f, equal));
        out.add(exact("equal scores at -Float.MAX_VALUE", 1f, maxed));
        out.add(exact("distinct scores below -1e30 (one-hot)", 1f, steps));
        out.add(exact("all scores -inf (output 0)", 1f, ninf));
        out.add(exact("scores near -3e4 (a log-sum-exp rounds ln l away here)", 1f, near));
        float[] mixed = TestData.gaussian(9, LEN);
        mixed[0] = mixed[4] = mixed[5] = Float.NEGATIVE_INFINITY;
        out.add(exact("-inf and ordinary scores", 1f, mixed));
        // random latent and rope queries too, with the expected scores in double
        float[] kv = TestData.gaussian(11, LEN * W), qLat = TestData.gaussian(12, H * DC), q = TestData.gaussian(13, H * (DN + DR));
        double[] expected = new double[H * DC];
        for (int h = 0; h < H; h++) {
            double[] s = new double[LEN];
            for (int j = 0; j < LEN; j++) {
                double dot = 0;
                for (int c = 0; c < DC; c++) dot += (double) qLat[h * DC + c] * kv[j * W + c];
                for (int d = 0; d < DR; d++) dot += (double) q[h * (DN + DR) + DN + d] * kv[j * W + DC + d];
                s[j] = dot;
            }
            double[] w = softmax(s);
            for (int c = 0; c < DC; c++) for (int j = 0; j < LEN; j++) expected[h * DC + c] += w[j] * kv[j * W + c];
        }
        out.add(new Attention("random queries", 1f, qLat, q, kv, expected));
        return out;
    }

    /** All problems as one batch: sequence b is problem b (q_lat [B, H, DC], q [B, H, DN+DR], cache [B, LEN, W]). */
    public record Batch(int batch, float[] qLat, float[] q, float[] kv, double[] expected, List<String> names) {
    }

    public static Batch batch() {
        List<Attention> all = attention();
        int n = all.size();
        float[] qLat = new float[n * H * DC], q = new float[n * H * (DN + DR)], kv = new float[n * LEN * W];
        double[] expected = new double[n * H * DC];
        List<String> names = new ArrayList<>();
        for (int b = 0; b < n; b++) {
            Attention a = all.get(b);
            System.arraycopy(a.qLat(), 0, qLat, b * H * DC, H * DC);
            System.arraycopy(a.q(), 0, q, b * H * (DN + DR), H * (DN + DR));
            System.arraycopy(a.kv(), 0, kv, b * LEN * W, LEN * W);
            System.arraycopy(a.expected(), 0, expected, b * H * DC, H * DC);
            names.add(a.name());
        }
        return new Batch(n, qLat, q, kv, expected, names);
    }

    /** All rows as one batch for {@link Softmax#softmax}: scores [R, 1, CAP] (one head), row r of length len_r. */
    public record RowBatch(float[] scores, int[] seqStart, int rows, int capacity) {
        /** The kernels' metadata: row r is its own sequence's token at position seqStart[r]. */
        public int[] attnMeta() {
            return Meta.contiguous(seqStart, rows, 1, capacity);
        }
    }

    public static RowBatch rowBatch() {
        List<Row> rows = rows();
        int cap = rows.stream().mapToInt(r -> r.scores().length).max().orElseThrow();
        float[] s = new float[rows.size() * cap];
        java.util.Arrays.fill(s, 42f);              // past each row's length: must stay as it is
        int[] start = new int[rows.size()];
        for (int r = 0; r < rows.size(); r++) {
            System.arraycopy(rows.get(r).scores(), 0, s, r * cap, rows.get(r).scores().length);
            start[r] = rows.get(r).scores().length - 1;
        }
        return new RowBatch(s, start, rows.size(), cap);
    }

    /** Checks a {@link #rowBatch()} after the softmax. */
    public static void assertRows(RowBatch b, float[] after, String backend) {
        List<Row> rows = rows();
        for (int r = 0; r < rows.size(); r++) {
            int n = rows.get(r).scores().length;
            assertMatches(rows.get(r).expected(), java.util.Arrays.copyOfRange(after, r * b.capacity(), r * b.capacity() + n), rows.get(r).name() + " " + backend);
            for (int j = n; j < b.capacity(); j++) {
                if (after[r * b.capacity() + j] != 42f) throw new AssertionError(rows.get(r).name() + " " + backend + ": wrote past the row's length");
            }
        }
    }

    /** Checks a {@link #batch()}'s output o_lat [B, H, DC], problem by problem. */
    public static void assertBatch(Batch b, float[] oLat, String backend) {
        for (int i = 0; i < b.batch(); i++) {
            assertMatches(java.util.Arrays.copyOfRange(b.expected(), i * H * DC, (i + 1) * H * DC),
                    java.util.Arrays.copyOfRange(oLat, i * H * DC, (i + 1) * H * DC), b.names().get(i) + " " + backend);
        }
    }

    /** Asserts no NaN and |actual − expected| ≤ 1e-5·max(1, |expected|). */
    public static void assertMatches(double[] expected, float[] actual, String what) {
        for (float v : actual) {
            if (Float.isNaN(v)) throw new AssertionError(what + ": NaN in " + java.util.Arrays.toString(actual));
        }
        TestData.assertClose(expected, actual, 1e-5, what);
    }
}
