package org.tornadomla;

import org.tornadomla.internal.Messages;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.attention.MlaLayer;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.CacheFiles;
import org.tornadomla.cache.CacheIdentity;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.cli.MlaCommand;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.config.RopeFrequencies;
import org.tornadomla.store.BlockKeys;
import org.tornadomla.store.BlockValue;
import org.tornadomla.store.LatentCacheRows;
import org.tornadomla.store.LatentRows;
import org.tornadomla.weights.DType;
import org.tornadomla.weights.MlaWeights;
import org.tornadomla.weights.SafeTensorsFile;
import org.tornadomla.weights.SafeTensorsWriter;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A seeded, bounded fuzz run (about 2,000 cases, a few seconds): valid weight, config, cache and input files
 * are damaged by structured mutations (numbers, dtypes, names, duplicate keys, lenient JSON, header length,
 * truncation) and random byte flips, then read; so are the latent store's block values. Every case must end in one of two ways:
 * <ul>
 *   <li>an {@link MlaException} whose message is one line of printable text without a URL (for the command
 *       line: exit code 2 and that one line), and no other exception of any type; or</li>
 *   <li>a result equal to an independent reference: the tensor values decoded here from the file's bytes
 *       (or the unmodified values, when the mutation hit something the format lets a reader ignore), the
 *       layer's output against {@link ReferenceMla} in double precision, an imported cache bit-identical to
 *       the exported one.</li>
 * </ul>
 * A failure names the case (seed, kind, mutation) so that it can be replayed.
 */
class FuzzTest {
    static final long SEED = 0x5EED_F022L;
    static final int WEIGHT_CASES = 700, CONFIG_CASES = 700, CACHE_CASES = 600, CLI_CASES = 120, BLOCK_CASES = 400;
    static final int T = 3;

    @TempDir
    Path dir;
    final MlaConfig cfg = TestData.yarn();
    final List<String> failures = new ArrayList<>();
    int refusals, accepted;

    /** Runs one case: an MlaException must be one clean line; anything else thrown is a failure. */
    private <T> T attempt(String what, Supplier<T> body) {
        try {
            return body.get();
        } catch (MlaException e) {
            checkMessage(what, e.getMessage());
            refusals++;
            return null;
        } catch (Throwable e) {
            failures.add(what + ": threw " + e);
            return null;
        }
    }

    private void checkMessage(String what, String m) {
        if (m == null || m.isEmpty() || m.lines().count() != 1 || m.chars().anyMatch(c -> c < 0x20 || (c >= 0x7F && c < 0xA0))
                || m.contains("http") || m.length() > MlaException.MAX_MESSAGE + 1) {
            failures.add(what + ": bad message " + Messages.escape(String.valueOf(m)));
        }
    }

    private void check(String what, boolean ok, String detail) {
        if (!ok) failures.add(what + ": " + detail);
    }

    // ------------------------------------------------------------------ mutations

    /** One to three random bytes flipped, set to random values, or to bytes that break text (", {, NUL, 0xFF). */
    static byte[] flipBytes(byte[] b, SplittableRandom r, int from, int to) {
        byte[] m = b.clone();
        int n = 1 + r.nextInt(3);
        byte[] special = {'"', '{', '}', ',', ':', 0, (byte) 0xFF, (byte) 0xC3, '\n', '\\', ' ', '0', '9', '-', 'e'};
        for (int i = 0; i < n; i++) {
            int at = from + r.nextInt(Math.max(1, to - from));
            m[at] = switch (r.nextInt(3)) {
                case 0 -> (byte) (m[at] ^ (1 << r.nextInt(8)));
                case 1 -> (byte) r.nextInt(256);
                default -> special[r.nextInt(special.length)];
            };
        }
        return m;
    }

