package org.tornadomla.ladder;

import org.tornadomla.attention.internal.AttentionCore;
import org.tornadomla.cache.internal.CacheStorage;
import org.tornadomla.attention.AttentionOptions;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.attention.MlaLayer;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.graph.KernelGraph;
import org.tornadomla.kernels.Bf16;
import org.tornadomla.kernels.Indexer;
import org.tornadomla.kernels.NaiveAttention;
import org.tornadomla.kernels.SparseAttention;
import org.tornadomla.kernels.TopK;
import org.tornadomla.kernels.Softmax;
import org.tornadomla.kernels.Rope;
import org.tornadomla.weights.Weight;

import java.util.List;

/**
 * The nine steps of the kernel ladder (docs/ladder/), in order. Each builds the same decode step of the
 * attention core from {@link LadderSetup} with the kernels of its page; step 1 is what every other step is
 * compared with.
 *
 * <pre>
 *  1 naive MHA       K/V of every head cached (MHA's cache), attention over them     NaiveAttention, Softmax
 *  2 latent cache    cache c_kv + k_pe only, decompress K/V at every step              + NaiveAttention.decompress
 *  3 absorption      W_UK into the query, W_UV after the sum; attend over the latent   Absorb, AbsorbedAttention, Softmax
 *  4 decoupled RoPE  step 3 with the query's rope part rotated on the device          + Rope.rotatePairs
 *  5 online softmax  one pass over the cache in tiles (running max and sum)           OnlineSoftmax.splitTiles (1 split), combine
 *  6 split-KV        the context split across parallel workers, (max, sum) combine   OnlineSoftmax.splitTiles (8 splits), combine
 *  7 KernelContext   the latent tile in local memory shared by a head group (GPU)     tornado.FlashDecode.splitKv
 *  8 int8 latent     step 6 over an int8 cache, dequantised inside the loops          CacheOps.load (INT8)
 *  9 sparse (DSA)    the indexer's top-k of T, step 3's attention over those rows only Indexer, TopK, SparseAttention
 * </pre>
 * Step 9 attends to fewer positions, so it is compared with its own reference ({@link LadderStep#reference}): step 1's
 * kernels with the unselected scores masked.
 */
public final class Steps {
    private Steps() {
    }

    public static List<LadderStep> all() {
        return List.of(
                step(1, "naive MHA-style attention (K/V of every head cached)", "NaiveAttention (naiveScores, naiveValues), Softmax",
                        Steps::naiveMha, s -> (double) s.context * s.heads * (s.config.qkHeadDim() + s.config.vHeadDim()) * 4),
                step(2, "the latent cache (c_kv + k_pe, decompressed every step)", "NaiveAttention.decompress + step 1's kernels",
                        s -> naive(s, CacheDtype.F32), s -> latentBytes(s, 4)),
                step(3, "absorption (W_UK into the query, W_UV after the sum)", "Absorb, AbsorbedAttention (absorbedScores, absorbedValues), Softmax",
                        s -> absorbed(s, false), s -> 2 * latentBytes(s, 4)),
                step(4, "decoupled RoPE (the query's rope part rotated on the device)", "Rope.rotatePairs + step 3's kernels",
                        s -> absorbed(s, true), s -> 2 * latentBytes(s, 4)),
                step(5, "online-softmax tiles (one pass, running max and sum)", "OnlineSoftmax (splitTiles with 1 split, combine)",
                        s -> tiled(s, 1, CacheDtype.F32), s -> latentBytes(s, 4)),
                step(6, "split-KV + (max, sum) combine (8 splits)", "OnlineSoftmax (splitTiles with 8 splits, combine)",
                        s -> tiled(s, 8, CacheDtype.F32), s -> latentBytes(s, 4)),
                new LadderStep() {
                    public int number() {
                        return 7;
                    }

                    public String title() {
                        return "KernelContext: latent tile in local memory shared by a head group";
                    }

                    public String kernels() {
                        return "tornado.FlashDecode.splitKv (replaces splitTiles on TornadoVM), OnlineSoftmax.combine";
                    }

                    public Built build(LadderSetup s) {
                        return tiled(s, 8, CacheDtype.F32);
                    }

                    public double bytesRead(LadderSetup s) {
                        return latentBytes(s, 4);
                    }

                    public boolean tornadoOnly() {
                        return true;
                    }
                },
                step(8, "int8 latent (dequantised inside the loops)", "CacheOps.load (INT8) in step 6's kernels",
                        s -> tiled(s, 8, CacheDtype.INT8), s -> (double) s.context * (s.config.cacheWidth() + 8)),
                new LadderStep() {
                    public int number() {
                        return 9;
                    }

                    public String title() {
                        return "sparse attention (DeepSeek-V3.2: lightning indexer, top-k, gather)";
                    }

                    public String kernels() {
                        return "Indexer (quantizeBlocks, headWeights, indexScores), TopK.selectTopK, SparseAttention (selectedSlots, "
                                + "sparseScores, sparseSoftmax, sparseValues)";
                    }

                    public Built build(LadderSetup s) {
                        return sparse(s, false);
                    }

                    public Built reference(LadderSetup s) {
                        return sparse(s, true);
                    }

                    public double bytesRead(LadderSetup s) {
                        // the k selected rows twice (scores, then values: step 3's two passes) and every indexer key once
                        return 2.0 * sparseK(s) * s.config.cacheWidth() * 4 + (double) s.context * s.indexer().config().cacheBytesPerToken();
                    }
                });
    }

