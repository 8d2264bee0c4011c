package org.tornadomla.fast;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;

import static org.tornadomla.fast.Vec.F;
import static org.tornadomla.fast.Vec.L;

/**
 * java-fast's {@link org.tornadomla.kernels.Absorb}: W^UK into the query, W^UV after the weighted sum. At batch 1
 * each reads 8.4 M numbers of kv_b_proj for DeepSeek-V3 (33.5 MB in f32) for two FLOPs a number: bound by
 * memory bandwidth, so the point is to stream the weights at the machine's read rate and touch little else.
 *
 * <p>Versions (B1 H128, f32 weights; GB/s of weights read, one thread of a 2-core Zen 5 whose read rate is
 * 39.5 GB/s per thread by benchmarks/roofline):
 * <ol>
 *   <li>one task per head; absorb: an axpy per row of W^UK into q_lat (q_lat loaded and stored for every
 *   row); unabsorb: a dot product per row of W^UV: about 20 GB/s.</li>
 *   <li>absorb: q_lat in 8 vector registers per block of 8·L latent dims, every row of W^UK streamed into them;
 *   unabsorb: 4 rows of W^UV against one load of o_lat (4 accumulators).</li>
 *   <li>unabsorb: 8 rows against one load of o_lat, heads spread over both threads: absorb_q and unabsorb_v
 *   each read their 33.5 MB in 0.57-0.76 ms, 45-50 GB/s on 2 threads, at the measured read bandwidth
 *   (docs/benchmarks.md, "Where the time goes").</li>
 *   <li>absorb at one token row reads W^UK_h in memory order ({@link #absorbInOrder}).</li>
 *   <li>several token rows (a batch, a prefill): absorb_q as one product per head, [rows, d_n] × W^UK_h, through
 *   {@link Gemm#values}' register blocks, and unabsorb_v with each block of 8 rows of W^UV_h serving up to 32 token
 *   rows before the next; each head's weights read from memory once, in order ({@link Vec#touch}), where before
 *   every token row streamed them again. Both threads of a 2-core Xeon (AVX-512), 128 heads, f32, a stand-alone
 *   loop of the two kernels, best of 5-200 runs, before → after: 8 rows absorb_q 2.17 → 1.25-1.32 ms, unabsorb_v
 *   1.89-1.92 → 1.64-1.80 ms; 1024 rows absorb_q 233 → 124-131 ms (74 → 135 GFLOP/s), unabsorb_v 200-208 → 146
 *   ms (83 → 118 GFLOP/s). The one-row paths are unchanged.</li>
 *   <li>absorb at one token row: W^UK_h touched in order (one number per line, {@link Vec#touch}) before the pass
 *   that adds it into q_lat, where {@link Vec#TOUCH} is on (an AMD CPU). The pass loads and stores q_lat between
 *   every two weight vectors and kept fewer lines in flight than the touch does. 2-vCPU AMD EPYC Zen 4 (family 25,
 *   model 17), B1 H128: a stand-alone loop of both threads over 33.5 MB, the cache flushed between runs, medians of
 *   four runs 2.09–2.27 → 1.76–1.98 ms; absorb_q in {@code ./mla bench --breakdown}, three alternating pairs, 2.01–2.10 →
 *   1.32–1.61 ms (2026-12-04). The same touch before unabsorb_v's one row gained about 3 %, within the noise, so it
 *   was left out until 2026-12-08 (the last entry). Not measured on an Intel CPU, where the touch stays off.</li>
 *   <li>absorb at one token row on an AMD Zen 5: 8 vectors of q_lat held in registers while W^UK_h streams past in
 *   strips of 8 vectors ({@link #absorbStrips}, version 2's order), no touch, where {@link #STRIPS} says so. On
 *   the Zen 5 the strips keep more lines in flight than the in-order pass, which loads and stores q_lat between every
 *   two weight vectors. 2-vCPU Zen 5 (family 26, model 2), 2026-12-05, absorb_q in {@code ./mla bench --breakdown},
 *   the four orders alternating, three rounds: B1 H128 T4096 in order after the touch 0.78–0.92 ms, strips
 *   0.60–0.66, in order without the touch 0.70–0.90, strips after the touch 0.69–0.79; three more pairs at T16384:
 *   H128 0.90–1.07 → 0.63–0.88, H16 0.109–0.125 → 0.083–0.086 ms. The bits do not change.</li>
 *   <li>unabsorb_v of several token rows with 32 registers: blocks of 4 token rows against 4 rows of W^UV_h ({@link
 *   #unabsorb4x4}: 16 accumulators, 8 loads per 16 FMAs) instead of one token row against 8 rows of W^UV_h (9 loads
 *   per 8 FMAs); the rows left over go as before. 2-vCPU Zen 5, 2026-12-06, the two alternating every 6 steps in one
 *   JVM: unabsorb_v at B8 H128 T4096 1.73 → 1.23 ms (absorbed path) and 1.80 → 1.27 (tiled), B4 1.21 → 0.92. Each
 *   output is the same sum, in the same order, as before (its last bits still depend, as before, on whether C2 or the
 *   interpreter took the final lane sum). With 16 registers (AVX2), 2 token rows against 4 W rows (6 loads per
 *   8 FMAs) measured 2.32 → 2.22 ms at B8 and level at B4 on the same Zen 5 held to AVX2 (-XX:UseAVX=2), and was left
 *   out.</li>
 *   <li>unabsorb_v at one token row: W^UV_h touched in order first, as absorb_q's row is, where {@link Vec#TOUCH} is
 *   on and absorb_q's row is not in strips (an AMD CPU other than a Zen 5: the Zen 5's strips measured faster without a
 *   touch, and its unabsorb_v is not measured with one). 2-vCPU Zen 4 (family 25, model 17), 2026-12-08, {@code ./mla
 *   bench --breakdown} B1 H128 T4096, six alternating pairs of JVMs (a throwaway switch): absorbed path unabsorb_v
 *   1.31, 1.42, 1.38, 1.30, 1.47, 1.56 → 1.09, 1.26, 1.35, 1.19, 1.33, 1.53 ms, the step faster in all six; tiled path
 *   1.35, 1.36, 1.54 → 1.27, 1.14, 1.44. (On 12-04 the same touch had measured about 3 % faster and was left out.) The
 *   bits do not change.</li>
 * </ol>
 */
