package org.tornadomla.fast;

import jdk.incubator.vector.FloatVector;

import static org.tornadomla.fast.Vec.F;
import static org.tornadomla.fast.Vec.L;

/**
 * y = x·Wᵀ (W [out, in]) for many token rows at once: a prefill, a chunk, a batch of decodes. A projection of
 * one row is a stream of its weights (bandwidth-bound, {@link FastProjections#matVec}); from
 * {@link #MIN_ROWS} rows on ({@link #MIN_ROWS_COMPACT} for bf16 and FP8 weights) each weight is worth reusing
 * from registers, so the product is blocked like the attention core's ({@link Gemm}):
 * <ul>
 *   <li>each task owns up to {@link #GROUP} blocks of {@link #NB} output columns (3 vectors) and walks the input
 *   dimension in chunks of {@link #KC}; a chunk of Wᵀ is packed once per block, [KC][NB] (48 KB), decoded from
 *   bf16 or FP8 on the way for compact weights ({@link Packer}), zero-padded past the last column; then
 *   {@link #MC} token rows at a time run against every packed block, so a block of x is read from memory once
 *   per task, not once per output block;</li>
 *   <li>the micro-kernel holds 8 token rows × 3 vectors of outputs in 24 accumulators: per input column 3 loads
 *   of packed Wᵀ and 8 broadcasts of x feed 24 fused multiply-adds;</li>
 *   <li>partial sums over the chunks live in a per-task tile [rows][NB] and reach y once, at the end.</li>
 * </ul>
 * Each output is one fused multiply-add chain over the input in order, so f32 weights and their bf16 or FP8
 * forms decoded exactly give the same bits.
 *
 * <p>Versions (the mixed continuous-batching step, docs/benchmarks.md): 1. a vector dot product per (token
 * row, output) with one accumulator ({@code FastProjections.matMul} and {@code WeightKernels.matMul…} before):
 * o_proj [7168, 16384] in FP8 at 30 GFLOP/s for 512 token rows. 2. this blocking (figures in docs/benchmarks.md).
 * 3. with 16 registers 3 token rows × 3 vectors (p3x3) in place of p8x3, which spilled there: a 2-vCPU Zen 5 held to
 * AVX2 ({@code -XX:UseAVX=2}), 256 rows × 1536 inputs → 6144 outputs, both threads, alternating in one JVM: p8x3
 * 71–102 GFLOP/s, p3x3 114–128 (AVX2 FMA peak about 200); 4 × 3 (12 accumulators) spilled too, 81–84.
 */
final class ProjectionGemm {
    private ProjectionGemm() {
    }

    /**
     * Token rows from which the blocked product is used for f32 weights; below, each weight row is streamed
     * against each token row. Measured on 2 Zen 5 cores (o_proj [7168, 16384], q_b_proj [24576, 1536],
     * kv_a_proj [576, 7168]): at 8 rows the streaming kernels win on the two large matrices (37.6 against 44.0
     * ms for o_proj), at 16 the blocked one (49 against 71 ms), and at 64 by 3× (88 against 276 ms).
     */
    static final int MIN_ROWS = 16;
    /**
     * The same for bf16 and FP8 weights, whose streaming kernels read 2 or 1 bytes a weight where packing
     * writes and reads 4: o_proj in FP8 took 66 against 68 ms at 32 rows, 88 against 132 at 64, but 48 against
     * 20 at 8.
     */
    static final int MIN_ROWS_COMPACT = 32;
    /** Output columns per task: 3 vectors. */
    static final int NB = 3 * L;
    /** Input columns per packed chunk of Wᵀ. */
    static final int KC = 256;

    /** Writes Wᵀ[k0 … k0 + kc) × [o0 … o0 + nb) into packed[p0 + i·NB + o], i &lt; kc, o &lt; nb (the caller zeroes o ≥ nb). */
    interface Packer {
        void pack(int o0, int nb, int k0, int kc, float[] packed, int p0);
    }

    /** Output blocks per task at most: their packed chunks of Wᵀ (8 × 48 KB) share the L2 with a block of x. */
    static final int GROUP = 8;
    /** Token rows per pass over a task's packed chunks: MC × KC floats of x (128 KB) stay in L2 for all of them. */
    static final int MC = 128;

