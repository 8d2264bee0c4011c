package org.tornadomla.ladder;

import org.tornadomla.internal.Messages;
import org.tornadomla.MlaException;
import org.tornadomla.io.OutputFiles;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The ladder's measured numbers written once and copied everywhere they are quoted, so the table, the pages
 * and the kernel class headers cannot drift: one measured run ({@code mla ladder --docs}) writes
 * docs/ladder/measured.csv, and every region between {@code <!-- ladder:KEY -->} and {@code <!-- /ladder -->}
 * in {@link #FILES} is regenerated from it. Keys: {@code table} (the README's table), {@code machine} (when and
 * where it was measured), {@code N} (step N, short: "ref / fast / tornado ms") and {@code N:long} (step N, in
 * words). LadderDocsTest checks that the files as committed equal their regeneration.
 */
public final class LadderDocs {
    private LadderDocs() {
    }

    /** The measurement, relative to the repository root. */
    public static final Path MEASURED = Path.of("docs/ladder/measured.csv");

    /** Every file that quotes the measurement, relative to the repository root. */
    public static final List<Path> FILES = List.of(Path.of("docs/ladder/README.md"),
            Path.of("docs/ladder/01-naive-mha.md"), Path.of("docs/ladder/02-latent-cache.md"), Path.of("docs/ladder/03-absorption.md"),
            Path.of("docs/ladder/04-decoupled-rope.md"), Path.of("docs/ladder/05-online-softmax.md"), Path.of("docs/ladder/06-split-kv.md"),
            Path.of("docs/ladder/07-kernel-context.md"), Path.of("docs/ladder/08-int8.md"), Path.of("docs/ladder/09-sparse.md"),
            Path.of("src/main/java/org/tornadomla/kernels/NaiveAttention.java"), Path.of("src/main/java/org/tornadomla/kernels/AbsorbedAttention.java"),
            Path.of("src/main/java/org/tornadomla/kernels/OnlineSoftmax.java"), Path.of("src/main/java/org/tornadomla/kernels/CacheRows.java"),
            Path.of("src/tornado/java/org/tornadomla/tornado/FlashDecode.java"));

    /** The backends in the order the numbers are quoted. */
    public static final List<String> BACKENDS = List.of("java-reference", "java-fast", "tornado");
    private static final Map<String, String> WORDS = Map.of("java-reference", "reference", "java-fast", "java-fast", "tornado", "TornadoVM");

    /** A measurement: what ran where (free text), and the results. */
    public record Measured(String machine, List<LadderRun.Result> results) {
        LadderRun.Result get(int step, String backend) {
            for (LadderRun.Result r : results) if (r.step() == step && r.backend().equals(backend)) return r;
            return null;
        }
    }

    static final String HEADER = "step,backend,max_abs_diff,ms_per_step,bytes_read";

    public static String csv(Measured m) {
        StringBuilder sb = new StringBuilder("# ").append(m.machine().replace('\n', ' ')).append('\n').append(HEADER).append('\n');
        for (LadderRun.Result r : m.results()) {
            sb.append(String.format(Locale.ROOT, "%d,%s,%s,%s,%.0f%n", r.step(), r.backend(), num(r.maxAbsDiff()), num(r.ms()), r.bytesRead()));
        }
        return sb.toString();
    }

    private static String num(double v) {
        return Double.isNaN(v) ? "" : String.format(Locale.ROOT, "%.6g", v);
    }

    public static Measured parse(String csv) {
        String machine = "";
        List<LadderRun.Result> rs = new ArrayList<>();
        for (String line : csv.split("\n")) {
            if (line.startsWith("# ")) machine = line.substring(2).strip();
            else if (!line.isBlank() && !line.equals(HEADER)) {
                String[] f = line.split(",", -1);
                if (f.length != 5) throw new MlaException(MEASURED + ": expected " + HEADER + ", found '" + Messages.escape(line) + "'");
                try {
                    rs.add(new LadderRun.Result(Integer.parseInt(f[0]), f[1], f[2].isEmpty() ? Double.NaN : Double.parseDouble(f[2]),
                            f[3].isEmpty() ? Double.NaN : Double.parseDouble(f[3]), Double.parseDouble(f[4])));
                } catch (NumberFormatException e) {
                    throw new MlaException(MEASURED + ": not a number in '" + Messages.escape(line) + "'");
                }
            }
        }
        return new Measured(machine, rs);
    }

