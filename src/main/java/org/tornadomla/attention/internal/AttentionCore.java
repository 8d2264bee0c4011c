package org.tornadomla.attention.internal;

import org.tornadomla.MlaException;
import org.tornadomla.attention.AttentionOptions;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.cache.internal.CacheStorage;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.graph.KernelGraph;
import org.tornadomla.internal.Memory;
import org.tornadomla.kernels.AbsorbedAttention;
import org.tornadomla.kernels.CacheLayout;
import org.tornadomla.kernels.NaiveAttention;
import org.tornadomla.kernels.OnlineSoftmax;
import org.tornadomla.kernels.Softmax;
import org.tornadomla.kernels.SparseAttention;
import org.tornadomla.weights.Weight;
import org.tornadomla.weights.WeightDtype;

import java.util.Objects;

/**
 * The attention core of a step as graph tasks (absorb_q … unabsorb_v, or the naive path's decompression), on its own:
 * {@code MlaLayer} builds its steps with it, and the benchmarks, the ladder and the GPU kit time this part alone.
 * Not API (the module does not export this package): a graph given to it must already hold the cache's storage as
 * state and the step's metadata as an input ({@link CacheStorage#describe}), which only the library's own packages
 * can make.
 */
public final class AttentionCore {
    private AttentionCore() {
    }

    /**
     * Step 4 of the dataflow, the attention core: from the roped query q [rows, H, d_n+d_r] and the cache
     * (already holding this step's tokens) to o [rows, H, d_v], by the chosen path, each row's position and
     * block table read from {@code attnMeta} ({@link CacheStorage#describe}). An {@link AttentionOptions#AUTO AUTO} split count is resolved for a sequential
     * executor here; resolve it for the executor that will run the graph first ({@link AttentionOptions#resolved}).
     */
    public static void add(KernelGraph g, MlaConfig c, Weight wkvB, LatentCache cache, float[] q, float[] o,
                           int[] attnMeta, int rows, AttentionOptions opt) {
        add(g, c, wkvB, cache, q, o, attnMeta, rows, opt, null);
    }

