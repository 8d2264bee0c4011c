package org.tornadomla.tornado;

import org.tornadomla.MlaException;
import org.tornadomla.graph.DeviceResident;
import org.tornadomla.graph.GraphExecutor;
import org.tornadomla.graph.KernelGraph;
import org.tornadomla.graph.KernelRef;
import org.tornadomla.kernels.Absorb;
import org.tornadomla.kernels.AbsorbedAttention;
import org.tornadomla.kernels.Norms;
import org.tornadomla.kernels.OnlineSoftmax;
import org.tornadomla.kernels.Projections;
import org.tornadomla.kernels.Softmax;
import org.tornadomla.kernels.TopK;
import uk.ac.manchester.tornado.api.GridScheduler;
import uk.ac.manchester.tornado.api.KernelContext;
import uk.ac.manchester.tornado.api.WorkerGrid1D;
import uk.ac.manchester.tornado.api.ImmutableTaskGraph;
import uk.ac.manchester.tornado.api.TaskGraph;
import uk.ac.manchester.tornado.api.TornadoExecutionPlan;
import uk.ac.manchester.tornado.api.TornadoExecutionResult;
import uk.ac.manchester.tornado.api.TornadoProfilerResult;
import uk.ac.manchester.tornado.api.common.LibraryTaskDescriptor;
import uk.ac.manchester.tornado.api.common.TornadoDevice;
import uk.ac.manchester.tornado.api.common.TornadoFunctions;
import uk.ac.manchester.tornado.api.enums.DataTransferMode;
import uk.ac.manchester.tornado.api.enums.ProfilerMode;
import uk.ac.manchester.tornado.api.enums.TornadoVMBackendType;
import uk.ac.manchester.tornado.api.types.arrays.FloatArray;

import java.io.PrintWriter;
import java.lang.invoke.CallSite;
import java.lang.invoke.LambdaMetafactory;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Runs {@link KernelGraph}s as TornadoVM task graphs: the same kernels, JIT-compiled by TornadoVM to OpenCL
 * or PTX for the chosen device.
 *
 * <pre>
 *  KernelGraph role   TornadoVM transfer
 *  WEIGHT, SCRATCH    transferToDevice(FIRST_EXECUTION)   copied once (scratch: its initial zeros)
 *  INPUT              transferToDevice(EVERY_EXECUTION)   x, attnMeta: the step's input, small
 *  OUTPUT             transferToHost(EVERY_EXECUTION)     y: the step's output, small
 *  STATE              transferToDevice(FIRST_EXECUTION) + transferToHost(UNDER_DEMAND)
 *                     the latent cache stays on the device and grows by the on-device append;
 *                     it comes back only when the host needs it
 * </pre>
 *
 * One execution plan per graph, compiled on first use, so every decode step of a sequence reuses one
 * compiled plan (positions and block tables change through the {@code attnMeta} input). The newest copy of a cache is
 * tracked through {@link DeviceResident}: before a plan runs, a cache last written elsewhere (another
 * plan, or the JVM) is brought to the host; a plan that already ran and whose device copy is therefore
 * stale is rebuilt, so its first execution copies the current cache in.
 */
public final class TornadoExecutor implements GraphExecutor {
    /**
     * Room for TornadoVM's own bytecode of one task graph (tornado.tvm.maxbytecodesize, 4096 bytes by default): a
     * sparse config's prefill graph (the indexer's 15 tasks beside attention's) needs more and fails to build with
     * "Buffer Overflow exception" otherwise. Set here unless the JVM was given a value, before TornadoVM reads it
     * (TornadoVM's settings are the system properties, read when its first graph is compiled).
     */
    static final int MAX_BYTECODE_SIZE = 32768;

    static {
        if (System.getProperty("tornado.tvm.maxbytecodesize") == null) {
            System.setProperty("tornado.tvm.maxbytecodesize", Integer.toString(MAX_BYTECODE_SIZE));
        }
    }

