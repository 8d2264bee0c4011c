package org.tornadomla.fast;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.LongVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorShuffle;

import static jdk.incubator.vector.VectorOperators.FMA;

import static org.tornadomla.fast.Vec.F;
import static org.tornadomla.fast.Vec.L;

/**
 * The two matrix products of the attention core over a tile of cached latent rows, as register-blocked
 * micro-kernels (BLIS style: a block of the output stays in vector registers while the shared dimension
 * streams through). Every head of a sequence attends over the same latent rows, so both are true GEMMs.
 *
 * <ul>
 *   <li>{@link #scores}: Sᵀ[j, h] = Σ_c Qᵀ[c, h]·K[j, c] over the d_c + d_r columns. Q is packed transposed
 *   once per step (c-major, heads padded to a multiple of the vector length), so a vector holds L heads and
 *   a cached number is broadcast: no transposition of the cache and no horizontal sums. The scores come out
 *   row-major per cached token (Sᵀ), which is also what the online softmax wants (the max over tokens of L
 *   heads is one vector max).</li>
 *   <li>{@link #values}: O[h, c] += Σ_j P(h, j)·K[j, c] over the tile's rows, c &lt; d_c: a vector holds L latent
 *   dims of a row, a probability is broadcast. P is read through strides, so [h][j] (the two-pass path's
 *   scores) and [j][h] (Sᵀ) both work.</li>
 * </ul>
 *
 * <p>Versions (B1 H128 T4096 f32, one thread of a 2-core Zen 5 with 512-bit FMAs, whose measured peak is 270
 * GFLOP/s per core; the numbers in docs/benchmarks.md come from {@code ./mla bench}):
 * <ol>
 *   <li>dot-product blocks, 4 heads × 4 tokens (16 accumulators, a reduceLanes per output): 39 % of the FMA peak
 *   for scores on a Xeon (the previous VectorKernels).</li>
 *   <li>outer-product blocks, 6 tokens × 4 head vectors (24 accumulators) for scores and 6 heads × 4 latent
 *   vectors for values: 200 and 186 GFLOP/s on one core in a stand-alone loop (74 % and 69 %).</li>
 *   <li>scores 8 tokens × 3 head vectors (s8x3, with s8x2/s8x1 for the remainder of heads and s12x1 for 16 heads
 *   or fewer), values 6 heads × 4 latent vectors (v6x4, and v2x4 for two heads left over): alone on one core
 *   254-260 and 190-210 GFLOP/s; in the whole step, 66 % and 53-56 % of the 2-core peak (the values read P
 *   through strides and add partial sums), 72 % and 65 % once the values read P in place (FastAttention's
 *   version 4).</li>
 *   <li>the score kernels address the cached rows at the constant stride {@link #ROW} (576, DeepSeek's d_c +
 *   d_r), and s16x1 replaces s12x1 (a 64-row tile left 4 rows to a one-accumulator loop that waits on the FMA
 *   latency, about half the time of the other 60 by the arithmetic): alone on one core s8x3 269 GFLOP/s (233
 *   before), 16 heads 226 (133).</li>
 *   <li>values of up to 16 heads in groups of 8 (v8x3, v8x2) instead of 6 + 6 + 2 + 2.</li>
 *   <li>no width but 576 is slow: rows wider than {@link #ROW} go through the micro-kernels in column chunks
 *   (before, a row at a time: 2.4× the time per byte of a 576 row, 1.1× after, GeometryTasks in
 *   docs/benchmarks.md), and a quantised or gathered tile of narrower rows is decoded at the stride ROW
 *   ({@link #tileStride}) instead of decoded, then copied.</li>
 *   <li>16 vector registers (AVX2) get kernels of their own ({@link #REGS32} false): the 24-accumulator blocks
 *   spilled there. 6 × 2 blocks for the scores over Qᵀ in panels of two head vectors ({@link #qtIndex}), 6 × 2 for
 *   the values. 2-vCPU Zen 3 (AVX2), best rounds of benchmarks/vs-libtorch.sh before and after: B1 H128 T4096
 *   33.0 → 26.2 ms, B8 238 → 150 ms, B1 H16 T16384 19.6 → 15.2 ms (docs/benchmarks.md).</li>
 *   <li>32 registers: Qᵀ in panels of three head vectors too ({@link #qtIndex}), each score kernel reading its panel
 *   at a compile-time stride: on one core of a 2-core Xeon (AVX-512), s8x3 over one 64-row tile at 128 heads 147 →
 *   195 GFLOP/s (peak 235); scores in the B1 H128 T4096 step 2.40 → 2.05 ms (docs/benchmarks.md).</li>
 *   <li>rows narrower than {@link #ROW} by a divisor (MiniCPM3's 288) read in place as interleaved sets of rows
 *   ROW apart, not copied to the stride first: GeometryTasks on the Xeon, f32 cache, alternating, 256 + 32 at 128
 *   heads 228–234 → 240–252 GFLOP/s, minicpm3-4b (40 heads) 182–187 → 191–200.</li>
 *   <li>a single head vector on an AMD Zen 4 ({@link #HALF_SCORES}): 8 rows × two 256-bit halves (s8x2h) in place of
 *   16 rows × one 512-bit vector (s16x1), whose broadcast per FMA the Zen 4's double-pumped 512-bit units pay for. One
 *   core over one 64-row tile in cache, 16 heads: 86–87 → 99 GFLOP/s (peak 115); B1 H16 in {@code ./mla bench
 *   --breakdown}, alternating, scores 0.75–0.88 → 0.57–0.63 ms at T4096 and 3.86–3.93 → 2.95–3.05 at T16384;
 *   GeometryTasks 512 + 64 / 16 86.7, 86.1, 67.4 → 96.5, 105.0, 75.9 GFLOP/s (2-vCPU EPYC, family 25 model 17,
 *   2026-12-04). Opt-in since 2026-12-07 (version 15): the only 256-bit kernel among 512-bit ones, it let C2 compile
 *   16 heads ten times slower in some JVMs; its FMAs and stores now keep to its own type profiles.</li>
 *   <li>16 registers: the scores in blocks of 4 rows × 2 head vectors (s4x2) instead of 6 × 2, the odd head vector 8
 *   rows × 1 (s8x1). The JIT's machine code of s6x2 with 256-bit vectors (hsdis) kept two of its 12 accumulators on
 *   the stack, a reload, FMA and store per column chained through memory. On a 2-vCPU Zen 5 run as an AVX2 machine
 *   ({@code -XX:UseAVX=2}: 256-bit vectors, 16 registers; KernelsAlone, one 64-row tile per thread in L2) the scores
 *   at 128 heads went from 47–53 % to 89–97 % of the AVX2 FMA peak; in the B1 H128 T4096 step 7.0–7.2 → 3.9–4.3 ms,
 *   and against libtorch 2.7.1 held to AVX2 the same way (benchmarks/vs-libtorch.sh --isa avx2) the step 0.75× →
 *   1.44× (docs/benchmarks.md, 2026-12-05).</li>
 *   <li>16 registers, the two-pass path's values (P's rows in order, cached rows {@link #ROW} apart): 4 heads × 2
 *   vectors with both strides constants (v4x2Row, {@link #valuesInOrder}) in place of v6x2. The same Zen 5 as an AVX2
 *   machine, alternating: alone 52–87 % → 86–98 % of the AVX2 peak (one slow round each side: 52 % and 59 %), in the
 *   B1 H128 T4096 step 6.0–6.5 → 5.3–6.0 ms in a slow hour of the host. A 6 × 2 block with constant strides was
 *   slower (42–50 %): without bounds checks between them C2 loaded all 6 broadcasts first and spilled 5
 *   accumulators.</li>
 *   <li>where the tile was touched before the scores of one head vector ({@link #TOUCH_SCORES}), s16x1 reads no
 *   number ahead; before, it kept reading one a column, on its own rows, which brought nothing. One Zen 5 core over a
 *   tile in L2 (KernelsAlone, two alternating pairs): 76–78 % → 79–83 % of its share of the peak.</li>
 *   <li>32 registers, more than 16 heads, P's rows in order and cached rows {@link #ROW} apart (the absorbed path's
 *   values over a tile read in place or copied to the stride): v6x4Row, v6x4 with both strides constants. One Zen 5
 *   core over a 128-row run in L2: 174–185 → 175–190 GFLOP/s, faster in 13 alternating pairs of 14 (by up to 4 %).
 *   In the step, old and new alternating every 20 (B1) or 6 (B8) steps in one JVM, 2-vCPU Zen 5, 2026-12-06, medians: B1 H128 T4096 values 2.206 → 2.109, 2.166 → 2.025, 1.957 → 1.950 ms; B8 H128 16.01 → 15.41,
 *   15.66 → 15.35; B1 H64 0.974 → 0.950, 1.022 → 1.016. The same for the 8-head blocks (v8x3 at up to 16 heads) took
 *   the B1 H16 values from 0.28–0.32 to 0.39–0.45 ms, so 16 heads keep v8x3; a likely reason, not read in the machine
 *   code: 8 broadcasts and 3 vectors of K beside 24 accumulators are 35 registers.</li>
 *   <li>a single head vector on an AMD Zen 4 ({@link #PAIR_SCORES}): 8 rows × 16 heads with two cached numbers a 64-bit
 *   broadcast (s8x2p), Qᵀ in column pairs, in place of s16x1's broadcast per FMA, on full 512-bit vectors (so no second
 *   vector shape in the JVM, §6). Alone on one core (KernelsAlone, 16 heads, 2-vCPU EPYC family 25 model 17,
 *   2026-12-08): 86 → 104–106 GFLOP/s of a 117 peak, in 16 of 18 JVMs (67 and 82 in two, as a shared host moves a
 *   thread); GeometryTasks B1 H16 T4096, three alternating rounds: absorbed 0.981, 0.986, 0.943 → 0.920, 0.905, 0.858
 *   ms, tiled 1.137, 0.914, 0.962 → 0.806, 0.945, 0.882; {@code mla tune --dry-run}: 0.90 of the time in 3 rounds of 3.</li>
 * </ol>
 */
final class Gemm {
    private Gemm() {
    }

    /** Heads padded to whole vectors. */
    static int paddedHeads(int heads) {
        return (heads + L - 1) / L * L;
    }

    /**
     * Columns [c0, c1) of Qᵀ of token row r for {@link #scores}: Qᵀ[c, h] = scale·[q_lat | q_pe][r, h, c] at
     * qt[q0 + {@link #qtIndex}(c, h)] (panels of head vectors, not [c, hp] rows), c &lt; d_c + d_r, heads padded with zeros to hp. The softmax scale is folded in here, once per step. A head at a
     * time: its numbers are read in order and written a constant stride apart in its panel ({@link #qtIndex}). Column
     * by column, with {@link #qtIndex} worked out per number, one row of 128 heads took 124 µs alone on a Zen 5 core
     * against 35 now (16 heads 15 against 4.4); in the step, the two alternating in one JVM (2026-12-06), the scores
     * task 2.31 → 2.23 ms at B1 H128 T4096, 17.77 → 17.34 at B8, 0.440 → 0.427 at B1 H16 T4096, level at T16384.
     */
    static void packQuery(float[] qLat, float[] q, int r, int heads, int dn, int dr, int dc, float scale, float[] qt, int q0, int hp,
                          int c0, int c1) {
        packQuery(qLat, q, r, heads, dn, dr, dc, scale, qt, q0, hp, c0, c1, PAIR_SCORES);
    }

    /** {@link #packQuery} in the layout of {@code pairs} ({@link #qtIndex}), for the tests of both layouts on any machine. */
    static void packQuery(float[] qLat, float[] q, int r, int heads, int dn, int dr, int dc, float scale, float[] qt, int q0, int hp,
                          int c0, int c1, boolean pairs) {
        int w = dc + dr;
        if (pairLayout(REGS32, pairs, w, hp)) {
            // no constant stride between a head's columns here (qtIndex): each number's place worked out (16 heads at most)
            for (int h = 0; h < hp; h++) {
                int lat = (r * heads + h) * dc, pe = (r * heads + h) * (dn + dr) + dn - dc;
                for (int c = c0; c < c1; c++) {
                    qt[q0 + qtIndex(REGS32, true, c, h, w, hp)] = h >= heads ? 0f : c < dc ? scale * qLat[lat + c] : scale * q[pe + c];
                }
            }
            return;
        }
        for (int h = 0; h < hp; h++) {
            int at = q0 + qtIndex(REGS32, false, 0, h, w, hp), pw = qtIndex(REGS32, false, 1, h, w, hp) - qtIndex(REGS32, false, 0, h, w, hp);
            if (h >= heads) {
                for (int c = c0; c < c1; c++) qt[at + c * pw] = 0f;
                continue;
            }
            int lat = (r * heads + h) * dc, pe = (r * heads + h) * (dn + dr) + dn - dc;
            for (int c = c0; c < Math.min(c1, dc); c++) qt[at + c * pw] = scale * qLat[lat + c];
            for (int c = Math.max(c0, dc); c < c1; c++) qt[at + c * pw] = scale * q[pe + c];
        }
    }

