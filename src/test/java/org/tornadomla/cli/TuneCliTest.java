package org.tornadomla.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tornadomla.fast.KernelChoices;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.tornadomla.cli.CliTest.mla;

/** {@code mla tune}: the rule that keeps or replaces a default, its refusals, and one real run through probe JVMs. */
class TuneCliTest {
    @TempDir
    Path dir;

    @Test
    void theOtherSettingWinsOnlyByTheMarginInTheMedianRoundAndInMostRounds() {
        // ms of the default and of the other setting, per round
        TuneCommand.Verdict clear = TuneCommand.decide(true, new double[] {5.5, 5.6, 5.4}, new double[] {5.0, 5.1, 4.9});
        assertFalse(clear.chosen(), "about 10 % faster in every round: the other setting");
        assertEquals(3, clear.otherWins());
        assertEquals(5.5 / 5.0, clear.medianRatio(), 1e-12);
        TuneCommand.Verdict small = TuneCommand.decide(true, new double[] {5.05, 5.05, 5.05}, new double[] {5.0, 5.0, 5.0});
        assertTrue(small.chosen(), "1 % faster: within the noise, the default stays");
        TuneCommand.Verdict oneOutlier = TuneCommand.decide(false, new double[] {6.0, 5.0, 5.0}, new double[] {4.0, 5.1, 5.2});
        assertFalse(oneOutlier.chosen(), "one round 1.5x faster, two slower: the median ratio is below 1, the default stays");
        TuneCommand.Verdict twoOfThree = TuneCommand.decide(false, new double[] {5.3, 5.25, 5.0}, new double[] {5.0, 5.0, 5.1});
        assertTrue(twoOfThree.chosen(), "5 % faster in two rounds of three: the other setting (true, the default being false)");
        TuneCommand.Verdict even = TuneCommand.decide(true, new double[] {5.5, 5.0}, new double[] {5.0, 5.05});
        assertTrue(even.chosen(), "faster in one of two rounds is not most rounds");
        assertEquals(Math.sqrt(2.0 * 8.0), TuneCommand.geometricMean(new double[] {2, 8}), 1e-12);
    }

    @Test
    void choicesWhoseKernelsDoNotRunHereAreNotMeasured() {
        assertTrue(TuneCommand.notApplicable("tornadomla.fast.halfScores", 256, false, Map.of()).contains("256 bits"));
        assertNull(TuneCommand.notApplicable("tornadomla.fast.halfScores", 512, true, Map.of()));
        assertTrue(TuneCommand.notApplicable("tornadomla.fast.touchScores", 256, false, Map.of()).contains("16-register"));
        assertTrue(TuneCommand.notApplicable("tornadomla.fast.touchScores", 512, true, Map.of("tornadomla.fast.halfScores", true)).contains("halves"));
        assertNull(TuneCommand.notApplicable("tornadomla.fast.touchScores", 512, true, Map.of("tornadomla.fast.halfScores", false)));
        assertNull(TuneCommand.notApplicable("tornadomla.fast.touch", 256, false, Map.of()));
    }

    @Test
    void badOptionsAndAFileThatIsNotTunesAreRefusedBeforeAnythingRuns() throws IOException {
        CliTest.Run r = mla("tune", "--rounds", "0");
        assertEquals(MlaCommand.BAD_INPUT, r.code());
        assertTrue(r.err().contains("--rounds must be 1 to 20, found 0"), r.err());
        r = mla("tune", "--choices", "touch,prefetch", "--dry-run");
        assertEquals(MlaCommand.BAD_INPUT, r.code());
        assertTrue(r.err().contains("unknown choice \"prefetch\"") && r.err().contains("absorbStrips"), r.err());
        // an existing file that mla tune did not write is never overwritten
        Path notOurs = dir.resolve("notes.properties");
        Files.writeString(notOurs, "my=notes\n");
        r = mla("tune", "--choices", "absorbStrips", "--output", notOurs.toString());
        assertEquals(MlaCommand.BAD_INPUT, r.code());
        assertTrue(r.err().contains("no signature line") && r.err().contains("not overwritten"), r.err());
        assertEquals("my=notes\n", Files.readString(notOurs));
        r = mla("tune", "--output", dir.toString());
        assertEquals(MlaCommand.BAD_INPUT, r.code());
        assertTrue(r.err().contains("is a folder"), r.err());
    }

    @Test
    void aQuickRunMeasuresAChoiceInProbeJvmsAndWritesAFileThisMachineReads() throws IOException {
        Path f = dir.resolve("choices.properties");
        CliTest.Run r = mla("tune", "--quick", "--choices", "absorbStrips", "--budget-ms", "100", "--output", f.toString());
        assertEquals(0, r.code(), r.err() + r.out());
        // both settings ran once each, in their own JVM, and the verdict line names the defaults and the outcome
        assertTrue(r.out().contains("absorbStrips  true  round 1/1: B1 H128 T1024 absorbed"), r.out());
        assertTrue(r.out().contains("absorbStrips  false round 1/1: B1 H128 T1024 absorbed"), r.out());
        assertTrue(r.out().contains("wrote " + f), r.out());
        KernelChoices.Saved s = KernelChoices.read(f);
        assertEquals(KernelChoices.signature(), s.signature(), "the probes' machine is this one");
        assertEquals(List.of("tornadomla.fast.absorbStrips"), List.copyOf(s.choices().keySet()));
        assertTrue(s.measured().endsWith("1 round, --quick"), s.measured());
        // the file is applied by a JVM that reads it: tune --show in a JVM pointed at it reports the measured line
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(java, "--add-modules", "jdk.incubator.vector", "-Dtornadomla.fast.choices=" + f,
                "-cp", System.getProperty("java.class.path"), MlaCommand.class.getName(), "tune", "--show")
                .redirectErrorStream(true).start();
        String shown = new String(p.getInputStream().readAllBytes());
        assertTrue(shown.contains("measured: " + s.measured()), shown);
        assertTrue(shown.contains("(tornadomla.fast.absorbStrips, measured)"), shown);
        assertTrue(shown.contains("tornadomla.fast.touch)"), "a choice not in the file keeps the machine's default: " + shown);
    }
}
