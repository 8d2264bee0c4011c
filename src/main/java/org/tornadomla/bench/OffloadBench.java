package org.tornadomla.bench;

import org.tornadomla.MlaException;
import org.tornadomla.attention.AttentionOptions;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.attention.MlaLayer;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.cache.PagedCacheSpec;
import org.tornadomla.cache.internal.CacheStorage;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.graph.GraphExecutor;
import org.tornadomla.internal.Gaussians;
import org.tornadomla.weights.MlaWeights;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * {@code mla bench --offload}: the host tier (docs/paged-cache.md). A paged cache of {@code seqs} sequences at
 * {@code context} tokens; times the offload and the restore of one sequence (bytes moved, GB/s: host memory to
 * host memory on the JVM; on TornadoVM the whole storage also crosses the bus, see the docs), and a decode step of
 * every sequence alone and after restoring one (what a restore adds to a step).
 */
public final class OffloadBench {
    private OffloadBench() {
    }

    /** One measurement: medians in ms, the bytes a restore writes, the step's ms with and without a restore before it. */
    public record Result(long bytes, double offloadMs, double restoreMs, double stepMs, double restoreAndStepMs, int reps) {
        public double restoreGBs() {
            return bytes / (restoreMs * 1e6);
        }

        public double offloadGBs() {
            return bytes / (offloadMs * 1e6);
        }
    }

    public static Result run(MlaConfig config, GraphExecutor executor, CacheDtype dtype, int seqs, int context, int blockSize, int reps, long seed) {
        if (seqs < 1 || context < 2 || reps < 1) throw new MlaException("offload bench: needs sequences >= 1, context >= 2, reps >= 1");
        int d = config.hiddenSize(), dc = config.kvLoraRank(), dr = config.qkRopeHeadDim();
        AttentionOptions opt = AttentionOptions.of(AttentionPath.TILED);
        try (MlaLayer layer = new MlaLayer(MlaWeights.random(config, seed), executor)) {
            int perSeq = (context + blockSize - 1) / blockSize;
            LatentCache cache = layer.newPagedCache(PagedCacheSpec.builder().maxSequences(seqs).maxSequenceLength(context)
                    .numBlocks(seqs * perSeq).blockSize(blockSize).dtype(dtype).build());
            CacheStorage.of(cache).shuffleFreeBlocks(seed);
            SplittableRandom rnd = new SplittableRandom(seed + 3);
            int block = Math.min(context - 1, DecodeBench.FILL_BLOCK);
            float[] lat = Gaussians.floats(rnd, block * dc, 1), pe = Gaussians.floats(rnd, block * dr, 1);
            float[] l = new float[(context - 1) * dc], p = new float[(context - 1) * dr];
            for (int t = 0; t < context - 1; t++) {
                System.arraycopy(lat, (t % block) * dc, l, t * dc, dc);
                System.arraycopy(pe, (t % block) * dr, p, t * dr, dr);
            }
            int[] ids = new int[seqs], ones = new int[seqs];
            for (int b = 0; b < seqs; b++) {
                ids[b] = cache.addSequence();
                cache.write(ids[b], l, p);
                ones[b] = 1;
            }
            float[] x = Gaussians.floats(rnd, seqs * d, 1);
            double[] off = new double[reps], res = new double[reps], step = new double[reps], both = new double[reps];
            long bytes = 0;
            // the step warmed up as bench's timings warm a cold step (C2 compiles for seconds; one untimed step had
            // left the medians moving by ±30 % where the restore they compare takes 0.03 ms), then r = −1 warms the rest
            Timing.measure(() -> {
                layer.forward(cache, x, ids, ones, opt);
                cache.truncate(context - 1);
            }, Timing.FIGURES_MS, 2, true);
            for (int r = -1; r < reps; r++) {                 // r = −1: untimed, offload and restore warm up
                long t0 = System.nanoTime();
                layer.forward(cache, x, ids, ones, opt);
                long t1 = System.nanoTime();
                cache.truncate(context - 1);
                long t2 = System.nanoTime();
                cache.offload(ids[0]);
                long t3 = System.nanoTime();
                bytes = CacheStorage.of(cache).hostBytes(ids[0]);
                long t4 = System.nanoTime();
                cache.restore(ids[0]);
                long t5 = System.nanoTime();
                layer.forward(cache, x, ids, ones, opt);
                long t6 = System.nanoTime();
                cache.truncate(context - 1);
                if (r < 0) continue;
                step[r] = (t1 - t0) / 1e6;
                off[r] = (t3 - t2) / 1e6;
                res[r] = (t5 - t4) / 1e6;
                both[r] = (t6 - t4) / 1e6;
            }
            return new Result(bytes, median(off), median(res), median(step), median(both), reps);
        }
    }

    private static double median(double[] a) {
        double[] s = a.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }
}
