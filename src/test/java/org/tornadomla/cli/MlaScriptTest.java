package org.tornadomla.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The JVM options {@code ./mla} starts a command with: the Vector API module (and with it the JVM's "Using incubator
 * modules" warning) only where java-fast can run. The script runs against a stand-in JDK whose {@code java} prints
 * its arguments, from a copy of the checkout holding only the script and a jar newer than the (absent) sources.
 */
class MlaScriptTest {
    @TempDir
    Path dir;

    private String javaArgs(String... args) throws IOException, InterruptedException {
        Path root = dir.resolve("checkout");
        if (!Files.exists(root)) {
            Files.createDirectories(root.resolve("target"));
            Files.copy(Path.of("mla"), root.resolve("mla"));
            Path jdk = Files.createDirectories(dir.resolve("jdk/bin"));
            Path java = jdk.resolve("java");
            Files.writeString(java, """
                    #!/usr/bin/env bash
                    case "$*" in *-XshowSettings:properties*) echo '    java.specification.version = 25' >&2; exit 0 ;; esac
                    echo "$*"
                    """);
            Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));
            Files.writeString(root.resolve("target/tornado-mla-cli.jar"), "");   // newer than every source: no build
        }
        List<String> cmd = new ArrayList<>(List.of("bash", root.resolve("mla").toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().remove("TORNADOVM_HOME");
        pb.environment().put("JAVA_HOME", dir.resolve("jdk").toString());
        pb.environment().remove("MLA_JAVA_OPTS");
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), out);
        return out.strip();
    }

    private void vector(boolean expected, String... args) throws IOException, InterruptedException {
        String line = javaArgs(args);
        assertEquals(expected, line.contains("--add-modules jdk.incubator.vector"), String.join(" ", args) + ": java " + line);
        assertTrue(line.endsWith("-jar " + dir.resolve("checkout/target/tornado-mla-cli.jar") + " " + String.join(" ", args)), line);
    }

    @Test
    void theVectorApiModuleIsAddedOnlyWhereJavaFastRuns() throws IOException, InterruptedException {
        // java-fast by default: run-layer, demo, check, bench
        vector(true, "run-layer", "--config", "c.json");
        vector(true, "demo");
        vector(true, "demo", "--backend", "java-fast");
        vector(true, "check");
        // java-reference asked for, or the command's own default: no module, so no warning
        vector(false, "run-layer", "--backend", "java-reference", "--config", "c.json");
        vector(false, "run-layer", "--backend=java");
        vector(false, "demo", "--backend", "java-reference");
        vector(false, "ladder");
        vector(true, "ladder", "--backend", "java-fast");
        vector(true, "ladder", "--docs");
        vector(false, "ladder", "--backend", "tornado");       // where TornadoVM is not installed: refused, no module needed
        vector(false, "run-layer", "--backend", "tornado:0:0");
        vector(false, "pd-demo");
        vector(true, "pd-demo", "--backend", "java-fast");
        // commands that run no layer, and help
        vector(false, "kv-memory");
        vector(false, "run-layer", "--help");
        vector(false, "--version");
    }
}
