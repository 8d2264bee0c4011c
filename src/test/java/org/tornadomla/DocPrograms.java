package org.tornadomla;

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

/** The Java programs of the docs, compiled and run as a reader would copy them (ReadmeExampleTest, ApiExampleTest). */
public final class DocPrograms {
    private DocPrograms() {
    }

    /** The first ```java block of a doc. */
    public static String firstJavaBlock(String doc, String what) {
        Matcher m = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL).matcher(doc);
        assertTrue(m.find(), what + " has a ```java block");
        return m.group(1);
    }

    /**
     * Compiles {@code source} (a public class {@code className}) in {@code dir} against the library's classes, runs its
     * main with {@code args} and returns what it printed, stripped.
     */
    public static String compileAndRun(Path dir, String source, String className, String... args) throws Exception {
        Path src = dir.resolve("src").resolve(className + ".java"), out = dir.resolve("classes");
        Files.createDirectories(src.getParent());
        Files.writeString(src, source);
        Path classes = Path.of(MlaLayer.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        ByteArrayOutputStream diag = new ByteArrayOutputStream();
        int rc = javac.run(null, diag, diag, "-d", out.toString(), "-cp", classes.toString(), src.toString());
        assertEquals(0, rc, diag.toString(StandardCharsets.UTF_8));
        PrintStream old = System.out;
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        try (URLClassLoader cl = new URLClassLoader(new URL[] {out.toUri().toURL()}, DocPrograms.class.getClassLoader())) {
            Method main = cl.loadClass(className).getMethod("main", String[].class);
            System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
            main.invoke(null, (Object) args);
        } finally {
            System.setOut(old);
        }
        return printed.toString(StandardCharsets.UTF_8).strip();
    }
}
