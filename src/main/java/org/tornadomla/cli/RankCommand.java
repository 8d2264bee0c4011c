package org.tornadomla.cli;

import org.tornadomla.internal.Messages;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.CombinedDomainXYPlot;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;
import org.tornadomla.internal.Memory;
import org.tornadomla.MlaException;
import org.tornadomla.io.OutputFiles;
import org.tornadomla.analysis.LowRank;
import org.tornadomla.analysis.MhaToMla;
import org.tornadomla.bench.Charts;
import org.tornadomla.weights.MlaWeights;
import org.tornadomla.weights.Weight;
import org.tornadomla.weights.SafeTensorsWriter;
import org.tornadomla.weights.TensorInfo;
import org.tornadomla.weights.TensorSource;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/** How low-rank a layer's keys and values are, and an MHA layer converted to MLA form by joint SVD. */
@Command(name = "rank", mixinStandardHelpOptions = true,
        description = "Singular value spectrum, effective rank and rank-r reconstruction error of a layer's key/value "
                + "projections: [k_proj; v_proj] of an MHA/GQA layer or kv_b_proj of an MLA layer. --to-mla r writes the "
                + "MLA-form factors of an MHA layer (joint SVD, data-free) and reports the attention-output error. "
                + "--generate writes an MHA layer with a planted rank to try it on.")
public final class RankCommand implements Callable<Integer> {
    @Option(names = "--weights", description = "safetensors file, index.json or checkpoint directory")
    Path weights;

    @Option(names = "--layer", defaultValue = "0", description = "layer index (default: ${DEFAULT-VALUE})")
    int layer;

    @Option(names = "--energy", split = ",", defaultValue = "0.9,0.99,0.999", description = "energy fractions for the effective rank (default: ${DEFAULT-VALUE})")
    List<Double> energy;

    @Option(names = "--ranks", split = ",", description = "ranks r for the reconstruction-error sweep (default: powers of two)")
    List<Integer> ranks;

    @Option(names = "--to-mla", description = "write the rank-r MLA-form factors of an MHA/GQA layer to --output")
    Integer toMla;

    @Option(names = "--output", description = "safetensors file for --to-mla or --generate (folders made as needed)")
    Path output;

    @Option(names = "--heads", description = "query heads of an MHA/GQA layer (for --to-mla's attention error)")
    Integer heads;

    @Option(names = "--head-dim", defaultValue = "128", description = "head dimension of an MHA/GQA layer (default: ${DEFAULT-VALUE})")
    int headDim;

    @Option(names = "--chart", description = "PNG: the singular value spectrum and the error against rank (folders made as needed)")
    Path chart;

    @Option(names = "--generate", description = "write an MHA layer with a planted rank to --output instead of analysing one")
    boolean generate;

    @Option(names = "--hidden", defaultValue = "512", description = "--generate: hidden size (default: ${DEFAULT-VALUE})")
    int hidden;

    @Option(names = "--kv-heads", defaultValue = "8", description = "--generate: key/value heads (default: ${DEFAULT-VALUE})")
    int kvHeads;

