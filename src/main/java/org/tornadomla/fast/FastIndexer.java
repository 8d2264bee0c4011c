package org.tornadomla.fast;

import jdk.incubator.vector.FloatVector;
import org.tornadomla.kernels.Bf16;
import org.tornadomla.kernels.CacheLayout;
import org.tornadomla.kernels.Fp8;
import org.tornadomla.kernels.TopK;

import static org.tornadomla.fast.Vec.F;
import static org.tornadomla.fast.Vec.L;

/**
 * java-fast's lightning indexer ({@link org.tornadomla.kernels.Indexer#cachedScores}, and {@link
 * org.tornadomla.kernels.Indexer#indexScores} over keys in position order) and top-k
 * ({@link TopK#selectTopK}), the two indexer kernels whose work grows with the context: per query row, heads ×
 * d_idx × T e4m3 products (64 × 128 × T for DeepSeek-V3.2), then a radix select over T scores. The other indexer
 * kernels work on one token's 64 × 128 numbers and stay the reference ones.
 *
 * <p><b>Bit for bit the reference.</b> Both give exactly what the reference kernels give, so that java-fast
 * selects the same positions (a score one rounding away would flip a near tie):
 * <ul>
 *   <li>{@link #cachedScores}: a vector lane holds one cached position, and the lanes walk d = 0 … d_idx − 1 and
 *   then the heads in the reference's order. The product of two e4m3 numbers is exact in f32 (at most 8
 *   significant bits, 2^−18 … 2^17.6), so the fma of {@code dot + q·k} rounds once, as the reference's
 *   {@code dot += q * k} does; the head sum is a separate multiply and add, as there.</li>
 *   <li>{@link #selectTopK}: the reference's radix select, rows spread over the threads, its keys taken from the
 *   float's bits (which the reference, written for TornadoVM, computes with a binary search; the two agree on
 *   every float: FastIndexerTest).</li>
 * </ul>
 *
 * <p>Layout: the keys of a tile of {@link #TILE} positions are decoded once into Kᵀ [d, position] (shared by every
 * head), the query row's codes once per task into floats [heads, d]; a micro-kernel keeps 2 heads × 4 vectors of
 * positions in 8 accumulators (per d: 4 loads, 2 broadcasts, 8 FMAs).
 */
public final class FastIndexer {
    private FastIndexer() {
    }

    /** Cached positions per tile (Kᵀ of 128 × 64 floats is 32 KB: it stays in L1/L2 while every head uses it). */
    static final int TILE = 64;
    /** Positions per micro-kernel block: 4 vectors. */
    private static final int BLOCK = 4 * L;

    /** Every e4m3 byte decoded as {@link Fp8#decode} decodes it. */
    private static final float[] E4M3 = new float[256];

    static {
        float[] pow2 = Bf16.pow2();
        for (int b = 0; b < 256; b++) E4M3[b] = Fp8.decode((byte) b, pow2);
    }

    private static final ThreadLocal<float[]> QF = ThreadLocal.withInitial(() -> new float[0]);
    private static final ThreadLocal<float[]> KT = ThreadLocal.withInitial(() -> new float[0]);
    private static final ThreadLocal<float[]> ACC = ThreadLocal.withInitial(() -> new float[0]);

    /** Same arguments and results as {@link org.tornadomla.kernels.Indexer#cachedScores}, bit for bit. */
    public static void cachedScores(byte[] qCodes, float[] w, byte[] indexKeys, float[] indexScales, float[] scores, int[] attnMeta,
                                    int rows, int heads, int dim, int capacity, int blockSize, float[] pow2) {
        rowScores(qCodes, w, indexKeys, indexScales, scores, attnMeta, rows, heads, dim, capacity, blockSize);
    }

    /**
     * Same arguments and results as {@link org.tornadomla.kernels.Indexer#indexScores}, bit for bit: the keys in
     * position order ([positions, dim], one scale each) rather than through a block table (the kernel ladder's step 9).
     */
    public static void indexScores(byte[] qCodes, float[] w, byte[] kCodes, float[] kScale, float[] scores, int[] attnMeta,
                                   int rows, int heads, int dim, int positions, float[] pow2) {
        rowScores(qCodes, w, kCodes, kScale, scores, attnMeta, rows, heads, dim, positions, IN_ORDER);
    }

    /** A block size that says: key t is row t of the keys (no block table). */
    private static final int IN_ORDER = 0;

