package org.tornadomla.fast;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import org.tornadomla.kernels.CacheLayout;
import org.tornadomla.kernels.Softmax;

import java.util.stream.IntStream;

import static org.tornadomla.fast.Vec.F;
import static org.tornadomla.fast.Vec.L;

/**
 * java-fast's ABSORBED path ({@link org.tornadomla.kernels.AbsorbedAttention}, {@link Softmax}): the scores of
 * every head against the latent rows, the softmax over them, and the weighted sum of the latent rows, each a
 * task of the graph with the reference's layouts (scores [rows, H, capacity]). The two products are
 * {@link Gemm}'s micro-kernels over tiles of {@link #TILE} cached rows, decoded once per tile for a quantised
 * cache ({@link LatentTiles}).
 *
 * <p>Versions (B1 H128 T4096 f32; figures from {@code ./mla bench --breakdown}, docs/benchmarks.md):
 * <ol>
 *   <li>per group of 8 heads, 4 × 4 dot-product blocks over 64 rows: scores 39 %, values 46 % of the FMA peak on
 *   a 2-core Xeon.</li>
 *   <li>all heads of a row per task, outer-product blocks ({@link Gemm}); the context cut into about two
 *   pieces per thread for the scores, the latent dims into blocks of 64 for the values.</li>
 *   <li>values cut by the context like the scores, the tile's probabilities copied to Pᵀ [j, h] (heads of a token
 *   adjacent), whole cached rows read once per task, partial sums added at the end: 2.05-2.2 ms instead of
 *   2.25-2.27 on a host where values ran slow, equal otherwise.</li>
 *   <li>the values read P in place (a head's probabilities capacity numbers after the previous head's) instead of
 *   copying each tile to Pᵀ, and two heads left over by the 6-head blocks get an 8-accumulator block instead of
 *   two 4-accumulator ones (v2x4): values at B1 H128 T4096 2.21 → 1.85 ms, B8 17.2 → 14.2 ms, B1 H16 T16384
 *   1.91 → 1.52 ms (best of alternating runs of {@code ./mla bench --breakdown}, 2 Zen 5 cores, 2026-11-30). The
 *   copy had paid off on an earlier host; on this one the 128 scattered reads per tile cost more than they saved.
 *   The JIT's machine code (benchmarks/README.md, "The machine code of a kernel") shows a bounds check per
 *   broadcast of P in v6x4's row loop; kernels for contiguous P without them were tried and were no faster
 *   (values 1.50–1.54 ms against v6x4's 1.47–1.54 in alternating runs), so v6x4 stays the one values kernel.</li>
 *   <li>the scores' Sᵀ → [h, j] copy gathers L rows of a head into one vector ({@link #transposeTile}) instead of
 *   a scalar load and store per number: in a stand-alone loop of the scores task (B1 H128 T4096, the same JVM,
 *   variants alternating) the copy cost 0.14 ms on top of the products' 1.19–1.25 ms, the gathers 0.07; the
 *   task 1.41–1.45 → 1.31–1.33 ms alone, and 1.55–1.67 → 1.50–1.59 ms inside the step (three JVMs each,
 *   alternating).</li>
 *   <li>a tile read in place is touched in order, one number per cache line ({@link Vec#touch}), before the
 *   values walk it by 64-column blocks (64 rows 2304 bytes apart each, an order the prefetchers do not follow
 *   from memory): values at B1 H16 T16384 1.36–1.42 → 1.09–1.13 ms, B1 H128 T4096 1.51 → 1.45, B8 12.25 → 11.34
 *   (best of alternating runs, 2026-12-01). A vector load per line gained less (1.26: Java does not align
 *   arrays, so each load straddles two lines); the same touch before the scores, whose 8 or 16 row streams the
 *   prefetchers follow, gained nothing. The tiled path touches each tile before its scores too (1–3 %).</li>
 *   <li>the touch only where {@link Vec#TOUCH} says so: not on an Intel CPU, where the values' own reads kept the
 *   prefetchers busy and the touch was a pass that waited on memory alone (2-core Xeon, 2026-12-03: B1 H16 T16384
 *   values 1.76–1.81 → 1.51–1.58 ms, split_tiles 2.70–2.77 → 2.53–2.58; B1 H128 values 2.15–2.24 → 1.97–2.06).</li>
 *   <li>the values of a tile read in place read the next tile ahead as they compute, at up to 16 heads,
 *   where {@link Vec#TOUCH} is off ({@link Gemm#valuesReadingAhead}; not measured where the tile is touched): B1 H16 T16384 values 1.72–1.80 → 1.47–1.63 ms on the Xeon. Not in the tiled
 *   path, whose split_tiles measured 2.68–2.97 → 3.02–3.11 ms with it (its scores already read the next tile ahead).</li>
 *   <li>at up to 16 heads a tile read in place is touched before its scores too, where {@link Gemm#TOUCH_SCORES} says so
 *   (a Zen 5), and s16x1 then reads no rows ahead: B1 H16 T16384 scores 2.54–2.88 → 1.80–2.09 ms (2026-12-04).</li>
 *   <li>where the touch is on, the values run their blocks over two tiles read in place at a time ({@link
 *   #VALUES_RUN}, 128 rows, 295 KB in L2): each block loads and stores its 24 accumulators of o_lat once per run
 *   instead of once per tile, 256 KB of o_lat each way per 64 rows at 128 heads. The pieces and the order of the
 *   sums stay those of the tiles: the same bits. 2-vCPU Zen 5, 2026-12-05: a harness of this loop with runs of 32,
 *   64, 128 and 256 rows alternating twelve times took 2.3–2.9, 2.03–2.32, 1.90–2.48 (mostly 1.9–2.0) and 1.88–2.4
 *   ms; in {@code ./mla bench --breakdown}, six alternating pairs, B1 H128 T4096 values 2.33–2.85 → 1.90–2.64 ms
 *   (median 2.49 → 2.27; five of six pairs faster), B1 H16 T4096 0.311–0.377 → 0.285–0.325 ms (median 0.325 →
 *   0.295).</li>
 *   <li>at batch 1 and 2, where the context is cut into pieces and the executor's spinning pool runs the loop, the
 *   values' runs are shared out as threads free up: each thread walks its own stretch of runs and then takes runs
 *   from the back of the others', adding into an o_lat of its own; the threads' sums are added at the end ({@link
 *   #balancedValues}). Fixed pieces, each with a partial o_lat, left a task waiting on a thread that ran slower. 2-vCPU
 *   Zen 5, 2026-12-06, the two alternating every 20 steps in one JVM, median values: 128 heads 2–16 % faster in
 *   seven JVMs of seven, 64 heads 1–8 %, 16 heads 1–4 %. The order of the sums now depends on the threads' speeds
 *   ({@link #REPRODUCIBLE}).</li>
 *   <li>the scores' tiles shared out the same way on the spinning pool, at every batch (each tile writes its own part
 *   of the scores: the same bits whoever computes it), and the values' runs at up to 4 token rows per thread instead
 *   of 2 rows, each thread holding an o_lat per row it takes runs of ({@link #balances}). At B8 the fixed pieces were
 *   whole rows, 4 per thread, and a thread that ran slower held the task up by most of a row. 2-vCPU Zen 4,
 *   2026-12-06, alternating every 6 or 20 steps in one JVM (docs/benchmarks.md): B8 H128 T4096 values 28.2 → 24.5
 *   and 29.3 → 25.5 ms where one thread ran slower, level (22.4 / 22.5) where neither did; scores level to 9 % faster at
 *   B1 and B8 (16, 64 and 128 heads).</li>
 *   <li>the softmax takes the token rows last to first: at B8 H128 T4096 the scores (16 MB) no longer fit the L3 beside
 *   the 75 MB of cache rows the scores streamed, and the rows written last are the ones still there. 2-vCPU Zen 4,
 *   2026-12-06, alternating every 6 steps in one JVM: B8 softmax 3.29 → 2.55, 3.27 → 2.51, 3.64 → 2.53, 3.07 → 2.35,
 *   1.88 → 1.81 ms (the last in a JVM where it ran fast either way), B4 1.34 → 1.12, B1 level; the values level.</li>
 *   <li>the softmax's exps by {@link Vec#exp} (a polynomial, within 1 ulp for its arguments, results below 2^-126
 *   flushed to 0) instead of the Vector API's EXP, which took most of a row's time in L1 (0.42 of 0.52 ns a number).
 *   2-vCPU Zen 5, 2026-12-06, the two alternating every 20 (B1) or 6 (B8) steps in one JVM, softmax: B1 H128 T4096
 *   0.280 → 0.238 and 0.253 → 0.216 ms, B8 1.339 → 1.164, B1 H16 T16384 0.076 → 0.065. The last bits differ (1 ulp).</li>
 * </ol>
 * Outcome on 2 Zen 5 cores (536.7 GFLOP/s measured peak), before version 4: scores 66 %, values 53 % of the peak
 * at B1 (56 % at B8); the step 5.1 ms, 1.25× faster than PyTorch with OpenBLAS's AVX-512 kernels
 * (benchmarks/vs-torch.sh). After it (529.2 GFLOP/s measured): scores 72 %, values 65 % at B1 (62 % and 64 % at
 * B8), the step 4.96 ms, 1.24–1.32× faster than PyTorch with OpenBLAS in three runs the same hour. After
 * version 5 and the benchmark's wait for the JIT (bench.Timing; 536.7 GFLOP/s): scores 72 %, values 68 % at B1
 * (71 % and 67 % at B8), the step 4.7–4.9 ms, 1.32–1.34× faster than PyTorch in three runs (docs/benchmarks.md).
 * After version 6 and {@link Gemm}'s version 4 (540 GFLOP/s): scores 77 %, values 69 % at B1 (74 % and 70 % at
 * B8), the step 4.7 ms, 1.33× faster than PyTorch; B1 H16 T16384 1.90× (1.72× before).
 * An 8-head × 3-vector values kernel over runs of 128 rows was 0.05 ms faster alone at 128 heads (1.24–1.27
 * against 1.29–1.31 ms) and slower in the step over tiles of 64 (1.60 against 1.48 ms): it serves only up to 16
 * heads ({@link Gemm}'s version 5).
 * Tried for the values and kept out, A/B in alternating runs of {@code ./mla bench --breakdown}: runs of up to
 * 256 rows read in place instead of tiles of 64 (step 5.83/5.77/5.78 ms against 5.78/5.74/5.49), and passes
 * of 32 rows so that Pᵀ and the K block share L1 (5.91/5.72/6.10 against 5.44/5.66/5.85): no gain. For the
 * scores, the Sᵀ → [h, j] copy cost about 0.17 ms of 1.75 (measured by leaving it out); 16 × 16 register
 * transposes with two-vector permutes gained nothing (1.77 against 1.75), gathers a little in the whole step
 * (1.65 against 1.73) and half of the copy's cost in a stand-alone loop (version 5).
 */
