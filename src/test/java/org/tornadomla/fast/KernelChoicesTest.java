package org.tornadomla.fast;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tornadomla.MlaException;

import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The file of measured kernel choices ({@code mla tune}): what applies, what is refused and why, and the order of precedence. */
class KernelChoicesTest {
    @TempDir
    Path dir;

    static final String SIG = "AuthenticAMD | family 26 | model 2 | AMD EPYC | 512-bit vectors | 2 processors";

    static Properties props(String text) throws IOException {
        Properties p = new Properties();
        p.load(new StringReader(text));
        return p;
    }

    @Test
    void aFileOfThisMachineGivesItsChoicesInTheTunedOrder() throws IOException {
        Path f = dir.resolve("c.properties");
        Files.writeString(f, "signature=" + SIG + "\nmeasured=2026-12-05T21:00:00Z, 3 rounds\n"
                + "tornadomla.fast.touchScores=false\ntornadomla.fast.touch = true\n");
        KernelChoices.Loaded l = KernelChoices.load(f, SIG);
        assertNull(l.ignored());
        assertEquals(List.of("tornadomla.fast.touch", "tornadomla.fast.touchScores"), List.copyOf(l.choices().keySet()));
        assertEquals(true, l.choices().get("tornadomla.fast.touch"));
        assertEquals(false, l.choices().get("tornadomla.fast.touchScores"));
        assertEquals("2026-12-05T21:00:00Z, 3 rounds", l.measured());
    }

    @Test
    void aFileOfAnotherMachineOrAMissingOneGivesNothing() throws IOException {
        Path f = dir.resolve("c.properties");
        Files.writeString(f, "signature=GenuineIntel | family 6 | model 143 | Xeon | 512-bit vectors | 2 processors\ntornadomla.fast.touch=false\n");
        KernelChoices.Loaded l = KernelChoices.load(f, SIG);
        assertTrue(l.choices().isEmpty());
        assertTrue(l.ignored().contains("another machine") && l.ignored().contains("expected \"" + SIG + "\"")
                && l.ignored().contains("found \"GenuineIntel"), l.ignored());
        // no file, or -Dtornadomla.fast.choices=none: nothing, and nothing to report
        KernelChoices.Loaded none = KernelChoices.load(dir.resolve("absent"), SIG);
        assertTrue(none.choices().isEmpty());
        assertNull(none.ignored());
        assertNull(KernelChoices.load(null, SIG).ignored());
    }

    @Test
    void aCorruptFileIsRefusedAsAWholeWithWhatWasExpectedAndFound() throws IOException {
        MlaException e = assertThrows(MlaException.class, () -> KernelChoices.parse(props("tornadomla.fast.touch=true\n"), "f"));
        assertTrue(e.getMessage().contains("no signature line"), e.getMessage());
        e = assertThrows(MlaException.class, () -> KernelChoices.parse(props("signature=" + SIG + "\ntornadomla.fast.touch=yes\n"), "f"));
        assertTrue(e.getMessage().contains("tornadomla.fast.touch must be true or false, found \"yes\""), e.getMessage());
        e = assertThrows(MlaException.class, () -> KernelChoices.parse(props("signature=" + SIG + "\ntornadomla.fast.tuoch=true\n"), "f"));
        assertTrue(e.getMessage().contains("unknown line \"tornadomla.fast.tuoch\"") && e.getMessage().contains("tornadomla.fast.touch"), e.getMessage());
        // load turns the refusal into a reason, with no choice from the file: a valid line does not survive a bad one
        Path f = dir.resolve("c.properties");
        Files.writeString(f, "signature=" + SIG + "\ntornadomla.fast.touch=false\ntornadomla.fast.valuesRuns=2\n");
        KernelChoices.Loaded l = KernelChoices.load(f, SIG);
        assertTrue(l.choices().isEmpty());
        assertTrue(l.ignored().contains("valuesRuns must be true or false, found \"2\""), l.ignored());
        // a folder where the file should be cannot be read
        Path folder = Files.createDirectory(dir.resolve("folder"));
        assertTrue(KernelChoices.load(folder, SIG).ignored().contains("could not be read"));
    }

