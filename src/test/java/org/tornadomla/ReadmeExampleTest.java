package org.tornadomla;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Compiles and runs the README's Java example as it stands, and checks what it prints. */
class ReadmeExampleTest {
    @TempDir
    Path dir;

    @Test
    void readmeExampleCompilesAndPrintsWhatTheReadmeSays() throws Exception {
        String readme = Files.readString(Path.of("README.md"));
        String program = DocPrograms.firstJavaBlock(readme, "README");
        Matcher said = Pattern.compile("It prints `([^`]*)`").matcher(readme);
        assertTrue(said.find(), "README says what the example prints");
        assertEquals(said.group(1), DocPrograms.compileAndRun(dir, program, "Example"));
    }

    /**
     * The README's consumer pom is one that compiles: well-formed, the library at this checkout's version,
     * maven-compiler-plugin 3.13 or later with release 25 (Maven 3.8's default plugin compiles for Java 5). It is the
     * very pom CI builds against the installed library: .ci/consumer-check takes it out of the README, as it takes
     * the Java example.
     */
    @Test
    void readmeConsumerPomNamesThisVersionAndACompilerForJava25() throws Exception {
        String readme = Files.readString(Path.of("README.md"));
        Matcher m = Pattern.compile("```xml\\n(<project .*?</project>\\n)```", Pattern.DOTALL).matcher(readme);
        assertTrue(m.find(), "README has a ```xml block with a whole <project>");
        org.w3c.dom.Element readmePom = xml(m.group(1));
        org.w3c.dom.Element project = xml(Files.readString(Path.of("pom.xml")));
        String version = child(project, "version");
        org.w3c.dom.Element dep = (org.w3c.dom.Element) readmePom.getElementsByTagName("dependency").item(0);
        assertEquals("org.tornadomla:tornado-mla:" + version, child(dep, "groupId") + ":" + child(dep, "artifactId") + ":" + child(dep, "version"));
        assertEquals("25", release(readmePom), "release");
        String plugin = compilerPlugin(readmePom);
        String[] v = plugin.split("\\.");
        assertTrue(Integer.parseInt(v[0]) > 3 || Integer.parseInt(v[0]) == 3 && Integer.parseInt(v[1]) >= 13, "maven-compiler-plugin " + plugin);
        String check = Files.readString(Path.of(".ci/consumer-check"));
        assertTrue(check.contains("awk '/^```xml$/{on=1; next} /^```$/{if (on) exit} on' README.md > \"$dir/cp/pom.xml\""),
                ".ci/consumer-check builds the README's pom");
        assertTrue(!check.contains("<project"), ".ci/consumer-check writes no pom of its own");
    }

    private static org.w3c.dom.Element xml(String text) throws Exception {
        var f = javax.xml.parsers.DocumentBuilderFactory.newInstance();
        f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        return f.newDocumentBuilder().parse(new java.io.ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8))).getDocumentElement();
    }

    /** The text of {@code e}'s direct child {@code name}, or null. */
    private static String child(org.w3c.dom.Element e, String name) {
        for (org.w3c.dom.Node n = e.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof org.w3c.dom.Element c && c.getTagName().equals(name)) return c.getTextContent().strip();
        }
        return null;
    }

    /** maven.compiler.release, or the compiler plugin's configuration/release. */
    private static String release(org.w3c.dom.Element pom) {
        var props = pom.getElementsByTagName("maven.compiler.release");
        if (props.getLength() > 0) return props.item(0).getTextContent().strip();
        var rel = pom.getElementsByTagName("release");
        return rel.getLength() > 0 ? rel.item(0).getTextContent().strip() : null;
    }

    private static String compilerPlugin(org.w3c.dom.Element pom) {
        var plugins = pom.getElementsByTagName("plugin");
        for (int i = 0; i < plugins.getLength(); i++) {
            org.w3c.dom.Element p = (org.w3c.dom.Element) plugins.item(i);
            if ("maven-compiler-plugin".equals(child(p, "artifactId"))) return child(p, "version");
        }
        throw new AssertionError("no maven-compiler-plugin");
    }
}