public final class FastAttention {
    private FastAttention() {
    }

    /** Cached rows per tile: 64 rows of 576 floats (147 KB) stay in L2 while every head uses them. */
    static final int TILE = 64;
    /** Latent columns of Qᵀ per packing task. */
    static final int PACK = 64;
    /**
     * Tiles read in place that the values take in one pass of their blocks (version 10), and that make one tile of
     * the tiled path ({@link FastOnlineSoftmax}'s version 3): 2 where {@link Vec#TOUCH} is on (measured on a Zen 5),
     * else 1 (the Xeon's read-ahead of the next tile, version 8, stays as measured).
     * {@code -Dtornadomla.fast.valuesRuns=true|false} overrides it, and {@code mla tune} may have measured it ({@link KernelChoices}).
     */
    static final int VALUES_RUN = KernelChoices.choice("tornadomla.fast.valuesRuns", KernelChoices.autoValuesRuns(Vec.TOUCH)) ? 2 : 1;

    private static final ThreadLocal<float[]> QT = ThreadLocal.withInitial(() -> new float[0]);
    private static final ThreadLocal<float[]> ROWS = ThreadLocal.withInitial(() -> new float[0]);
    private static final ThreadLocal<float[]> ST = ThreadLocal.withInitial(() -> new float[0]);
    private static final ThreadLocal<float[]> PART = ThreadLocal.withInitial(() -> new float[0]);
    private static final ThreadLocal<int[]> GATHER = ThreadLocal.withInitial(() -> new int[L]);

