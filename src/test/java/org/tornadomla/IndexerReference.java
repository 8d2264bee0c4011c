package org.tornadomla;

import org.tornadomla.config.IndexerConfig;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.config.RopeFrequencies;
import org.tornadomla.kernels.Bf16;
import org.tornadomla.kernels.Indexer;
import org.tornadomla.kernels.Norms;
import org.tornadomla.kernels.Projections;
import org.tornadomla.kernels.Rope;
import org.tornadomla.kernels.TopK;
import org.tornadomla.weights.MlaWeights;

import java.util.Objects;

/**
 * The whole lightning indexer of a sparse layer for one prefill (tokens at positions 0 … T−1, causal), run with the
 * library's plain-Java kernels in DeepSeek's order (see {@link Indexer}): the selected positions of every token and
 * what led to them. A reference for wiring the indexer into the layer: its graph must give these selections.
 * Weights are read as f32 ({@code toFloats()}: bf16 and fp8 dequantised exactly).
 */
public final class IndexerReference {
    private IndexerReference() {
    }

    /**
     * One prefill's indexer.
     *
     * @param selected [T, k] positions per token, increasing, −1 after the min(k, t + 1) chosen ({@link TopK})
     * @param scores   [T, T] index scores, −∞ above the diagonal
     * @param qPre     [T, n·d] the query after RoPE and Hadamard, before quantisation
     * @param kPre     [T, d] the key after LayerNorm, RoPE and Hadamard, before quantisation
     * @param qCodes   [T, n·d] e4m3 codes of the query, {@code qScales} [T, n] their scales
     * @param kCodes   [T, d] e4m3 codes of the keys (what the indexer caches), {@code kScales} [T] their scales
     * @param weights  [T, n] the head weights w_h (q_scale included)
     */
    public record Result(int k, int[] selected, float[] scores, float[] qPre, float[] kPre, byte[] qCodes, float[] qScales,
                         byte[] kCodes, float[] kScales, float[] weights) {
        /** Token t's selected positions, without the −1 padding. */
        public int[] selection(int t) {
            return java.util.Arrays.stream(selected, t * k, (t + 1) * k).filter(p -> p >= 0).toArray();
        }
    }

    /** The indexer of a prefill of x [T, D] at positions 0 … T−1 through a sparse layer's weights. */
    public static Result prefill(MlaWeights w, float[] x, int T) {
        Objects.requireNonNull(w, "w");
        MlaConfig c = w.config();
        if (!c.sparse()) throw new IllegalArgumentException("a dense config has no indexer");
        IndexerConfig ix = c.indexer();
        int D = c.hiddenSize(), rq = c.qLoraRank(), n = ix.nHeads(), d = ix.headDim(), dr = c.qkRopeHeadDim(), k = ix.topK();
        if (x.length != T * D) throw new IllegalArgumentException("x holds " + x.length + " numbers, expected T·D = " + T * D);
        float[] pow2 = Bf16.pow2();
        int[] meta = new int[2 * T];
        for (int t = 0; t < T; t++) meta[2 * t] = t;
        // the shared query latent qr = q_a_layernorm(q_a_proj·x), as MLA computes it
        float[] qa = new float[T * rq], qr = new float[T * rq];
        Projections.matMul(x, w.qA().toFloats(), qa, T, D, rq);
        Norms.rmsNorm(qa, rq, w.qANorm().toFloats(), qr, T, rq, (float) c.rmsNormEps());
        // q = wq_b·qr [T, n, d]; k = LayerNorm(wk·x) [T, d]
        float[] q = new float[T * n * d], key = new float[T * d];
        Projections.matMul(qr, w.indexerWqB().toFloats(), q, T, rq, n * d);
        Projections.matMul(x, w.indexerWk().toFloats(), key, T, D, d);
        Indexer.layerNorm(key, w.indexerKNorm().toFloats(), w.indexerKNormBias().toFloats(), key, T, d, IndexerConfig.K_NORM_EPS);
        // RoPE on the first d_r numbers of each head and of the key (the layer's table, YaRN included)
        float[] invFreq = RopeFrequencies.inverseFrequencies(c);
        float cs = RopeFrequencies.cosSinScale(c);
        if (ix.ropeInterleaved()) {
            Rope.rotatePairs(q, n * d, n, d, 0, dr, meta, T, invFreq, cs);
            Rope.rotatePairs(key, d, 1, d, 0, dr, meta, T, invFreq, cs);
        } else {
            Indexer.ropeHalves(q, n * d, n, d, 0, dr, meta, T, invFreq, cs);
            Indexer.ropeHalves(key, d, 1, d, 0, dr, meta, T, invFreq, cs);
        }
        Indexer.hadamard(q, T * n, d, (float) ix.dimScale());
        Indexer.hadamard(key, T, d, (float) ix.dimScale());
        float[] qPre = q.clone(), kPre = key.clone();
        byte[] qCodes = new byte[T * n * d], kCodes = new byte[T * d];
        float[] qScales = new float[T * n * ix.blocks()], kScales = new float[T * ix.blocks()];
        int ue8m0 = ix.ue8m0() ? 1 : 0;
        Indexer.quantizeBlocks(q, qCodes, qScales, T * n, d, ue8m0, pow2);
        Indexer.quantizeBlocks(key, kCodes, kScales, T, d, ue8m0, pow2);
        // w = weights_proj·x (f32) · n^-1/2 · q_scale · d^-1/2
        float[] weights = new float[T * n];
        Projections.matMul(x, w.indexerWeightsProj().toFloats(), weights, T, D, n);
        Indexer.headWeights(weights, qScales, weights, T, n, (float) ix.headScale(), (float) ix.dimScale());
        float[] scores = new float[T * T];
        Indexer.indexScores(qCodes, weights, kCodes, kScales, scores, meta, T, n, d, T, pow2);
        int[] selected = new int[T * k];
        TopK.selectTopK(scores, new int[T * T], new int[T * TopK.BINS], selected, meta, T, T, k, pow2);
        return new Result(k, selected, scores, qPre, kPre, qCodes, qScales, kCodes, kScales, weights);
    }
}
