package org.tornadomla;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.classfile.ClassFile;
import java.lang.classfile.constantpool.ClassEntry;
import java.lang.classfile.constantpool.PoolEntry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The packages follow the dataflow without cycles (docs/design.md §4): read from the compiled classes, each
 * package's uses of the others, then a depth-first search for a cycle. The kernels depend on nothing of the
 * project (TornadoVM compiles them on their own).
 */
class PackageDependenciesTest {
    static final String ROOT = "org/tornadomla/";

    static Map<String, Set<String>> dependencies() throws IOException {
        Path classes = Path.of("target/classes", ROOT);
        Map<String, Set<String>> deps = new TreeMap<>();
        List<Path> files;
        try (Stream<Path> s = Files.walk(classes)) {
            files = s.filter(p -> p.toString().endsWith(".class")).toList();
        }
        for (Path f : files) {
            String from = pkg(classes.getParent().getParent().relativize(f).toString().replace('\\', '/'));
            Set<String> to = deps.computeIfAbsent(from, k -> new TreeSet<>());
            for (PoolEntry e : ClassFile.of().parse(f).constantPool()) {
                if (e instanceof ClassEntry c) {
                    String name = c.asInternalName();
                    while (name.startsWith("[")) name = name.substring(1);
                    if (name.startsWith("L")) name = name.substring(1);
                    if (name.startsWith(ROOT)) {
                        String p = pkg(name);
                        if (!p.equals(from)) to.add(p);
                    }
                }
            }
        }
        return deps;
    }

    /** The package of a class; an {@code internal} subpackage counts as part of its parent (its hidden half). */
    private static String pkg(String internalName) {
        String p = internalName.substring(0, internalName.lastIndexOf('/'));
        if (p.endsWith("/internal")) p = p.substring(0, p.length() - "/internal".length());
        return p.replace('/', '.');
    }

    @Test
    void noPackageCycle() throws IOException {
        Map<String, Set<String>> deps = dependencies();
        assertTrue(deps.size() >= 10, "packages found: " + deps.keySet());
        for (String start : deps.keySet()) {
            List<String> cycle = cycleFrom(start, start, deps, new ArrayList<>(List.of(start)), new TreeSet<>());
            assertEquals(List.of(), cycle, "package cycle");
        }
        assertEquals(Set.of(), deps.get("org.tornadomla.kernels"), "the kernels use no other package of the project");
        assertTrue(deps.get("org.tornadomla.cache").contains("org.tornadomla.weights"), "cache files are safetensors");
        // the latent store sits on top of the cache: only the command line and the benchmarks use it
        for (var e : deps.entrySet()) {
            if (e.getValue().contains("org.tornadomla.store")) {
                assertTrue(Set.of("org.tornadomla.cli", "org.tornadomla.bench").contains(e.getKey()), e.getKey() + " uses the store");
            }
        }
        assertTrue(deps.get("org.tornadomla.store").contains("org.tornadomla.cache"), "the store moves cache rows");
    }

    private static List<String> cycleFrom(String start, String at, Map<String, Set<String>> deps, List<String> path, Set<String> seen) {
        for (String next : deps.getOrDefault(at, Set.of())) {
            if (next.equals(start)) {
                List<String> c = new ArrayList<>(path);
                c.add(start);
                return c;
            }
            if (seen.add(next)) {
                path.add(next);
                List<String> c = cycleFrom(start, next, deps, path, seen);
                if (!c.isEmpty()) return c;
                path.removeLast();
            }
        }
        return List.of();
    }
}
