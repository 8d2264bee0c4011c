package org.tornadomla.cli;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tornadomla.TestData;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.weights.DType;
import org.tornadomla.weights.MlaWeights;
import org.tornadomla.weights.SafeTensorsWriter;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every refusal of the command line is one line of printable text on stderr and exit code 2, with no stack
 * trace, no third-party text, no output file and every input file untouched.
 */
class CliRefusalsTest {
    @TempDir
    Path dir;
    final MlaConfig cfg = TestData.yarn();
    Path config, weights, input, out;

    @BeforeEach
    void files() throws IOException {
        config = dir.resolve("config.json");
        Files.writeString(config, cfg.toJson());
        weights = dir.resolve("model.safetensors");
        MlaWeights.random(cfg, 21).addTo(new SafeTensorsWriter(), 0, DType.BF16).write(weights);
        input = input("in.safetensors", "prefill_input", "decode_input_0");
        out = dir.resolve("out.safetensors");
    }

    /** An input file with these tensors: prefill_input [1, 3, D], anything else [1, 1, D]. */
    private Path input(String file, String... names) {
        int d = cfg.hiddenSize();
        SafeTensorsWriter w = new SafeTensorsWriter();
        for (String n : names) {
            int t = n.equals("prefill_input") ? 3 : 1;
            w.add(n, new long[] {1, t, d}, TestData.gaussian(n.hashCode(), t * d));
        }
        Path p = dir.resolve(file);
        w.write(p);
        return p;
    }

    private String[] runLayer(Path in, Path output, String... extra) {
        List<String> a = new ArrayList<>(List.of("run-layer", "--config", config.toString(), "--weights", weights.toString(),
                "--input", in.toString(), "--output", output.toString()));
        a.addAll(Arrays.asList(extra));
        return a.toArray(String[]::new);
    }

    /** Exit code 2, one printable line containing {@code expected}, nothing written, every file as it was. */
    private String refused(String expected, String... args) throws IOException {
        return refused(true, expected, args);
    }

    /** As {@link #refused(String, String...)}; {@code quiet}: refused before any output (a run that failed midway prints what it did). */
    private String refused(boolean quiet, String expected, String... args) throws IOException {
        List<Path> files;
        try (var s = Files.list(dir)) {
            files = s.sorted().toList();
        }
        List<byte[]> contents = new ArrayList<>();
        for (Path f : files) contents.add(Files.isRegularFile(f) ? Files.readAllBytes(f) : new byte[0]);
        CliTest.Run r = CliTest.mla(args);
        String err = r.err();
        assertEquals(2, r.code(), r.out() + err);
        assertEquals(1, err.lines().count(), err);
        if (quiet) assertEquals("", r.out(), "a refusal prints nothing on stdout before its one line (" + err.strip() + ")");
        assertTrue(err.startsWith("mla: error: "), err);
        assertTrue(err.contains(expected), err);
        assertFalse(err.strip().chars().anyMatch(c -> c < 0x20 || (c >= 0x7F && c < 0xA0)), err);
        assertFalse(err.contains("http") || err.contains("Exception") || err.contains("\tat "), err);
        try (var s = Files.list(dir)) {
            assertEquals(files, s.sorted().toList(), "no file appears or disappears");
        }
        for (int i = 0; i < files.size(); i++) {
            if (Files.isRegularFile(files.get(i))) assertArrayEquals(contents.get(i), Files.readAllBytes(files.get(i)), files.get(i) + " unchanged");
        }
        return err;
    }

    @Test
    void optionsAndTheInputAreCheckedBeforeTheWeightsLoad() throws IOException {
        // a V3 layer takes seconds to load: what does not depend on the weights is refused first (were the
        // weights read first, each of these would be refused for the broken weights file instead)
        weights = dir.resolve("broken.safetensors");
        Files.writeString(weights, "not a safetensors file");
        refused("--block-size 3 needs --paged", runLayer(input, out, "--block-size", "3"));
        refused("--block-size must be 1 … 1048576 tokens, found 0", runLayer(input, out, "--paged", "--block-size", "0"));
        refused("--dense is for a sparse config", runLayer(input, out, "--dense"));
        refused("unknown backend 'cuda'", runLayer(input, out, "--backend", "cuda"));
        Path start = input("start.safetensors", "prefill_input", "decode_input_1");
        refused("has decode_input_1 but no decode_input_0", runLayer(start, out));
        refused("broken.safetensors", runLayer(input, out));
    }