    /** Qᵀ of every token row, packed in parallel into one array owned by the calling thread: [rows, w, hp]. */
    static float[] packQueries(float[] qLat, float[] q, int rows, int heads, int dn, int dr, int dc, float scale, int hp) {
        int w = dc + dr;
        float[] qt = Vec.scratch(QT, rows * w * hp);
        int blocks = (w + PACK - 1) / PACK;                   // latent columns per task: a 64 × hp block stays in L1
        Parallel.forEach(rows * blocks, t -> {
            int r = t / blocks, c0 = (t % blocks) * PACK;
            Gemm.packQuery(qLat, q, r, heads, dn, dr, dc, scale, qt, r * w * hp, hp, c0, Math.min(w, c0 + PACK));
        });
        return qt;
    }

    public static void absorbedScores(float[] qLat, float[] q, float[] kvFloats, short[] kvHalves, byte[] kvBytes, int dtype,
                                      float[] scores, int[] attnMeta, int rows, int capacity, int blockSize, int heads,
                                      int dn, int dr, int dc, float scale) {
        int w = dc + dr, hp = Gemm.paddedHeads(heads), ws = Gemm.tileStride(w);
        float[] qt = packQueries(qLat, q, rows, heads, dn, dr, dc, scale, hp);
        // on the executor's spinning pool the tiles of every row are shared out as threads free up (version 12); each
        // tile's scores go to their own place in scores, so who computes a tile leaves the bits as they are
        SpinPool pool = Parallel.pool();
        if (pool != null) {
            int[] tileStarts = runStarts(attnMeta, rows, 1);
            pool.forEachStretched(tileStarts[rows], (slot, tileIndex) -> {
                int r = rowOf(tileStarts, rows, tileIndex);
                scoresOfTile(qt, kvFloats, kvHalves, kvBytes, dtype, scores, attnMeta, r, tileIndex - tileStarts[r], capacity, blockSize, heads, hp, w, dc, ws);
            });
            return;
        }
        int pieces = Parallel.piecesPerItem(rows);
        Parallel.forEach(rows * pieces, task -> {
            int r = task / pieces, piece = task % pieces;
            int len = CacheLayout.metaRowPosition(attnMeta, r) + 1;
            int tiles = (len + TILE - 1) / TILE, per = (tiles + pieces - 1) / pieces;
            for (int tile = piece * per; tile < Math.min(tiles, (piece + 1) * per); tile++) {
                scoresOfTile(qt, kvFloats, kvHalves, kvBytes, dtype, scores, attnMeta, r, tile, capacity, blockSize, heads, hp, w, dc, ws);
            }
        });
    }