    private static final ThreadLocal<float[]> PACKED = ThreadLocal.withInitial(() -> new float[0]);
    private static final ThreadLocal<float[]> TILE = ThreadLocal.withInitial(() -> new float[0]);

    /** y[r, o] = Σ_i x[r, i]·W[o, i], r &lt; rows, o &lt; out, W given by {@code packer}. */
    static void multiply(Packer packer, float[] x, float[] y, int rows, int in, int out) {
        multiply(packer, x, y, rows, in, out, Gemm.REGS32);
    }

    /**
     * {@link #multiply} with the register file's micro-kernel given (tests run both on every machine): with 32
     * registers 8 token rows × 3 vectors (p8x3), with 16 3 × 3 (p3x3: 9 accumulators, + 3 of Wᵀ and 3 broadcasts).
     * p8x3 with 16 registers kept 8 of its 24 accumulators on the stack, a reload and a store around their FMAs.
     */
    static void multiply(Packer packer, float[] x, float[] y, int rows, int in, int out, boolean regs32) {
        int mr = regs32 ? 8 : 3;
        int blocks = (out + NB - 1) / NB;
        // as many output blocks per task as keep every thread busy with two tasks or more, up to GROUP: the
        // fewer tasks, the fewer times x is read from memory (once per task)
        int group = Math.max(1, Math.min(GROUP, blocks / (2 * Parallel.threads())));
        Parallel.forEach((blocks + group - 1) / group, task -> {
            int b0 = task * group, nbk = Math.min(blocks, b0 + group) - b0, tw = nbk * NB;
            float[] packed = Vec.scratch(PACKED, group * KC * NB);
            float[] tile = Vec.scratch(TILE, rows * tw);
            for (int k0 = 0; k0 < in; k0 += KC) {
                int kc = Math.min(KC, in - k0);
                for (int g = 0; g < nbk; g++) {
                    int o0 = (b0 + g) * NB, nb = Math.min(NB, out - o0), p0 = g * KC * NB;
                    if (nb < NB) java.util.Arrays.fill(packed, p0, p0 + KC * NB, 0f);
                    packer.pack(o0, nb, k0, kc, packed, p0);
                }
                boolean first = k0 == 0;
                for (int r0 = 0; r0 < rows; r0 += MC) {
                    int r1 = Math.min(rows, r0 + MC);
                    for (int g = 0; g < nbk; g++) {
                        int p0 = g * KC * NB, r = r0;
                        for (; r + mr <= r1; r += mr) {
                            if (regs32) p8x3(packed, p0, kc, x, r * in + k0, in, tile, r * tw + g * NB, tw, first);
                            else p3x3(packed, p0, kc, x, r * in + k0, in, tile, r * tw + g * NB, tw, first);
                        }
                        for (; r < r1; r++) p1x3(packed, p0, kc, x, r * in + k0, tile, r * tw + g * NB, first);
                    }
                }
            }
            int o0 = b0 * NB, n = Math.min(out - o0, tw);
            for (int r = 0; r < rows; r++) System.arraycopy(tile, r * tw, y, r * out + o0, n);
        });
    }

    /** The packer of an f32 W [out, in]. */
    static Packer f32(float[] w, int in) {
        return (o0, nb, k0, kc, packed, p0) -> {
            for (int o = 0; o < nb; o++) {
                int from = (o0 + o) * in + k0;
                for (int i = 0; i < kc; i++) packed[p0 + i * NB + o] = w[from + i];
            }
        };
    }