    private final TornadoDevice device;            // null: TornadoVM's default, and its -D<graph>.<task>.device mapping
    private final String deviceName;
    private final int computeUnits;
    private final PrintWriter profileOut;
    private final boolean kernelContext;
    /** On TornadoVM's CUDA backend: the tensor-core tasks ({@link TensorCoreAttention}) where the shapes allow them. */
    private final boolean tensorCores;
    /** On TornadoVM's CUDA backend: cuBLAS SGEMMs for the weight products of many rows ({@link CublasProjections}). */
    private final boolean cublas;
    /** The f32 twins of the weights the cuBLAS tasks read, by weight array and family: one per executor, shared by its plans. */
    private final Map<Object, Map<CublasProjections.Family, FloatArray>> twins = new IdentityHashMap<>();
    private final Map<KernelGraph, Plan> plans = new IdentityHashMap<>();
    /**
     * Held while a plan is built and compiled (its first execution), by every executor of this JVM: several
     * executors driven from their own threads (org.tornadomla.parallel: one per device) compile one at a time,
     * then run at once. Compiling on two PoCL devices at once failed here (PoCL 3.1's kernel cache lost a
     * temporary file: "unable to rename temporary ... No such file or directory").
     */
    private static final Object COMPILE = new Object();
    /** Plans built so far (compiled on first execution): a continuous batch must not build one per step. */
    private int plansBuilt;

    /** The system property that turns the tensor-core tasks off ({@code -Dtornadomla.tensorCores=false}). */
    public static final String TENSOR_CORES = "tornadomla.tensorCores";

    /**
     * {@value #TENSOR_CORES}: true (the default) or false, which keeps the KernelContext kernels on the CUDA backend
     * too: for a GPU where the tensor-core tasks fail {@code mla check}, and for timing them against those kernels
     * (the GPU kit's bench-notc.csv). Anything else is refused.
     */
    static boolean tensorCoresAllowed() {
        return switchOn(TENSOR_CORES);
    }

    /** A true/false system property of this backend, true when unset; anything else is refused in one line. */
    static boolean switchOn(String property) {
        String v = System.getProperty(property, "true");
        if (v.equalsIgnoreCase("true")) return true;
        if (v.equalsIgnoreCase("false")) return false;
        throw new MlaException("-D" + property + " must be true or false, found '" + v + "'");
    }

    /** On TornadoVM's default device or "backend:device", with the KernelContext decode kernel. */
    public TornadoExecutor(String deviceSpec, PrintWriter profileOut) {
        this(deviceSpec, profileOut, true);
    }

    /**
     * @param deviceSpec    "backend:device" as {@code ./mla devices} lists them, or null for TornadoVM's default
     * @param profileOut    where to print per-task times after each execution, or null
     * @param kernelContext run the {@link #SUBSTITUTIONS KernelContext kernels} (work-groups, local memory) in
     *                      place of the plain kernels they replace, where the shapes allow it
     */
    public TornadoExecutor(String deviceSpec, PrintWriter profileOut, boolean kernelContext) {
        this.kernelContext = kernelContext;
        boolean tensorCoresAllowed = tensorCoresAllowed();   // checked on every backend: a typo fails here too
        boolean cublasAllowed = CublasProjections.allowed();
        String bailout = System.getProperty("tornado.recover.bailout");
        if (bailout == null || !bailout.equalsIgnoreCase("false")) {
            throw new MlaException("TornadoVM runs need -Dtornado.recover.bailout=False (found " + bailout
                    + "): a kernel that fails to compile must fail, not run in Java; see tornado-config/tornado.argfile");
        }
        this.device = deviceSpec == null ? null : TornadoDevices.resolve(deviceSpec);
        TornadoDevice target = device == null ? TornadoDevices.defaultDevice() : device;
        this.deviceName = TornadoDevices.describe(target);
        this.computeUnits = Math.max(1, target.getPhysicalDevice().getDeviceMaxComputeUnits());
        boolean cuda = target.getTornadoVMBackend() == TornadoVMBackendType.CUDA;
        this.tensorCores = tensorCoresAllowed && kernelContext && cuda;
        this.cublas = cublasAllowed && kernelContext && cuda && CublasProjections.available();
        this.profileOut = profileOut;
    }

