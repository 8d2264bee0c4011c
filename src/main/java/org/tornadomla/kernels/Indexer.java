package org.tornadomla.kernels;

import uk.ac.manchester.tornado.api.annotations.Parallel;

/**
 * DeepSeek Sparse Attention's lightning indexer (DeepSeek-V3.2), step by step as DeepSeek's {@code Indexer.forward}
 * computes it, one kernel per step. For a token x with query latent qr:
 * <pre>
 *   q  = wq_b·qr               [n_idx, d_idx]   (Projections)
 *   k  = layerNorm(wk·x)       [d_idx]          (Projections, {@link #layerNorm}: weight and bias, eps 1e-6)
 *   q, k: ropeHalves on the first d_r numbers    ({@link #ropeHalves}; {@link Rope#rotatePairs} when interleaved)
 *   q, k: hadamard, scaled by d_idx^-1/2         ({@link #hadamard})
 *   q, k: e4m3 codes + one fp32 scale per 128    ({@link #quantizeBlocks})
 *   w  = (weights_proj·x)·n_idx^-1/2·q_scale·d_idx^-1/2   (Projections in f32, {@link #headWeights})
 *   score[t] = k_scale[t]·Σ_h w_h·ReLU(q_h·k[t]) over the e4m3 values, −∞ past the row's position ({@link #indexScores})
 * </pre>
 * then {@link TopK#selectTopK} picks the positions. Shapes: rows of q are [n_idx·d_idx], rows of k [d_idx]; the key
 * cache is [positions, d_idx] codes and [positions] scales (d_idx = 128: one block, as fp8_index assumes).
 * {@code attnMeta} is the step's metadata ({@link CacheLayout#metaRowPosition}); {@code pow2} is {@link Bf16#pow2()}.
 */
public final class Indexer {
    private Indexer() {
    }

    /** 1/448 as a float: DeepSeek's act_quant multiplies the block's amax by it (fp8_max_inv). */
    public static final float INV_FP8_MAX = (float) (1.0 / 448.0);
    /** The smallest amax act_quant uses (a block of zeros gets the scale of 1e-4). */
    public static final float MIN_AMAX = 1e-4f;
    /** Numbers per quantisation block (DeepSeek's block_size). */
    public static final int BLOCK = 128;

    /**
     * LayerNorm with weight and bias, as {@code F.layer_norm} in fp32: out[r, i] = (x[r, i] − μ)/sqrt(σ² + eps)·weight[i]
     * + bias[i] with μ and σ² (biased) the mean and variance of row r's {@code dim} numbers. out may be x.
     */
    public static void layerNorm(float[] x, float[] weight, float[] bias, float[] out, int rows, int dim, float eps) {
        for (@Parallel int r = 0; r < rows; r++) {
            int base = r * dim;
            float sum = 0f;
            for (int i = 0; i < dim; i++) {
                sum += x[base + i];
            }
            float mean = sum / dim;
            float sq = 0f;
            for (int i = 0; i < dim; i++) {
                float d = x[base + i] - mean;
                sq += d * d;
            }
            float inv = 1f / (float) Math.sqrt(sq / dim + eps);
            for (int i = 0; i < dim; i++) {
                out[base + i] = (x[base + i] - mean) * inv * weight[i] + bias[i];
            }
        }
    }

