package org.tornadomla.benchmarks;

import org.tornadomla.attention.AttentionOptions;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.attention.MlaLayer;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.fast.FastExecutor;
import org.tornadomla.graph.KernelGraph;
import org.tornadomla.internal.Gaussians;
import org.tornadomla.weights.MlaWeights;
import org.tornadomla.weights.Weight;
import org.tornadomla.weights.WeightDtype;

import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Where a whole-layer decode step spends its time, per task, for each way of holding the weights: DeepSeek-V3's
 * layer (hidden 7168, 128 heads) on java-fast, batch 1, a cache of {@code context} tokens. Not JMH: the graph of
 * one decode step is run {@code reps} times per form after a warm-up, the forms taking turns in rounds of 5
 * steps, and the median of each task's time is printed (so that a disturbance by another process on a shared
 * machine neither counts much nor falls on one form only).
 *
 * <pre>
 * java --add-modules jdk.incubator.vector -Xmx12g -cp benchmarks/target/benchmarks.jar \
 *      org.tornadomla.benchmarks.LayerTasks [context=4096] [reps=30] [weights=f32,bf16,fp8] [path=absorbed]
 * </pre>
 * {@code weights=fp8-uniform}: FP8 codes drawn uniformly from all finite codes (many subnormal), see {@link #uniformCodes}.
 * <pre>
 * </pre>
 */
public final class LayerTasks {
    private LayerTasks() {
    }

    public static void main(String[] args) {
        int context = 4096, reps = 30;
        String weights = "f32,bf16,fp8", path = "absorbed";
        DriverArgs a = DriverArgs.parse("LayerTasks", "[context=4096] [reps=30] [weights=f32,bf16,fp8,fp8-uniform] [path=absorbed|tiled|naive]",
                args, "context=", "reps=", "weights=", "path=");
        context = a.integer("context", context, 1);
        reps = a.integer("reps", reps, 1);
        weights = a.text("weights", weights);
        path = a.text("path", path);
        MlaConfig c = MlaConfig.deepseekV3();
        MlaWeights f32 = MlaWeights.random(c, 1);
        AttentionOptions opt = AttentionOptions.of(a.path(path));
        String[] forms = weights.split(",");
        try (FastExecutor fast = new FastExecutor()) {
            List<MlaLayer> layers = new java.util.ArrayList<>();
            List<KernelGraph> graphs = new java.util.ArrayList<>();
            for (String w : forms) {
                MlaLayer layer = new MlaLayer(w.equals("fp8-uniform") ? uniformCodes(f32) : f32.to(WeightDtype.parse(w)), fast);
                LatentCache cache = layer.newCache(1, context + 1, CacheDtype.F32);
                SplittableRandom rnd = new SplittableRandom(2);
                cache.write(0, Gaussians.floats(rnd, context * c.kvLoraRank(), 1), Gaussians.floats(rnd, context * c.qkRopeHeadDim(), 1));
                layer.forward(cache, Gaussians.floats(rnd, c.hiddenSize(), 1), 1, opt);     // fills the graph's x and attnMeta
                cache.truncate(context);                         // the graph's own runs write slot `context` again
                layers.add(layer);
                graphs.add(layer.graph(cache, 1, opt));
            }
            // rounds of 5 steps per form, the forms taking turns: a disturbance of the shared machine hits all of them
            int rounds = Math.max(1, reps / 5);
            long[][][] nanos = new long[forms.length][rounds * 5][];
            long[][] total = new long[forms.length][rounds * 5];
            for (int f = 0; f < forms.length; f++) {
                for (int i = 0; i < 5; i++) fast.execute(graphs.get(f), new long[graphs.get(f).tasks().size()]);   // warm-up
            }
            for (int r = 0; r < rounds; r++) {
                for (int f = 0; f < forms.length; f++) {
                    KernelGraph g = graphs.get(f);
                    for (int i = 0; i < 5; i++) {
                        int k = r * 5 + i;
                        nanos[f][k] = new long[g.tasks().size()];
                        long t0 = System.nanoTime();
                        fast.execute(g, nanos[f][k]);
                        total[f][k] = System.nanoTime() - t0;
                    }
                }
            }
            for (int f = 0; f < forms.length; f++) {
                MlaWeights held = layers.get(f).weights();
                List<KernelGraph.Task> tasks = graphs.get(f).tasks();
                System.out.printf("weights %s (%,d bytes), context %d, %s, %s: step median %.2f ms (min %.2f) of %d%n", held.dtype(), held.bytes(),
                        context, opt.path(), fast.device(), median(total[f]) / 1e6, Arrays.stream(total[f]).min().orElseThrow() / 1e6, rounds * 5);
                for (int t = 0; t < tasks.size(); t++) {
                    long[] col = new long[rounds * 5];
                    for (int k = 0; k < col.length; k++) col[k] = nanos[f][k][t];
                    System.out.printf("  %-22s %-34s %8.3f ms%n", tasks.get(t).id(),
                            tasks.get(t).kernel().getDeclaringClass().getSimpleName() + "." + tasks.get(t).kernel().getName(), median(col) / 1e6);
                }
            }
            for (MlaLayer l : layers) l.close();
        }
    }

    /**
     * FP8 weights whose codes are uniform over the 254 finite e4m3 codes (1 in 16 subnormal, where quantised
     * trained weights have almost none), to time the decoding of subnormal codes; block scales 1/(130·√in).
     */
    static MlaWeights uniformCodes(MlaWeights like) {
        SplittableRandom rnd = new SplittableRandom(5);
        List<Weight> out = new java.util.ArrayList<>();
        for (Weight w : like.all()) {
            long[] s = w.shape();
            if (s.length == 1) {
                out.add(w);
                continue;
            }
            byte[] codes = new byte[(int) (s[0] * s[1])];
            for (int i = 0; i < codes.length; i++) {
                int c;
                do {
                    c = rnd.nextInt(256);
                } while ((c & 0x7F) == 0x7F);
                codes[i] = (byte) c;
            }
            long[] ss = Weight.scaleShape(s[0], s[1]);
            float[] scales = new float[(int) (ss[0] * ss[1])];
            java.util.Arrays.fill(scales, (float) (1 / (130 * Math.sqrt(s[1]))));
            out.add(Weight.fp8(w.name(), s[0], s[1], codes, scales));
        }
        return new MlaWeights(like.config(), out);
    }

    private static double median(long[] a) {
        long[] s = a.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2.0;
    }
}
