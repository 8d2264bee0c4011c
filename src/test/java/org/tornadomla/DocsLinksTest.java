package org.tornadomla;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every relative link in the project's Markdown (README, CONTRIBUTING, docs/, benchmarks/, tools/, tornado-config/)
 * leads to a file that exists, and a link to a heading (#anchor) to a heading that exists, with GitHub's anchor
 * rules. Links inside code blocks and to web addresses are not checked.
 */
class DocsLinksTest {
    private static final Pattern LINK = Pattern.compile("!?\\[[^\\]]*\\]\\(([^)\\s]+)\\)");
    private static final Pattern FENCE = Pattern.compile("(?s)```.*?```");

    @Test
    void everyRelativeLinkResolves() throws IOException {
        List<Path> pages = markdownPages();
        assertTrue(pages.size() >= 10, "found the project's Markdown pages: " + pages);
        List<String> broken = new ArrayList<>();
        int checked = 0;
        for (Path page : pages) {
            String text = FENCE.matcher(Files.readString(page)).replaceAll("");
            Matcher m = LINK.matcher(text);
            while (m.find()) {
                String target = m.group(1);
                if (target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) continue;      // https:, mailto:
                checked++;
                String file = target, anchor = null;
                int hash = target.indexOf('#');
                if (hash >= 0) {
                    file = target.substring(0, hash);
                    anchor = target.substring(hash + 1);
                }
                Path to = file.isEmpty() ? page : page.toAbsolutePath().getParent().resolve(file).normalize();
                if (!Files.exists(to)) {
                    broken.add(page + ": " + target + " (no such file)");
                } else if (anchor != null && to.toString().endsWith(".md") && !anchors(to).contains(anchor)) {
                    broken.add(page + ": " + target + " (no heading with that anchor in " + to + ")");
                }
            }
        }
        assertTrue(checked > 30, "checked " + checked + " links");
        assertEquals(List.of(), broken, "broken links");
    }

    @Test
    void anchorsFollowGitHubsRules() {
        // the rules the check relies on, on headings of this project's kind
        assertEquals("weights-held-as-f32-bf16-or-fp8", anchor("Weights held as f32, bf16 or fp8"));
        assertEquals("java-fast-against-pytorch--openblas", anchor("java-fast against PyTorch + OpenBLAS"));
        assertEquals("8-the-int8-latent", anchor("8. The int8 latent"));
        assertEquals("the-machine-code-of-a-kernel", anchor("The machine code of a kernel"));
        assertEquals("every-backend-at-a-glance---quick", anchor("Every backend at a glance: `--quick`"));
    }

    /** The Markdown files of the project (not target/ or hidden folders). */
    private static List<Path> markdownPages() throws IOException {
        List<Path> pages = new ArrayList<>();
        for (String top : List.of("README.md", "CONTRIBUTING.md")) {
            if (Files.exists(Path.of(top))) pages.add(Path.of(top));
        }
        for (String dir : List.of("docs", "benchmarks", "tools", "tornado-config")) {
            if (!Files.isDirectory(Path.of(dir))) continue;
            try (Stream<Path> s = Files.walk(Path.of(dir))) {
                s.filter(p -> p.toString().endsWith(".md") && !p.toString().contains("/target/")).sorted().forEach(pages::add);
            }
        }
        return pages;
    }

    private static final Map<Path, Set<String>> ANCHORS = new HashMap<>();

    /** The anchors of a page's headings, duplicates numbered -1, -2 … as GitHub does. */
    private static Set<String> anchors(Path page) throws IOException {
        Set<String> cached = ANCHORS.get(page.toAbsolutePath().normalize());
        if (cached != null) return cached;
        Set<String> out = new HashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        for (String line : FENCE.matcher(Files.readString(page)).replaceAll("").split("\n")) {
            if (!line.matches("^#{1,6} .*")) continue;
            String a = anchor(line.replaceFirst("^#{1,6} ", ""));
            int n = seen.merge(a, 1, Integer::sum);
            out.add(n == 1 ? a : a + "-" + (n - 1));
        }
        ANCHORS.put(page.toAbsolutePath().normalize(), out);
        return out;
    }

    /** GitHub's anchor of a heading: lower case, letters, digits, spaces, hyphens and underscores kept, spaces to hyphens. */
    static String anchor(String heading) {
        String text = heading.replaceAll("\\[([^\\]]*)\\]\\([^)]*\\)", "$1").trim().toLowerCase(java.util.Locale.ROOT);
        return text.replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-');
    }
}
