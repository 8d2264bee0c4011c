package org.tornadomla.ladder;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The ladder's numbers are quoted from one measured run: every region of every quoting file equals what
 * docs/ladder/measured.csv regenerates (after {@code ./mla ladder --docs} nothing may be edited by hand).
 */
class LadderDocsTest {
    @Test
    void everyQuotedNumberComesFromMeasuredCsv() throws IOException {
        LadderDocs.Measured m = LadderDocs.parse(Files.readString(LadderDocs.MEASURED, StandardCharsets.UTF_8));
        assertTrue(m.results().size() >= 16, "measured.csv has " + m.results().size() + " results");
        int regions = 0;
        for (Path f : LadderDocs.FILES) {
            if (!Files.exists(f)) continue;                   // src/tornado exists in every checkout; kept general
            String text = Files.readString(f, StandardCharsets.UTF_8);
            regions += text.split("<!-- ladder:", -1).length - 1;
            assertEquals(LadderDocs.render(text, m), text, f + " quotes numbers that are not measured.csv's: run ./mla ladder --docs");
        }
        assertTrue(regions >= 20, "only " + regions + " quoted regions found");
    }

    @Test
    void renderingFillsEveryKindOfRegion() {
        LadderDocs.Measured m = new LadderDocs.Measured("a machine", List.of(
                new LadderRun.Result(3, "java-reference", 1.4e-6, 21.14, 4718592), new LadderRun.Result(3, "java-fast", 1.4e-6, 0.951, 4718592)));
        assertEquals("x <!-- ladder:3 -->21.1 / 0.951 / – ms<!-- /ladder --> y",
                LadderDocs.render("x <!-- ladder:3 -->old<!-- /ladder --> y", m));
        assertEquals("<!-- ladder:3:long -->reference 21.1 ms, java-fast 0.951 ms, TornadoVM –<!-- /ladder -->",
                LadderDocs.render("<!-- ladder:3:long --><!-- /ladder -->", m));
        assertEquals("<!-- ladder:machine -->a machine<!-- /ladder -->", LadderDocs.render("<!-- ladder:machine -->?<!-- /ladder -->", m));
        String table = LadderDocs.render("<!-- ladder:table --><!-- /ladder -->", m);
        assertTrue(table.contains("| 3 | 1.4e-06 | 21.1 | 0.951 | – | 4,718,592 |"), table);
        // the CSV round trip keeps every number
        assertEquals(m.results(), LadderDocs.parse(LadderDocs.csv(m)).results());
    }
}
