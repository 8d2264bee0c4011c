package org.tornadomla.cli;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tornadomla.ReferenceMla;
import org.tornadomla.TestData;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.weights.DType;
import org.tornadomla.weights.MlaWeights;
import org.tornadomla.weights.SafeTensorsFile;
import org.tornadomla.weights.SafeTensorsWriter;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CliTest {
    @TempDir
    Path dir;
    MlaConfig cfg = TestData.yarn();
    MlaWeights w;
    Path config, weights, out;
    static final int B = 2, T = 5, K = 2;

    record Run(int code, String out, String err) {
    }

    static Run mla(String... args) {
        StringWriter o = new StringWriter(), e = new StringWriter();
        int code = MlaCommand.execute(MlaCommand.commandLine(new PrintWriter(o, true), new PrintWriter(e, true)), args);
        return new Run(code, o.toString(), e.toString());
    }

    @picocli.CommandLine.Command(name = "oom")
    static final class OutOfHeap implements Runnable {
        @Override
        public void run() {
            throw new OutOfMemoryError("Java heap space");
        }
    }

    @Test
    void anOutOfMemoryErrorEndsAsOneLineAndExitCode2() {
        // a command that runs out of heap where no check foresaw it: picocli lets the Error through
        StringWriter e = new StringWriter();
        picocli.CommandLine cl = new picocli.CommandLine(new OutOfHeap());
        cl.setErr(new PrintWriter(e, true));
        int code = MlaCommand.execute(cl);
        assertEquals(MlaCommand.BAD_INPUT, code, e.toString());
        assertEquals("mla: error: out of memory (Java heap space): give the JVM more heap (MLA_JAVA_OPTS=-Xmx16g for ./mla) "
                + "or ask for less", e.toString().strip());
    }

    @BeforeEach
    void files() throws IOException {
        config = dir.resolve("config.json");
        Files.writeString(config, cfg.toJson());
        w = MlaWeights.random(cfg, 21);
        weights = dir.resolve("model.safetensors");
        w.addTo(new SafeTensorsWriter(), 0, DType.BF16).write(weights);
        w = MlaWeights.load(weights, cfg, 0);               // what the CLI sees: bf16-rounded weights
        out = dir.resolve("out.safetensors");
    }

    /** Sequence b's T + K inputs, token-major. */
    private float[] tokens(int b) {
        return TestData.gaussian(30 + b, (T + K) * cfg.hiddenSize());
    }

    private Path input(DType dtype) {
        int d = cfg.hiddenSize();
        float[] prefill = new float[B * T * d];
        float[][] dec = new float[K][B * d];
        for (int b = 0; b < B; b++) {
            float[] x = tokens(b);
            System.arraycopy(x, 0, prefill, b * T * d, T * d);
            for (int k = 0; k < K; k++) System.arraycopy(x, (T + k) * d, dec[k], b * d, d);
        }
        SafeTensorsWriter wr = new SafeTensorsWriter().add("prefill_input", dtype, new long[] {B, T, d}, prefill);
        for (int k = 0; k < K; k++) wr.add("decode_input_" + k, dtype, new long[] {B, 1, d}, dec[k]);
        Path p = dir.resolve("in-" + dtype + ".safetensors");
        wr.write(p);
        return p;
    }

    private String[] runLayer(Path in, String... extra) {
        String[] base = {"run-layer", "--config", config.toString(), "--weights", weights.toString(), "--input", in.toString(), "--output", out.toString()};
        String[] all = Arrays.copyOf(base, base.length + extra.length);
        System.arraycopy(extra, 0, all, base.length, extra.length);
        return all;
    }

    @Test
    void runLayerMatchesTheReferenceForEveryPathAndCacheDtype() {
        Path in = input(DType.F32);
        int d = cfg.hiddenSize(), dc = cfg.kvLoraRank(), dr = cfg.qkRopeHeadDim();
        for (String path : new String[] {"naive", "absorbed", "tiled"}) {
            for (String dtype : new String[] {"f32", "bf16"}) {
                Run r = mla(runLayer(in, "--path", path, "--cache-dtype", dtype, "--tile", "2", "--splits", "3"));
                assertEquals(0, r.code, r.err);
                double tol = dtype.equals("f32") ? 1e-4 : 2e-3;
                try (SafeTensorsFile o = SafeTensorsFile.open(out)) {
                    assertEquals(java.util.Set.of("prefill_output", "decode_output_0", "decode_output_1", "kv_cache", "pe_cache"), o.names());
                    float[] pre = o.readFloats("prefill_output", B, T, d);
                    float[] kv = o.readFloats("kv_cache", B, T + K, dc), pe = o.readFloats("pe_cache", B, T + K, dr);
                    for (int b = 0; b < B; b++) {
                        ReferenceMla.Result ref = ReferenceMla.prefill(w, tokens(b), T + K, dtype.equals("bf16"));
                        String what = path + "/" + dtype + " sequence " + b;
                        TestData.assertClose(Arrays.copyOf(ref.y(), T * d), Arrays.copyOfRange(pre, b * T * d, (b + 1) * T * d), tol, what + " prefill");
                        for (int k = 0; k < K; k++) {
                            float[] dk = o.readFloats("decode_output_" + k, B, 1, d);
                            TestData.assertClose(Arrays.copyOfRange(ref.y(), (T + k) * d, (T + k + 1) * d), Arrays.copyOfRange(dk, b * d, (b + 1) * d), tol, what + " decode " + k);
                        }
                        TestData.assertClose(ref.ckv(), Arrays.copyOfRange(kv, b * (T + K) * dc, (b + 1) * (T + K) * dc), 1e-4, what + " kv_cache");
                        TestData.assertClose(ref.kpe(), Arrays.copyOfRange(pe, b * (T + K) * dr, (b + 1) * (T + K) * dr), 1e-4, what + " pe_cache");
                    }
                }
            }
        }
    }

    /** The variable-length format: prompts of 3, 6 and 1 tokens, then K decode steps of all three. */
    static final int[] LENGTHS = {3, 6, 1};

    private float[] varTokens(int b) {
        return TestData.gaussian(50 + b, (LENGTHS[b] + K) * cfg.hiddenSize());
    }

    private Path varlenInput() {
        int d = cfg.hiddenSize();
        SafeTensorsWriter wr = new SafeTensorsWriter();
        for (int b = 0; b < LENGTHS.length; b++) wr.add("prefill_input." + b, new long[] {LENGTHS[b], d}, Arrays.copyOf(varTokens(b), LENGTHS[b] * d));
        for (int k = 0; k < K; k++) {
            float[] dec = new float[LENGTHS.length * d];
            for (int b = 0; b < LENGTHS.length; b++) System.arraycopy(varTokens(b), (LENGTHS[b] + k) * d, dec, b * d, d);
            wr.add("decode_input_" + k, new long[] {LENGTHS.length, 1, d}, dec);
        }
        Path p = dir.resolve("varlen.safetensors");
        wr.write(p);
        return p;
    }

    @Test
    void variableLengthBatchesMatchTheReferenceContiguousAndPaged() throws IOException {
        Path in = varlenInput();
        int d = cfg.hiddenSize(), dc = cfg.kvLoraRank(), dr = cfg.qkRopeHeadDim(), n = LENGTHS.length;
        java.util.Set<String> names = new java.util.TreeSet<>(List.of("decode_output_0", "decode_output_1"));
        for (int b = 0; b < n; b++) names.addAll(List.of("prefill_output." + b, "kv_cache." + b, "pe_cache." + b));
        for (String path : new String[] {"naive", "absorbed", "tiled"}) {
            for (String dtype : new String[] {"f32", "bf16"}) {
                float[][] contiguous = null;
                for (String[] layout : new String[][] {{}, {"--paged", "--block-size", "4"}, {"--paged", "--block-size", "2"}}) {
                    List<String> args = new java.util.ArrayList<>(List.of(runLayer(in, "--path", path, "--cache-dtype", dtype)));
                    args.addAll(List.of(layout));
                    Run r = mla(args.toArray(String[]::new));
                    assertEquals(0, r.code, r.err);
                    assertTrue(r.out.contains("B=3, prefill T_b=[3, 6, 1], 2 decode steps"), r.out);
                    double tol = dtype.equals("f32") ? 1e-4 : 2e-3;
                    String what = path + "/" + dtype + " " + String.join(" ", layout);
                    float[][] all = new float[n][];
                    try (SafeTensorsFile o = SafeTensorsFile.open(out)) {
                        assertEquals(names, new java.util.TreeSet<>(o.names()), what);
                        for (int b = 0; b < n; b++) {
                            int t = LENGTHS[b];
                            ReferenceMla.Result ref = ReferenceMla.prefill(w, varTokens(b), t + K, dtype.equals("bf16"));
                            float[] pre = o.readFloats("prefill_output." + b, t, d);
                            TestData.assertClose(Arrays.copyOf(ref.y(), t * d), pre, tol, what + " sequence " + b + " prefill");
                            all[b] = pre;
                            for (int k = 0; k < K; k++) {
                                float[] dk = Arrays.copyOfRange(o.readFloats("decode_output_" + k, n, 1, d), b * d, (b + 1) * d);
                                TestData.assertClose(Arrays.copyOfRange(ref.y(), (t + k) * d, (t + k + 1) * d), dk, tol, what + " sequence " + b + " decode " + k);
                                all[b] = concat(all[b], dk);
                            }
                            TestData.assertClose(ref.ckv(), o.readFloats("kv_cache." + b, t + K, dc), 1e-4, what + " kv_cache." + b);
                            TestData.assertClose(ref.kpe(), o.readFloats("pe_cache." + b, t + K, dr), 1e-4, what + " pe_cache." + b);
                        }
                    }
                    if (contiguous == null) {
                        contiguous = all;
                    } else {
                        for (int b = 0; b < n; b++) TestData.assertClose(contiguous[b], all[b], 1e-6, what + ": paged against contiguous, sequence " + b);
                    }
                }
            }
        }
        // the uniform format runs on a paged cache too, with the same outputs
        Path uniform = input(DType.F32);
        assertEquals(0, mla(runLayer(uniform, "--path", "tiled")).code);
        float[] contiguousOut;
        try (SafeTensorsFile o = SafeTensorsFile.open(out)) {
            contiguousOut = o.readFloats("decode_output_1");
        }
        Run r = mla(runLayer(uniform, "--path", "tiled", "--paged", "--block-size", "3"));
        assertEquals(0, r.code, r.err);
        try (SafeTensorsFile o = SafeTensorsFile.open(out)) {
            TestData.assertClose(contiguousOut, o.readFloats("decode_output_1"), 1e-6, "uniform format, paged");
        }
    }

    private static float[] concat(float[] a, float[] b) {
        float[] r = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, r, a.length, b.length);
        return r;
    }

    @Test
    void badVariableLengthInputIsOneClearErrorWithoutOutput() throws IOException {
        int d = cfg.hiddenSize();
        Path gap = dir.resolve("gap.safetensors");
        new SafeTensorsWriter().add("prefill_input.0", new long[] {2, d}, new float[2 * d]).add("prefill_input.2", new long[] {1, d}, new float[d]).write(gap);
        rejects("has prefill_input.2 but no prefill_input.1: sequences must run from 0 without a gap", runLayer(gap));
        Path both = dir.resolve("both.safetensors");
        new SafeTensorsWriter().add("prefill_input", new long[] {1, 2, d}, new float[2 * d]).add("prefill_input.0", new long[] {1, d}, new float[d]).write(both);
        rejects("holds both prefill_input and prefill_input.0: use one format", runLayer(both));
        Path shape = dir.resolve("shape.safetensors");
        new SafeTensorsWriter().add("prefill_input.0", new long[] {1, 2, d}, new float[2 * d]).write(shape);
        rejects("tensor 'prefill_input.0': expected shape [T_0, " + d + "] with T_0 >= 1, found [1, 2, " + d + "]", runLayer(shape));
        Path leadingZero = dir.resolve("zero.safetensors");
        new SafeTensorsWriter().add("prefill_input.0", new long[] {1, d}, new float[d]).add("prefill_input.01", new long[] {1, d}, new float[d]).write(leadingZero);
        rejects("holds tensor 'prefill_input.01', which run-layer does not use", runLayer(leadingZero));
        Path decode = dir.resolve("decode.safetensors");
        new SafeTensorsWriter().add("prefill_input.0", new long[] {1, d}, new float[d]).add("prefill_input.1", new long[] {4, d}, new float[4 * d])
                .add("decode_input_0", new long[] {1, 1, d}, new float[d]).write(decode);
        rejects("tensor 'decode_input_0': expected shape [2, 1, " + d + "], found [1, 1, " + d + "]", runLayer(decode));
        Path in = varlenInput();
        rejects("--block-size 4 needs --paged", runLayer(in, "--block-size", "4"));
        rejects("--block-size must be 1 … 1048576 tokens, found 0", runLayer(in, "--paged", "--block-size", "0"));
    }

    @Test
    void bf16InputsAreAccepted() {
        Run r = mla(runLayer(input(DType.BF16), "--path", "tiled"));
        assertEquals(0, r.code, r.err);
        assertTrue(r.out.contains("B=2, prefill T=5, 2 decode steps"), r.out);
    }

    @Test
    void runLayerRunsJavaFastByDefaultAndJavaReferenceWhenAsked() throws IOException {
        // surefire's JVM has the Vector API module, as ./mla's has: docs/checkpoints.md's real layers need java-fast
        Path in = input(DType.F32);
        Run fast = mla(runLayer(in));
        assertEquals(0, fast.code, fast.err);
        assertTrue(fast.out.lines().anyMatch(l -> l.startsWith("backend: java-fast (Vector API")), fast.out);
        float[] y = readAll(out);
        Files.delete(out);
        Run ref = mla(runLayer(in, "--backend", "java-reference"));
        assertEquals(0, ref.code, ref.err);
        assertTrue(ref.out.lines().anyMatch(l -> l.startsWith("backend: java-reference (reference kernels")), ref.out);
        TestData.assertClose(readAll(out), y, 1e-4, "java-fast against java-reference");
        String help = String.join(" ", picocli.CommandLine.Help.Ansi.OFF.string(mla("run-layer", "--help").out).split("\\s+"));
        assertTrue(help.contains("default: java-fast when the JVM has the Vector API module"), help);
    }

    /** picocli passes every help line through String.format; a bare % there prints "[picocli WARN]" above the help. */
    @Test
    void everyCommandsHelpRendersWithoutAPicocliWarning() {
        java.io.ByteArrayOutputStream warnings = new java.io.ByteArrayOutputStream();
        java.io.PrintStream err = System.err;
        int commands = 0;
        StringBuilder help = new StringBuilder();
        try {
            System.setErr(new java.io.PrintStream(warnings, true, StandardCharsets.UTF_8));
            java.util.ArrayDeque<picocli.CommandLine> todo = new java.util.ArrayDeque<>();
            todo.add(MlaCommand.commandLine(new PrintWriter(new StringWriter()), new PrintWriter(new StringWriter())));
            while (!todo.isEmpty()) {
                picocli.CommandLine c = todo.poll();
                todo.addAll(c.getSubcommands().values());
                help.append(c.getUsageMessage(picocli.CommandLine.Help.Ansi.OFF));
                commands++;
            }
        } finally {
            System.setErr(err);
        }
        assertTrue(commands > 10, "only " + commands + " commands found");
        assertTrue(help.toString().contains("% of the measured FMA peak"), "bench --help lacks its % sign");
        assertEquals("", warnings.toString(StandardCharsets.UTF_8));
    }

    private static float[] readAll(Path file) {
        try (SafeTensorsFile o = SafeTensorsFile.open(file)) {
            float[] pre = o.readFloats("prefill_output"), dec = o.readFloats("decode_output_1");
            float[] all = Arrays.copyOf(pre, pre.length + dec.length);
            System.arraycopy(dec, 0, all, pre.length, dec.length);
            return all;
        }
    }

    /** Bad input: exit code 2, one line naming what was expected and found, and no output file. */
    private void rejects(String expectedInMessage, String... args) {
        Run r = mla(args);
        assertEquals(2, r.code, r.out + r.err);
        assertEquals(1, r.err.strip().lines().count(), r.err);
        assertTrue(r.err.contains(expectedInMessage), r.err);
        assertFalse(Files.exists(out), "no output file after an error");
    }

    @Test
    void missingTensorWrongShapeWrongDtypeAndMismatchAreExitCode2WithoutOutput() throws IOException {
        int d = cfg.hiddenSize();
        Path noPrefill = dir.resolve("np.safetensors");
        new SafeTensorsWriter().add("decode_input_0", new long[] {1, 1, d}, new float[d]).write(noPrefill);
        rejects("has no tensor 'prefill_input' (expected shape [B, T, " + d + "] (or prefill_input.0, prefill_input.1, ... [T_b, " + d + "]))", runLayer(noPrefill));

        Path wide = dir.resolve("wide.safetensors");
        new SafeTensorsWriter().add("prefill_input", new long[] {1, 3, d + 1}, new float[3 * (d + 1)]).write(wide);
        rejects("tensor 'prefill_input': expected shape [B, T, " + d + "], found [1, 3, " + (d + 1) + "]", runLayer(wide));

        Path badDecode = dir.resolve("bd.safetensors");
        new SafeTensorsWriter().add("prefill_input", new long[] {2, 3, d}, new float[6 * d])
                .add("decode_input_0", new long[] {2, 2, d}, new float[4 * d]).write(badDecode);
        rejects("tensor 'decode_input_0': expected shape [2, 1, " + d + "], found [2, 2, " + d + "]", runLayer(badDecode));

        String json = "{\"prefill_input\":{\"dtype\":\"I32\",\"shape\":[1,1," + d + "],\"data_offsets\":[0," + 4 * d + "]}}";
        byte[] h = json.getBytes(StandardCharsets.UTF_8);
        Path ints = dir.resolve("ints.safetensors");
        Files.write(ints, ByteBuffer.allocate(8 + h.length + 4 * d).order(ByteOrder.LITTLE_ENDIAN).putLong(h.length).put(h).array());
        rejects("tensor 'prefill_input': expected dtype F32, BF16, F16 or F64, found I32", runLayer(ints));

        Path otherConfig = dir.resolve("other.json");
        Files.writeString(otherConfig, cfg.toJson().replace("\"kv_lora_rank\": 16", "\"kv_lora_rank\": 32"));
        Path in = input(DType.F32);
        String[] args = runLayer(in);
        args[2] = otherConfig.toString();
        rejects("tensor 'model.layers.0.self_attn.kv_a_proj_with_mqa.weight': expected shape [40, 40], found [24, 40]", args);

        rejects("holds no tensor of it (model.layers.4.*); it holds layer 0", runLayer(in, "--layer", "4"));
        rejects("unknown attention path 'flash'", runLayer(in, "--path", "flash"));
        rejects("unknown cache dtype 'fp4'", runLayer(in, "--cache-dtype", "fp4"));
        rejects("missing --output", "run-layer", "--config", config.toString(), "--weights", weights.toString(), "--input", in.toString());
        rejects("config file not found", runLayer(in)[0], "--config", dir.resolve("nope.json").toString(), "--weights", weights.toString(), "--input", in.toString(), "--output", out.toString());

        Path corrupt = dir.resolve("corrupt.safetensors");
        Files.write(corrupt, Arrays.copyOf(Files.readAllBytes(in), 100));
        rejects("corrupt safetensors", runLayer(corrupt));
    }

    @Test
    void runLayerReadsAShardedFp8CheckpointAndKeepsItFp8() throws IOException {
        MlaConfig c = org.tornadomla.Fp8Checkpoints.config();
        var layer = org.tornadomla.Fp8Checkpoints.random(c, 17);
        Path index = org.tornadomla.Fp8Checkpoints.write(dir.resolve("v3"), layer, 2, 3);
        Path cfgFile = dir.resolve("v3").resolve("config.json");
        Files.writeString(cfgFile, c.toJson());
        int d = c.hiddenSize(), t = 4;
        float[] x = TestData.gaussian(40, (t + 1) * d);
        Path in = dir.resolve("in-v3.safetensors");
        new SafeTensorsWriter().add("prefill_input", new long[] {1, t, d}, Arrays.copyOf(x, t * d))
                .add("decode_input_0", new long[] {1, 1, d}, Arrays.copyOfRange(x, t * d, (t + 1) * d)).write(in);
        ReferenceMla.Result ref = ReferenceMla.prefill(layer.weights(), x, t + 1, false);      // float64 on e4m3·scale
        for (String wd : new String[] {"", "f32", "bf16", "fp8"}) {
            for (String path : new String[] {"naive", "absorbed", "tiled"}) {
                List<String> args = new java.util.ArrayList<>(List.of("run-layer", "--config", cfgFile.toString(), "--weights", index.toString(),
                        "--layer", "2", "--input", in.toString(), "--output", out.toString(), "--path", path));
                if (!wd.isEmpty()) args.addAll(List.of("--weights-dtype", wd));
                Run r = mla(args.toArray(String[]::new));
                assertEquals(0, r.code, r.err);
                String form = wd.isEmpty() ? "fp8" : wd;
                assertTrue(r.out.contains("projections " + form + " in memory (F8_E4M3 in the checkpoint" + (form.equals("bf16") ? "; converting rounds them" : "") + ")"), r.out);
                double tol = form.equals("bf16") ? 5e-2 : 1e-4;
                try (SafeTensorsFile o = SafeTensorsFile.open(out)) {
                    float[] y = new float[(t + 1) * d];
                    System.arraycopy(o.readFloats("prefill_output", 1, t, d), 0, y, 0, t * d);
                    System.arraycopy(o.readFloats("decode_output_0", 1, 1, d), 0, y, t * d, d);
                    double scale = Arrays.stream(ref.y()).map(Math::abs).max().orElseThrow();
                    for (int i = 0; i < y.length; i++) {
                        assertTrue(Math.abs(y[i] - ref.y()[i]) <= tol * scale, form + " " + path + ": element " + i + " " + y[i] + " vs " + ref.y()[i]);
                    }
                }
                Files.delete(out);
            }
        }
        Run bad = mla("run-layer", "--config", cfgFile.toString(), "--weights", index.toString(), "--layer", "2", "--input", in.toString(),
                "--output", out.toString(), "--weights-dtype", "fp4");
        assertEquals(2, bad.code);
        assertEquals("mla: error: unknown weights dtype 'fp4' (expected f32, bf16 or fp8)", bad.err.strip());
        // a shard holding scales gone: one line naming the tensor, exit 2, no output
        Files.delete(dir.resolve("v3").resolve(org.tornadomla.Fp8Checkpoints.shardName(1, 3)));
        rejects("shard 'model-00002-of-00003.safetensors' listed in weight_map does not exist", "run-layer", "--config", cfgFile.toString(),
                "--weights", index.toString(), "--layer", "2", "--input", in.toString(), "--output", out.toString());
    }

    @Test
    void demoRunsAllPathsAndReportsTheirAgreement() {
        Run r = mla("demo", "--preset", "deepseek-v2-lite", "--hidden", "128", "--prefill", "6", "--steps", "2");
        assertEquals(0, r.code, r.err);
        for (String p : new String[] {"naive", "absorbed", "tiled"}) assertTrue(r.out.contains(p), r.out);
        String[] tiled = r.out.lines().filter(l -> l.startsWith("tiled")).findFirst().orElseThrow().trim().split("\\s+");
        assertTrue(Double.parseDouble(tiled[tiled.length - 1]) < 1e-5, r.out);
        assertTrue(r.out.contains("MLA (c_kv 512 + k_pe 64)") && r.out.contains("5,120 numbers"), r.out);
        assertEquals(2, mla("demo", "--prefill", "0").code);
        Run fp8 = mla("demo", "--preset", "deepseek-v2-lite", "--hidden", "128", "--prefill", "6", "--steps", "2", "--weights-dtype", "fp8");
        assertEquals(0, fp8.code, fp8.err);
        assertTrue(fp8.out.contains("held as fp8"), fp8.out);
        String[] t = fp8.out.lines().filter(l -> l.startsWith("tiled")).findFirst().orElseThrow().trim().split("\\s+");
        assertTrue(Double.parseDouble(t[t.length - 1]) < 1e-5, fp8.out);
    }

    @Test
    void benchWritesTheTableTheCsvAndAChart() throws IOException {
        Path csv = dir.resolve("out.csv"), png = dir.resolve("out.png");
        Run r = mla("bench", "--quick", "--backends", "java-reference,java-fast", "--heads", "4", "--context", "40", "--dtype", "f32,bf16",
                "--budget-ms", "20", "--csv", csv.toString(), "--chart", png.toString());
        assertEquals(0, r.code, r.err);
        List<String> lines = Files.readAllLines(csv);
        assertEquals("backend,path,dtype,batch,heads,context,ms_per_step,gb_per_s,gflop_per_s,ms_median,device,date,warmed_up", lines.get(0));
        assertEquals(1 + 2 * 2 * 2, lines.size(), String.join("\n", lines));      // 2 backends × 2 paths × 2 dtypes
        String cpu = org.tornadomla.bench.Charts.cpuModel().replace(',', ';');
        for (String l : lines.subList(1, lines.size())) {
            String[] f = l.split(",", -1);
            assertEquals(13, f.length, l);
            assertTrue(Double.parseDouble(f[6]) > 0 && Double.parseDouble(f[8]) > 0, l);
            // the median step is a step's time too, the same order as the mean (a handful of slow steps apart)
            assertTrue(Double.parseDouble(f[9]) > 0 && Double.parseDouble(f[9]) < 10 * Double.parseDouble(f[6]), l);
            // where it ran: this CPU, and the executor (java-fast with its vector width)
            assertTrue(f[10].startsWith(cpu) && f[10].contains(f[0].equals("java-fast") ? "java-fast (Vector API" : "java-reference"), l);
            assertEquals(java.time.LocalDate.now(java.time.ZoneOffset.UTC).toString(), f[11], l);
            assertEquals("no", f[12], l);                           // --budget-ms 20: the JIT was not waited for
            // GFLOP/s is the shape's FLOPs over the time: B·(2·H·T·576 + 2·H·T·512 + 2·H·512·256) / ms
            double flops = 2.0 * 4 * 40 * 576 + 2.0 * 4 * 40 * 512 + 2.0 * 4 * 512 * 256;
            assertEquals(flops / (Double.parseDouble(f[6]) * 1e-3) / 1e9, Double.parseDouble(f[8]), 1e-3 * Double.parseDouble(f[8]), l);
        }
        byte[] head = java.util.Arrays.copyOf(Files.readAllBytes(png), 8);
        assertArrayEquals(new byte[] {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'}, head);
        // java-fast is checked against the reference kernels in the same run
        assertTrue(r.out.lines().filter(l -> l.startsWith("java-fast")).allMatch(l -> l.matches(".* [0-9.]+e[-+][0-9]+ .*")), r.out);
        assertTrue(r.out.contains("limits:") && r.out.contains("GFLOP/s FMA peak"), r.out);
        // what java-fast chose for this CPU, named once, with the vector width this JVM prefers
        List<String> kernels = r.out.lines().filter(l -> l.startsWith("kernels: java-fast on ")).toList();
        assertEquals(1, kernels.size(), r.out);
        int bits = jdk.incubator.vector.FloatVector.SPECIES_PREFERRED.vectorBitSize();
        assertTrue(kernels.get(0).contains(": " + bits + "-bit vectors, ") && kernels.get(0).contains("(tornadomla.fast.halfScores)"), kernels.get(0));
        assertEquals(2, mla("bench", "--path", "naive").code);
        assertEquals(2, mla("bench", "--backends", "cuda").code);
    }

    @Test
    void benchCsvWithoutAFileIsStandardOutputAndNothingElse() {
        Run r = mla("bench", "--backend", "java-reference", "--heads", "4", "--batch", "1", "--context", "40", "--dtype", "f32", "--path", "absorbed,tiled",
                "--budget-ms", "5", "--csv");
        assertEquals(0, r.code, r.err);
        List<String> lines = r.out.lines().toList();
        assertEquals(List.of(BenchCommand.CSV_HEADER), lines.subList(0, 1), r.out);
        assertEquals(3, lines.size(), r.out);                      // the header and the two paths, nothing else
        assertTrue(lines.get(1).startsWith("java-reference,absorbed,f32,1,4,40,") && lines.get(2).startsWith("java-reference,tiled,f32,1,4,40,"), r.out);
        // the table and the progress went to standard error
        assertTrue(r.err.contains("B1 H4 T40 absorbed f32") && r.err.contains("bench done in"), r.err);
        Run dash = mla("bench", "--backend", "java-reference", "--heads", "4", "--batch", "1", "--context", "40", "--dtype", "f32", "--path", "tiled",
                "--budget-ms", "100", "--csv", "-");
        assertEquals(0, dash.code, dash.err);
        assertEquals(2, dash.out.lines().count(), dash.out);
        // a budget of 100 ms waits for the JIT, 5 does not: the CSV says which
        assertTrue(lines.get(1).endsWith(",no") && dash.out.lines().toList().get(1).endsWith(",yes"), r.out + dash.out);
        assertTrue(r.err.contains("steps, not warmed up]") && !dash.err.contains("not warmed up"), r.err + dash.err);
    }

    /** A context too large for one array skips its own shape only: the tiled shapes of one batch shared its cache, and all were skipped. */
    @Test
    void benchSkipsAShapeTooLargeForOneArrayAndMeasuresTheOthers() {
        Run r = mla("bench", "--backend", "java-reference", "--heads", "4", "--batch", "1", "--context", "10000000,40", "--dtype", "f32", "--path", "tiled",
                "--budget-ms", "5", "--csv", "-");
        assertEquals(0, r.code, r.err);
        assertTrue(r.err.lines().anyMatch(l -> l.contains("B1 H4 T10000000 tiled f32") && l.contains("skipped: cache of 1 x 10000000 x 576")), r.err);
        assertTrue(r.err.lines().noneMatch(l -> l.contains("T40 ") && l.contains("skipped")), r.err);
        assertTrue(r.out.lines().anyMatch(l -> l.startsWith("java-reference,tiled,f32,1,4,40,")), r.out);
    }

    @Test
    void benchBreakdownListsEachTaskAndOnJavaFastEachThreadsTimeInIt() {
        Run r = mla("bench", "--backends", "java-reference,java-fast", "--heads", "4", "--batch", "1", "--context", "40", "--dtype", "f32",
                "--path", "absorbed", "--budget-ms", "5", "--breakdown");
        assertEquals(0, r.code, r.err);
        String all = r.out + r.err;
        List<String> tasks = all.lines().filter(l -> l.startsWith("    tasks, ms: absorb_q ")).toList();
        assertEquals(2, tasks.size(), all);                         // one per backend
        assertTrue(tasks.get(1).matches("    tasks, ms: absorb_q [0-9.]+ scores [0-9.]+ softmax [0-9.]+ values [0-9.]+ unabsorb_v [0-9.]+"), tasks.get(1));
        // java-fast runs its loops on threads of its own (one per processor): a line with each thread's time per task;
        // the reference runs none, and a single processor leaves nothing to compare
        int n = Runtime.getRuntime().availableProcessors();
        List<String> threads = all.lines().filter(l -> l.startsWith(n <= 4 ? "    each thread in the task's loops, ms (main/worker 1/" : "    " + n + " threads in the task's loops")).toList();
        assertEquals(n > 1 ? 1 : 0, threads.size(), all);
        if (n > 1) {
            String perThread = "[0-9.]+(/[0-9.]+){" + ((n <= 4 ? n : 3) - 1) + "}";     // every thread, or least/median/most
            assertTrue(threads.get(0).matches(".*: absorb_q " + perThread + " scores " + perThread + " softmax " + perThread + " values " + perThread
                    + " unabsorb_v " + perThread), threads.get(0));
        }
    }

    @Test
    void theThreadsLineListsUpToFourThreadsAndOtherwiseTheLeastTheMedianAndTheMost() {
        var times = List.of(new org.tornadomla.bench.DecodeBench.TaskTime("scores", 2.0, new double[] {1.5, 1.9}),
                new org.tornadomla.bench.DecodeBench.TaskTime("values", 3.0, new double[] {2.5, 2.0}));
        assertEquals("    each thread in the task's loops, ms (main/worker 1/…; short of the task's time: it waited, started late or ran serial code):"
                + " scores 1.500/1.900 values 2.500/2.000", BenchCommand.threadsLine(times, 2));
        var many = List.of(new org.tornadomla.bench.DecodeBench.TaskTime("values", 3.0, new double[] {2.9, 1.0, 2.0, 2.5, 2.8, 1.5, 2.2, 2.7}));
        String line = BenchCommand.threadsLine(many, 8);
        // sorted: 1.0 1.5 2.0 2.2 2.5 2.7 2.8 2.9: the least, the one at index 4, the most
        assertTrue(line.startsWith("    8 threads in the task's loops, ms (least/median/most;") && line.endsWith(" values 1.000/2.500/2.900"), line);
    }

    @Test
    void thePeakLineCountsEachProductTasksFlopsAgainstTheMeasuredPeak() {
        double[] none = new double[0];
        var absorbed = new org.tornadomla.bench.DecodeBench.Shape(org.tornadomla.attention.AttentionPath.ABSORBED, org.tornadomla.cache.CacheDtype.F32, 1, 128, 4096);
        var times = List.of(new org.tornadomla.bench.DecodeBench.TaskTime("absorb_q", 0.5, none),
                new org.tornadomla.bench.DecodeBench.TaskTime("scores", 2.0, none), new org.tornadomla.bench.DecodeBench.TaskTime("softmax", 0.2, none),
                new org.tornadomla.bench.DecodeBench.TaskTime("values", 2.0, none), new org.tornadomla.bench.DecodeBench.TaskTime("unabsorb_v", 0.5, none));
        // by hand: scores 2·128·4096·576 = 603,979,776 FLOPs in 2 ms, 302.0 GFLOP/s, 75.5 % of 400; values 2·128·4096·512
        // = 536,870,912, 268.4, 67.1 %; absorb_q and unabsorb_v 2·128·128·512 = 16,777,216 in 0.5 ms, 33.6, 8.4 %; no softmax
        assertEquals("    tasks, GFLOP/s and % of the FMA peak: absorb_q 33.6 (8 %) scores 302.0 (75 %) values 268.4 (67 %) unabsorb_v 33.6 (8 %)",
                BenchCommand.peakLine(times, absorbed, 400));
        // the tiled path's tiles do both products: 2·8·128·1024·(512 + 512 + 64) = 2,281,701,376 FLOPs in 8 ms, 285.2, 71.3 %
        var tiled = new org.tornadomla.bench.DecodeBench.Shape(org.tornadomla.attention.AttentionPath.TILED, org.tornadomla.cache.CacheDtype.F32, 8, 128, 1024);
        assertEquals("    tasks, GFLOP/s and % of the FMA peak: split_tiles 285.2 (71 %)",
                BenchCommand.peakLine(List.of(new org.tornadomla.bench.DecodeBench.TaskTime("split_tiles", 8.0, none),
                        new org.tornadomla.bench.DecodeBench.TaskTime("combine", 0.1, none)), tiled, 400));
        // the naive path's tasks of the same names do other products: no line
        var naive = new org.tornadomla.bench.DecodeBench.Shape(org.tornadomla.attention.AttentionPath.NAIVE, org.tornadomla.cache.CacheDtype.F32, 1, 128, 4096);
        assertNull(BenchCommand.peakLine(times, naive, 400));
    }

    @Test
    void benchOffloadTimesARestoreOfTheBytesTheSequenceHolds() {
        // context 64: 63 cached tokens and the step's own; fp8 rows of 656 B: 63 · 656 = 41,328 bytes come back
        Run r = mla("bench", "--offload", "--quick", "--layer-hidden", "128", "--context", "64", "--batch", "2", "--backends", "java-fast", "--dtype", "fp8");
        assertEquals(0, r.code, r.err);
        assertTrue(r.out.contains("host tier (DeepSeek-V3 attention geometry, hidden 128, fp8 cache, 2 sequences at context 64, blocks of 64"), r.out);
        assertTrue(r.out.lines().anyMatch(l -> l.matches("java-fast +restore 41,328 bytes in [0-9.]+ ms \\([0-9.]+ GB/s\\), offload [0-9.]+ ms .*"
                + "decode step [0-9.]+ ms, restore \\+ step [0-9.]+ ms \\([+-][0-9.]+ %\\)")), r.out);
    }

    @Test
    void kvMemoryGivesDeepSeekV3Bf16As70272BytesPerToken() throws IOException {
        Run r = mla("kv-memory", "--preset", "deepseek-v3", "--dtype", "bf16", "--context", "4096", "--batch", "8");
        assertEquals(0, r.code, r.err);
        String mla = r.out.lines().filter(l -> l.contains("MLA (c_kv 512 + k_pe 64)")).findFirst().orElseThrow();
        // 576 numbers · 2 bytes = 1,152 per layer; · 61 layers = 70,272 per token; · 4,096 = 287.8 MB per request; · 8 = 2.3 GB
        assertTrue(mla.contains(" 576 ") && mla.contains("1,152") && mla.contains("70,272") && mla.contains("287.8 MB") && mla.contains("2.3 GB"), mla);
        assertTrue(r.out.contains("per request") && r.out.contains("all requests"), r.out);
        String mha = r.out.lines().filter(l -> l.contains("MHA (128 × (192 + 128))")).findFirst().orElseThrow();
        assertTrue(mha.contains("40,960") && mha.contains("71.1×"), mha);
        // a GQA model from its config.json: 2 · 8 KV heads · 128 · 32 layers · 2 bytes = 131,072 bytes per token
        Path gqa = dir.resolve("gqa.json");
        Files.writeString(gqa, "{\"hidden_size\": 4096, \"num_attention_heads\": 32, \"num_key_value_heads\": 8, \"num_hidden_layers\": 32}");
        Run g = mla("kv-memory", "--config", gqa.toString());
        assertTrue(g.out.contains("131,072"), g.out);
        Path png = dir.resolve("kv.png");
        assertEquals(0, mla("kv-memory", "--chart", png.toString()).code);
        assertTrue(Files.size(png) > 1000);
        assertTrue(mla("kv-memory", "--dtype", "fp4").err.contains("unknown dtype 'fp4'"));
        assertEquals(2, mla("kv-memory", "--preset", "gpt-5").code);
    }

    @Test
    void demoAndKvMemoryKnowTheSameMlaPresets() {
        // one registry: every MLA preset runs in demo and is a model of kv-memory (geometry from the published configs)
        for (String[] p : List.of(new String[] {"deepseek-v3", "H=128, q_lora_rank=1536"}, new String[] {"deepseek-r1", "H=128, q_lora_rank=1536"},
                new String[] {"deepseek-v2", "H=128, q_lora_rank=1536"}, new String[] {"deepseek-v2-lite", "H=16, q_lora_rank=0"})) {
            Run d = mla("demo", "--preset", p[0], "--hidden", "64", "--prefill", "2", "--steps", "1", "--backend", "java-reference");
            assertEquals(0, d.code, p[0] + ": " + d.err);
            assertTrue(d.out.contains(p[1] + ", kv_lora_rank=512, d_n=128, d_r=64, d_v=128"), d.out);
            Run k = mla("kv-memory", "--preset", p[0], "--dtype", "bf16");
            assertEquals(0, k.code, p[0] + ": " + k.err);
            assertTrue(k.out.lines().anyMatch(l -> l.startsWith(p[0] + " ") && l.contains("MLA (c_kv 512 + k_pe 64)")), k.out);
        }
        // V2: 576 numbers · 2 bytes · 60 layers = 69,120 bytes per token; R1 is V3's 61 layers: 70,272
        assertTrue(mla("kv-memory", "--preset", "deepseek-v2").out.contains("69,120"));
        assertTrue(mla("kv-memory", "--preset", "deepseek-r1").out.contains("70,272"));
        // a quantised cache's row as stored, for the model's own geometry: MiniCPM3's d_c 256 and d_r 32 give
        // 256 + 4 · 2 + 2 · 32 = 328 B in fp8 and 256 + 32 + 8 = 296 in int8 (DeepSeek-V3's 656 was printed for every model)
        Run mini = mla("kv-memory", "--preset", "minicpm3-4b", "--dtype", "fp8,int8");
        assertTrue(mini.out.lines().anyMatch(l -> l.contains("MLA fp8 as cached, scales too (328 B)") && l.contains(" fp8 ")), mini.out);
        assertTrue(mini.out.lines().anyMatch(l -> l.contains("MLA int8 as cached, scales too (296 B)") && l.contains(" int8 ")), mini.out);
        assertFalse(mini.out.contains("656"), mini.out);
        // V3.2 (DSA) caches the indexer's e4m3 key and scale beside the latent: bf16 1,152 + 132 = 1,284 B per layer, · 61 = 78,324
        Run v32 = mla("kv-memory", "--preset", "deepseek-v3.2", "--dtype", "bf16,fp8");
        String bf16 = v32.out.lines().filter(l -> l.contains("MLA + DSA indexer keys (132 B)") && l.contains(" bf16 ")).findFirst().orElseThrow();
        assertTrue(bf16.contains("1,284") && bf16.contains("78,324"), bf16);
        String fp8 = v32.out.lines().filter(l -> l.contains("MLA + DSA indexer keys (132 B)") && l.contains(" fp8 ")).findFirst().orElseThrow();
        // the fp8 latent as cached: 512 e4m3 codes, 4 f32 scales and a bf16 rope key of 64 = 656 B, + 132; · 61 layers
        assertTrue(fp8.contains(" 788 ") && fp8.contains("48,068"), fp8);
        assertTrue(mla("kv-memory", "--preset", "deepseek-v3").out.lines().noneMatch(l -> l.contains("indexer")), "a dense model has no indexer row");
        // a host pool of 64 GiB: V3 bf16 holds 1,152 B × 61 layers = 70,272 B a token: 2^36 / (70,272 · 4,096) = 238 sequences;
        // V3.2 fp8 adds the indexer's 132 B: (656 + 132) · 61 = 48,068 B a token, 2^36 / (48,068 · 4,096) = 349
        Run host = mla("kv-memory", "--preset", "deepseek-v3,deepseek-v3.2", "--dtype", "bf16,fp8", "--context", "4096", "--host-gib", "64");
        assertEquals(0, host.code, host.err);
        String v3 = host.out.lines().filter(l -> l.startsWith("deepseek-v3 ") && l.contains(" bf16 ") && l.contains("per sequence")).findFirst().orElseThrow();
        assertTrue(v3.contains("70,272 B/token") && v3.endsWith(" 238 sequences"), v3);
        String sparseRow = host.out.lines().filter(l -> l.startsWith("deepseek-v3.2 ") && l.contains(" fp8 ") && l.contains("per sequence")).findFirst().orElseThrow();
        assertTrue(sparseRow.contains("48,068 B/token") && sparseRow.endsWith(" 349 sequences"), sparseRow);
        // the MHA/GQA models are kv-memory's comparison models, not MLA presets
        Run llama = mla("demo", "--preset", "llama-2-7b");
        assertEquals(2, llama.code);
        assertTrue(llama.err.contains("unknown preset 'llama-2-7b' (MLA presets: deepseek-v3, deepseek-r1, deepseek-v2, deepseek-v2-lite, deepseek-v3.2, kimi-k2, glm-5, "
                + "minicpm3-4b)"), llama.err);
        assertEquals(0, mla("kv-memory", "--preset", "llama-2-7b").code);
        Run unknown = mla("kv-memory", "--preset", "gpt-5");
        assertTrue(unknown.err.contains("deepseek-r1") && unknown.err.contains("MHA/GQA comparison models: llama-3.1-405b"), unknown.err);
    }

    @Test
    void aMistypedCommandOrOptionSuggestsTheNearestOne() {
        Run c = mla("demoo");
        assertEquals(2, c.code);
        assertTrue(c.err.strip().startsWith("mla: error: unknown command 'demoo' (commands: demo, run-layer, example, bench, "), c.err);
        assertTrue(c.err.strip().endsWith(") (did you mean demo?) (see: mla --help)"), c.err);
        Run o = mla("demo", "--prefil", "3");
        assertTrue(o.err.strip().endsWith("(did you mean --prefill?) (see: mla demo --help)"), o.err);
        assertFalse(mla("xyzzy").err.contains("did you mean"));
    }

    @Test
    void cacheErrorReportsEveryDtype() {
        Run r = mla("cache-error", "--heads", "4", "--context", "64", "--seeds", "1");
        assertEquals(0, r.code, r.err);
        assertTrue(r.out.lines().anyMatch(l -> l.startsWith("random") && l.contains("int8") && l.contains("584")), r.out);
        assertTrue(r.out.lines().anyMatch(l -> l.startsWith("structured") && l.contains("bf16") && l.contains("1,152")), r.out);
        // the f32 cache against itself through the same kernels, at a context whose values go in several runs: 0, or
        // the rounding of a kernel the JIT recompiled between the two steps (1.2e-7 seen), never the 3e-6 of two
        // threads summing runs in whichever order they finished
        Run d = mla("cache-error", "--seeds", "2");
        assertEquals(0, d.code, d.err);
        List<String> f32 = d.out.lines().filter(l -> l.matches("(random|structured) +f32 +2,304 .*")).toList();
        assertEquals(2, f32.size(), d.out);
        for (String l : f32) assertTrue(Double.parseDouble(l.trim().split(" +")[3]) < 1e-6, d.out);
    }

    @Test
    void rankFindsAPlantedRankAndConvertsToMla() throws IOException {
        Path layer = dir.resolve("mha.safetensors"), mlaOut = dir.resolve("mla.safetensors"), png = dir.resolve("rank.png");
        assertEquals(0, mla("rank", "--generate", "--output", layer.toString(), "--hidden", "96", "--kv-heads", "2", "--head-dim", "16",
                "--planted-rank", "20").code);
        Run r = mla("rank", "--weights", layer.toString(), "--to-mla", "20", "--output", mlaOut.toString(), "--heads", "4",
                "--head-dim", "16", "--chart", png.toString());
        assertEquals(0, r.code, r.err);
        assertTrue(r.out.contains("effective rank at 99.9% of the energy: 20 of 64"), r.out);
        assertTrue(r.out.contains("Gram matrix") && r.out.contains("done in"), r.out);
        String err = r.out.lines().filter(l -> l.startsWith("attention-output error")).findFirst().orElseThrow();
        assertTrue(Double.parseDouble(err.replaceAll(".*: ([0-9.eE+-]+) relative.*", "$1")) < 1e-2, err);
        try (SafeTensorsFile f = SafeTensorsFile.open(mlaOut)) {
            assertArrayEquals(new long[] {20, 96}, f.info("model.layers.0.self_attn.kv_a_proj.weight").shape());
        }
        assertTrue(Files.size(png) > 1000);
        // --output replaces only what mla rank wrote: its own files again, never another file
        assertEquals(0, mla("rank", "--generate", "--output", layer.toString(), "--hidden", "96", "--kv-heads", "2", "--head-dim", "16",
                "--planted-rank", "20").code);
        assertEquals(0, mla("rank", "--generate", "--output", mlaOut.toString(), "--hidden", "96", "--kv-heads", "2", "--head-dim", "16",
                "--planted-rank", "20").code);
        Path notes = dir.resolve("notes.txt");
        Files.writeString(notes, "my notes\n");
        Run over = mla("rank", "--generate", "--output", notes.toString());
        assertEquals(2, over.code, over.err);
        assertTrue(over.err.contains("--output " + notes + " exists and is not a file mla rank wrote"), over.err);
        assertEquals("my notes\n", Files.readString(notes));
        assertEquals(2, mla("rank", "--weights", dir.resolve("nope.safetensors").toString()).code);
        assertEquals(2, mla("rank").code);
    }

    @Test
    void tornadoWithoutAnSdkIsOneClearLine() {
        org.junit.jupiter.api.Assumptions.assumeTrue(System.getenv("TORNADOVM_HOME") == null, "TornadoVM is installed here");
        Run r = mla("demo", "--backend", "tornado", "--hidden", "64");
        assertEquals(2, r.code);
        assertEquals("mla: error: no TornadoVM installed: TORNADOVM_HOME is not set (see tornado-config/README.md); "
                + "the java backends need none", r.err.strip());
        assertFalse(r.out.contains("TornadoMLA demo"), "nothing is printed before the error");
        Run d = mla("devices");
        assertEquals(0, d.code);
        assertTrue(d.out.contains("java-reference") && d.out.contains("tornado none: no TornadoVM installed"), d.out);
    }

    /**
     * {@code ladder --docs} where TornadoVM cannot run refuses before it measures: the pages hold a column per backend,
     * and a run without TornadoVM used to replace the published TornadoVM figures with dashes.
     */
    @Test
    void ladderDocsWithoutTornadoRefusesAndWritesNothing() throws IOException {
        org.junit.jupiter.api.Assumptions.assumeTrue(System.getenv("TORNADOVM_HOME") == null, "TornadoVM is installed here");
        Path csv = Path.of("docs/ladder/measured.csv");
        byte[] before = Files.readAllBytes(csv);
        Run r = mla("ladder", "--docs", "--budget-ms", "1");
        assertEquals(2, r.code, r.out + r.err);
        assertTrue(r.err.contains("--docs rewrites the figures of every backend (java-reference, java-fast, tornado) and tornado cannot run here "
                + "(no TornadoVM installed"), r.err);
        assertTrue(r.err.contains("nothing was written"), r.err);
        assertArrayEquals(before, Files.readAllBytes(csv));
    }

    /** --csv replaces a CSV an earlier bench wrote, and refuses any other file before it measures anything. */
    @Test
    void benchCsvReplacesOnlyItsOwnFiles() throws IOException {
        Path note = dir.resolve("precious.txt");
        Files.writeString(note, "not a table\n");
        Run r = mla("bench", "--quick", "--backend", "java-reference", "--heads", "16", "--batch", "1", "--context", "64", "--dtype", "f32",
                "--path", "absorbed", "--budget-ms", "1", "--csv", note.toString());
        assertEquals(2, r.code, r.out + r.err);
        assertTrue(r.err.contains("--csv " + note + " exists and is not a CSV of mla bench, so it is not replaced"), r.err);
        assertFalse(r.out.contains("java-reference "), "refused before it measured: " + r.out);
        assertEquals("not a table\n", Files.readString(note));
        Path old = dir.resolve("old.csv");
        Files.writeString(old, BenchCommand.CSV_HEADER + "\njava-reference,absorbed,f32,1,16,64,1.0,1,1\n");
        Run again = mla("bench", "--quick", "--backend", "java-reference", "--heads", "16", "--batch", "1", "--context", "64", "--dtype", "f32",
                "--path", "absorbed", "--budget-ms", "1", "--csv", old.toString());
        assertEquals(0, again.code, again.out + again.err);
        List<String> lines = Files.readAllLines(old);
        assertEquals(2, lines.size(), String.join("\n", lines));
        assertTrue(lines.get(1).startsWith("java-reference,absorbed,f32,1,16,64,") && !lines.get(1).equals("java-reference,absorbed,f32,1,16,64,1.0,1,1"), lines.get(1));
    }
}
