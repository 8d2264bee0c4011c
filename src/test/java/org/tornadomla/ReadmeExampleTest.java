package org.tornadomla;

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

/** Compiles and runs the README's Java example as it stands, and checks what it prints. */
class ReadmeExampleTest {
    @TempDir
    Path dir;

    @Test
    void readmeExampleCompilesAndPrintsWhatTheReadmeSays() throws Exception {
        String readme = Files.readString(Path.of("README.md"));
        Matcher m = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL).matcher(readme);
        assertTrue(m.find(), "README has a ```java block");
        Path src = dir.resolve("Example.java");
        Files.writeString(src, m.group(1));
        Matcher said = Pattern.compile("It prints `([^`]*)`").matcher(readme);
        assertTrue(said.find(), "README says what the example prints");

        Path classes = Path.of(MlaLayer.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        ByteArrayOutputStream diag = new ByteArrayOutputStream();
        int rc = javac.run(null, diag, diag, "-d", dir.toString(), "-cp", classes.toString(), src.toString());
        assertEquals(0, rc, diag.toString(StandardCharsets.UTF_8));

        PrintStream old = System.out;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (URLClassLoader cl = new URLClassLoader(new URL[] {dir.toUri().toURL()}, getClass().getClassLoader())) {
            Method main = cl.loadClass("Example").getMethod("main", String[].class);
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            main.invoke(null, (Object) new String[0]);
        } finally {
            System.setOut(old);
        }
        assertEquals(said.group(1), out.toString(StandardCharsets.UTF_8).strip());
    }
}
