package org.tornadomla.tornado;

import org.tornadomla.kernels.Bf16;
import org.tornadomla.kernels.CacheLayout;
import org.tornadomla.kernels.Fp8;
import uk.ac.manchester.tornado.api.KernelContext;
import uk.ac.manchester.tornado.api.annotations.Parallel;
import uk.ac.manchester.tornado.api.enums.MMAShape;
import uk.ac.manchester.tornado.api.types.HalfFloat;
import uk.ac.manchester.tornado.api.types.arrays.FloatArray;

/**
 * The ABSORBED path's scores and values on NVIDIA tensor cores (TornadoVM's CUDA backend only), chosen by
 * {@link TornadoExecutor} on that backend for a bf16 or fp8 cache (an fp8 tile is decoded into bf16 as it is staged,
 * as FlashMLA decodes its fp8 cache into shared memory). Each of the two tasks becomes three:
 * <ul>
 *   <li>{@code absorbedScores}: {@link #packQuery} rounds [q_lat | q_pe] of every (row, head) to bf16 once, two numbers a word;
 *   {@link #scores}, one warp per (row, block of {@link #M} = 16 heads, tile of {@link #N} = 8 cached rows), stages
 *   the heads' query and the tile's latent rows [c_kv | k_pe] as bf16 into shared memory and takes S = Q·Cᵀ as
 *   (d_c + d_r)/16 {@code mma.sync.m16n8k16} bf16 products (f32 accumulators) into a
 *   [rows·H, padded] {@link FloatArray}; {@link #unpackScores} writes scale·S for j ≤ the row's position into the
 *   graph's own score buffer.</li>
 *   <li>{@code absorbedValues}: {@link #packProbs} rounds the softmax's P to bf16; {@link #values}, one warp per (row,
 *   16 heads, {@link #VALUE_COLS} = 32 latent columns), walks the context in steps of 16 cached rows with P as A and
 *   the cached c_kv rows, as they lie, as four B panels; {@link #unpackValues} copies o_lat into the graph's buffer.</li>
 * </ul>
 * The softmax between them is the graph's usual kernel. Why three tasks each: TornadoVM 5.2's accumulator fragment
 * leaves the registers only through {@code KernelContext.mmaStore} into a {@link FloatArray} (reading an element is
 * refused at compile time: "address origin unimplemented: CUDAMMAComputeNode"), while the graphs' buffers are
 * {@code float[]}. The extra passes move rows·H·T·8 bytes (scores) and rows·H·T·4 (P), against the cache's
 * T·(d_c + d_r)·2 bytes that each product reads anyway.
 * <p>
 * Shared-memory layouts, as TornadoVM's {@code mmaLoadA}/{@code mmaLoadB} read them (its ldmatrix addresses: A
 * rows 32 bytes apart, B rows 16 bytes apart, a byte offset added to every lane's address): A is 16 rows × 16
 * numbers, row-major, two bf16 a word, the lower k in the low half ({@link #aWord}); a B panel is 16 k × 8
 * columns, a k's 8 columns side by side, two a word ({@link #bWord}), 256 bytes a panel. In the scores, step ks
 * of 16 numbers starts at byte {@code ks · 512} of A ({@link #stepBytesA}) and {@code ks · 256} of B ({@link #stepBytesB}).
 * The cache's bf16 numbers reach B through an {@code int[]} of one number a word ({@link #pack} says why).
 * <p>
 * <b>Compiled, not run</b>: the compile gate compiles these kernels for sm_90 through the CUDA route; no GPU
 * has run them yet. On the JVM the MMA calls do nothing, so {@code TensorCoreAttentionTest} runs the staging
 * lane by lane and checks the tile layouts against the matrix layouts of TornadoVM's own bf16 GEMM test, with an
 * emulated m16n8k16 product; {@code mla check} on a GPU run compares the whole step with the reference.
 */
public final class TensorCoreAttention {
    private TensorCoreAttention() {
    }

    /** Heads per warp (MMA rows), cached rows per warp of the scores (one 8-wide MMA panel), numbers per MMA step, widest row. */
    public static final int M = 16, N = 8, K = 16, MAX_W = 576;
    /** One warp per work-group: every MMA call is a collective of the 32 lanes of a warp. */
    public static final int WARP = 32;

