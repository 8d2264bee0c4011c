package org.tornadomla.bench;

import org.tornadomla.internal.Messages;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.plot.Plot;
import org.jfree.chart.title.TextTitle;
import org.tornadomla.MlaException;
import org.tornadomla.io.OutputFiles;

import java.awt.Color;
import java.awt.Font;
import java.nio.file.Path;
import java.text.DecimalFormat;
import java.util.Collection;

/**
 * The one place charts get their look and reach the disk: log axes with a tick at every power of ten, the
 * house colours and fonts, a title with a subtitle, and PNG files written through {@link OutputFiles}
 * (atomic, never over an input). Used by {@code mla bench}, {@code kv-memory}, {@code rank} and
 * {@code gpu-report}.
 */
public final class Charts {
    private Charts() {
    }

    /** Series colours (Tableau 10), the same order in every chart. */
    public static final Color[] PALETTE = {new Color(0x4E79A7), new Color(0xF28E2B), new Color(0x59A14F), new Color(0xB07AA1),
            new Color(0x76B7B2), new Color(0xEDC948), new Color(0xFF9DA7), new Color(0x9C755F), new Color(0xE15759), new Color(0xBAB0AC)};
    /**
     * The colour of a series named {@code name}: the backends the project measures keep one colour in every chart (by
     * order of appearance java-fast was blue in one chart and orange in the next); other names take a palette colour
     * from their own characters, the same in every chart too.
     */
    public static Color colour(String name) {
        String base = name.contains("/") ? name.substring(0, name.indexOf('/')) : name;
        int k = switch (base) {
            case "java-fast" -> 0;
            case "java-reference" -> 1;
            case "tornado" -> 2;
            default -> Math.floorMod(name.hashCode(), PALETTE.length);
        };
        return PALETTE[k];
    }

    public static final Color PLOT_BACKGROUND = new Color(248, 248, 248);
    public static final Font TITLE = new Font("SansSerif", Font.BOLD, 15), SUBTITLE = new Font("SansSerif", Font.PLAIN, 11),
            SMALL = new Font("SansSerif", Font.PLAIN, 10);

    /**
     * A log-10 axis with a labelled tick per decade (1, 10, 100 …, or 0.01, 0.1 …) and minor ticks between; where the
     * data span at most two decades ({@link #decades}), labels at 2 and 5 of each decade too, so that bars between
     * two labels can be read.
     */
    public static LogAxis logAxis(String label, String format) {
        LogAxis axis = new LogAxis(label) {
            @Override
            public java.util.List refreshTicks(java.awt.Graphics2D g2, org.jfree.chart.axis.AxisState state,
                                               java.awt.geom.Rectangle2D dataArea, org.jfree.chart.ui.RectangleEdge edge) {
                java.util.List ticks = super.refreshTicks(g2, state, dataArea, edge);
                double lo = getLowerBound(), hi = getUpperBound();
                if (!(lo > 0) || hi / lo > 100.0001) return ticks;
                java.util.List<Object> more = new java.util.ArrayList<>(ticks);
                DecimalFormat f = (DecimalFormat) getNumberFormatOverride();
                boolean vertical = org.jfree.chart.ui.RectangleEdge.isLeftOrRight(edge);
                for (double decade = Math.pow(10, Math.floor(Math.log10(lo))); decade < hi; decade *= 10) {
                    for (double m : new double[] {2, 5}) {
                        double v = decade * m;
                        if (v <= lo || v >= hi) continue;
                        more.add(new org.jfree.chart.axis.NumberTick(org.jfree.chart.axis.TickType.MAJOR, v, f == null ? Double.toString(v) : f.format(v),
                                vertical ? org.jfree.chart.ui.TextAnchor.CENTER_RIGHT : org.jfree.chart.ui.TextAnchor.TOP_CENTER,
                                vertical ? org.jfree.chart.ui.TextAnchor.CENTER_RIGHT : org.jfree.chart.ui.TextAnchor.TOP_CENTER, 0.0));
                    }
                }
                return more;
            }
        };
        axis.setBase(10);
        axis.setTickUnit(new NumberTickUnit(1));              // one decade per labelled tick: round numbers only
        axis.setMinorTickCount(9);
        axis.setMinorTickMarksVisible(true);
        axis.setSmallestValue(1e-6);
        axis.setNumberFormatOverride(new DecimalFormat(format));
        return axis;
    }

    /** Lower and upper bounds of a log axis around [min, max] (both > 0), padded to whole decades. */
    public static void decades(LogAxis axis, double min, double max) {
        if (!(min > 0) || !(max >= min)) return;
        axis.setRange(Math.pow(10, Math.floor(Math.log10(min))), Math.pow(10, Math.ceil(Math.log10(max * 1.0001))));
    }

    /**
     * As {@link #decades}, for bars, which a log axis draws from its lower bound: where the smallest value lies less
     * than a factor of 2 above its decade, the axis starts a decade lower, so that its bar shows (a bar of 1.01 on
     * an axis from 1 has no length).
     */
    public static void barDecades(LogAxis axis, double min, double max) {
        if (!(min > 0) || !(max >= min)) return;
        double lower = Math.pow(10, Math.floor(Math.log10(min)));
        if (min < 2 * lower) lower /= 10;
        axis.setRange(lower, Math.pow(10, Math.ceil(Math.log10(max * 1.0001))));
    }