    @Test
    void decodeStepsRunFromZeroWithoutGapsAndNoTensorIsIgnored() throws IOException {
        Path gap = input("gap.safetensors", "prefill_input", "decode_input_0", "decode_input_2");
        refused("has decode_input_2 but no decode_input_1: decode steps must run from 0 without a gap", runLayer(gap, out));
        Path start = input("start.safetensors", "prefill_input", "decode_input_1");
        refused("has decode_input_1 but no decode_input_0", runLayer(start, out));
        Path extra = input("extra.safetensors", "prefill_input", "decode_input_0", "unrelated");
        refused("holds tensor 'unrelated', which run-layer does not use", runLayer(extra, out));
        Path padded = input("padded.safetensors", "prefill_input", "decode_input_00");
        refused("holds tensor 'decode_input_00'", runLayer(padded, out));
        assertEquals(0, CliTest.mla(runLayer(input, out)).code());
    }

    @Test
    void theOutputIsNeverAnInputNorANonRegularFile() throws IOException {
        Path sub = Files.createDirectory(dir.resolve("sub"));
        Path link = Files.createSymbolicLink(dir.resolve("link.safetensors"), input);
        for (Path o : List.of(input, sub.resolve("..").resolve("in.safetensors"), link, config, weights)) {
            refused("is the input file", runLayer(input, o));
        }
        refused("not a regular file but a directory", runLayer(input, sub));
        refused("not a regular file but a character device", runLayer(input, Path.of("/dev/null")));
        // sharded weights: no shard and not the index
        Path model = Files.createDirectory(dir.resolve("model"));
        Files.copy(weights, model.resolve("shard-1.safetensors"));
        StringBuilder map = new StringBuilder();
        for (MlaWeights.Tensor t : MlaWeights.tensors(cfg)) {
            map.append(map.isEmpty() ? "" : ",").append("\"").append(MlaWeights.prefix(0)).append(t.hfName()).append("\":\"shard-1.safetensors\"");
        }
        Files.writeString(model.resolve("model.safetensors.index.json"), "{\"weight_map\":{" + map + "}}");
        String[] args = runLayer(input, model.resolve("shard-1.safetensors"));
        args[4] = model.toString();
        refused("is the input file", args);
        args[args.length - 1] = model.resolve("model.safetensors.index.json").toString();
        refused("is the input file", args);
    }

    @Test
    void badOptionsAndSizesAreOneLine() throws IOException {
        refused("split count must be 0 (auto) or in 1 … 4096, found -1", runLayer(input, out, "--splits", "-1"));
        refused("split count must be 0 (auto) or in 1 … 4096, found 99999999", runLayer(input, out, "--splits", "99999999"));
        refused("tile size must be in 1 … 65536", runLayer(input, out, "--tile", "-5"));
        // a value that is not a number of the option's type: the project's words, not the parser's
        refused("--splits must be a whole number, found '1e9'", runLayer(input, out, "--splits", "1e9"));
        refused("--prefill must be a whole number, found 'abc'", "demo", "--prefill", "abc");
        refused("--seed must be a whole number", "demo", "--seed", "x");
        refused("--prefill needs a value", "demo", "--prefill");
        refused("--prefill needs a value", "demo", "--prefill", "--seed", "3");
        refused("unexpected argument '4'", "demo", "--prefill", "3", "4");
        refused("--context must be a whole number, found 'abc'", "bench", "--context", "4096,abc", "--backends", "java-reference");
        refused("missing --input", "run-layer", "--config", config.toString(), "--weights", weights.toString(), "--output", out.toString());
        refused("--prefill", "demo", "--prefill", "2000000000", "--hidden", "64");
        refused("more than one Java array holds", "demo", "--hidden", "2000000000");
        refused("--heads and --context must be >= 1", "cache-error", "--heads", "0");
        refused("--budget-ms must be in", "bench", "--budget-ms", "NaN", "--backends", "java-reference");
        refused("--time-limit-s must be in 0 … 1e7 seconds, found -1.0", "bench", "--time-limit-s", "-1", "--backends", "java-reference");
        refused("--offload, --mixed and --compare-paged each time their own steps", "bench", "--compare-paged", "--offload");
        refused("--heads goes with --to-mla", "rank", "--weights", weights.toString(), "--heads", "8");
        refused("--output goes with --to-mla or --generate", "rank", "--weights", weights.toString(), "--output", dir.resolve("x.safetensors").toString());
        refused("--ranks must be in", "rank", "--weights", weights.toString(), "--ranks", "0", "--layer", "0");
        Path shortCtx = dir.resolve("short.json");
        Files.writeString(shortCtx, cfg.toJson().replace("\"max_position_embeddings\": 1024", "\"max_position_embeddings\": 3"));
        String[] args = runLayer(input, out);
        args[2] = shortCtx.toString();
        refused("past max_position_embeddings 3", args);
    }