    /** The scores of every head against tile {@code tile} of token row r's cached rows, into scores [r, h, j]. */
    private static void scoresOfTile(float[] qt, float[] kvFloats, short[] kvHalves, byte[] kvBytes, int dtype, float[] scores, int[] attnMeta,
                                     int r, int tile, int capacity, int blockSize, int heads, int hp, int w, int dc, int ws) {
        int len = CacheLayout.metaRowPosition(attnMeta, r) + 1, table = CacheLayout.metaRowTable(attnMeta, r);
        float[] buf = Vec.scratch(ROWS, TILE * ws);
        float[] st = Vec.scratch(ST, TILE * hp);
        int[] rowsOfL = gatherIndices(hp);
        int j0 = tile * TILE, n = Math.min(TILE, len - j0);
        int off = LatentTiles.tile(kvFloats, kvHalves, kvBytes, dtype, attnMeta, table, j0, n, blockSize, w, dc, buf, ws);
        boolean inPlace = dtype == CacheLayout.F32 && inOneBlock(j0, n, blockSize);
        if (inPlace && Gemm.TOUCH_SCORES && hp == L) Vec.touch(kvFloats, off, off + n * w);   // one head vector (version 9)
        Gemm.scores(qt, r * w * hp, hp, inPlace ? kvFloats : buf, off, inPlace ? w : ws, w, n, st, 0);
        transposeTile(st, hp, heads, n, scores, r * heads * capacity + j0, capacity, rowsOfL);
    }

