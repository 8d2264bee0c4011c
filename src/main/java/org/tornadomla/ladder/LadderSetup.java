package org.tornadomla.ladder;

import org.tornadomla.cache.internal.CacheStorage;
import org.tornadomla.internal.Gaussians;
import org.tornadomla.internal.Memory;
import org.tornadomla.MlaException;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.IndexerConfig;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.kernels.Bf16;
import org.tornadomla.kernels.Indexer;
import org.tornadomla.config.RopeFrequencies;
import org.tornadomla.kernels.Rope;
import org.tornadomla.weights.MlaWeights;

import java.util.SplittableRandom;

/**
 * The one small problem every step of the ladder solves: a decode step of the attention core for one
 * sequence — a query (q_nope | q_pe, before RoPE) at position T−1 over a cache of T tokens, DeepSeek-V3's
 * latent geometry (d_c 512, d_r 64, d_n = d_v 128) and H heads, the same seeded numbers for every step.
 * Output: o [H, d_v], before o_proj.
 */
public final class LadderSetup {
    public final MlaConfig config;
    public final int heads, context;
    /** kv_b_proj [H·(d_n+d_v), d_c]. */
    public final float[] wkvB;
    /** The query before RoPE [H, d_n+d_r], and with its rope part rotated to position T−1. */
    public final float[] qRaw, qRoped;
    public final float[] latent, ropeKeys;
    public final float[] invFreq;
    public final float cosSinScale;
    private final long seed;

    public LadderSetup(int heads, int context, long seed) {
        this.config = MlaConfig.deepseekV3().withHeads(heads).withHiddenSize(1024);   // the ladder never projects x
        this.heads = heads;
        this.context = context;
        this.seed = seed;
        SplittableRandom rnd = new SplittableRandom(seed);
        int dc = config.kvLoraRank(), dr = config.qkRopeHeadDim();
        if (context < 1) throw new MlaException("context must be >= 1, found " + context);
        Memory.arrayLength((long) context * (dc + dr), "the ladder's cache of " + context + " tokens");
        latent = Gaussians.floats(rnd, context * dc, 1);
        ropeKeys = Gaussians.floats(rnd, context * dr, 1);
        wkvB = Gaussians.floats(rnd, heads * (config.qkNopeHeadDim() + config.vHeadDim()) * dc, 1 / Math.sqrt(dc));
        qRaw = Gaussians.floats(rnd, heads * config.qkHeadDim(), 1);
        invFreq = RopeFrequencies.inverseFrequencies(config);
        cosSinScale = RopeFrequencies.cosSinScale(config);
        qRoped = qRaw.clone();
        Rope.rotatePairs(qRoped, heads * config.qkHeadDim(), heads, config.qkHeadDim(), config.qkNopeHeadDim(), dr,
                new int[] {context - 1, 0}, 1, invFreq, cosSinScale);
    }

    /**
     * Step 9's indexer (DeepSeek-V3.2's, 64 heads × 128, {@link IndexerConfig#deepseekV32()}): its query for the
     * step's token [n, d] and weights_proj's output [n], as wq_b, RoPE and the Hadamard transform, and weights_proj,
     * leave them (projections are outside the ladder, as for MLA's query), and the cached keys of the T tokens as
     * the layer caches them: gaussian keys, Hadamard-transformed, then e4m3 codes [T, d] with one ue8m0 scale each.
     * Drawn from their own seeded generator on first use, so steps 1–8 see the same numbers as before.
     */
    public synchronized IndexerInputs indexer() {
        if (indexer == null) {
            IndexerConfig ix = IndexerConfig.deepseekV32();
            int n = ix.nHeads(), d = ix.headDim();
            SplittableRandom rnd = new SplittableRandom(seed ^ 0x5DEECE66DL);
            float[] q = Gaussians.floats(rnd, n * d, 1), proj = Gaussians.floats(rnd, n, 1), k = Gaussians.floats(rnd, context * d, 1);
            Indexer.hadamard(q, n, d, (float) ix.dimScale());
            Indexer.hadamard(k, context, d, (float) ix.dimScale());
            byte[] codes = new byte[context * d];
            float[] scales = new float[context * ix.blocks()];
            Indexer.quantizeBlocks(k, codes, scales, context, d, 1, Bf16.pow2());
            indexer = new IndexerInputs(ix, q, proj, codes, scales);
        }
        return indexer;
    }

    /** What {@link #indexer()} returns. */
    public record IndexerInputs(IndexerConfig config, float[] query, float[] weightsProj, byte[] keyCodes, float[] keyScales) {
    }

    private IndexerInputs indexer;

    /** A cache of {@code context} tokens holding the setup's latents and roped keys, in {@code dtype}. */
    public LatentCache cache(CacheDtype dtype) {
        LatentCache c = new LatentCache(config, 1, context, dtype);
        c.write(0, latent, ropeKeys);
        return c;
    }

    /** The kernels' metadata for {@code cache} ({@link #cache}): one row, the query, the last of the {@code context} cached tokens. */
    public int[] attnMeta(LatentCache cache) {
        int[] meta = new int[CacheStorage.of(cache).metaLength(1)];
        CacheStorage.of(cache).describe(meta, 1, new int[] {0}, new int[] {context - 1}, new int[] {1}, null);
        return meta;
    }
}