    /**
     * Where (column c, head h) of one token row's Qᵀ lies, w columns by hp heads: in panels of the head vectors one
     * score kernel reads, each [c, vectors·L], so a kernel streams its panel in memory order at a constant stride.
     * With 32 registers panels of three (s8x3; the last one of one or two), with 16 of two (s4x2; the last one alone
     * when their count is odd). Against [c, hp] rows, where a kernel read 3 of every hp/L vectors: alone on one core
     * of a 2-core Xeon with AVX-512, 96 heads, 157 → 200 GFLOP/s (version 8). For {@link #s8x2p} ({@link #pairLayout}:
     * one head vector, an even width) two vectors a column pair: heads [0, L/2) then [L/2, L), each head's two columns
     * side by side, so that one 64-bit broadcast of two cached numbers meets both.
     */
    static int qtIndex(boolean regs32, boolean pairs, int c, int h, int w, int hp) {
        if (pairLayout(regs32, pairs, w, hp)) return c / 2 * 2 * L + h / (L / 2) * L + 2 * (h % (L / 2)) + (c & 1);
        int v0 = regs32 ? h / L / 3 * 3 : h / L & ~1, pw = Math.min(regs32 ? 3 * L : 2 * L, hp - v0 * L);
        return v0 * L * w + c * pw + h - v0 * L;
    }

    /**
     * DeepSeek's latent row, d_c + d_r = 512 + 64 (every DeepSeek MLA model has it): the score micro-kernels
     * address the cached rows at this compile-time stride, so one register and constant displacements reach all
     * 8 or 16 rows of a block. With the stride a variable, C2 kept one register per row, ran out and moved the
     * offsets through vector registers inside the loop (alone on one Zen 5 core: 16 rows × 1 head vector 133
     * GFLOP/s against 226 with the constant, 8 rows × 3 head vectors 233 against 269). Narrower rows are
     * copied to this stride first; wider ones go in column chunks of this width (version 6).
     */
    static final int ROW = 576;

    /** Whether Qᵀ of w columns by hp heads is laid out in column pairs for {@link #s8x2p} ({@link #PAIR_SCORES}). */
    static boolean pairLayout(boolean regs32, boolean pairs, int w, int hp) {
        return regs32 && pairs && hp == L && w % 2 == 0;
    }

    /**
     * Whether the machine has 32 vector registers (AVX-512) rather than 16 (AVX2): the 24-accumulator blocks
     * (s8x3, v6x4, v8x3) fit the first and spill on the second, where s4x2 (8 accumulators) and v6x2 (12, BLIS's
     * Haswell shape) keep every accumulator in a register. Read from the vector width the JVM chose; the system
     * property {@code tornadomla.fast.registers} (16 or 32) overrides it, for A/B runs on one machine.
     */
    static final boolean REGS32 = switch (System.getProperty("tornadomla.fast.registers", "")) {
        case "16" -> false;
        case "32" -> true;
        default -> F.vectorBitSize() >= 512;
    };
    /**
     * Whether the scores of a single head vector (H ≤ 16) run on 256-bit vectors ({@link #s8x2h}) rather than 512-bit
     * ones ({@link #s16x1}). With one head vector a block needs a broadcast of a cached number per FMA, and on an AMD
     * Zen 4, whose 512-bit FMAs run as two 256-bit halves, that mix kept s16x1 at about 75 % of a core's peak; 8 rows ×
     * two half-width head vectors need one broadcast per two FMAs at the same FLOPs per cycle. Where the FMA units are
     * 512 bits wide (Zen 5, Intel's AVX-512 cores) half-width vectors halve the peak. Off by default everywhere (it was
     * on for a Zen 4 until 2026-12-07): a 256-bit kernel in a JVM of 512-bit ones let C2 compile 16 heads about ten times
     * slower in some JVMs ({@link KernelChoices#autoHalfScores}, {@link #s8x2h}). {@code
     * -Dtornadomla.fast.halfScores=true|false} overrides it, and {@code mla tune} may have measured it ({@link KernelChoices}).
     */
    static final boolean HALF_SCORES = KernelChoices.choice("tornadomla.fast.halfScores", KernelChoices.autoHalfScores());
    /**
     * Whether a tile is read through once in order ({@link Vec#touch}) before the scores of a single head vector (H ≤
     * 16) walk it ({@link #s16x1}), in place of the next 16 rows read ahead as they compute ({@link #s16x1Ahead}). At
     * 16 heads a cached number carries 32 FLOPs and the scores wait on memory. On an AMD Zen 5 (2 vCPUs, 2026-12-04) the tile touched first and no read-ahead
     * made the B1 H16 T16384 scores 1.80–2.09 ms against 2.54–2.88 (five alternating rounds), the tiled path 2.74–3.04
     * against 2.87–3.52 ms; at T4096, where the cache stays in the L3, both were level. On where {@link Vec#TOUCH} is on
     * and the FMA units are 512 bits wide: an AMD CPU with 32 registers and no {@link #HALF_SCORES} (a Zen 5; the Zen 4
     * and the Intel Xeon keep the read-ahead, as measured there). {@code -Dtornadomla.fast.touchScores=true|false}
     * overrides it, and {@code mla tune} may have measured it ({@link KernelChoices}).
     */
    static final boolean TOUCH_SCORES = KernelChoices.choice("tornadomla.fast.touchScores", KernelChoices.autoTouchScores(Vec.TOUCH, REGS32, HALF_SCORES));
    /**
     * Whether the scores of a single head vector (H ≤ 16, an even row width, 32 registers, not {@link #HALF_SCORES}) run
     * as {@link #s8x2p}: two cached numbers broadcast as one 64-bit lane pair against Qᵀ laid out in column pairs, one
     * broadcast per two FMAs on full 512-bit vectors, where {@link #s16x1} needs one per FMA. On where a 512-bit FMA runs
     * as two 256-bit halves: an AMD family 25 CPU with 512-bit vectors (a Zen 4). {@code
     * -Dtornadomla.fast.pairScores=true|false} overrides it, and {@code mla tune} may have measured it ({@link KernelChoices}).
     */
    static final boolean PAIR_SCORES = KernelChoices.choice("tornadomla.fast.pairScores", KernelChoices.autoPairScores(REGS32, HALF_SCORES))
            && !HALF_SCORES;        // both set by -D: the halves, as asked for first (the pairs' layout would make atRow32 ignore them)
    /** Lanes of 64 bits in a vector of {@link Vec#F}'s size: a pair of floats each, for {@link #s8x2p}. */
    private static final jdk.incubator.vector.VectorSpecies<Long> PAIR = F.withLanes(long.class);
    /** The half-width species of {@link #s8x2h}. */
    private static final jdk.incubator.vector.VectorSpecies<Float> H = FloatVector.SPECIES_256;
    private static final int HL = H.length();

    private static final ThreadLocal<float[]> AT_ROW = ThreadLocal.withInitial(() -> new float[0]);
    /** Floats per 64-byte line. */
    private static final int LINE = 16;
    /** Where the read-ahead kernels leave the sum of what they read ahead, so that the JIT keeps the loads. */
    private static final float[] AHEAD = new float[1];

    /**
     * The row stride of a tile copied or decoded for the kernels: {@link #ROW} for rows up to that width (the score
     * kernels then read the tile where it lies, and the values kernels take any stride), else the width.
     */
    static int tileStride(int w) {
        return w <= ROW ? ROW : w;
    }

    /**
     * st[s0 + j·hp + h] = Σ_c qt[q0 + c·hp + h]·k[off + j·w + c] for rows j &lt; n and heads h &lt; hp (hp a multiple
     * of L; qt from q0 is [w, hp], k rows are w apart).
     */
    static void scores(float[] qt, int q0, int hp, float[] k, int off, int w, int n, float[] st, int s0) {
        scores(qt, q0, hp, k, off, w, w, n, st, s0);
    }

    /**
     * {@link #scores(float[], int, int, float[], int, int, int, float[], int)} over rows {@code stride} numbers apart
     * (stride ≥ w): rows at the stride {@link #ROW} are read where they lie, others are copied to it first
     * ({@link LatentTiles} decodes a quantised tile at that stride, so that it is copied once). Rows wider than ROW
     * go in column chunks of ROW, each chunk's scores added to the last: the micro-kernels at any width.
     */
    static void scores(float[] qt, int q0, int hp, float[] k, int off, int stride, int w, int n, float[] st, int s0) {
        if (w <= ROW && stride == w && ROW % w == 0 && w < ROW) {
            // rows w apart, w a divisor of ROW (288 = 256 + 32: MiniCPM3): m = ROW/w of them side by side fill one row
            // of ROW numbers, so rows s, s + m, s + 2m, … lie ROW apart from row s and the kernels read them in place,
            // without the copy below; their scores go to st rows m·hp apart
            int m = ROW / w;
            for (int set = 0; set < m && set < n; set++) {
                atRow(qt, q0, hp, w, 0, k, off + set * w, w, (n - set + m - 1) / m, st, s0 + set * hp, m * hp);
            }
            return;
        }
        if (w <= ROW) {
            if (stride != ROW) {
                float[] wide = Vec.scratch(AT_ROW, n * ROW);
                for (int r = 0; r < n; r++) System.arraycopy(k, off + r * stride, wide, r * ROW, w);
                k = wide;
                off = 0;
            }
            atRow(qt, q0, hp, w, 0, k, off, w, n, st, s0, hp);
            return;
        }
        float[] wide = Vec.scratch(AT_ROW, n * ROW), part = Vec.scratch(CHUNK, n * hp);
        for (int c0 = 0; c0 < w; c0 += ROW) {
            int cw = Math.min(ROW, w - c0);
            for (int r = 0; r < n; r++) System.arraycopy(k, off + r * stride + c0, wide, r * ROW, cw);
            if (c0 == 0) {
                atRow(qt, q0, hp, w, 0, wide, 0, cw, n, st, s0, hp);
            } else {
                atRow(qt, q0, hp, w, c0, wide, 0, cw, n, part, 0, hp);
                Vec.axpy(1f, part, 0, st, s0, n * hp);
            }
        }
    }

    private static final ThreadLocal<float[]> CHUNK = ThreadLocal.withInitial(() -> new float[0]);

    /**
     * The micro-kernels over n rows at the stride {@link #ROW}: columns [c0, c0 + w) of Qᵀ, whose rows are qw wide
     * (w ≤ ROW); row j's scores into st[s0 + j·sts …] (sts = hp, or a multiple of it for the interleaved rows of
     * {@link #scores}).
     */
    private static void atRow(float[] qt, int q0, int hp, int qw, int c0, float[] k, int off, int w, int n, float[] st, int s0, int sts) {
        if (REGS32) atRow32(qt, q0, hp, qw, c0, k, off, w, n, st, s0, sts, HALF_SCORES, TOUCH_SCORES, PAIR_SCORES);
        else atRow16(qt, q0, hp, qw, c0, k, off, w, n, st, s0, sts);
    }

    /**
     * {@link #atRow} with 16 vector registers, Qᵀ in panels ({@link #qtIndex}): blocks of 4 rows × 2 head vectors
     * (8 accumulators, 2 loads of Qᵀ and 4 broadcasts per 8 FMAs), then the odd head vector, if any, 8 rows × 1.
     * 6 × 2 blocks (12 accumulators) measured faster on paper and slower in fact: with 2 registers of Qᵀ and the
     * broadcasts C2 hoists, they ran out of the 16 and kept two accumulators on the stack, a store and a reload
     * chained through every column (version 11).
     */
    static void atRow16(float[] qt, int q0, int hp, int qw, int c0, float[] k, int off, int w, int n, float[] st, int s0, int sts) {
        int vecs = hp / L, paired = vecs & ~1, j = 0;       // head vectors [0, paired) in panels of two, then one alone
        if (paired > 0) {
            for (; j + 4 <= n; j += 4) {
                int ko = off + j * ROW, so = s0 + j * sts;
                for (int v0 = 0; v0 < paired; v0 += 2) s4x2(qt, panel(q0, v0, 2, qw, c0), k, ko, w, st, so + v0 * L, sts);
            }
            for (; j < n; j++) {
                for (int v0 = 0; v0 < paired; v0 += 2) {
                    int at = panel(q0, v0, 2, qw, c0), ko = off + j * ROW, so = s0 + j * sts;
                    scoresRow(qt, 2 * L, at, 1, k, ko, w, st, so + v0 * L);
                    scoresRow(qt, 2 * L, at + L, 1, k, ko, w, st, so + (v0 + 1) * L);
                }
            }
        }
        if (paired < vecs) {
            int oddAt = panel(q0, paired, 1, qw, c0), i = 0;  // the lone vector's panel (columns L apart)
            for (; i + 8 <= n; i += 8) s8x1(qt, oddAt, k, off + i * ROW, w, st, s0 + i * sts + paired * L, sts);
            for (; i < n; i++) scoresRow(qt, L, oddAt, 1, k, off + i * ROW, w, st, s0 + i * sts + paired * L);
        }
    }

