package org.tornadomla.analysis;

import java.util.SplittableRandom;
import org.tornadomla.internal.Gaussians;

/**
 * Data-free conversion of an MHA/GQA layer's keys and values to MLA form by a joint SVD (the MHA2MLA
 * recipe without its partial-RoPE step): [W_K; W_V] ≈ [W_UK; W_UV]·W_DKV, so that each token caches
 * c = W_DKV·x (r numbers) instead of its keys and values. {@link #outputError} measures what that costs on
 * random inputs, in double precision, against the original layer.
 */
public final class MhaToMla {
    private MhaToMla() {
    }

    /**
     * The MLA-form factors of a rank-r joint SVD of [W_K; W_V] ({@code kvRows} rows each): the down-projection
     * W_DKV [r, hidden] (DeepSeek's kv_a_proj without the rope part) and the up-projections W_UK and W_UV
     * [kvRows, r] (the two halves of kv_b_proj).
     */
    public record Factors(int rank, float[] wDkv, float[] wUk, float[] wUv) {
    }

    /** Splits {@link LowRank#factors}'s [2·kvRows, r] up-projection into its key and value halves. */
    public static Factors factors(LowRank svd, int rank, int kvRows) {
        float[][] f = svd.factors(rank);
        if (f[1].length != 2 * kvRows * rank) {
            throw new IllegalArgumentException("the factored matrix has " + f[1].length / rank + " rows, expected 2 × " + kvRows);
        }
        return new Factors(rank, f[0], java.util.Arrays.copyOfRange(f[1], 0, kvRows * rank),
                java.util.Arrays.copyOfRange(f[1], kvRows * rank, 2 * kvRows * rank));
    }

    /**
     * An MHA/GQA layer's W_K and W_V [kvRows, hidden] whose stacked [W_K; W_V] has rank {@code rank} plus
     * N(0, 1e-4²) noise: A·B with A ~ N(0, 1/rank) and B ~ N(0, 1/hidden), so rows have unit scale.
     *
     * @return {W_K, W_V}
     */
    public static float[][] plantedRankLayer(int kvRows, int hidden, int rank, long seed) {
        if (kvRows < 1 || hidden < 1 || rank < 1 || rank > Math.min(2 * kvRows, hidden)) {
            throw new IllegalArgumentException("rank must be in 1 … " + Math.min(2 * kvRows, hidden) + ", found " + rank);
        }
        SplittableRandom rnd = new SplittableRandom(seed);
        float[] a = Gaussians.floats(rnd, 2 * kvRows * rank, 1 / Math.sqrt(rank));
        float[] b = Gaussians.floats(rnd, rank * hidden, 1 / Math.sqrt(hidden));
        float[] noise = Gaussians.floats(rnd, 2 * kvRows * hidden, 1e-4);
        float[] m = new float[2 * kvRows * hidden];
        for (int i = 0; i < 2 * kvRows; i++) {
            for (int k = 0; k < rank; k++) {
                float av = a[i * rank + k];
                for (int j = 0; j < hidden; j++) m[i * hidden + j] += av * b[k * hidden + j];
            }
        }
        for (int i = 0; i < m.length; i++) m[i] += noise[i];
        return new float[][] {java.util.Arrays.copyOfRange(m, 0, kvRows * hidden), java.util.Arrays.copyOfRange(m, kvRows * hidden, m.length)};
    }

    /** {@link #outputError(float[], float[], float[], float[], int, int, int, int, int, int, long)} for {@link Factors}. */
    public static double outputError(float[] wk, float[] wv, Factors f, int hidden, int heads, int kvHeads, int headDim, int tokens, long seed) {
        int kv = kvHeads * headDim;
        float[] wu = new float[2 * kv * f.rank()];
        System.arraycopy(f.wUk(), 0, wu, 0, f.wUk().length);
        System.arraycopy(f.wUv(), 0, wu, f.wUk().length, f.wUv().length);
        return outputError(wk, wv, f.wDkv(), wu, f.rank(), hidden, heads, kvHeads, headDim, tokens, seed);
    }

    /**
     * Relative error ||o' − o||_F / ||o||_F of causal attention over {@code tokens} random tokens (x ~ N(0,1),
     * queries ~ N(0,1), no RoPE) when K and V come from the factors instead of W_K and W_V.
     *
     * @param wk [kvHeads·headDim, hidden]   @param wv the same shape
     * @param wd [r, hidden]                  @param wu [2·kvHeads·headDim, r], rows: keys, then values
     */
    public static double outputError(float[] wk, float[] wv, float[] wd, float[] wu, int r, int hidden, int heads, int kvHeads,
                                     int headDim, int tokens, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        int kv = kvHeads * headDim;
        double[][] x = new double[tokens][hidden];
        for (double[] row : x) for (int i = 0; i < hidden; i++) row[i] = Gaussians.next(rnd);
        double[][][] q = new double[tokens][heads][headDim];
        for (double[][] t : q) for (double[] h : t) for (int i = 0; i < headDim; i++) h[i] = Gaussians.next(rnd);
        double[][] k = new double[tokens][kv], v = new double[tokens][kv], k2 = new double[tokens][kv], v2 = new double[tokens][kv];
        for (int t = 0; t < tokens; t++) {
            double[] c = new double[r];
            for (int a = 0; a < r; a++) for (int i = 0; i < hidden; i++) c[a] += wd[a * hidden + i] * x[t][i];
            for (int o = 0; o < kv; o++) {
                for (int i = 0; i < hidden; i++) {
                    k[t][o] += wk[o * hidden + i] * x[t][i];
                    v[t][o] += wv[o * hidden + i] * x[t][i];
                }
                for (int a = 0; a < r; a++) {
                    k2[t][o] += wu[o * r + a] * c[a];
                    v2[t][o] += wu[(kv + o) * r + a] * c[a];
                }
            }
        }
        double[][][] o1 = attend(q, k, v, heads, kvHeads, headDim), o2 = attend(q, k2, v2, heads, kvHeads, headDim);
        double num = 0, den = 0;
        for (int t = 0; t < tokens; t++) {
            for (int h = 0; h < heads; h++) {
                for (int i = 0; i < headDim; i++) {
                    double d = o2[t][h][i] - o1[t][h][i];
                    num += d * d;
                    den += o1[t][h][i] * o1[t][h][i];
                }
            }
        }
        return Math.sqrt(num / den);
    }

    private static double[][][] attend(double[][][] q, double[][] k, double[][] v, int heads, int kvHeads, int headDim) {
        int tokens = q.length, group = heads / kvHeads;
        double scale = 1 / Math.sqrt(headDim);
        double[][][] o = new double[tokens][heads][headDim];
        for (int t = 0; t < tokens; t++) {
            for (int h = 0; h < heads; h++) {
                int g = h / group;
                double[] s = new double[t + 1];
                double max = Double.NEGATIVE_INFINITY, sum = 0;
                for (int j = 0; j <= t; j++) {
                    for (int i = 0; i < headDim; i++) s[j] += q[t][h][i] * k[j][g * headDim + i];
                    s[j] *= scale;
                    max = Math.max(max, s[j]);
                }
                for (int j = 0; j <= t; j++) sum += (s[j] = Math.exp(s[j] - max));
                for (int j = 0; j <= t; j++) for (int i = 0; i < headDim; i++) o[t][h][i] += s[j] / sum * v[j][g * headDim + i];
            }
        }
        return o;
    }
}
