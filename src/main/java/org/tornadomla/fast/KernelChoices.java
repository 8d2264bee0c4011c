package org.tornadomla.fast;

import org.tornadomla.internal.Messages;
import jdk.incubator.vector.FloatVector;
import org.tornadomla.MlaException;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeSet;

/**
 * The kernel choices java-fast makes per machine, and where each comes from. A choice (touch a tile before the
 * values walk it, runs of two tiles, …) is decided, in this order, by
 * <ol>
 *   <li>its system property, {@code -Dtornadomla.fast.touch=true|false} and the like (A/B runs on one machine);</li>
 *   <li>the file {@code mla tune} wrote after measuring both settings on this machine ({@link #file()}), where the
 *   file names this CPU and this JVM's vector width ({@link #signature()}): a file from another machine is
 *   ignored, and so is a file with a line this class does not know, as a whole;</li>
 *   <li>what the CPU's vendor and family suggest, as measured on the machines the project has run on
 *   (docs/cpu-kernels.md).</li>
 * </ol>
 * The kernels read the choices once, when their classes load: a file written later applies to the next JVM.
 */
public final class KernelChoices {
    private KernelChoices() {
    }

    /** The choices {@code mla tune} measures, in the order it measures them (later ones depend on earlier ones). */
    public static final List<String> TUNED = List.of("tornadomla.fast.touch", "tornadomla.fast.valuesRuns",
            "tornadomla.fast.absorbStrips", "tornadomla.fast.halfScores", "tornadomla.fast.pairScores", "tornadomla.fast.touchScores");

    /** The system property that names the file of measured choices, or "none" for no file. */
    public static final String FILE_PROPERTY = "tornadomla.fast.choices";


    /** The file's choices that apply here, read once (empty where there is none, or it was ignored). */
    private static final Loaded LOADED = load(file(), signature());

    /** What {@link #load} found: the choices that apply, when they were measured, and why a file was ignored (or null). */
    record Loaded(Map<String, Boolean> choices, String measured, String ignored) {
    }

    /**
     * The choices each choice's rule follows ({@link #auto}): the file's value for it was measured with those as the
     * file records them. "tornadomla.fast.registers" (16 or 32, not in the file) counts as changed wherever its property
     * is set.
     */
    public static final Map<String, List<String>> DEPENDS_ON = Map.of(
            "tornadomla.fast.valuesRuns", List.of("tornadomla.fast.touch"),
            "tornadomla.fast.pairScores", List.of("tornadomla.fast.halfScores", "tornadomla.fast.registers"),
            "tornadomla.fast.touchScores", List.of("tornadomla.fast.touch", "tornadomla.fast.halfScores", "tornadomla.fast.pairScores",
                    "tornadomla.fast.registers"));

    /**
     * A choice: the system property's value where it is "true" or "false", else the measured value from {@link
     * #file()} where the choices it depends on ({@link #DEPENDS_ON}, decided before it as the kernels' classes load)
     * came out as the file records them, else {@code auto}. So a -D that changes the touch brings back the rule for
     * the runs of two tiles, as it does without a file. Any other property value is ignored: a bad -D switch must not
     * stop the backend's classes loading.
     */
    static boolean choice(String property, boolean auto) {
        String why = decide(property, LOADED.choices(), DECIDED);
        ORIGINS.put(property, why);
        boolean value = switch (why) {
            case "-D" -> Boolean.parseBoolean(System.getProperty(property));
            case "measured" -> LOADED.choices().get(property);
            default -> auto;
        };
        DECIDED.put(property, value);
        return value;
    }

    /**
     * What decides a choice: "-D" (its property is true or false), "measured" (the file has it, and the choices it
     * depends on came out, in {@code decided}, as the file has them), else "machine" (the rule).
     */
    static String decide(String property, Map<String, Boolean> file, Map<String, Boolean> decided) {
        String v = System.getProperty(property, "");
        if (v.equals("true") || v.equals("false")) return "-D";
        if (!file.containsKey(property)) return "machine";
        for (String d : DEPENDS_ON.getOrDefault(property, List.of())) {
            if (TUNED.contains(d) ? !java.util.Objects.equals(decided.get(d), file.get(d)) : System.getProperty(d) != null) return "machine";
        }
        return "measured";
    }

