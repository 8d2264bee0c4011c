package org.tornadomla;

import org.tornadomla.config.MlaConfig;
import org.tornadomla.internal.Gaussians;
import org.tornadomla.weights.Bf16Bits;
import org.tornadomla.weights.DType;
import org.tornadomla.weights.MlaWeights;
import org.tornadomla.weights.SafeTensorsWriter;
import org.tornadomla.weights.Weight;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * DeepSeek-V3-style FP8 layers made by the tests (never downloaded): e4m3 codes with one f32 multiplier per
 * 128 × 128 block ({@code weight_scale_inv}), BF16 norms, written as a sharded checkpoint with an index. The
 * codes and scales are kept here so that tests can dequantise them with their own decoder ({@link #e4m3}).
 */
public final class Fp8Checkpoints {
    private Fp8Checkpoints() {
    }

    /** Dimensions that are not multiples of 128 (partial blocks on both sides of every projection), q_lora_rank > 0. */
    public static MlaConfig config() {
        return new MlaConfig(300, 3, 160, 144, 40, 16, 48, 10000, 1e-6, 4096, 4, null, true);
    }

    /** A plain q_proj, one head, dimensions below and above one block. */
    public static MlaConfig plainQ() {
        return new MlaConfig(130, 2, 0, 136, 24, 8, 32, 10000, 1e-6, 4096, 2, null, true);
    }

    /**
     * e4m3fn decoded by building the float's bits (independent of the library's table decoder): sign, exponent
     * e − 7 + 127 and mantissa m·2^20 for e &gt; 0; for e = 0 the value m·2^−9 normalised by hand. NaN for S.1111.111.
     */
    public static float e4m3(int code) {
        int s = (code >> 7) & 1, e = (code >> 3) & 15, m = code & 7;
        if (e == 15 && m == 7) return Float.NaN;
        int bits;
        if (e > 0) {
            bits = (e - 7 + 127) << 23 | m << 20;
        } else if (m == 0) {
            bits = 0;
        } else {
            int p = 31 - Integer.numberOfLeadingZeros(m);          // m = 2^p + rest, p in 0 … 2
            bits = (p - 9 + 127) << 23 | (m - (1 << p)) << (23 - p);
        }
        return Float.intBitsToFloat(s << 31 | bits);
    }

    /** One FP8 layer: the weights, and the codes, scales and norm values they were made from, by HF name suffix. */
    public record Layer(MlaConfig config, MlaWeights weights, Map<String, byte[]> codes, Map<String, float[]> scales,
                        Map<String, float[]> norms) {
        /** Projection {@code hfName} dequantised here: e4m3(code)·scale, one f32 product per weight. */
        public float[] dequantised(String hfName) {
            byte[] q = codes.get(hfName);
            float[] s = scales.get(hfName);
            long[] shape = null;
            for (MlaWeights.Tensor t : MlaWeights.tensors(config)) if (t.hfName().equals(hfName)) shape = t.shape();
            int rows = (int) shape[0], cols = (int) shape[1], bc = (cols + 127) / 128;
            float[] out = new float[q.length];
            for (int r = 0; r < rows; r++) {
                for (int c = 0; c < cols; c++) out[r * cols + c] = e4m3(q[r * cols + c] & 0xFF) * s[(r / 128) * bc + c / 128];
            }
            return out;
        }
    }

    /**
     * A seeded random FP8 layer. Every projection holds all 254 finite codes (±0, the subnormals, ±448) in its
     * first row(s), then random finite codes; block scales are about 1/(130·√in), so weights are N(0, 1/in)-sized,
     * except in kv_b_proj and o_proj, where block [0, 0] has a tiny scale (2^−140, a subnormal float: products
     * underflow to subnormals and 0), block [1, 0] the scale 1e-30, and kv_b_proj's last block the scale 0.
     * Norm weights are bf16 values (what a V3 checkpoint stores).
     */
    public static Layer random(MlaConfig c, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        Map<String, byte[]> codes = new LinkedHashMap<>();
        Map<String, float[]> scales = new LinkedHashMap<>();
        Map<String, float[]> norms = new LinkedHashMap<>();
        List<Weight> weights = new ArrayList<>();
        for (MlaWeights.Tensor t : MlaWeights.tensors(c)) {
            long[] sh = t.shape();
            if (!t.isProjection()) {
                float[] g = new float[(int) sh[0]];
                for (int i = 0; i < g.length; i++) g[i] = Bf16Bits.decode(Bf16Bits.encode((float) (1 + 0.1 * Gaussians.next(rnd))));
                norms.put(t.hfName(), g);
                weights.add(Weight.f32(t.hfName(), sh, g));
                continue;
            }
            int rows = (int) sh[0], cols = (int) sh[1];
            byte[] q = new byte[rows * cols];
            int k = 0;
            for (int code = 0; code < 256 && k < q.length; code++) {
                if ((code & 0x7F) != 0x7F) q[k++] = (byte) code;            // the 254 finite codes
            }
            for (; k < q.length; k++) {
                int code;
                do {
                    code = rnd.nextInt(256);
                } while ((code & 0x7F) == 0x7F);
                q[k] = (byte) code;
            }
            int br = (rows + 127) / 128, bc = (cols + 127) / 128;
            float[] s = new float[br * bc];
            for (int b = 0; b < s.length; b++) s[b] = (float) ((0.5 + rnd.nextDouble()) / (130 * Math.sqrt(cols)));
            if (t.hfName().equals("kv_b_proj.weight") || t.hfName().equals("o_proj.weight")) {
                s[0] = Math.scalb(1f, -140);
                if (br > 1) s[bc] = 1e-30f;
                if (t.hfName().equals("kv_b_proj.weight")) s[s.length - 1] = 0f;
            }
            codes.put(t.hfName(), q);
            scales.put(t.hfName(), s);
            weights.add(Weight.fp8(t.hfName(), rows, cols, q, s));
        }
        return new Layer(c, new MlaWeights(c, weights), codes, scales, norms);
    }

    /**
     * Writes layer {@code layer} as DeepSeek-V3 stores it, over {@code shards} files and a
     * {@code model.safetensors.index.json}: F8_E4M3 projections, each with its F32 {@code weight_scale_inv}
     * in the next shard (a weight and its scale need not share a file), BF16 norms, and tensors of other
     * modules and layers the loader must leave alone. Returns the index.
     */
    public static Path write(Path dir, Layer l, int layer, int shards) throws IOException {
        Files.createDirectories(dir);
        List<SafeTensorsWriter> writers = new ArrayList<>();
        for (int i = 0; i < shards; i++) writers.add(new SafeTensorsWriter());
        Map<String, Integer> map = new LinkedHashMap<>();
        String p = MlaWeights.prefix(layer);
        int next = 0;
        map.put("model.embed_tokens.weight", 0);
        writers.get(0).add("model.embed_tokens.weight", DType.BF16, new long[] {4, l.config.hiddenSize()}, new float[4 * l.config.hiddenSize()]);
        map.put("model.layers." + layer + ".mlp.gate.weight", shards - 1);
        writers.get(shards - 1).add("model.layers." + layer + ".mlp.gate.weight", DType.F32, new long[] {2, 3}, new float[6]);
        for (MlaWeights.Tensor t : MlaWeights.tensors(l.config)) {
            String name = p + t.hfName();
            int shard = next++ % shards;
            if (t.isProjection()) {
                writers.get(shard).addBytes(name, DType.F8_E4M3, t.shape(), l.codes.get(t.hfName()));
                int ss = (shard + 1) % shards;
                long[] sShape = Weight.scaleShape(t.shape()[0], t.shape()[1]);
                writers.get(ss).add(name + "_scale_inv", DType.F32, sShape, l.scales.get(t.hfName()));
                map.put(name + "_scale_inv", ss);
            } else {
                writers.get(shard).add(name, DType.BF16, t.shape(), l.norms.get(t.hfName()));
            }
            map.put(name, shard);
        }
        StringBuilder json = new StringBuilder("{\"metadata\": {\"total_size\": 0}, \"weight_map\": {");
        boolean first = true;
        for (Map.Entry<String, Integer> e : map.entrySet()) {
            json.append(first ? "" : ", ").append('"').append(e.getKey()).append("\": \"").append(shardName(e.getValue(), shards)).append('"');
            first = false;
        }
        json.append("}}");
        for (int i = 0; i < shards; i++) writers.get(i).write(dir.resolve(shardName(i, shards)));
        Path index = dir.resolve("model.safetensors.index.json");
        Files.writeString(index, json);
        return index;
    }

    public static String shardName(int i, int shards) {
        return String.format("model-%05d-of-%05d.safetensors", i + 1, shards);
    }
}