    /**
     * RoPE in halves (not interleaved), in place: pairs (x[i], x[i + d_r/2]) rotate by angle p·f_i, as DeepSeek's
     * indexer does since its 2025-11-17 fix ({@code apply_rotary_emb(…, interleaved=False)}) and Hugging Face's
     * {@code rotate_half}. Arguments as {@link Rope#rotatePairs}; for the indexer's query rowStride = n_idx·d_idx,
     * heads = n_idx, headStride = d_idx, offset = 0; for its key rowStride = d_idx, heads = 1. The angle and cos/sin
     * are computed as rotatePairs computes them.
     */
    public static void ropeHalves(float[] x, int rowStride, int heads, int headStride, int offset, int ropeDim,
                                  int[] attnMeta, int rows, float[] invFreq, float cosSinScale) {
        for (@Parallel int r = 0; r < rows; r++) {
            for (@Parallel int h = 0; h < heads; h++) {
                int pos = CacheLayout.metaRowPosition(attnMeta, r);
                int base = r * rowStride + h * headStride + offset;
                int half = ropeDim / 2;
                for (int i = 0; i < half; i++) {
                    float angle = pos * invFreq[i];
                    float c = (float) Math.cos(angle) * cosSinScale;
                    float s = (float) Math.sin(angle) * cosSinScale;
                    float x0 = x[base + i];
                    float x1 = x[base + half + i];
                    x[base + i] = x0 * c - x1 * s;
                    x[base + half + i] = x0 * s + x1 * c;
                }
            }
        }
    }

    /**
     * The fast Walsh–Hadamard transform of each of the {@code vectors} consecutive vectors of {@code n} numbers
     * (n a power of two), in place, times {@code scale}: x ← scale·H_n·x with H_n the Sylvester matrix
     * (H[i][j] = (−1)^popcount(i &amp; j)), as {@code fast_hadamard_transform(x, scale)}; DeepSeek's
     * rotate_activation uses scale = n^−½, which makes it orthonormal. n·log2(n) additions per vector.
     */
    public static void hadamard(float[] x, int vectors, int n, float scale) {
        for (@Parallel int v = 0; v < vectors; v++) {
            int base = v * n;
            for (int h = 1; h < n; h = h * 2) {
                for (int i = 0; i < n; i = i + 2 * h) {
                    for (int j = i; j < i + h; j++) {
                        float a = x[base + j];
                        float b = x[base + j + h];
                        x[base + j] = a + b;
                        x[base + j + h] = a - b;
                    }
                }
            }
            for (int i = 0; i < n; i++) {
                x[base + i] = x[base + i] * scale;
            }
        }
    }