    private static void rowScores(byte[] qCodes, float[] w, byte[] indexKeys, float[] indexScales, float[] scores, int[] attnMeta,
                                  int rows, int heads, int dim, int capacity, int blockSize) {
        int pieces = Parallel.piecesPerItem(rows);
        Parallel.forEach(rows * pieces, task -> {
            int r = task / pieces, piece = task % pieces;
            int len = Math.min(capacity, CacheLayout.metaRowPosition(attnMeta, r) + 1), table = CacheLayout.metaRowTable(attnMeta, r);
            int s0 = r * capacity;
            // the positions past the row's: −∞ (one piece writes them)
            if (piece == 0) java.util.Arrays.fill(scores, s0 + Math.max(len, 0), s0 + capacity, Float.NEGATIVE_INFINITY);
            if (len <= 0) return;
            int tiles = (len + TILE - 1) / TILE, per = (tiles + pieces - 1) / pieces;
            int t0 = piece * per, t1 = Math.min(tiles, t0 + per);
            if (t0 >= t1) return;
            float[] qf = Vec.scratch(QF, heads * dim);
            int q0 = r * heads * dim;
            for (int i = 0; i < heads * dim; i++) qf[i] = E4M3[qCodes[q0 + i] & 0xFF];
            float[] kt = Vec.scratch(KT, dim * TILE);
            float[] acc = Vec.scratch(ACC, 2 * TILE);             // the head sum [TILE], then k's scales [TILE]
            int w0 = r * heads;
            for (int tile = t0; tile < t1; tile++) {
                int j0 = tile * TILE, n = Math.min(TILE, len - j0);
                keysTransposed(indexKeys, indexScales, attnMeta, table, j0, n, dim, blockSize, kt, acc);
                scoreTile(qf, w, w0, heads, dim, kt, n, acc, scores, s0 + j0);
            }
        });
    }

    /** The scores of a tile's n positions (Kᵀ in kt, k's scales in acc[TILE …]) into scores[o …]. */
    private static void scoreTile(float[] qf, float[] w, int w0, int heads, int dim, float[] kt, int n, float[] acc, float[] scores, int o) {
        java.util.Arrays.fill(acc, 0, TILE, 0f);
        int blocks = (n + BLOCK - 1) / BLOCK;             // positions past n are zero keys, never stored
        for (int b = 0; b < blocks; b++) {
            int t = b * BLOCK;
            pairs(qf, w, w0, heads, dim, kt, t, acc);
            if (heads % 2 == 1) head1(qf, (heads - 1) * dim, dim, kt, t, w[w0 + heads - 1], acc);
        }
        int j = 0;
        for (; j <= n - L; j += L) {
            FloatVector.fromArray(F, acc, j).mul(FloatVector.fromArray(F, acc, TILE + j)).intoArray(scores, o + j);
        }
        for (; j < n; j++) scores[o + j] = acc[j] * acc[TILE + j];
    }

    /**
     * Kᵀ [d, TILE] of positions [j0, j0 + n) through the block table (zeros for the positions n … TILE), and their
     * scales into acc[TILE + t].
     */
    private static void keysTransposed(byte[] indexKeys, float[] indexScales, int[] attnMeta, int table, int j0, int n, int dim,
                                       int blockSize, float[] kt, float[] acc) {
        for (int t = 0; t < n; t++) {
            int slot = blockSize == IN_ORDER ? j0 + t : CacheLayout.slot(attnMeta, table, j0 + t, blockSize), from = slot * dim;
            for (int d = 0; d < dim; d++) kt[d * TILE + t] = E4M3[indexKeys[from + d] & 0xFF];
            acc[TILE + t] = indexScales[slot];
        }
        if (n < TILE) {
            for (int d = 0; d < dim; d++) java.util.Arrays.fill(kt, d * TILE + n, d * TILE + TILE, 0f);
        }
    }

    /**
     * Every pair of heads h, h + 1 against positions [t, t + 4L) of the tile, in head order: acc[t…] +=
     * max(q_h·k, 0)·w_h, then += max(q_{h+1}·k, 0)·w_{h+1}; 8 accumulators, per d 4 loads, 2 broadcasts, 8 FMAs. The
     * loop over the pairs is in this method on purpose: where C2 inlined a 2-head kernel into the task's lambda, it
     * fell back to the Vector API's Java code for the FMAs and allocated a vector per FMA (3-4× slower); a method
     * this large is compiled on its own, as Gemm's micro-kernels are.
     */
    private static void pairs(float[] qf, float[] w, int w0, int heads, int dim, float[] kt, int t, float[] acc) {
        for (int h = 0; h + 2 <= heads; h += 2) {
            int qa = h * dim, qb = qa + dim;
            float wa = w[w0 + h], wb = w[w0 + h + 1];
            FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
            for (int d = 0; d < dim; d++) {
                int k = d * TILE + t;
                FloatVector k0 = FloatVector.fromArray(F, kt, k);
                FloatVector k1 = FloatVector.fromArray(F, kt, k + L);
                FloatVector k2 = FloatVector.fromArray(F, kt, k + 2 * L);
                FloatVector k3 = FloatVector.fromArray(F, kt, k + 3 * L);
                FloatVector x = FloatVector.broadcast(F, qf[qa + d]);
                a0 = k0.fma(x, a0); a1 = k1.fma(x, a1); a2 = k2.fma(x, a2); a3 = k3.fma(x, a3);
                FloatVector y = FloatVector.broadcast(F, qf[qb + d]);
                b0 = k0.fma(y, b0); b1 = k1.fma(y, b1); b2 = k2.fma(y, b2); b3 = k3.fma(y, b3);
            }
            addWeighted(acc, t, a0, wa, b0, wb);
            addWeighted(acc, t + L, a1, wa, b1, wb);
            addWeighted(acc, t + 2 * L, a2, wa, b2, wb);
            addWeighted(acc, t + 3 * L, a3, wa, b3, wb);
        }
    }