    /**
     * Shapes the kernel serves: a bf16 or fp8 cache, heads in blocks of 16, d_c and d_r in steps of 16, d_c + d_r ≤ 576.
     * An fp8 number times its ue8m0 scale (a power of two) is exact in bf16, so both caches reach the tensor cores as
     * stored; an f32 cache would be rounded and an int8 one has no bf16 table, so those keep the plain kernels.
     */
    public static boolean supports(int dtype, int heads, int dc, int dr) {
        return (dtype == CacheLayout.BF16 || dtype == CacheLayout.FP8) && heads % M == 0 && dc % K == 0 && dr % K == 0
                && dc + dr <= MAX_W;
    }

    /** Row length of the score matrix and of P in bf16: the capacity rounded up to whole steps of {@link #K} cached rows. */
    public static int padded(int capacity) {
        return (capacity + K - 1) / K * K;
    }

    /** Work-groups (warps) of {@link #scores}: rows · H/16 · tiles of {@link #N} cached rows of the capacity. */
    public static int groups(int rows, int heads, int capacity) {
        return rows * (heads / M) * (padded(capacity) / N);
    }

    /** Word of A (16 rows × 16 numbers per step) that holds numbers k, k + 1 (k even) of row m. */
    static int aWord(int m, int k) {
        return (k / K) * (M * K / 2) + m * (K / 2) + (k % K) / 2;
    }

    /** Word of the scores' B (one panel of 16 numbers × 8 cached rows per step) that holds cached rows 2·np, 2·np + 1 for number k. */
    static int bWord(int np, int k) {
        return (k / K) * (K * N / 2) + (k % K) * (N / 2) + np;
    }

    /** Byte offset of step ks in the scores' A tile (16·16 bf16 a step). */
    static int stepBytesA(int ks) {
        return ks * M * K * 2;
    }

    /** Byte offset of step ks in the scores' B tile (16·8 bf16 a step). */
    static int stepBytesB(int ks) {
        return ks * K * N * 2;
    }

    /**
     * Two bf16 bit patterns in one word, {@code lo} in the low half (the lower column of the pair). Both must be ints
     * that never were {@code short}s in the kernel (loads from an {@code int[]}, {@link Bf16#encodeBits}): TornadoVM
     * 5.2's CUDA backend drops the zero-extension of a {@code short} and does the shift in 16 bits (the code it
     * generated for {@code (s0 & 0xFFFF) | (s1 << 16)} over a {@code short[]} stored {@code s0} alone).
     */
    static int pack(int lo, int hi) {
        return (lo & 0xFFFF) | (hi << 16);
    }

    /** qWords[r·H + h, k/2] = bf16 numbers k, k + 1 of [q_lat[r, h] | q_pe[r, h]], round to nearest even (pow2 = the bf16 cache's table). */
    public static void packQuery(float[] qLat, float[] q, float[] kvFloats, int[] qWords, int rows, int heads,
                                 int dn, int dr, int dc) {
        for (@Parallel int rh = 0; rh < rows * heads; rh++) {
            for (@Parallel int kp = 0; kp < (dc + dr) / 2; kp++) {
                int k = 2 * kp;                       // d_c is even: a pair never straddles q_lat and q_pe
                float v0 = k < dc ? qLat[rh * dc + k] : q[rh * (dn + dr) + dn + k - dc];
                float v1 = k < dc ? qLat[rh * dc + k + 1] : q[rh * (dn + dr) + dn + k + 1 - dc];
                qWords[rh * ((dc + dr) / 2) + kp] = pack(Bf16.encodeBits(v0, kvFloats), Bf16.encodeBits(v1, kvFloats));
            }
        }
    }

    /** Index in qWords of word i (&lt; 16·w/2) of head block hb of row r: head i / (w/2), pair i % (w/2). */
    static int queryWord(int r, int hb, int heads, int pairs, int i) {
        return (r * heads + hb * M + i / pairs) * pairs + i % pairs;
    }