    /** j·hp for j &lt; L: the offsets in Sᵀ of one head's scores for L consecutive rows (per thread, no allocation in a step). */
    static int[] gatherIndices(int hp) {
        int[] idx = GATHER.get();
        if (idx[1] != hp) {
            for (int j = 0; j < L; j++) idx[j] = j * hp;
        }
        return idx;
    }

    /**
     * Sᵀ [j, h] (rows hp apart) → scores [h, j] (rows capacity apart from s0): L rows of a head gathered into one
     * vector: 0.07 ms of the scores' 1.31–1.33 at B1 H128 T4096, where a scalar load and store per number took
     * 0.14 (alternating runs, 2 Zen 5 cores).
     */
    static void transposeTile(float[] st, int hp, int heads, int n, float[] scores, int s0, int capacity, int[] rowsOfL) {
        for (int h = 0; h < heads; h++) {
            int to = s0 + h * capacity, j = 0;
            for (; j <= n - L; j += L) FloatVector.fromArray(F, st, j * hp + h, rowsOfL, 0).intoArray(scores, to + j);
            for (; j < n; j++) scores[to + j] = st[j * hp + h];
        }
    }

    /** Whether positions [j0, j0 + n) lie in one block (an f32 cache's tile is then read in place, {@link LatentTiles#tile}). */
    static boolean inOneBlock(int j0, int n, int blockSize) {
        return j0 % blockSize + n <= blockSize;
    }

    public static void softmax(float[] scores, int[] attnMeta, int rows, int capacity, int heads) {
        // last token row first (version 13): the scores wrote it last, so it is the likeliest still in the L3, and what
        // the earlier rows bring back from memory then evicts rows already done rather than rows still to do
        int n = rows * heads;
        Parallel.forEach(n, i -> {
            int rh = n - 1 - i;
            int r = rh / heads;
            int len = CacheLayout.metaRowPosition(attnMeta, r) + 1;
            if (len == 0) return;                                  // a padding row
            int base = rh * capacity;
            softmaxRow(scores, base, len);
        });
    }

    /** Softmax in place of scores[base, base + len), len &gt; 0 (also the sparse rows' of {@link FastSparseAttention}). */
    static void softmaxRow(float[] scores, int base, int len) {
        // the max starts at the first score (Softmax's convention: every finite score handled exactly)
        FloatVector vmax = FloatVector.broadcast(F, scores[base]);
        int j = 0;
        for (; j <= len - L; j += L) vmax = vmax.max(FloatVector.fromArray(F, scores, base + j));
        float max = vmax.reduceLanes(VectorOperators.MAX);
        for (; j < len; j++) max = Math.max(max, scores[base + j]);
        max = Softmax.shift(max);
        FloatVector vm = FloatVector.broadcast(F, max), vsum = FloatVector.zero(F);
        for (j = 0; j <= len - L; j += L) {
            FloatVector e = Vec.exp(FloatVector.fromArray(F, scores, base + j).sub(vm));
            e.intoArray(scores, base + j);
            vsum = vsum.add(e);
        }
        float sum = Vec.sum(vsum);
        for (; j < len; j++) {
            float e = (float) Math.exp(scores[base + j] - max);
            scores[base + j] = e;
            sum += e;
        }
        Vec.scale(scores, base, len, sum > 0f ? 1f / sum : 0f);   // 0: every score is −∞, every weight 0
    }

    public static void absorbedValues(float[] probs, float[] kvFloats, short[] kvHalves, byte[] kvBytes, int dtype, float[] oLat,
                                      int[] attnMeta, int rows, int capacity, int blockSize, int heads, int dc, int dr) {
        absorbedValues(probs, kvFloats, kvHalves, kvBytes, dtype, oLat, attnMeta, rows, capacity, blockSize, heads, dc, dr, VALUES_RUN);
    }

    /**
     * Whether java-fast keeps to fixed pieces of work where it would otherwise share runs out as threads free up
     * ({@link #balances}): {@code -Dtornadomla.fast.reproducible=true} makes the order of the sums independent of the
     * threads' speeds. Read once, when the class loads.
     */
    static final boolean REPRODUCIBLE = Boolean.getBoolean("tornadomla.fast.reproducible");

