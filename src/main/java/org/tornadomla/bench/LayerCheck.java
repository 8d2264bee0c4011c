package org.tornadomla.bench;

import org.tornadomla.cache.PagedCacheSpec;
import org.tornadomla.cache.internal.CacheStorage;
import org.tornadomla.MlaException;
import org.tornadomla.attention.AttentionOptions;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.attention.MlaLayer;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.internal.Gaussians;
import org.tornadomla.weights.Bf16Bits;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.graph.DeviceResident;
import org.tornadomla.graph.GraphExecutor;
import org.tornadomla.graph.JvmExecutor;
import org.tornadomla.graph.KernelGraph;
import org.tornadomla.weights.MlaWeights;
import org.tornadomla.weights.WeightDtype;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The whole layer on a device against the JVM reference executor ({@link JvmExecutor}) in the same process:
 * a prefill and a few decode steps for one path and cache dtype. This is what {@code mla check} (and the GPU
 * kit's check.txt) runs for every path × dtype × kernel set.
 *
 * <p>The batch holds sequences of different lengths: before the prefill, sequence b already holds
 * {@link #prefix(int)} tokens (the same random latents in both caches), so every step attends over a
 * different context per sequence. The device's output buffer is filled with NaN before each device
 * execution, so an output the device never wrote cannot pass.
 *
 * <p>Two comparisons, both must hold:
 * <ol>
 *   <li>The cache the device wrote against the reference's: every stored number equal within f32 noise, or, in
 *       a quantised cache (bf16, int8, fp8), off by at most one code. A device value a few ulps from the JVM's
 *       can legitimately round to the neighbouring code; such a flip moves the layer output by up to a few 1e-3
 *       (seen with java-fast at hidden 2048: bf16 1.1e-3, int8 2.4e-3, fp8 5.4e-3), far more than the arithmetic.</li>
 *   <li>Every prefill and decode output against the reference kernels run over <em>the device's cache codes</em>
 *       (when any code differs, the reference is run again with the device's cache copied in right after its
 *       own cache append), so flips do not count and one tolerance, {@link #TOL}, serves every dtype.</li>
 * </ol>
 * Error per output element: |device − reference| / max(1, |reference|), as the tests' assertClose.
 */
public final class LayerCheck {
    /** Relative tolerance: fast-math and fused multiply-adds on the device (TornadoLayerTest's 1e-4). */
    public static final double TOL = 1e-4;
    /**
     * Relative tolerance where the device rounds the query and the probabilities to bf16 ({@link GraphExecutor#bf16TensorCores}:
     * TornadoVM's tensor-core scores and values over a bf16 or fp8 cache): bf16 keeps 8 significant bits, a relative step of 2^-8 = 3.9e-3
     * per number; 1e-2, the tolerance of TornadoVM's own bf16 tensor-core GEMM test.
     */
    public static final double TOL_BF16_PRODUCTS = 1e-2;

    /**
     * One case's outcome: the largest output errors, the cache codes one step off the reference's ({@code
     * cacheFlips}, -1 for an f32 cache), and {@code note} when the device run threw or its cache is wrong.
     */
    public record Result(AttentionPath path, CacheDtype dtype, String kernels, double maxAbsErr, double maxRelErr,
                         double tol, int cacheFlips, String note, WeightDtype weights) {
        public Result(AttentionPath path, CacheDtype dtype, String kernels, double maxAbsErr, double maxRelErr,
                      double tol, int cacheFlips, String note) {
            this(path, dtype, kernels, maxAbsErr, maxRelErr, tol, cacheFlips, note, WeightDtype.F32);
        }

        public boolean pass() {
            return note == null && maxRelErr <= tol;            // NaN compares false: a poisoned output fails
        }

        /**
         * {@code PASS|FAIL <path> <dtype> <kernels> max_abs_err=… max_rel_err=… tol=… [cache_flips=…] [weights=…]
         * [error=…]}; {@code weights=} names the projection weights' dtype when it is not f32.
         */
        public String line() {
            String s = String.format(Locale.ROOT, "%s %s %s %s max_abs_err=%.3e max_rel_err=%.3e tol=%.0e",
                    pass() ? "PASS" : "FAIL", path, dtype, kernels, maxAbsErr, maxRelErr, tol);
            if (cacheFlips >= 0) s += " cache_flips=" + cacheFlips;
            if (weights != WeightDtype.F32) s += " weights=" + weights;
            return note == null ? s : s + " error=" + note;
        }

        public Result withTolerance(double t) {
            return new Result(path, dtype, kernels, maxAbsErr, maxRelErr, t, cacheFlips, note, weights);
        }
    }

    /** What the layer is asked to do: tokens per sequence in the prefill, decode steps after it. */
    public record Workload(int batch, int prefill, int steps, long seed) {
        public Workload {
            if (batch < 1 || prefill < 1 || steps < 0) {
                throw new MlaException("check needs batch >= 1, prefill >= 1 and steps >= 0, found " + batch + ", " + prefill + ", " + steps);
            }
        }
    }

    /** A run's outputs (prefill, then each decode step) and its final cache storage (f32, bf16, byte arrays). */
    private record Run(List<float[]> outputs, Object[] storage) {
    }

    private final MlaConfig config;
    private final MlaWeights weights;
    private final Workload work;
    private final int tile, splits;
    private final Map<String, Run> reference = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * @param tile   tiled path: tile size; small so a few tiles and empty splits occur at test lengths
     * @param splits tiled path: KV splits
     */
    public LayerCheck(MlaConfig config, Workload work, int tile, int splits) {
        this(config, work, tile, splits, WeightDtype.F32);
    }

    /**
     * As {@link #LayerCheck(MlaConfig, Workload, int, int)}, the projection weights held as {@code weightsDtype}
     * (the same seeded weights, converted): device and reference both read them in that form.
     */
    public LayerCheck(MlaConfig config, Workload work, int tile, int splits, WeightDtype weightsDtype) {
        this.config = config;
        this.work = work;
        MlaWeights w = MlaWeights.random(config, work.seed());
        this.weights = weightsDtype == WeightDtype.F32 ? w : w.to(weightsDtype);
        this.tile = tile;
        this.splits = splits;
    }

    /** Tokens sequence b holds before the prefill: 0, 3, 6, 2, 5, 1, 4, … (different lengths in one batch). */
    public static int prefix(int b) {
        return 3 * b % 7;
    }

    /** Cache capacity: the longest sequence after prefill and decode steps, plus 2 unused slots. */
    int capacity() {
        int maxPrefix = 0;
        for (int b = 0; b < work.batch(); b++) maxPrefix = Math.max(maxPrefix, prefix(b));
        return maxPrefix + work.prefill() + work.steps() + 2;
    }

    /** Block size of the paged cases: small, so that every sequence spans blocks and tiles cross them. */
    public static final int PAGED_BLOCK = 4;

    /** Runs one case on {@code device} and compares it with the reference (computed once per path and dtype). */
    public Result check(GraphExecutor device, String kernels, AttentionPath path, CacheDtype dtype) {
        return check(device, kernels, path, dtype, 0);
    }

    /**
     * As {@link #check(GraphExecutor, String, AttentionPath, CacheDtype)}, the device's run over a paged cache of
     * blocks of {@code blockSize} tokens (0: contiguous) handed out in a shuffled order, its steps as
     * variable-length calls; compared with the same contiguous reference (the paged cache's sequences gathered
     * into the contiguous layout).
     */
    public Result check(GraphExecutor device, String kernels, AttentionPath path, CacheDtype dtype, int blockSize) {
        Run ref = reference.computeIfAbsent(path + "/" + dtype, k -> run(new JvmExecutor(), path, dtype, false, 0));
        boolean tensorCoreCache = dtype == CacheDtype.BF16 || dtype == CacheDtype.FP8;
        double tol = path == AttentionPath.ABSORBED && tensorCoreCache && device.bf16TensorCores() ? TOL_BF16_PRODUCTS : TOL;
        Run dev;
        try {
            dev = run(device, path, dtype, true, blockSize);
        } catch (RuntimeException e) {
            String msg = String.valueOf(e.getMessage()).lines().findFirst().orElse("").strip();
            return new Result(path, dtype, kernels, Double.NaN, Double.NaN, tol, -1, e.getClass().getSimpleName() + ": " + msg, weights.dtype());
        }
        int[] flips = {0};
        String cacheError = compareCaches(dtype, dev.storage(), ref.storage(), flips);
        List<float[]> expected = ref.outputs();
        if (cacheError == null && flips[0] > 0) {
            // the reference again, over the device's cache codes: what the outputs must match
            expected = run(new PinnedCacheExecutor(dev.storage()), path, dtype, false, 0).outputs();
        }
        double abs = 0, rel = 0;
        for (int i = 0; i < expected.size(); i++) {
            float[] e = expected.get(i), a = dev.outputs().get(i);
            for (int j = 0; j < e.length; j++) {
                double err = Math.abs((double) a[j] - e[j]);
                if (Double.isNaN(err)) {
                    abs = rel = Double.NaN;
                    break;
                }
                abs = Math.max(abs, err);
                rel = Math.max(rel, err / Math.max(1, Math.abs(e[j])));
            }
            if (Double.isNaN(rel)) break;
        }
        return new Result(path, dtype, kernels, abs, rel, tol, dtype == CacheDtype.F32 ? -1 : flips[0], cacheError, weights.dtype());
    }

    /**
     * Computes the reference runs of these cases at once, in parallel (each is sequential reference kernels:
     * on a machine with many cores this takes the time of one).
     */
    public void prepareReferences(List<AttentionPath> paths, List<CacheDtype> dtypes) {
        List<Runnable> jobs = new ArrayList<>();
        for (AttentionPath p : paths) {
            for (CacheDtype d : dtypes) {
                if (!reference.containsKey(p + "/" + d)) jobs.add(() -> reference.putIfAbsent(p + "/" + d, run(new JvmExecutor(), p, d, false, 0)));
            }
        }
        jobs.parallelStream().forEach(Runnable::run);
    }

    /** Every case for one executor: paths × dtypes, contiguous and paged. */
    public List<Result> checkAll(GraphExecutor device, String kernels) {
        List<Result> out = new ArrayList<>();
        for (AttentionPath p : AttentionPath.values()) {
            for (CacheDtype d : CacheDtype.values()) {
                out.add(check(device, kernels, p, d));
                out.add(check(device, kernels + "+paged", p, d, PAGED_BLOCK));
            }
        }
        return out;
    }

    /**
     * Prefix, prefill, decode steps on {@code executor}; the prefill output, each decode output and the final
     * cache storage (brought back from the device when the layer is closed).
     */
    private Run run(GraphExecutor executor, AttentionPath path, CacheDtype dtype, boolean poison, int blockSize) {
        int d = config.hiddenSize(), dc = config.kvLoraRank(), dr = config.qkRopeHeadDim(), batch = work.batch();
        SplittableRandom rnd = new SplittableRandom(work.seed() + 1);
        List<float[]> outputs = new ArrayList<>();
        LatentCache cache;
        try (MlaLayer layer = new MlaLayer(weights, poison ? new Poisoning(executor) : executor)) {
            if (blockSize == 0) {
                cache = layer.newCache(batch, capacity(), dtype);
            } else {
                int blocks = (capacity() + blockSize - 1) / blockSize;
                cache = layer.newPagedCache(PagedCacheSpec.builder().maxSequences(batch).maxSequenceLength(capacity()).numBlocks(batch * blocks).blockSize(blockSize).dtype(dtype).build());
                CacheStorage.of(cache).shuffleFreeBlocks(work.seed());
                for (int b = 0; b < batch; b++) cache.addSequence();
            }
            AttentionOptions opt = new AttentionOptions(path, tile, splits);
            if (config.sparse()) {
                // a sparse cache cannot be written from the host (a latent alone has no indexer keys): the tokens
                // before the prefill come from a variable-length step of the layer itself, on the same executor
                int[] ids = java.util.stream.IntStream.range(0, batch).filter(b -> prefix(b) > 0).toArray();
                int[] counts = Arrays.stream(ids).map(LayerCheck::prefix).toArray();
                if (ids.length > 0) layer.forward(cache, Gaussians.floats(rnd, Arrays.stream(counts).sum() * d, 1), ids, counts, opt);
            } else {
                for (int b = 0; b < batch; b++) {
                    int n = prefix(b);
                    cache.write(b, Gaussians.floats(rnd, n * dc, 1), Gaussians.floats(rnd, n * dr, 1));
                }
            }
            float[] x = Gaussians.floats(rnd, batch * work.prefill() * d, 1);
            outputs.add(forward(layer, cache, x, work.prefill(), opt, poison, blockSize > 0));
            for (int s = 0; s < work.steps(); s++) {
                outputs.add(forward(layer, cache, Gaussians.floats(rnd, batch * d, 1), 1, opt, poison, blockSize > 0));
            }
        }
        CacheStorage.of(cache).toHost();
        Object[] storage = CacheStorage.of(blockSize == 0 ? cache : contiguousCopy(cache)).arrays();
        return new Run(outputs, new Object[] {((float[]) storage[0]).clone(), ((short[]) storage[1]).clone(), ((byte[]) storage[2]).clone()});
    }

    /** A paged cache's sequences, stored numbers and scales as they are, in a contiguous cache of {@link #capacity()}. */
    private LatentCache contiguousCopy(LatentCache paged) {
        // a sparse config's copy holds the latent only (compareCaches compares the latent; the indexer keys stay out)
        LatentCache c = new LatentCache(config.sparse() ? config.withIndexer(null) : config, paged.maxSequences(), capacity(), paged.dtype());
        for (int b = 0; b < paged.maxSequences(); b++) {
            if (paged.dtype() == CacheDtype.INT8 || paged.dtype() == CacheDtype.FP8) {
                CacheStorage.Quantised q = CacheStorage.of(paged).quantised(b);
                CacheStorage.of(c).writeQuantised(b, q.values(), q.scales(), q.rope());
            } else {
                c.write(b, paged.latent(b), paged.ropeKey(b));     // bf16 decoded and encoded again: the same codes
            }
        }
        return c;
    }

    /** One step of {@code tokens} per sequence: a uniform forward call, or (paged) the variable-length one. */
    private static float[] forward(MlaLayer layer, LatentCache cache, float[] x, int tokens, AttentionOptions opt, boolean poison, boolean varlen) {
        float[] y = new float[x.length];
        int[] ids = CacheStorage.of(cache).allSequences(), counts = new int[ids.length];
        Arrays.fill(counts, tokens);
        if (poison) Arrays.fill(y, Float.NaN);             // the graph's output buffer is poisoned by Poisoning
        if (varlen) {
            System.arraycopy(layer.forward(cache, x, ids, counts, opt), 0, y, 0, y.length);
        } else {
            layer.forward(cache, x, tokens, opt, y);
        }
        return y;
    }

    /**
     * Compares the device's final cache storage with the reference's; counts quantised codes one step apart in
     * {@code flips[0]}; returns what is wrong (null when every number agrees or is one code off).
     */
    static String compareCaches(CacheDtype dtype, Object[] dev, Object[] ref, int[] flips) {
        float[] df = (float[]) dev[0], rf = (float[]) ref[0];
        for (int i = 0; i < rf.length; i++) {             // f32 values, int8/fp8 scales, the bf16/e4m3 decoding table
            if (df[i] != rf[i] && !(Math.abs(df[i] - rf[i]) <= TOL * Math.max(1, Math.abs(rf[i])))) {   // the table holds ±inf
                return String.format(Locale.ROOT, "cache float storage [%d]: expected %s found %s", i, rf[i], df[i]);
            }
        }
        short[] ds = (short[]) dev[1], rs = (short[]) ref[1];
        for (int i = 0; i < rs.length; i++) {             // bf16 codes (bf16 cache, fp8's rope part)
            if (ds[i] == rs[i]) continue;
            float a = Bf16Bits.decode(ds[i]), e = Bf16Bits.decode(rs[i]);
            boolean neighbour = Math.abs(ds[i] - rs[i]) == 1;          // same sign: codes are ordered by magnitude
            if (neighbour || Math.abs(a - e) <= TOL * Math.max(1, Math.abs(e))) {
                if (neighbour) flips[0]++;
                continue;
            }
            return String.format(Locale.ROOT, "cache bf16 code [%d]: expected %s found %s (more than one code apart)", i, e, a);
        }
        byte[] db = (byte[]) dev[2], rb = (byte[]) ref[2];
        for (int i = 0; i < rb.length; i++) {             // int8 values, or e4m3 codes (sign + 7 magnitude bits)
            if (db[i] == rb[i]) continue;
            boolean neighbour = dtype == CacheDtype.INT8 ? Math.abs(db[i] - rb[i]) == 1
                    : ((db[i] ^ rb[i]) & 0x80) == 0 && Math.abs((db[i] & 0x7F) - (rb[i] & 0x7F)) == 1
                    || (db[i] & 0x7F) <= 1 && (rb[i] & 0x7F) <= 1;   // e4m3: ±0 and ±the smallest subnormal
            if (neighbour) {
                flips[0]++;
                continue;
            }
            return String.format(Locale.ROOT, "cache byte [%d]: expected %d found %d (more than one code apart)", i, rb[i], db[i]);
        }
        return null;
    }

    /**
     * The reference kernels, with the cache's storage replaced by {@code pinned} right after every cache append:
     * the reference's attention then reads exactly the codes the device stored (positions a step has not yet
     * reached are never read, so the final storage serves every step).
     */
    /**
     * The device executor, with every OUTPUT buffer of a graph filled with NaN before the graph runs: a result the
     * device did not compute and copy back cannot pass. It sees the graph the layer runs (MlaLayer.graph hands out
     * copies), and leaves closing to the caller, who shares the device among cases.
     */
    static final class Poisoning implements GraphExecutor {
        private final GraphExecutor device;

        Poisoning(GraphExecutor device) {
            this.device = device;
        }

        @Override
        public void execute(KernelGraph graph) {
            for (KernelGraph.Buffer b : graph.buffers()) {
                if (b.role() == KernelGraph.Role.OUTPUT && b.array() instanceof float[] f) Arrays.fill(f, Float.NaN);
            }
            device.execute(graph);
        }

        @Override
        public String device() {
            return device.device();
        }

        @Override
        public int parallelism() {
            return device.parallelism();
        }

        @Override
        public boolean statePerGraph() {
            return device.statePerGraph();
        }

        @Override
        public int headsPerWorkItem() {
            return device.headsPerWorkItem();
        }

        @Override
        public Transfers measureTransfers(KernelGraph graph) {
            return device.measureTransfers(graph);
        }

        @Override
        public void release(KernelGraph graph) {
            device.release(graph);
        }

        @Override
        public void close() {
            // the caller's: one device serves every case
        }
    }

    static final class PinnedCacheExecutor extends JvmExecutor {
        private final Object[] pinned;

        PinnedCacheExecutor(Object[] pinned) {
            this.pinned = pinned;
        }

        @Override
        public void execute(KernelGraph graph) {
            for (DeviceResident s : graph.states()) s.toHost();
            for (KernelGraph.Task t : graph.tasks()) {
                try {
                    t.handle().invokeWithArguments(t.args());
                } catch (RuntimeException | Error e) {
                    throw e;
                } catch (Throwable e) {
                    throw new IllegalStateException("task " + t.name() + " failed", e);
                }
                if (t.id().equals("cache_append")) {
                    for (DeviceResident s : graph.states()) {
                        Object[] arrays = s.arrays();
                        // the latent's arrays (a sparse cache's indexer keys after them are the reference's own)
                        for (int i = 0; i < Math.min(arrays.length, pinned.length); i++) {
                            System.arraycopy(pinned[i], 0, arrays[i], 0, java.lang.reflect.Array.getLength(arrays[i]));
                        }
                    }
                }
            }
        }
    }
}