    @Test
    void badConfigsAreNamedInOneLine() throws IOException {
        String[] args = runLayer(input, out);
        args[2] = "/dev/zero";
        refused("not a regular file", args);
        Path typed = dir.resolve("typed.json");
        Files.writeString(typed, cfg.toJson().replace("\"type\": \"yarn\"", "\"type\": {}"));
        args[2] = typed.toString();
        refused("rope_scaling.type must be a string, found an object", args);
        Files.writeString(typed, cfg.toJson().replace("{", "{ // comment\n"));
        refused("not valid JSON", args);
        Files.writeString(typed, cfg.toJson().replace("\"factor\": 4.0", "\"factor\": 1e999"));
        refused("rope_scaling.factor must be a finite number > 0", args);
        Path gqa = dir.resolve("gqa.json");
        Files.writeString(gqa, "{\"hidden_size\": 4096, \"num_attention_heads\": 0, \"num_hidden_layers\": 32}");
        refused("num_attention_heads must be in 1 … 1000000", "kv-memory", "--config", gqa.toString());
        Files.writeString(gqa, "{\"hidden_size\": 4096, \"num_attention_heads\": 32, \"head_dim\": {}, \"num_hidden_layers\": 32}");
        refused("head_dim must be an integer, found an object", "kv-memory", "--config", gqa.toString());
    }

    @Test
    void namesFromFilesAreNeverEchoedRaw() throws IOException {
        Path evil = input("evil.safetensors", "prefill_input", "decode_input_0", "x\u001b[2J\nmla: ok\u0007");
        String err = refused("'x\\u001B[2J\\u000Amla: ok\\u0007'", runLayer(evil, out));
        assertFalse(err.contains("\u001b"), err);
    }

    /** tornado:B:D is TornadoVM's backend too: --profile and --plain-kernels were refused with it as if it ran on the JVM. */
    @Test
    void aTornadoBackendThatNamesItsDeviceIsTornadoVMs() throws IOException {
        assertTrue(KernelOptions.isTornado("tornado") && KernelOptions.isTornado("tornado:0:1"));
        assertFalse(KernelOptions.isTornado("java-fast") || KernelOptions.isTornado("tornadovm"));
        for (String command : new String[] {"demo", "check", "ladder"}) {
            refused("--backend tornado:0:0 and --device 0:1 both name a device: give one of them", command, "--backend", "tornado:0:0", "--device", "0:1");
        }
    }

    @Test
    void otherCommandsRefuseBadOutputsBeforeWorking() throws IOException {
        refused("not a regular file but a character device", "bench", "--csv", "/dev/null", "--backends", "java-reference");
        Path both = dir.resolve("both.png");
        refused("--csv and --chart name the same file", "bench", "--csv", both.toString(), "--chart", both.toString(), "--backends", "java-reference");
        refused("--csv applies to the attention-core shapes, not to --mixed", "bench", "--mixed", "--csv", dir.resolve("m.csv").toString());
        refused("not to --compare-paged", "bench", "--compare-paged", "--csv");
        // --offload printed its table and ignored these; --grid was ignored beside the modes with steps of their own
        refused("--csv applies to the attention-core shapes, not to --offload", "bench", "--offload", "--csv", dir.resolve("o.csv").toString());
        refused("--roofline applies to the attention-core shapes, not to --offload", "bench", "--offload", "--roofline");
        refused("--breakdown applies to the attention-core shapes, not to --mixed", "bench", "--mixed", "--breakdown");
        refused("--grid applies to the attention-core shapes, not to --compare-paged", "bench", "--compare-paged", "--grid", "flashmla");
        refused("--grid names attention-core shapes, which --layer-only leaves out", "bench", "--layer-only", "--layer-csv",
                dir.resolve("l.csv").toString(), "--grid", "flashmla");
        // a symbolic link to the other output is the same file however it is spelled
        Path target = dir.resolve("real.csv"), link = dir.resolve("link.csv");
        Files.writeString(target, "keep");
        Files.createSymbolicLink(link, target);
        refused("--csv and --chart name the same file", "bench", "--csv", link.toString(), "--chart", target.toString(), "--backends", "java-reference");
        assertEquals("keep", Files.readString(target));
        Files.delete(link);
        Files.delete(target);
        // refused before any timing: nothing on standard output (the table would start with its header)
        assertEquals("", CliTest.mla("bench", "--csv", config.resolve("x.csv").toString(), "--backends", "java-reference").out());
        refused("a file is in the way", "bench", "--csv", config.resolve("x.csv").toString(), "--backends", "java-reference");
        refused("not a regular file but a character device", "kv-memory", "--chart", "/dev/null");
        refused("is the input file", "kv-memory", "--config", config.toString(), "--chart", config.toString());
        // checked before the table: a script reading stdout gets nothing from a refused run
        refused("--host-gib must be > 0 and at most 1e9, found -1.0", "kv-memory", "--host-gib", "-1");
        refused("--devices must be >= 1, found 0", "kv-memory", "--devices", "0");
        refused("--block-size sizes the paged pool of --lengths", "kv-memory", "--block-size", "16");
        refused("--lengths measures a ragged batch alone, without --host-gib", "kv-memory", "--lengths", "100,200", "--host-gib", "8");
        refused("not a regular file but a character device", "rank", "--generate", "--output", "/dev/null");
    }