    /**
     * The bf16 bit pattern of number col (&lt; w) of a slot, as an int: a bf16 cache's half as stored (sign-extended,
     * {@link #pack} masks it), an fp8 latent number decoded and times its block's scale, then encoded (exact: the scale
     * is a power of two), an fp8 cache's rope part as stored. Two returns, no conditional expression: the int and the
     * short stay apart in the generated code.
     */
    static int cacheBits(float[] kvFloats, short[] kvHalves, byte[] kvBytes, int dtype, int slot, int col, int w, int dc) {
        if (dtype == CacheLayout.FP8) {
            if (col < dc) {
                return Bf16.encodeBits(Fp8.decode(kvBytes[CacheLayout.fp8LatentIndex(slot, col, dc)], kvFloats)
                        * kvFloats[CacheLayout.fp8ScaleIndex(slot, col, dc)], kvFloats);
            }
            return kvHalves[CacheLayout.fp8RopeIndex(slot, col - dc, w - dc)];
        }
        return kvHalves[CacheLayout.valueIndex(slot, col, w)];
    }

    /**
     * Number i (&lt; 8·w) of cached rows j0 … j0 + 7 ([8, w]) as a bf16 pattern in an int ({@link #cacheBits}), 0 at
     * or past {@code len} (those slots may not exist). The kernel stores it into an {@code int[]} first, and the words
     * are packed from int loads ({@link #pack}).
     */
    static int latentRaw(float[] kvFloats, short[] kvHalves, byte[] kvBytes, int dtype, int[] attnMeta, int table, int j0,
                         int len, int blockSize, int dc, int w, int i) {
        int j = j0 + i / w;
        return j < len ? cacheBits(kvFloats, kvHalves, kvBytes, dtype, CacheLayout.slot(attnMeta, table, j, blockSize), i % w, w, dc) : 0;
    }

    /**
     * S[r·H + h, j] = q[r, h]·[c_kv | k_pe][slot(j)] for the 16 heads and 8 cached rows of this warp, unscaled; a
     * tile wholly past the row's position (and every tile of a padding row) is skipped, and {@link #unpackScores} never
     * reads it. Launch: {@link #groups} work-groups of {@link #WARP} threads. Shared memory 45 KB at w = 576.
     */
    public static void scores(KernelContext ctx, int[] qWords, float[] kvFloats, short[] kvHalves, byte[] kvBytes, int dtype,
                              int[] attnMeta, FloatArray tcScores, int capacity, int blockSize, int heads, int dc, int dr) {
        int[] aTile = ctx.allocateIntLocalArray(MAX_W * M / 2);
        int[] bTile = ctx.allocateIntLocalArray(MAX_W * N / 2);
        int[] raw = ctx.allocateIntLocalArray(MAX_W * N);
        int lane = ctx.localIdx;
        int w = dc + dr;
        int padded = padded(capacity);
        int tiles = padded / N;
        int headBlocks = heads / M;
        int t = ctx.groupIdx % tiles;
        int hb = (ctx.groupIdx / tiles) % headBlocks;
        int r = ctx.groupIdx / (tiles * headBlocks);
        int len = CacheLayout.metaRowPosition(attnMeta, r) + 1;
        int j0 = t * N;
        if (j0 < len) {   // the same for the whole warp: the collectives below run in all 32 lanes or in none
            // the tiles are written here, not in helpers: TornadoVM 5.2's CUDA backend indexes a local array that a
            // callee writes as if it were a Java array (byte offset and header) and runs past the shared tile
            int pairs = w / 2;
            int table = CacheLayout.metaRowTable(attnMeta, r);
            for (int i = lane; i < M * pairs; i += WARP) {
                aTile[aWord(i / pairs, 2 * (i % pairs))] = qWords[queryWord(r, hb, heads, pairs, i)];
            }
            for (int i = lane; i < N * w; i += WARP) {
                raw[i] = latentRaw(kvFloats, kvHalves, kvBytes, dtype, attnMeta, table, j0, len, blockSize, dc, w, i);
            }
            ctx.localBarrier();
            for (int i = lane; i < (N / 2) * w; i += WARP) {
                bTile[bWord(i / w, i % w)] = pack(raw[(2 * (i / w)) * w + i % w], raw[(2 * (i / w) + 1) * w + i % w]);
            }
            ctx.localBarrier();
            float[] acc = ctx.mmaFragment(0f);
            for (int ks = 0; ks < w / K; ks++) {
                HalfFloat[] a = ctx.mmaLoadA(aTile, K, stepBytesA(ks));
                HalfFloat[] b = ctx.mmaLoadB(bTile, K, stepBytesB(ks));
                acc = ctx.mmaBF16(a, b, acc, MMAShape.M16N8K16);
            }
            ctx.mmaStore(acc, tcScores, r * heads + hb * M, j0, padded);
        }
    }

