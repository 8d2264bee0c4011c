package org.tornadomla.io;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tornadomla.MlaException;

import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Outputs never destroy anything: every refusal leaves the target (and its directory) as it was. */
class OutputFilesTest {
    @TempDir
    Path dir;

    private static OutputFiles.Content text(String s) {
        return out -> out.write(s.getBytes(StandardCharsets.UTF_8));
    }

    /** Refused with a message containing {@code expected}; the directory listing is unchanged (no temporary file left). */
    private void refused(Path target, List<Path> inputs, String expected) throws IOException {
        List<Path> before;
        try (var s = Files.list(dir)) {
            before = s.sorted().toList();
        }
        String m = assertThrows(MlaException.class, () -> OutputFiles.write(target, inputs, text("new"))).getMessage();
        assertTrue(m.contains(expected), m);
        assertTrue(m.contains(target.toString()), m);
        try (var s = Files.list(dir)) {
            assertEquals(before, s.sorted().toList());
        }
    }

    @Test
    void writesANewFileWithTheUsualPermissionsAndReplacesAtomically() throws IOException {
        Path out = dir.resolve("sub").resolve("out.txt");
        OutputFiles.write(out, text("one"));
        assertEquals("one", Files.readString(out));
        // the independent reference: what a plain FileOutputStream creates under this process's umask
        Path probe = dir.resolve("probe");
        new FileOutputStream(probe.toFile()).close();
        assertEquals(Files.getPosixFilePermissions(probe), Files.getPosixFilePermissions(out));
        // an existing file keeps its own mode
        Files.setPosixFilePermissions(out, PosixFilePermissions.fromString("rw-r-----"));
        OutputFiles.write(out, text("two"));
        assertEquals("two", Files.readString(out));
        assertEquals(PosixFilePermissions.fromString("rw-r-----"), Files.getPosixFilePermissions(out));
    }

    @Test
    void refusesDirectoriesDevicesAndFifos() throws Exception {
        Path d = Files.createDirectory(dir.resolve("a-dir"));
        refused(d, List.of(), "is not a regular file but a directory");
        assertTrue(Files.isDirectory(d));
        String m = assertThrows(MlaException.class, () -> OutputFiles.write(Path.of("/dev/null"), text("x"))).getMessage();
        assertTrue(m.contains("not a regular file but a character device"), m);
        assertTrue(Files.exists(Path.of("/dev/null")) && !Files.isRegularFile(Path.of("/dev/null")));
        Path fifo = dir.resolve("fifo");
        assertEquals(0, new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor());
        refused(fifo, List.of(), "a FIFO");
        Path link = dir.resolve("dangling");
        Files.createSymbolicLink(link, dir.resolve("nowhere"));
        refused(link, List.of(), "symbolic link to nowhere");
    }

    @Test
    void checkFindsAFileInTheWayOrAFolderThatTakesNoFilesBeforeAnyWork() throws IOException {
        Path file = Files.writeString(dir.resolve("notes.txt"), "keep");
        Path under = file.resolve("sub").resolve("out.csv");
        String m = assertThrows(MlaException.class, () -> OutputFiles.check(under, List.of())).getMessage();
        assertTrue(m.contains("a file is in the way: " + file), m);
        assertEquals("keep", Files.readString(file));
        // /proc takes no new files, even for root
        String p = assertThrows(MlaException.class, () -> OutputFiles.check(Path.of("/proc/out.csv"), List.of())).getMessage();
        assertTrue(p.contains("no file can be created in /proc"), p);
        // a path under folders still to be made passes, and check makes none of them (nor leaves its probe)
        List<Path> before;
        try (var s = Files.list(dir)) {
            before = s.sorted().toList();
        }
        OutputFiles.check(dir.resolve("new").resolve("deeper").resolve("out.csv"), List.of());
        try (var s = Files.list(dir)) {
            assertEquals(before, s.sorted().toList());
        }
    }