public final class FastAbsorb {
    private FastAbsorb() {
    }

    /**
     * Whether absorb_q at one token row streams W^UK_h past 8 vectors of q_lat held in registers ({@link
     * #absorbStrips}) rather than reading it in memory order into q_lat ({@link #absorbInOrder}): on an AMD Zen 5 (cpu
     * family 26), where the strips measured 20–30 % faster (version 7). The Zen 3 measured the other way (version 4),
     * and the Zen 4 and the Intel Xeon were not measured with them. Where it is off and tiles are touched ({@link
     * Vec#TOUCH}), unabsorb_v's one row touches W^UV_h first too (version 9): the choice is how one token row streams a
     * head's weights. {@code -Dtornadomla.fast.absorbStrips=true|false}
     * overrides it, and {@code mla tune} may have measured it ({@link KernelChoices}).
     */
    static final boolean STRIPS = KernelChoices.choice("tornadomla.fast.absorbStrips", KernelChoices.autoAbsorbStrips());

    /** q_lat[r, h, c] = Σ_d W^UK_h[d, c]·q_nope[r, h, d] ({@link org.tornadomla.kernels.Absorb#absorbQuery}). */
    public static void absorbQuery(float[] q, float[] wkvB, float[] qLat, int rows, int heads, int dn, int dr, int dv, int dc) {
        Parallel.forEach(heads, h -> {
            int w0 = h * (dn + dv) * dc;
            // one token row: W^UK_h read once in order before the pass that adds it into q_lat (version 6), not before
            // the strips (version 7); with several rows absorbQueryHead touches it itself
            if (rows == 1 && Vec.TOUCH && !oneRowInStrips(dc)) Vec.touch(wkvB, w0, w0 + dn * dc);
            absorbQueryHead(q, wkvB, w0, qLat, rows, heads, h, dn, dr, dc);
        });
    }