    /**
     * {@link #atRow} with 32 vector registers (AVX-512), Qᵀ in panels of three head vectors ({@link #qtIndex}); a single
     * head vector on 256-bit halves where {@code half} ({@link #HALF_SCORES}), else without reading ahead where the
     * caller {@code touched} the tile ({@link #TOUCH_SCORES}).
     */
    static void atRow32(float[] qt, int q0, int hp, int qw, int c0, float[] k, int off, int w, int n, float[] st, int s0, int sts,
                        boolean half, boolean touched, boolean pairs) {
        int vecs = hp / L, j = 0;
        if (pairLayout(true, pairs, qw, hp)) {
            // a single head vector, Qᵀ in column pairs (the layout packQuery chose decides, whatever half says): 8 rows
            // at a time, then a row at a time
            for (; j + 8 <= n; j += 8) s8x2p(qt, q0 + c0 * L, k, off + j * ROW, w, st, s0 + j * sts, sts);
            for (; j < n; j++) s1x2p(qt, q0 + c0 * L, k, off + j * ROW, w, st, s0 + j * sts);
            return;
        }
        if (vecs == 1) {
            // a single head vector (H ≤ 16). On a Zen 4 8 rows × its two 256-bit halves (version 10) take every block
            // of 8 rows; elsewhere 16 rows at a time (a tile is 4 such blocks), then 8
            if (half && L == 2 * HL) {
                for (; j + 8 <= n; j += 8) s8x2h(qt, q0 + c0 * L, k, off + j * ROW, w, st, s0 + j * sts, sts);
            }
            // each block of 16 also reads ahead the 16 rows after it (the next tile's first ones after the last block),
            // clamped into the array: B1 H16, scores 0.41–0.47 → 0.36–0.38 ms at T4096 and 1.48–1.64 → 1.24–1.42 at
            // T16384 on a 2-core Xeon (the old and the new jar alternating, ./mla bench --breakdown, 2026-12-03)
            // (where the caller touched the tile, TOUCH_SCORES, s16x1 reads only its own rows: alone on a Zen 5 core
            // over a tile in L2, 76–78 % → 79–83 % of the peak against s16x1Ahead kept on those rows, version 13)
            for (; j + 16 <= n; j += 16) {
                if (touched) s16x1(qt, q0 + c0 * L, k, off + j * ROW, w, st, s0 + j * sts, sts);
                else s16x1Ahead(qt, q0 + c0 * L, k, off + j * ROW, w, st, s0 + j * sts, sts, Math.min(off + (j + 16) * ROW, k.length - LINE * w));
            }
            for (; j + 8 <= n; j += 8) s8x1(qt, q0 + c0 * L, k, off + j * ROW, w, st, s0 + j * sts, sts);
        } else {
            // a block of 8 cached rows against every panel before the next block: the rows stay in L1
            for (; j + 8 <= n; j += 8) {
                int ko = off + j * ROW, so = s0 + j * sts;
                for (int v0 = 0; v0 < vecs; v0 += 3) {
                    int pv = Math.min(3, vecs - v0), at = panel(q0, v0, pv, qw, c0);
                    if (pv == 3) s8x3(qt, at, k, ko, w, st, so + v0 * L, sts);
                    else if (pv == 2) s8x2(qt, at, k, ko, w, st, so + v0 * L, sts);
                    else s8x1(qt, at, k, ko, w, st, so + v0 * L, sts);
                }
            }
        }
        for (; j < n; j++) {
            for (int v0 = 0; v0 < vecs; v0 += 3) {
                int pv = Math.min(3, vecs - v0);
                scoresRow(qt, pv * L, panel(q0, v0, pv, qw, c0), pv, k, off + j * ROW, w, st, s0 + j * sts + v0 * L);
            }
        }
    }

    /**
     * Column c0 of the panel of Qᵀ (from q0, qw columns) that starts at head vector v0 and holds {@code vectors} of them
     * ({@link #qtIndex}).
     */
    private static int panel(int q0, int v0, int vectors, int qw, int c0) {
        return q0 + v0 * L * qw + c0 * vectors * L;
    }

    /** One cached row against nv head vectors (the rows left over by the blocks); qt's head h0 of column 0 at h0, columns qs apart. */
    private static void scoresRow(float[] qt, int qs, int h0, int nv, float[] k, int off, int w, float[] st, int so) {
        for (int v = 0; v < nv; v++) {
            FloatVector acc = FloatVector.zero(F);
            for (int c = 0; c < w; c++) acc = FloatVector.fromArray(F, qt, c * qs + h0 + v * L).fma(FloatVector.broadcast(F, k[off + c]), acc);
            acc.intoArray(st, so + v * L);
        }
    }

    /**
     * o[o0 + h·oh + c] += Σ_j p[p0 + h·ph + j·pj]·k[off + j·w + c] for heads h &lt; heads, rows j &lt; n and
     * c in [c0, c1) (k's column c0 is at off + c0 … the caller passes off pointing at column 0 of row 0).
     */
    static void values(float[] p, int p0, int ph, int pj, int heads, float[] k, int off, int w, int n, int c0, int c1,
                       float[] o, int o0, int oh) {
        if (REGS32) values32(p, p0, ph, pj, heads, k, off, w, n, c0, c1, o, o0, oh, false);
        else values16(p, p0, ph, pj, heads, k, off, w, n, c0, c1, o, o0, oh);
    }

    /**
     * {@link #values} over a tile of the cache that the next tile follows in k (rows off + n·w on; anything else in
     * k is only read, never used): with up to 16 heads and 32 registers the 8-head blocks read the next tile's lines
     * ahead as they compute, a slice each. At 16 heads a cached number carries 32 FLOPs and the values wait on the L3:
     * B1 H16 on a 2-core Xeon, values 1.72–1.80 → 1.47–1.63 ms at T16384 and 0.445–0.455 → 0.38–0.45 at T4096 (the old
     * and the new jar alternating, 2026-12-03).
     */
    static void valuesReadingAhead(float[] p, int p0, int ph, int pj, int heads, float[] k, int off, int w, int n, int c0, int c1,
                                   float[] o, int o0, int oh) {
        if (REGS32) values32(p, p0, ph, pj, heads, k, off, w, n, c0, c1, o, o0, oh, true);
        else values16(p, p0, ph, pj, heads, k, off, w, n, c0, c1, o, o0, oh);
    }

    /**
     * {@link #values} with 16 vector registers: P's rows in order and cached rows {@link #ROW} apart go to {@link
     * #valuesInOrder}; others 6 heads × 2 latent vectors (12 accumulators, 2 loads of K and 6 broadcasts per 12 FMAs;
     * the bounds checks on P keep C2 from loading the 6 broadcasts at once); the heads left over 2 × 4 and 1 × 4 (8
     * and 4 accumulators).
     */
    static void values16(float[] p, int p0, int ph, int pj, int heads, float[] k, int off, int w, int n, int c0, int c1,
                         float[] o, int o0, int oh) {
        if (pj == 1 && w == ROW) {
            valuesInOrder(p, p0, ph, heads, k, off, n, c0, c1, o, o0, oh);
            return;
        }
        int h6 = heads / 6 * 6, c = c0;
        if (h6 > 0) {
            for (; c + 2 * L <= c1; c += 2 * L) {
                for (int h = 0; h < h6; h += 6) v6x2(p, p0 + h * ph, ph, pj, k, off + c, w, n, o, o0 + h * oh + c, oh);
            }
            rowAtATime(p, p0, ph, pj, 0, h6, k, off, w, n, c, c1, o, o0, oh);
        }
        otherHeads(p, p0, ph, pj, h6, heads, k, off, w, n, c0, c1, o, o0, oh);
    }

    /** Heads [h0, heads) that a 16-register block did not take: 2 × 4 and 1 × 4 blocks, then a row at a time. */
    private static void otherHeads(float[] p, int p0, int ph, int pj, int h0, int heads, float[] k, int off, int w, int n, int c0,
                                   int c1, float[] o, int o0, int oh) {
        int c = c0;
        for (; h0 < heads && c + 4 * L <= c1; c += 4 * L) {
            int h = h0;
            for (; h + 2 <= heads; h += 2) v2x4(p, p0 + h * ph, ph, pj, k, off + c, w, n, o, o0 + h * oh + c, oh);
            for (; h < heads; h++) v1x4(p, p0 + h * ph, pj, k, off + c, w, n, o, o0 + h * oh + c);
        }
        rowAtATime(p, p0, ph, pj, h0, heads, k, off, w, n, c, c1, o, o0, oh);
    }

    /**
     * {@link #values16} where P's rows run in order (pj = 1: the two-pass path's [h, j]) and the cached rows lie
     * {@link #ROW} apart, both strides constants, so C2 drops the bounds checks from v4x2Row's loop. Without them it
     * loads every broadcast of a block first: 6 heads (v6x2's block) then take 6 + 2 + 12 registers and spill; 4 heads
     * × 2 vectors take 14. The heads left over go as in values16 ({@link #otherHeads}).
     */
    private static void valuesInOrder(float[] p, int p0, int ph, int heads, float[] k, int off, int n, int c0, int c1,
                                      float[] o, int o0, int oh) {
        int h4 = heads / 4 * 4, c = c0;
        for (; h4 > 0 && c + 2 * L <= c1; c += 2 * L) {
            for (int h = 0; h < h4; h += 4) v4x2Row(p, p0 + h * ph, ph, k, off + c, n, o, o0 + h * oh + c, oh);
        }
        rowAtATime(p, p0, ph, 1, 0, h4, k, off, ROW, n, c, c1, o, o0, oh);
        otherHeads(p, p0, ph, 1, h4, heads, k, off, ROW, n, c0, c1, o, o0, oh);
    }

    /** {@link #values} with 32 vector registers (AVX-512). */
    static void values32(float[] p, int p0, int ph, int pj, int heads, float[] k, int off, int w, int n, int c0, int c1,
                         float[] o, int o0, int oh, boolean readAhead) {
        // up to 16 heads (DeepSeek-V3 split 8 ways): groups of 8 against 3, then 2, vectors of latent dims (512 =
        // 10·48 + 32), where 6-head blocks would leave 4 of 16 heads to v2x4. Alone on a core 181 → 220 GFLOP/s;
        // in the step, B1 H16 T16384, values 1.21–1.25 → 1.13–1.19 ms (five alternating runs), split_tiles 2.02–2.08
        // → 1.93–1.99. At 128 heads the 6-head blocks measured faster in the step (1.48 against 1.60 ms), though
        // not alone (213 against 224 GFLOP/s).
        int h8 = heads <= 16 ? heads / 8 * 8 : 0, c = c0;
        if (h8 > 0) {
            // read ahead: call q of the tile's 8-head blocks takes the q-th slice of 2·n lines after the tile, clamped into k
            int call = 0, last = k.length - 2 * LINE * n;
            for (; c + 3 * L <= c1; c += 3 * L) {
                for (int h = 0; h < h8; h += 8, call++) {
                    if (readAhead && last >= 0) {
                        int pf = Math.min(last, off + n * w + call * 2 * LINE * n);
                        v8x3Ahead(p, p0 + h * ph, ph, pj, k, off + c, w, n, o, o0 + h * oh + c, oh, pf);
                    } else {
                        v8x3(p, p0 + h * ph, ph, pj, k, off + c, w, n, o, o0 + h * oh + c, oh);
                    }
                }
            }
            for (; c + 2 * L <= c1; c += 2 * L) {
                for (int h = 0; h < h8; h += 8) v8x2(p, p0 + h * ph, ph, pj, k, off + c, w, n, o, o0 + h * oh + c, oh);
            }
            rowAtATime(p, p0, ph, pj, 0, h8, k, off, w, n, c, c1, o, o0, oh);
        }
        // the other heads: 6, 2 or 1 at a time against 4 vectors
        for (c = c0; h8 < heads && c + 4 * L <= c1; c += 4 * L) {
            int h = h8;
            if (pj == 1 && w == ROW) {
                for (; h + 6 <= heads; h += 6) v6x4Row(p, p0 + h * ph, ph, k, off + c, n, o, o0 + h * oh + c, oh);
            }
            for (; h + 6 <= heads; h += 6) v6x4(p, p0 + h * ph, ph, pj, k, off + c, w, n, o, o0 + h * oh + c, oh);
            for (; h + 2 <= heads; h += 2) v2x4(p, p0 + h * ph, ph, pj, k, off + c, w, n, o, o0 + h * oh + c, oh);
            for (; h < heads; h++) v1x4(p, p0 + h * ph, pj, k, off + c, w, n, o, o0 + h * oh + c);
        }
        rowAtATime(p, p0, ph, pj, h8, heads, k, off, w, n, c, c1, o, o0, oh);
    }

    /** Columns [c, c1) of heads [h0, h1), fewer than the blocks take: a row at a time. */
    private static void rowAtATime(float[] p, int p0, int ph, int pj, int h0, int h1, float[] k, int off, int w, int n, int c, int c1,
                                   float[] o, int o0, int oh) {
        if (c >= c1) return;
        for (int h = h0; h < h1; h++) {
            for (int j = 0; j < n; j++) Vec.axpy(p[p0 + h * ph + j * pj], k, off + j * w + c, o, o0 + h * oh + c, c1 - c);
        }
    }