    /** scores[r, h, j] = scale·S[r·H + h, j] for j ≤ the row's position (what the plain kernel writes). */
    public static void unpackScores(FloatArray tcScores, float[] scores, int[] attnMeta, int rows, int capacity, int heads, float scale) {
        int padded = padded(capacity);
        for (@Parallel int rh = 0; rh < rows * heads; rh++) {
            for (@Parallel int j = 0; j < capacity; j++) {
                if (j <= CacheLayout.metaRowPosition(attnMeta, rh / heads)) {
                    scores[rh * capacity + j] = scale * tcScores.get(rh * padded + j);
                }
            }
        }
    }

    // ------------------------------------------------------------------ values: o_lat = P·c_kv

    /** Latent columns per warp of {@link #values}: four 8-wide MMA panels. */
    public static final int VALUE_COLS = 32;

    /** Work-groups (warps) of {@link #values}: rows · H/16 · d_c/32. */
    public static int valueGroups(int rows, int heads, int dc) {
        return rows * (heads / M) * (dc / VALUE_COLS);
    }

    /** Shapes {@link #values} serves: those of {@link #supports}, with d_c in steps of 32. */
    public static boolean supportsValues(int dtype, int heads, int dc, int dr) {
        return supports(dtype, heads, dc, dr) && dc % VALUE_COLS == 0;
    }

    /** pWords[r·H + h, j/2] = bf16 probs[r, h, j], probs[r, h, j + 1] for j ≤ the row's position, 0 after it (the tiles read whole steps of 16). */
    public static void packProbs(float[] probs, float[] kvFloats, int[] pWords, int[] attnMeta, int rows, int capacity, int heads) {
        int half = padded(capacity) / 2;
        for (@Parallel int rh = 0; rh < rows * heads; rh++) {
            for (@Parallel int jp = 0; jp < half; jp++) {
                int pos = CacheLayout.metaRowPosition(attnMeta, rh / heads);
                int lo = 2 * jp <= pos ? Bf16.encodeBits(probs[rh * capacity + 2 * jp], kvFloats) : 0;
                int hi = 2 * jp + 1 <= pos ? Bf16.encodeBits(probs[rh * capacity + 2 * jp + 1], kvFloats) : 0;
                pWords[rh * half + jp] = pack(lo, hi);
            }
        }
    }

    /** Index in pWords of word i (&lt; 16·8) of the A tile of step j0: head i / 8, cached rows j0 + 2·(i % 8) and the next. */
    static int probWord(int r, int hb, int heads, int half, int j0, int i) {
        return (r * heads + hb * M + i / (K / 2)) * half + j0 / 2 + i % (K / 2);
    }

    /** Number i (&lt; 16·32) of c_kv[slot(j0 … j0 + 15), c0 … c0 + 31] as a bf16 pattern in an int ([16, 32]), 0 at or past {@code len}. */
    static int valueRaw(float[] kvFloats, short[] kvHalves, byte[] kvBytes, int dtype, int[] attnMeta, int table, int j0, int len,
                        int c0, int blockSize, int dc, int w, int i) {
        int j = j0 + i / VALUE_COLS;
        return j < len ? cacheBits(kvFloats, kvHalves, kvBytes, dtype, CacheLayout.slot(attnMeta, table, j, blockSize), c0 + i % VALUE_COLS, w, dc) : 0;
    }

    /**
     * Word of the values' B tile for words i (&lt; 16·16) in cache order (cached row k = i / 16, columns 2·(i % 16) and the
     * next, from raw numbers 2i and 2i + 1): four panels of 16 cached rows × 8 columns, 64 words each.
     */
    static int valueWord(int i) {
        int k = i / (VALUE_COLS / 2);
        int pair = i % (VALUE_COLS / 2);
        return (pair / 4) * (K * 8 / 2) + k * 4 + pair % 4;
    }

