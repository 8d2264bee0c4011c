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
                    echo "env TORNADOVM_HOME=${TORNADOVM_HOME-unset}"
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

    /** Runs the script in a checkout with no jar yet (so it would build), TORNADOVM_HOME as given; its exit code and output. */
    private Object[] unbuilt(String tornadovmHome, String... args) throws IOException, InterruptedException {
        Path root = Files.createDirectories(dir.resolve("unbuilt"));
        Files.copy(Path.of("mla"), root.resolve("mla"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        javaArgs("--version");                                             // the stand-in JDK
        List<String> cmd = new ArrayList<>(List.of("bash", root.resolve("mla").toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("TORNADOVM_HOME", tornadovmHome);
        pb.environment().put("JAVA_HOME", dir.resolve("jdk").toString());
        pb.environment().put("PATH", "/usr/bin:/bin");                     // a build would need mvn: none must start
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        return new Object[] {p.exitValue(), out};
    }

    /** A TORNADOVM_HOME that is no SDK stops a build for any command with one line, not Maven's dependency error. */
    @Test
    void aTornadovmHomeThatIsNoSdkStopsTheBuildWithOneLine() throws IOException, InterruptedException {
        Path notSdk = Files.createDirectories(dir.resolve("sdk-parent"));
        Object[] r = unbuilt(notSdk.toString(), "kv-memory");
        assertEquals(2, r[0], (String) r[1]);
        assertTrue(((String) r[1]).strip().equals("mla: error: TORNADOVM_HOME=" + notSdk + " has no tornado-argfile: is it a TornadoVM SDK? "
                + "(see tornado-config/README.md; unset it to build without TornadoVM)"), (String) r[1]);
    }

    /** An empty TORNADOVM_HOME is no TornadoVM: no argfile, and the command gets no empty variable either. */
    @Test
    void anEmptyTornadovmHomeIsUnset() throws IOException, InterruptedException {
        javaArgs("--version");
        Path root = dir.resolve("checkout");
        ProcessBuilder pb = new ProcessBuilder("bash", root.resolve("mla").toString(), "demo", "--backend", "tornado").redirectErrorStream(true);
        pb.environment().put("TORNADOVM_HOME", "");
        pb.environment().put("JAVA_HOME", dir.resolve("jdk").toString());
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        assertTrue(!out.contains("tornado-argfile") && out.contains("-jar " + root.resolve("target/tornado-mla-cli.jar") + " demo --backend tornado"), out);
        assertTrue(out.contains("env TORNADOVM_HOME=unset"), out);       // the command says "not set", as for no variable at all
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
