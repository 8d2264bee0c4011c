package org.tornadomla.tornado;

import org.tornadomla.kernels.CacheLayout;
import org.tornadomla.kernels.TopK;
import uk.ac.manchester.tornado.api.KernelContext;

/**
 * Top-k of the index scores for GPUs: a {@link KernelContext} kernel replacing {@link TopK#selectTopK} on
 * TornadoVM. The plain kernel runs one thread per row, its radix select sequential over the row: at a 128k
 * context one GPU thread reads the row five times. Here a work-group of {@link #LOCAL} threads shares each row.
 *
 * <p>The same select and the same rule as {@link TopK} (higher score first, ties to the lower position, the
 * selected positions written in increasing position order), so the output is the plain kernel's, bit for bit:
 * <ol>
 *   <li>Eight passes of 4 bits over the order-preserving keys ({@link TopK#sortableKey}), MSB first. In each, every
 *       thread counts the digits of its strided share of the keys still matching the prefix into its own 16
 *       counters in local memory (no atomics), threads 0 … 15 add up one bin each, and thread 0 finds the digit of
 *       the k-th largest key and how many keys equal to it still belong to the top k.</li>
 *   <li>The writing pass: each thread takes a contiguous chunk of positions, counts what it selects (above the
 *       threshold, and its keys equal to it), thread 0 turns the counts into each chunk's output offset and its
 *       number of equal keys before it, and every thread writes its chunk's positions in order.</li>
 * </ol>
 * The 4-bit digits keep the counters at 16 per thread (8 KB of local memory for 128 threads) where 8-bit
 * digits would need 256.
 */
public final class GpuTopK {
    private GpuTopK() {
    }

    /** Threads per work-group (one work-group per row). */
    public static final int LOCAL = 128;
    /** Bins per pass: 4-bit digits. */
    static final int BINS = 16;

    /**
     * Digit {@code shift/4} (4 bits) of key u read as unsigned, without {@code >>>} (TornadoVM 5.2 writes it as a
     * signed shift; see {@link TopK}): the top digit as the signed top nibble of u ^ 2^31 plus 8.
     */
    static int digit(int u, int shift) {
        return shift == 28 ? ((u ^ 0x80000000) >> 28) + 8 : (u >> shift) & 0xF;
    }

    /** {@link TopK#selectTopK}'s contract (its hist scratch is not needed); work-group r selects row r. */
    public static void selectTopK(KernelContext ctx, float[] scores, int[] keys, int[] out, int[] attnMeta, int rows, int positions, int k, float[] pow2) {
        int[] cnt = ctx.allocateIntLocalArray(LOCAL * BINS);
        int[] total = ctx.allocateIntLocalArray(BINS);
        int[] above = ctx.allocateIntLocalArray(LOCAL);
        int[] equal = ctx.allocateIntLocalArray(LOCAL);
        int[] state = ctx.allocateIntLocalArray(2);
        int r = ctx.groupIdx;
        int tid = ctx.localIdx;
        int visible = CacheLayout.metaRowPosition(attnMeta, r) + 1;       // 0 for a padding row
        int base = r * positions;
        // the branch is the same for the whole work-group (one row), so the barriers inside it are reached by all
        if (visible <= k) {
            for (int j = tid; j < k; j += LOCAL) {
                out[r * k + j] = j < visible ? j : -1;
            }
        } else {
            // keys in unsigned order in the bits; each thread reads back only the keys it wrote (strided share)
            for (int t = tid; t < visible; t += LOCAL) {
                keys[base + t] = TopK.sortableKey(scores[base + t], pow2) ^ 0x80000000;
            }
            int prefix = 0;
            int mask = 0;
            int need = k;
            for (int shift = 28; shift >= 0; shift = shift - 4) {
                for (int d = 0; d < BINS; d++) {
                    cnt[tid * BINS + d] = 0;
                }
                for (int t = tid; t < visible; t += LOCAL) {
                    int u = keys[base + t];
                    if ((u & mask) == prefix) {
                        int d = digit(u, shift);
                        cnt[tid * BINS + d] = cnt[tid * BINS + d] + 1;
                    }
                }
                ctx.localBarrier();
                if (tid < BINS) {
                    int s = 0;
                    for (int j = 0; j < LOCAL; j++) {
                        s += cnt[j * BINS + tid];
                    }
                    total[tid] = s;
                }
                ctx.localBarrier();
                if (tid == 0) {
                    int d = BINS - 1;
                    int left = need;
                    while (total[d] < left) {
                        left = left - total[d];
                        d--;
                    }
                    state[0] = d;
                    state[1] = left;
                }
                ctx.localBarrier();
                prefix = prefix | (state[0] << shift);
                mask = mask | (0xF << shift);
                need = state[1];
                // thread 0 writes state again only after the next pass's first barrier, when every thread has read it
            }
            // above the threshold: all; at it: the first `need` by position; in position order, chunk by chunk
            int threshold = prefix ^ 0x80000000;
            int chunk = (visible + LOCAL - 1) / LOCAL;
            int from = Math.min(visible, tid * chunk);
            int to = Math.min(visible, from + chunk);
            int a = 0;
            int e = 0;
            for (int t = from; t < to; t++) {
                int key = TopK.sortableKey(scores[base + t], pow2);
                if (key > threshold) {
                    a++;
                }
                if (key == threshold) {
                    e++;
                }
            }
            above[tid] = a;
            equal[tid] = e;
            ctx.localBarrier();
            if (tid == 0) {
                int taken = 0;
                int equalBefore = 0;
                for (int j = 0; j < LOCAL; j++) {
                    int aj = above[j];
                    int ej = equal[j];
                    int room = need - equalBefore;
                    int take = room < 0 ? 0 : (room < ej ? room : ej);
                    above[j] = taken;                 // where chunk j's first selected position goes
                    equal[j] = equalBefore;           // keys equal to the threshold before chunk j
                    taken += aj + take;
                    equalBefore += ej;
                }
            }
            ctx.localBarrier();
            int at = r * k + above[tid];
            int seen = equal[tid];
            for (int t = from; t < to; t++) {
                int key = TopK.sortableKey(scores[base + t], pow2);
                if (key > threshold) {
                    out[at] = t;
                    at++;
                }
                if (key == threshold) {
                    if (seen < need) {
                        out[at] = t;
                        at++;
                    }
                    seen++;
                }
            }
        }
    }
}
