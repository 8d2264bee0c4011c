package org.tornadomla.bench;

import org.jfree.chart.axis.LogAxis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tornadomla.MlaException;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The charts' axes and the checks of their files, against values worked out by hand. */
class ChartsTest {
    @TempDir
    Path dir;

    @Test
    void barAxesLeaveRoomForTheSmallestBar() {
        LogAxis a = new LogAxis();
        Charts.barDecades(a, 1.011, 55);            // 1.011 is 1.1 % above its decade: the axis starts a decade lower
        assertEquals(0.1, a.getLowerBound(), 1e-12);
        assertEquals(100, a.getUpperBound(), 1e-9);
        Charts.barDecades(a, 3.5, 55);              // 3.5 stands 3.5× above 1: its bar shows from 1
        assertEquals(1, a.getLowerBound(), 1e-12);
        Charts.decades(a, 1.011, 55);               // lines and points keep the tight decade
        assertEquals(1, a.getLowerBound(), 1e-12);
    }

    @Test
    void aChartIsAPngAndReplacesOnlyAPng() throws IOException {
        MlaException svg = assertThrows(MlaException.class, () -> Charts.checkPng("--chart", dir.resolve("out.svg")));
        assertEquals("--chart writes a PNG image: name a .png file, found 'out.svg'", svg.getMessage());
        Path note = dir.resolve("notes.png");
        Files.writeString(note, "my notes");
        MlaException mine = assertThrows(MlaException.class, () -> Charts.checkPng("--chart", note));
        assertTrue(mine.getMessage().contains("exists and is not a PNG image, so it is not replaced"), mine.getMessage());
        assertArrayEquals("my notes".getBytes(), Files.readAllBytes(note));
        Path png = dir.resolve("old.PNG");
        Files.write(png, new byte[] {(byte) 0x89, 'P', 'N', 'G', 13, 10, 26, 10, 0, 0});
        Charts.checkPng("--chart", png);            // a chart written before: may be replaced
        Charts.checkPng("--chart", dir.resolve("new.png"));
    }

    /** A JVM without fonts (a slim container) is refused in one line naming the option and what to install, not left to Java's Error. */
    @Test
    void aJvmWithoutFontsIsRefusedBeforeAnyChart() {
        MlaException e = assertThrows(MlaException.class, () -> Charts.requireFonts("--chart", () -> {
            throw new Error("Probable fatal error: No physical fonts found.");
        }));
        assertEquals("--chart: a chart has text, and this JVM found no font to draw it with (Probable fatal error: No physical fonts found.); "
                + "install fonts (on Debian or Ubuntu: fontconfig and fonts-dejavu-core), or leave --chart out", e.getMessage());
        e = assertThrows(MlaException.class, () -> Charts.requireFonts("the chart x.png", () -> {
            throw new RuntimeException("Fontconfig head is null, check your fonts or fonts configuration");
        }));
        assertTrue(e.getMessage().startsWith("the chart x.png has text") && !e.getMessage().contains("leave"), e.getMessage());
        Charts.requireFonts("--chart");     // this machine has fonts: no refusal
    }
}
