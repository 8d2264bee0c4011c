package org.tornadomla.ladder;

import org.tornadomla.cache.internal.CacheStorage;
import org.tornadomla.internal.Memory;
import org.tornadomla.MlaException;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.MlaConfig;
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

    public LadderSetup(int heads, int context, long seed) {
        this.config = MlaConfig.deepseekV3().withHeads(heads).withHiddenSize(1024);   // the ladder never projects x
        this.heads = heads;
        this.context = context;
        SplittableRandom rnd = new SplittableRandom(seed);
        int dc = config.kvLoraRank(), dr = config.qkRopeHeadDim();
        if (context < 1) throw new MlaException("context must be >= 1, found " + context);
        Memory.arrayLength((long) context * (dc + dr), "the ladder's cache of " + context + " tokens");
        latent = MlaWeights.gaussians(rnd, context * dc, 1);
        ropeKeys = MlaWeights.gaussians(rnd, context * dr, 1);
        wkvB = MlaWeights.gaussians(rnd, heads * (config.qkNopeHeadDim() + config.vHeadDim()) * dc, 1 / Math.sqrt(dc));
        qRaw = MlaWeights.gaussians(rnd, heads * config.qkHeadDim(), 1);
        invFreq = RopeFrequencies.inverseFrequencies(config);
        cosSinScale = RopeFrequencies.cosSinScale(config);
        qRoped = qRaw.clone();
        Rope.rotatePairs(qRoped, heads * config.qkHeadDim(), heads, config.qkHeadDim(), config.qkNopeHeadDim(), dr,
                new int[] {context - 1, 0}, 1, invFreq, cosSinScale);
    }

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
