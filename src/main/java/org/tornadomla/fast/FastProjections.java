package org.tornadomla.fast;

import java.util.stream.IntStream;

/**
 * java-fast's {@link org.tornadomla.kernels.Projections}: y = x·Wᵀ with W [out, in]. At batch 1 a projection
 * reads its whole weight matrix once for a few FLOPs per number: bandwidth-bound, so each output row is one
 * vector dot product, and blocks of 16 rows are spread over the threads.
 *
 * <p>Versions: 1. a dot product per (row, output), blocks of 16 outputs per task; the JMH LayerBenchmark times
 * it inside the whole layer (docs/benchmarks.md). At batch 1 a row is one weight stream, so this is already
 * at the read bandwidth. 2. from 8 token rows on, {@link ProjectionGemm}'s register-blocked product over packed
 * chunks of Wᵀ.
 */
public final class FastProjections {
    private FastProjections() {
    }

    public static void matVec(float[] x, float[] w, float[] y, int in, int out) {
        Parallel.forEach((out + 15) / 16, blk -> {
            for (int o = blk * 16; o < Math.min(out, blk * 16 + 16); o++) y[o] = Vec.dot(w, o * in, x, 0, in);
        });
    }

    /**
     * From {@link ProjectionGemm#MIN_ROWS} token rows on, the blocked product of {@link ProjectionGemm}; below,
     * each weight row is read once and dotted with every token row.
     */
    public static void matMul(float[] x, float[] w, float[] y, int rows, int in, int out) {
        if (rows >= ProjectionGemm.MIN_ROWS) {
            ProjectionGemm.multiply(ProjectionGemm.f32(w, in), x, y, rows, in, out);
            return;
        }
        Parallel.forEach((out + 15) / 16, blk -> {
            for (int o = blk * 16; o < Math.min(out, blk * 16 + 16); o++) {
                for (int r = 0; r < rows; r++) y[r * out + o] = Vec.dot(w, o * in, x, r * in, in);
            }
        });
    }
}