    /** 8 heads × 3 latent vectors: 24 accumulators; per cached row 3 loads of K and 8 broadcasts of P for 24 FMAs. */
    private static void v8x3(float[] p, int p0, int ph, int pj, float[] k, int off, int w, int n, float[] o, int o0, int oh) {
        FloatVector a00 = FloatVector.fromArray(F, o, o0), a01 = FloatVector.fromArray(F, o, o0 + L), a02 = FloatVector.fromArray(F, o, o0 + 2 * L);
        FloatVector a10 = FloatVector.fromArray(F, o, o0 + oh), a11 = FloatVector.fromArray(F, o, o0 + oh + L), a12 = FloatVector.fromArray(F, o, o0 + oh + 2 * L);
        FloatVector a20 = FloatVector.fromArray(F, o, o0 + 2 * oh), a21 = FloatVector.fromArray(F, o, o0 + 2 * oh + L), a22 = FloatVector.fromArray(F, o, o0 + 2 * oh + 2 * L);
        FloatVector a30 = FloatVector.fromArray(F, o, o0 + 3 * oh), a31 = FloatVector.fromArray(F, o, o0 + 3 * oh + L), a32 = FloatVector.fromArray(F, o, o0 + 3 * oh + 2 * L);
        FloatVector a40 = FloatVector.fromArray(F, o, o0 + 4 * oh), a41 = FloatVector.fromArray(F, o, o0 + 4 * oh + L), a42 = FloatVector.fromArray(F, o, o0 + 4 * oh + 2 * L);
        FloatVector a50 = FloatVector.fromArray(F, o, o0 + 5 * oh), a51 = FloatVector.fromArray(F, o, o0 + 5 * oh + L), a52 = FloatVector.fromArray(F, o, o0 + 5 * oh + 2 * L);
        FloatVector a60 = FloatVector.fromArray(F, o, o0 + 6 * oh), a61 = FloatVector.fromArray(F, o, o0 + 6 * oh + L), a62 = FloatVector.fromArray(F, o, o0 + 6 * oh + 2 * L);
        FloatVector a70 = FloatVector.fromArray(F, o, o0 + 7 * oh), a71 = FloatVector.fromArray(F, o, o0 + 7 * oh + L), a72 = FloatVector.fromArray(F, o, o0 + 7 * oh + 2 * L);
        for (int j = 0; j < n; j++) {
            int kr = off + j * w, pr = p0 + j * pj;
            FloatVector k0 = FloatVector.fromArray(F, k, kr);
            FloatVector k1 = FloatVector.fromArray(F, k, kr + L);
            FloatVector k2 = FloatVector.fromArray(F, k, kr + 2 * L);
            FloatVector b0 = FloatVector.broadcast(F, p[pr]);
            a00 = k0.fma(b0, a00); a01 = k1.fma(b0, a01); a02 = k2.fma(b0, a02);
            FloatVector b1 = FloatVector.broadcast(F, p[pr + ph]);
            a10 = k0.fma(b1, a10); a11 = k1.fma(b1, a11); a12 = k2.fma(b1, a12);
            FloatVector b2 = FloatVector.broadcast(F, p[pr + 2 * ph]);
            a20 = k0.fma(b2, a20); a21 = k1.fma(b2, a21); a22 = k2.fma(b2, a22);
            FloatVector b3 = FloatVector.broadcast(F, p[pr + 3 * ph]);
            a30 = k0.fma(b3, a30); a31 = k1.fma(b3, a31); a32 = k2.fma(b3, a32);
            FloatVector b4 = FloatVector.broadcast(F, p[pr + 4 * ph]);
            a40 = k0.fma(b4, a40); a41 = k1.fma(b4, a41); a42 = k2.fma(b4, a42);
            FloatVector b5 = FloatVector.broadcast(F, p[pr + 5 * ph]);
            a50 = k0.fma(b5, a50); a51 = k1.fma(b5, a51); a52 = k2.fma(b5, a52);
            FloatVector b6 = FloatVector.broadcast(F, p[pr + 6 * ph]);
            a60 = k0.fma(b6, a60); a61 = k1.fma(b6, a61); a62 = k2.fma(b6, a62);
            FloatVector b7 = FloatVector.broadcast(F, p[pr + 7 * ph]);
            a70 = k0.fma(b7, a70); a71 = k1.fma(b7, a71); a72 = k2.fma(b7, a72);
        }
        a00.intoArray(o, o0); a01.intoArray(o, o0 + L); a02.intoArray(o, o0 + 2 * L);
        a10.intoArray(o, o0 + oh); a11.intoArray(o, o0 + oh + L); a12.intoArray(o, o0 + oh + 2 * L);
        a20.intoArray(o, o0 + 2 * oh); a21.intoArray(o, o0 + 2 * oh + L); a22.intoArray(o, o0 + 2 * oh + 2 * L);
        a30.intoArray(o, o0 + 3 * oh); a31.intoArray(o, o0 + 3 * oh + L); a32.intoArray(o, o0 + 3 * oh + 2 * L);
        a40.intoArray(o, o0 + 4 * oh); a41.intoArray(o, o0 + 4 * oh + L); a42.intoArray(o, o0 + 4 * oh + 2 * L);
        a50.intoArray(o, o0 + 5 * oh); a51.intoArray(o, o0 + 5 * oh + L); a52.intoArray(o, o0 + 5 * oh + 2 * L);
        a60.intoArray(o, o0 + 6 * oh); a61.intoArray(o, o0 + 6 * oh + L); a62.intoArray(o, o0 + 6 * oh + 2 * L);
        a70.intoArray(o, o0 + 7 * oh); a71.intoArray(o, o0 + 7 * oh + L); a72.intoArray(o, o0 + 7 * oh + 2 * L);
    }

    /**
     * {@link #v8x3} that also reads two numbers a row, 32 apart (two 64-byte lines), from k[pf …] and keeps their sum:
     * the next tile's lines in flight while this block computes ({@link #valuesReadingAhead}). A copy of v8x3 rather
     * than a parameter: its other callers measured slower reading ahead (the tiled path, whose scores already read the
     * next tile; absorb_q of several rows, where the rows after W^UK_h are W^UV_h) and would still pay two loads and
     * two adds a row for reads that bring nothing.
     */
    private static void v8x3Ahead(float[] p, int p0, int ph, int pj, float[] k, int off, int w, int n, float[] o, int o0, int oh, int pf) {
        float ahead = 0f;
        FloatVector a00 = FloatVector.fromArray(F, o, o0), a01 = FloatVector.fromArray(F, o, o0 + L), a02 = FloatVector.fromArray(F, o, o0 + 2 * L);
        FloatVector a10 = FloatVector.fromArray(F, o, o0 + oh), a11 = FloatVector.fromArray(F, o, o0 + oh + L), a12 = FloatVector.fromArray(F, o, o0 + oh + 2 * L);
        FloatVector a20 = FloatVector.fromArray(F, o, o0 + 2 * oh), a21 = FloatVector.fromArray(F, o, o0 + 2 * oh + L), a22 = FloatVector.fromArray(F, o, o0 + 2 * oh + 2 * L);
        FloatVector a30 = FloatVector.fromArray(F, o, o0 + 3 * oh), a31 = FloatVector.fromArray(F, o, o0 + 3 * oh + L), a32 = FloatVector.fromArray(F, o, o0 + 3 * oh + 2 * L);
        FloatVector a40 = FloatVector.fromArray(F, o, o0 + 4 * oh), a41 = FloatVector.fromArray(F, o, o0 + 4 * oh + L), a42 = FloatVector.fromArray(F, o, o0 + 4 * oh + 2 * L);
        FloatVector a50 = FloatVector.fromArray(F, o, o0 + 5 * oh), a51 = FloatVector.fromArray(F, o, o0 + 5 * oh + L), a52 = FloatVector.fromArray(F, o, o0 + 5 * oh + 2 * L);
        FloatVector a60 = FloatVector.fromArray(F, o, o0 + 6 * oh), a61 = FloatVector.fromArray(F, o, o0 + 6 * oh + L), a62 = FloatVector.fromArray(F, o, o0 + 6 * oh + 2 * L);
        FloatVector a70 = FloatVector.fromArray(F, o, o0 + 7 * oh), a71 = FloatVector.fromArray(F, o, o0 + 7 * oh + L), a72 = FloatVector.fromArray(F, o, o0 + 7 * oh + 2 * L);
        for (int j = 0; j < n; j++) {
            int kr = off + j * w, pr = p0 + j * pj;
            FloatVector k0 = FloatVector.fromArray(F, k, kr);
            FloatVector k1 = FloatVector.fromArray(F, k, kr + L);
            FloatVector k2 = FloatVector.fromArray(F, k, kr + 2 * L);
            ahead += k[pf + j * 2 * LINE] + k[pf + j * 2 * LINE + LINE];
            FloatVector b0 = FloatVector.broadcast(F, p[pr]);
            a00 = k0.fma(b0, a00); a01 = k1.fma(b0, a01); a02 = k2.fma(b0, a02);
            FloatVector b1 = FloatVector.broadcast(F, p[pr + ph]);
            a10 = k0.fma(b1, a10); a11 = k1.fma(b1, a11); a12 = k2.fma(b1, a12);
            FloatVector b2 = FloatVector.broadcast(F, p[pr + 2 * ph]);
            a20 = k0.fma(b2, a20); a21 = k1.fma(b2, a21); a22 = k2.fma(b2, a22);
            FloatVector b3 = FloatVector.broadcast(F, p[pr + 3 * ph]);
            a30 = k0.fma(b3, a30); a31 = k1.fma(b3, a31); a32 = k2.fma(b3, a32);
            FloatVector b4 = FloatVector.broadcast(F, p[pr + 4 * ph]);
            a40 = k0.fma(b4, a40); a41 = k1.fma(b4, a41); a42 = k2.fma(b4, a42);
            FloatVector b5 = FloatVector.broadcast(F, p[pr + 5 * ph]);
            a50 = k0.fma(b5, a50); a51 = k1.fma(b5, a51); a52 = k2.fma(b5, a52);
            FloatVector b6 = FloatVector.broadcast(F, p[pr + 6 * ph]);
            a60 = k0.fma(b6, a60); a61 = k1.fma(b6, a61); a62 = k2.fma(b6, a62);
            FloatVector b7 = FloatVector.broadcast(F, p[pr + 7 * ph]);
            a70 = k0.fma(b7, a70); a71 = k1.fma(b7, a71); a72 = k2.fma(b7, a72);
        }
        AHEAD[0] = ahead;
        a00.intoArray(o, o0); a01.intoArray(o, o0 + L); a02.intoArray(o, o0 + 2 * L);
        a10.intoArray(o, o0 + oh); a11.intoArray(o, o0 + oh + L); a12.intoArray(o, o0 + oh + 2 * L);
        a20.intoArray(o, o0 + 2 * oh); a21.intoArray(o, o0 + 2 * oh + L); a22.intoArray(o, o0 + 2 * oh + 2 * L);
        a30.intoArray(o, o0 + 3 * oh); a31.intoArray(o, o0 + 3 * oh + L); a32.intoArray(o, o0 + 3 * oh + 2 * L);
        a40.intoArray(o, o0 + 4 * oh); a41.intoArray(o, o0 + 4 * oh + L); a42.intoArray(o, o0 + 4 * oh + 2 * L);
        a50.intoArray(o, o0 + 5 * oh); a51.intoArray(o, o0 + 5 * oh + L); a52.intoArray(o, o0 + 5 * oh + 2 * L);
        a60.intoArray(o, o0 + 6 * oh); a61.intoArray(o, o0 + 6 * oh + L); a62.intoArray(o, o0 + 6 * oh + 2 * L);
        a70.intoArray(o, o0 + 7 * oh); a71.intoArray(o, o0 + 7 * oh + L); a72.intoArray(o, o0 + 7 * oh + 2 * L);
    }

    /** 8 heads × 2 latent vectors (the last 32 dims of 512): 16 accumulators. */
    private static void v8x2(float[] p, int p0, int ph, int pj, float[] k, int off, int w, int n, float[] o, int o0, int oh) {
        FloatVector a00 = FloatVector.fromArray(F, o, o0), a01 = FloatVector.fromArray(F, o, o0 + L);
        FloatVector a10 = FloatVector.fromArray(F, o, o0 + oh), a11 = FloatVector.fromArray(F, o, o0 + oh + L);
        FloatVector a20 = FloatVector.fromArray(F, o, o0 + 2 * oh), a21 = FloatVector.fromArray(F, o, o0 + 2 * oh + L);
        FloatVector a30 = FloatVector.fromArray(F, o, o0 + 3 * oh), a31 = FloatVector.fromArray(F, o, o0 + 3 * oh + L);
        FloatVector a40 = FloatVector.fromArray(F, o, o0 + 4 * oh), a41 = FloatVector.fromArray(F, o, o0 + 4 * oh + L);
        FloatVector a50 = FloatVector.fromArray(F, o, o0 + 5 * oh), a51 = FloatVector.fromArray(F, o, o0 + 5 * oh + L);
        FloatVector a60 = FloatVector.fromArray(F, o, o0 + 6 * oh), a61 = FloatVector.fromArray(F, o, o0 + 6 * oh + L);
        FloatVector a70 = FloatVector.fromArray(F, o, o0 + 7 * oh), a71 = FloatVector.fromArray(F, o, o0 + 7 * oh + L);
        for (int j = 0; j < n; j++) {
            int kr = off + j * w, pr = p0 + j * pj;
            FloatVector k0 = FloatVector.fromArray(F, k, kr);
            FloatVector k1 = FloatVector.fromArray(F, k, kr + L);
            FloatVector b0 = FloatVector.broadcast(F, p[pr]);
            a00 = k0.fma(b0, a00); a01 = k1.fma(b0, a01);
            FloatVector b1 = FloatVector.broadcast(F, p[pr + ph]);
            a10 = k0.fma(b1, a10); a11 = k1.fma(b1, a11);
            FloatVector b2 = FloatVector.broadcast(F, p[pr + 2 * ph]);
            a20 = k0.fma(b2, a20); a21 = k1.fma(b2, a21);
            FloatVector b3 = FloatVector.broadcast(F, p[pr + 3 * ph]);
            a30 = k0.fma(b3, a30); a31 = k1.fma(b3, a31);
            FloatVector b4 = FloatVector.broadcast(F, p[pr + 4 * ph]);
            a40 = k0.fma(b4, a40); a41 = k1.fma(b4, a41);
            FloatVector b5 = FloatVector.broadcast(F, p[pr + 5 * ph]);
            a50 = k0.fma(b5, a50); a51 = k1.fma(b5, a51);
            FloatVector b6 = FloatVector.broadcast(F, p[pr + 6 * ph]);
            a60 = k0.fma(b6, a60); a61 = k1.fma(b6, a61);
            FloatVector b7 = FloatVector.broadcast(F, p[pr + 7 * ph]);
            a70 = k0.fma(b7, a70); a71 = k1.fma(b7, a71);
        }
        a00.intoArray(o, o0); a01.intoArray(o, o0 + L);
        a10.intoArray(o, o0 + oh); a11.intoArray(o, o0 + oh + L);
        a20.intoArray(o, o0 + 2 * oh); a21.intoArray(o, o0 + 2 * oh + L);
        a30.intoArray(o, o0 + 3 * oh); a31.intoArray(o, o0 + 3 * oh + L);
        a40.intoArray(o, o0 + 4 * oh); a41.intoArray(o, o0 + 4 * oh + L);
        a50.intoArray(o, o0 + 5 * oh); a51.intoArray(o, o0 + 5 * oh + L);
        a60.intoArray(o, o0 + 6 * oh); a61.intoArray(o, o0 + 6 * oh + L);
        a70.intoArray(o, o0 + 7 * oh); a71.intoArray(o, o0 + 7 * oh + L);
    }