    /** Step 9's k: a quarter of the context (at least 1), so that the selection matters at the ladder's T (V3.2 keeps 2,048 of up to 128k). */
    static int sparseK(LadderSetup s) {
        return Math.max(1, s.context / 4);
    }

    /**
     * Step 9: the lightning indexer scores every cached position (e4m3 dot products per indexer head, ReLU, head
     * weights, the key's scale), TopK keeps the k best, and the absorbed attention of step 3 reads only those k
     * latent rows (a gather through their slots). {@code maskedReference}: the same indexer and top-k, then step 1's
     * kernels over the whole cache with every unselected score set to −∞ before the softmax: what the gather must equal.
     */
    static LadderStep.Built sparse(LadderSetup s, boolean maskedReference) {
        MlaConfig c = s.config;
        LadderSetup.IndexerInputs ix = s.indexer();
        int h = s.heads, t = s.context, n = ix.config().nHeads(), d = ix.config().headDim(), k = sparseK(s);
        int dn = c.qkNopeHeadDim(), dr = c.qkRopeHeadDim(), dv = c.vHeadDim(), dc = c.kvLoraRank();
        LatentCache cache = s.cache(CacheDtype.F32);
        CacheStorage storage = CacheStorage.of(cache);
        KernelGraph g = new KernelGraph(maskedReference ? "ladder9_reference" : "ladder9");
        float[] q = g.input("q", s.qRoped.clone());
        float[] qi = g.input("index_q", ix.query().clone());
        float[] proj = g.input("index_weights_proj", ix.weightsProj().clone());
        int[] meta = g.input("attnMeta", s.attnMeta(cache));
        g.state("cache", storage);
        byte[] keys = g.weight("index_k_fp8", ix.keyCodes());
        float[] keyScales = g.weight("index_k_scale", ix.keyScales());
        float[] pow2 = g.weight("indexer.pow2", Bf16.pow2());
        float[] o = g.output("o", new float[h * dv]);
        // the indexer: the query to e4m3 per head, its head weights, the index score of every cached position, the top k
        byte[] qCodes = g.scratch("index_q_fp8", new byte[n * d]);
        float[] qScales = g.scratch("index_q_scale", new float[n * ix.config().blocks()]);
        g.task("indexer.quant_q", Indexer::quantizeBlocks, qi, qCodes, qScales, n, d, 1, pow2);
        float[] w = g.scratch("index_weights", new float[n]);
        g.task("indexer.head_weights", Indexer::headWeights, proj, qScales, w, 1, n, (float) ix.config().headScale(), (float) ix.config().dimScale());
        float[] scores = g.scratch("index_scores", new float[t]);
        g.task("indexer.scores", Indexer::indexScores, qCodes, w, keys, keyScales, scores, meta, 1, n, d, t, pow2);
        int[] selected = g.scratch("index_topk", new int[k]);
        g.task("indexer.topk", TopK::selectTopK, scores, g.scratch("index_keys", new int[t]), g.scratch("index_hist", new int[TopK.BINS]),
                selected, meta, 1, t, k, pow2);
        if (maskedReference) {
            float[] kvFull = new float[t * h * (dn + dv)];
            NaiveAttention.decompress(storage.floats(), storage.halves(), storage.bytes(), 0, s.wkvB, kvFull, s.attnMeta(cache), 1, 1, t, t, h, dn, dv, dc, dr);
            g.weight("kv_mha", kvFull);
            float[] sc = g.scratch("scores", new float[h * t]);
            g.task("scores", NaiveAttention::naiveScores, q, kvFull, storage.floats(), storage.halves(), storage.bytes(), 0, sc, meta,
                    1, t, t, h, dn, dr, dv, dc, (float) c.softmaxScale());
            g.task("sparse_mask", SparseAttention::maskUnselected, sc, selected, meta, 1, t, h, k);
            g.task("softmax", Softmax::softmax, sc, meta, 1, t, h);
            g.task("values", NaiveAttention::naiveValues, sc, kvFull, o, meta, 1, t, t, h, dn, dv);
            return new LadderStep.Built(g, o);
        }
        // sparse attention: the selected positions' slots, then step 3's absorbed attention over those k rows only
        Weight wkvB = Weight.f32("kv_b_proj.weight", new long[] {(long) h * (dn + dv), dc}, s.wkvB);
        int[] slots = g.scratch("sparse_slots", new int[k]);
        g.task("sparse_slots", SparseAttention::selectedSlots, selected, slots, meta, 1, k, cache.blockSize());
        float[] qLat = g.scratch("q_lat", new float[h * dc]), oLat = g.scratch("o_lat", new float[h * dc]);
        float[] sparseScores = g.scratch("scores", new float[h * k]);
        wkvB.absorbQuery(g, "absorb_q", q, qLat, 1, h, dn, dr, dv);
        g.task("sparse_scores", SparseAttention::sparseScores, qLat, q, storage.floats(), storage.halves(), storage.bytes(), CacheDtype.F32.code,
                slots, sparseScores, 1, k, h, dn, dr, dc, (float) c.softmaxScale());
        g.task("sparse_softmax", SparseAttention::sparseSoftmax, sparseScores, slots, 1, k, h);
        g.task("sparse_values", SparseAttention::sparseValues, sparseScores, storage.floats(), storage.halves(), storage.bytes(), CacheDtype.F32.code,
                slots, oLat, 1, k, h, dc, dr);
        wkvB.unabsorbValue(g, "unabsorb_v", oLat, o, 1, h, dn, dv);
        return new LadderStep.Built(g, o);
    }

