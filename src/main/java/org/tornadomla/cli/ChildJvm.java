package org.tornadomla.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

/** What the commands that start a second JVM share ({@code pd-demo}'s decode process, {@code tune}'s probes). */
final class ChildJvm {
    private ChildJvm() {
    }

    /** The java launcher of this JVM. */
    static String java() {
        return ProcessHandle.current().info().command().orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    }

    /** Reads a child's stream into {@code into}, a line at a time, on a daemon thread (join it once the child ends). */
    static Thread drain(InputStream in, List<String> into) {
        return Thread.ofPlatform().daemon().start(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                for (String l; (l = r.readLine()) != null; ) into.add(l);
            } catch (IOException e) {
                // the process is gone; what it wrote is in the list
            }
        });
    }

    /**
     * The options of this JVM a child that runs the same kernels must share, so that both measure or decode alike:
     * its {@code -XX:} options (processors, vector width, AVX level) and its {@code tornadomla.} system properties
     * (java-fast's choices). A user's other options are left out: they may name this JVM's own files or ports.
     */
    static List<String> sharedOptions() {
        return sharedOptions(java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments(), System.getProperties());
    }

    /** {@link #sharedOptions()} of a JVM started with {@code inputArguments} and holding {@code properties}. */
    static List<String> sharedOptions(List<String> inputArguments, java.util.Properties properties) {
        List<String> out = new java.util.ArrayList<>();
        for (String a : inputArguments) if (a.startsWith("-XX:")) out.add(a);
        for (String k : new java.util.TreeSet<>(properties.stringPropertyNames())) {
            if (k.startsWith("tornadomla.")) out.add("-D" + k + "=" + properties.getProperty(k));
        }
        return out;
    }
}
