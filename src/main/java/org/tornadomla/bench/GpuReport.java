package org.tornadomla.bench;

import org.tornadomla.MlaException;
import org.tornadomla.io.OutputFiles;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.cache.CacheDtype;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * summary.md and a chart from what the GPU kit's run.sh leaves in its output folder. Every number in the
 * summary is copied from one of these files, and each section names the file and the command that wrote it:
 *
 * <pre>
 *  run-log.tsv       run.sh: step, exit code, seconds, command, note
 *  devices.txt       mla devices
 *  check.txt         mla check --backend tornado
 *  check-sparse.txt  mla check --backend tornado --sparse (DeepSeek-V3.2's sparse attention)
 *  check-cublas.txt  CUDA route: mla check --backend tornado --prefill 70 (the cuBLAS SGEMMs of a long prefill)
 *  bench.csv         mla bench --grid flashmla (backend,path,dtype,batch,heads,context,ms_per_step,gb_per_s,gflop_per_s)
 *  bench-transfers.csv  the same run, one profiled step per shape: kernel ms, bytes in and out
 *  bench-tc.csv, bench-notc.csv  CUDA route: mla bench --path absorbed with the tensor-core tasks, and with
 *                    -Dtornadomla.tensorCores=false (the KernelContext kernels); bench.csv's header
 *  layer.csv         mla bench --layer-only (whole layer decode step)
 *  torch.csv         torch_absorb.py: DeepSeek's absorb einsums in PyTorch on the same GPU (bench.csv's header)
 *  torch-peaks.csv   torch_absorb.py: measured copy bandwidth and GEMM throughput (what,value,unit,how)
 *  nvidia-smi.csv    nvidia-smi --query-gpu=... --format=csv;  nvidia-smi.txt: plain nvidia-smi
 * </pre>
 *
 * A missing file is listed as missing (with run.sh's note where it left one), never invented.
 *
 * <p>A kit with several TornadoVM routes (the nvidia kit: CUDA and PTX) leaves each route's files in a folder of
 * its own ({@code cuda/}, {@code ptx/}): each gets its summary.md, and the top summary.md sets the routes' and
 * PyTorch's times side by side, shape by shape.
 */
public final class GpuReport {
    public static final String SUMMARY = "summary.md", CHART = "bench-chart.png";

    /** The files the kit's run.sh leaves that a report is made from, as {@code mla gpu-report --help} lists them. */
    public static final String KIT_FILE_NAMES = "run-log.tsv, devices.txt, check.txt, check-sparse.txt, bench.csv, bench-transfers.csv, "
            + "layer.csv, torch.csv, torch-peaks.csv, nvidia-smi.csv";
    /** {@link #KIT_FILE_NAMES} one by one. */
    static final List<String> KIT_FILES = List.of(KIT_FILE_NAMES.split(", "));

    private final Path dir;
    private final List<String> missing = new ArrayList<>();
    private Map<String, String[]> log = Map.of();

    private GpuReport(Path dir) {
        this.dir = dir;
    }

    /** The route folders of a kit with several SDKs, in the order run.sh runs them. */
    static final List<String> ROUTES = List.of("cuda", "ptx", "opencl");

    /** Writes {@code dir}/summary.md (and the chart when bench.csv has rows); returns the summary's path. */
    public static Path write(Path dir) {
        if (!Files.isDirectory(dir)) throw new MlaException("gpu-report: expected the kit's output folder, found no folder " + dir);
        List<String> routes = ROUTES.stream().filter(r -> isKitOutput(dir.resolve(r))).toList();
        if (!routes.isEmpty()) return writeRoutes(dir, routes);
        if (!isKitOutput(dir)) {
            // another folder: its summary.md (if any) is not ours to replace
            throw new MlaException("gpu-report: expected the GPU kit's outputs in " + dir + " (" + String.join(", ", KIT_FILES)
                    + "), found none of them; nothing written");
        }
        return new GpuReport(dir).build();
    }

    private static boolean isKitOutput(Path d) {
        return Files.isDirectory(d) && KIT_FILES.stream().anyMatch(f -> Files.exists(d.resolve(f)));
    }

    /** Each route's own summary, then the top one: check counts per route and the attention core shape by shape. */
    private static Path writeRoutes(Path dir, List<String> routes) {
        Map<String, GpuReport> reports = new LinkedHashMap<>();
        for (String r : routes) {
            GpuReport g = new GpuReport(dir.resolve(r));
            g.build();
            reports.put(r, g);
        }
        GpuReport top = new GpuReport(dir);
        StringBuilder md = new StringBuilder();
        md.append("# GPU kit run: TornadoVM's routes side by side\n\n");
        md.append("Written by `mla gpu-report` from the files in this folder and in ").append(String.join(", ", routes.stream().map(r -> r + "/").toList()))
                .append(" (one folder per TornadoVM route, each with its own [summary](").append(routes.getFirst()).append("/summary.md)). ")
                .append("Every number is copied from the file named beside it.\n\n");
        top.log = top.runLog();
        top.runSection(md, top.log);
        md.append("## Routes\n\n| route | device (devices.txt) | check.txt | check-sparse.txt | bench.csv rows | summary |\n|---|---|---|---|---|---|\n");
        Map<String, Map<String, Row>> bench = new LinkedHashMap<>();
        for (String r : routes) {
            GpuReport g = reports.get(r);
            List<String> dev = g.lines("devices.txt", false).stream().filter(l -> l.matches("^\\d+:\\d+ .*")).toList();
            List<String> check = g.lines("check.txt", false), sparse = g.lines("check-sparse.txt", false);
            Map<String, Row> rows = new LinkedHashMap<>();
            for (Row row : g.rows("bench.csv")) rows.put(row.key(), row);
            bench.put(r, rows);
            md.append("| ").append(r).append(" | ").append(dev.isEmpty() ? "none" : dev.getFirst().replace("|", "\\|")).append(" | ")
                    .append(passFail(check)).append(" | ").append(passFail(sparse)).append(" | ").append(rows.size())
                    .append(" | [").append(r).append("/summary.md](").append(r).append("/summary.md) |\n");
        }
        md.append('\n');
        List<Row> torch = top.rows("torch.csv");
        Map<String, Row> torchByShape = new LinkedHashMap<>();
        for (Row t : torch) torchByShape.put(t.shapeKey(), t);
        List<Row> shapes = new ArrayList<>();
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (Map<String, Row> rows : bench.values()) for (Row row : rows.values()) if (seen.add(row.key())) shapes.add(row);
        if (!shapes.isEmpty()) {
            shapes.sort(Comparator.comparing(Row::path).thenComparing(Row::dtype).thenComparing(Row::heads, Comparator.reverseOrder())
                    .thenComparingInt(Row::batch).thenComparingInt(Row::context));
            md.append("## Attention core, decode step, ms per step (each route's bench.csv; torch.csv)\n\n");
            md.append("The same command on each route (its `bench.csv`); ").append(torch.isEmpty() ? "no PyTorch figures (torch.csv missing). "
                    : "torch: DeepSeek's absorb einsums in PyTorch on the same GPU (torch.csv). ")
                    .append("A ratio above 1 means the first-named route is faster.\n\n| path | cache | H | B | T |");
            for (String r : routes) md.append(' ').append(r).append(" ms |");
            if (routes.size() > 1) md.append(' ').append(routes.get(1)).append('/').append(routes.getFirst()).append(" |");
            if (!torch.isEmpty()) md.append(" torch ms | torch/").append(routes.getFirst()).append(" |");
            md.append("\n|").append("---|".repeat(5 + routes.size() + (routes.size() > 1 ? 1 : 0) + (torch.isEmpty() ? 0 : 2))).append('\n');
            for (Row s : shapes) {
                md.append(String.format(Locale.ROOT, "| %s | %s | %d | %d | %d |", s.path(), s.dtype(), s.heads(), s.batch(), s.context()));
                for (String r : routes) {
                    Row x = bench.get(r).get(s.key());
                    md.append(' ').append(x == null ? "-" : num(x.ms())).append(" |");
                }
                Row first = bench.get(routes.getFirst()).get(s.key());
                if (routes.size() > 1) {
                    Row second = bench.get(routes.get(1)).get(s.key());
                    md.append(' ').append(first == null || second == null ? "-" : num(second.ms() / first.ms())).append(" |");
                }
                if (!torch.isEmpty()) {
                    Row t = torchByShape.get(s.shapeKey());
                    md.append(' ').append(t == null ? "-" : num(t.ms())).append(" | ").append(t == null || first == null ? "-" : num(t.ms() / first.ms())).append(" |");
                }
                md.append('\n');
            }
            md.append('\n');
        }
        top.deviceSection(md);
        Path out = dir.resolve(SUMMARY);
        writeAtomically(out, md.toString());
        return out;
    }

    private Path build() {
        StringBuilder md = new StringBuilder();
        log = runLog();
        md.append("# GPU kit run\n\n");
        md.append("Written by `mla gpu-report` from the files in this folder. Every number below is copied from the file named ")
                .append("in its section, which names the command that produced it. Nothing here was typed in by hand.\n\n");
        runSection(md, log);
        deviceSection(md);
        checkSection(md, "check.txt", "mla check --backend tornado", "every path × cache dtype × kernel set");
        checkSection(md, "check-sparse.txt", "mla check --backend tornado --sparse",
                "DeepSeek-V3.2's sparse attention (the indexer, top-k and the sparse gathers) per path × cache dtype × kernel set");
        // CUDA route only: without the file (any other route) there is no section and nothing is missing
        if (Files.isRegularFile(dir.resolve("check-cublas.txt"))) {
            checkSection(md, "check-cublas.txt", "mla check --backend tornado --prefill 70",
                    "a prefill past 128 token rows, whose weight products the CUDA route runs as cuBLAS SGEMMs (CublasProjections), per path × weight dtype × kernel set");
        }
        benchSection(md);
        tensorCoreSection(md);
        layerSection(md);
        if (!missing.isEmpty()) {
            md.append("## Not produced\n\n");
            for (String m : missing) {
                String note = log.containsKey(m) ? log.get(m)[4] : "";
                md.append("- `").append(m).append("`").append(note.isEmpty() ? "" : ": " + note).append('\n');
            }
            md.append('\n');
        }
        Path out = dir.resolve(SUMMARY);
        writeAtomically(out, md.toString());
        return out;
    }

    // ------------------------------------------------------------------ sections

    /** run-log.tsv: step → [step, rc, seconds, command, note]. */
    private Map<String, String[]> runLog() {
        Map<String, String[]> m = new LinkedHashMap<>();
        for (String l : lines("run-log.tsv", false)) {
            String[] f = (l + "\t\t\t\t").split("\t", -1);
            String[] row = {f[0], f[1], f[2], f[3], f[4]};
            m.put(row[0], row);
            // run.sh names steps after the file they write: also index by that file for the "not produced" notes
            for (String file : row[0].split("\\+")) m.putIfAbsent(file, row);
        }
        return m;
    }

    /** The command run.sh logged for the step that wrote {@code file}, else {@code usual}. */
    private String command(String file, String usual) {
        String[] r = log.get(file);
        return r != null && !r[3].isBlank() ? r[3] : usual;
    }

    /** Three significant digits without an exponent for the usual ranges. */
    static String num(double v) {
        if (Double.isNaN(v)) return "-";
        double a = Math.abs(v);
        return String.format(Locale.ROOT, a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : a >= 1 ? "%.2f" : a >= 1e-4 ? "%.3g" : "%.2e", v);
    }

    private static String num(String csvField) {
        try {
            return csvField.isEmpty() ? "-" : num(Double.parseDouble(csvField));
        } catch (NumberFormatException e) {
            return csvField;
        }
    }

    private void runSection(StringBuilder md, Map<String, String[]> log) {
        if (log.isEmpty()) {
            missing.add("run-log.tsv");
            return;
        }
        md.append("## Run (run-log.tsv, written by the kit's run.sh)\n\n| step | exit | seconds | command | note |\n|---|---|---|---|---|\n");
        new LinkedHashMap<>(log).values().stream().distinct().forEach(r ->
                md.append("| ").append(r[0]).append(" | ").append(r[1]).append(" | ").append(r[2]).append(" | `").append(r[3].replace("|", "\\|"))
                        .append("` | ").append(r[4].replace("|", "\\|")).append(" |\n"));
        md.append('\n');
    }

    private void deviceSection(StringBuilder md) {
        md.append("## Device\n\n");
        List<String> devices = lines("devices.txt", true);
        if (!devices.isEmpty()) {
            md.append("Backends and TornadoVM devices (devices.txt, `").append(command("devices.txt", "mla devices")).append("`):\n\n```\n");
            devices.forEach(l -> md.append(l).append('\n'));
            md.append("```\n\n");
        }
        List<String> smi = lines("nvidia-smi.csv", true);
        if (smi.size() >= 2) {
            String[] keys = smi.get(0).split(",\\s*"), vals = smi.get(1).split(",\\s*");
            md.append("GPU (nvidia-smi.csv, `nvidia-smi --query-gpu=").append(String.join(",", stripUnits(keys))).append(" --format=csv`):\n\n");
            md.append("| field | value |\n|---|---|\n");
            for (int i = 0; i < keys.length && i < vals.length; i++) md.append("| ").append(keys[i]).append(" | ").append(vals[i]).append(" |\n");
            md.append('\n');
        }
        List<String> peaks = lines("torch-peaks.csv", true);
        if (peaks.size() >= 2) {
            md.append("Peaks measured on this GPU with PyTorch (torch-peaks.csv, `").append(command("torch-peaks.csv", "python3 torch_absorb.py"))
                    .append("`):\n\n| what | value | unit | how |\n|---|---|---|---|\n");
            for (String l : peaks.subList(1, peaks.size())) {
                String[] f = (l + ",,,").split(",", -1);
                md.append("| ").append(f[0]).append(" | ").append(f[1]).append(" | ").append(f[2]).append(" | ").append(f[3]).append(" |\n");
            }
            md.append('\n');
        }
        if (Files.exists(dir.resolve("nvidia-smi.txt"))) md.append("The full `nvidia-smi` output is in nvidia-smi.txt.\n\n");
    }

    /** "n PASS, m FAIL" of a check file's lines, or "missing". */
    private static String passFail(List<String> check) {
        if (check.isEmpty()) return "missing";
        return check.stream().filter(l -> l.startsWith("PASS ")).count() + " PASS, " + check.stream().filter(l -> l.startsWith("FAIL ")).count() + " FAIL";
    }

    private void checkSection(StringBuilder md, String file, String defaultCommand, String what) {
        List<String> check = lines(file, true);
        if (check.isEmpty()) return;
        long pass = check.stream().filter(l -> l.startsWith("PASS ")).count();
        List<String> fails = check.stream().filter(l -> l.startsWith("FAIL ")).toList();
        double worst = 0;
        for (String l : check) {
            if (!l.startsWith("PASS ")) continue;
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("max_rel_err=([0-9.eE+-]+)").matcher(l);
            if (m.find()) worst = Math.max(worst, Double.parseDouble(m.group(1)));
        }
        md.append("## Correctness (").append(file).append(", `").append(command(file, defaultCommand)).append("`)\n\n");
        md.append(String.format(Locale.ROOT, "%d PASS, %d FAIL: %s, the device against the JVM reference "
                + "kernels in the same process; largest relative error among the passing cases %.1e.%n%n", pass, fails.size(), what, worst));
        check.stream().filter(l -> !l.startsWith("PASS ") && !l.startsWith("FAIL ")).limit(6)
                .forEach(l -> md.append("> ").append(l).append("\n"));
        md.append('\n');
        if (!fails.isEmpty()) {
            md.append("Failing cases:\n\n```\n");
            fails.forEach(l -> md.append(l).append('\n'));
            md.append("```\n\n");
        }
    }

    private record Row(String backend, String path, String dtype, int batch, int heads, int context, double ms, double gbPerS, double gflopPerS) {
        String key() {
            return path + "," + dtype + "," + batch + "," + heads + "," + context;
        }

        String shapeKey() {
            return dtype + "," + batch + "," + heads + "," + context;
        }
    }

    private void benchSection(StringBuilder md) {
        List<Row> bench = rows("bench.csv");
        List<Row> torch = rows("torch.csv");
        if (bench.isEmpty()) return;
        Map<String, String[]> transfers = new LinkedHashMap<>();
        List<String> tl = lines("bench-transfers.csv", true);
        for (String l : tl.size() > 1 ? tl.subList(1, tl.size()) : List.<String>of()) {
            String[] f = l.split(",", -1);
            if (f.length >= 9) transfers.put(f[0] + "," + f[1] + "," + f[2] + "," + f[3] + "," + f[4] + "," + f[5], f);
        }
        Map<String, Row> torchByShape = new LinkedHashMap<>();
        for (Row r : torch) torchByShape.put(r.shapeKey(), r);
        md.append("## Attention core, decode step (bench.csv, `").append(command("bench.csv", "mla bench --grid flashmla")).append("`)\n\n");
        md.append("One decode step of absorb_q … unabsorb_v over a cache of T tokens per sequence (DeepSeek-V3 latent: d_c 512, d_r 64). ")
                .append("ms/step is the mean over timed steps after warm-up and includes copying q in and o out; GB/s counts the latent ")
                .append("cache once (B·T·576·bytes per number), GFLOP/s per docs/design.md §1.3. ")
                .append("kernel ms and bytes in/out: one more step with TornadoVM's profiler (bench-transfers.csv, same command). ")
                .append(torch.isEmpty() ? "No PyTorch figures (torch.csv missing).\n\n"
                        : "torch: DeepSeek's absorb einsums (model.py, attn_impl=\"absorb\") in PyTorch on the same GPU, CUDA events, median "
                        + "(torch.csv, `" + command("torch.csv", "python3 torch_absorb.py") + "`); torch/tornado is torch's ms over tornado's (below 1: PyTorch is faster).\n\n");
        md.append("| backend | path | cache | H | B | T | ms/step | GB/s | GFLOP/s | kernel ms | bytes in | bytes out |")
                .append(torch.isEmpty() ? "\n|---|---|---|---|---|---|---|---|---|---|---|---|\n" : " torch ms | torch GB/s | torch/tornado |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        List<Row> sorted = new ArrayList<>(bench);
        sorted.sort(Comparator.comparing(Row::backend).thenComparing(Row::path).thenComparing(Row::dtype).thenComparing(Row::heads, Comparator.reverseOrder())
                .thenComparingInt(Row::batch).thenComparingInt(Row::context));
        for (Row r : sorted) {
            String[] t = transfers.get(r.backend() + "," + r.key());
            md.append(String.format(Locale.ROOT, "| %s | %s | %s | %d | %d | %d | %s | %s | %s | %s | %s | %s |", r.backend(), r.path(), r.dtype(), r.heads(),
                    r.batch(), r.context(), num(r.ms()), num(r.gbPerS()), num(r.gflopPerS()), t == null ? "-" : num(t[6]), t == null ? "-" : t[7], t == null ? "-" : t[8]));
            if (!torch.isEmpty()) {
                Row p = torchByShape.get(r.shapeKey());
                md.append(p == null ? " - | - | - |" : " " + num(p.ms()) + " | " + num(p.gbPerS()) + " | " + num(p.ms() / r.ms()) + " |");
            }
            md.append('\n');
        }
        md.append('\n');
        try {
            if (chart(bench, torch)) md.append("![attention core: tornado and PyTorch](" + CHART + ")\n\n");
        } catch (RuntimeException | LinkageError | InternalError e) {
            // e.g. a machine without fonts for headless AWT: the tables above carry every number anyway
            md.append("(No chart: drawing it failed on this machine: ").append(e).append(")\n\n");
        }
    }

    /**
     * bench-tc.csv beside bench-notc.csv (the CUDA route's pair; nothing when neither is there, since the other routes
     * never write them): the same absorbed-path shapes with and without the tensor-core tasks, and TFLOP/s.
     */
    private void tensorCoreSection(StringBuilder md) {
        boolean any = Files.isRegularFile(dir.resolve("bench-tc.csv")) || Files.isRegularFile(dir.resolve("bench-notc.csv"));
        if (!any) return;
        List<Row> tc = rows("bench-tc.csv"), plain = rows("bench-notc.csv");
        Map<String, Row> plainByKey = new LinkedHashMap<>();
        for (Row r : plain) plainByKey.put(r.key(), r);
        Map<String, Row> tcByKey = new LinkedHashMap<>();
        for (Row r : tc) tcByKey.put(r.key(), r);
        java.util.Set<String> keys = new java.util.LinkedHashSet<>(tcByKey.keySet());
        keys.addAll(plainByKey.keySet());
        md.append("## Tensor cores (bench-tc.csv, `").append(command("bench-tc.csv", "mla bench --path absorbed"))
                .append("`; bench-notc.csv, the same with -Dtornadomla.tensorCores=false)\n\n");
        md.append("The absorbed path's scores and values as `mma.sync` bf16 products (TensorCoreAttention), against the KernelContext ")
                .append("kernels the CUDA backend runs without them; ms/step as in bench.csv, TFLOP/s per docs/design.md §1.3. ")
                .append("A speed-up above 1 means the tensor cores are faster. Whether their outputs are right is check.txt's `absorbed bf16` ")
                .append("and `absorbed fp8` lines.\n\n");
        md.append("| cache | H | B | T | tensor cores ms | TFLOP/s | KernelContext ms | TFLOP/s | speed-up |\n|---|---|---|---|---|---|---|---|---|\n");
        for (String k : keys) {
            Row t = tcByKey.get(k), p = plainByKey.get(k), r = t != null ? t : p;
            md.append(String.format(Locale.ROOT, "| %s | %d | %d | %d | %s | %s | %s | %s | %s |\n", r.dtype(), r.heads(), r.batch(), r.context(),
                    t == null ? "-" : num(t.ms()), t == null ? "-" : num(t.gflopPerS() / 1000), p == null ? "-" : num(p.ms()),
                    p == null ? "-" : num(p.gflopPerS() / 1000), t == null || p == null ? "-" : num(p.ms() / t.ms())));
        }
        md.append('\n');
    }

    /** The chart: the largest head count at its largest measured context, every batch and dtype, tornado and torch bars. */
    private boolean chart(List<Row> bench, List<Row> torch) {
        int heads = bench.stream().mapToInt(Row::heads).max().orElseThrow();
        int context = bench.stream().filter(r -> r.heads() == heads).mapToInt(Row::context).max().orElseThrow();
        List<DecodeBench.Result> results = new ArrayList<>();
        for (List<Row> rows : List.of(bench, torch)) {
            for (Row r : rows) {
                if (r.heads() != heads || r.context() != context) continue;
                try {
                    // torch rows keep bench.csv's columns; their path is the einsum one, shown as its own series
                    DecodeBench.Shape s = new DecodeBench.Shape(AttentionPath.TILED, CacheDtype.parse(r.dtype()), r.batch(), r.heads(), r.context());
                    results.add(new DecodeBench.Result(rows == torch ? r.backend() : r.backend() + " " + r.path(), s, r.ms(), Double.NaN, 0, Double.NaN, "", true));
                } catch (MlaException e) {
                    // a dtype the chart cannot label: leave the row out of the chart, it is still in the table
                }
            }
        }
        if (results.isEmpty()) return false;
        double copyGbPerS = Double.NaN;
        for (String l : lines("torch-peaks.csv", false)) {
            String[] f = l.split(",", -1);
            if (f.length >= 3 && f[0].equals("copy") && f[2].equals("GB/s")) copyGbPerS = Double.parseDouble(f[1]);
        }
        // where and when: the first TornadoVM device devices.txt lists, and the day of bench.csv's file
        String device = lines("devices.txt", false).stream().filter(l -> l.matches("^\\d+:\\d+ .*")).findFirst()
                .map(l -> ", on " + l.replaceFirst("^\\d+:\\d+ +", "").replace("(default)", "").strip().replaceAll("\\s+", " ")).orElse("");
        String day = "";
        try {
            day = ", " + java.time.LocalDate.ofInstant(Files.getLastModifiedTime(dir.resolve("bench.csv")).toInstant(), java.time.ZoneOffset.UTC);
        } catch (IOException e) {
            // no day in the title
        }
        BenchChart.write(dir.resolve(CHART), results, Double.NaN, "", copyGbPerS, "PyTorch copy (torch-peaks.csv)",
                String.format(Locale.ROOT, "MLA decode attention core, H=%d, T=%d (bench.csv%s)", heads, context, torch.isEmpty() ? "" : ", torch.csv"),
                (device + day).replaceFirst("^, ", ""));
        return true;
    }

    private void layerSection(StringBuilder md) {
        List<String> layer = lines("layer.csv", true);
        if (layer.size() < 2) return;
        md.append("## Whole layer, decode step (layer.csv, `").append(command("layer.csv", "mla bench --layer-only")).append("`)\n\n")
                .append("One decode step of the whole MlaLayer (projections, RoPE, cache append, attention, o_proj) at DeepSeek-V3 ")
                .append("attention geometry with the hidden size in the table; bytes in/out and kernel ms from TornadoVM's profiler ")
                .append("for one step (TornadoVM counts an array once per task that reads it).\n\n");
        String[] head = layer.get(0).split(",");
        md.append("| ").append(String.join(" | ", head)).append(" |\n|").append("---|".repeat(head.length)).append('\n');
        for (String l : layer.subList(1, layer.size())) {
            String[] f = l.split(",", -1);
            for (int i = 7; i < f.length; i++) if (i != 8 && i != 9) f[i] = num(f[i]);   // ms columns; bytes stay exact
            md.append("| ").append(String.join(" | ", f)).append(" |\n");
        }
        md.append('\n');
    }

    // ------------------------------------------------------------------ files

    private static String[] stripUnits(String[] keys) {
        String[] out = new String[keys.length];
        for (int i = 0; i < keys.length; i++) out[i] = keys[i].replaceAll("\\s*\\[.*]", "").strip();
        return out;
    }

    /** The file's lines, or none (and, when {@code expected}, a "missing" entry). */
    private List<String> lines(String name, boolean expected) {
        Path p = dir.resolve(name);
        if (!Files.isRegularFile(p)) {
            if (expected && !missing.contains(name)) missing.add(name);
            return List.of();
        }
        try {
            return Files.readAllLines(p, StandardCharsets.UTF_8).stream().filter(l -> !l.isBlank()).toList();
        } catch (IOException e) {
            throw new MlaException("gpu-report: cannot read " + p + ": " + e.getMessage(), e);
        }
    }

    /** The first nine columns of bench.csv, all that torch.csv has. */
    public static final String BENCH_HEADER_SHORT = "backend,path,dtype,batch,heads,context,ms_per_step,gb_per_s,gflop_per_s";
    /** The columns bench.csv has after the nine since 2026-12-07. */
    public static final String BENCH_HEADER_MORE = ",ms_median,device,date,warmed_up";

    /** Rows of a bench.csv-shaped file; a row that does not parse is a one-line error naming file and line. */
    private List<Row> rows(String name) {
        List<String> ls = lines(name, true);
        if (ls.isEmpty()) return List.of();
        // bench's CSV has four more columns (ms_median, device, date, warmed_up) since 2026-12-07; the PyTorch CSVs keep the nine
        String expected = BENCH_HEADER_SHORT, longer = BENCH_HEADER_SHORT + BENCH_HEADER_MORE;
        if (!ls.get(0).equals(expected) && !ls.get(0).equals(longer)) {
            throw new MlaException("gpu-report: " + dir.resolve(name) + ": expected header " + expected + " (or with " + BENCH_HEADER_MORE + "), found " + ls.get(0));
        }
        int fields = ls.get(0).equals(expected) ? 9 : 13;
        List<Row> out = new ArrayList<>();
        for (int i = 1; i < ls.size(); i++) {
            String[] f = ls.get(i).split(",", -1);
            try {
                if (f.length != fields) throw new NumberFormatException(f.length + " fields");
                out.add(new Row(f[0], f[1], f[2], Integer.parseInt(f[3]), Integer.parseInt(f[4]), Integer.parseInt(f[5]),
                        Double.parseDouble(f[6]), Double.parseDouble(f[7]), Double.parseDouble(f[8])));
            } catch (NumberFormatException e) {
                throw new MlaException("gpu-report: " + dir.resolve(name) + " line " + (i + 1) + ": expected " + fields + " fields "
                        + "(3 names, 3 integers, 3 numbers" + (fields > 9 ? ", then ms_median, device, date, warmed_up" : "") + "), found '" + ls.get(i) + "'");
            }
        }
        return out;
    }

    private static void writeAtomically(Path file, String text) {
        OutputFiles.write(file, out -> out.write(text.getBytes(StandardCharsets.UTF_8)));
    }
}