    /**
     * Head h of {@link #absorbQuery} with W^UK_h's first row at wkvB[w0]: also run by {@link WeightKernels} on a
     * head of bf16 or FP8 weights decoded into a buffer, so that they give what f32 weights give.
     */
    static void absorbQueryHead(float[] q, float[] wkvB, int w0, float[] qLat, int rows, int heads, int h, int dn, int dr, int dc) {
        if (rows == 1 && oneRowInStrips(dc)) {
            absorbStrips(q, wkvB, w0, qLat, h * (dn + dr), h * dc, dn, dc);
            return;
        }
        if (rows == 1 && dc % L == 0) {
            absorbInOrder(q, wkvB, w0, qLat, h * (dn + dr), h * dc, dn, dc);
            return;
        }
        // several token rows: the product [rows, d_n] × W^UK_h [d_n, d_c] as Gemm's values blocks (token rows in
        // place of heads, W^UK_h's rows in place of cached rows), W^UK_h read from memory once, in order, into L2
        // (version 5); the sums run over d in the same order with the same FMAs as the single row's
        // touched on every machine: each 64-column block of W^UK_h meets one block of token rows and is not read again,
        // and without the touch absorb_q at 8 rows took 2.9–3.9 ms instead of 1.8–2.0 on a Xeon (Vec.TOUCH's runs)
        Vec.touch(wkvB, w0, w0 + dn * dc);
        for (int r = 0; r < rows; r++) java.util.Arrays.fill(qLat, (r * heads + h) * dc, (r * heads + h + 1) * dc, 0f);
        Gemm.values(q, h * (dn + dr), heads * (dn + dr), 1, rows, wkvB, w0, dc, dn, 0, dc, qLat, h * dc, heads * dc);
    }

    /** Whether one token row's absorb_q runs {@link #absorbStrips}: where {@link #STRIPS} says so and d_c is whole strips. */
    private static boolean oneRowInStrips(int dc) {
        return STRIPS && dc % (8 * L) == 0;
    }

    /**
     * {@link #absorbQueryHead} of a single token row, W^UK_h in strips of 8 vectors of latent dims (d_c a multiple of
     * 8·L): q_lat's 8 vectors stay in registers while the strip's d_n rows stream past, 8 weight vectors per broadcast
     * of q_nope and nothing stored until the strip ends (version 7). The same sums in the same order as the other
     * orders: the same bits. q_nope from q[qo], q_lat into qLat[out].
     */
    static void absorbStrips(float[] q, float[] wkvB, int w0, float[] qLat, int qo, int out, int dn, int dc) {
        for (int c = 0; c < dc; c += 8 * L) {
            FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
            for (int d = 0; d < dn; d++) {
                FloatVector b = FloatVector.broadcast(F, q[qo + d]);
                int wr = w0 + d * dc + c;
                a0 = FloatVector.fromArray(F, wkvB, wr).fma(b, a0);
                a1 = FloatVector.fromArray(F, wkvB, wr + L).fma(b, a1);
                a2 = FloatVector.fromArray(F, wkvB, wr + 2 * L).fma(b, a2);
                a3 = FloatVector.fromArray(F, wkvB, wr + 3 * L).fma(b, a3);
                a4 = FloatVector.fromArray(F, wkvB, wr + 4 * L).fma(b, a4);
                a5 = FloatVector.fromArray(F, wkvB, wr + 5 * L).fma(b, a5);
                a6 = FloatVector.fromArray(F, wkvB, wr + 6 * L).fma(b, a6);
                a7 = FloatVector.fromArray(F, wkvB, wr + 7 * L).fma(b, a7);
            }
            a0.intoArray(qLat, out + c);
            a1.intoArray(qLat, out + c + L);
            a2.intoArray(qLat, out + c + 2 * L);
            a3.intoArray(qLat, out + c + 3 * L);
            a4.intoArray(qLat, out + c + 4 * L);
            a5.intoArray(qLat, out + c + 5 * L);
            a6.intoArray(qLat, out + c + 6 * L);
            a7.intoArray(qLat, out + c + 7 * L);
        }
    }

    /**
     * {@link #absorbQueryHead} of a single token row, reading W^UK_h in memory order (version 4): two rows of it at a
     * time added into q_lat (d_c numbers, in L1), so the weights stream as one sequential read instead of 64-column
     * strips 2 KB apart. The sums run over d in the same order with the same FMAs: the same bits as the blocks.
     * With one token row the read of the weights is the whole cost (B1 H128, 2-core Zen 3, absorb_q 3.7-5.4 →
     * 3.05-3.14 ms in alternating runs); with 8 rows this order, a load and store of q_lat per FMA, was 1.7× slower.
     * q_nope from q[qo], q_lat into qLat[out].
     */
    static void absorbInOrder(float[] q, float[] wkvB, int w0, float[] qLat, int qo, int out, int dn, int dc) {
        java.util.Arrays.fill(qLat, out, out + dc, 0f);
        int d = 0;
        for (; d + 2 <= dn; d += 2) {
            int wa = w0 + d * dc, wb = wa + dc;
            FloatVector ba = FloatVector.broadcast(F, q[qo + d]), bb = FloatVector.broadcast(F, q[qo + d + 1]);
            for (int c = 0; c < dc; c += L) {
                FloatVector acc = FloatVector.fromArray(F, qLat, out + c);
                acc = FloatVector.fromArray(F, wkvB, wa + c).fma(ba, acc);
                FloatVector.fromArray(F, wkvB, wb + c).fma(bb, acc).intoArray(qLat, out + c);
            }
        }
        if (d < dn) Vec.axpy(q[qo + d], wkvB, w0 + d * dc, qLat, out, dc);
    }

