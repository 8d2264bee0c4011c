package org.tornadomla.attention;

import org.tornadomla.MlaException;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.cache.internal.CacheStorage;
import org.tornadomla.kernels.SparseAttention;

import java.util.Objects;

/**
 * Sparse MLA attention for callers that select the cache rows themselves, with FlashMLA's sparse interface
 * ({@code flash_mla_with_kvcache(…, indices=…)}): each query attends to the cache slots its row of {@code indices}
 * names, in MQA form (DeepSeek's absorbed decode: key = c_kv ‖ k_pe, d_c + d_r wide; value = c_kv, d_c wide), and
 * the call returns the output and the log-sum-exp of the scores. The layer's own sparse attention (a config with
 * an indexer) selects with DeepSeek-V3.2's lightning indexer instead; this entry point takes any selection.
 *
 * <p>A slot is FlashMLA's cache index, block · block_size + offset (a paged cache's {@link LatentCache#blockTable}
 * gives the blocks), −1 an unused entry, anywhere in the row. Rows of the cache that no index names are never read:
 * they may hold anything, NaN included. Runs the plain-Java kernels of {@link SparseAttention} on the calling thread.
 */
public final class SparseMla {
    private SparseMla() {
    }

    /**
     * What {@link #attend} returns.
     *
     * @param out [B, s_q, H, d_c]: the attention output in latent space (before W^UV), FlashMLA's {@code out}
     * @param lse [B, s_q, H]: ln Σ_j exp(score_j) over the row's used entries, scores scaled by the softmax scale
     *            (−∞ for a row without any used entry, whose output is 0)
     */
    public record Output(float[] out, float[] lse) {
        /** A copy of the output. */
        @Override
        public float[] out() {
            return out.clone();
        }

        /** A copy of the log-sum-exp. */
        @Override
        public float[] lse() {
            return lse.clone();
        }
    }

