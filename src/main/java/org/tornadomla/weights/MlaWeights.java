package org.tornadomla.weights;

import org.tornadomla.Memory;
import org.tornadomla.MlaException;
import org.tornadomla.config.MlaConfig;

import java.nio.file.Path;
import java.util.Objects;
import java.util.SplittableRandom;

/**
 * The attention weights of one layer, f32, [out, in] as in Hugging Face checkpoints
 * ({@code model.layers.{i}.self_attn.*.weight}). With q_lora_rank = 0 the query is a plain q_proj and
 * wqA/qANorm/wqB are null; otherwise wq is null.
 */
public final class MlaWeights {
    public final MlaConfig config;
    /** q_a_proj [q_lora_rank, D]. */
    public final float[] wqA;
    /** q_a_layernorm [q_lora_rank]. */
    public final float[] qANorm;
    /** q_b_proj [H·(d_n+d_r), q_lora_rank]. */
    public final float[] wqB;
    /** q_proj [H·(d_n+d_r), D] (q_lora_rank = 0 only). */
    public final float[] wq;
    /** kv_a_proj_with_mqa [d_c+d_r, D]. */
    public final float[] wkvA;
    /** kv_a_layernorm [d_c]. */
    public final float[] kvANorm;
    /** kv_b_proj [H·(d_n+d_v), d_c]. */
    public final float[] wkvB;
    /** o_proj [D, H·d_v]. */
    public final float[] wo;

    public MlaWeights(MlaConfig config, float[] wqA, float[] qANorm, float[] wqB, float[] wq, float[] wkvA,
                      float[] kvANorm, float[] wkvB, float[] wo) {
        this.config = Objects.requireNonNull(config, "config");
        this.wqA = wqA;
        this.qANorm = qANorm;
        this.wqB = wqB;
        this.wq = wq;
        this.wkvA = wkvA;
        this.kvANorm = kvANorm;
        this.wkvB = wkvB;
        this.wo = wo;
        for (Tensor t : tensors(config)) {
            float[] a = t.data(this);
            long n = 1;
            for (long d : t.shape) n *= d;
            if (a == null || a.length != n) {
                throw new MlaException("weight " + t.hfName + ": expected shape " + MlaException.shape(t.shape) + " (" + n
                        + " numbers), found " + (a == null ? "none" : a.length + " numbers"));
            }
            requireFinite(t.hfName, t.shape, a);
        }
    }

    /** Throws naming the tensor and the first index that holds NaN or ±∞. */
    static void requireFinite(String name, long[] shape, float[] a) {
        for (int i = 0; i < a.length; i++) {
            if (!Float.isFinite(a[i])) {
                String at = shape.length == 2 ? "[" + i / shape[1] + ", " + i % shape[1] + "]" : "[" + i + "]";
                throw new MlaException("weight " + MlaException.quote(name) + " holds " + a[i] + " at " + at + "; weights must be finite");
            }
        }
    }

    /** One weight: its HF name suffix, shape from the config, and the field holding it. */
    public record Tensor(String hfName, long[] shape, int field) {
        public float[] data(MlaWeights w) {
            return switch (field) {
                case 0 -> w.wqA;
                case 1 -> w.qANorm;
                case 2 -> w.wqB;
                case 3 -> w.wq;
                case 4 -> w.wkvA;
                case 5 -> w.kvANorm;
                case 6 -> w.wkvB;
                default -> w.wo;
            };
        }
    }

    /** The weights a config needs, with HF names (without the layer prefix) and [out, in] shapes. */
    public static Tensor[] tensors(MlaConfig c) {
        long d = c.hiddenSize(), h = c.numHeads(), rq = c.qLoraRank(), dc = c.kvLoraRank();
        long qOut = h * c.qkHeadDim();
        Tensor kvA = new Tensor("kv_a_proj_with_mqa.weight", new long[] {dc + c.qkRopeHeadDim(), d}, 4);
        Tensor kvNorm = new Tensor("kv_a_layernorm.weight", new long[] {dc}, 5);
        Tensor kvB = new Tensor("kv_b_proj.weight", new long[] {h * (c.qkNopeHeadDim() + c.vHeadDim()), dc}, 6);
        Tensor o = new Tensor("o_proj.weight", new long[] {d, h * c.vHeadDim()}, 7);
        if (c.hasQLora()) {
            return new Tensor[] {new Tensor("q_a_proj.weight", new long[] {rq, d}, 0),
                    new Tensor("q_a_layernorm.weight", new long[] {rq}, 1),
                    new Tensor("q_b_proj.weight", new long[] {qOut, rq}, 2), kvA, kvNorm, kvB, o};
        }
        return new Tensor[] {new Tensor("q_proj.weight", new long[] {qOut, d}, 3), kvA, kvNorm, kvB, o};
    }

