package org.tornadomla.cli;

import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.CategoryAxis;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.renderer.category.StandardBarPainter;
import org.tornadomla.bench.Charts;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.data.category.DefaultCategoryDataset;
import org.tornadomla.MlaException;
import org.tornadomla.io.OutputFiles;
import org.tornadomla.cache.KvMemory;
import picocli.CommandLine.Command;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.cache.PagedCacheSpec;
import org.tornadomla.config.MlaConfig;
import java.util.Locale;
import picocli.CommandLine.Option;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/** KV-cache bytes of MLA next to MHA, GQA and MQA, per token and per request, as a table and a chart. */
@Command(name = "kv-memory", mixinStandardHelpOptions = true,
        description = "KV-cache memory per token per layer, per token for the whole model and per request, for MLA "
                + "and MHA/GQA/MQA with the same attention geometry, and for common MHA/GQA models. "
                + "The arithmetic is in docs/kv-memory.md.")
public final class KvMemoryCommand implements Callable<Integer> {
    @Option(names = "--preset", split = ",", description = "models: the MLA presets " + MlaConfig.PRESET_NAMES
            + " (R1 has V3's attention config) and, to compare with, the MHA/GQA models " + KvMemory.COMPARISON_NAMES
            + " (default: all, unless --config is given)")
    List<String> presets;

    @Option(names = "--config", description = "a Hugging Face config.json (MLA when it has kv_lora_rank; otherwise MHA/GQA "
            + "from num_key_value_heads and head_dim)")
    Path config;

    @Option(names = "--dtype", split = ",", defaultValue = "bf16", description = "f32, bf16, fp8, int8; f16 too for the per-model table (default: ${DEFAULT-VALUE})")
    List<String> dtypes;

    @Option(names = "--context", defaultValue = "4096", description = "tokens per request (default: ${DEFAULT-VALUE})")
    int context;

    @Option(names = "--batch", defaultValue = "1", description = "requests (default: ${DEFAULT-VALUE})")
    int batch;

    @Option(names = "--groups", defaultValue = "8", description = "KV heads of the GQA row for MLA models (default: ${DEFAULT-VALUE})")
    int groups;

    @Option(names = "--chart", description = "write a PNG: bytes per token for the whole model, per model and scheme (folders made as needed)")
    Path chart;

    @Option(names = "--lengths", split = ",", description = "a ragged batch: each request's tokens; measures a contiguous "
            + "latent cache sized for the longest request against a paged pool holding just the requests' blocks "
            + "(MLA: --config, else DeepSeek-V3)")
    List<Integer> lengths;

    @Option(names = "--block-size", defaultValue = "64", description = "with --lengths: tokens per block (default: ${DEFAULT-VALUE})")
    int blockSize;

    @Option(names = "--devices", description = "also the cache bytes per device when one layer runs over this many devices: "
            + "tensor-parallel heads (H/D heads each, the whole latent on every device) and data-parallel attention (each device "
            + "its own requests), and what crosses between devices per step (MLA models; docs/scale-out.md)")
    Integer devices;

