package org.tornadomla.benchmarks;

import org.tornadomla.attention.internal.AttentionCore;
import org.tornadomla.attention.AttentionOptions;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.cache.internal.CacheStorage;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.fast.FastExecutor;
import org.tornadomla.graph.KernelGraph;
import org.tornadomla.internal.Gaussians;
import org.tornadomla.weights.MlaWeights;
import org.tornadomla.weights.Weight;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * java-fast's decode attention over latent rows of other widths than DeepSeek's 576 (d_c 512 + d_r 64): the attention
 * core of {@code AttentionCore.add} (absorb_q … unabsorb_v) for each geometry, batch 1, a cache of {@code
 * context} f32 tokens, and the time of its attention tasks alone (scores, softmax, values or split_tiles, combine:
 * what reads the latent rows; absorb_q and unabsorb_v stream kv_b_proj, whose size depends on d_n and d_v, and are
 * left out), per cached token and per byte of latent row read. Not JMH: the geometries take turns in rounds of 5
 * steps after a warm-up of 2 s each, and the median of each is printed (a disturbance of a shared machine hits all of them).
 * A geometry is {@code d_c+d_r/H} (d_n = d_v = 128) or a preset name (its heads and widths; a sparse preset's dense core).
 *
 * <pre>
 * java --add-modules jdk.incubator.vector -Xmx12g -cp benchmarks/target/benchmarks.jar org.tornadomla.benchmarks.GeometryTasks \
 *      [context=4096] [reps=30] [path=absorbed] [geometries=512+64/128,256+32/128,448+64/128,1024+64/128] [splits=0 (auto)]
 * </pre>
 */
public final class GeometryTasks {
    private GeometryTasks() {
    }

    public static void main(String[] args) {
        int context = 4096, reps = 30;
        int splits = AttentionOptions.AUTO;
        String path = "absorbed", geometries = "512+64/128,256+32/128,448+64/128,1024+64/128";
        DriverArgs a = DriverArgs.parse("GeometryTasks", "[context=4096] [reps=30] [path=absorbed|tiled|naive] "
                + "[geometries=512+64/128,256+32/128,448+64/128,1024+64/128 (d_c+d_r/H or preset names)] [splits=0 (auto)]",
                args, "context=", "reps=", "path=", "geometries=", "splits=");
        context = a.integer("context", context, 1);
        reps = a.integer("reps", reps, 1);
        path = a.text("path", path);
        geometries = a.text("geometries", geometries);
        splits = a.integer("splits", splits, 0);
        AttentionOptions opt = new AttentionOptions(a.path(path), AttentionOptions.DEFAULT_TILE, splits);
        String[] names = geometries.split(",");
        try (FastExecutor fast = new FastExecutor()) {
            List<KernelGraph> graphs = new ArrayList<>();
            List<MlaConfig> configs = new ArrayList<>();
            for (String name : names) {
                MlaConfig c = config(name);
                configs.add(c);
                graphs.add(graph(c, context, opt, fast));
            }
            int rounds = Math.max(1, reps / 5);
            long[][] attention = new long[names.length][rounds * 5];
            // warm-up: 2 s of steps per geometry. Ten steps were too few for a geometry whose kernels no other one uses
            // (16 heads' s8x2h on a Zen 4): C2 had not compiled them yet, and 16 heads read 12–65 GFLOP/s in fresh JVMs
            // against 130–163 after a longer run (2026-12-06)
            for (int g = 0; g < names.length; g++) {
                long until = System.nanoTime() + 2_000_000_000L;
                for (int i = 0; i < 10 || System.nanoTime() < until; i++) fast.execute(graphs.get(g), new long[graphs.get(g).tasks().size()]);
            }
            for (int r = 0; r < rounds; r++) {
                for (int g = 0; g < names.length; g++) {
                    KernelGraph graph = graphs.get(g);
                    for (int i = 0; i < 5; i++) {
                        long[] nanos = new long[graph.tasks().size()];
                        fast.execute(graph, nanos);
                        long sum = 0;
                        for (int t = 0; t < nanos.length; t++) {
                            String id = graph.tasks().get(t).id();
                            if (!id.startsWith("absorb_q") && !id.startsWith("unabsorb_v")) sum += nanos[t];
                        }
                        attention[g][r * 5 + i] = sum;
                    }
                }
            }
            System.out.printf("B1 T%d %s f32 cache, %s; attention tasks only (absorb_q, unabsorb_v left out), median of %d%n",
                    context, opt.path(), fast.device(), rounds * 5);
            System.out.printf("  %-16s %5s %5s %5s %10s %12s %14s %10s%n", "geometry", "d_c", "d_r", "H", "ms", "ns/token", "ps/(token·B·H)", "GFLOP/s");
            for (int g = 0; g < names.length; g++) {
                MlaConfig c = configs.get(g);
                int w = c.kvLoraRank() + c.qkRopeHeadDim(), h = c.numHeads();
                double ns = median(attention[g]);
                double flops = 2.0 * h * context * w + 2.0 * h * context * c.kvLoraRank();
                System.out.printf("  %-16s %5d %5d %5d %10.3f %12.2f %14.3f %10.1f%n", names[g], c.kvLoraRank(), c.qkRopeHeadDim(), h, ns / 1e6,
                        ns / context, 1e3 * ns / ((double) context * w * 4 * h), flops / ns);
            }
        }
    }

    static MlaConfig config(String name) {
        if (!name.contains("/")) return MlaConfig.preset(name).withIndexer(null);     // the dense attention core (no indexer)
        String[] p = name.split("[+/]");
        int dc = Integer.parseInt(p[0]), dr = Integer.parseInt(p[1]), h = Integer.parseInt(p[2]);
        return new MlaConfig(1024, h, 0, dc, 128, dr, 128, 10000, 1e-6, 1 << 20, 1, null);
    }

    /** The attention core of one decode step over a cache of context tokens, as bench.DecodeBench builds it. */
    static KernelGraph graph(MlaConfig c, int context, AttentionOptions opt, FastExecutor ex) {
        SplittableRandom rnd = new SplittableRandom(3);
        int dc = c.kvLoraRank(), dr = c.qkRopeHeadDim(), h = c.numHeads();
        LatentCache cache = new LatentCache(c, 1, context, CacheDtype.F32);
        cache.write(0, Gaussians.floats(rnd, context * dc, 1), Gaussians.floats(rnd, context * dr, 1));
        float[] q = Gaussians.floats(rnd, h * c.qkHeadDim(), 1);
        int[] meta = new int[CacheStorage.of(cache).metaLength(1)];
        CacheStorage.of(cache).describe(meta, 1, new int[] {0}, new int[] {context - 1}, new int[] {1}, null);
        long rows = (long) h * (c.qkNopeHeadDim() + c.vHeadDim());
        Weight wkvB = Weight.f32("kv_b_proj.weight", new long[] {rows, dc}, Gaussians.floats(rnd, (int) rows * dc, 1 / Math.sqrt(dc)));
        KernelGraph g = new KernelGraph("decode");
        g.input("q", q);
        g.input("attnMeta", meta);
        g.state("cache", CacheStorage.of(cache));
        float[] o = g.output("o", new float[h * c.vHeadDim()]);
        AttentionCore.add(g, c, wkvB, cache, q, o, meta, 1, opt.resolved(1, h, context, ex));
        return g;
    }

    private static double median(long[] a) {
        long[] s = a.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2.0;
    }
}
