package org.tornadomla.bench;

import org.jfree.chart.ChartUtils;
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
import org.tornadomla.io.OutputFiles;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.nio.file.Path;
import java.util.List;

/**
 * Bars per backend for each shape: GFLOP/s above, GB/s of latent read below (log scales), with the
 * machine's measured FMA throughput and memory bandwidth as reference lines.
 */
public final class BenchChart {
    private BenchChart() {
    }

    private static final Color[] PALETTE = {new Color(0x4E79A7), new Color(0xF28E2B), new Color(0x59A14F), new Color(0xB07AA1),
            new Color(0x76B7B2), new Color(0xEDC948), new Color(0xFF9DA7), new Color(0x9C755F)};

    public static void write(Path png, List<DecodeBench.Result> results, Roofline.Limits limits, String title) {
        write(png, results, limits == null ? Double.NaN : limits.gflopPerS(), "FMA peak", limits == null ? Double.NaN : limits.gbPerS(),
                "memory read bandwidth", title);
    }

    /** As above with named reference lines (NaN: none), e.g. a GPU's peaks measured by another program. */
    public static void write(Path png, List<DecodeBench.Result> results, double gflopLimit, String gflopName, double gbLimit,
                             String gbName, String title) {
        DefaultCategoryDataset flops = new DefaultCategoryDataset(), bytes = new DefaultCategoryDataset();
        for (DecodeBench.Result r : results) {
            String cat = r.shape().label();
            flops.addValue(r.gflopPerS(), r.backend(), cat);
            bytes.addValue(r.gbPerS(), r.backend(), cat);
        }
        CategoryAxis shapes = new CategoryAxis("shape (batch, heads, context, path, cache dtype)");
        shapes.setCategoryLabelPositions(CategoryLabelPositions.UP_45);
        shapes.setTickLabelFont(new Font("SansSerif", Font.PLAIN, 10));
        CombinedDomainCategoryPlot plot = new CombinedDomainCategoryPlot(shapes);
        CategoryPlot top = subplot(flops, "GFLOP/s", gflopLimit, gflopName);
        plot.add(top, 1);
        plot.add(subplot(bytes, "GB/s of latent read", gbLimit, gbName), 1);
        plot.setFixedLegendItems(top.getLegendItems());       // one legend: the backends, same colours in both plots
        JFreeChart chart = new JFreeChart(title, new Font("SansSerif", Font.BOLD, 14), plot, true);
        chart.setBackgroundPaint(Color.WHITE);
        int width = Math.max(900, 70 * flops.getColumnCount() + 250);
        OutputFiles.write(png, out -> ChartUtils.writeChartAsPNG(out, chart, width, 820));
    }

    private static CategoryPlot subplot(DefaultCategoryDataset data, String unit, double limit, String limitName) {
        LogAxis axis = new LogAxis(unit + " (log scale)");
        axis.setBase(10);
        axis.setSmallestValue(1e-3);
        axis.setNumberFormatOverride(new java.text.DecimalFormat("#,##0.###"));
        BarRenderer bars = new BarRenderer();
        for (int i = 0; i < PALETTE.length; i++) bars.setSeriesPaint(i, PALETTE[i]);
        bars.setShadowVisible(false);
        bars.setItemMargin(0.05);
        bars.setBarPainter(new org.jfree.chart.renderer.category.StandardBarPainter());
        CategoryPlot p = new CategoryPlot(data, null, axis, bars);
        p.setBackgroundPaint(new Color(248, 248, 248));
        p.setRangeGridlinePaint(Color.LIGHT_GRAY);
        double min = Double.MAX_VALUE;
        for (int r = 0; r < data.getRowCount(); r++) {
            for (int c = 0; c < data.getColumnCount(); c++) {
                Number v = data.getValue(r, c);
                if (v != null && v.doubleValue() > 0) min = Math.min(min, v.doubleValue());
            }
        }
        if (min < Double.MAX_VALUE) axis.setLowerBound(min / 3);
        if (!Double.isNaN(limit)) {
            ValueMarker m = new ValueMarker(limit, Color.RED, new BasicStroke(2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {6f, 4f}, 0f));
            m.setLabel(String.format("%s %.1f", limitName, limit));
            m.setLabelAnchor(RectangleAnchor.TOP_LEFT);
            m.setLabelTextAnchor(TextAnchor.BOTTOM_LEFT);
            m.setLabelPaint(Color.RED);
            p.addRangeMarker(m);
            axis.setUpperBound(Math.max(limit * 2, axis.getUpperBound()));
        }
        return p;
    }
}