    /** 8 token rows × 3 output vectors over kc input columns, added to (or, first, stored in) the tile. */
    private static void p8x3(float[] p, int p0, int kc, float[] x, int x0, int in, float[] t, int t0, int ts, boolean first) {
        FloatVector z = FloatVector.zero(F);
        FloatVector a00 = first ? z : FloatVector.fromArray(F, t, t0), a01 = first ? z : FloatVector.fromArray(F, t, t0 + L), a02 = first ? z : FloatVector.fromArray(F, t, t0 + 2 * L);
        FloatVector a10 = first ? z : FloatVector.fromArray(F, t, t0 + ts), a11 = first ? z : FloatVector.fromArray(F, t, t0 + ts + L), a12 = first ? z : FloatVector.fromArray(F, t, t0 + ts + 2 * L);
        FloatVector a20 = first ? z : FloatVector.fromArray(F, t, t0 + 2 * ts), a21 = first ? z : FloatVector.fromArray(F, t, t0 + 2 * ts + L), a22 = first ? z : FloatVector.fromArray(F, t, t0 + 2 * ts + 2 * L);
        FloatVector a30 = first ? z : FloatVector.fromArray(F, t, t0 + 3 * ts), a31 = first ? z : FloatVector.fromArray(F, t, t0 + 3 * ts + L), a32 = first ? z : FloatVector.fromArray(F, t, t0 + 3 * ts + 2 * L);
        FloatVector a40 = first ? z : FloatVector.fromArray(F, t, t0 + 4 * ts), a41 = first ? z : FloatVector.fromArray(F, t, t0 + 4 * ts + L), a42 = first ? z : FloatVector.fromArray(F, t, t0 + 4 * ts + 2 * L);
        FloatVector a50 = first ? z : FloatVector.fromArray(F, t, t0 + 5 * ts), a51 = first ? z : FloatVector.fromArray(F, t, t0 + 5 * ts + L), a52 = first ? z : FloatVector.fromArray(F, t, t0 + 5 * ts + 2 * L);
        FloatVector a60 = first ? z : FloatVector.fromArray(F, t, t0 + 6 * ts), a61 = first ? z : FloatVector.fromArray(F, t, t0 + 6 * ts + L), a62 = first ? z : FloatVector.fromArray(F, t, t0 + 6 * ts + 2 * L);
        FloatVector a70 = first ? z : FloatVector.fromArray(F, t, t0 + 7 * ts), a71 = first ? z : FloatVector.fromArray(F, t, t0 + 7 * ts + L), a72 = first ? z : FloatVector.fromArray(F, t, t0 + 7 * ts + 2 * L);
        for (int i = 0; i < kc; i++) {
            int q = p0 + i * NB, xi = x0 + i;
            FloatVector w0 = FloatVector.fromArray(F, p, q), w1 = FloatVector.fromArray(F, p, q + L), w2 = FloatVector.fromArray(F, p, q + 2 * L);
            FloatVector b0 = FloatVector.broadcast(F, x[xi]);
            a00 = w0.fma(b0, a00); a01 = w1.fma(b0, a01); a02 = w2.fma(b0, a02);
            FloatVector b1 = FloatVector.broadcast(F, x[xi + in]);
            a10 = w0.fma(b1, a10); a11 = w1.fma(b1, a11); a12 = w2.fma(b1, a12);
            FloatVector b2 = FloatVector.broadcast(F, x[xi + 2 * in]);
            a20 = w0.fma(b2, a20); a21 = w1.fma(b2, a21); a22 = w2.fma(b2, a22);
            FloatVector b3 = FloatVector.broadcast(F, x[xi + 3 * in]);
            a30 = w0.fma(b3, a30); a31 = w1.fma(b3, a31); a32 = w2.fma(b3, a32);
            FloatVector b4 = FloatVector.broadcast(F, x[xi + 4 * in]);
            a40 = w0.fma(b4, a40); a41 = w1.fma(b4, a41); a42 = w2.fma(b4, a42);
            FloatVector b5 = FloatVector.broadcast(F, x[xi + 5 * in]);
            a50 = w0.fma(b5, a50); a51 = w1.fma(b5, a51); a52 = w2.fma(b5, a52);
            FloatVector b6 = FloatVector.broadcast(F, x[xi + 6 * in]);
            a60 = w0.fma(b6, a60); a61 = w1.fma(b6, a61); a62 = w2.fma(b6, a62);
            FloatVector b7 = FloatVector.broadcast(F, x[xi + 7 * in]);
            a70 = w0.fma(b7, a70); a71 = w1.fma(b7, a71); a72 = w2.fma(b7, a72);
        }
        a00.intoArray(t, t0); a01.intoArray(t, t0 + L); a02.intoArray(t, t0 + 2 * L);
        a10.intoArray(t, t0 + ts); a11.intoArray(t, t0 + ts + L); a12.intoArray(t, t0 + ts + 2 * L);
        a20.intoArray(t, t0 + 2 * ts); a21.intoArray(t, t0 + 2 * ts + L); a22.intoArray(t, t0 + 2 * ts + 2 * L);
        a30.intoArray(t, t0 + 3 * ts); a31.intoArray(t, t0 + 3 * ts + L); a32.intoArray(t, t0 + 3 * ts + 2 * L);
        a40.intoArray(t, t0 + 4 * ts); a41.intoArray(t, t0 + 4 * ts + L); a42.intoArray(t, t0 + 4 * ts + 2 * L);
        a50.intoArray(t, t0 + 5 * ts); a51.intoArray(t, t0 + 5 * ts + L); a52.intoArray(t, t0 + 5 * ts + 2 * L);
        a60.intoArray(t, t0 + 6 * ts); a61.intoArray(t, t0 + 6 * ts + L); a62.intoArray(t, t0 + 6 * ts + 2 * L);
        a70.intoArray(t, t0 + 7 * ts); a71.intoArray(t, t0 + 7 * ts + L); a72.intoArray(t, t0 + 7 * ts + 2 * L);
    }