    /**
     * As {@link #add(KernelGraph, MlaConfig, Weight, LatentCache, float[], float[], int[], int, AttentionOptions)},
     * attending, when {@code selected} is not null, only to each row's selected positions ([rows, k], increasing,
     * −1 after, k = {@code MlaLayer.selectedPerRow}; the indexer's top-k): ABSORBED and TILED gather those cache rows
     * through the block table ({@link SparseAttention}); NAIVE masks the other positions with −∞ (the reference).
     */
    public static void add(KernelGraph g, MlaConfig c, Weight wkvB, LatentCache cache, float[] q, float[] o,
                           int[] attnMeta, int rows, AttentionOptions opt, int[] selected) {
        Objects.requireNonNull(wkvB, "wkvB");
        requireStepMemory(c, cache, rows, opt, false, wkvB);
        CacheStorage storage = CacheStorage.of(cache);
        final int cap = cache.capacity(), bs = cache.blockSize(), seqs = cache.maxSequences();
        final int h = c.numHeads(), dc = c.kvLoraRank(), dn = c.qkNopeHeadDim(), dr = c.qkRopeHeadDim(), dv = c.vHeadDim();
        final int dt = cache.dtype().code;
        final float scale = (float) c.softmaxScale();
        float[] kv32 = storage.floats();
        short[] kv16 = storage.halves();
        byte[] kv8 = storage.bytes();
        switch (opt.path()) {
            case NAIVE -> {
                // K/V of every head per cache slot: paged like the latent cache
                float[] kvFull = g.scratch("kv", new float[checkedSize("decompressed K/V", (long) cache.numBlocks() * bs * h * (dn + dv))]);
                float[] scores = g.scratch("scores", new float[checkedSize("scores", (long) rows * h * cap)]);
                // the naive path multiplies every cached latent by kv_b_proj: bf16 and fp8 weights are decoded to
                // an f32 copy first (a reference path; the absorbed paths decode inside their products)
                float[] wkvBF32 = wkvB.asF32(g, "kv_b_dequant");
                g.task("decompress", NaiveAttention::decompress, kv32, kv16, kv8, dt, wkvBF32, kvFull, attnMeta,
                        rows, seqs, cap, bs, h, dn, dv, dc, dr);
                g.task("scores", NaiveAttention::naiveScores, q, kvFull, kv32, kv16, kv8, dt, scores,
                        attnMeta, rows, cap, bs, h, dn, dr, dv, dc, scale);
                if (selected != null) {
                    g.task("sparse_mask", SparseAttention::maskUnselected, scores, selected, attnMeta, rows, cap, h, selected.length / rows);
                }
                g.task("softmax", Softmax::softmax, scores, attnMeta, rows, cap, h);
                g.task("values", NaiveAttention::naiveValues, scores, kvFull, o, attnMeta, rows, cap, bs, h, dn, dv);
            }
            case ABSORBED -> {
                if (selected != null) {
                    int k = selected.length / rows;
                    int[] slots = sparseSlots(g, selected, attnMeta, rows, k, bs);
                    float[] qLat = g.scratch("q_lat", new float[rows * h * dc]);
                    float[] oLat = g.scratch("o_lat", new float[rows * h * dc]);
                    float[] scores = g.scratch("scores", new float[checkedSize("scores", (long) rows * h * k)]);
                    wkvB.absorbQuery(g, "absorb_q", q, qLat, rows, h, dn, dr, dv);
                    g.task("sparse_scores", SparseAttention::sparseScores, qLat, q, kv32, kv16, kv8, dt, slots, scores, rows, k, h, dn, dr, dc, scale);
                    g.task("sparse_softmax", SparseAttention::sparseSoftmax, scores, slots, rows, k, h);
                    g.task("sparse_values", SparseAttention::sparseValues, scores, kv32, kv16, kv8, dt, slots, oLat, rows, k, h, dc, dr);
                    wkvB.unabsorbValue(g, "unabsorb_v", oLat, o, rows, h, dn, dv);
                    return;
                }
                float[] qLat = g.scratch("q_lat", new float[rows * h * dc]);
                float[] oLat = g.scratch("o_lat", new float[rows * h * dc]);
                float[] scores = g.scratch("scores", new float[checkedSize("scores", (long) rows * h * cap)]);
                wkvB.absorbQuery(g, "absorb_q", q, qLat, rows, h, dn, dr, dv);
                g.task("scores", AbsorbedAttention::absorbedScores, qLat, q, kv32, kv16, kv8, dt, scores, attnMeta,
                        rows, cap, bs, h, dn, dr, dc, scale);
                g.task("softmax", Softmax::softmax, scores, attnMeta, rows, cap, h);
                g.task("values", AbsorbedAttention::absorbedValues, scores, kv32, kv16, kv8, dt, oLat,
                        attnMeta, rows, cap, bs, h, dc, dr);
                wkvB.unabsorbValue(g, "unabsorb_v", oLat, o, rows, h, dn, dv);
            }
            case TILED -> {
                int splits = Splits.splitsFor(opt, rows, h, cap, 1, 8);
                int parts = checkedSize("split outputs", (long) rows * h * splits);
                float[] qLat = g.scratch("q_lat", new float[rows * h * dc]);
                float[] oLat = g.scratch("o_lat", new float[rows * h * dc]);
                float[] sTile = g.scratch("s_tile", new float[checkedSize("tile scores", (long) parts * opt.tileSize())]);
                float[] oPart = g.scratch("o_split", new float[checkedSize("split outputs", (long) parts * dc)]);
                float[] ml = g.scratch("ml_split", new float[checkedSize("split maxima and sums", 2L * parts)]);   // (m, l) per split
                wkvB.absorbQuery(g, "absorb_q", q, qLat, rows, h, dn, dr, dv);
                if (selected != null) {
                    int k = selected.length / rows;
                    int[] slots = sparseSlots(g, selected, attnMeta, rows, k, bs);
                    g.task("sparse_split_tiles", SparseAttention::sparseSplitTiles, qLat, q, kv32, kv16, kv8, dt, slots, sTile, oPart, ml,
                            rows, k, h, dn, dr, dc, scale, opt.tileSize(), splits);
                    g.task("combine", OnlineSoftmax::combine, oPart, ml, oLat, rows, h, splits, dc);
                    wkvB.unabsorbValue(g, "unabsorb_v", oLat, o, rows, h, dn, dv);
                    return;
                }
                g.task("split_tiles", OnlineSoftmax::splitTiles, qLat, q, kv32, kv16, kv8, dt, sTile, oPart, ml,
                        attnMeta, rows, bs, h, dn, dr, dc, scale, opt.tileSize(), splits);
                g.task("combine", OnlineSoftmax::combine, oPart, ml, oLat, rows, h, splits, dc);
                wkvB.unabsorbValue(g, "unabsorb_v", oLat, o, rows, h, dn, dv);
            }
        }
    }

