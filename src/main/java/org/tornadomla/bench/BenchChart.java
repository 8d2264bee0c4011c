package org.tornadomla.bench;

import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.CategoryAxis;
import org.jfree.chart.axis.CategoryLabelPositions;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.CombinedDomainCategoryPlot;
import org.jfree.chart.plot.ValueMarker;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.ui.RectangleAnchor;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.category.DefaultCategoryDataset;

import java.awt.BasicStroke;
import java.awt.Color;
import java.nio.file.Path;
import java.util.List;

/**
 * Bars per backend for each shape, three panels over one shape axis: ms per step, GFLOP/s and GB/s of latent
 * read (log scales, a labelled tick per decade), with the machine's measured FMA throughput and memory
 * bandwidth as reference lines on the last two.
 */
public final class BenchChart {
    private BenchChart() {
    }

    /**
     * The chart of {@code results} with this CPU's measured limits (null: none) as reference lines; {@code where} (the
     * machine, the devices and the day, or null) heads the subtitle, so that a long device name does not wrap the title.
     */
    public static void write(Path png, List<DecodeBench.Result> results, Roofline.Limits limits, String title, String where) {
        // the limits are the CPU's, measured on the JVM's threads: named so beside a TornadoVM device's bars
        write(png, results, limits == null ? Double.NaN : limits.gflopPerS(), "this CPU's FMA peak", limits == null ? Double.NaN : limits.gbPerS(),
                "this CPU's memory read bandwidth", title, where);
    }

    /** As above with named reference lines (NaN: none), e.g. a GPU's peaks measured by another program. */
    public static void write(Path png, List<DecodeBench.Result> results, double gflopLimit, String gflopName, double gbLimit,
                             String gbName, String title, String where) {
        DefaultCategoryDataset ms = new DefaultCategoryDataset(), flops = new DefaultCategoryDataset(), bytes = new DefaultCategoryDataset();
        for (DecodeBench.Result r : results) {
            String cat = r.shape().label();
            ms.addValue(r.msPerStep(), r.backend(), cat);
            flops.addValue(r.gflopPerS(), r.backend(), cat);
            bytes.addValue(r.gbPerS(), r.backend(), cat);
        }
        CategoryAxis shapes = new CategoryAxis("shape (batch, heads, context, path, cache dtype)");
        shapes.setCategoryLabelPositions(CategoryLabelPositions.UP_45);
        shapes.setTickLabelFont(Charts.SMALL);
        CombinedDomainCategoryPlot plot = new CombinedDomainCategoryPlot(shapes);
        plot.setGap(16);              // room for each panel's top tick label, drawn half above its edge (5 let it run into the panel above)
        CategoryPlot top = subplot(ms, "ms per step", "#,##0.###", Double.NaN, null, null);
        plot.add(top, 1);
        plot.add(subplot(flops, "GFLOP/s", "#,##0.###", gflopLimit, gflopName, "GFLOP/s"), 1);
        plot.add(subplot(bytes, "GB/s of latent read", "#,##0.###", gbLimit, gbName, "GB/s"), 1);
        plot.setFixedLegendItems(top.getLegendItems());       // one legend: the backends, same colours in every panel
        boolean lines = !Double.isNaN(gflopLimit) || !Double.isNaN(gbLimit);
        JFreeChart chart = Charts.chart(title, (where == null || where.isEmpty() ? "" : where + "\n")
                + "one decode step of the attention core per shape; lower is better above, "
                + "higher below" + (lines ? "; dashed lines: measured limits" : ""), plot, true);
        int width = Math.max(900, 70 * flops.getColumnCount() + 250);
        Charts.writePng(png, List.of(), chart, width, 1050);
    }

    private static CategoryPlot subplot(DefaultCategoryDataset data, String unit, String format, double limit, String limitName, String limitUnit) {
        LogAxis axis = Charts.logAxis(unit + " (log)", format);
        BarRenderer bars = new BarRenderer();
        for (int i = 0; i < data.getRowCount(); i++) bars.setSeriesPaint(i, Charts.colour(data.getRowKey(i).toString()));
        bars.setShadowVisible(false);
        bars.setItemMargin(0.05);
        bars.setBarPainter(new org.jfree.chart.renderer.category.StandardBarPainter());
        CategoryPlot p = new CategoryPlot(data, null, axis, bars);
        p.setBackgroundPaint(Charts.PLOT_BACKGROUND);
        p.setRangeGridlinePaint(Color.LIGHT_GRAY);
        double min = Double.MAX_VALUE, max = 0;
        for (int r = 0; r < data.getRowCount(); r++) {
            for (int c = 0; c < data.getColumnCount(); c++) {
                Number v = data.getValue(r, c);
                if (v != null && v.doubleValue() > 0) {
                    min = Math.min(min, v.doubleValue());
                    max = Math.max(max, v.doubleValue());
                }
            }
        }
        if (!Double.isNaN(limit)) max = Math.max(max, limit);
        Charts.barDecades(axis, min, max);
        if (!Double.isNaN(limit)) {
            ValueMarker m = new ValueMarker(limit, Color.RED, new BasicStroke(2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {6f, 4f}, 0f));
            m.setLabel(String.format(java.util.Locale.ROOT, "%s %.1f %s", limitName, limit, limitUnit));
            m.setLabelAnchor(RectangleAnchor.TOP_LEFT);
            m.setLabelTextAnchor(TextAnchor.BOTTOM_LEFT);
            m.setLabelPaint(Color.RED);
            p.addRangeMarker(m);
        }
        return p;
    }
}
