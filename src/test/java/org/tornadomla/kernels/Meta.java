package org.tornadomla.kernels;

/**
 * The kernels' step metadata ({@link CacheLayout}, "attnMeta") built by hand for kernel tests, independently of
 * {@code LatentCache}: B sequences of T new tokens each, row r = b·T + t at position seqStart[b] + t.
 */
public final class Meta {
    private Meta() {
    }

    /** Over block tables [batch, maxBlocks] of blocks of {@code blockSize} slots. */
    public static int[] build(int[] seqStart, int batch, int tokens, int blockSize, int maxBlocks, int[] table) {
        int rows = batch * tokens, tables0 = 2 * rows + 4 * batch;
        int[] meta = new int[(int) CacheLayout.metaLength(rows, batch, maxBlocks)];
        for (int r = 0; r < rows; r++) {
            int b = r / tokens;
            meta[2 * r] = seqStart[b] + r % tokens;
            meta[2 * r + 1] = tables0 + b * maxBlocks;
        }
        for (int b = 0; b < batch; b++) {
            meta[2 * rows + 4 * b] = seqStart[b] + tokens;
            meta[2 * rows + 4 * b + 1] = tables0 + b * maxBlocks;
            meta[2 * rows + 4 * b + 2] = -1;
        }
        System.arraycopy(table, 0, meta, tables0, batch * maxBlocks);
        return meta;
    }

    /** A contiguous cache: sequence b is block b of {@code capacity} slots (slot = b·capacity + j). */
    public static int[] contiguous(int[] seqStart, int batch, int tokens, int capacity) {
        int[] table = new int[batch];
        for (int b = 0; b < batch; b++) table[b] = b;
        return build(seqStart, batch, tokens, capacity, 1, table);
    }

    /**
     * A paged copy of a contiguous cache's rows [batch, capacity, width] (capacity a multiple of blockSize): the
     * blocks of all sequences in the pool in a seeded random order. {@link #table} is the block table,
     * {@link #rows} the pool's rows.
     */
    public record Paged(int[] table, int blockSize, int maxBlocks) {
        public static Paged shuffled(int batch, int capacity, int blockSize, long seed) {
            int maxBlocks = capacity / blockSize, n = batch * maxBlocks;
            int[] perm = new int[n];
            for (int i = 0; i < n; i++) perm[i] = i;
            java.util.SplittableRandom rnd = new java.util.SplittableRandom(seed);
            for (int i = n - 1; i > 0; i--) {
                int k = rnd.nextInt(i + 1), t = perm[i];
                perm[i] = perm[k];
                perm[k] = t;
            }
            return new Paged(perm, blockSize, maxBlocks);
        }

        /** Where contiguous slot b·capacity + j lives in the pool. */
        public int slot(int b, int j) {
            return table[b * maxBlocks + j / blockSize] * blockSize + j % blockSize;
        }

        /** Per-slot arrays (width numbers per slot) moved to the pool's slots. */
        public float[] rows(float[] contiguous, int batch, int width) {
            float[] out = new float[contiguous.length];
            int capacity = maxBlocks * blockSize;
            for (int b = 0; b < batch; b++) {
                for (int j = 0; j < capacity; j++) System.arraycopy(contiguous, (b * capacity + j) * width, out, slot(b, j) * width, width);
            }
            return out;
        }

        public int[] meta(int[] seqStart, int batch, int tokens) {
            return build(seqStart, batch, tokens, blockSize, maxBlocks, table);
        }
    }
}