    /**
     * The smallest power of two ≥ v, for v in [2^−134, 2^127] (kernel-safe): ue8m0's rounding of a scale,
     * 2^ceil(log2 v), as DeepSeek's fast_round_scale computes it from the float's bits. Binary search in
     * {@code pow2} (POW2[k] = 2^(k−150), k ≥ 16).
     */
    public static float pow2Ceil(float v, float[] pow2) {
        int lo = 16;
        int hi = 277;
        while (lo < hi) {
            int mid = (lo + hi) >> 1;
            if (pow2[mid] >= v) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return pow2[lo];
    }

    /**
     * DeepSeek's act_quant: each block of {@link #BLOCK} numbers of each row of x (dim a multiple of 128) becomes
     * e4m3 codes and one fp32 scale. amax = max(max|x|, 1e−4); scale = amax·(1/448), rounded up to a power of two when
     * {@code ue8m0} is 1 (scale_fmt "ue8m0"); code = e4m3(clamp(x / scale, ±448)), round to nearest even
     * ({@link Fp8#encode}, which saturates at ±448). codes [rows, dim], scales [rows, dim/128]. x must be finite.
     */
    public static void quantizeBlocks(float[] x, byte[] codes, float[] scales, int rows, int dim, int ue8m0, float[] pow2) {
        for (@Parallel int r = 0; r < rows; r++) {
            for (@Parallel int b = 0; b < dim / BLOCK; b++) {
                int base = r * dim + b * BLOCK;
                float amax = MIN_AMAX;
                for (int i = 0; i < BLOCK; i++) {
                    amax = Math.max(amax, Math.abs(x[base + i]));
                }
                float s = amax * INV_FP8_MAX;
                if (ue8m0 == 1) {
                    s = pow2Ceil(s, pow2);
                }
                for (int i = 0; i < BLOCK; i++) {
                    codes[base + i] = Fp8.encode(x[base + i] / s, pow2);
                }
                scales[r * (dim / BLOCK) + b] = s;
            }
        }
    }

    /**
     * The indexer's head weights from weights_proj's output {@code proj} [rows, heads] (f32):
     * w[r, h] = proj[r, h]·headScale·qScale[r, h]·dimScale, in DeepSeek's order (weights_proj(x)·n^−½, then
     * ·q_scale·softmax_scale), with headScale = n_idx^−½, dimScale = d_idx^−½ and qScale the query's FP8 scale
     * of head h (one block per head). w may be proj.
     */
    public static void headWeights(float[] proj, float[] qScale, float[] w, int rows, int heads, float headScale, float dimScale) {
        for (@Parallel int r = 0; r < rows; r++) {
            for (@Parallel int h = 0; h < heads; h++) {
                int i = r * heads + h;
                w[i] = proj[i] * headScale * qScale[i] * dimScale;
            }
        }
    }

    /**
     * Index scores, as DeepSeek's fp8_index kernel computes them: for row r at position p and cached position
     * t ≤ p, scores[r, t] = kScale[t]·Σ_h max(Σ_d e4m3(q[r, h, d])·e4m3(k[t, d]), 0)·w[r, h], the dot products of
     * the e4m3 values (exact products, f32 sums), ReLU, the head weights (which carry q's scale), then k's scale;
     * scores[r, t] = −∞ for t &gt; p (causal; and every t of a padding row, p = −1). qCodes [rows, heads·dim],
     * w [rows, heads], kCodes [positions, dim], kScale [positions], scores [rows, positions].
     */
    public static void indexScores(byte[] qCodes, float[] w, byte[] kCodes, float[] kScale, float[] scores, int[] attnMeta,
                                   int rows, int heads, int dim, int positions, float[] pow2) {
        for (@Parallel int r = 0; r < rows; r++) {
            for (@Parallel int t = 0; t < positions; t++) {
                int pos = CacheLayout.metaRowPosition(attnMeta, r);
                float score = Float.NEGATIVE_INFINITY;
                if (t <= pos) {
                    float acc = 0f;
                    for (int h = 0; h < heads; h++) {
                        int qBase = (r * heads + h) * dim;
                        float dot = 0f;
                        for (int d = 0; d < dim; d++) {
                            dot += Fp8.decode(qCodes[qBase + d], pow2) * Fp8.decode(kCodes[t * dim + d], pow2);
                        }
                        acc += Math.max(dot, 0f) * w[r * heads + h];
                    }
                    score = acc * kScale[t];
                }
                scores[r * positions + t] = score;
            }
        }
    }

    /**
     * {@link #indexScores} over the cache's indexer keys (a layer step): row r at position p of its sequence scores
     * that sequence's cached positions t ≤ p, each key read from the slot its block table gives (attnMeta,
     * {@link CacheLayout#slot}; indexKeys [slot, dim], indexScales [slot], dim = 128: one scale per key).
     * scores [rows, capacity], −∞ for t &gt; p and for every t of a padding row. The step's own keys must be
     * appended first ({@link CacheOps#appendIndexKeys}).
     */
    public static void cachedScores(byte[] qCodes, float[] w, byte[] indexKeys, float[] indexScales, float[] scores, int[] attnMeta,
                                    int rows, int heads, int dim, int capacity, int blockSize, float[] pow2) {
        for (@Parallel int r = 0; r < rows; r++) {
            for (@Parallel int t = 0; t < capacity; t++) {
                int pos = CacheLayout.metaRowPosition(attnMeta, r);
                float score = Float.NEGATIVE_INFINITY;
                if (t <= pos) {
                    int slot = CacheLayout.slot(attnMeta, CacheLayout.metaRowTable(attnMeta, r), t, blockSize);
                    float acc = 0f;
                    for (int h = 0; h < heads; h++) {
                        int qBase = (r * heads + h) * dim;
                        float dot = 0f;
                        for (int d = 0; d < dim; d++) {
                            dot += Fp8.decode(qCodes[qBase + d], pow2) * Fp8.decode(indexKeys[slot * dim + d], pow2);
                        }
                        acc += Math.max(dot, 0f) * w[r * heads + h];
                    }
                    score = acc * indexScales[slot];
                }
                scores[r * capacity + t] = score;
            }
        }
    }
}
