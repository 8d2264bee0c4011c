package org.tornadomla.bench;

import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.plot.Plot;
import org.jfree.chart.title.TextTitle;
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
    public static final Color PLOT_BACKGROUND = new Color(248, 248, 248);
    public static final Font TITLE = new Font("SansSerif", Font.BOLD, 15), SUBTITLE = new Font("SansSerif", Font.PLAIN, 11),
            SMALL = new Font("SansSerif", Font.PLAIN, 10);

    /** A log-10 axis with one labelled tick per decade (1, 10, 100 …, or 0.01, 0.1 …) and minor ticks between. */
    public static LogAxis logAxis(String label, String format) {
        LogAxis axis = new LogAxis(label);
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

    /** Writes the chart as a PNG of width × height pixels, atomically, refusing to overwrite any of {@code inputs}. */
    public static void writePng(Path png, Collection<Path> inputs, JFreeChart chart, int width, int height) {
        OutputFiles.write(png, inputs, out -> ChartUtils.writeChartAsPNG(out, chart, width, height));
    }
}
