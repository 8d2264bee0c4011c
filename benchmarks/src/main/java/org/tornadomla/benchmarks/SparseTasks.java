package org.tornadomla.benchmarks;

import org.tornadomla.fast.FastExecutor;
import org.tornadomla.graph.JvmExecutor;
import org.tornadomla.graph.KernelGraph;
import org.tornadomla.kernels.Bf16;
import org.tornadomla.kernels.CacheLayout;
import org.tornadomla.kernels.Fp8;
import org.tornadomla.kernels.Indexer;
import org.tornadomla.kernels.OnlineSoftmax;
import org.tornadomla.kernels.SparseAttention;
import org.tornadomla.kernels.TopK;

import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Where a sparse decode step (DeepSeek-V3.2's DSA) spends its time beyond the dense layer's projections, per task:
 * the indexer's scores over the context ({@code Indexer.cachedScores}: 64 heads × 128 e4m3 products per cached
 * position), the top-2048 ({@code TopK.selectTopK}), the slots, and the sparse attention over the selection
 * (absorbed: sparse_scores, sparse_softmax, sparse_values; tiled: sparse_split_tiles, combine), V3.2's geometry
 * (128 heads, d_c 512, d_r 64, f32 latent cache), a contiguous cache of {@code context} tokens per sequence,
 * random e4m3 keys and queries. Not JMH: the graph runs {@code reps} times per executor after a warm-up, the
 * executors taking turns in rounds of 5 steps; the median of each task is printed. The reference executor is
 * slow (seconds per step at 32k): {@code backends=java-fast} leaves it out.
 *
 * <pre>
 * java --add-modules jdk.incubator.vector -Xmx12g -cp benchmarks/target/benchmarks.jar \
 *      org.tornadomla.benchmarks.SparseTasks [batch=1] [context=8192] [reps=10] [backends=java-fast,java-reference]
 * </pre>
 */
public final class SparseTasks {
    private SparseTasks() {
    }

    public static void main(String[] args) {
        int batch = 1, context = 8192, reps = 10;
        String backends = "java-fast,java-reference";
        DriverArgs a = DriverArgs.parse("SparseTasks", "[batch=1] [context=8192] [reps=10] [backends=java-fast,java-reference]",
                args, "batch=", "context=", "reps=", "backends=");
        batch = a.integer("batch", batch, 1);
        context = a.integer("context", context, 1);
        reps = a.integer("reps", reps, 1);
        backends = a.text("backends", backends);
        int heads = 128, dc = 512, dr = 64, dn = 128, nIdx = 64, dIdx = 128, topk = 2048, w = dc + dr;
        int rows = batch, cap = context, k = Math.min(topk, cap);
        float[] pow2 = Bf16.pow2();
        SplittableRandom rnd = new SplittableRandom(7);
        // attnMeta of a contiguous cache: row r at position context − 1 of sequence r (block r of cap slots)
        int tables0 = 2 * rows + 4 * batch;
        int[] meta = new int[(int) CacheLayout.metaLength(rows, batch, 1)];
        for (int r = 0; r < rows; r++) {
            meta[2 * r] = context - 1;
            meta[2 * r + 1] = tables0 + r;
            meta[2 * rows + 4 * r] = context;
            meta[2 * rows + 4 * r + 1] = tables0 + r;
            meta[2 * rows + 4 * r + 2] = -1;
            meta[tables0 + r] = r;
        }
        byte[] qCodes = new byte[rows * nIdx * dIdx], keys = new byte[batch * cap * dIdx];
        for (int i = 0; i < qCodes.length; i++) qCodes[i] = Fp8.encode((float) rnd.nextGaussian() * 100, pow2);
        for (int i = 0; i < keys.length; i++) keys[i] = Fp8.encode((float) rnd.nextGaussian() * 100, pow2);
        float[] hw = gaussians(rnd, rows * nIdx, 0.01f), kScale = new float[batch * cap];
        Arrays.fill(kScale, 1f / 256);
        float[] kv = gaussians(rnd, batch * cap * w, 1f);
        float[] qLat = gaussians(rnd, rows * heads * dc, 1f), q = gaussians(rnd, rows * heads * (dn + dr), 1f);
        float scale = (float) (1 / Math.sqrt(dn + dr));

        for (String path : new String[] {"absorbed", "tiled"}) {
            String[] names = backends.split(",");
            KernelGraph[] graphs = new KernelGraph[names.length];
            JvmExecutor[] ex = new JvmExecutor[names.length];
            for (int b = 0; b < names.length; b++) {
                ex[b] = names[b].equals("java-fast") ? new FastExecutor() : new JvmExecutor();
                int splits = path.equals("tiled") ? (ex[b] instanceof FastExecutor ? Math.max(1, (2 * ex[b].parallelism() + rows - 1) / rows) : 1) : 0;
                graphs[b] = graph(path, rows, heads, dn, dr, dc, nIdx, dIdx, cap, k, scale, splits, qCodes, hw, keys, kScale, kv, qLat, q, meta, pow2);
            }
            int rounds = Math.max(1, reps / 5);
            long[][][] nanos = new long[names.length][rounds * 5][];
            long[][] total = new long[names.length][rounds * 5];
            for (int b = 0; b < names.length; b++) {
                for (int i = 0; i < (names[b].equals("java-fast") ? 10 : 1); i++) ex[b].execute(graphs[b], new long[graphs[b].tasks().size()]);
            }
            for (int r = 0; r < rounds; r++) {
                for (int b = 0; b < names.length; b++) {
                    for (int i = 0; i < 5; i++) {
                        int n = r * 5 + i;
                        nanos[b][n] = new long[graphs[b].tasks().size()];
                        long t0 = System.nanoTime();
                        ex[b].execute(graphs[b], nanos[b][n]);
                        total[b][n] = System.nanoTime() - t0;
                    }
                }
            }
            for (int b = 0; b < names.length; b++) {
                List<KernelGraph.Task> tasks = graphs[b].tasks();
                System.out.printf("sparse %s, B%d T%d H%d, indexer %dx%d top-%d, %s: step median %.3f ms of %d%n", path, batch, context, heads,
                        nIdx, dIdx, k, ex[b].device(), median(total[b]) / 1e6, rounds * 5);
                for (int t = 0; t < tasks.size(); t++) {
                    long[] col = new long[rounds * 5];
                    for (int n = 0; n < col.length; n++) col[n] = nanos[b][n][t];
                    System.out.printf("  %-20s %-34s %9.3f ms%n", tasks.get(t).id(),
                            tasks.get(t).kernel().getDeclaringClass().getSimpleName() + "." + tasks.get(t).kernel().getName(), median(col) / 1e6);
                }
                ex[b].close();
            }
        }
    }