    /**
     * Every {@code -Dtornadomla.fast.*} property of this JVM names something java-fast reads and holds a value it
     * takes; else one line naming it. Checked when an executor is made rather than where the kernels' classes read
     * them (a class that fails to load would hide the message), so that a mistyped switch of an A/B run is refused
     * instead of leaving both runs on the default.
     */
    public static void checkProperties() {
        List<String> booleans = new java.util.ArrayList<>(TUNED);
        booleans.add(PREFIX + "reproducible");
        for (String name : new java.util.TreeSet<>(System.getProperties().stringPropertyNames())) {
            if (!name.startsWith(PREFIX)) continue;
            String v = System.getProperty(name), key = name.substring(PREFIX.length());
            String expected;
            if (booleans.contains(name)) expected = v.equals("true") || v.equals("false") ? null : "true or false";
            else if (key.equals("registers")) expected = v.equals("16") || v.equals("32") ? null : "16 or 32";
            else if (key.equals("spinMs")) expected = v.matches("[0-9]{1,9}") ? null : "a whole number of milliseconds, 0 or more";
            else if (key.equals(FILE_PROPERTY.substring(PREFIX.length()))) expected = null;       // a file, or none
            else {
                List<String> known = new java.util.ArrayList<>();
                for (String b : booleans) known.add(b.substring(PREFIX.length()));
                known.addAll(List.of("registers", "spinMs", FILE_PROPERTY.substring(PREFIX.length())));
                throw new MlaException("unknown property -D" + Messages.escape(name) + ": java-fast reads " + PREFIX + "{" + String.join(", ", known) + "}");
            }
            if (expected != null) throw new MlaException("-D" + name + "=" + Messages.quote(v) + ": expected " + expected);
        }
    }

    private static final String PREFIX = "tornadomla.fast.";

    /** The value of each choice made so far in this JVM, for the choices that depend on it. */
    private static final Map<String, Boolean> DECIDED = new java.util.concurrent.ConcurrentHashMap<>();

    /** What decided each choice made so far in this JVM ({@link #decide}). */
    private static final Map<String, String> ORIGINS = new java.util.concurrent.ConcurrentHashMap<>();

    /** Where a choice came from: "-D", "measured" (by {@code mla tune}) or "machine" (vendor and family). */
    static String origin(String property) {
        return ORIGINS.getOrDefault(property, "machine");
    }

    /**
     * The file of measured choices: {@code -Dtornadomla.fast.choices=FILE}, else {@code
     * $XDG_CACHE_HOME/tornadomla/java-fast-choices.properties}, else the same under the home directory's {@code .cache}
     * ({@link #cacheBase}); null with {@code -Dtornadomla.fast.choices=none}, or where there is no home directory to
     * put it under ({@link #noFile()} says which).
     */
    public static Path file() {
        String p = System.getProperty(FILE_PROPERTY, "");
        if (p.equals("none")) return null;
        if (!p.isEmpty()) return Path.of(p);
        Path base = cacheBase(System.getenv("XDG_CACHE_HOME"), System.getenv("HOME"), System.getProperty("user.home"));
        return base == null ? null : base.resolve("tornadomla").resolve("java-fast-choices.properties");
    }

    /** Why {@link #file()} is null, in words for a message. */
    public static String noFile() {
        return System.getProperty(FILE_PROPERTY, "").equals("none") ? "-D" + FILE_PROPERTY + "=none"
                : "no home directory to keep it under: HOME and XDG_CACHE_HOME are unset or not absolute paths, and Java's user.home is "
                + org.tornadomla.internal.Messages.quote(String.valueOf(System.getProperty("user.home")));
    }

    /**
     * The folder the file of choices goes under: {@code xdg} (XDG_CACHE_HOME) where it is an absolute path, else
     * {@code .cache} in {@code home} (HOME), else in {@code userHome} (Java's user.home), each only where absolute;
     * null where none is. A relative one would put the file under whichever folder a program ran in (a user ID
     * without a passwd entry, as in a container run with --user, has user.home "?"), and the XDG spec ignores it.
     */
    static Path cacheBase(String xdg, String home, String userHome) {
        Path x = absolute(xdg);
        if (x != null) return x;
        for (String h : new String[] {home, userHome}) {
            Path p = absolute(h);
            if (p != null) return p.resolve(".cache");
        }
        return null;
    }

    private static Path absolute(String s) {
        if (s == null || s.isBlank()) return null;
        try {
            Path p = Path.of(s);
            return p.isAbsolute() ? p : null;
        } catch (java.nio.file.InvalidPathException e) {
            return null;
        }
    }

    /**
     * This machine as a file of measured choices must name it: the CPU's vendor, family, model and model name from
     * /proc/cpuinfo, the vector width this JVM chose (a JVM held to AVX2 runs other kernels) and the processors it
     * sees.
     */
    public static String signature() {
        return cpuInfo("vendor_id") + " | family " + cpuInfo("cpu family") + " | model " + cpuInfo("model") + " | "
                + cpuInfo("model name") + " | " + FloatVector.SPECIES_PREFERRED.vectorBitSize() + "-bit vectors | "
                + Runtime.getRuntime().availableProcessors() + " processors";
    }