    /**
     * o[r·H + h, c] = Σ_j P[r·H + h, j]·c_kv[slot(j), c] for 16 heads and 32 latent columns per warp, over the whole
     * context in steps of 16 cached rows (f32 accumulators; a padding row stores zeros). Launch: {@link #valueGroups}
     * work-groups of {@link #WARP} threads.
     */
    public static void values(KernelContext ctx, int[] pWords, float[] kvFloats, short[] kvHalves, byte[] kvBytes, int dtype,
                              int[] attnMeta, FloatArray tcValues, int capacity, int blockSize, int heads, int dc, int dr) {
        int[] aTile = ctx.allocateIntLocalArray(M * K / 2);
        int[] bTile = ctx.allocateIntLocalArray(K * VALUE_COLS / 2);
        int[] raw = ctx.allocateIntLocalArray(K * VALUE_COLS);
        int lane = ctx.localIdx;
        int w = dc + dr;
        int half = padded(capacity) / 2;
        int colBlocks = dc / VALUE_COLS;
        int headBlocks = heads / M;
        int cb = ctx.groupIdx % colBlocks;
        int hb = (ctx.groupIdx / colBlocks) % headBlocks;
        int r = ctx.groupIdx / (colBlocks * headBlocks);
        int len = CacheLayout.metaRowPosition(attnMeta, r) + 1;
        int c0 = cb * VALUE_COLS;
        int table = CacheLayout.metaRowTable(attnMeta, r);
        float[] acc0 = ctx.mmaFragment(0f);
        float[] acc1 = ctx.mmaFragment(0f);
        float[] acc2 = ctx.mmaFragment(0f);
        float[] acc3 = ctx.mmaFragment(0f);
        for (int j0 = 0; j0 < len; j0 += K) {   // the same trip count in every lane of the warp
            for (int i = lane; i < M * K / 2; i += WARP) {   // written here, not in helpers (see scores)
                aTile[i] = pWords[probWord(r, hb, heads, half, j0, i)];
            }
            for (int i = lane; i < K * VALUE_COLS; i += WARP) {
                raw[i] = valueRaw(kvFloats, kvHalves, kvBytes, dtype, attnMeta, table, j0, len, c0, blockSize, dc, w, i);
            }
            ctx.localBarrier();
            for (int i = lane; i < K * VALUE_COLS / 2; i += WARP) {
                bTile[valueWord(i)] = pack(raw[2 * i], raw[2 * i + 1]);
            }
            ctx.localBarrier();
            HalfFloat[] a = ctx.mmaLoadA(aTile, K, 0);
            HalfFloat[] b0 = ctx.mmaLoadB(bTile, K, 0);
            HalfFloat[] b1 = ctx.mmaLoadB(bTile, K, K * 8 * 2);
            HalfFloat[] b2 = ctx.mmaLoadB(bTile, K, 2 * K * 8 * 2);
            HalfFloat[] b3 = ctx.mmaLoadB(bTile, K, 3 * K * 8 * 2);
            acc0 = ctx.mmaBF16(a, b0, acc0, MMAShape.M16N8K16);
            acc1 = ctx.mmaBF16(a, b1, acc1, MMAShape.M16N8K16);
            acc2 = ctx.mmaBF16(a, b2, acc2, MMAShape.M16N8K16);
            acc3 = ctx.mmaBF16(a, b3, acc3, MMAShape.M16N8K16);
            ctx.localBarrier();                    // the next step overwrites the tiles
        }
        int row0 = r * heads + hb * M;
        ctx.mmaStore(acc0, tcValues, row0, c0, dc);
        ctx.mmaStore(acc1, tcValues, row0, c0 + 8, dc);
        ctx.mmaStore(acc2, tcValues, row0, c0 + 16, dc);
        ctx.mmaStore(acc3, tcValues, row0, c0 + 24, dc);
    }

    /** oLat[r, h, :] = o[r·H + h, :], the graph's own buffer (what the plain kernel writes, zeros for a padding row). */
    public static void unpackValues(FloatArray tcValues, float[] oLat, int rows, int heads, int dc) {
        for (@Parallel int i = 0; i < rows * heads * dc; i++) {
            oLat[i] = tcValues.get(i);
        }
    }
}