    /**
     * 2 heads × 4 latent vectors (the heads left over by v6x4): 8 independent accumulators keep both FMA ports busy,
     * where v1x4's 4 wait on the FMA latency. At 16 heads (4 left over) the values take 1.46-1.63 ms against
     * 1.67-1.86 with v1x4 alone (B1 T16384, alternating runs).
     */
    private static void v2x4(float[] p, int p0, int ph, int pj, float[] k, int off, int w, int n, float[] o, int o0, int oh) {
        FloatVector a00 = FloatVector.fromArray(F, o, o0), a01 = FloatVector.fromArray(F, o, o0 + L), a02 = FloatVector.fromArray(F, o, o0 + 2 * L), a03 = FloatVector.fromArray(F, o, o0 + 3 * L);
        FloatVector a10 = FloatVector.fromArray(F, o, o0 + oh), a11 = FloatVector.fromArray(F, o, o0 + oh + L), a12 = FloatVector.fromArray(F, o, o0 + oh + 2 * L), a13 = FloatVector.fromArray(F, o, o0 + oh + 3 * L);
        for (int j = 0; j < n; j++) {
            int kr = off + j * w, pr = p0 + j * pj;
            FloatVector k0 = FloatVector.fromArray(F, k, kr);
            FloatVector k1 = FloatVector.fromArray(F, k, kr + L);
            FloatVector k2 = FloatVector.fromArray(F, k, kr + 2 * L);
            FloatVector k3 = FloatVector.fromArray(F, k, kr + 3 * L);
            FloatVector b0 = FloatVector.broadcast(F, p[pr]);
            a00 = k0.fma(b0, a00); a01 = k1.fma(b0, a01); a02 = k2.fma(b0, a02); a03 = k3.fma(b0, a03);
            FloatVector b1 = FloatVector.broadcast(F, p[pr + ph]);
            a10 = k0.fma(b1, a10); a11 = k1.fma(b1, a11); a12 = k2.fma(b1, a12); a13 = k3.fma(b1, a13);
        }
        a00.intoArray(o, o0); a01.intoArray(o, o0 + L); a02.intoArray(o, o0 + 2 * L); a03.intoArray(o, o0 + 3 * L);
        a10.intoArray(o, o0 + oh); a11.intoArray(o, o0 + oh + L); a12.intoArray(o, o0 + oh + 2 * L); a13.intoArray(o, o0 + oh + 3 * L);
    }

    private static void v1x4(float[] p, int p0, int pj, float[] k, int off, int w, int n, float[] o, int o0) {
        FloatVector a0 = FloatVector.fromArray(F, o, o0), a1 = FloatVector.fromArray(F, o, o0 + L);
        FloatVector a2 = FloatVector.fromArray(F, o, o0 + 2 * L), a3 = FloatVector.fromArray(F, o, o0 + 3 * L);
        for (int j = 0; j < n; j++) {
            int kr = off + j * w;
            FloatVector b = FloatVector.broadcast(F, p[p0 + j * pj]);
            a0 = FloatVector.fromArray(F, k, kr).fma(b, a0);
            a1 = FloatVector.fromArray(F, k, kr + L).fma(b, a1);
            a2 = FloatVector.fromArray(F, k, kr + 2 * L).fma(b, a2);
            a3 = FloatVector.fromArray(F, k, kr + 3 * L).fma(b, a3);
        }
        a0.intoArray(o, o0);
        a1.intoArray(o, o0 + L);
        a2.intoArray(o, o0 + 2 * L);
        a3.intoArray(o, o0 + 3 * L);
    }

    /**
     * 8 rows × 3 head vectors: 24 accumulators; per latent column 3 loads of Qᵀ and 8 broadcasts of K for 24 FMAs.
     * Qᵀ is a panel [c, 3L] from h0: the stride a constant, so C2 drops the bounds checks (as a parameter it did not:
     * 151 against 200 GFLOP/s, 96 heads, one Xeon core).
     */
    private static void s8x3(float[] qt, int h0, float[] k, int off, int w, float[] st, int s0, int hp) {
        FloatVector a00 = FloatVector.zero(F), a01 = a00, a02 = a00, a10 = a00, a11 = a00, a12 = a00, a20 = a00, a21 = a00, a22 = a00, a30 = a00, a31 = a00, a32 = a00, a40 = a00, a41 = a00, a42 = a00, a50 = a00, a51 = a00, a52 = a00, a60 = a00, a61 = a00, a62 = a00, a70 = a00, a71 = a00, a72 = a00;
        for (int c = 0; c < w; c++) {
            int q = c * 3 * L + h0;
            FloatVector q0 = FloatVector.fromArray(F, qt, q);
            FloatVector q1 = FloatVector.fromArray(F, qt, q + L);
            FloatVector q2 = FloatVector.fromArray(F, qt, q + 2 * L);
            FloatVector b0 = FloatVector.broadcast(F, k[off + c]);
            a00 = q0.fma(b0, a00); a01 = q1.fma(b0, a01); a02 = q2.fma(b0, a02);
            FloatVector b1 = FloatVector.broadcast(F, k[off + ROW + c]);
            a10 = q0.fma(b1, a10); a11 = q1.fma(b1, a11); a12 = q2.fma(b1, a12);
            FloatVector b2 = FloatVector.broadcast(F, k[off + 2 * ROW + c]);
            a20 = q0.fma(b2, a20); a21 = q1.fma(b2, a21); a22 = q2.fma(b2, a22);
            FloatVector b3 = FloatVector.broadcast(F, k[off + 3 * ROW + c]);
            a30 = q0.fma(b3, a30); a31 = q1.fma(b3, a31); a32 = q2.fma(b3, a32);
            FloatVector b4 = FloatVector.broadcast(F, k[off + 4 * ROW + c]);
            a40 = q0.fma(b4, a40); a41 = q1.fma(b4, a41); a42 = q2.fma(b4, a42);
            FloatVector b5 = FloatVector.broadcast(F, k[off + 5 * ROW + c]);
            a50 = q0.fma(b5, a50); a51 = q1.fma(b5, a51); a52 = q2.fma(b5, a52);
            FloatVector b6 = FloatVector.broadcast(F, k[off + 6 * ROW + c]);
            a60 = q0.fma(b6, a60); a61 = q1.fma(b6, a61); a62 = q2.fma(b6, a62);
            FloatVector b7 = FloatVector.broadcast(F, k[off + 7 * ROW + c]);
            a70 = q0.fma(b7, a70); a71 = q1.fma(b7, a71); a72 = q2.fma(b7, a72);
        }
        a00.intoArray(st, s0); a01.intoArray(st, s0 + L); a02.intoArray(st, s0 + 2 * L);
        a10.intoArray(st, s0 + hp); a11.intoArray(st, s0 + hp + L); a12.intoArray(st, s0 + hp + 2 * L);
        a20.intoArray(st, s0 + 2 * hp); a21.intoArray(st, s0 + 2 * hp + L); a22.intoArray(st, s0 + 2 * hp + 2 * L);
        a30.intoArray(st, s0 + 3 * hp); a31.intoArray(st, s0 + 3 * hp + L); a32.intoArray(st, s0 + 3 * hp + 2 * L);
        a40.intoArray(st, s0 + 4 * hp); a41.intoArray(st, s0 + 4 * hp + L); a42.intoArray(st, s0 + 4 * hp + 2 * L);
        a50.intoArray(st, s0 + 5 * hp); a51.intoArray(st, s0 + 5 * hp + L); a52.intoArray(st, s0 + 5 * hp + 2 * L);
        a60.intoArray(st, s0 + 6 * hp); a61.intoArray(st, s0 + 6 * hp + L); a62.intoArray(st, s0 + 6 * hp + 2 * L);
        a70.intoArray(st, s0 + 7 * hp); a71.intoArray(st, s0 + 7 * hp + L); a72.intoArray(st, s0 + 7 * hp + 2 * L);
    }

    /** 8 rows × 2 head vectors: 16 accumulators; per latent column 2 loads of Qᵀ and 8 broadcasts of K for 16 FMAs. */
    private static void s8x2(float[] qt, int h0, float[] k, int off, int w, float[] st, int s0, int hp) {
        FloatVector a00 = FloatVector.zero(F), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00, a30 = a00, a31 = a00, a40 = a00, a41 = a00, a50 = a00, a51 = a00, a60 = a00, a61 = a00, a70 = a00, a71 = a00;
        for (int c = 0; c < w; c++) {
            int q = c * 2 * L + h0;
            FloatVector q0 = FloatVector.fromArray(F, qt, q);
            FloatVector q1 = FloatVector.fromArray(F, qt, q + L);
            FloatVector b0 = FloatVector.broadcast(F, k[off + c]);
            a00 = q0.fma(b0, a00); a01 = q1.fma(b0, a01);
            FloatVector b1 = FloatVector.broadcast(F, k[off + ROW + c]);
            a10 = q0.fma(b1, a10); a11 = q1.fma(b1, a11);
            FloatVector b2 = FloatVector.broadcast(F, k[off + 2 * ROW + c]);
            a20 = q0.fma(b2, a20); a21 = q1.fma(b2, a21);
            FloatVector b3 = FloatVector.broadcast(F, k[off + 3 * ROW + c]);
            a30 = q0.fma(b3, a30); a31 = q1.fma(b3, a31);
            FloatVector b4 = FloatVector.broadcast(F, k[off + 4 * ROW + c]);
            a40 = q0.fma(b4, a40); a41 = q1.fma(b4, a41);
            FloatVector b5 = FloatVector.broadcast(F, k[off + 5 * ROW + c]);
            a50 = q0.fma(b5, a50); a51 = q1.fma(b5, a51);
            FloatVector b6 = FloatVector.broadcast(F, k[off + 6 * ROW + c]);
            a60 = q0.fma(b6, a60); a61 = q1.fma(b6, a61);
            FloatVector b7 = FloatVector.broadcast(F, k[off + 7 * ROW + c]);
            a70 = q0.fma(b7, a70); a71 = q1.fma(b7, a71);
        }
        a00.intoArray(st, s0); a01.intoArray(st, s0 + L);
        a10.intoArray(st, s0 + hp); a11.intoArray(st, s0 + hp + L);
        a20.intoArray(st, s0 + 2 * hp); a21.intoArray(st, s0 + 2 * hp + L);
        a30.intoArray(st, s0 + 3 * hp); a31.intoArray(st, s0 + 3 * hp + L);
        a40.intoArray(st, s0 + 4 * hp); a41.intoArray(st, s0 + 4 * hp + L);
        a50.intoArray(st, s0 + 5 * hp); a51.intoArray(st, s0 + 5 * hp + L);
        a60.intoArray(st, s0 + 6 * hp); a61.intoArray(st, s0 + 6 * hp + L);
        a70.intoArray(st, s0 + 7 * hp); a71.intoArray(st, s0 + 7 * hp + L);
    }

    /** 8 rows × 1 head vector: 8 accumulators; per latent column 1 load of Qᵀ and 8 broadcasts of K for 8 FMAs. */
    private static void s8x1(float[] qt, int h0, float[] k, int off, int w, float[] st, int s0, int hp) {
        FloatVector a00 = FloatVector.zero(F), a10 = a00, a20 = a00, a30 = a00, a40 = a00, a50 = a00, a60 = a00, a70 = a00;
        for (int c = 0; c < w; c++) {
            int q = c * L + h0;
            FloatVector q0 = FloatVector.fromArray(F, qt, q);
            FloatVector b0 = FloatVector.broadcast(F, k[off + c]);
            a00 = q0.fma(b0, a00);
            FloatVector b1 = FloatVector.broadcast(F, k[off + ROW + c]);
            a10 = q0.fma(b1, a10);
            FloatVector b2 = FloatVector.broadcast(F, k[off + 2 * ROW + c]);
            a20 = q0.fma(b2, a20);
            FloatVector b3 = FloatVector.broadcast(F, k[off + 3 * ROW + c]);
            a30 = q0.fma(b3, a30);
            FloatVector b4 = FloatVector.broadcast(F, k[off + 4 * ROW + c]);
            a40 = q0.fma(b4, a40);
            FloatVector b5 = FloatVector.broadcast(F, k[off + 5 * ROW + c]);
            a50 = q0.fma(b5, a50);
            FloatVector b6 = FloatVector.broadcast(F, k[off + 6 * ROW + c]);
            a60 = q0.fma(b6, a60);
            FloatVector b7 = FloatVector.broadcast(F, k[off + 7 * ROW + c]);
            a70 = q0.fma(b7, a70);
        }
        a00.intoArray(st, s0);
        a10.intoArray(st, s0 + hp);
        a20.intoArray(st, s0 + 2 * hp);
        a30.intoArray(st, s0 + 3 * hp);
        a40.intoArray(st, s0 + 4 * hp);
        a50.intoArray(st, s0 + 5 * hp);
        a60.intoArray(st, s0 + 6 * hp);
        a70.intoArray(st, s0 + 7 * hp);
    }

