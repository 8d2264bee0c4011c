package org.tornadomla.bench;

import org.tornadomla.Memory;
import org.tornadomla.MlaException;
import org.tornadomla.attention.AttentionOptions;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.attention.MlaLayer;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.graph.GraphExecutor;
import org.tornadomla.graph.KernelGraph;
import org.tornadomla.weights.MlaWeights;
import org.tornadomla.weights.Weight;

import java.util.SplittableRandom;

/**
 * One decode step of the attention core: from the roped query to o [B, H, d_v] over a cache holding
 * {@code context} tokens per sequence (absorb_q … unabsorb_v of {@link MlaLayer#addAttention}), with
 * DeepSeek-V3's latent geometry (d_c 512, d_r 64, d_n = d_v = 128) and a chosen head count. Projections and
 * the cache append are not part of it. Setup (weights, cache fill) is done once in the constructor.
 */
public final class DecodeBench {
    /** A benchmark shape. */
    public record Shape(AttentionPath path, CacheDtype dtype, int batch, int heads, int context) {
        public String label() {
            return "B" + batch + " H" + heads + " T" + context + " " + path + " " + dtype;
        }
    }

    /** Timing of one backend on one shape. */
    public record Result(String backend, Shape shape, double msPerStep, int iterations, double maxAbsDiff) {
        public double gbPerS() {
            return latentBytes(shape) / (msPerStep * 1e-3) / 1e9;
        }

        public double gflopPerS() {
            return flops(shape) / (msPerStep * 1e-3) / 1e9;
        }
    }

    private final Shape shape;
    private final KernelGraph graph;
    private final float[] out;

    public DecodeBench(Shape shape, long seed) {
        this(shape, seed, false);
    }

    /**
     * @param structured fill the cache with structured latents (rank-8 signal, a few outlier channels ten times
     *                   larger, small noise) instead of independent N(0, 1) numbers
     */
    public DecodeBench(Shape shape, long seed, boolean structured) {
        this.shape = shape;
        MlaConfig base = MlaConfig.deepseekV3();
        MlaConfig c = new MlaConfig(base.hiddenSize(), shape.heads(), base.qLoraRank(), base.kvLoraRank(), base.qkNopeHeadDim(),
                base.qkRopeHeadDim(), base.vHeadDim(), base.ropeTheta(), base.rmsNormEps(), base.maxPositionEmbeddings(),
                base.numHiddenLayers(), base.ropeScaling());
        SplittableRandom rnd = new SplittableRandom(seed);
        int dc = c.kvLoraRank(), dr = c.qkRopeHeadDim(), h = c.numHeads();
        if (shape.batch() < 1 || shape.context() < 1) throw new MlaException("batch and context must be >= 1, found " + shape.batch() + ", " + shape.context());
        Memory.arrayLength((long) shape.batch() * h * c.qkHeadDim(), "the queries of " + shape.label());
        Memory.arrayLength((long) shape.context() * dc * 10, "the latents of " + shape.label());
        LatentCache cache = new LatentCache(c, shape.batch(), shape.context(), shape.dtype());
        for (int b = 0; b < shape.batch(); b++) {
            float[] latent = structured ? structuredLatent(rnd, shape.context(), dc) : MlaWeights.gaussians(rnd, shape.context() * dc, 1);
            cache.write(b, latent, MlaWeights.gaussians(rnd, shape.context() * dr, 1));
        }
        graph = new KernelGraph("decode");
        float[] q = graph.input("q", MlaWeights.gaussians(rnd, shape.batch() * h * c.qkHeadDim(), 1));
        int[] seqStart = graph.input("seqStart", new int[shape.batch()]);
        java.util.Arrays.fill(seqStart, shape.context() - 1);
        graph.state("cache", cache);
        long kvbRows = (long) h * (c.qkNopeHeadDim() + c.vHeadDim());
        Weight wkvB = Weight.f32("kv_b_proj.weight", new long[] {kvbRows, dc}, MlaWeights.gaussians(rnd, (int) kvbRows * dc, 1 / Math.sqrt(dc)));
        out = graph.output("o", new float[shape.batch() * h * c.vHeadDim()]);
        MlaLayer.addAttention(graph, c, wkvB, cache, q, out, seqStart, 1, AttentionOptions.of(shape.path()));
    }

    public Shape shape() {
        return shape;
    }

    /** Runs the step once on {@code executor} (what a benchmark times). */
    public void step(GraphExecutor executor) {
        executor.execute(graph);
    }

    /** Runs the step once on {@code executor}; returns o (a copy). */
    public float[] runOnce(GraphExecutor executor) {
        executor.execute(graph);
        return out.clone();
    }

    /**
     * Warm-up (at least one step, and until a fifth of the budget), then timed steps until {@code budgetMs}
     * has passed (at least {@code minIterations}); mean ms per step.
     */
    public double[] time(GraphExecutor executor, double budgetMs, int minIterations) {
        long t0 = System.nanoTime();
        do {
            executor.execute(graph);
        } while ((System.nanoTime() - t0) / 1e6 < budgetMs / 5);
        int n = 0;
        long start = System.nanoTime();
        do {
            executor.execute(graph);
            n++;
        } while (n < minIterations || (System.nanoTime() - start) / 1e6 < budgetMs);
        return new double[] {(System.nanoTime() - start) / 1e6 / n, n};
    }

    /** n rows of width d: Σ_k u_k·v_k over rank 8, every 64th channel ×10 (outliers), plus N(0, 0.05²) noise. */
    static float[] structuredLatent(SplittableRandom rnd, int n, int d) {
        int rank = 8;
        float[] u = MlaWeights.gaussians(rnd, n * rank, 1), v = MlaWeights.gaussians(rnd, rank * d, 1 / Math.sqrt(rank));
        float[] noise = MlaWeights.gaussians(rnd, n * d, 0.05);
        float[] out = new float[n * d];
        for (int t = 0; t < n; t++) {
            for (int c = 0; c < d; c++) {
                float s = 0;
                for (int k = 0; k < rank; k++) s += u[t * rank + k] * v[k * d + c];
                out[t * d + c] = (c % 64 == 0 ? 10 : 1) * s + noise[t * d + c];
            }
        }
        return out;
    }

    /** Mean ms per task over {@code steps} steps on a JVM executor, with the task names: where the time goes. */
    public java.util.LinkedHashMap<String, Double> breakdown(org.tornadomla.graph.JvmExecutor executor, int steps) {
        long[] ns = new long[graph.tasks().size()];
        executor.execute(graph);                          // warm
        for (int i = 0; i < steps; i++) executor.execute(graph, ns);
        java.util.LinkedHashMap<String, Double> out = new java.util.LinkedHashMap<>();
        for (int i = 0; i < ns.length; i++) out.put(graph.tasks().get(i).id(), ns[i] / 1e6 / steps);
        return out;
    }

    /** Frees what {@code executor} holds for this benchmark's graph (device memory under TornadoVM). */
    public void release(GraphExecutor executor) {
        executor.release(graph);
    }

    /** Latent bytes read per step: B·T·bytes per token of the dtype (scales included), the cache read once. */
    public static double latentBytes(Shape s) {
        return (double) s.batch() * s.context() * s.dtype().bytesPerToken(512, 64);
    }

    /** FLOPs per step: B·(2·H·T·(d_c+d_r) + 2·H·T·d_c + 2·H·d_c·(d_n+d_v)) (docs/design.md §1.3). */
    public static double flops(Shape s) {
        double h = s.heads(), t = s.context();
        return s.batch() * (2 * h * t * (512 + 64) + 2 * h * t * 512 + 2 * h * 512 * (128 + 128));
    }

}
