package org.tornadomla;

import org.junit.jupiter.api.Test;
import org.tornadomla.attention.MlaLayer;

import java.io.InputStream;
import java.lang.module.ModuleDescriptor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The module org.tornadomla as compiled (src/main/java/module-info.java): it exports the API packages and nothing
 * else (no kernels, java-fast, TornadoVM backend, tools or {@code *.internal} package), and requires only Gson; every
 * other dependency is {@code requires static}. The tests themselves run on the class path; .ci/consumer-check runs
 * the README's example against the module.
 */
class ModuleDescriptorTest {
    static final Set<String> API = Set.of("org.tornadomla", "org.tornadomla.config", "org.tornadomla.weights",
            "org.tornadomla.attention", "org.tornadomla.cache", "org.tornadomla.backends", "org.tornadomla.graph",
            "org.tornadomla.store", "org.tornadomla.parallel");

    private static ModuleDescriptor descriptor() throws Exception {
        Path classes = Path.of(MlaLayer.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        try (InputStream in = Files.newInputStream(classes.resolve("module-info.class"))) {
            return ModuleDescriptor.read(in);
        }
    }

    @Test
    void exportsTheApiPackagesOnly() throws Exception {
        ModuleDescriptor d = descriptor();
        assertEquals("org.tornadomla", d.name());
        Set<String> exported = new TreeSet<>();
        for (ModuleDescriptor.Exports e : d.exports()) {
            assertTrue(!e.isQualified(), "exports " + e.source() + " to " + e.targets() + ": qualified exports are not API");
            exported.add(e.source());
        }
        assertEquals(new TreeSet<>(API), exported);
        // every exported package that holds arrays is under ApiImmutabilityTest's check (Backends returns executors)
        for (String p : exported) {
            assertTrue(p.equals("org.tornadomla.backends") || ApiImmutabilityTest.PACKAGES.contains(p), p + " is not in ApiImmutabilityTest.PACKAGES");
        }
        for (ModuleDescriptor.Opens o : d.opens()) {
            assertEquals(Set.of("info.picocli"), o.targets(), "opens " + o.source() + " (only the CLI, to picocli)");
        }
    }

    @Test
    void requiresGsonAloneAtRunTime() throws Exception {
        Set<String> mandatory = new TreeSet<>(), optional = new TreeSet<>();
        for (ModuleDescriptor.Requires r : descriptor().requires()) {
            if (r.modifiers().contains(ModuleDescriptor.Requires.Modifier.MANDATED)) continue;   // java.base
            (r.modifiers().contains(ModuleDescriptor.Requires.Modifier.STATIC) ? optional : mandatory).add(r.name());
        }
        assertEquals(Set.of("com.google.gson"), mandatory);
        // the Vector API is optional: a program on the module path that never uses java-fast does not resolve it
        // (and sees no incubator warning)
        assertTrue(optional.contains("jdk.incubator.vector"), optional.toString());
        assertTrue(!optional.contains("tornado.api") && !optional.contains("tornado.runtime"),
                "TornadoVM is read at run time (Backends), not required: " + optional);
    }
}
