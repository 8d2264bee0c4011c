package org.tornadomla.config;

import org.tornadomla.MlaException;

/**
 * The lightning indexer of DeepSeek Sparse Attention (DSA, DeepSeek-V3.2), with the names of its config.json:
 * for each token it scores every cached position with {@code index_n_heads} small heads of width
 * {@code index_head_dim} over FP8 copies of its query and of one key per token, and attention then reads only the
 * {@code index_topk} best positions. A config with an indexer is "sparse" ({@link MlaConfig#sparse()}).
 *
 * <p>What it computes for a token x at position p, with the shared query latent qr = q_a_layernorm(q_a_proj·x):
 * q = indexer.wq_b·qr viewed [n_heads, head_dim]; k = LayerNorm(indexer.wk·x) (weight and bias, eps 1e-6);
 * each split [rope | nope] with the first d_r numbers rotated by the layer's RoPE table, in halves (pairs
 * (i, i + d_r/2)) unless {@link #ropeInterleaved}; both Hadamard-transformed (scaled by head_dim^−½) and
 * quantised to e4m3 in blocks of {@link #BLOCK} with one fp32 scale each; head weights
 * w_h = (weights_proj·x)_h · n_heads^−½ · q_scale_h · head_dim^−½; score(t) = k_scale[t]·Σ_h w_h·ReLU(q_h·k[t])
 * over the e4m3 values; the selection is the top min(index_topk, p + 1) positions.
 *
 * @param nHeads          index_n_heads (V3.2: 64)
 * @param headDim         index_head_dim (V3.2: 128): one FP8 block, as DeepSeek's fp8_index kernel takes one scale
 *                        per head and one per key
 * @param topK            index_topk (V3.2: 2048)
 * @param ue8m0           scale_fmt "ue8m0": each block's scale amax/448 is rounded up to a power of two (V3.2);
 *                        otherwise it is amax·(1/448) as it is
 * @param ropeInterleaved indexer_rope_interleave (GLM spelling, default false): the indexer's RoPE pairs are
 *                        (2i, 2i+1) like MLA's; DeepSeek-V3.2's are halves (i, i + d_r/2)
 */
public record IndexerConfig(int nHeads, int headDim, int topK, boolean ue8m0, boolean ropeInterleaved) {
    /** Numbers per FP8 block and fp32 scale (DeepSeek's block_size). */
    public static final int BLOCK = 128;
    /** LayerNorm epsilon of indexer.k_norm (fixed in DeepSeek's and Hugging Face's code, not in config.json). */
    public static final float K_NORM_EPS = 1e-6f;
    /** Largest index_n_heads and index_topk read (real configs: 32 … 64 heads, top-k 2048). */
    static final int MAX_HEADS = 4096, MAX_TOPK = 1 << 24;

    /** DeepSeek-V3.2's indexer: 64 heads of 128, top-2048, ue8m0 scales, RoPE in halves. */
    public static IndexerConfig deepseekV32() {
        return new IndexerConfig(64, 128, 2048, true, false);
    }

    /** Checks the values (the layer's own checks, against d_r and q_lora_rank, are {@link MlaConfig}'s). */
    public IndexerConfig {
        if (nHeads <= 0 || nHeads > MAX_HEADS) throw new MlaException("invalid config: index_n_heads must be in 1 … " + MAX_HEADS + ", found " + nHeads);
        if (headDim != BLOCK) {
            throw new MlaException("invalid config: index_head_dim must be " + BLOCK + " (one FP8 block of 128 numbers with one scale per head and per key, "
                    + "as DeepSeek's fp8_index kernel takes them), found " + headDim);
        }
        if (topK <= 0 || topK > MAX_TOPK) throw new MlaException("invalid config: index_topk must be in 1 … " + MAX_TOPK + ", found " + topK);
    }

    /** FP8 blocks (and fp32 scales) per head of the query and per key: head_dim / 128. */
    public int blocks() {
        return headDim / BLOCK;
    }

    /** Bytes the indexer caches per token and layer: the e4m3 key and its fp32 scales (V3.2: 128 + 4 = 132). */
    public int cacheBytesPerToken() {
        return headDim + 4 * blocks();
    }

    /** head_dim^−½: the Hadamard transform's scale and DeepSeek's indexer softmax_scale. */
    public double dimScale() {
        return 1.0 / Math.sqrt(headDim);
    }

    /** n_heads^−½, the factor of weights_proj's output. */
    public double headScale() {
        return 1.0 / Math.sqrt(nHeads);
    }

    /** The scale_fmt this config writes and reads: "ue8m0", or null for amax/448 scales. */
    public String scaleFmt() {
        return ue8m0 ? "ue8m0" : null;
    }
}