    /** o[r, h, v] = Σ_c W^UV_h[v, c]·o_lat[r, h, c] ({@link org.tornadomla.kernels.Absorb#unabsorbValue}). */
    public static void unabsorbValue(float[] oLat, float[] wkvB, float[] o, int rows, int heads, int dn, int dv, int dc) {
        Parallel.forEach(heads, h -> {
            int w0 = (h * (dn + dv) + dn) * dc;
            // one token row: W^UV_h read once in order first, as absorb_q's row is (version 9); with several rows
            // unabsorbValueHead touches it itself
            if (rows == 1 && Vec.TOUCH && !oneRowInStrips(dc)) Vec.touch(wkvB, w0, w0 + dv * dc);
            unabsorbValueHead(oLat, wkvB, w0, o, rows, heads, h, dv, dc);
        });
    }

    /** Head h of {@link #unabsorbValue} with W^UV_h's first row at wkvB[w0] (see {@link #absorbQueryHead}). */
    static void unabsorbValueHead(float[] oLat, float[] wkvB, int w0, float[] o, int rows, int heads, int h, int dv, int dc) {
        // with several token rows W^UV_h is read from memory once, in order, and each block of 8 of its rows (16 KB,
        // in L1) serves a block of up to ROWS token rows (o_lat 64 KB, in L2) before the next (version 5); each
        // output the same sum as with one row
        // (not touched first on an Intel CPU, Vec.TOUCH: its 8 rows are 8 sequential streams, B8 2.2–2.4 → 1.8–2.1 ms)
        if (rows > 1 && Vec.TOUCH) Vec.touch(wkvB, w0, w0 + dv * dc);
        for (int r0 = 0; r0 < rows; r0 += ROWS) unabsorbRows(oLat, wkvB, w0, o, r0, Math.min(rows, r0 + ROWS), heads, h, dv, dc);
    }

    /**
     * Outputs v … v + 3 of token rows r … r + 3 (head h), W^UV_h's row v at wkvB[wr]: 16 accumulators, each W row
     * loaded once for 4 token rows, 8 loads per 16 FMAs where one row against 8 W rows takes 9 per 8. Each output the
     * same sum as there: its lanes over c in order from 0, then reduceLanes.
     */
    private static void unabsorb4x4(float[] oLat, float[] wkvB, int wr, float[] o, int r, int heads, int h, int v, int dv, int dc) {
        int x0 = (r * heads + h) * dc, x1 = x0 + heads * dc, x2 = x1 + heads * dc, x3 = x2 + heads * dc;
        FloatVector a00 = FloatVector.zero(F), a01 = a00, a02 = a00, a03 = a00, a10 = a00, a11 = a00, a12 = a00, a13 = a00;
        FloatVector a20 = a00, a21 = a00, a22 = a00, a23 = a00, a30 = a00, a31 = a00, a32 = a00, a33 = a00;
        for (int c = 0; c < dc; c += L) {
            FloatVector y0 = FloatVector.fromArray(F, oLat, x0 + c), y1 = FloatVector.fromArray(F, oLat, x1 + c);
            FloatVector y2 = FloatVector.fromArray(F, oLat, x2 + c), y3 = FloatVector.fromArray(F, oLat, x3 + c);
            FloatVector w = FloatVector.fromArray(F, wkvB, wr + c);
            a00 = w.fma(y0, a00); a10 = w.fma(y1, a10); a20 = w.fma(y2, a20); a30 = w.fma(y3, a30);
            w = FloatVector.fromArray(F, wkvB, wr + dc + c);
            a01 = w.fma(y0, a01); a11 = w.fma(y1, a11); a21 = w.fma(y2, a21); a31 = w.fma(y3, a31);
            w = FloatVector.fromArray(F, wkvB, wr + 2 * dc + c);
            a02 = w.fma(y0, a02); a12 = w.fma(y1, a12); a22 = w.fma(y2, a22); a32 = w.fma(y3, a32);
            w = FloatVector.fromArray(F, wkvB, wr + 3 * dc + c);
            a03 = w.fma(y0, a03); a13 = w.fma(y1, a13); a23 = w.fma(y2, a23); a33 = w.fma(y3, a33);
        }
        int o0 = (r * heads + h) * dv + v, step = heads * dv;
        store4(o, o0, a00, a01, a02, a03);
        store4(o, o0 + step, a10, a11, a12, a13);
        store4(o, o0 + 2 * step, a20, a21, a22, a23);
        store4(o, o0 + 3 * step, a30, a31, a32, a33);
    }