    @Option(names = "--planted-rank", defaultValue = "48", description = "--generate: rank of [k_proj; v_proj] (default: ${DEFAULT-VALUE})")
    int plantedRank;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    /** Largest side of the Gram matrix analysed (its eigendecomposition is O(n³) in double precision). */
    static final int MAX_GRAM = 16384;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        if (headDim < 1 || (heads != null && heads < 1)) throw new MlaException("--heads and --head-dim must be >= 1");
        if (heads != null && toMla == null) throw new MlaException("--heads goes with --to-mla (the query heads of its attention-error check)");
        if (generate) return generate(out);
        if (output != null && toMla == null) throw new MlaException("--output goes with --to-mla or --generate");
        if (weights == null) throw new MlaException("--weights is required (or --generate --output FILE to make a layer to analyse)");
        if (toMla != null && output == null) throw new MlaException("--to-mla needs --output FILE");
        if (layer < 0) throw new MlaException("--layer must be >= 0, found " + layer);
        for (double e : energy) {
            if (!(e > 0 && e <= 1)) throw new MlaException("--energy fractions must be in (0, 1], found " + e);
        }
        String p = MlaWeights.prefix(layer);
        float[] m, wk = null, wv = null;
        int rows, cols;
        String what;
        List<Path> inputs = new ArrayList<>();
        try (TensorSource src = TensorSource.open(weights)) {
            inputs.addAll(src.files());
            if (output != null) checkOutput(inputs);
            if (chart != null) {
                OutputFiles.check(chart, inputs);
                Charts.checkPng("--chart", chart);
            }
            if (output != null && chart != null && OutputFiles.sameTarget(output, chart)) {
                throw new MlaException("--output and --chart name the same file " + output);
            }
            src.requireLayer(layer);
            TensorInfo kvb = src.info(p + "kv_b_proj.weight"), k = src.info(p + "k_proj.weight"), v = src.info(p + "v_proj.weight");
            if (kvb != null) {
                if (toMla != null) throw new MlaException("--to-mla converts an MHA/GQA layer; " + p + "kv_b_proj.weight is already MLA");
                long[] shape = matrix(kvb);
                rows = (int) shape[0];
                cols = (int) shape[1];
                m = Weight.read(src, kvb.name(), shape).toFloats();     // F8_E4M3 with its block scales, or floats; checked finite
                what = "kv_b_proj " + kvb.shapeString() + " (MLA: rank ≤ kv_lora_rank " + cols + ")";
            } else if (k != null && v != null) {
                k.requireShape(v.shape());
                long[] shape = matrix(k);
                int kvRows = (int) shape[0];
                cols = (int) shape[1];
                rows = Memory.arrayLength(2L * kvRows, "[k_proj; v_proj] rows");
                if (toMla != null && heads != null) {
                    int kvh = kvRows / headDim;
                    if (kvh < 1 || kvh * headDim != kvRows || heads % kvh != 0) {
                        throw new MlaException("--heads " + heads + " and --head-dim " + headDim + " do not fit k_proj's " + kvRows + " rows");
                    }
                    Memory.require(8L * 32 * heads * headDim + 8L * 4 * 32 * kvRows, "the attention-output error of --heads " + heads);
                }
                m = new float[Memory.arrayLength((long) rows * cols, "[k_proj; v_proj]")];
                wk = finite(k.name(), src.readFloats(k.name()));
                wv = finite(v.name(), src.readFloats(v.name()));
                System.arraycopy(wk, 0, m, 0, wk.length);
                System.arraycopy(wv, 0, m, wk.length, wv.length);
                what = "[k_proj; v_proj] " + Messages.shape(rows, cols) + " (MHA/GQA)";
            } else {
                throw new MlaException("layer " + layer + " has neither " + p + "kv_b_proj.weight nor " + p + "k_proj.weight and v_proj.weight");
            }
        }
        int n = Math.min(rows, cols);
        if (n > MAX_GRAM) throw new MlaException("the matrix is " + rows + " × " + cols + "; rank analyses matrices with a side of at most " + MAX_GRAM);
        Memory.require(8L * rows * cols + 8L * 4 * n * n, "the rank analysis of a " + rows + " × " + cols + " matrix");
        if (ranks != null) {
            for (int r : ranks) if (r < 1 || r > n) throw new MlaException("--ranks must be in 1 … " + n + ", found " + r);
        }
        if (toMla != null && (toMla < 1 || toMla > n)) throw new MlaException("--to-mla rank must be in 1 … " + n + ", found " + toMla);
        out.printf("rank of %s, layer %d%n", what, layer);
        long t0 = System.nanoTime();
        ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "rank-progress");
            t.setDaemon(true);
            return t;
        });
        ticker.scheduleAtFixedRate(() -> {
            out.printf("  ... still working, %.0f s%n", (System.nanoTime() - t0) / 1e9);
            out.flush();
        }, 5, 5, TimeUnit.SECONDS);
        LowRank lr;
        try {
            lr = new LowRank(m, rows, cols, line -> {
                out.printf("  %s%n", line);
                out.flush();
            });
        } catch (org.apache.commons.math3.exception.MathRuntimeException e) {
            throw new MlaException("the eigendecomposition failed (" + e.getMessage() + ")", e);
        } finally {
            ticker.shutdownNow();
        }
        out.printf("  done in %.1f s%n%n", (System.nanoTime() - t0) / 1e9);
        out.printf("singular values: σ1 %.4g, σ%d %.4g, σ%d %.4g%n", lr.sigma[0], Math.min(n, 16), lr.sigma[Math.min(n, 16) - 1], n, lr.sigma[n - 1]);
        for (double e : energy) out.printf("effective rank at %.1f%% of the energy: %d of %d%n", 100 * e, lr.effectiveRank(e), n);
        List<Integer> rs = ranks != null ? ranks : powersOfTwo(n);
        out.printf("%nrank r   ||M − M_r||_F / ||M||_F%n");
        for (int r : rs) out.printf("%6d   %.3e%n", r, lr.relativeError(r));
        if (chart != null) {
            writeChart(chart, inputs, lr, what);
            out.printf("wrote %s%n", chart);
        }
        if (toMla != null) {
            int kvRows = rows / 2;
            MhaToMla.Factors f = MhaToMla.factors(lr, toMla, kvRows);
            new SafeTensorsWriter().metadata(OutputFiles.WRITTEN_BY, "mla rank").metadata("converted_from", "joint SVD of [k_proj; v_proj], rank " + toMla)
                    .add(p + "kv_a_proj.weight", new long[] {toMla, cols}, f.wDkv())
                    .add(p + "k_up_proj.weight", new long[] {kvRows, toMla}, f.wUk())
                    .add(p + "v_up_proj.weight", new long[] {kvRows, toMla}, f.wUv()).write(output, inputs);
            out.printf("%nwrote %s: W_DKV kv_a_proj [%d, %d], W_UK k_up_proj [%d, %d], W_UV v_up_proj [%d, %d]; cache per token and layer %d numbers instead of %d%n",
                    output, toMla, cols, kvRows, toMla, kvRows, toMla, toMla, rows);
            if (heads != null) {
                double err = MhaToMla.outputError(wk, wv, f, cols, heads, kvRows / headDim, headDim, 32, 7);   // heads checked above to fit
                out.printf("attention-output error on 32 random tokens (no RoPE): %.3e relative to the original layer%n", err);
            } else {
                out.printf("(pass --heads and --head-dim to measure the attention-output error)%n");
            }
        }
        return 0;
    }

    /** The tensor's shape, which must be a matrix of at least 1 × 1 and fit one Java array. */
    private static long[] matrix(TensorInfo t) {
        long[] shape = t.shape();
        if (shape.length != 2 || shape[0] < 1 || shape[1] < 1 || t.numel() > Memory.MAX_ARRAY) {
            throw new MlaException("tensor " + Messages.quote(t.name()) + ": expected a non-empty matrix, found " + t.shapeString());
        }
        return shape;
    }

    private static float[] finite(String name, float[] a) {
        for (int i = 0; i < a.length; i++) {
            if (!Float.isFinite(a[i])) throw new MlaException("tensor " + Messages.quote(name) + " holds " + a[i] + " at flat index " + i + "; weights must be finite");
        }
        return a;
    }

    private static List<Integer> powersOfTwo(int n) {
        List<Integer> r = new ArrayList<>();
        for (int k = 1; k < n; k *= 2) r.add(k);
        r.add(n);
        return r;
    }

    /** --output may be written: not an input, and new or a file mla rank wrote (--to-mla or --generate), never a checkpoint. */
    private void checkOutput(List<Path> inputs) {
        OutputFiles.check(output, inputs);
        OutputFiles.checkOwn("--output", output, "a file mla rank wrote",
                head -> OutputFiles.writtenBy(head, "mla rank", "\"planted_rank\":", "\"converted_from\":"));
    }

    /** An MHA/GQA layer whose [k_proj; v_proj] has rank {@code plantedRank} (plus 1e-4 noise). */
    private Integer generate(PrintWriter out) {
        if (output == null) throw new MlaException("--generate needs --output FILE");
        if (hidden < 1 || kvHeads < 1) throw new MlaException("--hidden and --kv-heads must be >= 1, found " + hidden + " and " + kvHeads);
        checkOutput(List.of());
        int kvRows = Memory.arrayLength((long) kvHeads * headDim, "k_proj rows");
        Memory.arrayLength(2L * kvRows * hidden, "[k_proj; v_proj]");
        Memory.require(4L * 2 * (2L * kvRows * hidden) + 4L * plantedRank * (2L * kvRows + hidden), "the generated layer");
        if (plantedRank < 1 || plantedRank > Math.min(2 * kvRows, hidden)) {
            throw new MlaException("--planted-rank must be in 1 … " + Math.min(2 * kvRows, hidden) + ", found " + plantedRank);
        }
        float[][] kv = MhaToMla.plantedRankLayer(kvRows, hidden, plantedRank, 1);
        String p = MlaWeights.prefix(0);
        new SafeTensorsWriter().metadata(OutputFiles.WRITTEN_BY, "mla rank").metadata("planted_rank", Integer.toString(plantedRank))
                .add(p + "k_proj.weight", new long[] {kvRows, hidden}, kv[0])
                .add(p + "v_proj.weight", new long[] {kvRows, hidden}, kv[1])
                .write(output, List.of());
        out.printf("wrote %s: k_proj and v_proj [%d, %d] (%d KV heads × %d), [k_proj; v_proj] of rank %d plus 1e-4 noise%n",
                output, kvRows, hidden, kvHeads, headDim, plantedRank);
        return 0;
    }

    private static void writeChart(Path png, List<Path> inputs, LowRank lr, String what) {
        XYSeries s = new XYSeries("σ_i"), e = new XYSeries("||M − M_r||_F / ||M||_F");
        for (int i = 0; i < lr.sigma.length; i++) {
            if (lr.sigma[i] > 0) s.add(i + 1, lr.sigma[i]);
            double err = lr.relativeError(i + 1);
            if (err > 0) e.add(i + 1, err);
        }
        CombinedDomainXYPlot plot = new CombinedDomainXYPlot(new NumberAxis("index i / rank r"));
        plot.add(sub(new XYSeriesCollection(s), "singular value (log)", 0), 1);
        plot.add(sub(new XYSeriesCollection(e), "relative error (log)", 1), 1);
        Charts.writePng(png, inputs, Charts.chart("Low-rank structure of " + what,
                "above: the singular values; below: the error of the best rank-r approximation", plot, true), 900, 700);
    }

    private static XYPlot sub(XYSeriesCollection data, String label, int colour) {
        LogAxis axis = Charts.logAxis(label, "0.#E0");
        double min = Double.MAX_VALUE, max = 0;
        for (int i = 0; i < data.getSeries(0).getItemCount(); i++) {
            double v = data.getSeries(0).getY(i).doubleValue();
            min = Math.min(min, v);
            max = Math.max(max, v);
        }
        Charts.decades(axis, min, max);
        XYLineAndShapeRenderer r = new XYLineAndShapeRenderer(true, false);
        r.setSeriesPaint(0, Charts.PALETTE[colour]);
        XYPlot p = new XYPlot(data, null, axis, r);
        p.setBackgroundPaint(Charts.PLOT_BACKGROUND);
        return p;
    }
}
