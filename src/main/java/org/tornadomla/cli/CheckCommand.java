package org.tornadomla.cli;

import org.tornadomla.MlaException;
import org.tornadomla.backends.Backends;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.bench.LayerCheck;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.graph.GraphExecutor;
import org.tornadomla.weights.WeightDtype;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * The whole layer on a backend against the JVM reference kernels in the same process, for every path ×
 * cache dtype × kernel set: one PASS/FAIL line each (the GPU kit's check.txt). Exit code 1 on any FAIL.
 */
@Command(name = "check", mixinStandardHelpOptions = true,
        description = "Run a prefill and decode steps of one MLA layer (DeepSeek-V3 attention geometry, seeded random weights, "
                + "sequences of different lengths) on a backend and on the JVM reference kernels; print one "
                + "PASS|FAIL line per path × cache dtype × kernel set with the largest errors. Exit code 1 if any case fails. On TornadoVM's "
                + "CUDA backend this is also the first check of the tensor-core scores and values (compiled, not yet run on a GPU), "
                + "and, where the prefill has more than 128 token rows (--batch × --prefill), of the cuBLAS SGEMMs (checked on stand-ins only).")
public final class CheckCommand implements Callable<Integer> {
    /** Exit code when a case fails (2 stays for bad input). */
    static final int FAILED = 1;

    @Option(names = "--backend", defaultValue = "java-fast", description = "java-fast, java-reference or tornado (default: ${DEFAULT-VALUE})")
    String backend;

    @Option(names = "--device", description = "TornadoVM device B:D as `mla devices` lists them (default: TornadoVM's default device)")
    String device;

    @Option(names = "--plain-kernels", description = "on TornadoVM, check only the plain @Parallel kernels (not the KernelContext set)")
    boolean plainKernels;

    @Option(names = "--quick", description = "hidden 256, batch 2, prefill 3, 2 decode steps (instead of 2048, 3, 5, 2)")
    boolean quick;

    @Option(names = "--hidden", description = "hidden size; the attention geometry is DeepSeek-V3's (default: 2048, 256 with --quick)")
    Integer hidden;

    @Option(names = "--batch", description = "sequences, of different lengths (default: 3, 2 with --quick)")
    Integer batch;

    @Option(names = "--prefill", description = "prefill tokens per sequence (default: 5, 3 with --quick)")
    Integer prefill;

    @Option(names = "--steps", description = "decode steps after the prefill (default: 2 with or without --quick)")
    Integer steps;

    @Option(names = "--tile", defaultValue = "4", description = "tiled path: tile size, small so several tiles occur (default: ${DEFAULT-VALUE})")
    int tile;

    @Option(names = "--splits", defaultValue = "3", description = "tiled path: KV splits, 0 = auto (as many as keep every core busy; default: ${DEFAULT-VALUE})")
    int splits;

    @Option(names = "--tol", description = "relative tolerance of the outputs (default: " + LayerCheck.TOL + ")")
    Double tol;

    @Option(names = "--path", split = ",", description = "only these paths (default: naive,absorbed,tiled)")
    List<String> paths;

    @Option(names = "--cache-dtype", split = ",", description = "only these cache dtypes (default: f32,bf16,int8,fp8)")
    List<String> dtypes;

    @Option(names = "--weights-dtype", split = ",", description = "how the projection weights are held, one round of cases each: "
            + "f32, bf16, fp8 (default: f32); lines of bf16 and fp8 weights end in weights=…")
    List<String> weightsDtypes;

    @Option(names = "--sparse", description = "a sparse (DeepSeek-V3.2 DSA) layer: the same attention plus an indexer of "
            + SPARSE_INDEX_HEADS + " heads x 128 selecting the top " + SPARSE_TOPK + " positions (below the context); the tokens before the prefill "
            + "come from a variable-length step of the layer (a sparse cache cannot be written from the host)")
    boolean sparse;

    static final int SPARSE_INDEX_HEADS = 8;
    static final int SPARSE_TOPK = 4;

    @Option(names = "--seed", defaultValue = "42", description = "seed of weights and inputs (default: ${DEFAULT-VALUE})")
    long seed;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        boolean tornado = KernelOptions.isTornado(backend);
        if (plainKernels && !tornado) throw new MlaException("--plain-kernels needs --backend tornado");
        String name = KernelOptions.withDevice(backend, device);
        if (tol != null && !(tol >= 0)) throw new MlaException("--tol must be >= 0, found " + tol);
        int d = hidden != null ? hidden : quick ? 256 : 2048;
        if (d < 1) throw new MlaException("--hidden must be >= 1, found " + d);
        MlaConfig cfg = MlaConfig.deepseekV3().withHiddenSize(d);
        if (sparse) cfg = cfg.withIndexer(new org.tornadomla.config.IndexerConfig(SPARSE_INDEX_HEADS, 128, SPARSE_TOPK, true, false));
        LayerCheck.Workload work = new LayerCheck.Workload(batch != null ? batch : quick ? 2 : 3,
                prefill != null ? prefill : quick ? 3 : 5, steps != null ? steps : 2, seed);

        List<AttentionPath> pathList = paths == null ? List.of(AttentionPath.values()) : paths.stream().map(AttentionPath::parse).toList();
        List<CacheDtype> dtypeList = dtypes == null ? List.of(CacheDtype.values()) : dtypes.stream().map(CacheDtype::parse).toList();
        List<WeightDtype> weightList = weightsDtypes == null ? List.of(WeightDtype.F32) : weightsDtypes.stream().map(WeightDtype::parse).distinct().toList();

        // the kernel sets: on TornadoVM plain @Parallel kernels and the KernelContext ones; on the JVM only one
        Map<String, GraphExecutor> sets = new LinkedHashMap<>();
        if (tornado) {
            sets.put("plain", Backends.create(name, new Backends.Options(0, null, false)));
            if (!plainKernels) sets.put("kernel-context", Backends.create(name, new Backends.Options(0, null, true)));
        } else {
            sets.put("plain", Backends.create(backend));
        }
        String where = sets.values().iterator().next().device();
        out.printf("mla check: %s against the JVM reference kernels (JvmExecutor), same process%n", where);
        out.printf("layer: DeepSeek-V3 attention geometry (H=%d, q_lora_rank=%d, kv_lora_rank=%d, d_n=%d, d_r=%d, d_v=%d), hidden %d, seed %d%n",
                cfg.numHeads(), cfg.qLoraRank(), cfg.kvLoraRank(), cfg.qkNopeHeadDim(), cfg.qkRopeHeadDim(), cfg.vHeadDim(), d, seed);
        if (sparse) out.printf("sparse: DeepSeek-V3.2's indexer (%d heads x 128, ue8m0 FP8 keys), top %d of the context; tokens before the prefill "
                + "from a variable-length step of the layer%n", SPARSE_INDEX_HEADS, SPARSE_TOPK);
        StringBuilder lengths = new StringBuilder();
        for (int b = 0; b < work.batch(); b++) lengths.append(b == 0 ? "" : ", ").append(LayerCheck.prefix(b));
        out.printf("work: batch %d (tokens cached before the prefill: %s), prefill %d, %d decode steps; tiled: tile %d, %d splits; "
                + "+paged: a paged cache of blocks of %d tokens in shuffled order, variable-length steps%n",
                work.batch(), lengths, work.prefill(), work.steps(), tile, splits, LayerCheck.PAGED_BLOCK);
        out.printf(Locale.ROOT, "compared: the cache the device wrote (each number within f32 noise, or one code off in bf16/int8/fp8: "
                + "cache_flips), and every prefill and decode output (device outputs poisoned with NaN first) against the reference "
                + "over the device's cache codes; error = |device - reference| / max(1, |reference|), tol %.0e%n", tol != null ? tol : LayerCheck.TOL);
        if (sets.values().stream().anyMatch(GraphExecutor::bf16TensorCores)) {
            out.printf(Locale.ROOT, "tensor cores: the kernel-context sets take the absorbed path's scores and values over a bf16 or fp8 cache as bf16 "
                    + "mma.sync products, the query and the probabilities rounded to bf16 (TensorCoreAttention; compiled for sm_90 by the compile gate, "
                    + "not yet run on a GPU by this project): those cases allow tol %.0e%n", tol != null ? tol : LayerCheck.TOL_BF16_PRODUCTS);
        }
        sets.values().stream().map(GraphExecutor::libraryGemms).filter(java.util.Objects::nonNull).findFirst()
                .ifPresent(l -> out.println("library GEMMs: " + l));
        out.flush();

        int pass = 0, fail = 0;
        long t0 = System.nanoTime();
        try {
            for (WeightDtype weightsDtype : weightList) {
                LayerCheck check = new LayerCheck(cfg, work, tile, splits, weightsDtype);
                long r0 = System.nanoTime();
                check.prepareReferences(pathList, dtypeList);
                out.printf(Locale.ROOT, "(reference runs%s: %.1f s)%n", weightsDtype == WeightDtype.F32 ? "" : ", " + weightsDtype + " weights",
                        (System.nanoTime() - r0) / 1e9);
                out.flush();
                for (AttentionPath path : pathList) {
                    for (CacheDtype dtype : dtypeList) {
                        // every kernel set over the contiguous cache, then the last (the default) over a paged one
                        List<Map.Entry<String, GraphExecutor>> cases = new java.util.ArrayList<>(sets.entrySet());
                        cases.add(Map.entry(cases.getLast().getKey() + "+paged", cases.getLast().getValue()));
                        for (Map.Entry<String, GraphExecutor> set : cases) {
                            boolean paged = set.getKey().endsWith("+paged");
                            LayerCheck.Result r = check.check(set.getValue(), set.getKey(), path, dtype, paged ? LayerCheck.PAGED_BLOCK : 0);
                            if (tol != null) r = r.withTolerance(tol);
                            out.println(r.line());
                            out.flush();
                            if (r.pass()) pass++; else fail++;
                        }
                    }
                }
            }
        } finally {
            for (GraphExecutor e : sets.values()) e.close();
        }
        out.printf(Locale.ROOT, "%d PASS, %d FAIL (%.1f s)%n", pass, fail, (System.nanoTime() - t0) / 1e9);
        out.flush();
        return fail == 0 ? 0 : FAILED;
    }
}
