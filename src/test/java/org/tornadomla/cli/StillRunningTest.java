package org.tornadomla.cli;

import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The progress lines of long work: one per period while it runs, none for work that ends within the first period, none after close. */
class StillRunningTest {
    @Test
    void linesWhileItRunsAndNoneAfter() throws InterruptedException {
        StringWriter w = new StringWriter();
        PrintWriter out = new PrintWriter(w);
        try (StillRunning quick = new StillRunning(out, "timing nothing", 10)) {
            Thread.sleep(20);
        }
        assertEquals("", w.toString(), "work shorter than a period prints nothing");
        try (StillRunning slow = new StillRunning(out, "timing java-reference B8 H128 T16384 absorbed f32", 0.05)) {
            Thread.sleep(400);
        }
        String printed = w.toString();
        long lines = printed.lines().count();
        assertTrue(lines >= 2 && lines <= 9, printed);       // every 50 ms for 400 ms, with room for a slow machine
        assertTrue(printed.lines().allMatch(l -> l.matches("  … still timing java-reference B8 H128 T16384 absorbed f32: \\d+ s")), printed);
        Thread.sleep(200);
        assertEquals(lines, w.toString().lines().count(), "nothing after close");
    }
}
