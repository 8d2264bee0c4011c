package org.tornadomla.benchmarks;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code key=value} arguments of the drivers that are not JMH ({@link GeometryTasks}, {@link LayerTasks},
 * {@link SparseTasks}, {@code fast.KernelsAlone}, {@code fast.TilePhases}). {@code -h} or {@code --help} prints the
 * driver's usage and exits with 0; an unknown argument or a value that is not a number prints one line naming what
 * was expected and what was found, and exits with 2, before anything is measured.
 */
public final class DriverArgs {
    private final String driver, usage;
    private final Map<String, String> values = new LinkedHashMap<>();

    private DriverArgs(String driver, String usage) {
        this.driver = driver;
        this.usage = usage;
    }

    /**
     * The arguments of {@code driver} (its simple name), which takes {@code keys}: {@code "name="} for a
     * {@code name=value} argument, {@code "name"} for a switch. {@code usage} is the line {@code --help} prints after the java command.
     */
    public static DriverArgs parse(String driver, String usage, String[] args, String... keys) {
        DriverArgs a = new DriverArgs(driver, usage);
        List<String> known = Arrays.asList(keys);                    // "name=" or a switch's "name"
        for (String arg : args) {
            if (arg.equals("-h") || arg.equals("--help")) {
                System.out.println(a.usageLine());
                System.exit(0);
            }
            int eq = arg.indexOf('=');
            String key = eq < 0 ? arg : arg.substring(0, eq);
            if (!known.contains(eq < 0 ? key : key + "=")) a.fail("unknown argument '" + arg + "' (it takes " + String.join(", ", known) + ")");
            a.values.put(key, eq < 0 ? "" : arg.substring(eq + 1));
        }
        return a;
    }

    /** The full usage: the java command and the driver's arguments. */
    String usageLine() {
        String pkg = driver.equals("KernelsAlone") || driver.equals("TilePhases") ? "org.tornadomla.fast." : "org.tornadomla.benchmarks.";
        return "usage: java --add-modules jdk.incubator.vector -Xmx12g -cp benchmarks/target/benchmarks.jar " + pkg + driver + " " + usage;
    }

    /** The value of {@code key}, or {@code otherwise} where it was not given. */
    public String text(String key, String otherwise) {
        return values.getOrDefault(key, otherwise);
    }

    /** Whether the switch {@code key} was given. */
    public boolean has(String key) {
        return values.containsKey(key);
    }

    /** The whole number at {@code key} (at least {@code min}), or {@code otherwise}. */
    public int integer(String key, int otherwise, int min) {
        String v = values.get(key);
        return v == null ? otherwise : number(key, v, min);
    }

    /** The comma-separated whole numbers at {@code key} (each at least {@code min}), or {@code otherwise}. */
    public int[] integers(String key, int[] otherwise, int min) {
        String v = values.get(key);
        if (v == null) return otherwise;
        return Arrays.stream(v.split(",", -1)).mapToInt(s -> number(key, s, min)).toArray();
    }

    private int number(String key, String v, int min) {
        try {
            int n = Integer.parseInt(v.strip());
            if (n >= min) return n;
        } catch (NumberFormatException e) {
            // the line below says what was expected
        }
        fail(key + "= takes whole numbers of at least " + min + ", found '" + v + "'");
        return 0;
    }

    /** The attention path named {@code name} (path='s value), or the driver's usage error. */
    public org.tornadomla.attention.AttentionPath path(String name) {
        try {
            return org.tornadomla.attention.AttentionPath.parse(name);
        } catch (RuntimeException e) {
            fail(e.getMessage());
            return null;
        }
    }

    /** One line on standard error naming the mistake, and exit code 2 (a usage error). */
    public void fail(String message) {
        System.err.println(driver + ": " + message + "; " + usageLine());
        System.exit(2);
    }
}
