package org.tornadomla.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** bench --help shows its options under headings: every option once, in the group it is named in, and none lost. */
class GroupedHelpTest {
    private static CommandLine bench() {
        return MlaCommand.commandLine(new PrintWriter(new StringWriter()), new PrintWriter(new StringWriter())).getSubcommands().get("bench");
    }

    /** The heading each option's line sits under in {@code usage}, by the option's longest name; an option listed twice fails. */
    private static Map<String, String> headingOf(String usage, CommandLine cmd) {
        Map<String, String> at = new LinkedHashMap<>();
        String heading = null;
        for (String line : usage.split("\\R")) {
            if (!line.isEmpty() && !line.startsWith(" ")) heading = line;
            Matcher m = Pattern.compile("^ {2}(?:-\\w, |    )(--[\\w-]+)").matcher(line);
            if (!m.find()) continue;
            OptionSpec o = cmd.getCommandSpec().findOption(m.group(1));
            assertNotNull(o, "the help shows " + m.group(1) + ", which bench does not have");
            String before = at.put(o.longestName(), heading);
            assertEquals(null, before, o.longestName() + " is shown twice: under '" + before + "' and '" + heading + "'");
        }
        return at;
    }

    @Test
    void everyOptionOfBenchIsShownOnceUnderTheHeadingThatNamesIt() {
        CommandLine bench = bench();
        String usage = bench.getUsageMessage(CommandLine.Help.Ansi.OFF);
        Map<String, String> at = headingOf(usage, bench);
        for (OptionSpec o : bench.getCommandSpec().options()) {
            if (o.hidden()) continue;
            assertTrue(at.containsKey(o.longestName()), o.longestName() + " is missing from bench --help:\n" + usage);
        }
        for (Map.Entry<String, List<String>> g : BenchCommand.HELP_GROUPS.entrySet()) {
            for (String name : g.getValue()) {
                OptionSpec o = bench.getCommandSpec().findOption(name);
                assertNotNull(o, "BenchCommand.HELP_GROUPS names " + name + ", which bench does not have");
                assertEquals(g.getKey(), at.get(o.longestName()), name + " should be under its group's heading");
            }
        }
        assertTrue(!usage.contains("Other options:"), "every option of bench has a group:\n" + usage);
        assertTrue(usage.contains("Examples:\n") && usage.contains("mla bench --quick\n"), usage);
    }

    @Test
    void anOptionNoGroupNamesGoesUnderOtherOptions() {
        CommandLine bench = bench();
        Map<String, List<String>> groups = new LinkedHashMap<>(BenchCommand.HELP_GROUPS);
        groups.replaceAll((heading, names) -> names.stream().filter(n -> !n.equals("--sparse")).toList());
        GroupedHelp.install(bench, groups);
        Map<String, String> at = headingOf(bench.getUsageMessage(CommandLine.Help.Ansi.OFF), bench);
        assertEquals("Other options:", at.get("--sparse"));
        assertEquals("Output:", at.get("--csv"));
    }
}
