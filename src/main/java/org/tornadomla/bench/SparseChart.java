package org.tornadomla.bench;

import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

import java.awt.BasicStroke;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The chart of {@code mla bench --sparse}: ms per decode step against context (log-log), dense dashed, sparse solid, one colour per backend, dtype and batch. */
public final class SparseChart {
    private SparseChart() {
    }

    /** The chart of {@code results}; {@code where} (the machine, the devices and the day, or null) heads the subtitle. */
    public static void write(Path png, List<SparseBench.Result> results, String title, String where) {
        Map<String, XYSeries[]> series = new LinkedHashMap<>();
        double min = Double.MAX_VALUE, max = 0, tMin = Double.MAX_VALUE, tMax = 0;
        for (SparseBench.Result r : results) {
            String key = r.backend() + " " + r.dtype() + " B" + r.batch();
            XYSeries[] s = series.computeIfAbsent(key, k -> new XYSeries[] {new XYSeries(k + " dense"), new XYSeries(k + " sparse")});
            s[0].add(r.context(), r.denseMs());
            s[1].add(r.context(), r.sparseMs());
            min = Math.min(min, Math.min(r.denseMs(), r.sparseMs()));
            max = Math.max(max, Math.max(r.denseMs(), r.sparseMs()));
            tMin = Math.min(tMin, r.context());
            tMax = Math.max(tMax, r.context());
        }
        XYSeriesCollection data = new XYSeriesCollection();
        XYLineAndShapeRenderer lines = new XYLineAndShapeRenderer(true, true);
        int i = 0;
        for (Map.Entry<String, XYSeries[]> e : series.entrySet()) {
            XYSeries[] s = e.getValue();
            for (int k = 0; k < 2; k++) {
                data.addSeries(s[k]);
                lines.setSeriesPaint(i, Charts.colour(e.getKey()));
                lines.setSeriesStroke(i, k == 0 ? new BasicStroke(2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {6f, 4f}, 0f)
                        : new BasicStroke(2f));
                i++;
            }
        }
        LogAxis context = Charts.logAxis("context (tokens, log)", "#,##0");
        Charts.decades(context, tMin, tMax);
        LogAxis ms = Charts.logAxis("ms per decode step (log)", "#,##0.###");
        Charts.decades(ms, min, max);
        XYPlot plot = new XYPlot(data, context, ms, lines);
        plot.setBackgroundPaint(Charts.PLOT_BACKGROUND);
        JFreeChart chart = Charts.chart(title, (where == null || where.isEmpty() ? "" : where + "\n") + "a decode step of the whole layer; dense dashed, sparse (indexer + top-k attention) solid; lower is better",
                plot, true);
        Charts.writePng(png, List.of(), chart, 1100, 700);
    }
}