    /**
     * {@link #s16x1} that also reads one number of k[pf …] per latent column (one per 64-byte line: the next 16 rows
     * at pf, 16·w numbers in bounds) summed into a number the JIT cannot drop. At 16 heads a cached number carries 32
     * FLOPs and the kernel waits on the L3; those loads start the next block's lines while this block computes (Java
     * has no prefetch instruction). A copy of
     * s16x1 rather than a parameter, as {@link #v8x3Ahead}: the kernel is too large to inline, so a flag would be a
     * branch in its loop, and s16x1 with the extra load and add measured slower where nothing is read ahead.
     */
    private static void s16x1Ahead(float[] qt, int h0, float[] k, int off, int w, float[] st, int s0, int hp, int pf) {
        FloatVector a00 = FloatVector.zero(F), a01 = a00, a02 = a00, a03 = a00, a04 = a00, a05 = a00, a06 = a00, a07 = a00, a08 = a00, a09 = a00, a10 = a00, a11 = a00, a12 = a00, a13 = a00, a14 = a00, a15 = a00;
        float ahead = 0f;
        for (int c = 0; c < w; c++) {
            FloatVector q0 = FloatVector.fromArray(F, qt, c * L + h0);
            ahead += k[pf + c * LINE];
            a00 = q0.fma(FloatVector.broadcast(F, k[off + c]), a00);
            a01 = q0.fma(FloatVector.broadcast(F, k[off + ROW + c]), a01);
            a02 = q0.fma(FloatVector.broadcast(F, k[off + 2 * ROW + c]), a02);
            a03 = q0.fma(FloatVector.broadcast(F, k[off + 3 * ROW + c]), a03);
            a04 = q0.fma(FloatVector.broadcast(F, k[off + 4 * ROW + c]), a04);
            a05 = q0.fma(FloatVector.broadcast(F, k[off + 5 * ROW + c]), a05);
            a06 = q0.fma(FloatVector.broadcast(F, k[off + 6 * ROW + c]), a06);
            a07 = q0.fma(FloatVector.broadcast(F, k[off + 7 * ROW + c]), a07);
            a08 = q0.fma(FloatVector.broadcast(F, k[off + 8 * ROW + c]), a08);
            a09 = q0.fma(FloatVector.broadcast(F, k[off + 9 * ROW + c]), a09);
            a10 = q0.fma(FloatVector.broadcast(F, k[off + 10 * ROW + c]), a10);
            a11 = q0.fma(FloatVector.broadcast(F, k[off + 11 * ROW + c]), a11);
            a12 = q0.fma(FloatVector.broadcast(F, k[off + 12 * ROW + c]), a12);
            a13 = q0.fma(FloatVector.broadcast(F, k[off + 13 * ROW + c]), a13);
            a14 = q0.fma(FloatVector.broadcast(F, k[off + 14 * ROW + c]), a14);
            a15 = q0.fma(FloatVector.broadcast(F, k[off + 15 * ROW + c]), a15);
        }
        AHEAD[0] = ahead;
        a00.intoArray(st, s0);
        a01.intoArray(st, s0 + hp);
        a02.intoArray(st, s0 + 2 * hp);
        a03.intoArray(st, s0 + 3 * hp);
        a04.intoArray(st, s0 + 4 * hp);
        a05.intoArray(st, s0 + 5 * hp);
        a06.intoArray(st, s0 + 6 * hp);
        a07.intoArray(st, s0 + 7 * hp);
        a08.intoArray(st, s0 + 8 * hp);
        a09.intoArray(st, s0 + 9 * hp);
        a10.intoArray(st, s0 + 10 * hp);
        a11.intoArray(st, s0 + 11 * hp);
        a12.intoArray(st, s0 + 12 * hp);
        a13.intoArray(st, s0 + 13 * hp);
        a14.intoArray(st, s0 + 14 * hp);
        a15.intoArray(st, s0 + 15 * hp);
    }

    /**
     * 16 rows × 1 head vector: 16 accumulators; per latent column 1 load of Qᵀ and 16 broadcasts of K for 16 FMAs.
     * Where the caller touched the tile first ({@link #TOUCH_SCORES}); elsewhere {@link #s16x1Ahead}.
     */
    private static void s16x1(float[] qt, int h0, float[] k, int off, int w, float[] st, int s0, int hp) {
        FloatVector a00 = FloatVector.zero(F), a01 = a00, a02 = a00, a03 = a00, a04 = a00, a05 = a00, a06 = a00, a07 = a00, a08 = a00, a09 = a00, a10 = a00, a11 = a00, a12 = a00, a13 = a00, a14 = a00, a15 = a00;
        for (int c = 0; c < w; c++) {
            FloatVector q0 = FloatVector.fromArray(F, qt, c * L + h0);
            a00 = q0.fma(FloatVector.broadcast(F, k[off + c]), a00);
            a01 = q0.fma(FloatVector.broadcast(F, k[off + ROW + c]), a01);
            a02 = q0.fma(FloatVector.broadcast(F, k[off + 2 * ROW + c]), a02);
            a03 = q0.fma(FloatVector.broadcast(F, k[off + 3 * ROW + c]), a03);
            a04 = q0.fma(FloatVector.broadcast(F, k[off + 4 * ROW + c]), a04);
            a05 = q0.fma(FloatVector.broadcast(F, k[off + 5 * ROW + c]), a05);
            a06 = q0.fma(FloatVector.broadcast(F, k[off + 6 * ROW + c]), a06);
            a07 = q0.fma(FloatVector.broadcast(F, k[off + 7 * ROW + c]), a07);
            a08 = q0.fma(FloatVector.broadcast(F, k[off + 8 * ROW + c]), a08);
            a09 = q0.fma(FloatVector.broadcast(F, k[off + 9 * ROW + c]), a09);
            a10 = q0.fma(FloatVector.broadcast(F, k[off + 10 * ROW + c]), a10);
            a11 = q0.fma(FloatVector.broadcast(F, k[off + 11 * ROW + c]), a11);
            a12 = q0.fma(FloatVector.broadcast(F, k[off + 12 * ROW + c]), a12);
            a13 = q0.fma(FloatVector.broadcast(F, k[off + 13 * ROW + c]), a13);
            a14 = q0.fma(FloatVector.broadcast(F, k[off + 14 * ROW + c]), a14);
            a15 = q0.fma(FloatVector.broadcast(F, k[off + 15 * ROW + c]), a15);
        }
        a00.intoArray(st, s0);
        a01.intoArray(st, s0 + hp);
        a02.intoArray(st, s0 + 2 * hp);
        a03.intoArray(st, s0 + 3 * hp);
        a04.intoArray(st, s0 + 4 * hp);
        a05.intoArray(st, s0 + 5 * hp);
        a06.intoArray(st, s0 + 6 * hp);
        a07.intoArray(st, s0 + 7 * hp);
        a08.intoArray(st, s0 + 8 * hp);
        a09.intoArray(st, s0 + 9 * hp);
        a10.intoArray(st, s0 + 10 * hp);
        a11.intoArray(st, s0 + 11 * hp);
        a12.intoArray(st, s0 + 12 * hp);
        a13.intoArray(st, s0 + 13 * hp);
        a14.intoArray(st, s0 + 14 * hp);
        a15.intoArray(st, s0 + 15 * hp);
    }

    /**
     * 8 rows × 16 heads with two cached numbers a broadcast ({@link #PAIR_SCORES}): Qᵀ in column pairs ({@link
     * #qtIndex}), vector 0 heads [0, L/2), vector 1 heads [L/2, L), each head's columns 2m and 2m + 1 in adjacent lanes;
     * K[row, 2m..2m+1] broadcast as one 64-bit lane pair (a float array has no 64-bit broadcast in the Vector API, so
     * the two numbers go through a long; a heap MemorySegment's long read in the same loop ran 8 times slower). 16
     * accumulators, per column pair 2 loads of Qᵀ and 8 broadcasts for 16 FMAs; at the end each head's two lanes are
     * added. A head's score is the sum of its even columns plus the sum of its odd ones, not the columns in order, so its
     * last bits differ from s16x1's. w even. A stand-alone copy on one core of a 2-vCPU Zen 4 (512-bit FMAs as two
     * halves), a 128-row tile in L2, six rounds alternating: 99.7–104.7 GFLOP/s against s16x1's 85.0–87.2, of a 115 peak
     * (2026-12-08).
     *
     * <p>Written out, with no helper method: with the broadcasts and the sums at the end in helpers, C2 left them as
     * calls in some JVMs (its node budget spent, or the code after the loop judged cold where it compiled the loop
     * alone), and the accumulators went through the heap on every column: 9–31 GFLOP/s (docs/cpu-kernels.md §6).
     */
    private static void s8x2p(float[] qt, int h0, float[] k, int off, int w, float[] st, int s0, int hp) {
        FloatVector z = FloatVector.zero(F), a00 = z, a01 = z, a10 = z, a11 = z, a20 = z, a21 = z, a30 = z, a31 = z, a40 = z, a41 = z, a50 = z, a51 = z, a60 = z, a61 = z, a70 = z, a71 = z;
        for (int c = 0; c < w; c += 2) {
            int q = c * L + h0, kc = off + c;
            FloatVector q0 = FloatVector.fromArray(F, qt, q), q1 = FloatVector.fromArray(F, qt, q + L);
            FloatVector b0 = LongVector.broadcast(PAIR, Float.floatToRawIntBits(k[kc]) & 0xFFFF_FFFFL | (long) Float.floatToRawIntBits(k[kc + 1]) << 32).reinterpretAsFloats();
            a00 = q0.fma(b0, a00); a01 = q1.fma(b0, a01);
            FloatVector b1 = LongVector.broadcast(PAIR, Float.floatToRawIntBits(k[kc + ROW]) & 0xFFFF_FFFFL | (long) Float.floatToRawIntBits(k[kc + ROW + 1]) << 32).reinterpretAsFloats();
            a10 = q0.fma(b1, a10); a11 = q1.fma(b1, a11);
            FloatVector b2 = LongVector.broadcast(PAIR, Float.floatToRawIntBits(k[kc + 2 * ROW]) & 0xFFFF_FFFFL | (long) Float.floatToRawIntBits(k[kc + 2 * ROW + 1]) << 32).reinterpretAsFloats();
            a20 = q0.fma(b2, a20); a21 = q1.fma(b2, a21);
            FloatVector b3 = LongVector.broadcast(PAIR, Float.floatToRawIntBits(k[kc + 3 * ROW]) & 0xFFFF_FFFFL | (long) Float.floatToRawIntBits(k[kc + 3 * ROW + 1]) << 32).reinterpretAsFloats();
            a30 = q0.fma(b3, a30); a31 = q1.fma(b3, a31);
            FloatVector b4 = LongVector.broadcast(PAIR, Float.floatToRawIntBits(k[kc + 4 * ROW]) & 0xFFFF_FFFFL | (long) Float.floatToRawIntBits(k[kc + 4 * ROW + 1]) << 32).reinterpretAsFloats();
            a40 = q0.fma(b4, a40); a41 = q1.fma(b4, a41);
            FloatVector b5 = LongVector.broadcast(PAIR, Float.floatToRawIntBits(k[kc + 5 * ROW]) & 0xFFFF_FFFFL | (long) Float.floatToRawIntBits(k[kc + 5 * ROW + 1]) << 32).reinterpretAsFloats();
            a50 = q0.fma(b5, a50); a51 = q1.fma(b5, a51);
            FloatVector b6 = LongVector.broadcast(PAIR, Float.floatToRawIntBits(k[kc + 6 * ROW]) & 0xFFFF_FFFFL | (long) Float.floatToRawIntBits(k[kc + 6 * ROW + 1]) << 32).reinterpretAsFloats();
            a60 = q0.fma(b6, a60); a61 = q1.fma(b6, a61);
            FloatVector b7 = LongVector.broadcast(PAIR, Float.floatToRawIntBits(k[kc + 7 * ROW]) & 0xFFFF_FFFFL | (long) Float.floatToRawIntBits(k[kc + 7 * ROW + 1]) << 32).reinterpretAsFloats();
            a70 = q0.fma(b7, a70); a71 = q1.fma(b7, a71);
        }
        a00.add(a00.rearrange(SWAP_PAIRS)).rearrange(EVEN).blend(a01.add(a01.rearrange(SWAP_PAIRS)).rearrange(EVEN), HIGH).intoArray(st, s0);
        a10.add(a10.rearrange(SWAP_PAIRS)).rearrange(EVEN).blend(a11.add(a11.rearrange(SWAP_PAIRS)).rearrange(EVEN), HIGH).intoArray(st, s0 + hp);
        a20.add(a20.rearrange(SWAP_PAIRS)).rearrange(EVEN).blend(a21.add(a21.rearrange(SWAP_PAIRS)).rearrange(EVEN), HIGH).intoArray(st, s0 + 2 * hp);
        a30.add(a30.rearrange(SWAP_PAIRS)).rearrange(EVEN).blend(a31.add(a31.rearrange(SWAP_PAIRS)).rearrange(EVEN), HIGH).intoArray(st, s0 + 3 * hp);
        a40.add(a40.rearrange(SWAP_PAIRS)).rearrange(EVEN).blend(a41.add(a41.rearrange(SWAP_PAIRS)).rearrange(EVEN), HIGH).intoArray(st, s0 + 4 * hp);
        a50.add(a50.rearrange(SWAP_PAIRS)).rearrange(EVEN).blend(a51.add(a51.rearrange(SWAP_PAIRS)).rearrange(EVEN), HIGH).intoArray(st, s0 + 5 * hp);
        a60.add(a60.rearrange(SWAP_PAIRS)).rearrange(EVEN).blend(a61.add(a61.rearrange(SWAP_PAIRS)).rearrange(EVEN), HIGH).intoArray(st, s0 + 6 * hp);
        a70.add(a70.rearrange(SWAP_PAIRS)).rearrange(EVEN).blend(a71.add(a71.rearrange(SWAP_PAIRS)).rearrange(EVEN), HIGH).intoArray(st, s0 + 7 * hp);
    }