    public static String prefix(int layer) {
        return "model.layers." + layer + ".self_attn.";
    }

    /** Loads layer {@code layer}'s attention weights, checking every shape against the config. */
    public static MlaWeights load(TensorSource src, MlaConfig c, int layer) {
        Objects.requireNonNull(src, "src");
        Objects.requireNonNull(c, "c");
        if (layer < 0) throw new MlaException("layer must be >= 0, found " + layer);
        float[][] f = new float[8][];
        for (Tensor t : tensors(c)) {
            String name = prefix(layer) + t.hfName;
            if (src.info(name) == null) {
                String hint = c.hasQLora() && src.info(prefix(layer) + "q_proj.weight") != null
                        ? " (the weights have q_proj: is q_lora_rank 0 for this model?)"
                        : !c.hasQLora() && src.info(prefix(layer) + "q_a_proj.weight") != null
                        ? " (the weights have q_a_proj: does the config lack q_lora_rank?)" : "";
                throw new MlaException("missing tensor '" + name + "' (expected shape " + MlaException.shape(t.shape) + ")" + hint);
            }
            f[t.field] = src.readFloats(name, t.shape);
            requireFinite(name, t.shape, f[t.field]);
        }
        return new MlaWeights(c, f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7]);
    }

    public static MlaWeights load(Path path, MlaConfig c, int layer) {
        Objects.requireNonNull(path, "path");
        try (TensorSource src = TensorSource.open(path)) {
            return load(src, c, layer);
        }
    }

    /** Adds this layer's weights under HF names to a writer. */
    public SafeTensorsWriter addTo(SafeTensorsWriter w, int layer, DType dtype) {
        for (Tensor t : tensors(config)) w.add(prefix(layer) + t.hfName, dtype, t.shape, t.data(this));
        return w;
    }

    /**
     * Seeded random weights with the scale of a trained layer: projections N(0, 1/in), so activations stay
     * O(1), and norm weights 1 + N(0, 0.1²).
     */
    public static MlaWeights random(MlaConfig c, long seed) {
        Objects.requireNonNull(c, "c");
        long total = 0;
        for (Tensor t : tensors(c)) total += 4 * (t.shape.length == 1 ? t.shape[0] : t.shape[0] * t.shape[1]);
        Memory.require(total, "the weights of this config");
        SplittableRandom rnd = new SplittableRandom(seed);
        float[][] f = new float[8][];
        for (Tensor t : tensors(c)) {
            int n = (int) (t.shape.length == 1 ? t.shape[0] : t.shape[0] * t.shape[1]);   // MlaConfig checked it fits
            float[] a = new float[n];
            if (t.shape.length == 1) {
                for (int i = 0; i < n; i++) a[i] = (float) (1 + 0.1 * gaussian(rnd));
            } else {
                double std = 1 / Math.sqrt(t.shape[1]);
                for (int i = 0; i < n; i++) a[i] = (float) (std * gaussian(rnd));
            }
            f[t.field] = a;
        }
        return new MlaWeights(c, f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7]);
    }

    /** n samples of N(0, std²) as floats. */
    public static float[] gaussians(SplittableRandom rnd, int n, double std) {
        if (n < 0) throw new MlaException("gaussians: count must be >= 0, found " + n);
        float[] a = new float[n];
        for (int i = 0; i < n; i++) a[i] = (float) (std * gaussian(rnd));
        return a;
    }

    /** Standard normal (Box–Muller), reproducible across JDKs unlike Random.nextGaussian's algorithm choice. */
    public static double gaussian(SplittableRandom rnd) {
        double u = 1.0 - rnd.nextDouble();
        return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rnd.nextDouble());
    }
}