    @Test
    void storeCommandsWithoutAReachableServerAreOneLine() throws IOException {
        int port;
        try (java.net.ServerSocket free = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }
        String down = "redis://127.0.0.1:" + port + ": cannot reach the server: connection refused (is the server running and listening there?)";
        refused(down, "pd-demo", "--store", "redis://127.0.0.1:" + port);
        refused(down, "store-bench", "--store", "redis://127.0.0.1:" + port);
        refused("store address: expected redis://[USER:PASSWORD@]HOST:PORT, rediss://… for TLS, or a comma-separated list of them for a Redis Cluster's seeds, found 'tcp://127.0.0.1:6379'", "pd-demo", "--store", "tcp://127.0.0.1:6379");
        refused("store address: expected redis://[USER:PASSWORD@]HOST:PORT, rediss://… for TLS, or a comma-separated list of them for a Redis Cluster's seeds, found 'redis://localhost'", "store-bench", "--store", "redis://localhost");
        refused("port must be in 1 … 65535, found 70000", "pd-demo", "--store", "redis://127.0.0.1:70000");
        refused("--steps must be >= 1, found 0", "pd-demo", "--store", "redis://127.0.0.1:" + port, "--steps", "0");
        refused("--layers must be in 1 … 128, found 129", "pd-demo", "--store", "redis://127.0.0.1:" + port, "--layers", "129");
        refused("unknown cache dtype 'fp4'", "pd-demo", "--store", "redis://127.0.0.1:" + port, "--dtype", "fp4");
        refused("pd-demo runs java-reference or java-fast in both processes", "pd-demo", "--store", "redis://127.0.0.1:" + port, "--backend", "tornado");
        refused("block size must be in 1 … 65536 tokens, found 0", "store-bench", "--store", "redis://127.0.0.1:" + port, "--block-size", "0");
        refused("no store: give --store redis://HOST:PORT (or set MLA_STORE)", "pd-demo");
    }

    @Test
    void aBenchThatMeasuresNothingLeavesItsOutputsAlone() throws IOException {
        // an earlier run's CSV and chart, which a run that measures something would replace
        Files.writeString(dir.resolve("keep.csv"), BenchCommand.CSV_HEADER + "\njava-reference,absorbed,f32,1,16,512,9.5,1,1\n");
        Files.write(dir.resolve("keep.png"), new byte[] {(byte) 0x89, 'P', 'N', 'G', 13, 10, 26, 10, 'o', 'l', 'd'});
        refused(false, "every shape was skipped", "bench", "--backend", "java-reference", "--heads", "16", "--context", "512",
                "--batch", "100000000", "--csv", dir.resolve("keep.csv").toString(), "--chart", dir.resolve("keep.png").toString());
    }

    @Test
    void gpuReportOnAFolderWithoutTheKitsOutputsWritesNothing() throws IOException {
        Files.writeString(dir.resolve("summary.md"), "my notes\n");
        refused("found none of them", "gpu-report", dir.toString());
    }

