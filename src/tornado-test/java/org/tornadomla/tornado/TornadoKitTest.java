package org.tornadomla.tornado;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tornadomla.cli.MlaCommand;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What the GPU kit runs, on TornadoVM's default device: mla check with both kernel sets, and the copied bytes per step. */
class TornadoKitTest {
    @TempDir
    Path dir;

    private static String run(int expectedCode, String... args) {
        StringWriter o = new StringWriter(), e = new StringWriter();
        int code = MlaCommand.commandLine(new PrintWriter(o, true), new PrintWriter(e, true)).execute(args);
        assertEquals(expectedCode, code, o + "\n" + e);
        return o.toString();
    }

    @Test
    void checkRunsBothKernelSetsOnTheDevice() {
        String out = run(0, "check", "--backend", "tornado", "--hidden", "64", "--prefill", "2", "--steps", "1", "--batch", "2", "--path", "tiled");
        List<String> cases = out.lines().filter(l -> l.startsWith("PASS ") || l.startsWith("FAIL ")).toList();
        assertEquals(12, cases.size(), out);                         // tiled × 4 dtypes × plain, kernel-context and kernel-context+paged
        assertEquals(4, cases.stream().filter(l -> l.contains(" kernel-context ")).count(), out);
        assertEquals(4, cases.stream().filter(l -> l.contains(" kernel-context+paged ")).count(), out);
        assertTrue(cases.stream().allMatch(l -> l.startsWith("PASS tiled ")), out);
        assertTrue(out.startsWith("mla check: tornado 0:0 "), out);
        String plain = run(0, "check", "--backend", "tornado", "--plain-kernels", "--hidden", "64", "--prefill", "2", "--steps", "1",
                "--path", "absorbed", "--cache-dtype", "fp8");
        assertEquals(List.of("PASS absorbed fp8 plain", "PASS absorbed fp8 plain+paged"), plain.lines().filter(l -> l.startsWith("PASS ") || l.startsWith("FAIL "))
                .map(l -> l.substring(0, l.indexOf(" max_abs_err"))).toList(), plain);
    }

    /** A decode step copies x and attnMeta in and y out: the profiler's bytes are at least those. */
    @Test
    void layerBenchReportsTheBytesOfOneStep() throws IOException {
        Path csv = dir.resolve("layer.csv");
        run(0, "bench", "--layer-only", "--backend", "tornado", "--layer-hidden", "64", "--layer-batch", "2", "--layer-context", "8",
                "--layer-dtype", "bf16", "--budget-ms", "5", "--layer-csv", csv.toString());
        List<String> lines = Files.readAllLines(csv);
        assertEquals(2, lines.size(), String.join("\n", lines));
        String[] f = lines.get(1).split(",");
        assertTrue(f[0].startsWith("tornado:"), lines.get(1));
        long in = Long.parseLong(f[8]), out = Long.parseLong(f[9]);
        assertTrue(in >= 2 * 64 * 4 + 2 * 4 && in < 100_000, "bytes in: x [2, 64] f32 + attnMeta, not the weights: " + in);
        assertTrue(out >= 2 * 64 * 4 && out < 100_000, "bytes out: y [2, 64] f32, not the cache: " + out);
        assertTrue(Double.parseDouble(f[10]) > 0, "kernel ms: " + lines.get(1));
    }
}
