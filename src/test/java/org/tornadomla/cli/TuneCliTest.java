package org.tornadomla.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tornadomla.fast.KernelChoices;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

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
        assertTrue(TuneCommand.notApplicable("tornadomla.fast.pairScores", 256, false, Map.of()).contains("16-register"));
        assertTrue(TuneCommand.notApplicable("tornadomla.fast.pairScores", 512, true, Map.of("tornadomla.fast.halfScores", true)).contains("halves"));
        assertNull(TuneCommand.notApplicable("tornadomla.fast.pairScores", 512, true, Map.of("tornadomla.fast.halfScores", false)));
        assertNull(TuneCommand.notApplicable("tornadomla.fast.touch", 256, false, Map.of()));
    }

    @Test
    void badOptionsAndAFileThatIsNotTunesAreRefusedBeforeAnythingRuns() throws IOException {
        CliTest.Run r = mla("tune", "--rounds", "0");
        assertEquals(MlaCommand.BAD_INPUT, r.code());
        assertTrue(r.err().contains("--rounds must be 1 to 20, found 0"), r.err());
        // below 100 ms a probe would time code the JIT has not compiled yet (Timing.COLD_MS: no warm-up)
        r = mla("tune", "--budget-ms", "99", "--dry-run");
        assertEquals(MlaCommand.BAD_INPUT, r.code());
        assertTrue(r.err().contains("--budget-ms must be 100 to 60000") && r.err().contains("found 99"), r.err());
        // --show refuses a -D the kernels would refuse, rather than print the rule's value as if it applied
        System.setProperty("tornadomla.fast.pairScores", "maybe");
        try {
            r = mla("tune", "--show");
        } finally {
            System.clearProperty("tornadomla.fast.pairScores");
        }
        assertEquals(MlaCommand.BAD_INPUT, r.code(), r.out());
        assertTrue(r.err().contains("-Dtornadomla.fast.pairScores='maybe': expected true or false"), r.err());
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
    void theChoicesThatFollowOneAreTimedAgainWithIt() {
        assertEquals(List.of("tornadomla.fast.touch", "tornadomla.fast.valuesRuns", "tornadomla.fast.touchScores"),
                TuneCommand.withDependents(List.of("tornadomla.fast.touch")));
        assertEquals(List.of("tornadomla.fast.halfScores", "tornadomla.fast.pairScores", "tornadomla.fast.touchScores"),
                TuneCommand.withDependents(List.of("tornadomla.fast.touchScores", "tornadomla.fast.halfScores")));
        assertEquals(List.of("tornadomla.fast.pairScores", "tornadomla.fast.touchScores"),
                TuneCommand.withDependents(List.of("tornadomla.fast.pairScores")));
        assertEquals(List.of("tornadomla.fast.absorbStrips"), TuneCommand.withDependents(List.of("tornadomla.fast.absorbStrips")));
    }

    @Test
    void aQuickRunTimesAChoiceInProbeJvmsKeepsTheFilesOtherLinesAndWritesAFileThisMachineReads() throws Exception {
        // a file measured here before, with the touch off: --choices absorbStrips keeps its other lines and runs the probes with them
        Path f = dir.resolve("choices.properties");
        Map<String, Boolean> earlier = new java.util.LinkedHashMap<>();
        earlier.put("tornadomla.fast.touch", false);
        earlier.put("tornadomla.fast.valuesRuns", false);
        earlier.put("tornadomla.fast.absorbStrips", true);
        earlier.put("tornadomla.fast.halfScores", false);
        earlier.put("tornadomla.fast.pairScores", false);
        earlier.put("tornadomla.fast.touchScores", false);
        KernelChoices.write(f, new KernelChoices.Saved(KernelChoices.signature(), "earlier", earlier));
        CliTest.Run r = mla("tune", "--quick", "--choices", "absorbStrips", "--budget-ms", "100", "--output", f.toString());
        assertEquals(0, r.code(), r.err() + r.out());
        // both settings ran once each, in their own JVM, and the verdict line names the defaults and the outcome
        assertTrue(r.out().contains("absorbStrips  true  round 1/1: B1 H128 T1024 absorbed"), r.out());
        assertTrue(r.out().contains("absorbStrips  false round 1/1: B1 H128 T1024 absorbed"), r.out());
        assertTrue(r.out().contains("kept from " + f + " (measured earlier): touch=false, valuesRuns=false, halfScores=false, pairScores=false, touchScores=false"), r.out());
        assertTrue(r.out().contains("wrote " + f + ": java-fast reads it with -Dtornadomla.fast.choices="), r.out());
        KernelChoices.Saved s = KernelChoices.read(f);
        assertEquals(KernelChoices.signature(), s.signature(), "the probes' machine is this one");
        assertEquals(KernelChoices.TUNED, List.copyOf(s.choices().keySet()), "every choice, as the probes ran it");
        for (String c : List.of("tornadomla.fast.touch", "tornadomla.fast.valuesRuns", "tornadomla.fast.halfScores", "tornadomla.fast.pairScores", "tornadomla.fast.touchScores")) {
            assertEquals(false, s.choices().get(c), c + " kept");
        }
        assertTrue(s.measured().contains("1 round, --quick: timed absorbStrips; kept touch=false"), s.measured());
        assertTrue(s.measured().endsWith("from earlier"), s.measured());
        // a JVM pointed at the file applies it: the touch off, measured, and the runs that follow it
        String shown = show(f);
        assertTrue(shown.contains("tiles not touched before the values (tornadomla.fast.touch, measured)"), shown);
        assertTrue(shown.contains("single tiles (tornadomla.fast.valuesRuns, measured)"), shown);
        // with the touch forced on, the runs measured with it off give way to the rule (runs of two tiles where touched)
        shown = show(f, "-Dtornadomla.fast.touch=true");
        assertTrue(shown.contains("tiles touched before the values (tornadomla.fast.touch, -D)"), shown);
        assertTrue(shown.contains("runs of 2 tiles (tornadomla.fast.valuesRuns)"), shown);
        assertTrue(shown.contains("(tornadomla.fast.absorbStrips, measured)"), "a choice that follows none stays measured: " + shown);
    }

    /** `mla tune --show` in a JVM that reads {@code f}, with {@code flags}. */
    private static String show(Path f, String... flags) throws Exception {
        String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new java.util.ArrayList<>(List.of(javaBin, "--add-modules", "jdk.incubator.vector", "-Dtornadomla.fast.choices=" + f));
        cmd.addAll(List.of(flags));
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), MlaCommand.class.getName(), "tune", "--show"));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(f.resolveSibling("show.txt").toFile()).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "tune --show within 60 s");
        return Files.readString(f.resolveSibling("show.txt"));
    }
}
