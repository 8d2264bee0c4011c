import java.io.IOException;
import java.io.InputStream;
import java.lang.classfile.Attributes;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassModel;
import java.lang.classfile.CodeModel;
import java.lang.classfile.MethodModel;
import java.lang.classfile.attribute.LocalVariableInfo;
import java.lang.constant.ClassDesc;
import java.lang.reflect.AccessFlag;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * The compile gate's second half (tools/gpu/gate/compile-gate.sh runs the first): compiles for sm_90 every module
 * TornadoVM generated while the project's graphs ran against the driver stand-in, and reports per kernel.
 *
 * <pre>
 *   java tools/gpu/gate/CompileGate.java --route ptx|cuda --dump DIR --jar CLI.jar [--min-kernels N] [--markdown FILE] [--jobs N]
 * </pre>
 *
 * PTX route: each NNNNN.ptx (TornadoVM's PTX) is assembled by {@code ptxas -arch=sm_90 -v}. CUDA route: each
 * NNNNN.cu (TornadoVM's CUDA C, the source it hands to NVRTC) is compiled by {@code nvcc -cubin -arch=sm_90
 * -Xptxas -v} with the NVRTC options it asked for (NNNNN.opts). Identical modules are compiled once. Each entry
 * function is traced to the Java kernel it came from (class and method, by its name and parameter names, read
 * from the jar's class files), and the kernels are listed with their worst variant: registers, spill bytes,
 * stack frame, shared memory, the largest block it was launched with (launches.tsv, from the stand-in) and
 * whether two such blocks fit on one multiprocessor. Exit code 0 when every module compiled and at least
 * --min-kernels kernels did, 1 otherwise, 2 for bad arguments. Before anything it proves that it can fail: a
 * broken module must be refused by the compiler and a good one accepted.
 */
public final class CompileGate {
    /** sm_90 (H100/H200): 64 Ki 32-bit registers and 228 KiB shared memory per multiprocessor, 1 KiB reserved per block. */
    static final int REGS_PER_SM = 65536, SMEM_PER_SM = 233472, SMEM_RESERVED_PER_BLOCK = 1024;

    record Entry(String module, String name, int regs, int spillStores, int spillLoads, int stack, int smem) {
    }

    record Compiled(String module, boolean ok, String error, List<Entry> entries) {
    }

    /** A Java kernel: class and method, parameter names without the KernelContext, and whether it takes one. */
    record Kernel(String cls, String method, List<String> params, boolean kernelContext) {
        String id() {
            return cls + "." + method;
        }
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> opt = new LinkedHashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (!args[i].startsWith("--")) usage("unexpected argument '" + args[i] + "'");
            opt.put(args[i].substring(2), args[i + 1]);
        }
        if (args.length % 2 != 0) usage("option " + args[args.length - 1] + " has no value");
        String route = opt.getOrDefault("route", "");
        if (!route.equals("ptx") && !route.equals("cuda")) usage("--route must be ptx or cuda, found '" + route + "'");
        Path dump = Path.of(required(opt, "dump")), jar = Path.of(required(opt, "jar"));
        int minKernels = Integer.parseInt(opt.getOrDefault("min-kernels", "1"));
        int jobs = Integer.parseInt(opt.getOrDefault("jobs", String.valueOf(Runtime.getRuntime().availableProcessors())));
        if (!Files.isDirectory(dump)) usage("no dump folder " + dump);
        if (!Files.isRegularFile(jar)) usage("no jar " + jar);

        selfTest(route);
        List<Kernel> kernels = kernels(jar);
        Map<String, int[]> blocks = launches(dump.resolve("launches.tsv"));

        // the modules, each distinct text compiled once
        String ext = route.equals("ptx") ? ".ptx" : ".cu";
        Map<String, List<Path>> byHash = new TreeMap<>();
        try (var s = Files.list(dump)) {
            for (Path p : s.filter(f -> f.getFileName().toString().endsWith(ext)).sorted().toList()) {
                byHash.computeIfAbsent(sha(Files.readAllBytes(p)), h -> new ArrayList<>()).add(p);
            }
        }
        int modules = byHash.values().stream().mapToInt(List::size).sum();
        if (modules == 0) {
            System.out.println("compile-gate: FAILED: no " + ext + " module in " + dump + " (did TornadoVM run on the stand-in?)");
            System.exit(1);
        }
        ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, jobs));
        List<Future<Compiled>> futures = new ArrayList<>();
        for (List<Path> same : byHash.values()) futures.add(pool.submit(() -> compile(route, same.getFirst())));
        pool.shutdown();
        List<Compiled> results = new ArrayList<>();
        for (Future<Compiled> f : futures) results.add(f.get());
        pool.awaitTermination(1, TimeUnit.MINUTES);

        // per Java kernel: its variants' worst numbers
        Map<String, Row> rows = new TreeMap<>();
        int failedModules = 0;
        for (Compiled c : results) {
            if (!c.ok()) {
                failedModules++;
                String name = entryNames(route, Files.readString(Path.of(c.module()))).stream().findFirst().orElse("?");
                Kernel k = match(route, name, Files.readString(Path.of(c.module())), kernels);
                rows.computeIfAbsent(k != null ? k.id() : name, x -> new Row()).fail(c);
                continue;
            }
            for (Entry e : c.entries()) {
                String text = Files.readString(Path.of(c.module()));
                Kernel k = match(route, e.name(), text, kernels);
                Row r = rows.computeIfAbsent(k != null ? k.id() : "(unmatched) " + e.name(), x -> new Row());
                int block = 0;
                for (Path same : byHash.get(sha(Files.readAllBytes(Path.of(c.module()))))) {
                    String n = same.getFileName().toString();
                    int[] b = blocks.get(n.substring(0, n.indexOf('.')) + "\t" + e.name());
                    if (b != null) block = Math.max(block, b[0]);
                }
                r.add(e, block);
            }
        }

        StringBuilder md = new StringBuilder();
        md.append("| route | kernel | variants | registers | spill bytes (stores/loads) | stack frame | shared memory | largest block | 2 blocks/SM | result |\n");
        md.append("|---|---|---|---|---|---|---|---|---|---|\n");
        int ok = 0, failed = 0, spilling = 0;
        for (Map.Entry<String, Row> en : rows.entrySet()) {
            Row r = en.getValue();
            String two = r.block == 0 ? "?" : twoBlocksFit(r.regs, r.smem, r.block) ? "yes" : "no";
            String result = r.failed > 0 ? "FAILED (" + r.failed + " of " + (r.failed + r.variants) + "): " + r.error : "ok";
            System.out.printf(Locale.ROOT, "%-4s %-44s variants=%-3d regs=%-3d spill=%d/%d stack=%d smem=%d block=%d two_blocks=%s %s%n",
                    route, en.getKey(), r.variants, r.regs, r.spillStores, r.spillLoads, r.stack, r.smem, r.block, two, result);
            md.append(String.format(Locale.ROOT, "| %s | `%s` | %d | %d | %d / %d | %d | %d | %s | %s | %s |%n", route, en.getKey(), r.variants,
                    r.regs, r.spillStores, r.spillLoads, r.stack, r.smem, r.block == 0 ? "?" : String.valueOf(r.block), two,
                    result.replace("|", "\\|")));
            if (r.failed > 0) failed++; else ok++;
            if (r.spillStores > 0 || r.spillLoads > 0) spilling++;
        }
        List<String> unreached = new ArrayList<>();
        for (Kernel k : kernels) if (!rows.containsKey(k.id())) unreached.add(k.id());
        if (!unreached.isEmpty()) System.out.println("compile-gate: kernels of the jar no graph of this run compiled: " + String.join(", ", unreached));
        System.out.printf(Locale.ROOT, "compile-gate: %d modules (%d distinct) from %s, %d failed to compile%n", modules, byHash.size(), dump, failedModules);
        String summary = String.format(Locale.ROOT, "%d kernels compiled for sm_90 (%s), %d failed, %d spilling", ok, route, failed, spilling);
        System.out.println(summary);
        if (opt.containsKey("markdown")) {
            Files.writeString(Path.of(opt.get("markdown")), md + "\n" + summary + (unreached.isEmpty() ? "" : "; not reached by the gate's runs: "
                    + String.join(", ", unreached)) + "\n");
        }
        if (failed > 0 || failedModules > 0) {
            System.out.println("compile-gate: FAILED: " + failedModules + " module(s) did not compile for sm_90 (" + route + ")");
            System.exit(1);
        }
        if (ok < minKernels) {
            System.out.println("compile-gate: FAILED: " + ok + " kernels compiled, fewer than the " + minKernels + " expected");
            System.exit(1);
        }
    }

    /** The worst numbers over one kernel's variants (each specialisation TornadoVM made of it). */
    static final class Row {
        int variants, regs, spillStores, spillLoads, stack, smem, block, failed;
        String error;

        void add(Entry e, int launchBlock) {
            variants++;
            regs = Math.max(regs, e.regs());
            spillStores = Math.max(spillStores, e.spillStores());
            spillLoads = Math.max(spillLoads, e.spillLoads());
            stack = Math.max(stack, e.stack());
            smem = Math.max(smem, e.smem());
            block = Math.max(block, launchBlock);
        }

        void fail(Compiled c) {
            failed++;
            if (error == null) error = c.error() + " (" + c.module() + ")";
        }
    }

    /** Whether two blocks of {@code block} threads fit on one sm_90 multiprocessor (registers per warp allocated in 256s). */
    static boolean twoBlocksFit(int regs, int smem, int block) {
        int warps = (block + 31) / 32;
        int regsPerWarp = (regs * 32 + 255) / 256 * 256;
        return 2L * warps * regsPerWarp <= REGS_PER_SM && 2L * (smem + SMEM_RESERVED_PER_BLOCK) <= SMEM_PER_SM;
    }

    // ------------------------------------------------------------------ compiling

    static final Pattern ENTRY = Pattern.compile("Compiling entry function '([^']+)' for 'sm_90'");
    static final Pattern STACK = Pattern.compile("(\\d+) bytes stack frame, (\\d+) bytes spill stores, (\\d+) bytes spill loads");
    static final Pattern USED = Pattern.compile("Used (\\d+) registers");
    static final Pattern SMEM = Pattern.compile("(\\d+) bytes smem");

    static Compiled compile(String route, Path module) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        if (route.equals("ptx")) {
            cmd.addAll(List.of("ptxas", "-arch=sm_90", "-v", "-o", "/dev/null", module.toString()));
        } else {
            cmd.addAll(List.of("nvcc", "-cubin", "-Xptxas", "-v", "-o", "/dev/null"));
            Path opts = Path.of(module.toString().replaceAll("\\.cu$", ".opts"));
            List<String> asked = Files.exists(opts) ? Files.readAllLines(opts) : List.of("--gpu-architecture=sm_90");
            for (String o : asked) {
                String t = o.strip();
                if (t.isEmpty() || t.equals("-default-device") || t.equals("--device-as-default-execution-space")) continue;   // NVRTC-only
                cmd.add(t);
            }
            if (cmd.stream().noneMatch(o -> o.contains("sm_90"))) cmd.add("-arch=sm_90");
            cmd.add(module.toString());
        }
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        int rc = p.waitFor();
        if (rc != 0) {
            String first = out.lines().filter(l -> l.contains("error") || l.contains("fatal")).findFirst().orElse(out.lines().findFirst().orElse("exit " + rc));
            return new Compiled(module.toString(), false, first.strip(), List.of());
        }
        return new Compiled(module.toString(), true, null, parse(module.toString(), out));
    }

    /** ptxas -v's lines, per entry function. */
    static List<Entry> parse(String module, String out) {
        List<Entry> entries = new ArrayList<>();
        String name = null;
        int stack = 0, stores = 0, loads = 0;
        for (String line : out.lines().toList()) {
            Matcher m = ENTRY.matcher(line);
            if (m.find()) {
                name = m.group(1);
                stack = stores = loads = 0;
                continue;
            }
            m = STACK.matcher(line);
            if (m.find()) {
                stack = Integer.parseInt(m.group(1));
                stores = Integer.parseInt(m.group(2));
                loads = Integer.parseInt(m.group(3));
                continue;
            }
            m = USED.matcher(line);
            if (m.find() && name != null) {
                Matcher s = SMEM.matcher(line);
                entries.add(new Entry(module, name, Integer.parseInt(m.group(1)), stores, loads, stack, s.find() ? Integer.parseInt(s.group(1)) : 0));
                name = null;
            }
        }
        return entries;
    }

    /** A module the compiler must refuse and one it must take: a gate that cannot fail proves nothing. */
    static void selfTest(String route) throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory("compile-gate-selftest");
        String ext = route.equals("ptx") ? ".ptx" : ".cu";
        String good = route.equals("ptx")
                ? ".version 7.6\n.target sm_86\n.address_size 64\n.visible .entry gate_ok(.param .u64 p) {\n .reg .b64 %rd<2>;\n ld.param.u64 %rd1, [p];\n ret;\n}\n"
                : "extern \"C\" __global__ void gate_ok(float *p) { p[threadIdx.x] = 1.0f; }\n";
        String bad = route.equals("ptx")
                ? ".version 7.6\n.target sm_86\n.address_size 64\n.visible .entry gate_bad(.param .u64 p) {\n mov.u32 %undeclared, 1;\n ret;\n}\n"
                : "extern \"C\" __global__ void gate_bad(float *p) { p[threadIdx.x] = undeclared_name; }\n";
        Path g = Files.writeString(dir.resolve("good" + ext), good), b = Files.writeString(dir.resolve("bad" + ext), bad);
        Compiled cg = compile(route, g), cb = compile(route, b);
        if (!cg.ok() || cg.entries().size() != 1 || cb.ok()) {
            System.out.println("compile-gate: FAILED self-test: the " + route + " compiler accepted a broken module or refused a good one"
                    + " (good: " + (cg.ok() ? "ok" : cg.error()) + "; broken: " + (cb.ok() ? "accepted" : "refused") + ")");
            System.exit(1);
        }
        System.out.println("compile-gate: self-test passed (" + (route.equals("ptx") ? "ptxas" : "nvcc") + " refuses a broken module and takes a good one)");
    }

    // ------------------------------------------------------------------ tracing entries to Java kernels

    static final Pattern PTX_ENTRY = Pattern.compile("\\.entry\\s+([A-Za-z0-9_$]+)\\s*\\(([^)]*)\\)");
    static final Pattern CU_ENTRY = Pattern.compile("__global__\\s+void\\s+([A-Za-z0-9_$]+)\\s*\\(([^)]*)\\)");

    static List<String> entryNames(String route, String text) {
        List<String> names = new ArrayList<>();
        Matcher m = (route.equals("ptx") ? PTX_ENTRY : CU_ENTRY).matcher(text);
        while (m.find()) names.add(m.group(1));
        return names;
    }

    /** The entry's parameter names without the ones TornadoVM adds (kernel_context, context_unused, _constant_region, ...). */
    static List<String> entryParams(String route, String name, String text) {
        Matcher m = (route.equals("ptx") ? PTX_ENTRY : CU_ENTRY).matcher(text);
        while (m.find()) {
            if (!m.group(1).equals(name)) continue;
            List<String> out = new ArrayList<>();
            for (String p : m.group(2).split(",")) {
                String[] w = p.strip().split("[\\s*]+");
                String n = w[w.length - 1];
                if (n.equals("kernel_context") || n.equals("context_unused") || n.startsWith("_")) continue;
                out.add(n);
            }
            return out;
        }
        return List.of();
    }

    /**
     * The Java kernel an entry came from: same method name (PTX: TornadoVM's graph_task_method[_kernelcontext_…]
     * name; CUDA: the method's own name) and the same parameter names. A KernelContext kernel has the same name and
     * parameters as the plain kernel it replaces; PTX names it, CUDA does not, and there it is told by its barriers
     * (a plain @Parallel kernel has none).
     */
    static Kernel match(String route, String entry, String text, List<Kernel> kernels) {
        List<String> params = entryParams(route, entry, text);
        boolean kc = route.equals("ptx") ? entry.contains("kernelcontext") : text.contains("__syncthreads") || text.contains("bar.sync");
        List<Kernel> found = new ArrayList<>();
        for (Kernel k : kernels) {
            boolean nameOk = route.equals("ptx")
                    ? entry.contains("_" + k.method().toLowerCase(Locale.ROOT) + "_")
                    : entry.equals(k.method());
            if (nameOk && k.params().equals(params)) found.add(k);
        }
        if (found.size() > 1) found.removeIf(k -> k.kernelContext() != kc);
        return found.size() == 1 ? found.getFirst() : null;
    }

    static final ClassDesc KERNEL_CONTEXT = ClassDesc.of("uk.ac.manchester.tornado.api.KernelContext");
    static final ClassDesc PARALLEL = ClassDesc.of("uk.ac.manchester.tornado.api.annotations.Parallel");

    /** Every kernel in the jar: a public static void method with a @Parallel loop or a KernelContext parameter. */
    static List<Kernel> kernels(Path jar) throws IOException {
        List<Kernel> out = new ArrayList<>();
        try (ZipFile z = new ZipFile(jar.toFile())) {
            for (ZipEntry e : z.stream().toList()) {
                if (!e.getName().startsWith("org/tornadomla/") || !e.getName().endsWith(".class")) continue;
                ClassModel cm;
                try (InputStream in = z.getInputStream(e)) {
                    cm = ClassFile.of().parse(in.readAllBytes());
                }
                String cls = cm.thisClass().asSymbol().displayName();
                for (MethodModel m : cm.methods()) {
                    if (!m.flags().has(AccessFlag.PUBLIC) || !m.flags().has(AccessFlag.STATIC)) continue;
                    var type = m.methodTypeSymbol();
                    if (!type.returnType().descriptorString().equals("V") || m.code().isEmpty()) continue;
                    CodeModel code = m.code().get();
                    boolean kc = type.parameterCount() > 0 && type.parameterType(0).equals(KERNEL_CONTEXT);
                    boolean parallel = code.findAttribute(Attributes.runtimeVisibleTypeAnnotations())
                            .map(a -> a.annotations().stream().anyMatch(t -> t.annotation().classSymbol().equals(PARALLEL))).orElse(false);
                    if (!kc && !parallel) continue;
                    // parameter names from the local variable table (slots: a long or double takes two)
                    Map<Integer, String> bySlot = new TreeMap<>();
                    code.findAttribute(Attributes.localVariableTable()).ifPresent(t -> {
                        for (LocalVariableInfo v : t.localVariables()) if (v.startPc() == 0) bySlot.put(v.slot(), v.name().stringValue());
                    });
                    List<String> params = new ArrayList<>();
                    int slot = 0;
                    for (int i = 0; i < type.parameterCount(); i++) {
                        String d = type.parameterType(i).descriptorString();
                        if (!(kc && i == 0)) params.add(bySlot.getOrDefault(slot, "arg" + i));
                        slot += d.equals("J") || d.equals("D") ? 2 : 1;
                    }
                    out.add(new Kernel(cls.substring(cls.lastIndexOf('.') + 1), m.methodName().stringValue(), params, kc));
                }
            }
        }
        return out;
    }

    /** launches.tsv: module number, name, grid, block, dynamic shared memory; the largest block (threads) per module and name. */
    static Map<String, int[]> launches(Path tsv) throws IOException {
        Map<String, int[]> out = new LinkedHashMap<>();
        if (!Files.exists(tsv)) return out;
        for (String line : Files.readAllLines(tsv)) {
            String[] f = line.split("\t");
            if (f.length < 4) continue;
            int threads = 1;
            for (String d : f[3].split(",")) threads *= Integer.parseInt(d.strip());
            out.merge(f[0] + "\t" + f[1], new int[] {threads}, (a, b) -> a[0] >= b[0] ? a : b);
        }
        return out;
    }

    static String sha(byte[] b) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
    }

    static String required(Map<String, String> opt, String name) {
        String v = opt.get(name);
        if (v == null) usage("--" + name + " is required");
        return v;
    }

    static void usage(String why) {
        System.err.println("compile-gate: error: " + why);
        System.err.println("usage: java tools/gpu/gate/CompileGate.java --route ptx|cuda --dump DIR --jar CLI.jar [--min-kernels N] [--markdown FILE] [--jobs N]");
        System.exit(2);
    }
}