    @Option(names = "--host-gib", description = "also how many idle sequences of --context tokens a host pool of this many GiB "
            + "holds when their caches are offloaded (LatentCache.offload: the cache's own bytes per token, scales and a sparse "
            + "model's indexer keys included; MLA models)")
    Double hostGib;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    /**
     * --lengths: the storage of real caches (one layer), contiguous for the longest request against a paged pool
     * of exactly the requests' blocks, per dtype; whole-model figures are that × the layers.
     */
    private int ragged(PrintWriter out) {
        if (lengths.isEmpty() || lengths.stream().anyMatch(l -> l == null || l < 1)) throw new MlaException("--lengths must be tokens >= 1, found " + lengths);
        if (blockSize < 1 || blockSize > (1 << 20)) throw new MlaException("--block-size must be 1 … 1048576 tokens, found " + blockSize);
        MlaConfig c = config != null ? MlaConfig.load(config) : MlaConfig.deepseekV3();
        int longest = lengths.stream().mapToInt(Integer::intValue).max().orElseThrow(), n = lengths.size();
        long blocks = 0, tokens = 0;
        for (int l : lengths) {
            blocks += (l + blockSize - 1) / blockSize;
            tokens += l;
        }
        if (blocks > Integer.MAX_VALUE - 8) throw new MlaException("--lengths need " + blocks + " blocks, more than one pool holds");
        out.printf("ragged batch of %d requests, %,d tokens (lengths %s): one layer's latent cache (kv_lora_rank %d + rope %d), "
                + "measured as allocated, and × %d layers%n", n, tokens, lengths, c.kvLoraRank(), c.qkRopeHeadDim(), c.numHiddenLayers());
        out.printf("%-5s %22s %22s %22s %8s%n", "dtype", "contiguous (" + n + " × " + longest + ")", "paged (" + blocks + " × " + blockSize + ")",
                "tokens held", "saved");
        for (String d : dtypes) {
            CacheDtype dt = CacheDtype.parse(d);
            long contiguous = new LatentCache(c, n, longest, dt).storageBytes();
            long paged = LatentCache.paged(c, PagedCacheSpec.builder().maxSequences(n).maxSequenceLength(longest)
                    .numBlocks((int) blocks).blockSize(blockSize).dtype(dt).build()).storageBytes();
            long exact = tokens * dt.bytesPerToken(c.kvLoraRank(), c.qkRopeHeadDim());
            int layers = c.numHiddenLayers();
            out.printf(Locale.ROOT, "%-5s %10s / %-9s %10s / %-9s %10s / %-9s %7.1f%%%n", d, KvMemory.human(contiguous), KvMemory.human((double) contiguous * layers),
                    KvMemory.human(paged), KvMemory.human((double) paged * layers), KvMemory.human(exact), KvMemory.human((double) exact * layers),
                    100.0 * (contiguous - paged) / contiguous);
        }
        out.printf("(per layer / whole model; a paged pool also wastes at most one partly filled block per request)%n");
        return 0;
    }

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        if (context < 1 || batch < 1 || groups < 1) {
            throw new MlaException("--context, --batch and --groups must be >= 1, found " + context + ", " + batch + ", " + groups);
        }
        if (hostGib != null && (!(hostGib > 0) || hostGib > 1e9)) throw new MlaException("--host-gib must be > 0 and at most 1e9, found " + hostGib);
        if (devices != null && devices < 1) throw new MlaException("--devices must be >= 1, found " + devices);
        if (lengths == null && spec.commandLine().getParseResult().hasMatchedOption("--block-size")) {
            throw new MlaException("--block-size sizes the paged pool of --lengths; give --lengths too, or leave it out");
        }
        if (lengths != null) {
            List<String> others = new ArrayList<>();
            if (hostGib != null) others.add("--host-gib");
            if (devices != null) others.add("--devices");
            if (chart != null) others.add("--chart");
            if (!others.isEmpty()) throw new MlaException("--lengths measures a ragged batch alone, without " + String.join(", ", others) + ": run them apart");
        }
        if (chart != null) {
            OutputFiles.check(chart, config == null ? List.of() : List.of(config));
            Charts.checkPng("--chart", chart);
        }
        List<KvMemory.Model> models = new ArrayList<>();
        if (config != null) models.add(KvMemory.fromConfig(config));
        List<String> names = presets != null ? presets : config != null ? List.of() : KvMemory.PRESETS;
        for (String p : names) models.add(KvMemory.preset(p));
        for (String d : dtypes) KvMemory.bytes(d);
        if (lengths != null) return ragged(out);