    /** One cached row against Qᵀ in column pairs (the rows left over by {@link #s8x2p}). */
    private static void s1x2p(float[] qt, int h0, float[] k, int off, int w, float[] st, int s0) {
        FloatVector a0 = FloatVector.zero(F), a1 = a0;
        for (int c = 0; c < w; c += 2) {
            FloatVector b = LongVector.broadcast(PAIR, Float.floatToRawIntBits(k[off + c]) & 0xFFFF_FFFFL | (long) Float.floatToRawIntBits(k[off + c + 1]) << 32).reinterpretAsFloats();
            a0 = FloatVector.fromArray(F, qt, c * L + h0).fma(b, a0);
            a1 = FloatVector.fromArray(F, qt, c * L + h0 + L).fma(b, a1);
        }
        a0.add(a0.rearrange(SWAP_PAIRS)).rearrange(EVEN).blend(a1.add(a1.rearrange(SWAP_PAIRS)).rearrange(EVEN), HIGH).intoArray(st, s0);
    }

    /** Lane i from lane i ^ 1: with an add, each head's two column sums in both its lanes. */
    private static final VectorShuffle<Float> SWAP_PAIRS = VectorShuffle.fromOp(F, i -> i ^ 1);
    /** Lane i from lane 2i mod L: the heads' sums, once each, in both halves. */
    private static final VectorShuffle<Float> EVEN = VectorShuffle.fromOp(F, i -> 2 * i % L);
    /** The upper half of the lanes: heads [L/2, L) come from the second vector. */
    private static final VectorMask<Float> HIGH = VectorMask.fromLong(F, -1L << L / 2);


    /**
     * 8 rows × one head vector of 16 heads held as two 256-bit halves (16 accumulators of 8 heads; 2 loads of Qᵀ and 8
     * broadcasts per 16 FMAs), Qᵀ's columns L apart as for {@link #s16x1}. For {@link #HALF_SCORES}. Reading the next
     * 8 rows ahead as s16x1Ahead does made it slower on the Zen 4 (B1 H16 T16384 scores 2.95–3.05 ms without, 3.31–3.65 with).
     *
     * <p>Its FMAs are {@code lanewise(FMA, …)} calls, not {@code fma(…)}: the only 256-bit kernel in a JVM of 512-bit
     * ones. {@code FloatVector.fma} is one method shared by every kernel, and its call of the vector class's {@code
     * lanewise} has one receiver-type profile, nearly all 512-bit; C2 inlined that profile into this kernel, guarded
     * both classes, and 16 heads ran about ten times slower for the whole JVM, in 3 JVMs of 12 on a Zen 5 set to this
     * kernel (docs/cpu-kernels.md §6). A call of {@code lanewise} here has a profile of its own, which sees only 256-bit
     * vectors; the stores go the same way ({@link #storeHalf}), and nothing here touches the shared profiles the 512-bit
     * kernels are compiled from.
     */
    private static void s8x2h(float[] qt, int h0, float[] k, int off, int w, float[] st, int s0, int hp) {
        FloatVector a00 = FloatVector.zero(H), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00, a30 = a00, a31 = a00;
        FloatVector a40 = a00, a41 = a00, a50 = a00, a51 = a00, a60 = a00, a61 = a00, a70 = a00, a71 = a00;
        for (int c = 0; c < w; c++) {
            FloatVector q0 = FloatVector.fromArray(H, qt, c * L + h0), q1 = FloatVector.fromArray(H, qt, c * L + h0 + HL);
            FloatVector b = FloatVector.broadcast(H, k[off + c]);
            a00 = q0.lanewise(FMA, b, a00); a01 = q1.lanewise(FMA, b, a01);
            b = FloatVector.broadcast(H, k[off + ROW + c]);
            a10 = q0.lanewise(FMA, b, a10); a11 = q1.lanewise(FMA, b, a11);
            b = FloatVector.broadcast(H, k[off + 2 * ROW + c]);
            a20 = q0.lanewise(FMA, b, a20); a21 = q1.lanewise(FMA, b, a21);
            b = FloatVector.broadcast(H, k[off + 3 * ROW + c]);
            a30 = q0.lanewise(FMA, b, a30); a31 = q1.lanewise(FMA, b, a31);
            b = FloatVector.broadcast(H, k[off + 4 * ROW + c]);
            a40 = q0.lanewise(FMA, b, a40); a41 = q1.lanewise(FMA, b, a41);
            b = FloatVector.broadcast(H, k[off + 5 * ROW + c]);
            a50 = q0.lanewise(FMA, b, a50); a51 = q1.lanewise(FMA, b, a51);
            b = FloatVector.broadcast(H, k[off + 6 * ROW + c]);
            a60 = q0.lanewise(FMA, b, a60); a61 = q1.lanewise(FMA, b, a61);
            b = FloatVector.broadcast(H, k[off + 7 * ROW + c]);
            a70 = q0.lanewise(FMA, b, a70); a71 = q1.lanewise(FMA, b, a71);
        }
        storeHalf(a00, st, s0); storeHalf(a01, st, s0 + HL);
        storeHalf(a10, st, s0 + hp); storeHalf(a11, st, s0 + hp + HL);
        storeHalf(a20, st, s0 + 2 * hp); storeHalf(a21, st, s0 + 2 * hp + HL);
        storeHalf(a30, st, s0 + 3 * hp); storeHalf(a31, st, s0 + 3 * hp + HL);
        storeHalf(a40, st, s0 + 4 * hp); storeHalf(a41, st, s0 + 4 * hp + HL);
        storeHalf(a50, st, s0 + 5 * hp); storeHalf(a51, st, s0 + 5 * hp + HL);
        storeHalf(a60, st, s0 + 6 * hp); storeHalf(a61, st, s0 + 6 * hp + HL);
        storeHalf(a70, st, s0 + 7 * hp); storeHalf(a71, st, s0 + 7 * hp + HL);
    }

    /**
     * The 8 lanes of a 256-bit accumulator of {@link #s8x2h} into a[at …], a lane at a time: {@code lane(i)} is an
     * abstract method, so its calls here carry this method's own receiver profile (only 256-bit vectors), where {@code
     * intoArray} is one method of every kernel whose inner call's profile is nearly all 512-bit (see s8x2h).
     */
    private static void storeHalf(FloatVector v, float[] a, int at) {
        a[at] = v.lane(0);
        a[at + 1] = v.lane(1);
        a[at + 2] = v.lane(2);
        a[at + 3] = v.lane(3);
        a[at + 4] = v.lane(4);
        a[at + 5] = v.lane(5);
        a[at + 6] = v.lane(6);
        a[at + 7] = v.lane(7);
    }

    /** 6 heads × 4 latent vectors: 24 accumulators; per cached row 4 loads of K and 6 broadcasts of P for 24 FMAs. */
    private static void v6x4(float[] p, int p0, int ph, int pj, float[] k, int off, int w, int n, float[] o, int o0, int oh) {
        FloatVector a00 = FloatVector.fromArray(F, o, o0), a01 = FloatVector.fromArray(F, o, o0 + L), a02 = FloatVector.fromArray(F, o, o0 + 2 * L), a03 = FloatVector.fromArray(F, o, o0 + 3 * L);
        FloatVector a10 = FloatVector.fromArray(F, o, o0 + oh), a11 = FloatVector.fromArray(F, o, o0 + oh + L), a12 = FloatVector.fromArray(F, o, o0 + oh + 2 * L), a13 = FloatVector.fromArray(F, o, o0 + oh + 3 * L);
        FloatVector a20 = FloatVector.fromArray(F, o, o0 + 2 * oh), a21 = FloatVector.fromArray(F, o, o0 + 2 * oh + L), a22 = FloatVector.fromArray(F, o, o0 + 2 * oh + 2 * L), a23 = FloatVector.fromArray(F, o, o0 + 2 * oh + 3 * L);
        FloatVector a30 = FloatVector.fromArray(F, o, o0 + 3 * oh), a31 = FloatVector.fromArray(F, o, o0 + 3 * oh + L), a32 = FloatVector.fromArray(F, o, o0 + 3 * oh + 2 * L), a33 = FloatVector.fromArray(F, o, o0 + 3 * oh + 3 * L);
        FloatVector a40 = FloatVector.fromArray(F, o, o0 + 4 * oh), a41 = FloatVector.fromArray(F, o, o0 + 4 * oh + L), a42 = FloatVector.fromArray(F, o, o0 + 4 * oh + 2 * L), a43 = FloatVector.fromArray(F, o, o0 + 4 * oh + 3 * L);
        FloatVector a50 = FloatVector.fromArray(F, o, o0 + 5 * oh), a51 = FloatVector.fromArray(F, o, o0 + 5 * oh + L), a52 = FloatVector.fromArray(F, o, o0 + 5 * oh + 2 * L), a53 = FloatVector.fromArray(F, o, o0 + 5 * oh + 3 * L);
        for (int j = 0; j < n; j++) {
            int kr = off + j * w, pr = p0 + j * pj;
            FloatVector k0 = FloatVector.fromArray(F, k, kr);
            FloatVector k1 = FloatVector.fromArray(F, k, kr + L);
            FloatVector k2 = FloatVector.fromArray(F, k, kr + 2 * L);
            FloatVector k3 = FloatVector.fromArray(F, k, kr + 3 * L);
            FloatVector b0 = FloatVector.broadcast(F, p[pr]);
            a00 = k0.fma(b0, a00); a01 = k1.fma(b0, a01); a02 = k2.fma(b0, a02); a03 = k3.fma(b0, a03);
            FloatVector b1 = FloatVector.broadcast(F, p[pr + ph]);
            a10 = k0.fma(b1, a10); a11 = k1.fma(b1, a11); a12 = k2.fma(b1, a12); a13 = k3.fma(b1, a13);
            FloatVector b2 = FloatVector.broadcast(F, p[pr + 2 * ph]);
            a20 = k0.fma(b2, a20); a21 = k1.fma(b2, a21); a22 = k2.fma(b2, a22); a23 = k3.fma(b2, a23);
            FloatVector b3 = FloatVector.broadcast(F, p[pr + 3 * ph]);
            a30 = k0.fma(b3, a30); a31 = k1.fma(b3, a31); a32 = k2.fma(b3, a32); a33 = k3.fma(b3, a33);
            FloatVector b4 = FloatVector.broadcast(F, p[pr + 4 * ph]);
            a40 = k0.fma(b4, a40); a41 = k1.fma(b4, a41); a42 = k2.fma(b4, a42); a43 = k3.fma(b4, a43);
            FloatVector b5 = FloatVector.broadcast(F, p[pr + 5 * ph]);
            a50 = k0.fma(b5, a50); a51 = k1.fma(b5, a51); a52 = k2.fma(b5, a52); a53 = k3.fma(b5, a53);
        }
        a00.intoArray(o, o0); a01.intoArray(o, o0 + L); a02.intoArray(o, o0 + 2 * L); a03.intoArray(o, o0 + 3 * L);
        a10.intoArray(o, o0 + oh); a11.intoArray(o, o0 + oh + L); a12.intoArray(o, o0 + oh + 2 * L); a13.intoArray(o, o0 + oh + 3 * L);
        a20.intoArray(o, o0 + 2 * oh); a21.intoArray(o, o0 + 2 * oh + L); a22.intoArray(o, o0 + 2 * oh + 2 * L); a23.intoArray(o, o0 + 2 * oh + 3 * L);
        a30.intoArray(o, o0 + 3 * oh); a31.intoArray(o, o0 + 3 * oh + L); a32.intoArray(o, o0 + 3 * oh + 2 * L); a33.intoArray(o, o0 + 3 * oh + 3 * L);
        a40.intoArray(o, o0 + 4 * oh); a41.intoArray(o, o0 + 4 * oh + L); a42.intoArray(o, o0 + 4 * oh + 2 * L); a43.intoArray(o, o0 + 4 * oh + 3 * L);
        a50.intoArray(o, o0 + 5 * oh); a51.intoArray(o, o0 + 5 * oh + L); a52.intoArray(o, o0 + 5 * oh + 2 * L); a53.intoArray(o, o0 + 5 * oh + 3 * L);
    }