    private static KernelGraph graph(String path, int rows, int heads, int dn, int dr, int dc, int nIdx, int dIdx, int cap, int k, float scale,
                                     int splits, byte[] qCodes, float[] hw, byte[] keys, float[] kScale, float[] kv, float[] qLat, float[] q,
                                     int[] meta, float[] pow2) {
        KernelGraph g = new KernelGraph("sparse-" + path);
        g.input("qCodes", qCodes);
        g.input("hw", hw);
        g.input("keys", keys);
        g.input("kScale", kScale);
        g.input("kv", kv);
        g.input("qLat", qLat);
        g.input("q", q);
        g.input("attnMeta", meta);
        g.input("pow2", pow2);
        float[] scores = g.scratch("index_scores", new float[rows * cap]);
        int[] sortKeys = g.scratch("topk_keys", new int[rows * cap]), hist = g.scratch("topk_hist", new int[rows * TopK.BINS]);
        int[] selected = g.scratch("index_topk", new int[rows * k]), slots = g.scratch("sparse_slots", new int[rows * k]);
        short[] halves = g.input("kv16", new short[1]);     // an f32 cache: the other dtypes' arrays unused
        byte[] bytes = g.input("kv8", new byte[1]);
        float[] oLat = g.output("o_lat", new float[rows * heads * dc]);
        g.task("indexer.scores", Indexer::cachedScores, qCodes, hw, keys, kScale, scores, meta, rows, nIdx, dIdx, cap, cap, pow2);
        g.task("indexer.topk", TopK::selectTopK, scores, sortKeys, hist, selected, meta, rows, cap, k, pow2);
        g.task("sparse_slots", SparseAttention::selectedSlots, selected, slots, meta, rows, k, cap);
        if (path.equals("absorbed")) {
            float[] s = g.scratch("scores", new float[rows * heads * k]);
            g.task("sparse_scores", SparseAttention::sparseScores, qLat, q, kv, halves, bytes, CacheLayout.F32, slots, s, rows, k, heads, dn, dr, dc, scale);
            g.task("sparse_softmax", SparseAttention::sparseSoftmax, s, slots, rows, k, heads);
            g.task("sparse_values", SparseAttention::sparseValues, s, kv, halves, bytes, CacheLayout.F32, slots, oLat, rows, k, heads, dc, dr);
        } else {
            int parts = rows * heads * splits;
            float[] sTile = g.scratch("s_tile", new float[parts * 64]), oPart = g.scratch("o_part", new float[parts * dc]);
            float[] ml = g.scratch("ml_part", new float[2 * parts]);
            g.task("sparse_split_tiles", SparseAttention::sparseSplitTiles, qLat, q, kv, halves, bytes, CacheLayout.F32, slots, sTile, oPart, ml,
                    rows, k, heads, dn, dr, dc, scale, 64, splits);
            g.task("combine", OnlineSoftmax::combine, oPart, ml, oLat, rows, heads, splits, dc);
        }
        return g;
    }

    private static float[] gaussians(SplittableRandom rnd, int n, float sd) {
        float[] a = new float[n];
        for (int i = 0; i < n; i++) a[i] = (float) rnd.nextGaussian() * sd;
        return a;
    }

    private static double median(long[] a) {
        long[] s = a.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2.0;
    }
}