        out.printf("KV cache per token, per request of %,d tokens%s%n", context, batch == 1 ? "" : String.format(" and for all %d requests", batch));
        out.printf("%-18s %-40s %-5s %10s %14s %16s %14s %14s %10s%n", "model", "scheme", "dtype", "numbers", "B/token/layer",
                "B/token (model)", "per request", "all requests", "vs MLA");
        DefaultCategoryDataset data = new DefaultCategoryDataset();
        for (KvMemory.Model m : models) {
            List<KvMemory.Scheme> schemes = KvMemory.schemes(m, groups);
            long mla = m.isMla() ? schemes.get(0).numbersPerTokenPerLayer() : 0;
            for (String d : dtypes) {
                int bytes = KvMemory.bytes(d);
                for (KvMemory.Scheme s : schemes) {
                    long perLayer, perToken;
                    try {
                        perLayer = Math.multiplyExact(s.numbersPerTokenPerLayer(), bytes);
                        perToken = Math.multiplyExact(perLayer, m.layers());
                    } catch (ArithmeticException e) {
                        throw new MlaException(m.name() + ": " + s.name() + " needs more than " + Long.MAX_VALUE + " bytes per token; check the config");
                    }
                    double request = (double) perToken * context;
                    out.printf("%-18s %-40s %-5s %,10d %,14d %,16d %14s %14s %10s%n", m.name(), s.name(), d, s.numbersPerTokenPerLayer(),
                            perLayer, perToken, KvMemory.human(request), KvMemory.human(request * batch),
                            m.isMla() ? String.format("%.1f×", (double) s.numbersPerTokenPerLayer() / mla) : "");
                    data.addValue(perToken, s.name().replaceAll(" \\(.*", "") + (dtypes.size() > 1 ? " " + d : ""), m.name());
                }
                if (m.indexerBytes() > 0) {
                    // DSA: the indexer's FP8 keys travel with the latent, in every layer, whatever the latent's dtype; the
                    // latent as this library caches it (fp8: 656 B with its scales and bf16 rope key), as the host pool below
                    long perLayer = cachedLatentBytes(m, d, mla) + m.indexerBytes(), perToken = perLayer * m.layers();
                    double request = (double) perToken * context;
                    out.printf("%-18s %-40s %-5s %10s %,14d %,16d %14s %14s%n", m.name(), "MLA + DSA indexer keys (" + m.indexerBytes() + " B)", d, "",
                            perLayer, perToken, KvMemory.human(request), KvMemory.human(request * batch));
                }
                if (m.isMla() && (d.equals("fp8") || d.equals("int8"))) {
                    // the row as this library stores it, scales included, for this geometry: fp8 is FlashMLA's layout
                    // (e4m3 latent, an f32 scale per 128, bf16 rope key: 656 B for DeepSeek-V3), int8 adds two f32 scales
                    CacheDtype q = CacheDtype.parse(d);
                    long stored = q.bytesPerToken(m.kvLoraRank(), m.ropeDim());
                    double request = (double) stored * m.layers() * context;
                    String what = "MLA " + q + " as cached, scales too (" + stored + " B)";
                    out.printf("%-18s %-40s %-5s %10s %,14d %,16d %14s %14s%n", m.name(), what, d, "",
                            stored, stored * m.layers(), KvMemory.human(request), KvMemory.human(request * batch));
                }
            }
        }
        if (devices != null) perDevice(out, models);
        if (hostGib != null) hostPool(out, models);
        if (chart != null) {
            writeChart(chart, config == null ? List.of() : List.of(config), data, "KV cache bytes per token, whole model, " + String.join(", ", dtypes));
            out.printf("wrote %s%n", chart);
        }
        return 0;
    }

    /**
     * Bytes of one token's latent in one layer as this library caches it in dtype {@code d}: fp8 and int8 with their
     * scales and fp8's bf16 rope key (CacheDtype.bytesPerToken); f16, no cache dtype of this library, {@code numbers}
     * of 2 bytes.
     */
    private static long cachedLatentBytes(KvMemory.Model m, String d, long numbers) {
        try {
            return CacheDtype.parse(d).bytesPerToken(m.kvLoraRank(), m.ropeDim());
        } catch (MlaException e) {
            return numbers * KvMemory.bytes(d);
        }
    }

    /**
     * --host-gib N: idle sequences of --context tokens a host pool of N GiB holds, per MLA model and cache dtype: the
     * offloaded copy is the cache's own storage (CacheDtype.bytesPerToken: values and scales; plus the DSA indexer's
     * keys) in every layer.
     */
    private void hostPool(PrintWriter out, List<KvMemory.Model> models) {
        double pool = hostGib * (1L << 30);
        out.printf("%nhost pool of %s GiB (%,.0f bytes), idle sequences of %,d tokens offloaded to it:%n", hostGib, pool, context);
        boolean any = false;
        for (KvMemory.Model m : models) {
            if (!m.isMla()) continue;
            for (String d : dtypes) {
                CacheDtype dt;
                try {
                    dt = CacheDtype.parse(d);
                } catch (MlaException e) {
                    continue;                                       // f16: no cache dtype of this library
                }
                long perToken = (dt.bytesPerToken(m.kvLoraRank(), m.ropeDim()) + m.indexerBytes()) * m.layers();
                double perSequence = (double) perToken * context;
                out.printf(Locale.ROOT, "%-18s %-5s %,10d B/token (%d layers)  %12s per sequence  %,14d sequences%n", m.name(), d, perToken,
                        m.layers(), KvMemory.human(perSequence), (long) Math.floor(pool / perSequence));
                any = true;
            }
        }
        if (!any) out.printf("(no MLA model and cache dtype among those asked for: --host-gib counts MLA caches)%n");
    }

    /**
     * --devices D: per device, for each MLA model and dtype. TP: every device caches every request's whole latent
     * (MLA's cache has nothing per head), so per device it is the single device's figure; the same geometry as MHA
     * under TP caches H/D heads per device. DP: a device caches only its requests, ceil(batch / D) of them.
     */
    private void perDevice(PrintWriter out, List<KvMemory.Model> models) {
        int n = devices;
        out.printf("%nacross %d devices, per device: tensor-parallel heads (TP) and data-parallel attention (DP), %,d-token requests, %d in all%n",
                n, context, batch);
        out.printf("%-18s %-52s %-5s %16s %14s %16s%n", "model", "mode", "dtype", "B/token/device", "per request", "per device");
        int perDp = (batch + n - 1) / n;
        boolean any = false;
        for (KvMemory.Model m : models) {
            if (!m.isMla()) continue;
            any = true;
            long numbers = KvMemory.schemes(m, groups).get(0).numbersPerTokenPerLayer();
            for (String d : dtypes) {
                int bytes = KvMemory.bytes(d);
                // the latent as a device caches it, as the "as cached" rows above (656 and 584 B for DeepSeek-V3 in fp8 and int8, not 576)
                long perToken = (cachedLatentBytes(m, d, numbers) + m.indexerBytes()) * m.layers();
                double request = (double) perToken * context;
                String heads = m.heads() % n == 0 ? m.heads() / n + " heads each" : m.heads() + " heads do not split into " + n;
                out.printf("%-18s %-52s %-5s %,16d %14s %16s%n", m.name(), "MLA TP " + n + " (" + heads + "; the whole latent on each)", d,
                        perToken, KvMemory.human(request), KvMemory.human(request * batch));
                out.printf("%-18s %-52s %-5s %,16d %14s %16s%n", m.name(), "MLA DP " + n + " (" + perDp + " of the " + batch + " requests each)", d,
                        perToken, KvMemory.human(request), KvMemory.human(request * perDp));
                if (m.heads() % n == 0) {
                    long mha = (long) (m.heads() / n) * (m.keyDim() + m.valueDim()) * bytes * m.layers();
                    out.printf("%-18s %-52s %-5s %,16d %14s %16s%n", m.name(), "MHA, same geometry, TP " + n + " (" + m.heads() / n + " heads each)", d,
                            mha, KvMemory.human((double) mha * context), KvMemory.human((double) mha * context * batch));
                }
            }
            long hidden = MlaConfig.PRESETS.contains(m.name()) ? MlaConfig.preset(m.name()).hiddenSize() : MlaConfig.load(config).hiddenSize();
            out.printf("%-18s per step and layer, each token: TP sends x (%,d numbers) to every device and gets %d partial o_proj outputs "
                    + "(%,d numbers each) back to sum; DP moves only each device's own rows of x and y%n", m.name(), hidden, n, hidden);
        }
        if (!any) out.printf("(no MLA model among those asked for: --devices counts MLA models)%n");
    }

    private static void writeChart(Path png, List<Path> inputs, DefaultCategoryDataset data, String title) {
        double min = Double.MAX_VALUE, max = 0;
        for (int r = 0; r < data.getRowCount(); r++) {
            for (int col = 0; col < data.getColumnCount(); col++) {
                Number v = data.getValue(r, col);
                if (v != null && v.doubleValue() > 0) {
                    min = Math.min(min, v.doubleValue());
                    max = Math.max(max, v.doubleValue());
                }
            }
        }
        LogAxis axis = Charts.logAxis("bytes per token, all layers (log)", "#,##0");
        Charts.barDecades(axis, min, max);
        BarRenderer bars = new BarRenderer();
        for (int i = 0; i < Charts.PALETTE.length; i++) bars.setSeriesPaint(i, Charts.PALETTE[i]);
        bars.setShadowVisible(false);
        bars.setBarPainter(new StandardBarPainter());
        CategoryPlot p = new CategoryPlot(data, new CategoryAxis("model"), axis, bars);
        p.setOrientation(PlotOrientation.HORIZONTAL);
        p.setBackgroundPaint(Charts.PLOT_BACKGROUND);
        JFreeChart c = Charts.chart(title, "MLA caches one latent and one roped key per token and layer; the others keys and values per KV head",
                p, true);
        Charts.writePng(png, inputs, c, 1000, 140 + 60 * data.getColumnCount());
    }
}