    private static void store4(float[] o, int at, FloatVector a, FloatVector b, FloatVector c, FloatVector d) {
        o[at] = a.reduceLanes(VectorOperators.ADD);
        o[at + 1] = b.reduceLanes(VectorOperators.ADD);
        o[at + 2] = c.reduceLanes(VectorOperators.ADD);
        o[at + 3] = d.reduceLanes(VectorOperators.ADD);
    }

    /** Token rows of a block of unabsorb_v's: up to 32 (2 KB of o_lat each, in L2 with W^UV_h). */
    private static final int ROWS = 32;

    /** {@link #unabsorbValueHead} for token rows [r0, r1). */
    private static void unabsorbRows(float[] oLat, float[] wkvB, int w0, float[] o, int r0, int r1, int heads, int h, int dv, int dc) {
        // with 32 registers, token rows in blocks of 4 against 4 rows of W^UV_h (version 8); the rows left over one at a time
        if (Gemm.REGS32 && dc % L == 0 && dv % 4 == 0 && r1 - r0 >= 4) {
            int r4 = r0 + (r1 - r0) / 4 * 4;
            for (int v = 0; v < dv; v += 4) {
                for (int r = r0; r < r4; r += 4) unabsorb4x4(oLat, wkvB, w0 + v * dc, o, r, heads, h, v, dv, dc);
            }
            r0 = r4;
            if (r0 == r1) return;
        }
        int v = 0;
        for (; v + 8 <= dv && dc % L == 0; v += 8) {
            int wr = w0 + v * dc;
            for (int r = r0; r < r1; r++) {
                // 8 rows of W^UV_h against one load of o_lat: 8 streams of weights in flight, 9 loads per 8 FMAs
                int rh = r * heads + h, x = rh * dc;
                FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
                for (int c = 0; c < dc; c += L) {
                    FloatVector xv = FloatVector.fromArray(F, oLat, x + c);
                    a0 = FloatVector.fromArray(F, wkvB, wr + c).fma(xv, a0);
                    a1 = FloatVector.fromArray(F, wkvB, wr + dc + c).fma(xv, a1);
                    a2 = FloatVector.fromArray(F, wkvB, wr + 2 * dc + c).fma(xv, a2);
                    a3 = FloatVector.fromArray(F, wkvB, wr + 3 * dc + c).fma(xv, a3);
                    a4 = FloatVector.fromArray(F, wkvB, wr + 4 * dc + c).fma(xv, a4);
                    a5 = FloatVector.fromArray(F, wkvB, wr + 5 * dc + c).fma(xv, a5);
                    a6 = FloatVector.fromArray(F, wkvB, wr + 6 * dc + c).fma(xv, a6);
                    a7 = FloatVector.fromArray(F, wkvB, wr + 7 * dc + c).fma(xv, a7);
                }
                int out = rh * dv + v;
                o[out] = a0.reduceLanes(VectorOperators.ADD);
                o[out + 1] = a1.reduceLanes(VectorOperators.ADD);
                o[out + 2] = a2.reduceLanes(VectorOperators.ADD);
                o[out + 3] = a3.reduceLanes(VectorOperators.ADD);
                o[out + 4] = a4.reduceLanes(VectorOperators.ADD);
                o[out + 5] = a5.reduceLanes(VectorOperators.ADD);
                o[out + 6] = a6.reduceLanes(VectorOperators.ADD);
                o[out + 7] = a7.reduceLanes(VectorOperators.ADD);
            }
        }
        for (; v < dv; v++) {
            for (int r = r0; r < r1; r++) {
                int rh = r * heads + h;
                o[rh * dv + v] = Vec.dot(wkvB, w0 + v * dc, oLat, rh * dc, dc);
            }
        }
    }
}
