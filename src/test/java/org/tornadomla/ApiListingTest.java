package org.tornadomla;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/api.md names every public top-level type of the exported packages, under its package's heading, and
 * nothing that is not one: the listing cannot drift from the code.
 */
class ApiListingTest {
    static final List<String> EXPORTED = List.of("org.tornadomla", "org.tornadomla.config", "org.tornadomla.weights",
            "org.tornadomla.attention", "org.tornadomla.cache", "org.tornadomla.backends", "org.tornadomla.graph", "org.tornadomla.store", "org.tornadomla.parallel");

    @Test
    void docsApiListsEveryPublicTypeOfTheExportedPackages() throws Exception {
        String doc = Files.readString(Path.of("docs/api.md"));
        for (String pkg : EXPORTED) {
            TreeSet<String> code = publicTypes(pkg), listed = listed(doc, pkg);
            assertEquals(code, listed, "docs/api.md, section '## " + pkg + "': the public types of the package (left) and those listed (right)");
        }
    }

    static TreeSet<String> publicTypes(String pkg) throws IOException, ClassNotFoundException {
        Path dir = Path.of("target/classes", pkg.replace('.', '/'));
        TreeSet<String> out = new TreeSet<>();
        List<Path> files;
        try (Stream<Path> s = Files.list(dir)) {
            files = s.filter(p -> p.toString().endsWith(".class") && !p.getFileName().toString().contains("$")).toList();
        }
        for (Path f : files) {
            String simple = f.getFileName().toString().replace(".class", "");
            if (simple.equals("package-info")) continue;
            Class<?> c = Class.forName(pkg + "." + simple, false, ApiListingTest.class.getClassLoader());
            if (Modifier.isPublic(c.getModifiers())) out.add(simple);
        }
        assertTrue(!out.isEmpty(), pkg + " has no public type");
        return out;
    }

    /** The backticked type names in the first column of the tables under "## PKG", up to the next "## ". */
    static TreeSet<String> listed(String doc, String pkg) {
        int at = doc.indexOf("\n## " + pkg + "\n");
        assertTrue(at >= 0, "docs/api.md has no section '## " + pkg + "'");
        int end = doc.indexOf("\n## ", at + 1);
        String section = doc.substring(at, end < 0 ? doc.length() : end);
        TreeSet<String> out = new TreeSet<>();
        List<String> rows = new ArrayList<>();
        for (String line : section.split("\n")) if (line.startsWith("| `")) rows.add(line.substring(1, line.indexOf('|', 1)));
        Matcher m = Pattern.compile("`([A-Z][A-Za-z0-9]*)`").matcher(String.join(" ", rows));
        while (m.find()) out.add(m.group(1));
        return out;
    }
}