    private static final Pattern REGION = Pattern.compile("<!-- ladder:([a-z0-9:]+) -->(.*?)<!-- /ladder -->", Pattern.DOTALL);

    /** {@code text} with every ladder region regenerated from {@code m}. */
    public static String render(String text, Measured m) {
        Matcher x = REGION.matcher(text);
        StringBuilder sb = new StringBuilder();
        while (x.find()) {
            String body = body(x.group(1), m);
            x.appendReplacement(sb, Matcher.quoteReplacement("<!-- ladder:" + x.group(1) + " -->" + body + "<!-- /ladder -->"));
        }
        x.appendTail(sb);
        return sb.toString();
    }

    private static String body(String key, Measured m) {
        if (key.equals("machine")) return m.machine();
        if (key.equals("table")) return "\n" + table(m) + "\n";
        String[] k = key.split(":");
        int step;
        try {
            step = Integer.parseInt(k[0]);
        } catch (NumberFormatException e) {
            throw new MlaException("unknown ladder region key '" + key + "'");
        }
        List<String> parts = new ArrayList<>();
        for (String b : BACKENDS) {
            LadderRun.Result r = m.get(step, b);
            String ms = r == null || Double.isNaN(r.ms()) ? "–" : ms(r.ms());
            parts.add(k.length > 1 ? WORDS.get(b) + " " + ms + (ms.equals("–") ? "" : " ms") : ms);
        }
        return k.length > 1 ? String.join(", ", parts) : String.join(" / ", parts) + " ms";
    }

    private static String table(Measured m) {
        StringBuilder sb = new StringBuilder("| step | max abs diff from step 1 | java-reference ms | java-fast ms | TornadoVM ms | cache bytes read |\n");
        sb.append("|---|---|---|---|---|---|\n");
        Map<Integer, Double> bytes = new LinkedHashMap<>();
        for (LadderRun.Result r : m.results()) bytes.putIfAbsent(r.step(), r.bytesRead());
        for (int step : bytes.keySet()) {
            double diff = Double.NaN;
            String diffNote = "";
            for (String b : BACKENDS) {
                LadderRun.Result r = m.get(step, b);
                if (r != null && !Double.isNaN(r.maxAbsDiff())) {
                    diff = r.maxAbsDiff();
                    diffNote = b.equals("java-reference") ? "" : " (" + b + ")";
                    break;
                }
            }
            sb.append(String.format(Locale.ROOT, "| %d | %s%s |", step, Double.isNaN(diff) ? "–" : diff == 0 ? "0" : String.format(Locale.ROOT, "%.1e", diff), diffNote));
            for (String b : BACKENDS) {
                LadderRun.Result r = m.get(step, b);
                sb.append(' ').append(r == null || Double.isNaN(r.ms()) ? "–" : ms(r.ms())).append(" |");
            }
            sb.append(String.format(Locale.ROOT, " %,.0f |%n", bytes.get(step)));
        }
        return sb.toString().stripTrailing();
    }

    /** Milliseconds with three significant digits (1,812 / 18.4 / 0.95). */
    static String ms(double ms) {
        if (ms >= 100) return String.format(Locale.ROOT, "%,.0f", ms);
        if (ms >= 10) return String.format(Locale.ROOT, "%.1f", ms);
        if (ms >= 1) return String.format(Locale.ROOT, "%.2f", ms);
        return String.format(Locale.ROOT, "%.3f", ms);
    }

    /** Writes measured.csv under {@code root} and regenerates every file of {@link #FILES} that exists there; returns those written. */
    public static List<Path> write(Path root, Measured m) {
        List<Path> written = new ArrayList<>();
        Path csv = root.resolve(MEASURED);
        OutputFiles.write(csv, out -> out.write(csv(m).getBytes(StandardCharsets.UTF_8)));
        written.add(csv);
        for (Path f : FILES) {
            Path p = root.resolve(f);
            if (!Files.isRegularFile(p)) continue;
            try {
                String text = Files.readString(p, StandardCharsets.UTF_8), updated = render(text, m);
                if (!updated.equals(text)) {
                    OutputFiles.write(p, out -> out.write(updated.getBytes(StandardCharsets.UTF_8)));
                    written.add(p);
                }
            } catch (IOException e) {
                throw new MlaException("cannot read " + p + ": " + e.getMessage(), e);
            }
        }
        return written;
    }
}