    @Test
    void aWrittenFileReadsBackAsWrittenAndLeavesNoTemporaryFile() throws IOException {
        String odd = " Vendor\\Name | family 1 | model 2 | a=b: c | 256-bit vectors | 3 processors";
        Map<String, Boolean> c = new LinkedHashMap<>();
        c.put("tornadomla.fast.touch", false);
        c.put("tornadomla.fast.absorbStrips", true);
        Path f = dir.resolve("sub/folder/c.properties");
        KernelChoices.write(f, new KernelChoices.Saved(odd, "now", c));
        KernelChoices.Saved back = KernelChoices.read(f);
        assertEquals(odd, back.signature());
        assertEquals("now", back.measured());
        assertEquals(c, back.choices());
        // written again: replaced whole, and only the file is in its folder
        c.put("tornadomla.fast.touch", true);
        KernelChoices.write(f, new KernelChoices.Saved(odd, "later", c));
        assertEquals(true, KernelChoices.read(f).choices().get("tornadomla.fast.touch"));
        try (var files = Files.list(f.getParent())) {
            assertEquals(List.of(f.getFileName().toString()), files.map(p -> p.getFileName().toString()).toList());
        }
    }

    @Test
    void aSystemPropertyBeatsTheMeasuredChoiceWhichBeatsTheMachinesDefault() {
        String p = "tornadomla.test.kernelChoice";
        Map<String, Boolean> file = Map.of(p, false);
        try {
            assertEquals("machine", KernelChoices.decide("tornadomla.test.other", file, Map.of()), "not in the file: the rule");
            assertEquals("measured", KernelChoices.decide(p, file, Map.of()), "in the file: measured beats the rule");
            System.setProperty(p, "true");
            assertEquals("-D", KernelChoices.decide(p, file, Map.of()), "-D beats the measured value");
            assertTrue(KernelChoices.choice(p, false), "and gives its value");
            assertEquals("-D", KernelChoices.origin(p));
            System.setProperty(p, "false");
            assertFalse(KernelChoices.choice(p, true));
            System.setProperty(p, "maybe");
            assertEquals("measured", KernelChoices.decide(p, file, Map.of()), "a -D that is not true or false is ignored");
            assertTrue(KernelChoices.choice(p, true), "and, with no file in the tests' JVM, the rule decides");
        } finally {
            System.clearProperty(p);
        }
    }

    @Test
    void aMeasuredChoiceGivesWayWhereAChoiceItFollowsCameOutOtherwise() {
        // the file's valuesRuns and touchScores were measured with its touch and halfScores
        Map<String, Boolean> file = Map.of("tornadomla.fast.touch", true, "tornadomla.fast.valuesRuns", true,
                "tornadomla.fast.halfScores", false, "tornadomla.fast.touchScores", true);
        assertEquals("measured", KernelChoices.decide("tornadomla.fast.valuesRuns", file, Map.of("tornadomla.fast.touch", true)));
        assertEquals("machine", KernelChoices.decide("tornadomla.fast.valuesRuns", file, Map.of("tornadomla.fast.touch", false)),
                "-Dtornadomla.fast.touch=false: the runs follow the rule again, as without a file");
        Map<String, Boolean> asMeasured = Map.of("tornadomla.fast.touch", true, "tornadomla.fast.halfScores", false);
        assertEquals("measured", KernelChoices.decide("tornadomla.fast.touchScores", file, asMeasured));
        assertEquals("machine", KernelChoices.decide("tornadomla.fast.touchScores", file,
                Map.of("tornadomla.fast.touch", true, "tornadomla.fast.halfScores", true)), "halves forced on");
        assertEquals("machine", KernelChoices.decide("tornadomla.fast.touchScores", Map.of("tornadomla.fast.touchScores", true), asMeasured),
                "a file without the choices it follows cannot say they were as now");
        String regs = "tornadomla.fast.registers";
        org.junit.jupiter.api.Assumptions.assumeTrue(System.getProperty(regs) == null);
        try {
            System.setProperty(regs, "16");
            assertEquals("machine", KernelChoices.decide("tornadomla.fast.touchScores", file, asMeasured), "register blocks forced");
            assertEquals("measured", KernelChoices.decide("tornadomla.fast.valuesRuns", file, asMeasured), "the runs do not follow them");
        } finally {
            System.clearProperty(regs);
        }
    }