    @Override
    public String device() {
        return "tornado " + deviceName;
    }

    /** Two work-groups per compute unit (an H200: 132 multiprocessors), so one can wait on memory while one computes. */
    @Override
    public int parallelism() {
        return 2 * computeUnits;
    }

    @Override
    public void execute(KernelGraph graph) {
        // one graph at a time on this executor, and none after close(): close() waits for a running one (it frees the
        // device buffers a running plan uses) and a closed executor refuses, as a closed java-fast one does
        synchronized (this) {
            if (closed) {
                throw new MlaException("this TornadoVM executor (" + device() + ") is closed; make a new one (Backends.create(\"tornado:"
                        + deviceName.split(" ")[0] + "\"))");
            }
            executeOpen(graph);
        }
    }

    /** Set by {@link #close()}: a closed executor refuses to run. */
    private boolean closed;

    private void executeOpen(KernelGraph graph) {
        Plan plan = plans.get(graph);
        boolean stale = false;
        for (DeviceResident s : graph.states()) {
            if (s.residentOwner() != plan || plan == null) {
                s.toHost();                                   // newest copy was elsewhere: bring it home
                stale |= plan != null && plan.ran;            // and this plan's device copy is old
            }
        }
        if (plan == null || stale) {
            if (plan != null) plan.close();
            synchronized (COMPILE) {
                plan = new Plan(graph);
            }
            plans.put(graph, plan);
            plansBuilt++;
        }
        try {
            if (plan.ran) {
                plan.last = plan.execution.execute();
            } else {
                synchronized (COMPILE) {                     // the first execution compiles
                    plan.last = plan.execution.execute();
                }
            }
        } catch (RuntimeException e) {
            throw new MlaException("TornadoVM failed to run graph " + graph.name() + " on " + deviceName + ": " + rootMessage(e), e);
        }
        plan.ran = true;
        for (DeviceResident s : graph.states()) {
            Plan p = plan;
            s.residentOn(p, () -> p.last.transferToHost(s.arrays()));
        }
        if (profileOut != null) Profiles.print(profileOut, graph, plan.last);
    }

    /** On the CUDA backend the ABSORBED scores and values over a bf16 or fp8 cache are tensor-core products of bf16-rounded operands. */
    @Override
    public boolean bf16TensorCores() {
        return tensorCores;
    }

    @Override
    public String libraryGemms() {
        return cublas ? "the kernel-context sets run the weight products of more than " + GpuProjections.MAX_ROWS
                + " token rows (projections, absorb_q, unabsorb_v) as cuBLAS SGEMMs on f32 copies of the weights (CublasProjections; "
                + "checked on the compile gate's stand-ins, not yet run on a GPU by this project)" : null;
    }

    /** Each plan holds its own device copy of a cache: running another plan over it moves the cache (see {@link #execute}). */
    @Override
    public boolean statePerGraph() {
        return true;
    }

    /** How many execution plans this executor has built (each is compiled on its first execution). */
    public int plansBuilt() {
        return plansBuilt;
    }

    /** The kernel that task {@code taskId} of {@code graph} runs on the device (after the graph ran once), or null. */
    public Method kernelOf(KernelGraph graph, String taskId) {
        Plan plan = plans.get(graph);
        return plan == null ? null : plan.kernels.get(taskId);
    }