    /** When the choices in use were measured (the file's "measured" line), or null where none came from a file. */
    public static String measured() {
        return LOADED.choices().isEmpty() ? null : LOADED.measured();
    }

    /** Why the file of measured choices was not used (it exists but is unreadable, corrupt or of another machine), or null. */
    public static String ignored() {
        return LOADED.ignored();
    }

    /** The measured choices in use (property → value), in {@link #TUNED}'s order. */
    public static Map<String, Boolean> measuredChoices() {
        return LOADED.choices();
    }

    /** What a file of {@code mla tune} holds: the machine it was measured on, when, and the choices. */
    public record Saved(String signature, String measured, Map<String, Boolean> choices) {
    }

    /**
     * Reads a file {@code mla tune} wrote. An {@link MlaException} names what is wrong where it cannot be read, has no
     * signature line (it is not such a file), or has a line other than signature, measured and {@link #TUNED}'s
     * choices, or a choice other than true or false.
     */
    public static Saved read(Path file) {
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            p.load(r);
        } catch (java.nio.charset.CharacterCodingException e) {
            throw new MlaException(file + " is not UTF-8 text: not a file of mla tune");
        } catch (IOException | RuntimeException e) {
            throw new MlaException(file + " could not be read as a file of mla tune (" + e + ")");
        }
        return parse(p, file.toString());
    }

    static Saved parse(Properties p, String name) {
        String sig = p.getProperty("signature");
        if (sig == null) throw new MlaException(name + " has no signature line: not a file of mla tune");
        for (String key : new TreeSet<>(p.stringPropertyNames())) {
            if (key.equals("signature") || key.equals("measured")) continue;
            if (!TUNED.contains(key)) throw new MlaException(name + " has an unknown line \"" + key + "\" (expected signature, measured or one of " + TUNED + ")");
            String v = p.getProperty(key).strip();
            if (!v.equals("true") && !v.equals("false")) throw new MlaException(name + ": " + key + " must be true or false, found \"" + v + "\"");
        }
        Map<String, Boolean> out = new LinkedHashMap<>();
        for (String key : TUNED) {
            if (p.getProperty(key) != null) out.put(key, Boolean.parseBoolean(p.getProperty(key).strip()));
        }
        return new Saved(sig.stripTrailing(), p.getProperty("measured", "?").stripTrailing(), Collections.unmodifiableMap(out));
    }

    /** The choices of {@code file} if it was measured on the machine {@code signature} names; else none, and why. */
    static Loaded load(Path file, String signature) {
        if (file == null || !Files.exists(file)) return new Loaded(Map.of(), null, null);
        try {
            Saved s = read(file);
            if (!s.signature().equals(signature)) {
                return new Loaded(Map.of(), null, file + " was measured on another machine: expected \"" + signature + "\", found \"" + s.signature() + "\"");
            }
            return new Loaded(s.choices(), s.measured(), null);
        } catch (MlaException e) {
            return new Loaded(Map.of(), null, e.getMessage());
        }
    }

    /**
     * Writes a file of measured choices in one step (a temporary file beside it, then moved over it), so that a JVM
     * starting meanwhile reads the old file or the new one, never half of one.
     */
    public static void write(Path file, Saved saved) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        StringBuilder b = new StringBuilder("# java-fast's kernel choices, measured on this machine by `mla tune`. Delete this file to go back to\n"
                + "# the defaults of the CPU's vendor and family; -Dtornadomla.fast.<choice>=true|false overrides a line.\n");
        b.append("signature=").append(escape(saved.signature())).append('\n');
        b.append("measured=").append(escape(saved.measured())).append('\n');
        saved.choices().forEach((k, v) -> b.append(k).append('=').append(v).append('\n'));
        Path tmp = Files.createTempFile(dir, ".java-fast-choices", ".tmp");
        try {
            Files.writeString(tmp, b, StandardCharsets.UTF_8);
            try {
                // readable by every JVM on the machine, as a file written with the default umask (a temporary file is owner-only)
                Files.setPosixFilePermissions(tmp, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
            } catch (UnsupportedOperationException e) {
                // not a POSIX file system: its defaults stand
            }
            Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    /** A value as Properties.load reads it back: backslashes doubled, a leading blank kept. */
    private static String escape(String v) {
        String e = v.replace("\\", "\\\\");
        return e.startsWith(" ") ? "\\" + e : e;
    }

    // ---- what the machine suggests for each choice (the defaults mla tune measures against) ----

    /**
     * Touch a tile in order before the values walk it (Vec.TOUCH): everywhere but on an Intel CPU, where the
     * values' own reads kept the prefetchers busy (docs/cpu-kernels.md §7).
     */
    static boolean autoTouch() {
        return !"GenuineIntel".equals(cpuInfo("vendor_id"));
    }

    /**
     * 16 heads' scores on 256-bit halves (Gemm.HALF_SCORES): nowhere by default since 2026-12-07. It was an AMD family
     * 25 CPU (Zen 4) with 512-bit vectors, where it made those scores 10–25 % faster, but it is the one kernel that puts
     * 256-bit vectors in a JVM of 512-bit ones, and in some JVMs (3 of 12 in one run) C2 then compiled 16 heads about ten
     * times slower for the whole JVM (docs/cpu-kernels.md §6). Gemm.s8x2h now keeps out of the profiles the other
     * kernels share, and no JVM of 20 collapsed after that, but a rare collapse costs more than the gain, so it is
     * opt-in ({@code -Dtornadomla.fast.halfScores=true}, or {@code mla tune} where it measures faster).
     */
    static boolean autoHalfScores() {
        return false;
    }

    /** Whether the first processor is an AMD CPU of this {@code cpu family} (25: Zen 3 and Zen 4; 26: Zen 5). */
    private static boolean amdFamily(String family) {
        return "AuthenticAMD".equals(cpuInfo("vendor_id")) && family.equals(cpuInfo("cpu family"));
    }

    /** The values and the tiled path over runs of two tiles (FastAttention.VALUES_RUN): where tiles are touched. */
    static boolean autoValuesRuns(boolean touch) {
        return touch;
    }

    /**
     * 16 heads' scores two columns a broadcast (Gemm.PAIR_SCORES): where the blocks have 32 registers and the scores do
     * not run on 256-bit halves, on an AMD family 25 CPU (with 512-bit vectors: a Zen 4), whose 512-bit FMAs run as two
     * halves and kept s16x1, one broadcast per FMA, at about 75 % of a core's peak; s8x2p ran at about 90 % there. Not
     * measured on a Zen 5 or an Intel CPU, whose FMA units are 512 bits wide (and on Intel the broadcast from a general
     * register takes the port of one of the two FMA units).
     */
    static boolean autoPairScores(boolean regs32, boolean halfScores) {
        return regs32 && !halfScores && amdFamily("25");
    }

    /**
     * A tile touched before 16 heads' scores (Gemm.TOUCH_SCORES): where tiles are touched, the blocks have 32 registers
     * and the scores run on full 512-bit vectors, but not on an AMD family 25 CPU (a Zen 4: its tiled path's 16 heads
     * ran 5–9 % faster untouched, measured with the 256-bit kernel it then ran, and level with the column pairs on
     * 2026-12-08): a Zen 5. Off, s16x1 reads rows ahead and s8x2p does not.
     */
    static boolean autoTouchScores(boolean touch, boolean regs32, boolean halfScores) {
        return touch && regs32 && !halfScores && !amdFamily("25");
    }

    /**
     * What the machine suggests for {@code property} given the values already chosen for the others (the default
     * {@code mla tune} measures the other setting against), for a JVM with {@code vectorBits}-bit vectors and
     * {@code regs32} register blocks.
     */
    public static boolean auto(String property, Map<String, Boolean> chosen, int vectorBits, boolean regs32) {
        return switch (property) {
            case "tornadomla.fast.touch" -> autoTouch();
            case "tornadomla.fast.valuesRuns" -> autoValuesRuns(chosen.get("tornadomla.fast.touch"));
            case "tornadomla.fast.absorbStrips" -> autoAbsorbStrips();
            case "tornadomla.fast.halfScores" -> autoHalfScores();
            case "tornadomla.fast.pairScores" -> autoPairScores(regs32, chosen.get("tornadomla.fast.halfScores"));
            case "tornadomla.fast.touchScores" -> autoTouchScores(chosen.get("tornadomla.fast.touch"), regs32, chosen.get("tornadomla.fast.halfScores"));
            default -> throw new IllegalArgumentException("not a kernel choice: " + property);
        };
    }

    /** One row's absorb_q in strips (FastAbsorb.STRIPS): an AMD family 26 CPU (Zen 5). */
    static boolean autoAbsorbStrips() {
        return amdFamily("26");
    }

    /** A field of the first processor in /proc/cpuinfo ("vendor_id", "cpu family", "model"), or "" where there is none. */
    static String cpuInfo(String field) {
        return org.tornadomla.internal.CpuInfo.field(field);
    }
}