    @Test
    void theDefaultsThatDependOnOtherChoicesFollowThem() {
        Map<String, Boolean> chosen = new LinkedHashMap<>();
        chosen.put("tornadomla.fast.touch", false);
        chosen.put("tornadomla.fast.halfScores", false);
        assertFalse(KernelChoices.auto("tornadomla.fast.valuesRuns", chosen, 512, true), "no touch: single tiles");
        assertFalse(KernelChoices.auto("tornadomla.fast.touchScores", chosen, 512, true));
        chosen.put("tornadomla.fast.touch", true);
        assertTrue(KernelChoices.auto("tornadomla.fast.valuesRuns", chosen, 512, true), "touch: runs of two tiles");
        // an AMD family 25 CPU (Zen 3, Zen 4) keeps the read-ahead and takes the column pairs, as measured on a Zen 4
        boolean family25 = "AuthenticAMD".equals(Vec.cpuVendor()) && "25".equals(Vec.cpuInfo("cpu family"));
        assertEquals(!family25, KernelChoices.auto("tornadomla.fast.touchScores", chosen, 512, true));
        assertFalse(KernelChoices.auto("tornadomla.fast.touchScores", chosen, 256, false), "16 registers read rows ahead");
        assertEquals(family25, KernelChoices.auto("tornadomla.fast.pairScores", chosen, 512, true));
        assertFalse(KernelChoices.auto("tornadomla.fast.pairScores", chosen, 256, false), "16 registers have no pair kernel");
        chosen.put("tornadomla.fast.halfScores", true);
        assertFalse(KernelChoices.auto("tornadomla.fast.touchScores", chosen, 512, true), "256-bit halves read rows ahead");
        assertFalse(KernelChoices.auto("tornadomla.fast.pairScores", chosen, 512, true), "256-bit halves take the single head vector");
        assertFalse(KernelChoices.auto("tornadomla.fast.halfScores", chosen, 256, false), "no 512-bit vectors to split");
        assertThrows(IllegalArgumentException.class, () -> KernelChoices.auto("tornadomla.fast.registers", chosen, 512, true));
    }

    @Test
    void theSignatureNamesTheCpuTheVectorWidthAndTheProcessors() {
        String s = KernelChoices.signature();
        assertTrue(s.startsWith(KernelChoices.cpuInfo("vendor_id") + " | family " + KernelChoices.cpuInfo("cpu family")), s);
        assertTrue(s.contains(" | " + Vec.F.vectorBitSize() + "-bit vectors | " + Runtime.getRuntime().availableProcessors() + " processors"), s);
    }


    /**
     * The folder of the file of choices: XDG_CACHE_HOME, else HOME's .cache, else user.home's, each only where it is an
     * absolute path. A container's user ID without a passwd entry has user.home "?", which wrote the file under "./?".
     */
    @Test
    void theChoicesGoUnderAnAbsoluteHomeOrNowhere() {
        assertEquals(Path.of("/x/cache"), KernelChoices.cacheBase("/x/cache", "/home/u", "/root"));
        assertEquals(Path.of("/home/u/.cache"), KernelChoices.cacheBase(null, "/home/u", "/root"));     // $HOME before user.home
        assertEquals(Path.of("/home/u/.cache"), KernelChoices.cacheBase("relative", "/home/u", "?"));   // a relative XDG_CACHE_HOME is ignored
        assertEquals(Path.of("/root/.cache"), KernelChoices.cacheBase("", "", "/root"));
        assertNull(KernelChoices.cacheBase(null, null, "?"));
        assertNull(KernelChoices.cacheBase(" ", "home", null));
    }
}