    /**
     * {@link #v6x4} for P's rows in order (pj = 1) and cached rows {@link #ROW} apart, both strides constants: each
     * load's index is then a loop-invariant base plus j or j·576, and C2 drops the bounds checks and the multiplies
     * of v6x4's row loop (its machine code: 6 broadcasts, 4 loads and 24 FMAs a row, where v6x4's had 8 compares and
     * 2 multiplies more, its offsets reloaded from the stack). Version 14.
     */
    private static void v6x4Row(float[] p, int p0, int ph, float[] k, int off, int n, float[] o, int o0, int oh) {
        FloatVector a00 = FloatVector.fromArray(F, o, o0), a01 = FloatVector.fromArray(F, o, o0 + L), a02 = FloatVector.fromArray(F, o, o0 + 2 * L), a03 = FloatVector.fromArray(F, o, o0 + 3 * L);
        FloatVector a10 = FloatVector.fromArray(F, o, o0 + oh), a11 = FloatVector.fromArray(F, o, o0 + oh + L), a12 = FloatVector.fromArray(F, o, o0 + oh + 2 * L), a13 = FloatVector.fromArray(F, o, o0 + oh + 3 * L);
        FloatVector a20 = FloatVector.fromArray(F, o, o0 + 2 * oh), a21 = FloatVector.fromArray(F, o, o0 + 2 * oh + L), a22 = FloatVector.fromArray(F, o, o0 + 2 * oh + 2 * L), a23 = FloatVector.fromArray(F, o, o0 + 2 * oh + 3 * L);
        FloatVector a30 = FloatVector.fromArray(F, o, o0 + 3 * oh), a31 = FloatVector.fromArray(F, o, o0 + 3 * oh + L), a32 = FloatVector.fromArray(F, o, o0 + 3 * oh + 2 * L), a33 = FloatVector.fromArray(F, o, o0 + 3 * oh + 3 * L);
        FloatVector a40 = FloatVector.fromArray(F, o, o0 + 4 * oh), a41 = FloatVector.fromArray(F, o, o0 + 4 * oh + L), a42 = FloatVector.fromArray(F, o, o0 + 4 * oh + 2 * L), a43 = FloatVector.fromArray(F, o, o0 + 4 * oh + 3 * L);
        FloatVector a50 = FloatVector.fromArray(F, o, o0 + 5 * oh), a51 = FloatVector.fromArray(F, o, o0 + 5 * oh + L), a52 = FloatVector.fromArray(F, o, o0 + 5 * oh + 2 * L), a53 = FloatVector.fromArray(F, o, o0 + 5 * oh + 3 * L);
        int p1 = p0 + ph, p2 = p0 + 2 * ph, p3 = p0 + 3 * ph, p4 = p0 + 4 * ph, p5 = p0 + 5 * ph;
        for (int j = 0; j < n; j++) {
            int kr = off + j * ROW;
            FloatVector k0 = FloatVector.fromArray(F, k, kr);
            FloatVector k1 = FloatVector.fromArray(F, k, kr + L);
            FloatVector k2 = FloatVector.fromArray(F, k, kr + 2 * L);
            FloatVector k3 = FloatVector.fromArray(F, k, kr + 3 * L);
            FloatVector b0 = FloatVector.broadcast(F, p[p0 + j]);
            a00 = k0.fma(b0, a00); a01 = k1.fma(b0, a01); a02 = k2.fma(b0, a02); a03 = k3.fma(b0, a03);
            FloatVector b1 = FloatVector.broadcast(F, p[p1 + j]);
            a10 = k0.fma(b1, a10); a11 = k1.fma(b1, a11); a12 = k2.fma(b1, a12); a13 = k3.fma(b1, a13);
            FloatVector b2 = FloatVector.broadcast(F, p[p2 + j]);
            a20 = k0.fma(b2, a20); a21 = k1.fma(b2, a21); a22 = k2.fma(b2, a22); a23 = k3.fma(b2, a23);
            FloatVector b3 = FloatVector.broadcast(F, p[p3 + j]);
            a30 = k0.fma(b3, a30); a31 = k1.fma(b3, a31); a32 = k2.fma(b3, a32); a33 = k3.fma(b3, a33);
            FloatVector b4 = FloatVector.broadcast(F, p[p4 + j]);
            a40 = k0.fma(b4, a40); a41 = k1.fma(b4, a41); a42 = k2.fma(b4, a42); a43 = k3.fma(b4, a43);
            FloatVector b5 = FloatVector.broadcast(F, p[p5 + j]);
            a50 = k0.fma(b5, a50); a51 = k1.fma(b5, a51); a52 = k2.fma(b5, a52); a53 = k3.fma(b5, a53);
        }
        a00.intoArray(o, o0); a01.intoArray(o, o0 + L); a02.intoArray(o, o0 + 2 * L); a03.intoArray(o, o0 + 3 * L);
        a10.intoArray(o, o0 + oh); a11.intoArray(o, o0 + oh + L); a12.intoArray(o, o0 + oh + 2 * L); a13.intoArray(o, o0 + oh + 3 * L);
        a20.intoArray(o, o0 + 2 * oh); a21.intoArray(o, o0 + 2 * oh + L); a22.intoArray(o, o0 + 2 * oh + 2 * L); a23.intoArray(o, o0 + 2 * oh + 3 * L);
        a30.intoArray(o, o0 + 3 * oh); a31.intoArray(o, o0 + 3 * oh + L); a32.intoArray(o, o0 + 3 * oh + 2 * L); a33.intoArray(o, o0 + 3 * oh + 3 * L);
        a40.intoArray(o, o0 + 4 * oh); a41.intoArray(o, o0 + 4 * oh + L); a42.intoArray(o, o0 + 4 * oh + 2 * L); a43.intoArray(o, o0 + 4 * oh + 3 * L);
        a50.intoArray(o, o0 + 5 * oh); a51.intoArray(o, o0 + 5 * oh + L); a52.intoArray(o, o0 + 5 * oh + 2 * L); a53.intoArray(o, o0 + 5 * oh + 3 * L);
    }

    /**
     * 4 rows × 2 head vectors of a panel of Qᵀ from at (columns 2L apart): 8 accumulators, + 2 of Qᵀ and the
     * broadcasts, inside 16 registers however C2 schedules them (the scores' block with 16, {@link #atRow16}).
     */
    private static void s4x2(float[] qt, int at, float[] k, int off, int w, float[] st, int s0, int hp) {
        FloatVector a00 = FloatVector.zero(F), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00, a30 = a00, a31 = a00;
        for (int c = 0; c < w; c++) {
            int q = at + c * 2 * L;
            FloatVector q0 = FloatVector.fromArray(F, qt, q);
            FloatVector q1 = FloatVector.fromArray(F, qt, q + L);
            FloatVector b0 = FloatVector.broadcast(F, k[off + c]);
            a00 = q0.fma(b0, a00); a01 = q1.fma(b0, a01);
            FloatVector b1 = FloatVector.broadcast(F, k[off + ROW + c]);
            a10 = q0.fma(b1, a10); a11 = q1.fma(b1, a11);
            FloatVector b2 = FloatVector.broadcast(F, k[off + 2 * ROW + c]);
            a20 = q0.fma(b2, a20); a21 = q1.fma(b2, a21);
            FloatVector b3 = FloatVector.broadcast(F, k[off + 3 * ROW + c]);
            a30 = q0.fma(b3, a30); a31 = q1.fma(b3, a31);
        }
        a00.intoArray(st, s0); a01.intoArray(st, s0 + L);
        a10.intoArray(st, s0 + hp); a11.intoArray(st, s0 + hp + L);
        a20.intoArray(st, s0 + 2 * hp); a21.intoArray(st, s0 + 2 * hp + L);
        a30.intoArray(st, s0 + 3 * hp); a31.intoArray(st, s0 + 3 * hp + L);
    }

    /** 6 heads × 2 latent vectors: 12 accumulators (16 registers: + 2 of K + 1 broadcast). */
    private static void v6x2(float[] p, int p0, int ph, int pj, float[] k, int off, int w, int n, float[] o, int o0, int oh) {
        FloatVector a00 = FloatVector.fromArray(F, o, o0), a01 = FloatVector.fromArray(F, o, o0 + L);
        FloatVector a10 = FloatVector.fromArray(F, o, o0 + oh), a11 = FloatVector.fromArray(F, o, o0 + oh + L);
        FloatVector a20 = FloatVector.fromArray(F, o, o0 + 2 * oh), a21 = FloatVector.fromArray(F, o, o0 + 2 * oh + L);
        FloatVector a30 = FloatVector.fromArray(F, o, o0 + 3 * oh), a31 = FloatVector.fromArray(F, o, o0 + 3 * oh + L);
        FloatVector a40 = FloatVector.fromArray(F, o, o0 + 4 * oh), a41 = FloatVector.fromArray(F, o, o0 + 4 * oh + L);
        FloatVector a50 = FloatVector.fromArray(F, o, o0 + 5 * oh), a51 = FloatVector.fromArray(F, o, o0 + 5 * oh + L);
        for (int j = 0; j < n; j++) {
            int kr = off + j * w, pr = p0 + j * pj;
            FloatVector k0 = FloatVector.fromArray(F, k, kr);
            FloatVector k1 = FloatVector.fromArray(F, k, kr + L);
            FloatVector b0 = FloatVector.broadcast(F, p[pr]);
            a00 = k0.fma(b0, a00); a01 = k1.fma(b0, a01);
            FloatVector b1 = FloatVector.broadcast(F, p[pr + ph]);
            a10 = k0.fma(b1, a10); a11 = k1.fma(b1, a11);
            FloatVector b2 = FloatVector.broadcast(F, p[pr + 2 * ph]);
            a20 = k0.fma(b2, a20); a21 = k1.fma(b2, a21);
            FloatVector b3 = FloatVector.broadcast(F, p[pr + 3 * ph]);
            a30 = k0.fma(b3, a30); a31 = k1.fma(b3, a31);
            FloatVector b4 = FloatVector.broadcast(F, p[pr + 4 * ph]);
            a40 = k0.fma(b4, a40); a41 = k1.fma(b4, a41);
            FloatVector b5 = FloatVector.broadcast(F, p[pr + 5 * ph]);
            a50 = k0.fma(b5, a50); a51 = k1.fma(b5, a51);
        }
        a00.intoArray(o, o0); a01.intoArray(o, o0 + L);
        a10.intoArray(o, o0 + oh); a11.intoArray(o, o0 + oh + L);
        a20.intoArray(o, o0 + 2 * oh); a21.intoArray(o, o0 + 2 * oh + L);
        a30.intoArray(o, o0 + 3 * oh); a31.intoArray(o, o0 + 3 * oh + L);
        a40.intoArray(o, o0 + 4 * oh); a41.intoArray(o, o0 + 4 * oh + L);
        a50.intoArray(o, o0 + 5 * oh); a51.intoArray(o, o0 + 5 * oh + L);
    }

    /** 4 heads × 2 latent vectors over P's rows in order (pj = 1) and cached rows {@link #ROW} apart. */
    private static void v4x2Row(float[] p, int p0, int ph, float[] k, int off, int n, float[] o, int o0, int oh) {
        FloatVector a00 = FloatVector.fromArray(F, o, o0), a01 = FloatVector.fromArray(F, o, o0 + L);
        FloatVector a10 = FloatVector.fromArray(F, o, o0 + oh), a11 = FloatVector.fromArray(F, o, o0 + oh + L);
        FloatVector a20 = FloatVector.fromArray(F, o, o0 + 2 * oh), a21 = FloatVector.fromArray(F, o, o0 + 2 * oh + L);
        FloatVector a30 = FloatVector.fromArray(F, o, o0 + 3 * oh), a31 = FloatVector.fromArray(F, o, o0 + 3 * oh + L);
        int p1 = p0 + ph, p2 = p0 + 2 * ph, p3 = p0 + 3 * ph;
        for (int j = 0; j < n; j++) {
            int kr = off + j * ROW;
            FloatVector k0 = FloatVector.fromArray(F, k, kr);
            FloatVector k1 = FloatVector.fromArray(F, k, kr + L);
            FloatVector b0 = FloatVector.broadcast(F, p[p0 + j]);
            a00 = k0.fma(b0, a00); a01 = k1.fma(b0, a01);
            FloatVector b1 = FloatVector.broadcast(F, p[p1 + j]);
            a10 = k0.fma(b1, a10); a11 = k1.fma(b1, a11);
            FloatVector b2 = FloatVector.broadcast(F, p[p2 + j]);
            a20 = k0.fma(b2, a20); a21 = k1.fma(b2, a21);
            FloatVector b3 = FloatVector.broadcast(F, p[p3 + j]);
            a30 = k0.fma(b3, a30); a31 = k1.fma(b3, a31);
        }
        a00.intoArray(o, o0); a01.intoArray(o, o0 + L);
        a10.intoArray(o, o0 + oh); a11.intoArray(o, o0 + oh + L);
        a20.intoArray(o, o0 + 2 * oh); a21.intoArray(o, o0 + 2 * oh + L);
        a30.intoArray(o, o0 + 3 * oh); a31.intoArray(o, o0 + 3 * oh + L);
    }
}