    private interface Builder {
        LadderStep.Built build(LadderSetup s);
    }

    private interface Bytes {
        double of(LadderSetup s);
    }

    private static LadderStep step(int n, String title, String kernels, Builder b, Bytes bytes) {
        return new LadderStep() {
            public int number() {
                return n;
            }

            public String title() {
                return title;
            }

            public String kernels() {
                return kernels;
            }

            public Built build(LadderSetup s) {
                return b.build(s);
            }

            public double bytesRead(LadderSetup s) {
                return bytes.of(s);
            }
        };
    }

    static double latentBytes(LadderSetup s, int bytesPerNumber) {
        return (double) s.context * s.config.cacheWidth() * bytesPerNumber;
    }

    /** Step 1: the decompressed K/V are the cache (computed once, outside the timed step), as MHA caches them. */
    static LadderStep.Built naiveMha(LadderSetup s) {
        MlaConfig c = s.config;
        int h = s.heads, t = s.context, dn = c.qkNopeHeadDim(), dr = c.qkRopeHeadDim(), dv = c.vHeadDim(), dc = c.kvLoraRank();
        LatentCache cache = s.cache(CacheDtype.F32);
        CacheStorage storage = CacheStorage.of(cache);       // the cache's arrays, as the kernels take them
        float[] kvFull = new float[t * h * (dn + dv)];
        NaiveAttention.decompress(storage.floats(), storage.halves(), storage.bytes(), 0, s.wkvB, kvFull, s.attnMeta(cache), 1, 1, t, t, h, dn, dv, dc, dr);
        KernelGraph g = new KernelGraph("ladder1");
        float[] q = g.input("q", s.qRoped.clone());
        int[] meta = g.input("attnMeta", s.attnMeta(cache));
        g.weight("kv_mha", kvFull);
        g.state("cache", storage);
        float[] scores = g.scratch("scores", new float[h * t]);
        float[] o = g.output("o", new float[h * dv]);
        g.task("scores", NaiveAttention::naiveScores, q, kvFull, storage.floats(), storage.halves(), storage.bytes(), 0, scores, meta,
                1, t, t, h, dn, dr, dv, dc, (float) c.softmaxScale());
        g.task("softmax", Softmax::softmax, scores, meta, 1, t, h);
        g.task("values", NaiveAttention::naiveValues, scores, kvFull, o, meta, 1, t, t, h, dn, dv);
        return new LadderStep.Built(g, o);
    }