    /** One head (an odd head count's last) against positions [t, t + 4L). */
    private static void head1(float[] qf, int qa, int dim, float[] kt, int t, float wa, float[] acc) {
        FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0;
        for (int d = 0; d < dim; d++) {
            int k = d * TILE + t;
            FloatVector x = FloatVector.broadcast(F, qf[qa + d]);
            a0 = FloatVector.fromArray(F, kt, k).fma(x, a0);
            a1 = FloatVector.fromArray(F, kt, k + L).fma(x, a1);
            a2 = FloatVector.fromArray(F, kt, k + 2 * L).fma(x, a2);
            a3 = FloatVector.fromArray(F, kt, k + 3 * L).fma(x, a3);
        }
        FloatVector.fromArray(F, acc, t).add(a0.max(0f).mul(wa)).intoArray(acc, t);
        FloatVector.fromArray(F, acc, t + L).add(a1.max(0f).mul(wa)).intoArray(acc, t + L);
        FloatVector.fromArray(F, acc, t + 2 * L).add(a2.max(0f).mul(wa)).intoArray(acc, t + 2 * L);
        FloatVector.fromArray(F, acc, t + 3 * L).add(a3.max(0f).mul(wa)).intoArray(acc, t + 3 * L);
    }

    /** acc[at…] = (acc + max(a, 0)·wa) + max(b, 0)·wb: a multiply and an add each, as the reference rounds them. */
    private static void addWeighted(float[] acc, int at, FloatVector a, float wa, FloatVector b, float wb) {
        FloatVector s = FloatVector.fromArray(F, acc, at);
        s = s.add(a.max(0f).mul(wa));
        s = s.add(b.max(0f).mul(wb));
        s.intoArray(acc, at);
    }

    /**
     * {@link TopK#sortableKey} from the float's bits: the magnitude's bit pattern, negated for a negative sign
     * (−0 → 0), NaN one below −∞. Equal to the reference's for every float (FastIndexerTest).
     */
    static int sortableKey(float v) {
        if (v != v) return -(255 << 23) - 1;
        int bits = Float.floatToRawIntBits(v), mag = bits & 0x7FFFFFFF;
        return bits < 0 ? -mag : mag;
    }

    /**
     * Same arguments and results as {@link TopK#selectTopK}, exactly (the same set, ties to the lower position,
     * in increasing position order, −1 after): the reference's radix select, one row per task.
     */
    public static void selectTopK(float[] scores, int[] keys, int[] hist, int[] out, int[] attnMeta, int rows, int positions, int k, float[] pow2) {
        Parallel.forEach(rows, r -> selectRow(scores, keys, hist, out, attnMeta, r, positions, k));
    }

    private static void selectRow(float[] scores, int[] keys, int[] hist, int[] out, int[] attnMeta, int r, int positions, int k) {
        int visible = CacheLayout.metaRowPosition(attnMeta, r) + 1;
        int base = r * positions, hBase = r * TopK.BINS, o = r * k;
        if (visible <= k) {
            for (int t = 0; t < visible; t++) out[o + t] = t;
            java.util.Arrays.fill(out, o + Math.max(visible, 0), o + k, -1);
            return;
        }
        for (int t = 0; t < visible; t++) keys[base + t] = sortableKey(scores[base + t]) ^ 0x80000000;
        // MSB first: the digits of the k-th largest key, and how many equal to it still belong to the top k
        int prefix = 0, mask = 0, need = k;
        for (int shift = 24; shift >= 0; shift -= 8) {
            java.util.Arrays.fill(hist, hBase, hBase + TopK.BINS, 0);
            if (shift == 24) {
                for (int t = 0; t < visible; t++) hist[hBase + (keys[base + t] >>> 24)]++;
            } else {
                for (int t = 0; t < visible; t++) {
                    int u = keys[base + t];
                    if ((u & mask) == prefix) hist[hBase + ((u >>> shift) & 0xFF)]++;
                }
            }
            int digit = TopK.BINS - 1;
            while (hist[hBase + digit] < need) need -= hist[hBase + digit--];
            prefix |= digit << shift;
            mask |= 0xFF << shift;
        }
        // above the threshold: all; at it: the first `need` by position; in position order
        int equal = 0, taken = 0;
        for (int t = 0; t < visible; t++) {
            int u = keys[base + t];
            // unsigned comparison of the biased keys is the signed one of the keys
            boolean pick = Integer.compareUnsigned(u, prefix) > 0;
            if (u == prefix && equal < need) {
                pick = true;
                equal++;
            }
            if (pick) out[o + taken++] = t;
        }
        java.util.Arrays.fill(out, o + taken, o + k, -1);
    }
}