    /**
     * Whether the values of {@code rows} token rows are shared out run by run ({@link #balancedValues}) on a pool of
     * {@code threads} rather than in fixed pieces: on more than one thread, at most 4 token rows per thread (with more,
     * the fixed pieces are whole rows, more than 4 per thread, and a thread that runs slower holds the task up by at
     * most about a quarter of a thread's share, less the more rows; each thread's o_lat per row it takes runs of would
     * be memory for little gain), and not where {@link #REPRODUCIBLE}.
     */
    static boolean balances(int rows, int threads) {
        return !REPRODUCIBLE && threads > 1 && rows <= 4 * threads;
    }

    /**
     * {@link #absorbedValues} with the tiles per run of the values' blocks given (tests run 1 and 2 on every machine).
     * Where {@link #balances} and the executor's spinning pool runs the loop, the runs go to whichever thread is free
     * ({@link #balancedValues}); else each piece has its own partial sums.
     */
    static void absorbedValues(float[] probs, float[] kvFloats, short[] kvHalves, byte[] kvBytes, int dtype, float[] oLat,
                               int[] attnMeta, int rows, int capacity, int blockSize, int heads, int dc, int dr, int valuesRun) {
        int ws = Gemm.tileStride(dc + dr), pieces = Parallel.piecesPerItem(rows), size = heads * dc;
        if (balances(rows, Parallel.threads())
                && balancedValues(probs, kvFloats, kvHalves, kvBytes, dtype, oLat, attnMeta, rows, capacity, blockSize, heads, dc, dr, valuesRun) >= 0) {
            return;
        }
        // each task reads whole cached rows of its part of the context once, in order, for every head and latent
        // dim; with several parts per token row their sums are added at the end
        float[] part = pieces > 1 ? Vec.scratch(PART, rows * pieces * size) : null;
        Parallel.forEach(rows * pieces, task -> {
            int r = task / pieces, piece = task % pieces;
            int len = CacheLayout.metaRowPosition(attnMeta, r) + 1, table = CacheLayout.metaRowTable(attnMeta, r);
            int tiles = (len + TILE - 1) / TILE, per = (tiles + pieces - 1) / pieces;
            float[] out = part != null ? part : oLat;
            int o0 = part != null ? task * size : r * size;
            java.util.Arrays.fill(out, o0, o0 + size, 0f);
            float[] buf = Vec.scratch(ROWS, TILE * ws);
            int end = Math.min(tiles, (piece + 1) * per);
            for (int tile = piece * per, run; tile < end; tile += run) {
                int j0 = tile * TILE;
                // an f32 cache read in place goes in runs of valuesRun tiles within the piece and one block, each one
                // pass of the blocks over all its rows (version 10); anything else a tile at a time, decoded or copied
                run = Math.min(valuesRun, end - tile);
                if (dtype != CacheLayout.F32 || !inOneBlock(j0, Math.min(run * TILE, len - j0), blockSize)) run = 1;
                int n = Math.min(run * TILE, len - j0);
                valuesOfRows(probs, kvFloats, kvHalves, kvBytes, dtype, attnMeta, r, table, j0, n, capacity, blockSize, heads, dc, dr, buf, out, o0);
            }
        });
        if (part != null) {
            Parallel.forEach(rows * heads, rh -> {
                int r = rh / heads, at = rh * dc, from = r * pieces * size + (rh % heads) * dc;
                System.arraycopy(part, from, oLat, at, dc);
                for (int p = 1; p < pieces; p++) Vec.axpy(1f, part, from + p * size, oLat, at, dc);
            });
        }
    }