    /** 3 token rows × 3 output vectors (16 registers), as {@link #p8x3}. */
    private static void p3x3(float[] p, int p0, int kc, float[] x, int x0, int in, float[] t, int t0, int ts, boolean first) {
        FloatVector z = FloatVector.zero(F);
        FloatVector a00 = first ? z : FloatVector.fromArray(F, t, t0), a01 = first ? z : FloatVector.fromArray(F, t, t0 + L), a02 = first ? z : FloatVector.fromArray(F, t, t0 + 2 * L);
        FloatVector a10 = first ? z : FloatVector.fromArray(F, t, t0 + ts), a11 = first ? z : FloatVector.fromArray(F, t, t0 + ts + L), a12 = first ? z : FloatVector.fromArray(F, t, t0 + ts + 2 * L);
        FloatVector a20 = first ? z : FloatVector.fromArray(F, t, t0 + 2 * ts), a21 = first ? z : FloatVector.fromArray(F, t, t0 + 2 * ts + L), a22 = first ? z : FloatVector.fromArray(F, t, t0 + 2 * ts + 2 * L);
        for (int i = 0; i < kc; i++) {
            int q = p0 + i * NB, xi = x0 + i;
            FloatVector w0 = FloatVector.fromArray(F, p, q), w1 = FloatVector.fromArray(F, p, q + L), w2 = FloatVector.fromArray(F, p, q + 2 * L);
            FloatVector b0 = FloatVector.broadcast(F, x[xi]);
            a00 = w0.fma(b0, a00); a01 = w1.fma(b0, a01); a02 = w2.fma(b0, a02);
            FloatVector b1 = FloatVector.broadcast(F, x[xi + in]);
            a10 = w0.fma(b1, a10); a11 = w1.fma(b1, a11); a12 = w2.fma(b1, a12);
            FloatVector b2 = FloatVector.broadcast(F, x[xi + 2 * in]);
            a20 = w0.fma(b2, a20); a21 = w1.fma(b2, a21); a22 = w2.fma(b2, a22);
        }
        a00.intoArray(t, t0); a01.intoArray(t, t0 + L); a02.intoArray(t, t0 + 2 * L);
        a10.intoArray(t, t0 + ts); a11.intoArray(t, t0 + ts + L); a12.intoArray(t, t0 + ts + 2 * L);
        a20.intoArray(t, t0 + 2 * ts); a21.intoArray(t, t0 + 2 * ts + L); a22.intoArray(t, t0 + 2 * ts + 2 * L);
    }

    /** One token row × 3 output vectors (the rows left over by the blocks). */
    private static void p1x3(float[] p, int p0, int kc, float[] x, int x0, float[] t, int t0, boolean first) {
        FloatVector z = FloatVector.zero(F);
        FloatVector a0 = first ? z : FloatVector.fromArray(F, t, t0), a1 = first ? z : FloatVector.fromArray(F, t, t0 + L);
        FloatVector a2 = first ? z : FloatVector.fromArray(F, t, t0 + 2 * L);
        for (int i = 0; i < kc; i++) {
            int q = p0 + i * NB;
            FloatVector b = FloatVector.broadcast(F, x[x0 + i]);
            a0 = FloatVector.fromArray(F, p, q).fma(b, a0);
            a1 = FloatVector.fromArray(F, p, q + L).fma(b, a1);
            a2 = FloatVector.fromArray(F, p, q + 2 * L).fma(b, a2);
        }
        a0.intoArray(t, t0);
        a1.intoArray(t, t0 + L);
        a2.intoArray(t, t0 + 2 * L);
    }
}
