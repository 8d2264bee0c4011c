package org.tornadomla.cli;

import org.tornadomla.MlaException;
import org.tornadomla.bench.Timing;
import org.tornadomla.fast.KernelChoices;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * {@code mla tune}: measures java-fast's kernel choices ({@link KernelChoices#TUNED}) on this machine and saves the
 * faster setting of each, which java-fast then uses on this machine from the next JVM on. Each choice is timed both
 * ways in alternating fresh JVMs ({@link TuneProbeCommand}: the choices are read once, when the kernels' classes
 * load), on the decode shapes where it was seen to matter; the other setting replaces the machine's default only
 * where it is at least {@link #MARGIN} faster in the median round and faster in most rounds, so the noise of a shared
 * host does not flip a choice.
 */
@Command(name = "tune", mixinStandardHelpOptions = true,
        description = {"Measure java-fast's kernel choices on this machine (each one both ways, in alternating fresh JVMs, on "
                + "the decode shapes it matters for) and save the faster settings, which java-fast then uses on this machine. "
                + "About 5 minutes on 2 cores with the defaults.",
                "Without a file of measured choices java-fast decides from the CPU's vendor and family. The file names the "
                        + "CPU, the vector width and the processors, and is ignored by a JVM that sees others; "
                        + "-Dtornadomla.fast.choices=none ignores it, -Dtornadomla.fast.<choice>=true|false overrides one line (and "
                        + "the lines that follow that choice then give way to the rules)."})
public final class TuneCommand implements Callable<Integer> {
    /** How much faster the other setting must be, median over the rounds, to replace the machine's default. */
    static final double MARGIN = 1.03;

    /** The decode shapes (f32 cache) each choice is timed on: where it was measured to matter (docs/cpu-kernels.md). */
    static final Map<String, List<String>> SHAPES = Map.of(
            "tornadomla.fast.touch", List.of("1x128x4096:absorbed", "1x16x16384:absorbed"),
            "tornadomla.fast.valuesRuns", List.of("1x128x4096:absorbed", "1x128x4096:tiled"),
            "tornadomla.fast.absorbStrips", List.of("1x128x4096:absorbed"),
            "tornadomla.fast.halfScores", List.of("1x16x16384:absorbed"),
            "tornadomla.fast.pairScores", List.of("1x16x16384:absorbed", "1x16x4096:tiled"),
            "tornadomla.fast.touchScores", List.of("1x16x16384:absorbed"));

    @Option(names = "--rounds", description = "rounds per choice, each timing both settings (default: 3; 1 with --quick)")
    Integer rounds;

    @Option(names = "--budget-ms", description = "timed milliseconds per shape in each JVM, after its warm-up (default: 1000; 300 with --quick)")
    Double budgetMs;

    @Option(names = "--choices", split = ",", description = "only these choices (default: all): touch, valuesRuns, absorbStrips, "
            + "halfScores, pairScores, touchScores, and the ones that follow them (touch: valuesRuns and touchScores; halfScores: "
            + "pairScores and touchScores; pairScores: touchScores); "
            + "the others keep the file's lines where it was measured on this machine")
    List<String> choices;

    @Option(names = "--output", description = "the file to write (default: the one java-fast reads, ~/.cache/tornadomla/"
            + "java-fast-choices.properties, or $XDG_CACHE_HOME/tornadomla/…, or -Dtornadomla.fast.choices)")
    Path output;

    @Option(names = "--dry-run", description = "measure and print, write nothing")
    boolean dryRun;

    @Option(names = "--show", description = "print the choices this JVM runs with and where each comes from; measure nothing")
    boolean show;

    @Option(names = "--quick", description = "one round, shorter timings and a quarter of the contexts: to try the command (about a "
            + "minute), not to decide; writes no file unless --output names one")
    boolean quick;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    /** One probe JVM's report. */
    record Probe(String signature, Map<String, String> choices, Map<String, Double> ms) {
    }

    /** One choice's outcome: the median over the rounds of default ms / other ms, the rounds the other won, and what was chosen. */
    record Verdict(double medianRatio, int otherWins, boolean chosen) {
    }

    @Override
    public Integer call() throws IOException, InterruptedException {
        PrintWriter out = spec.commandLine().getOut();
        if (!org.tornadomla.fast.FastExecutor.available()) {
            throw new MlaException("java-fast needs the JDK's Vector API: run mla tune as ./mla tune, or add --add-modules jdk.incubator.vector");
        }
        if (show) {
            KernelChoices.checkProperties();     // a -D the kernels would refuse is refused here too, not shown as the rule
            show(out);
            return 0;
        }
        int r = rounds != null ? rounds : quick ? 1 : 3;
        double budget = budgetMs != null ? budgetMs : quick ? 300 : 1000;
        if (r < 1 || r > 20) throw new MlaException("--rounds must be 1 to 20, found " + r);
        if (budget < Timing.COLD_MS || budget > 60_000) {
            throw new MlaException("--budget-ms must be " + (int) Timing.COLD_MS + " to 60000 (below " + (int) Timing.COLD_MS
                    + " ms a probe times code the JIT has not compiled yet), found " + budget);
        }
        List<String> todo = withDependents(todo());
        boolean write = !dryRun && !(quick && output == null);
        Path file = output != null ? output : KernelChoices.file();
        if (write && file == null) {
            throw new MlaException("no file to write: " + KernelChoices.noFile() + " (give --output FILE, or --dry-run)");
        }
        // the file already there: the lines to keep (--choices), and whether it may be replaced, checked before any timing
        KernelChoices.Saved before = file != null ? existing(file, write) : null;
        if (write) checkWritable(file);
        warnings(out);

        out.printf("mla tune: each choice timed both ways in %d round%s of fresh JVMs, %.0f ms per shape after the warm-up%n",
                r, r == 1 ? "" : "s", budget);
        Probe base = probe(Map.of(), List.of(), budget);
        String signature = base.signature();
        int vectorBits = Integer.parseInt(base.choices().get("vectorBits"));
        boolean regs32 = Boolean.parseBoolean(base.choices().get("regs32"));
        out.printf("machine: %s%n", signature);
        boolean sameMachine = before != null && before.signature().equals(signature);
        // the choices not timed now keep the file's line (measured here before) and go to every probe as they are
        Map<String, Boolean> decided = new LinkedHashMap<>();
        List<String> kept = new ArrayList<>();
        for (String c : KernelChoices.TUNED) {
            if (!todo.contains(c) && sameMachine && before.choices().containsKey(c)) {
                decided.put(c, before.choices().get(c));
                kept.add(shortName(c) + "=" + before.choices().get(c));
            }
        }
        if (!kept.isEmpty()) out.printf("kept from %s (measured %s): %s%n", file, before.measured(), String.join(", ", kept));
        List<String> rows = new ArrayList<>(), timed = new ArrayList<>();
        for (String c : KernelChoices.TUNED) {
            if (!todo.contains(c)) continue;
            String name = shortName(c);
            String skip = notApplicable(c, vectorBits, regs32, withDefaults(decided, vectorBits, regs32));
            if (skip != null) {
                out.printf("%-13s not measured: %s%n", name, skip);
                continue;
            }
            boolean incumbent = KernelChoices.auto(c, withDefaults(decided, vectorBits, regs32), vectorBits, regs32);
            List<String> shapes = scaled(SHAPES.get(c));
            double[] def = new double[r], other = new double[r];
            for (int k = 0; k < r; k++) {
                boolean[] order = k % 2 == 0 ? new boolean[] {incumbent, !incumbent} : new boolean[] {!incumbent, incumbent};
                for (boolean v : order) {
                    Map<String, Boolean> props = new LinkedHashMap<>(decided);
                    props.put(c, v);
                    Probe p = probe(props, shapes, budget);
                    double score = geometricMean(shapes.stream().mapToDouble(s -> p.ms().get(s)).toArray());
                    if (v == incumbent) def[k] = score;
                    else other[k] = score;
                    out.printf("  %-13s %-5s round %d/%d: %s%n", name, v, k + 1, r, describe(shapes, p));
                    out.flush();
                }
            }
            Verdict verdict = decide(incumbent, def, other);
            decided.put(c, verdict.chosen());
            timed.add(name);
            String line = String.format(Locale.ROOT, "%-13s default %-5s: %s ms; %-5s: %s ms; median ratio %.3f, faster in %d of %d -> %s%s",
                    name, incumbent, fmt(def), !incumbent, fmt(other), verdict.medianRatio(), verdict.otherWins(), r,
                    verdict.chosen(), verdict.chosen() == incumbent ? " (the default)" : " (measured faster)");
            out.println(line);
            rows.add(line);
        }
        out.println();
        out.println("java-fast's kernel choices on this machine (ms: geometric mean of the shapes' median step, per round):");
        rows.forEach(l -> out.println("  " + l));
        if (!kept.isEmpty()) out.println("  kept: " + String.join(", ", kept));
        if (timed.isEmpty()) {
            out.println("nothing was measured: no file written");
            return 0;
        }
        if (!write) {
            out.println(dryRun ? "--dry-run: no file written" : "--quick writes no file java-fast reads (one short round decides nothing); --output FILE writes one");
            return 0;
        }
        // every choice is written as the last probes ran it, the ones not timed at the rule's setting, so that a JVM
        // applies the file only where the choices a measured one depends on are as they were (KernelChoices.choice)
        String when = Instant.now().truncatedTo(ChronoUnit.SECONDS) + ", " + r + " round" + (r == 1 ? "" : "s") + (quick ? ", --quick" : "")
                + ": timed " + String.join(", ", timed) + (kept.isEmpty() ? "" : "; kept " + String.join(", ", kept) + " from " + before.measured());
        try {
            KernelChoices.write(file, new KernelChoices.Saved(signature, when, withDefaults(decided, vectorBits, regs32)));
        } catch (IOException e) {
            throw new MlaException("could not write " + file + " (" + e + "): nothing was written");
        }
        if (before != null && !sameMachine) out.println("replaced the choices measured on another machine (" + before.signature() + ")");
        boolean readByDefault = file.toAbsolutePath().equals(defaultFile());
        out.println("wrote " + file + (readByDefault
                ? ": java-fast uses these choices on this machine from the next JVM on (delete the file to go back to the defaults)"
                : ": java-fast reads it with -D" + KernelChoices.FILE_PROPERTY + "=" + file.toAbsolutePath() + " (MLA_JAVA_OPTS for ./mla)"));
        return 0;
    }

    /** The file a JVM reads by default (absolute), or null where -Dtornadomla.fast.choices=none. */
    private static Path defaultFile() {
        Path f = KernelChoices.file();
        return f == null ? null : f.toAbsolutePath();
    }

    /**
     * {@code todo} with every choice that depends on one in it ({@link KernelChoices#DEPENDS_ON}: timing the touch means
     * timing the runs of two tiles again after it), in {@link KernelChoices#TUNED}'s order, where each follows what it
     * depends on.
     */
    static List<String> withDependents(List<String> todo) {
        java.util.Set<String> all = new java.util.HashSet<>(todo);
        for (String c : KernelChoices.TUNED) {
            if (KernelChoices.DEPENDS_ON.getOrDefault(c, List.of()).stream().anyMatch(all::contains)) all.add(c);
        }
        return KernelChoices.TUNED.stream().filter(all::contains).toList();
    }

    /** Fails now, before minutes of timing, where the file's folder cannot be made or written. */
    private static void checkWritable(Path file) {
        try {
            Path dir = file.toAbsolutePath().getParent();
            Files.createDirectories(dir);
            Files.delete(Files.createTempFile(dir, ".java-fast-choices", ".check"));
        } catch (IOException e) {
            throw new MlaException("cannot write " + file + " (" + org.tornadomla.internal.Messages.reason(e) + "): give --output FILE in a folder you can write, or --dry-run");
        } catch (RuntimeException e) {
            throw new MlaException("cannot write " + file + " (" + e.getMessage() + "): give --output FILE in a folder you can write, or --dry-run");
        }
    }

    /** What makes the timings less telling: other work on the CPUs, and this JVM's -D kernel switches, which the probes do not get. */
    private static void warnings(PrintWriter out) {
        String busy = org.tornadomla.bench.Timing.busyHost();
        if (busy != null) out.println(busy);
        for (String k : System.getProperties().stringPropertyNames()) {
            if (k.startsWith("tornadomla.fast.") && !k.equals(KernelChoices.FILE_PROPERTY)) {
                out.println("warning: -D" + k + " is not passed to the probes: they time the rules and the settings tried");
            }
        }
    }

    /**
     * The machine's default stays unless the other setting's median ratio (default ms / other ms, per round) is at
     * least {@link #MARGIN} and it was faster in more than half of the rounds.
     */
    static Verdict decide(boolean incumbent, double[] defaultMs, double[] otherMs) {
        int n = defaultMs.length, wins = 0;
        double[] ratio = new double[n];
        for (int k = 0; k < n; k++) {
            ratio[k] = defaultMs[k] / otherMs[k];
            if (otherMs[k] < defaultMs[k]) wins++;
        }
        double[] sorted = ratio.clone();
        Arrays.sort(sorted);
        double median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
        boolean switchTo = median >= MARGIN && 2 * wins > n;
        return new Verdict(median, wins, switchTo != incumbent);
    }

    static double geometricMean(double[] v) {
        double s = 0;
        for (double x : v) s += Math.log(x);
        return Math.exp(s / v.length);
    }

    /** Why a choice is not measured on this machine (its kernels do not run here), or null. */
    static String notApplicable(String c, int vectorBits, boolean regs32, Map<String, Boolean> decided) {
        return switch (c) {
            case "tornadomla.fast.halfScores" -> vectorBits < 512 ? "the JVM's vectors are " + vectorBits + " bits (it splits 512-bit ones)" : null;
            case "tornadomla.fast.pairScores" -> !regs32 ? "16-register blocks have no kernel of column pairs"
                    : Boolean.TRUE.equals(decided.get("tornadomla.fast.halfScores")) ? "16 heads' scores run on 256-bit halves here" : null;
            case "tornadomla.fast.touchScores" -> !regs32 ? "16-register blocks read rows ahead only"
                    : Boolean.TRUE.equals(decided.get("tornadomla.fast.halfScores")) ? "16 heads' scores run on 256-bit halves here" : null;
            default -> null;
        };
    }

    /** The decided choices plus the machine's defaults for those not decided yet, in order (what auto() reads). */
    private static Map<String, Boolean> withDefaults(Map<String, Boolean> decided, int vectorBits, boolean regs32) {
        Map<String, Boolean> m = new LinkedHashMap<>();
        for (String c : KernelChoices.TUNED) {
            m.put(c, decided.containsKey(c) ? decided.get(c) : KernelChoices.auto(c, m, vectorBits, regs32));
        }
        return m;
    }

    private List<String> todo() {
        if (choices == null) return KernelChoices.TUNED;
        List<String> out = new ArrayList<>();
        for (String s : choices) {
            String full = s.startsWith("tornadomla.fast.") ? s : "tornadomla.fast." + s;
            if (!KernelChoices.TUNED.contains(full)) {
                throw new MlaException("--choices: unknown choice \"" + s + "\" (expected any of "
                        + KernelChoices.TUNED.stream().map(TuneCommand::shortName).toList() + ")");
            }
            if (!out.contains(full)) out.add(full);
        }
        return out;
    }

    /**
     * The file already at {@code file}: one of mla tune's (any machine), or none. Where it is to be written, anything
     * else there is refused, not overwritten; where it is not, an unreadable file only keeps no line.
     */
    private static KernelChoices.Saved existing(Path file, boolean write) {
        if (Files.isDirectory(file)) {
            if (!write) return null;
            throw new MlaException(file + " is a folder: expected the file of measured choices");
        }
        if (!Files.exists(file)) return null;
        try {
            return KernelChoices.read(file);
        } catch (MlaException e) {
            if (!write) return null;
            throw new MlaException(e.getMessage() + "; it is not overwritten (move it, or give --output)");
        }
    }

    /** --quick's shapes: a quarter of each context. */
    private List<String> scaled(List<String> shapes) {
        if (!quick) return shapes;
        return shapes.stream().map(s -> {
            String[] pf = s.split(":"), n = pf[0].split("x");
            return n[0] + "x" + n[1] + "x" + Integer.parseInt(n[2]) / 4 + ":" + pf[1];
        }).toList();
    }

    static String shortName(String property) {
        return property.substring("tornadomla.fast.".length());
    }

    private static String fmt(double[] v) {
        return String.join("/", Arrays.stream(v).mapToObj(x -> String.format(Locale.ROOT, "%.3f", x)).toList());
    }

    private static String describe(List<String> shapes, Probe p) {
        return String.join(", ", shapes.stream().map(s -> label(s) + " " + String.format(Locale.ROOT, "%.3f ms", p.ms().get(s))).toList());
    }

    /** "1x128x4096:absorbed" as the bench labels it: "B1 H128 T4096 absorbed". */
    static String label(String s) {
        String[] pf = s.split(":"), n = pf[0].split("x");
        return "B" + n[0] + " H" + n[1] + " T" + n[2] + " " + pf[1];
    }

    /**
     * Runs one probe JVM: this JVM's java, class path and -XX options (a JVM held to AVX2 tunes AVX2's kernels), the
     * Vector API, no file of measured choices, and {@code props} as system properties.
     */
    private Probe probe(Map<String, Boolean> props, List<String> shapes, double budget) throws IOException, InterruptedException {
        String cp = System.getProperty("java.class.path", "");
        if (cp.isEmpty()) throw new MlaException("mla tune starts JVMs on this one's class path, and it has none (run it as ./mla tune)");
        List<String> cmd = new ArrayList<>(List.of(ChildJvm.java(), "-Djava.awt.headless=true", "--add-modules", "jdk.incubator.vector"));
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (a.startsWith("-XX:") || a.startsWith("-Xmx")) cmd.add(a);
        }
        cmd.add("-D" + KernelChoices.FILE_PROPERTY + "=none");
        props.forEach((k, v) -> cmd.add("-D" + k + "=" + v));
        cmd.addAll(List.of("-cp", cp, MlaCommand.class.getName(), "tune-probe", "--budget-ms", String.valueOf(budget)));
        if (!shapes.isEmpty()) cmd.addAll(List.of("--shapes", String.join(",", shapes)));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        List<String> lines = Collections.synchronizedList(new ArrayList<>());
        Thread reader = ChildJvm.drain(p.getInputStream(), lines);
        long limitS = 120 + (long) (shapes.size() * (budget / 1000 + 30));
        if (!p.waitFor(limitS, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new MlaException("a probe JVM of mla tune (" + props + ", " + shapes + ") did not finish within " + limitS + " s"
                    + (lines.isEmpty() ? "" : "; its last line: " + lines.getLast()));
        }
        reader.join();
        Map<String, String> choices = new LinkedHashMap<>();
        Map<String, Double> ms = new LinkedHashMap<>();
        String signature = null;
        for (String l : lines) {
            if (l.startsWith("signature ")) signature = l.substring("signature ".length());
            else if (l.startsWith("choice ")) {
                String[] f = l.split(" ");
                if (f.length == 3) choices.put(f[1], f[2]);
            } else if (l.startsWith("ms ")) {
                String[] f = l.split(" ");
                if (f.length == 3) ms.put(f[1], Double.parseDouble(f[2]));
            }
        }
        if (p.exitValue() != 0 || signature == null || !ms.keySet().containsAll(shapes)) {
            String why = lines.stream().filter(l -> l.startsWith("mla: ")).reduce((a, b) -> b)
                    .orElse(lines.isEmpty() ? "no output" : lines.getLast());
            throw new MlaException("a probe JVM of mla tune (" + props + ") " + (p.exitValue() != 0 ? "failed with exit code " + p.exitValue()
                    : "ended without a " + (signature == null ? "signature" : "time for every shape of " + shapes)) + ": " + why);
        }
        for (Map.Entry<String, Boolean> e : props.entrySet()) {
            if (!String.valueOf(e.getValue()).equals(choices.get(e.getKey()))) {
                throw new MlaException("a probe JVM of mla tune ran with " + e.getKey() + "=" + choices.get(e.getKey()) + ", not " + e.getValue());
            }
        }
        return new Probe(signature, choices, ms);
    }

    private static void show(PrintWriter out) {
        Path f = KernelChoices.file();
        out.println("file of measured choices: " + (f == null ? "none (" + KernelChoices.noFile() + ")"
                : f + (Files.exists(f) ? "" : " (not there: run mla tune to measure the choices)")));
        if (KernelChoices.ignored() != null) out.println("ignored: " + KernelChoices.ignored());
        if (KernelChoices.measured() != null) out.println("measured: " + KernelChoices.measured() + " " + KernelChoices.measuredChoices());
        if (org.tornadomla.fast.FastExecutor.available()) out.println("this machine: " + KernelChoices.signature());
        out.println(org.tornadomla.fast.FastExecutor.kernelChoice());
    }
}