    @Test
    void aNonFiniteInputIsNamedByItsTensorBeforeTheWeightsLoad() throws IOException {
        int d = cfg.hiddenSize();
        float[] bad = TestData.gaussian(5, 3 * d);
        bad[d + 7] = Float.NaN;                                          // prefill_input [0, 1, 7]
        SafeTensorsWriter w = new SafeTensorsWriter();
        w.add("prefill_input", new long[] {1, 3, d}, bad);
        Path nan = dir.resolve("nan.safetensors");
        w.write(nan);
        String err = refused("tensor 'prefill_input' holds NaN at [0, 1, 7]; expected finite numbers", runLayer(nan, out));
        assertTrue(err.contains(nan.toString()), err);
    }

    @Test
    void aFileOfAnotherKindIsRefusedForWhatItIs() throws IOException {
        // a Llama 3 config.json (Meta-Llama-3.1-8B's attention fields, rope_scaling of type llama3): no MLA model
        Path llama = dir.resolve("llama.json");
        Files.writeString(llama, """
                {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32,
                 "num_key_value_heads": 8, "num_hidden_layers": 32, "max_position_embeddings": 131072, "rope_theta": 500000.0,
                 "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                  "original_max_position_embeddings": 8192, "rope_type": "llama3"}}""");
        String[] args = runLayer(input, out);
        args[2] = llama.toString();
        String err = refused("not an MLA model (model_type 'llama')", args);
        assertFalse(err.contains("rope_scaling"), err);
        // a JSON file given as the weights
        args = runLayer(input, out);
        args[4] = config.toString();
        err = refused("this is JSON", args);
        assertTrue(err.contains("not a safetensors file") && !err.contains("header length"), err);
        assertTrue(err.contains("weights are a .safetensors file") && !err.contains("--input"), err);
        // ... and as the input: the refusal says what the input is, not what weights are
        err = refused("this is JSON", runLayer(config, out));
        assertTrue(err.contains("--input is a .safetensors file of prefill_input") && !err.contains("weights are"), err);
        // a text file that is no JSON either: what it begins with
        Path text = dir.resolve("notes.txt");
        Files.writeString(text, "layer 0 weights, see the model card\n");
        args[4] = text.toString();
        refused("not a safetensors file: header length", args);
        refused("it begins with the text 'layer 0 weights, see", args);
    }

    @Test
    void aLayerTheWeightsDoNotHoldNamesTheLayersTheyHold() throws IOException {
        String err = refused("holds no tensor of it (model.layers.5.*); it holds layer 0", runLayer(input, out, "--layer", "5"));
        assertTrue(err.contains("layer 5: " + weights), err);
        refused("it holds layer 0", "rank", "--weights", weights.toString(), "--layer", "3");
    }

    @Test
    void mistypedCommandsAndUnknownOptionsAreNamedInOneLine() throws IOException {
        String err = refused("unknown command 'bnech' (commands: demo, run-layer, ", "bnech", "--quick");
        assertTrue(err.contains("(did you mean bench?)"), err);
        assertFalse(err.contains("Unmatched") || err.contains("pd-decode"), err);   // picocli's words; a command --help hides
        assertFalse(refused("unknown command 'pd-decod'", "pd-decod").contains("pd-decode"));
        err = refused("unknown option '--cfg'", "demo", "--cfg", "x");
        assertFalse(err.contains("'x'") || err.contains("Unknown options"), err);
        refused("unknown option '--cfg'", runLayer(input, out, "--cfg", "x"));
        assertTrue(refused("unknown option '--confg'", runLayer(input, out, "--confg", "x")).contains("(did you mean --config?)"));
        refused("unknown option '--hiden'", "demo", "--hiden=64");
    }

    @Test
    void aLadderStepThatOnlyRunsOnTornadoVmSaysSoWithoutIt() throws IOException {
        refused("runs only on TornadoVM: add --backend tornado", "ladder", "--step", "7");
    }
    /** --splits 0 is taken as "automatic" by every command that has the option: each says so in its help. */
    @Test
    void splitsZeroIsDocumentedWhereverItIsAccepted() {
        picocli.CommandLine root = MlaCommand.commandLine(new java.io.PrintWriter(java.io.Writer.nullWriter()), new java.io.PrintWriter(java.io.Writer.nullWriter()));
        int seen = 0;
        for (picocli.CommandLine sub : root.getSubcommands().values()) {
            picocli.CommandLine.Model.OptionSpec o = sub.getCommandSpec().findOption("--splits");
            if (o == null) continue;
            seen++;
            assertTrue(String.join(" ", o.description()).contains("0 = auto"), sub.getCommandName() + ": " + String.join(" ", o.description()));
        }
        assertTrue(seen >= 2, "commands with --splits: " + seen);
    }
}