    /**
     * One execution with TornadoVM's profiler on: its bytes copied in and out and its kernel time (what
     * {@code mla bench} reports per step). The profiler is switched off again unless --profile asked for it.
     */
    @Override
    public Transfers measureTransfers(KernelGraph graph) {
        if (plans.get(graph) == null) execute(graph);             // build and compile first, without the profiler
        Plan plan = plans.get(graph);
        plan.execution.withProfiler(ProfilerMode.SILENT);
        try {
            execute(graph);
            if (plans.get(graph) != plan) return new Transfers(-1, -1, Double.NaN);   // rebuilt on the way: not counted
            TornadoProfilerResult p = plan.last.getProfilerResult();
            return new Transfers(p.getTotalBytesCopyIn(), p.getTotalBytesCopyOut(), p.getDeviceKernelTime() / 1e6);
        } finally {
            if (profileOut == null) plan.execution.withoutProfiler();
        }
    }

    @Override
    public synchronized void release(KernelGraph graph) {
        Plan plan = plans.remove(graph);
        if (plan != null) {
            for (DeviceResident s : graph.states()) {
                if (s.residentOwner() == plan) s.toHost();
            }
            plan.close();
        }
    }

    @Override
    public synchronized void close() {
        closed = true;
        for (KernelGraph g : new ArrayList<>(plans.keySet())) release(g);
    }

