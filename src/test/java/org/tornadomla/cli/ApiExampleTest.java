package org.tornadomla.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tornadomla.attention.MlaLayer;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/api.md's program ("How a program uses it") compiles as it stands and, run on a folder written by {@code mla
 * example}, prints what the page says it prints: a new user copies it first.
 */
class ApiExampleTest {
    @TempDir
    Path dir;

    @Test
    void apiPageProgramRunsOnAnExampleFolder() throws Exception {
        String page = Files.readString(Path.of("docs/api.md"));
        Matcher m = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL).matcher(page);
        assertTrue(m.find(), "docs/api.md has a ```java block");
        Matcher cls = Pattern.compile("public class (\\w+)").matcher(m.group(1));
        assertTrue(cls.find(), "the block is a whole class");
        Path src = dir.resolve("src").resolve(cls.group(1) + ".java");
        Files.createDirectories(src.getParent());
        Files.writeString(src, m.group(1));
        Matcher said = Pattern.compile("it prints `([^`]*)`").matcher(page);
        assertTrue(said.find(), "docs/api.md says what the program prints");

        Path ex = dir.resolve("ex");
        CliTest.Run made = CliTest.mla("example", ex.toString());
        assertEquals(0, made.code(), made.err());

        Path classes = Path.of(MlaLayer.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        ByteArrayOutputStream diag = new ByteArrayOutputStream();
        Path out = dir.resolve("classes");
        int rc = javac.run(null, diag, diag, "-d", out.toString(), "-cp", classes.toString(), src.toString());
        assertEquals(0, rc, diag.toString(StandardCharsets.UTF_8));

        PrintStream old = System.out;
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        try (URLClassLoader cl = new URLClassLoader(new URL[] {out.toUri().toURL()}, getClass().getClassLoader())) {
            Method main = cl.loadClass(cls.group(1)).getMethod("main", String[].class);
            System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
            main.invoke(null, (Object) new String[] {ex.toString()});
        } finally {
            System.setOut(old);
        }
        assertEquals(said.group(1), printed.toString(StandardCharsets.UTF_8).strip());
    }
}