    @Test
    void refusesAnInputHoweverItIsSpelled() throws IOException {
        Path in = dir.resolve("in.safetensors");
        Files.writeString(in, "input data");
        Path sub = Files.createDirectory(dir.resolve("sub"));
        Path link = Files.createSymbolicLink(dir.resolve("link"), in);
        Path hard = Files.createLink(dir.resolve("hard"), in);
        Path relative = Path.of("").toAbsolutePath().relativize(sub.resolve("..").resolve("in.safetensors"));
        for (Path spelling : List.of(in, sub.resolve("../in.safetensors"), relative, link, hard)) {
            refused(spelling, List.of(dir.resolve("other.json"), in), "is the input file");
            // and the other way round: the input named through the link, the output plainly
            refused(in, List.of(spelling), "is the input file");
        }
        assertEquals("input data", Files.readString(in));
    }

    @Test
    void refusesAReadOnlyFileEvenForRoot() throws IOException {
        Path ro = dir.resolve("ro.txt");
        Files.writeString(ro, "keep");
        Files.setPosixFilePermissions(ro, Set.of(PosixFilePermission.OWNER_READ, PosixFilePermission.GROUP_READ));
        refused(ro, List.of(), "read-only");
        assertEquals("keep", Files.readString(ro));
    }

    @Test
    void aFailedWriteLeavesTheTargetAndNoTemporaryFile() throws IOException {
        Path out = dir.resolve("out.txt");
        Files.writeString(out, "old");
        List<Path> before;
        try (var s = Files.list(dir)) {
            before = s.toList();
        }
        MlaException e = assertThrows(MlaException.class, () -> OutputFiles.write(out, List.of(), o -> {
            o.write("half".getBytes(StandardCharsets.UTF_8));
            throw new IOException("disk full");
        }));
        assertTrue(e.getMessage().contains("disk full"), e.getMessage());
        assertEquals("old", Files.readString(out));
        try (var s = Files.list(dir)) {
            assertEquals(before, s.toList());
        }
    }

    @Test
    void writesThroughASymbolicLinkAndKeepsTheLink() throws IOException {
        Path real = dir.resolve("real.txt");
        Files.writeString(real, "old");
        Path link = Files.createSymbolicLink(dir.resolve("link.txt"), real);
        OutputFiles.write(link, text("new"));
        assertTrue(Files.isSymbolicLink(link));
        assertEquals("new", Files.readString(real));
    }

    /**
     * writeNew never replaces: not a file that is there before, and not one that appears while the content is being
     * written (the content itself creates it here, standing in for another process); no temporary file stays behind.
     */
    @Test
    void writeNewRefusesAFileThatExistsOrAppearsMeanwhile() throws IOException {
        Path fresh = dir.resolve("fresh.bin");
        OutputFiles.writeNew(fresh, text("mine"));
        assertEquals("mine", Files.readString(fresh));

        String m = assertThrows(MlaException.class, () -> OutputFiles.writeNew(fresh, text("again"))).getMessage();
        assertTrue(m.contains("exists") && m.contains(fresh.toString()), m);
        assertEquals("mine", Files.readString(fresh));

        Path racy = dir.resolve("racy.bin");
        m = assertThrows(MlaException.class, () -> OutputFiles.writeNew(racy, out -> {
            Files.writeString(racy, "theirs");                 // appears after the first check, before the publish
            out.write("ours".getBytes(StandardCharsets.UTF_8));
        })).getMessage();
        assertTrue(m.contains("appeared") && m.contains(racy.toString()), m);
        assertEquals("theirs", Files.readString(racy), "the other writer's file is left as it is");

        Path link = dir.resolve("link.bin");
        Files.createSymbolicLink(link, fresh);
        assertThrows(MlaException.class, () -> OutputFiles.writeNew(link, text("via link")));
        assertEquals("mine", Files.readString(fresh));
        try (var st = Files.list(dir)) {
            assertEquals(List.of("fresh.bin", "link.bin", "racy.bin"), st.map(q -> q.getFileName().toString()).sorted().toList(),
                    "no temporary file left");
        }
    }
}
