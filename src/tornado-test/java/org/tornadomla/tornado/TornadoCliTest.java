package org.tornadomla.tornado;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tornadomla.TestData;
import org.tornadomla.cli.MlaCommand;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.weights.DType;
import org.tornadomla.weights.MlaWeights;
import org.tornadomla.weights.SafeTensorsFile;
import org.tornadomla.weights.SafeTensorsWriter;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The CLI on TornadoVM: devices, run-layer on device 0:0 against the java backend, device errors. */
class TornadoCliTest {
    @TempDir
    Path dir;

    private static String[] run(int expectedCode, String... args) {
        StringWriter o = new StringWriter(), e = new StringWriter();
        int code = MlaCommand.commandLine(new PrintWriter(o, true), new PrintWriter(e, true)).execute(args);
        assertEquals(expectedCode, code, o + "\n" + e);
        return new String[] {o.toString(), e.toString()};
    }

    @Test
    void devicesListsTheDefaultDevice() {
        String out = run(0, "devices")[0];
        assertTrue(out.lines().anyMatch(l -> l.startsWith("0:0  ") && l.endsWith("(default)")), out);
    }

    @Test
    void runLayerOnTornadoMatchesTheJavaBackend() throws IOException {
        MlaConfig cfg = TestData.yarn();
        Path config = dir.resolve("config.json"), weights = dir.resolve("w.safetensors"), in = dir.resolve("in.safetensors");
        Files.writeString(config, cfg.toJson());
        MlaWeights.random(cfg, 3).addTo(new SafeTensorsWriter(), 0, DType.F32).write(weights);
        int d = cfg.hiddenSize();
        new SafeTensorsWriter().add("prefill_input", new long[] {2, 4, d}, TestData.gaussian(1, 8 * d))
                .add("decode_input_0", new long[] {2, 1, d}, TestData.gaussian(2, 2 * d))
                .add("decode_input_1", new long[] {2, 1, d}, TestData.gaussian(3, 2 * d)).write(in);
        for (String path : new String[] {"naive", "absorbed", "tiled"}) {
            for (String dtype : new String[] {"f32", "bf16"}) {
                Path outJava = dir.resolve("java.safetensors"), outDev = dir.resolve("dev.safetensors");
                String[] common = {"run-layer", "--config", config.toString(), "--weights", weights.toString(), "--input", in.toString(),
                        "--path", path, "--cache-dtype", dtype, "--tile", "2", "--splits", "2"};
                run(0, concat(common, "--output", outJava.toString()));
                String out = run(0, concat(common, "--output", outDev.toString(), "--backend", "tornado", "--device", "0:0"))[0];
                assertTrue(out.contains("on tornado 0:0 "), out);
                try (SafeTensorsFile a = SafeTensorsFile.open(outJava); SafeTensorsFile b = SafeTensorsFile.open(outDev)) {
                    assertEquals(a.names(), b.names());
                    for (String t : a.names()) TestData.assertClose(a.readFloats(t), b.readFloats(t), 1e-4, path + "/" + dtype + " " + t);
                }
            }
        }
    }

    @Test
    void unknownDeviceAndProfileWithoutTornadoAreOneLineErrors() {
        String err = run(2, "demo", "--backend", "tornado", "--device", "5:0", "--hidden", "64")[1];
        assertTrue(err.startsWith("mla: error: unknown TornadoVM device 5:0 (available: 0:0"), err);
        assertEquals(1, err.strip().lines().count());
        assertTrue(run(2, "demo", "--profile")[1].contains("--profile needs --backend tornado"));
        assertTrue(run(2, "demo", "--device", "0:0")[1].contains("--device 0:0 needs --backend tornado"));
        assertFalse(run(2, "demo", "--backend", "cuda")[1].isEmpty());
    }

    private static String[] concat(String[] a, String... b) {
        String[] r = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, r, a.length, b.length);
        return r;
    }
}