    static long headerLength(byte[] f) {
        return ByteBuffer.wrap(f, 0, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
    }

    static byte[] withHeader(String header, byte[] data, int padTo) {
        byte[] h = header.getBytes(StandardCharsets.UTF_8);
        int n = padTo > 0 ? (h.length + padTo - 1) / padTo * padTo : h.length;
        ByteBuffer b = ByteBuffer.allocate(8 + n + data.length).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(n).put(h);
        for (int i = h.length; i < n; i++) b.put((byte) ' ');
        return b.put(data).array();
    }

    static final String[] VALUES = {"0", "-1", "1", "3", "1.5", "1e999", "-1e999", "1e300", "1e-300", "2147483648", "1e20", "-0",
            "\"x\"", "{}", "[]", "null", "true", "[1,2]", "NaN", "0x10", "01", "7e-1"};

    /** A structured mutation of JSON text: a value replaced, a key dropped or repeated, lenient syntax, truncation. */
    static String mutateJson(String json, SplittableRandom r) {
        // positions of ": " value starts and of keys
        List<int[]> values = new ArrayList<>();
        for (int i = json.indexOf(':'); i >= 0; i = json.indexOf(':', i + 1)) {
            int s = i + 1;
            while (s < json.length() && json.charAt(s) == ' ') s++;
            int e = s;
            if (e < json.length() && (json.charAt(e) == '{' || json.charAt(e) == '[')) continue;  // keep containers whole
            if (e < json.length() && json.charAt(e) == '"') {
                e = json.indexOf('"', e + 1) + 1;
            } else {
                while (e < json.length() && ",}]\n ".indexOf(json.charAt(e)) < 0) e++;
            }
            values.add(new int[] {s, e});
        }
        int kind = r.nextInt(9);
        if (kind <= 3 && !values.isEmpty()) {
            int[] v = values.get(r.nextInt(values.size()));
            return json.substring(0, v[0]) + VALUES[r.nextInt(VALUES.length)] + json.substring(v[1]);
        }
        return switch (kind) {
            case 4 -> json.replaceFirst("\"([a-z_]+)\": ([^,{}]+),", "\"$1\": $2, \"$1\": $2,");         // a key twice
            case 5 -> json.replaceFirst("\"[a-z_]+\": [^,{}]+,", "");                                      // a key dropped
            case 6 -> new String[] {"// c\n" + json, json + " x", json.replaceFirst(",", ",,"), json.replace('"', '\''),
                    json.replaceFirst("\\}$", ",}")}[r.nextInt(5)];
            case 7 -> json.substring(0, r.nextInt(json.length()));
            default -> new String(flipBytes(json.getBytes(StandardCharsets.UTF_8), r, 0, json.length()), StandardCharsets.UTF_8);
        };
    }

    // ------------------------------------------------------------------ weights

    @Test
    void damagedFilesEndInOneLineErrorsOrInRightAnswers() throws IOException {
        SplittableRandom r = new SplittableRandom(SEED);
        long t0 = System.nanoTime();
        weights(r);
        configs(r);
        caches(r);
        commandLine(r);
        blocks(r);
        double s = (System.nanoTime() - t0) / 1e9;
        System.out.printf("fuzz: %d cases, %d refused, %d accepted and checked, %.1f s%n", refusals + accepted, refusals, accepted, s);
        assertEquals(List.of(), failures.subList(0, Math.min(20, failures.size())), failures.size() + " failures");
        assertTrue(accepted > 100 && refusals > 1000, "both outcomes are exercised: " + accepted + " accepted, " + refusals + " refused");
        assertTrue(s < 60, "bounded: " + s + " s");
    }

    /**
     * A tensor decoded here from the file's bytes by the original header's layout: F32 or BF16 little-endian,
     * or F8_E4M3 codes times the F32 block scales of {@code <name>_scale_inv} (the test's own e4m3 decoder).
     */
    static float[] decode(byte[] file, long dataStart, SafeTensorsFile layout, String name, int n) {
        var info = layout.info(name);
        if (info.dtype() != DType.F8_E4M3) return decode(file, dataStart, info.begin(), n, info.dtype());
        long[] shape = info.shape();
        int cols = (int) shape[1], bc = (cols + 127) / 128;
        var si = layout.info(name + "_scale_inv");
        float[] scales = decode(file, dataStart, si.begin(), (int) si.numel(), DType.F32);
        float[] out = new float[n];
        for (int i = 0; i < n; i++) {
            out[i] = Fp8Checkpoints.e4m3(file[(int) (dataStart + info.begin() + i)] & 0xFF) * scales[(i / cols / 128) * bc + (i % cols) / 128];
        }
        return out;
    }

    static float[] decode(byte[] file, long dataStart, long begin, int n, DType dtype) {
        ByteBuffer b = ByteBuffer.wrap(file).order(ByteOrder.LITTLE_ENDIAN);
        float[] out = new float[n];
        for (int i = 0; i < n; i++) {
            int at = (int) (dataStart + begin + (long) i * dtype.bytes);
            out[i] = dtype == DType.F32 ? b.getFloat(at) : Float.intBitsToFloat((b.getShort(at) & 0xFFFF) << 16);
        }
        return out;
    }

    private void weights(SplittableRandom r) throws IOException {
        MlaWeights original = MlaWeights.random(cfg, 1);
        float[] x = TestData.gaussian(2, T * cfg.hiddenSize());
        MlaWeights fp8 = Fp8Checkpoints.random(cfg, 1).weights();
        for (DType dtype : new DType[] {DType.F32, DType.BF16, DType.F8_E4M3}) {
            Path base = dir.resolve("w-" + dtype + ".safetensors");
            SafeTensorsWriter writer = new SafeTensorsWriter().metadata("producer", "fuzz base, a value readers may ignore");
            if (dtype == DType.F8_E4M3) {
                fp8.addInOwnForm(writer, 0, DType.BF16).write(base);                 // DeepSeek-V3's layout: codes, scales, BF16 norms
            } else {
                original.addTo(writer, 0, dtype).write(base);
            }
            byte[] good = Files.readAllBytes(base);
            long n = headerLength(good);
            String header = new String(good, 8, (int) n, StandardCharsets.UTF_8);
            byte[] data = Arrays.copyOfRange(good, (int) (8 + n), good.length);
            MlaWeights expectedBase = MlaWeights.load(base, cfg, 0);
            for (int k = 0; k < WEIGHT_CASES / 3; k++) {
                byte[] m;
                String kind;
                switch (r.nextInt(6)) {
                    case 0 -> {
                        m = flipBytes(good, r, (int) (8 + n), good.length);
                        kind = "data byte flips";
                    }
                    case 1 -> {
                        m = flipBytes(good, r, 8, (int) (8 + n));
                        kind = "header byte flips";
                    }
                    case 2 -> {
                        m = withHeader(mutateJson(header.strip(), r), data, r.nextBoolean() ? 8 : 0);
                        kind = "header JSON mutation";
                    }
                    case 3 -> {
                        m = good.clone();
                        ByteBuffer.wrap(m).order(ByteOrder.LITTLE_ENDIAN).putLong(0, n + new long[] {-1, 1, -8, 8, 1L << 40, -n - 1}[r.nextInt(6)]);
                        kind = "header length";
                    }
                    case 4 -> {
                        m = r.nextBoolean() ? Arrays.copyOf(good, r.nextInt(good.length)) : Arrays.copyOf(good, good.length + 1 + r.nextInt(16));
                        kind = "truncated or extended";
                    }
                    default -> {
                        m = flipBytes(good, r, 0, good.length);
                        kind = "byte flips anywhere";
                    }
                }
                String what = "weights " + dtype + " case " + k + " (" + kind + ")";
                Path f = dir.resolve("mutant.safetensors");
                Files.write(f, m);
                MlaWeights w = attempt(what, () -> MlaWeights.load(f, cfg, 0));
                if (w == null) continue;
                accepted++;
                boolean sameHeader = Arrays.equals(m, 0, (int) (8 + n), good, 0, (int) (8 + n)) && m.length == good.length;
                for (MlaWeights.Tensor t : MlaWeights.tensors(cfg)) {
                    float[] got = w.weight(t.hfName()).toFloats();
                    float[] want;
                    if (sameHeader) {
                        try (SafeTensorsFile st = SafeTensorsFile.open(base)) {
                            want = decode(m, 8 + n, st, MlaWeights.prefix(0) + t.hfName(), got.length);
                        }
                    } else {
                        want = expectedBase.weight(t.hfName()).toFloats();            // only ignorable bytes changed: the values must not
                    }
                    check(what, Arrays.equals(want, got), t.hfName() + " differs from the file's values");
                }
                double maxW = 0;
                for (MlaWeights.Tensor t : MlaWeights.tensors(cfg)) {
                    for (float v : w.weight(t.hfName()).toFloats()) {
                        check(what, Float.isFinite(v), t.hfName() + " holds " + v + ": weights with NaN or infinity must be refused");
                        maxW = Math.max(maxW, Math.abs(v));
                    }
                }
                if (maxW <= 100) {       // ordinary weights: the layer must give what float64 gives
                    MlaLayer layer = new MlaLayer(w);
                    float[] y = attempt(what, () -> layer.prefill(layer.newCache(1, T, CacheDtype.F32), x, T, AttentionPath.values()[accepted % 3]));
                    double[] ref = ReferenceMla.prefill(w, x, T, false).y();
                    check(what, y != null && close(ref, y, 1e-3), "layer output differs from the float64 reference");
                }
            }
        }
    }

    static boolean close(double[] e, float[] a, double tol) {
        if (e.length != a.length) return false;
        double scale = 1;
        for (double v : e) scale = Math.max(scale, Math.abs(v));
        for (int i = 0; i < e.length; i++) if (!(Math.abs(a[i] - e[i]) <= tol * scale)) return false;
        return true;
    }

    // ------------------------------------------------------------------ configs

    private void configs(SplittableRandom r) {
        String base = cfg.toJson();
        float[] x = TestData.gaussian(3, T * 64);
        for (int k = 0; k < CONFIG_CASES; k++) {
            String json = mutateJson(base, r);
            String what = "config case " + k + " (" + Messages.escape(json.length() > 300 ? json.substring(0, 300) : json).replace("  ", "") + ")";
            MlaConfig c = attempt(what, () -> MlaConfig.fromJson(json));
            if (c == null) continue;
            accepted++;
            // what every loaded config guarantees, against the test's own float64 YaRN
            double[] f = ReferenceMla.frequencies(c);
            float[] got = RopeFrequencies.inverseFrequencies(c);
            for (int i = 0; i < f.length; i++) check(what, Math.abs(got[i] - f[i]) <= 1e-6 * Math.max(1e-30, Math.abs(f[i])) || Math.abs(got[i] - f[i]) < 1e-37,
                    "frequency " + i + " " + got[i] + " vs " + f[i]);
            check(what, Float.isFinite((float) c.softmaxScale()) && Float.isFinite(RopeFrequencies.cosSinScale(c)), "non-finite scales");
            long weights = 0;
            for (MlaWeights.Tensor t : MlaWeights.tensors(c)) weights += t.shape().length == 1 ? t.shape()[0] : t.shape()[0] * t.shape()[1];
            boolean ordinary = Math.abs(RopeFrequencies.cosSinScale(c)) <= 10 && c.softmaxScale() <= 10;
            if (weights <= 40_000 && ordinary && c.hiddenSize() <= 64) {
                MlaWeights w = MlaWeights.random(c, k);
                MlaLayer layer = new MlaLayer(w);
                float[] xc = Arrays.copyOf(x, T * c.hiddenSize());
                float[] y = attempt(what, () -> layer.prefill(layer.newCache(1, T, CacheDtype.F32), xc, T, AttentionPath.TILED));
                if (y != null || c.maxPositionEmbeddings() >= T) {
                    check(what, y != null && close(ReferenceMla.prefill(w, xc, T, false).y(), y, 1e-3), "layer output differs from the float64 reference");
                }
            }
        }
    }

    // ------------------------------------------------------------------ caches

    private void caches(SplittableRandom r) throws IOException {
        MlaLayer layer = new MlaLayer(MlaWeights.random(cfg, 4));
        for (CacheDtype dt : CacheDtype.values()) {
            LatentCache cache = layer.newCache(1, 8, dt);
            layer.prefill(cache, TestData.gaussian(5, 6 * cfg.hiddenSize()), 6, AttentionPath.ABSORBED);
            Path base = dir.resolve("cache-" + dt + ".safetensors");
            CacheFiles.export(cache, 0, base);
            byte[] good = Files.readAllBytes(base);
            long n = headerLength(good);
            String header = new String(good, 8, (int) n, StandardCharsets.UTF_8);
            byte[] data = Arrays.copyOfRange(good, (int) (8 + n), good.length);
            for (int k = 0; k < CACHE_CASES / 4; k++) {
                int kind = r.nextInt(4);
                byte[] m = switch (kind) {
                    case 0 -> flipBytes(good, r, (int) (8 + n), good.length);
                    case 1 -> flipBytes(good, r, 0, good.length);
                    case 2 -> withHeader(mutateJson(header.strip(), r), data, 8);
                    default -> Arrays.copyOf(good, r.nextInt(good.length));
                };
                String what = "cache " + dt + " case " + k + " (kind " + kind + ")";
                Path f = dir.resolve("cache-mutant.safetensors");
                Files.write(f, m);
                LatentCache target = layer.newCache(1, 8, dt);
                Boolean ok = attempt(what, () -> {
                    CacheFiles.importInto(target, 0, f);
                    return true;
                });
                if (ok == null) {
                    check(what, target.length(0) == 0, "a refused import changed the cache");
                    continue;
                }
                accepted++;
                check(what, target.length(0) == 6 && Arrays.equals(cache.latent(0), target.latent(0)) && Arrays.equals(cache.ropeKey(0), target.ropeKey(0)),
                        "an accepted import differs from the exported cache");
            }
        }
    }

    // ------------------------------------------------------------------ latent-store blocks

    /** A block value of the Redis store, damaged, then decoded and appended to a cache: refused with the cache unchanged, or equal rows. */
    private void blocks(SplittableRandom r) {
        MlaLayer layer = new MlaLayer(MlaWeights.random(cfg, 6, 1));
        int[] ids = {5, 8, 13, 21, 34, 55};
        for (CacheDtype dt : CacheDtype.values()) {
            LatentCache cache = layer.newCache(1, 8, dt);
            layer.prefill(cache, TestData.gaussian(7, 6 * cfg.hiddenSize()), 6, AttentionPath.ABSORBED);
            BlockKeys.Key key = new BlockKeys(BlockKeys.PREFIX, "fuzz", CacheIdentity.configHash(cfg), dt, 4).chain(ids, 1).get(1);   // tokens 4, 5
            LatentRows rows = new LatentCacheRows(cache).read(0, 4, 2);
            byte[] good = BlockValue.encode(layer.identity(), key, rows);
            BlockValue.Expected expected = BlockValue.Expected.of(layer.identity(), dt, key);
            for (int k = 0; k < BLOCK_CASES / 4; k++) {
                int kind = r.nextInt(4);
                byte[] m = switch (kind) {
                    case 0 -> flipBytes(good, r, 0, BlockValue.HEADER);
                    case 1 -> flipBytes(good, r, 0, good.length);
                    case 2 -> Arrays.copyOf(good, r.nextInt(good.length + 8));
                    default -> {
                        byte[] g = new byte[r.nextInt(2 * good.length)];
                        for (int i = 0; i < g.length; i++) g[i] = (byte) r.nextInt(256);
                        if (g.length >= 4 && r.nextBoolean()) System.arraycopy(good, 0, g, 0, Math.min(g.length, BlockValue.HEADER));
                        yield g;
                    }
                };
                String what = "block " + dt + " case " + k + " (kind " + kind + ")";
                LatentCache target = layer.newCache(1, 8, dt);
                Boolean ok = attempt(what, () -> {
                    new LatentCacheRows(target).append(0, BlockValue.decode(m, expected, "fuzz block"));
                    return true;
                });
                if (ok == null) {
                    check(what, target.length(0) == 0, "a refused block changed the cache");
                    continue;
                }
                accepted++;
                check(what, Arrays.equals(m, good) && rows.equals(new LatentCacheRows(target).read(0, 0, 2)), "an accepted block differs from the pushed one");
            }
        }
    }

    // ------------------------------------------------------------------ the command line

    private void commandLine(SplittableRandom r) throws IOException {
        Path config = dir.resolve("config.json"), weights = dir.resolve("model.safetensors");
        Files.writeString(config, cfg.toJson());
        MlaWeights.random(cfg, 6).addTo(new SafeTensorsWriter(), 0, DType.F32).write(weights);
        MlaWeights w = MlaWeights.load(weights, cfg, 0);
        int d = cfg.hiddenSize();
        float[] x = TestData.gaussian(7, T * d);
        Path base = dir.resolve("in.safetensors");
        new SafeTensorsWriter().add("prefill_input", new long[] {1, T, d}, x).write(base);
        // the variable-length format: two prompts of 2 and T tokens, one decode step of both
        float[] x0 = TestData.gaussian(8, 2 * d), dec = TestData.gaussian(9, 2 * d);
        Path varlen = dir.resolve("in-varlen.safetensors");
        new SafeTensorsWriter().add("prefill_input.0", new long[] {2, d}, x0).add("prefill_input.1", new long[] {T, d}, x)
                .add("decode_input_0", new long[] {2, 1, d}, dec).write(varlen);
        for (int k = 0; k < CLI_CASES; k++) {
            boolean isVarlen = k % 2 == 1;
            byte[] good = Files.readAllBytes(isVarlen ? varlen : base);
            long n = headerLength(good);
            byte[] m = switch (r.nextInt(3)) {
                case 0 -> flipBytes(good, r, (int) (8 + n), good.length);
                case 1 -> flipBytes(good, r, 0, (int) (8 + n));
                default -> withHeader(mutateJson(new String(good, 8, (int) n, StandardCharsets.UTF_8).strip(), r),
                        Arrays.copyOfRange(good, (int) (8 + n), good.length), 8);
            };
            Path in = dir.resolve("in-mutant.safetensors"), out = dir.resolve("out-" + k + ".safetensors");
            Files.write(in, m);
            StringWriter o = new StringWriter(), e = new StringWriter();
            List<String> args = new java.util.ArrayList<>(List.of("run-layer", "--config", config.toString(),
                    "--weights", weights.toString(), "--input", in.toString(), "--output", out.toString(), "--path", "tiled"));
            if (isVarlen && r.nextBoolean()) args.addAll(List.of("--paged", "--block-size", "2"));
            int code = MlaCommand.commandLine(new PrintWriter(o, true), new PrintWriter(e, true)).execute(args.toArray(String[]::new));
            String what = "run-layer case " + k + (isVarlen ? " (variable-length)" : "");
            if (code != 0) {
                check(what, code == 2, "exit code " + code + ": " + e);
                String line = e.toString().strip();
                check(what, line.startsWith("mla: error: "), "stderr " + Messages.escape(line));
                checkMessage(what, line);
                check(what, !Files.exists(out), "an output file after an error");
                refusals++;
                continue;
            }
            accepted++;
            boolean sameHeader = Arrays.equals(m, 0, (int) (8 + n), good, 0, (int) (8 + n));
            if (!isVarlen) {
                float[] xin = sameHeader ? decode(m, 8 + n, 0, T * d, DType.F32) : x;
                try (SafeTensorsFile st = SafeTensorsFile.open(out)) {
                    float[] y = st.readFloats("prefill_output");
                    boolean finiteInput = true;
                    for (float v : xin) finiteInput &= Float.isFinite(v) && Math.abs(v) < 1e30;
                    if (finiteInput) check(what, close(ReferenceMla.prefill(w, xin, T, false).y(), y, 1e-3), "run-layer output differs from the float64 reference");
                }
                continue;
            }
            // each sequence's prompt and decode token, as the file holds them, against the float64 reference
            float[][] prompts = {x0, x};
            float[] decIn = dec;
            if (sameHeader) {
                try (SafeTensorsFile layout = SafeTensorsFile.open(varlen)) {
                    prompts = new float[][] {decode(m, 8 + n, layout, "prefill_input.0", 2 * d), decode(m, 8 + n, layout, "prefill_input.1", T * d)};
                    decIn = decode(m, 8 + n, layout, "decode_input_0", 2 * d);
                }
            }
            try (SafeTensorsFile st = SafeTensorsFile.open(out)) {
                float[] yd = st.readFloats("decode_output_0");
                for (int b = 0; b < 2; b++) {
                    int t = b == 0 ? 2 : T;
                    float[] seq = Arrays.copyOf(prompts[b], (t + 1) * d);
                    System.arraycopy(decIn, b * d, seq, t * d, d);
                    boolean finiteInput = true;
                    for (float v : seq) finiteInput &= Float.isFinite(v) && Math.abs(v) < 1e30;
                    if (!finiteInput) continue;
                    double[] ref = ReferenceMla.prefill(w, seq, t + 1, false).y();
                    float[] got = Arrays.copyOf(st.readFloats("prefill_output." + b), (t + 1) * d);
                    System.arraycopy(yd, b * d, got, t * d, d);
                    check(what, close(ref, got, 1e-3), "run-layer output of sequence " + b + " differs from the float64 reference");
                }
            }
        }
    }
}
