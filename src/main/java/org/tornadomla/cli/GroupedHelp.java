package org.tornadomla.cli;

import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A command's --help with its options under headings (what to time, other modes, output, …) instead of one list in
 * alphabetical order, for commands with many options. An option no group names goes under "Other options:", so an
 * option added to the command later is never left out of the help.
 */
final class GroupedHelp {
    private GroupedHelp() {
    }

    /** Shows {@code cmd}'s options under the headings of {@code groups} (heading → option names, in order). */
    static void install(CommandLine cmd, Map<String, List<String>> groups) {
        cmd.getHelpSectionMap().put(CommandLine.Model.UsageMessageSpec.SECTION_KEY_OPTION_LIST, help -> render(help, groups));
    }

    /** The option list under the headings of {@code groups}, then "Other options:" for any option no group names. */
    static String render(CommandLine.Help help, Map<String, List<String>> groups) {
        Map<String, OptionSpec> byName = new LinkedHashMap<>();
        for (OptionSpec o : help.commandSpec().options()) {
            if (!o.hidden()) byName.put(o.longestName(), o);
        }
        Set<OptionSpec> shown = new LinkedHashSet<>();
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<String, List<String>> g : groups.entrySet()) {
            List<OptionSpec> options = new ArrayList<>();
            for (String name : g.getValue()) {
                OptionSpec o = help.commandSpec().findOption(name);
                if (o != null && !o.hidden() && shown.add(o)) options.add(o);
            }
            section(help, sb, g.getKey(), options);
        }
        List<OptionSpec> rest = new ArrayList<>();
        for (OptionSpec o : byName.values()) if (!shown.contains(o)) rest.add(o);
        section(help, sb, "Other options:", rest);
        return sb.toString();
    }

    private static void section(CommandLine.Help help, StringBuilder sb, String heading, List<OptionSpec> options) {
        if (options.isEmpty()) return;
        CommandLine.Help.Layout layout = help.createDefaultLayout();
        CommandLine.Help.IParamLabelRenderer labels = help.createDefaultParamLabelRenderer();
        for (OptionSpec o : options) layout.addOption(o, labels);
        sb.append(String.format("%n%s%n", heading)).append(layout);
    }
}
