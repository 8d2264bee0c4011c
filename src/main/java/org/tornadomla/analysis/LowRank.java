package org.tornadomla.analysis;

import org.apache.commons.math3.linear.Array2DRowRealMatrix;
import org.apache.commons.math3.linear.EigenDecomposition;
import org.apache.commons.math3.linear.RealMatrix;
import org.tornadomla.MlaException;

import java.util.function.Consumer;
import java.util.stream.IntStream;

/**
 * The singular value spectrum of a projection matrix M [m, n] and its best rank-r factorisation
 * M ≈ W_U·W_D (Eckart–Young), through the eigendecomposition of the smaller Gram matrix (MᵀM or MMᵀ) with
 * Apache Commons Math. For the keys and values of an attention layer M = [W_K; W_V] (MHA/GQA) or
 * kv_b_proj (MLA): its numerical rank is how small a latent can be.
 */
public final class LowRank {
    /** Singular values, largest first. */
    public final double[] sigma;
    private final double[][] m;
    private final int rows, cols;
    private final RealMatrix vecs;          // eigenvectors of the Gram matrix, columns, matching sigma
    private final boolean rightVectors;     // true: V (from MᵀM), false: U (from MMᵀ)

    /**
     * @param progress receives one line per stage (Gram matrix, eigendecomposition), for long runs
     */
    public LowRank(float[] data, int rows, int cols, Consumer<String> progress) {
        if ((long) rows * cols != data.length) {
            throw new MlaException("matrix: expected " + rows + " × " + cols + " = " + (long) rows * cols + " numbers, found " + data.length);
        }
        this.rows = rows;
        this.cols = cols;
        m = new double[rows][cols];
        for (int i = 0; i < rows; i++) for (int j = 0; j < cols; j++) m[i][j] = data[i * cols + j];
        rightVectors = cols <= rows;
        int n = Math.min(rows, cols);
        progress.accept(String.format("Gram matrix %s (%d × %d) of a %d × %d matrix ...", rightVectors ? "MᵀM" : "MMᵀ", n, n, rows, cols));
        double[][] g = new double[n][n];
        IntStream.range(0, n).parallel().forEach(a -> {
            for (int b = 0; b <= a; b++) {
                double s = 0;
                if (rightVectors) {
                    for (int i = 0; i < rows; i++) s += m[i][a] * m[i][b];
                } else {
                    double[] ra = m[a], rb = m[b];
                    for (int j = 0; j < cols; j++) s += ra[j] * rb[j];
                }
                g[a][b] = s;
                g[b][a] = s;
            }
        });
        progress.accept(String.format("eigendecomposition of the %d × %d Gram matrix (Apache Commons Math) ...", n, n));
        EigenDecomposition eig = new EigenDecomposition(new Array2DRowRealMatrix(g, false));
        double[] ev = eig.getRealEigenvalues();
        Integer[] order = IntStream.range(0, n).boxed().toArray(Integer[]::new);
        java.util.Arrays.sort(order, (a, b) -> Double.compare(ev[b], ev[a]));
        sigma = new double[n];
        double[][] v = new double[n][n];
        RealMatrix vectors = eig.getV();
        for (int k = 0; k < n; k++) {
            sigma[k] = Math.sqrt(Math.max(0, ev[order[k]]));
            for (int i = 0; i < n; i++) v[i][k] = vectors.getEntry(i, order[k]);
        }
        vecs = new Array2DRowRealMatrix(v, false);
    }

    /** Σ σ_i² over all i: ||M||_F². */
    public double energy() {
        double e = 0;
        for (double s : sigma) e += s * s;
        return e;
    }

    /** The smallest r whose top-r singular values hold at least {@code fraction} of the energy Σσ². */
    public int effectiveRank(double fraction) {
        double total = energy(), acc = 0;
        for (int r = 0; r < sigma.length; r++) {
            acc += sigma[r] * sigma[r];
            if (acc >= fraction * total) return r + 1;
        }
        return sigma.length;
    }

    /** ||M − M_r||_F / ||M||_F of the best rank-r approximation: sqrt(Σ_{i>r} σ_i² / Σ σ_i²). */
    public double relativeError(int r) {
        double total = energy(), tail = 0;
        for (int i = Math.min(r, sigma.length); i < sigma.length; i++) tail += sigma[i] * sigma[i];
        return total == 0 ? 0 : Math.sqrt(tail / total);
    }

    /**
     * The rank-r factors of M ≈ W_U·W_D: W_D [r, n] (the down-projection to the latent), W_U [m, r] (the
     * up-projection), as float arrays {W_D, W_U}.
     */
    public float[][] factors(int r) {
        if (r < 1 || r > sigma.length) throw new MlaException("rank must be in 1 … " + sigma.length + ", found " + r);
        float[] wd = new float[r * cols], wu = new float[rows * r];
        if (rightVectors) {
            // M = U Σ Vᵀ: W_D = V_rᵀ, W_U = M·V_r
            for (int k = 0; k < r; k++) for (int j = 0; j < cols; j++) wd[k * cols + j] = (float) vecs.getEntry(j, k);
            for (int i = 0; i < rows; i++) {
                for (int k = 0; k < r; k++) {
                    double s = 0;
                    for (int j = 0; j < cols; j++) s += m[i][j] * vecs.getEntry(j, k);
                    wu[i * r + k] = (float) s;
                }
            }
        } else {
            // W_U = U_r·Σ_r, W_D = Σ_r⁻¹·U_rᵀ·M = V_rᵀ
            for (int i = 0; i < rows; i++) for (int k = 0; k < r; k++) wu[i * r + k] = (float) (vecs.getEntry(i, k) * sigma[k]);
            for (int k = 0; k < r; k++) {
                double inv = sigma[k] > 0 ? 1 / sigma[k] : 0;
                for (int j = 0; j < cols; j++) {
                    double s = 0;
                    for (int i = 0; i < rows; i++) s += vecs.getEntry(i, k) * m[i][j];
                    wd[k * cols + j] = (float) (s * inv);
                }
            }
        }
        return new float[][] {wd, wu};
    }
}