    /** A chart of {@code plot} with a title, an optional subtitle and a legend, on white. */
    public static JFreeChart chart(String title, String subtitle, Plot plot, boolean legend) {
        JFreeChart c = new JFreeChart(title, TITLE, plot, legend);
        if (subtitle != null && !subtitle.isEmpty()) {
            TextTitle t = new TextTitle(subtitle, SUBTITLE);
            t.setPaint(Color.DARK_GRAY);
            c.addSubtitle(t);
        }
        c.setBackgroundPaint(Color.WHITE);
        c.setPadding(new org.jfree.chart.ui.RectangleInsets(6, 6, 6, 40));   // room for the last tick label of a log axis
        return c;
    }

    /** The processor's model name from /proc/cpuinfo, or the JVM's arch where there is none. */
    public static String cpuModel() {
        String name = org.tornadomla.internal.CpuInfo.field("model name");
        return name.isEmpty() ? System.getProperty("os.arch") : name;
    }

    /**
     * This CPU for a CSV's device column and the like: its model, family and model numbers where the OS gives them, and
     * the CPUs this JVM sees ("AMD EPYC (family 26 model 2) 2 CPUs").
     */
    public static String cpu() {
        String family = org.tornadomla.internal.CpuInfo.field("cpu family"), model = org.tornadomla.internal.CpuInfo.field("model");
        return cpuModel() + (family.isEmpty() ? "" : " (family " + family + " model " + model + ")") + " " + Runtime.getRuntime().availableProcessors() + " CPUs";
    }

    /** Where a chart's figures were measured: "AMD EPYC, 2 CPUs, 2026-12-07" (UTC), for its subtitle. */
    public static String machine() {
        return cpuModel() + ", " + Runtime.getRuntime().availableProcessors() + " CPUs, " + java.time.LocalDate.now(java.time.ZoneOffset.UTC);
    }

    /**
     * The checks of a chart's path before any work: a .png name (the charts are PNG, and a .svg or .jpg name would
     * hold PNG bytes), and an existing file there only if it is a PNG (a chart written before).
     */
    public static void checkPng(String option, Path png) {
        String name = png.getFileName() == null ? "" : png.getFileName().toString();
        if (!name.toLowerCase(java.util.Locale.ROOT).endsWith(".png")) {
            throw new MlaException(option + " writes a PNG image: name a .png file, found " + Messages.quote(name));
        }
        OutputFiles.checkOwn(option, png, "a PNG image", head -> head.length >= 8 && (head[0] & 0xff) == 0x89 && head[1] == 'P' && head[2] == 'N' && head[3] == 'G');
        requireFonts(option);
    }

    /** Why this JVM cannot draw a chart's text ("" : it can), worked out on the first chart. */
    private static volatile String fontProblem;

    /**
     * Refuses, in one line, a JVM that finds no font to draw a chart's text with: a container or slim image without
     * font packages, where Java's font code throws an Error ("No physical fonts found") or a RuntimeException
     * ("Fontconfig head is null") at the first text it draws. Checked before any measuring ({@link #checkPng}), so a
     * long run does not end in that error; the answer is kept for the JVM's later charts.
     */
    static void requireFonts(String option) {
        String why = fontProblem;
        if (why == null) fontProblem = why = problem(Charts::drawText);
        refuse(option, why);
    }

    /** As {@link #requireFonts(String)} with {@code draw} standing for the drawing of a chart's text (tests). */
    static void requireFonts(String option, Runnable draw) {
        refuse(option, problem(draw));
    }

    private static void refuse(String option, String why) {
        if (!why.isEmpty()) {
            boolean isOption = option.startsWith("--");
            throw new MlaException((isOption ? option + ": a chart" : option) + " has text, and this JVM found no font to draw it with (" + why
                    + "); install fonts (on Debian or Ubuntu: fontconfig and fonts-dejavu-core)" + (isOption ? ", or leave " + option + " out" : ""));
        }
    }

    /** What went wrong when {@code draw} ran, in one line, or "" when nothing did. */
    private static String problem(Runnable draw) {
        try {
            draw.run();
            return "";
        } catch (RuntimeException | Error e) {
            String m = e.getMessage();
            return m == null || m.isBlank() ? e.getClass().getSimpleName() : Messages.oneLine(m);
        }
    }

    /** Draws a little text in the charts' fonts on an image in memory: what a chart needs of the fonts. */
    private static void drawText() {
        java.awt.image.BufferedImage image = new java.awt.image.BufferedImage(8, 8, java.awt.image.BufferedImage.TYPE_INT_RGB);
        java.awt.Graphics2D g = image.createGraphics();
        try {
            g.setFont(TITLE);
            g.drawString("MLA 0.1", 0, 8);
            g.setFont(SMALL);
            g.getFontMetrics().stringWidth("1,000 ms");
        } finally {
            g.dispose();
        }
    }

    /** Writes the chart as a PNG of width × height pixels, atomically, refusing to overwrite any of {@code inputs}. */
    public static void writePng(Path png, Collection<Path> inputs, JFreeChart chart, int width, int height) {
        requireFonts("the chart " + png);
        OutputFiles.write(png, inputs, out -> ChartUtils.writeChartAsPNG(out, chart, width, height));
    }
}