    static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) t = t.getCause();
        return plain(t == e ? String.valueOf(e.getMessage()) : e.getMessage() + " (cause: " + t + ")");
    }

    /**
     * TornadoVM's message without its terminal colours (ESC [ … m) and with its line breaks and tabs as spaces: its
     * out-of-memory hint came through as the escape codes of yellow, a line break and a tab, then "To increase …".
     */
    static String plain(String message) {
        return message.replaceAll("\u001B\\[[0-9;]*[A-Za-z]", "").replaceAll("\\s+", " ").strip();
    }

    /** One graph as one TornadoVM execution plan. */
    private final class Plan implements AutoCloseable {
        final TornadoExecutionPlan execution;
        TornadoExecutionResult last;
        boolean ran;
        /** The kernel each task runs, by task id (a KernelContext replacement or the graph's own). */
        final Map<String, Method> kernels = new java.util.LinkedHashMap<>();

        Plan(KernelGraph g) {
            List<TaskCall> calls = new ArrayList<>();
            GridScheduler grids = new GridScheduler();
            List<Object> ownScratch = new ArrayList<>();   // buffers of the tensor-core tasks, not in the graph
            for (KernelGraph.Task t : g.tasks()) {
                List<TaskCall> tc = tensorCores ? tensorCoreTasks(g, t, grids, ownScratch) : null;
                if (tc != null) {
                    calls.addAll(tc);
                    kernels.put(t.id(), tc.get(1).kernel());
                    continue;
                }
                List<TaskCall> lib = cublas ? cublasTasks(g, t, ownScratch) : null;
                if (lib != null) {
                    calls.addAll(lib);
                    kernels.put(t.id(), lib.get(1).kernel());
                    continue;
                }
                TaskCall opt = kernelContext ? optimized(t, grids) : null;
                calls.add(opt != null ? opt : new TaskCall(t.name(), t.id(), t.kernel(), t.args()));
                kernels.put(t.id(), calls.getLast().kernel());
            }
            // transfer only what the tasks use (an optimized task may leave a plain kernel's scratch unused)
            Set<Object> used = Collections.newSetFromMap(new IdentityHashMap<>());
            for (TaskCall c : calls) used.addAll(Arrays.asList(c.args()));
            TaskGraph tg = new TaskGraph(g.name());
            tg.transferToDevice(DataTransferMode.FIRST_EXECUTION, arrays(g, used, KernelGraph.Role.WEIGHT, KernelGraph.Role.SCRATCH, KernelGraph.Role.STATE));
            if (!ownScratch.isEmpty()) tg.transferToDevice(DataTransferMode.FIRST_EXECUTION, ownScratch.toArray());
            tg.transferToDevice(DataTransferMode.EVERY_EXECUTION, arrays(g, used, KernelGraph.Role.INPUT));
            for (TaskCall c : calls) addTask(tg, c);
            tg.transferToHost(DataTransferMode.EVERY_EXECUTION, arrays(g, used, KernelGraph.Role.OUTPUT));
            tg.transferToHost(DataTransferMode.UNDER_DEMAND, arrays(g, used, KernelGraph.Role.STATE));
            ImmutableTaskGraph itg = tg.snapshot();
            execution = new TornadoExecutionPlan(itg);
            if (device != null) execution.withDevice(device);
            if (!grids.keySet().isEmpty()) execution.withGridScheduler(grids);
            if (profileOut != null) execution.withProfiler(ProfilerMode.SILENT);
        }

        @Override
        public void close() {
            try {
                execution.close();
            } catch (Exception e) {
                throw new MlaException("TornadoVM could not release a plan: " + e.getMessage(), e);
            }
        }
    }

    private static Object[] arrays(KernelGraph g, Set<Object> used, KernelGraph.Role... roles) {
        List<KernelGraph.Role> wanted = Arrays.asList(roles);
        return g.buffers().stream().filter(b -> wanted.contains(b.role()) && used.contains(b.array()))
                .map(KernelGraph.Buffer::array).toArray();
    }

    /**
     * One TornadoVM task: full name (graph.task), id, kernel and its arguments; or, with {@code library} set, a library
     * task (its factory method as the kernel, its parameters as the arguments).
     */
    private record TaskCall(String name, String id, Method kernel, Object[] args, LibraryTaskDescriptor library) {
        TaskCall(String name, String id, Method kernel, Object[] args) {
            this(name, id, kernel, args, null);
        }
    }

    /**
     * The KernelContext kernels that replace plain tasks when {@code kernelContext} is on: each is launched
     * as work-groups sized for a GPU (coalesced weight and cache reads, enough groups at batch 1, local-memory
     * tiles and reductions). Arguments are matched by parameter name and checked here, when the class loads.
     */
    static final List<Substitution> SUBSTITUTIONS = Stream.of(
            Substitution.replace(KernelRef.of(Projections::matVec), KernelRef.of(GpuProjections::matVec))
                    .grid(a -> a.i("out"), GpuProjections.LOCAL),
            Substitution.replace(KernelRef.of(Projections::matMul), KernelRef.of(GpuProjections::matMul))
                    .when(a -> a.i("rows") <= GpuProjections.MAX_ROWS)
                    .grid(a -> a.i("out"), GpuProjections.LOCAL),
            Substitution.replace(KernelRef.of(Absorb::unabsorbValue), KernelRef.of(GpuProjections::unabsorbValue))
                    .grid(a -> a.i("heads") * a.i("dv"), GpuProjections.LOCAL),
            // the same for bf16 and block-scaled FP8 weights
            Substitution.replace(KernelRef.of(Projections::matVecBf16), KernelRef.of(GpuWeightProjections::matVecBf16))
                    .grid(a -> a.i("out"), GpuProjections.LOCAL),
            Substitution.replace(KernelRef.of(Projections::matVecFp8), KernelRef.of(GpuWeightProjections::matVecFp8))
                    .grid(a -> a.i("out"), GpuProjections.LOCAL),
            Substitution.replace(KernelRef.of(Projections::matMulBf16), KernelRef.of(GpuWeightProjections::matMulBf16))
                    .when(a -> a.i("rows") <= GpuProjections.MAX_ROWS)
                    .grid(a -> a.i("out"), GpuProjections.LOCAL),
            Substitution.replace(KernelRef.of(Projections::matMulFp8), KernelRef.of(GpuWeightProjections::matMulFp8))
                    .when(a -> a.i("rows") <= GpuProjections.MAX_ROWS)
                    .grid(a -> a.i("out"), GpuProjections.LOCAL),
            Substitution.replace(KernelRef.of(Absorb::unabsorbValueBf16), KernelRef.of(GpuWeightProjections::unabsorbValueBf16))
                    .grid(a -> a.i("heads") * a.i("dv"), GpuProjections.LOCAL),
            Substitution.replace(KernelRef.of(Absorb::unabsorbValueFp8), KernelRef.of(GpuWeightProjections::unabsorbValueFp8))
                    .grid(a -> a.i("heads") * a.i("dv"), GpuProjections.LOCAL),
            Substitution.replace(KernelRef.of(Norms::rmsNorm), KernelRef.of(GpuNorms::rmsNorm))
                    .grid(a -> a.i("rows"), GpuNorms.LOCAL),
            Substitution.replace(KernelRef.of(Softmax::softmax), KernelRef.of(GpuAttention::softmax))
                    .grid(a -> a.i("rows") * a.i("heads"), GpuAttention.LOCAL),
            Substitution.replace(KernelRef.of(AbsorbedAttention::absorbedScores), KernelRef.of(GpuAttention::absorbedScores))
                    .when(a -> GpuAttention.supportsScores(a.i("dc"), a.i("dr")))
                    .grid(a -> GpuAttention.scoreGroups(a.i("rows"), a.i("capacity")), GpuAttention.LOCAL),
            Substitution.replace(KernelRef.of(OnlineSoftmax::splitTiles), KernelRef.of(FlashDecode::splitKv))
                    .when(a -> FlashDecode.supports(a.i("heads"), a.i("dc"), a.i("dr")))
                    .extra("group", a -> FlashDecode.headsPerGroup(a.i("heads")))
                    .grid(a -> FlashDecode.groups(a.i("rows"), a.i("numSplits"), a.i("heads")), FlashDecode.LOCAL),
            // sparse attention's top-k: a work-group per row instead of a thread per row
            Substitution.replace(KernelRef.of(TopK::selectTopK), KernelRef.of(GpuTopK::selectTopK))
                    .grid(a -> a.i("rows"), GpuTopK.LOCAL)
    ).map(Substitution::check).toList();

    /** The KernelContext task that replaces plain task {@code t} (with its grid added to {@code grids}), or null. */
    private static TaskCall optimized(KernelGraph.Task t, GridScheduler grids) {
        for (Substitution s : SUBSTITUTIONS) {
            if (s.plain.equals(t.kernel())) {
                Object[] args = s.arguments(t, grids);
                return args == null ? null : new TaskCall(t.name(), t.id(), s.replacement, args);
            }
        }
        return null;
    }

    /**
     * On the CUDA backend, the tasks that replace the ABSORBED path's {@code absorbedScores} and {@code absorbedValues}
     * over a bf16 or fp8 cache with tensor-core products ({@link TensorCoreAttention}: pack the bf16 operand, the MMA kernel,
     * unpack into the graph's own buffer), their buffers added to {@code scratch}; null for any other task or shape
     * (the task then takes the usual substitution).
     */
    private static List<TaskCall> tensorCoreTasks(KernelGraph g, KernelGraph.Task t, GridScheduler grids, List<Object> scratch) {
        boolean scores = t.kernel().equals(KernelRef.of(AbsorbedAttention::absorbedScores).method());
        boolean values = t.kernel().equals(KernelRef.of(AbsorbedAttention::absorbedValues).method());
        if (!scores && !values) return null;
        Substitution.Args a = Substitution.Args.of(t);
        int dtype = a.i("dtype"), rows = a.i("rows"), capacity = a.i("capacity"), heads = a.i("heads"), dr = a.i("dr"), dc = a.i("dc");
        if (scores ? !TensorCoreAttention.supports(dtype, heads, dc, dr) : !TensorCoreAttention.supportsValues(dtype, heads, dc, dr)) return null;
        String mma = t.id() + "_mma";
        int warps = scores ? TensorCoreAttention.groups(rows, heads, capacity) : TensorCoreAttention.valueGroups(rows, heads, dc);
        WorkerGrid1D grid = new WorkerGrid1D(warps * TensorCoreAttention.WARP);
        grid.setLocalWork(TensorCoreAttention.WARP, 1, 1);
        grids.addWorkerGrid(g.name() + "." + mma, grid);
        String pack = t.id() + "_bf16";
        if (scores) {
            int dn = a.i("dn");
            int[] qWords = new int[rows * heads * (dc + dr) / 2];
            FloatArray tcScores = new FloatArray(rows * heads * TensorCoreAttention.padded(capacity));
            scratch.add(qWords);
            scratch.add(tcScores);
            return List.of(
                    new TaskCall(g.name() + "." + pack, pack, KernelRef.of(TensorCoreAttention::packQuery).method(),
                            new Object[]{a.get("qLat"), a.get("q"), a.get("kvFloats"), qWords, rows, heads, dn, dr, dc}),
                    new TaskCall(g.name() + "." + mma, mma, KernelRef.of(TensorCoreAttention::scores).method(),
                            new Object[]{new KernelContext(), qWords, a.get("kvFloats"), a.get("kvHalves"), a.get("kvBytes"), dtype, a.get("attnMeta"), tcScores, capacity,
                                    a.get("blockSize"), heads, dc, dr}),
                    new TaskCall(g.name() + "." + t.id(), t.id(), KernelRef.of(TensorCoreAttention::unpackScores).method(),
                            new Object[]{tcScores, a.get("scores"), a.get("attnMeta"), rows, capacity, heads, a.get("scale")}));
        }
        int[] pWords = new int[rows * heads * TensorCoreAttention.padded(capacity) / 2];
        FloatArray tcValues = new FloatArray(rows * heads * dc);
        scratch.add(pWords);
        scratch.add(tcValues);
        return List.of(
                new TaskCall(g.name() + "." + pack, pack, KernelRef.of(TensorCoreAttention::packProbs).method(),
                        new Object[]{a.get("probs"), a.get("kvFloats"), pWords, a.get("attnMeta"), rows, capacity, heads}),
                new TaskCall(g.name() + "." + mma, mma, KernelRef.of(TensorCoreAttention::values).method(),
                        new Object[]{new KernelContext(), pWords, a.get("kvFloats"), a.get("kvHalves"), a.get("kvBytes"), dtype, a.get("attnMeta"), tcValues, capacity,
                                a.get("blockSize"), heads, dc, dr}),
                new TaskCall(g.name() + "." + t.id(), t.id(), KernelRef.of(TensorCoreAttention::unpackValues).method(),
                        new Object[]{tcValues, a.get("oLat"), rows, heads, dc}));
    }

    /**
     * On the CUDA backend with TornadoVM's cuBLAS tasks at hand, the tasks that replace a weight product of more rows than
     * the KernelContext kernels take ({@link CublasProjections}): copy the activations into a native array, the SGEMM on the
     * weight's f32 twin, copy the product back into the graph's buffer; their buffers added to {@code scratch}. Null for
     * any other task, and where the weight is not one of the graph's WEIGHT buffers (its numbers would change on the device).
     */
    private List<TaskCall> cublasTasks(KernelGraph g, KernelGraph.Task t, List<Object> scratch) {
        CublasProjections.Family f = CublasProjections.family(t.kernel());
        if (f == null) return null;
        Substitution.Args a = Substitution.Args.of(t);
        if (!CublasProjections.replaces(t.kernel(), a.i("rows"))) return null;
        Object weight = a.get(f.weight);
        // the twin is made from the host's numbers once: a weight the graph computes (a SCRATCH buffer) keeps the kernels
        KernelGraph.Buffer wb = g.buffer(weight);
        if (wb == null || wb.role() != KernelGraph.Role.WEIGHT) return null;
        FloatArray w = twins.computeIfAbsent(weight, k -> new java.util.EnumMap<>(CublasProjections.Family.class))
                .computeIfAbsent(f, k -> FloatArray.fromArray(CublasProjections.weightTwin(f, CublasProjections.weightForm(t.kernel()), a)));
        int inLen = CublasProjections.inputLength(f, a), outLen = CublasProjections.outputLength(f, a);
        FloatArray b = new FloatArray(inLen), c = new FloatArray(outLen);
        if (scratch.stream().noneMatch(o -> o == w)) scratch.add(w);   // two products of one weight in a graph: one copy
        scratch.add(b);
        scratch.add(c);
        CublasProjections.Gemm gemm = CublasProjections.gemm(f, a);
        LibraryTaskDescriptor d = CublasProjections.descriptor(gemm, w, b, c);
        Method factory;
        try {
            factory = CublasProjections.factory(gemm);
        } catch (ReflectiveOperationException e) {
            throw new MlaException("TornadoVM's cuBLAS tasks are not usable here: " + e, e);
        }
        String in = t.id() + "_in", sgemm = t.id() + "_cublas";
        return List.of(
                new TaskCall(g.name() + "." + in, in, KernelRef.of(CublasProjections::toNative).method(),
                        new Object[]{a.get(f.input), b, inLen}),
                new TaskCall(g.name() + "." + sgemm, sgemm, factory, d.getParameters(), d),
                new TaskCall(g.name() + "." + t.id(), t.id(), KernelRef.of(CublasProjections::fromNative).method(),
                        new Object[]{c, a.get(f.output), outLen}));
    }

    // ------------------------------------------------------------------ kernels as TornadoVM tasks

    /**
     * Adds a task for a kernel {@link Method}: a {@code TornadoFunctions.TaskN} instance made by
     * {@link LambdaMetafactory} whose {@code apply} unboxes the scalars and calls the kernel statically,
     * which is the shape of lambda TornadoVM resolves to the kernel it compiles (docs/design.md §2).
     */
    private static void addTask(TaskGraph tg, TaskCall t) {
        if (t.library() != null) {
            try {
                TornadoFunctions.LibraryTask1<LibraryTaskDescriptor> same = d -> d;   // TaskGraph asks for a factory and its arguments
                tg.libraryTask(t.id(), same, t.library());
            } catch (RuntimeException e) {
                throw new MlaException("TornadoVM rejected library task " + t.name() + ": " + rootMessage(e), e);
            }
            return;
        }
        Method kernel = t.kernel();
        int n = kernel.getParameterCount();
        try {
            Class<?> iface = Class.forName("uk.ac.manchester.tornado.api.common.TornadoFunctions$Task" + n);
            Object task = taskInstance(iface, kernel);
            Class<?>[] params = new Class<?>[n + 2];
            params[0] = String.class;
            params[1] = iface;
            Arrays.fill(params, 2, n + 2, Object.class);
            Method add = TaskGraph.class.getMethod("task", params);
            Object[] args = new Object[n + 2];
            args[0] = t.id();
            args[1] = task;
            System.arraycopy(t.args(), 0, args, 2, n);
            add.invoke(tg, args);
        } catch (InvocationTargetException e) {
            throw new MlaException("TornadoVM rejected task " + t.name() + ": " + rootMessage(e.getCause()), e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new MlaException("cannot make a TornadoVM task of " + kernel + " (" + n + " arguments; TornadoVM takes at most 20): " + e, e);
        } catch (Throwable e) {
            throw new MlaException("cannot make a TornadoVM task of " + kernel + ": " + e, e);
        }
    }

    private static Object taskInstance(Class<?> iface, Method kernel) throws Throwable {
        MethodHandles.Lookup lookup = MethodHandles.lookup();
        MethodHandle impl = lookup.unreflect(kernel);
        Class<?>[] erased = new Class<?>[kernel.getParameterCount()];
        Arrays.fill(erased, Object.class);
        Class<?>[] boxed = kernel.getParameterTypes().clone();
        for (int i = 0; i < boxed.length; i++) boxed[i] = MethodType.methodType(boxed[i]).wrap().returnType();
        CallSite site = LambdaMetafactory.metafactory(lookup, "apply", MethodType.methodType(iface),
                MethodType.methodType(void.class, erased), impl, MethodType.methodType(void.class, boxed));
        return site.getTarget().invoke();
    }
}
