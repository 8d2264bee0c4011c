package org.tornadomla.cli;

import org.tornadomla.MlaException;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.internal.Gaussians;
import org.tornadomla.io.OutputFiles;
import org.tornadomla.weights.DType;
import org.tornadomla.weights.MlaWeights;
import org.tornadomla.weights.SafeTensorsWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;

/**
 * A small checkpoint and input to try {@code run-layer} on without downloading a model: DeepSeek-V2-Lite's
 * attention geometry with the hidden size reduced, seeded random weights under Hugging Face's names (BF16, as the
 * real checkpoint stores them), and an input file of one prompt and a few decode tokens.
 */
@Command(name = "example", mixinStandardHelpOptions = true,
        description = "Write DIR/config.json, DIR/model.safetensors (layer 0 of a small DeepSeek-V2-Lite-shaped model, seeded "
                + "random BF16 weights) and DIR/in.safetensors (prefill_input and decode inputs) to try run-layer on; "
                + "refuses a DIR that already holds any of them.")
public final class ExampleCommand implements Callable<Integer> {
    static final String CONFIG = "config.json", WEIGHTS = "model.safetensors", INPUT = "in.safetensors";

    @Parameters(index = "0", paramLabel = "DIR", description = "the folder to write into (made as needed)")
    Path dir;

    @Option(names = "--hidden", defaultValue = "512", description = "hidden size (default: ${DEFAULT-VALUE}; V2-Lite has 2048)")
    int hidden;

    @Option(names = "--prompt", defaultValue = "8", description = "prompt tokens (default: ${DEFAULT-VALUE})")
    int prompt;

    @Option(names = "--decode", defaultValue = "3", description = "decode tokens after the prompt (default: ${DEFAULT-VALUE})")
    int decode;

    @Option(names = "--seed", defaultValue = "1", description = "random seed (default: ${DEFAULT-VALUE})")
    long seed;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        if (hidden < 1 || hidden > 16384) throw new MlaException("--hidden must be in 1 … 16384, found " + hidden);
        if (prompt < 1 || prompt > 4096 || decode < 0 || decode > 256) {
            throw new MlaException("--prompt must be in 1 … 4096 and --decode in 0 … 256, found " + prompt + " and " + decode);
        }
        Path config = dir.resolve(CONFIG), weights = dir.resolve(WEIGHTS), input = dir.resolve(INPUT);
        for (Path p : List.of(config, weights, input)) {
            // this writes examples, never over someone's files
            if (Files.exists(p)) throw new MlaException("example: " + p + " exists; give a folder without " + CONFIG + ", " + WEIGHTS + " or " + INPUT);
            OutputFiles.check(p, List.of());
        }
        MlaConfig c = MlaConfig.preset("deepseek-v2-lite").withHiddenSize(hidden);
        MlaWeights w = MlaWeights.random(c, seed);
        SplittableRandom rnd = new SplittableRandom(seed + 1);
        SafeTensorsWriter in = new SafeTensorsWriter().add("prefill_input", new long[] {1, prompt, hidden},
                Gaussians.floats(rnd, prompt * hidden, 1));
        for (int k = 0; k < decode; k++) in.add("decode_input_" + k, new long[] {1, 1, hidden}, Gaussians.floats(rnd, hidden, 1));

        byte[] json = c.toJson().getBytes(StandardCharsets.UTF_8);
        try {
            w.addTo(new SafeTensorsWriter(), 0, DType.BF16).write(weights);
            in.write(input);
            OutputFiles.write(config, out -> out.write(json));
        } catch (RuntimeException e) {
            // all three or none: a rerun would refuse a folder holding some of them
            for (Path p : List.of(config, weights, input)) {
                try {
                    Files.deleteIfExists(p);
                } catch (java.io.IOException ignored) {
                    // the error below is the one to report
                }
            }
            throw e;
        }

        PrintWriter out = spec.commandLine().getOut();
        out.printf("wrote %s (DeepSeek-V2-Lite attention, hidden %d), %s (layer 0, BF16, %.1f MB) and %s (%d prompt tokens, %d decode)%n",
                config, hidden, weights, fileMb(weights), input, prompt, decode);
        out.printf("try: %s run-layer --config %s --weights %s --input %s --output %s%n", shellWord(launcher()), shellWord(config.toString()),
                shellWord(weights.toString()), shellWord(input.toString()), shellWord(dir.resolve("out.safetensors").toString()));
        return 0;
    }

    /** How the command line was started: the mla script as the user typed it (it passes -Dtornadomla.launcher), else "mla". */
    static String launcher() {
        String l = System.getProperty("tornadomla.launcher", "");
        return l.isBlank() ? "mla" : l;
    }

    /** s as one word of a POSIX shell: as it is where that is safe, else in single quotes. */
    static String shellWord(String s) {
        if (!s.isEmpty() && s.matches("[A-Za-z0-9_./:=@%+,-]+")) return s;
        return "'" + s.replace("'", "'\\''") + "'";
    }

    private static double fileMb(Path p) {
        try {
            return Files.size(p) / 1e6;
        } catch (java.io.IOException e) {
            return Double.NaN;
        }
    }
}
