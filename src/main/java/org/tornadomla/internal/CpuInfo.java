package org.tornadomla.internal;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/** The fields of the first processor in /proc/cpuinfo, read once: what java-fast's choices and the charts name the CPU by. */
public final class CpuInfo {
    private CpuInfo() {
    }

    private static final Map<String, String> FIELDS = read();

    /** A field ("vendor_id", "cpu family", "model", "model name"), or "" where there is none (not Linux). */
    public static String field(String name) {
        return FIELDS.getOrDefault(name, "");
    }

    private static Map<String, String> read() {
        Map<String, String> fields = new HashMap<>();
        try (BufferedReader r = Files.newBufferedReader(Path.of("/proc/cpuinfo"))) {
            for (String l; (l = r.readLine()) != null && !l.isBlank(); ) {    // a blank line ends the first processor
                int colon = l.indexOf(':');
                if (colon > 0) fields.putIfAbsent(l.substring(0, colon).strip(), l.substring(colon + 1).strip());
            }
        } catch (IOException | RuntimeException e) {
            // not Linux, or unreadable: no fields
        }
        return Map.copyOf(fields);
    }
}