    /** The cache slots of the selected positions (FlashMLA's sparse indices, −1 unused), through each row's block table. */
    private static int[] sparseSlots(KernelGraph g, int[] selected, int[] attnMeta, int rows, int k, int bs) {
        int[] slots = g.scratch("sparse_slots", new int[selected.length]);
        g.task("sparse_slots", SparseAttention::selectedSlots, selected, slots, attnMeta, rows, k, bs);
        return slots;
    }

    /**
     * Throws, before anything is allocated, when a buffer of the step would not fit one Java array or all of
     * them not the heap: the whole layer step ({@code projections}) or the attention core alone.
     */
    public static void requireStepMemory(MlaConfig c, LatentCache cache, int tokenRows, AttentionOptions opt, boolean projections, Weight wkvB) {
        long rows = tokenRows, cap = cache.capacity(), h = c.numHeads(), dc = c.kvLoraRank();
        long dn = c.qkNopeHeadDim(), dr = c.qkRopeHeadDim(), dv = c.vHeadDim();
        long total = size("the step's metadata", CacheLayout.metaLength(tokenRows, cache.maxSequences(), cache.maxBlocksPerSequence()));
        if (projections) {
            total += size("x and y", mul(2, rows, c.hiddenSize())) + size("q", mul(rows, h, dn + dr)) + size("q_a", mul(2, rows, c.qLoraRank()))
                    + size("kv_a", mul(rows, dc + dr)) + size("c_kv", mul(rows, dc)) + size("o", mul(rows, h, dv));
        }
        if (projections && c.sparse()) {           // the indexer: q and k with their codes, index scores, top-k keys, selections
            long n = c.indexer().nHeads(), di = c.indexer().headDim(), k = Math.min(c.indexer().topK(), cap);
            total += size("the indexer's q and k", mul(2, rows, n + 1, di)) + size("index scores and top-k keys", mul(2, rows, cap))
                    + size("selected positions and slots", mul(2, rows, k));
        }
        switch (opt.path()) {
            case NAIVE -> total += size("decompressed K/V", mul(cache.numBlocks(), cache.blockSize(), h, dn + dv)) + size("scores", mul(rows, h, cap))
                    + (wkvB.dtype() == WeightDtype.F32 ? 0 : wkvB.numbers());
            case ABSORBED -> total += size("q_lat and o_lat", mul(2, rows, h, dc)) + size("scores", mul(rows, h, cap));
            case TILED -> {
                long parts = mul(rows, h, opt.numSplits());
                total += size("q_lat and o_lat", mul(2, rows, h, dc)) + size("tile scores", mul(parts, opt.tileSize()))
                        + size("split outputs", mul(parts, dc)) + size("split maxima and sums", mul(2, parts));
            }
        }
        Memory.require(4 * total, (projections ? "a forward step" : "the attention core") + " of " + rows + (rows == 1 ? " token row" : " token rows") + " over a cache of "
                + cap + " (" + opt.path() + ")");
    }

    /** The product of non-negative factors, Long.MAX_VALUE when it overflows. */
    private static long mul(long... factors) {
        long p = 1;
        for (long f : factors) {
            if (f == 0) return 0;
            p = p > Long.MAX_VALUE / f ? Long.MAX_VALUE : p * f;
        }
        return p;
    }

    private static long size(String what, long n) {
        checkedSize(what, n);
        return n;
    }

    public static int checkedSize(String what, long n) {
        if (n < 0 || n > Integer.MAX_VALUE - 8) {
            throw new MlaException(what + " need " + n + " floats, more than one Java array holds; use the TILED path, "
                    + "fewer tokens per call or a smaller cache capacity");
        }
        return (int) n;
    }
}
