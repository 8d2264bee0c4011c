package org.tornadomla.cache;

import org.tornadomla.config.MlaConfig;

/**
 * Numbers cached per token per layer by MLA and by the standard alternatives with the same attention
 * geometry (DESIGN.md §1.3). MHA caches a key of width d_n + d_r and a value of width d_v for every head;
 * GQA for each of its KV groups; MQA for one shared head; MLA the latent and one shared roped key.
 */
public final class KvFootprint {
    private KvFootprint() {
    }

    /** MLA: d_c + d_r (576 for DeepSeek-V3). There is no ×2: K and V share the latent. */
    public static long mla(MlaConfig c) {
        return c.kvLoraRank() + c.qkRopeHeadDim();
    }

    /** GQA with {@code kvHeads} key/value heads: kvHeads·(d_n + d_r + d_v). kvHeads = H is MHA, 1 is MQA. */
    public static long gqa(MlaConfig c, int kvHeads) {
        return (long) kvHeads * (c.qkHeadDim() + c.vHeadDim());
    }

    public static long mha(MlaConfig c) {
        return gqa(c, c.numHeads());
    }
}
