package org.tornadomla.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tornadomla.DocPrograms;

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
        String program = DocPrograms.firstJavaBlock(page, "docs/api.md");
        Matcher cls = Pattern.compile("public class (\\w+)").matcher(program);
        assertTrue(cls.find(), "the block is a whole class");
        Matcher said = Pattern.compile("it prints `([^`]*)`").matcher(page);
        assertTrue(said.find(), "docs/api.md says what the program prints");
        Path ex = dir.resolve("ex");
        CliTest.Run made = CliTest.mla("example", ex.toString());
        assertEquals(0, made.code(), made.err());
        assertEquals(said.group(1), DocPrograms.compileAndRun(dir, program, cls.group(1), ex.toString()));
    }
}