    static LadderStep.Built naive(LadderSetup s, CacheDtype dtype) {
        return core(s, "ladder2", AttentionOptions.of(AttentionPath.NAIVE), dtype, false);
    }

    static LadderStep.Built absorbed(LadderSetup s, boolean ropeOnDevice) {
        return core(s, ropeOnDevice ? "ladder4" : "ladder3", AttentionOptions.of(AttentionPath.ABSORBED), CacheDtype.F32, ropeOnDevice);
    }

    static LadderStep.Built tiled(LadderSetup s, int splits, CacheDtype dtype) {
        return core(s, "ladder_tiled_" + splits + "_" + dtype, new AttentionOptions(AttentionPath.TILED, 64, splits), dtype, false);
    }

    /** The library's attention core (AttentionCore.add, as MlaLayer runs it) over the setup's cache. */
    private static LadderStep.Built core(LadderSetup s, String name, AttentionOptions opt, CacheDtype dtype, boolean ropeOnDevice) {
        MlaConfig c = s.config;
        KernelGraph g = new KernelGraph(name);
        float[] q = g.input("q", (ropeOnDevice ? s.qRaw : s.qRoped).clone());
        float[] o = g.output("o", new float[s.heads * c.vHeadDim()]);
        Weight wkvB = Weight.f32("kv_b_proj.weight", new long[] {(long) s.heads * (c.qkNopeHeadDim() + c.vHeadDim()), c.kvLoraRank()}, s.wkvB);
        LatentCache cache = s.cache(dtype);
        int[] meta = g.input("attnMeta", s.attnMeta(cache));
        g.state("cache", CacheStorage.of(cache));
        if (ropeOnDevice) {
            g.task("rope_q", Rope::rotatePairs, q, s.heads * c.qkHeadDim(), s.heads, c.qkHeadDim(), c.qkNopeHeadDim(),
                    c.qkRopeHeadDim(), meta, 1, g.weight("invFreq", s.invFreq), s.cosSinScale);
        }
        AttentionCore.add(g, c, wkvB, cache, q, o, meta, 1, opt);
        return new LadderStep.Built(g, o);
    }
}