    /**
     * o[o0 …] += the values of cached positions [j0, j0 + n) of token row r (its block table at {@code table}): read in
     * place where they lie in one block of an f32 cache, else decoded or copied into {@code buf} (then n ≤ {@link #TILE}).
     */
    private static void valuesOfRows(float[] probs, float[] kvFloats, short[] kvHalves, byte[] kvBytes, int dtype, int[] attnMeta,
                                     int r, int table, int j0, int n, int capacity, int blockSize, int heads, int dc, int dr,
                                     float[] buf, float[] o, int o0) {
        int w = dc + dr, ws = Gemm.tileStride(w);
        int off = LatentTiles.tile(kvFloats, kvHalves, kvBytes, dtype, attnMeta, table, j0, n, blockSize, w, dc, buf, ws);
        float[] src = dtype == CacheLayout.F32 && inOneBlock(j0, n, blockSize) ? kvFloats : buf;
        int stride = src == kvFloats ? w : ws;
        // P read in place, a head's row capacity numbers after the last (version 4);
        // the values walk the tile by 64-column blocks, 64 rows 2304 bytes apart each: read from memory in
        // that order the prefetchers do not keep up on a Zen 5, so a tile read in place is first touched in
        // order there (versions 6 and 7); where the touch is off, the next tile, which follows this one in the
        // cache, is read ahead as the values compute instead (version 8, measured on such a machine only)
        if (src == kvFloats && Vec.TOUCH) Vec.touch(src, off, off + n * w);
        if (src == kvFloats && !Vec.TOUCH) Gemm.valuesReadingAhead(probs, r * heads * capacity + j0, capacity, 1, heads, src, off, stride, n, 0, dc, o, o0, dc);
        else Gemm.values(probs, r * heads * capacity + j0, capacity, 1, heads, src, off, stride, n, 0, dc, o, o0, dc);
    }

    private static final ThreadLocal<int[]> SLOT_ROW = ThreadLocal.withInitial(() -> new int[0]);
    private static final ThreadLocal<int[]> RUN_STARTS = ThreadLocal.withInitial(() -> new int[0]);
    private static final ThreadLocal<float[][][]> SLOT_O_LAT = ThreadLocal.withInitial(() -> new float[0][][]);