    /**
     * Attends each query of sequences {@code seqIds} to the slots of its row of {@code indices}.
     *
     * @param cache        the latent cache (any dtype; a sparse config's indexer keys are not used)
     * @param seqIds       [B] the sequences the query rows belong to: every used slot must be a position of that
     *                     sequence (one of its blocks, below its length)
     * @param q            [B, s_q, H, d_c + d_r]: absorbed queries (q_nope·W^UK ‖ roped q_pe), FlashMLA's {@code q}
     * @param queries      s_q, queries per sequence
     * @param heads        H
     * @param indices      [B, s_q, topk] cache slots, −1 unused; a slot named twice in a row is attended twice (its
     *                     weight counted twice in the softmax): the indexer's top-k never repeats one, and a row is
     *                     taken as given, not checked for repeats
     * @param topk         entries per query row
     * @param softmaxScale the scale of the scores (the layer's {@code MlaConfig.softmaxScale()}, YaRN's mscale included)
     * @return the output and the log-sum-exp; every argument is checked first, one {@link MlaException} naming the
     *         first wrong one
     */
    public static Output attend(LatentCache cache, int[] seqIds, float[] q, int queries, int heads, int[] indices, int topk, float softmaxScale) {
        Objects.requireNonNull(cache, "cache");
        Objects.requireNonNull(seqIds, "seqIds");
        Objects.requireNonNull(q, "q");
        Objects.requireNonNull(indices, "indices");
        int dc = cache.kvLoraRank(), dr = cache.ropeDim(), b = seqIds.length;
        if (b < 1 || queries < 1 || heads < 1 || topk < 1) {
            throw new MlaException("sparse attention: sequences, queries per sequence, heads and topk must be >= 1, found "
                    + b + ", " + queries + ", " + heads + ", " + topk);
        }
        if (!Float.isFinite(softmaxScale) || softmaxScale <= 0) throw new MlaException("sparse attention: softmax scale must be finite and > 0, found " + softmaxScale);
        long rowsL = (long) b * queries;
        long qLen = rowsL * heads * (dc + dr), iLen = rowsL * topk;
        if (qLen > Integer.MAX_VALUE - 8 || iLen > Integer.MAX_VALUE - 8) throw new MlaException("sparse attention: the call is larger than one Java array");
        if (q.length != qLen) {
            throw new MlaException("sparse attention: q must be [" + b + ", " + queries + ", " + heads + ", " + (dc + dr) + "] = " + qLen
                    + " floats, found " + q.length);
        }
        if (indices.length != iLen) {
            throw new MlaException("sparse attention: indices must be [" + b + ", " + queries + ", " + topk + "] = " + iLen + " ints, found " + indices.length);
        }
        for (int i = 0; i < q.length; i++) {
            if (!Float.isFinite(q[i])) throw new MlaException("sparse attention: q holds " + q[i] + " at flat index " + i + "; expected finite numbers");
        }
        int rows = (int) rowsL, bs = cache.blockSize();
        // the used entries of each row first, in the caller's order, −1 after them (the kernels' form)
        int[] slots = new int[rows * topk];
        for (int s = 0; s < b; s++) {
            int seq = seqIds[s];
            int[] table = cache.blockTable(seq);             // checks that the sequence is present
            int length = cache.length(seq);
            for (int r = s * queries; r < (s + 1) * queries; r++) {
                int n = 0;
                for (int j = 0; j < topk; j++) {
                    int slot = indices[r * topk + j];
                    if (slot == -1) continue;
                    int pos = position(table, bs, slot);
                    if (slot < -1 || pos < 0 || pos >= length) {
                        throw new MlaException("sparse attention: indices[" + s + ", " + (r - s * queries) + ", " + j + "] = " + slot
                                + " is not a cached position of sequence " + seq + " (its " + length + " tokens are in blocks "
                                + java.util.Arrays.toString(table) + " of " + bs + " slots; −1 marks an unused entry)");
                    }
                    slots[r * topk + n++] = slot;
                }
                for (; n < topk; n++) slots[r * topk + n] = -1;
            }
        }
        float[] qLat = new float[rows * heads * dc], qPe = new float[rows * heads * dr];
        for (int rh = 0; rh < rows * heads; rh++) {
            System.arraycopy(q, rh * (dc + dr), qLat, rh * dc, dc);
            System.arraycopy(q, rh * (dc + dr) + dc, qPe, rh * dr, dr);
        }
        CacheStorage st = CacheStorage.of(cache);
        float[] kv32 = st.floats();
        short[] kv16 = st.halves();
        byte[] kv8 = st.bytes();
        int dt = cache.dtype().code;
        float[] scores = new float[rows * heads * topk];
        SparseAttention.sparseScores(qLat, qPe, kv32, kv16, kv8, dt, slots, scores, rows, topk, heads, 0, dr, dc, softmaxScale);
        float[] lse = new float[rows * heads];
        for (int r = 0; r < rows; r++) {
            int used = 0;
            while (used < topk && slots[r * topk + used] >= 0) used++;
            for (int h = 0; h < heads; h++) {
                int base = (r * heads + h) * topk;
                double m = Double.NEGATIVE_INFINITY, sum = 0;
                for (int j = 0; j < used; j++) m = Math.max(m, scores[base + j]);
                for (int j = 0; j < used; j++) sum += Math.exp(scores[base + j] - m);
                lse[r * heads + h] = used == 0 ? Float.NEGATIVE_INFINITY : (float) (m + Math.log(sum));
            }
        }
        SparseAttention.sparseSoftmax(scores, slots, rows, topk, heads);
        float[] out = new float[rows * heads * dc];
        SparseAttention.sparseValues(scores, kv32, kv16, kv8, dt, slots, out, rows, topk, heads, dc, dr);
        return new Output(out, lse);
    }

    /** The position of {@code slot} in the sequence whose block table is {@code table}, or −1 when none of its blocks holds it. */
    private static int position(int[] table, int blockSize, int slot) {
        if (slot < 0) return -1;
        int block = slot / blockSize, offset = slot % blockSize;
        for (int k = 0; k < table.length; k++) if (table[k] == block) return k * blockSize + offset;
        return -1;
    }
}