    /**
     * The values of every token row in runs of {@code valuesRun} tiles (a tile at a time where a run is not read in
     * place), shared out as threads free up ({@link SpinPool#forEachStretched}: each thread walks its own stretch of
     * the runs, then takes runs from the back of the stretch with the most left). Each
     * thread adds into an o_lat of its own for each row it takes runs of (arrays per slot, made by the thread that
     * first uses them); then, per row, the sums of the threads that took runs of it are added in the order of their
     * slots. Fixed pieces held a task up on a thread that ran slower, and had a partial o_lat each. On a 2-vCPU Zen 5
     * (2026-12-06, the two alternating every 20 steps in one JVM, docs/benchmarks.md), B1 H128 T4096 values 2–16 %
     * faster than the fixed pieces in seven JVMs of seven, 64 heads 1–8 %, 16 heads 1–4 %. Which runs a thread adds,
     * and so the order of the sums, depends on the threads' speeds: the result may differ in the last bits from run to
     * run ({@link #REPRODUCIBLE}). Returns how many threads took runs, or −1, doing nothing, where no spinning pool
     * runs the loop (a ForkJoin pool's threads have no slots).
     */
    static int balancedValues(float[] probs, float[] kvFloats, short[] kvHalves, byte[] kvBytes, int dtype, float[] oLat,
                              int[] attnMeta, int rows, int capacity, int blockSize, int heads, int dc, int dr, int valuesRun) {
        SpinPool pool = Parallel.pool();
        if (pool == null) return -1;
        int threads = pool.threads(), ws = Gemm.tileStride(dc + dr), size = heads * dc;
        int[] runStarts = runStarts(attnMeta, rows, valuesRun);
        int total = runStarts[rows];
        // the calling thread's tables, indexed by slot (a slot names a thread within this one loop only): slot t's
        // o_lat of row r is slotOLat[t][slotRow[t·rows + r]] (−1: none yet), one [heads, d_c] array per row it took
        // runs of; a thread walks a stretch of consecutive rows and mostly holds rows / threads + 1 of them, but runs it
        // takes from the back of others' stretches can add more (at most rows), kept for the calling thread's next steps
        float[][][] slotOLat = SLOT_O_LAT.get().length >= threads ? SLOT_O_LAT.get() : new float[threads][][];
        SLOT_O_LAT.set(slotOLat);
        for (int t = 0; t < threads; t++) {                        // room for an array per row; the arrays are made by the slot's thread
            if (slotOLat[t] == null) slotOLat[t] = new float[rows][];
            else if (slotOLat[t].length < rows) slotOLat[t] = java.util.Arrays.copyOf(slotOLat[t], rows);
        }
        int[] slotRow = SLOT_ROW.get().length >= threads * (rows + 1) ? SLOT_ROW.get() : new int[threads * (rows + 1)];
        SLOT_ROW.set(slotRow);
        java.util.Arrays.fill(slotRow, 0, threads * rows, -1);
        int held = threads * rows;                                 // slotRow[held + t]: how many arrays slot t uses
        java.util.Arrays.fill(slotRow, held, held + threads, 0);
        pool.forEachStretched(total, (slot, runIndex) -> {
            int r = rowOf(runStarts, rows, runIndex), own = slot * rows + r;
            if (slotRow[own] < 0) {                                // this thread's first run of the row: an o_lat at zero
                int k = slotRow[held + slot]++;
                float[][] mine = slotOLat[slot];
                if (mine[k] == null || mine[k].length < size) mine[k] = new float[size];   // in this thread's memory
                else java.util.Arrays.fill(mine[k], 0, size, 0f);
                slotRow[own] = k;
            }
            float[] o = slotOLat[slot][slotRow[own]];
            int len = CacheLayout.metaRowPosition(attnMeta, r) + 1, table = CacheLayout.metaRowTable(attnMeta, r);
            int j0 = (runIndex - runStarts[r]) * valuesRun * TILE;
            // the run in place where it lies in one block of an f32 cache, else its tiles one at a time
            int n = Math.min(valuesRun * TILE, len - j0), step = dtype == CacheLayout.F32 && inOneBlock(j0, n, blockSize) ? n : TILE;
            float[] buf = Vec.scratch(ROWS, TILE * ws);
            for (int j = j0; j < j0 + n; j += step) {
                valuesOfRows(probs, kvFloats, kvHalves, kvBytes, dtype, attnMeta, r, table, j, Math.min(step, j0 + n - j), capacity, blockSize,
                        heads, dc, dr, buf, o, 0);
            }
        });
        // per row and head, the sums of the threads that took runs of it (none: a padding row, o_lat 0)
        Parallel.forEach(rows * heads, rh -> {
            int r = rh / heads, at = rh * dc, from = (rh % heads) * dc;
            boolean added = false;
            for (int t = 0; t < threads; t++) {
                int k = slotRow[t * rows + r];
                if (k < 0) continue;
                if (added) Vec.axpy(1f, slotOLat[t][k], from, oLat, at, dc);
                else System.arraycopy(slotOLat[t][k], from, oLat, at, dc);
                added = true;
            }
            if (!added) java.util.Arrays.fill(oLat, at, at + dc, 0f);
        });
        int took = 0;
        for (int t = 0; t < threads; t++) if (slotRow[held + t] > 0) took++;
        return took;
    }

    /**
     * Where each token row's runs of {@code run} tiles start in one numbering over all rows: row r's runs are
     * starts[r] … starts[r + 1] − 1 ({@link #rowOf}). The calling thread's array, rewritten on every call.
     */
    private static int[] runStarts(int[] attnMeta, int rows, int run) {
        int[] starts = RUN_STARTS.get().length >= rows + 1 ? RUN_STARTS.get() : new int[rows + 1];
        RUN_STARTS.set(starts);
        for (int r = 0; r < rows; r++) starts[r + 1] = starts[r] + runsOf(CacheLayout.metaRowPosition(attnMeta, r) + 1, run);
        return starts;
    }

    /** Runs of {@code valuesRun} tiles in a row of {@code len} cached positions. */
    private static int runsOf(int len, int valuesRun) {
        return (len + valuesRun * TILE - 1) / (valuesRun * TILE);
    }

    /** The row whose runs hold {@code runIndex}: the r with runStarts[r] ≤ runIndex &lt; runStarts[r + 1] (a binary search). */
    static int rowOf(int[] runStarts, int rows, int runIndex) {
        int lo = 0, hi = rows - 1;                                 // runStarts[lo] ≤ runIndex < runStarts[hi + 1]
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (runStarts[mid] <= runIndex) lo = mid;
            else hi = mid - 1;
        }
        return lo;
    }
}
