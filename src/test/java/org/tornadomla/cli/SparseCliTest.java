package org.tornadomla.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tornadomla.TestData;
import org.tornadomla.attention.AttentionOptions;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.attention.MlaLayer;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.IndexerConfig;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.weights.DType;
import org.tornadomla.weights.MlaWeights;
import org.tornadomla.weights.SafeTensorsFile;
import org.tornadomla.weights.SafeTensorsWriter;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** run-layer on a sparse config: sparse attention by default, the whole context with --dense. */
class SparseCliTest {
    @Test
    void runLayerAttendsSparselyUnlessDense(@TempDir Path dir) throws IOException {
        MlaConfig c = new MlaConfig(64, 2, 32, 32, 16, 16, 16, 10000, 1e-6, 4096, 1, null, false, new IndexerConfig(4, 128, 4, true, false));
        Path config = dir.resolve("config.json"), weights = dir.resolve("model.safetensors"), in = dir.resolve("in.safetensors");
        Files.writeString(config, c.toJson());
        MlaWeights.random(c, 5).addTo(new SafeTensorsWriter(), 0, DType.F32).write(weights);
        MlaWeights w = MlaWeights.load(weights, c, 0);
        int T = 12, d = c.hiddenSize();
        float[] x = TestData.gaussian(6, T * d), x1 = TestData.gaussian(7, d);
        new SafeTensorsWriter().add("prefill_input", new long[] {1, T, d}, x).add("decode_input_0", new long[] {1, 1, d}, x1).write(in);
        float[][] got = new float[2][];
        for (int dense = 0; dense < 2; dense++) {
            Path out = dir.resolve("out" + dense + ".safetensors");
            String[] args = {"run-layer", "--config", config.toString(), "--weights", weights.toString(), "--input", in.toString(),
                    "--output", out.toString(), "--path", "tiled"};
            if (dense == 1) args = java.util.stream.Stream.concat(java.util.Arrays.stream(args), java.util.stream.Stream.of("--dense")).toArray(String[]::new);
            CliTest.Run r = CliTest.mla(args);
            assertEquals(0, r.code(), r.err());
            MlaLayer layer = new MlaLayer(w);
            LatentCache cache = layer.newCache(1, T + 1, CacheDtype.F32);
            AttentionOptions opt = AttentionOptions.of(AttentionPath.TILED).withDense(dense == 1);
            layer.prefill(cache, x, T, opt);
            float[] expected = layer.decode(cache, x1, opt);
            try (SafeTensorsFile o = SafeTensorsFile.open(out)) {
                got[dense] = o.readFloats("decode_output_0", 1, 1, d);
            }
            TestData.assertClose(expected, got[dense], 1e-5, dense == 1 ? "--dense" : "sparse");
        }
        assertTrue(TestData.maxAbsDiff(got[0], got[1]) > 1e-3, "top-4 of 13 positions is not dense attention");
    }

    /**
     * --write-indices: the prefill's selections and cached indexer keys are those of the indexer run alone
     * ({@code IndexerReference}, the kernels chained outside the layer's graph), the decode step's those of the
     * layer's API ({@code MlaLayer.lastSelection}); a dense config, --dense and a device backend are refused.
     */
    @Test
    void runLayerWritesTheSelection(@TempDir Path dir) throws IOException {
        MlaConfig c = new MlaConfig(64, 2, 32, 32, 16, 16, 16, 10000, 1e-6, 4096, 1, null, false, new IndexerConfig(4, 128, 4, true, false));
        Path config = dir.resolve("config.json"), weights = dir.resolve("model.safetensors"), in = dir.resolve("in.safetensors");
        Files.writeString(config, c.toJson());
        MlaWeights.random(c, 5).addTo(new SafeTensorsWriter(), 0, DType.F32).write(weights);
        MlaWeights w = MlaWeights.load(weights, c, 0);
        int B = 2, T = 12, d = c.hiddenSize(), k = 4;
        float[] x = TestData.gaussian(8, B * T * d), x1 = TestData.gaussian(9, B * d);
        new SafeTensorsWriter().add("prefill_input", new long[] {B, T, d}, x).add("decode_input_0", new long[] {B, 1, d}, x1).write(in);
        for (boolean paged : new boolean[] {false, true}) {
            Path out = dir.resolve("out" + paged + ".safetensors");
            String[] args = {"run-layer", "--config", config.toString(), "--weights", weights.toString(), "--input", in.toString(),
                    "--output", out.toString(), "--path", "absorbed", "--write-indices"};
            if (paged) args = java.util.stream.Stream.concat(java.util.Arrays.stream(args), java.util.stream.Stream.of("--paged", "--block-size", "4")).toArray(String[]::new);
            CliTest.Run r = CliTest.mla(args);
            assertEquals(0, r.code(), r.err());
            MlaLayer layer = new MlaLayer(w);
            org.junit.jupiter.api.Assertions.assertThrows(org.tornadomla.MlaException.class, layer::lastSelection, "no step yet");
            LatentCache cache = layer.newCache(B, T + 1, CacheDtype.F32);
            layer.prefill(cache, x, T, AttentionPath.ABSORBED);
            layer.decode(cache, x1, AttentionPath.ABSORBED);
            int[] decodeSel = layer.lastSelection();
            LatentCache denseCache = layer.newCache(B, T, CacheDtype.F32);
            layer.prefill(denseCache, x, T, AttentionOptions.of(AttentionPath.ABSORBED).withDense(true));
            org.tornadomla.MlaException e = org.junit.jupiter.api.Assertions.assertThrows(org.tornadomla.MlaException.class, layer::lastSelection);
            assertTrue(e.getMessage().contains("attended densely"), e.getMessage());
            try (SafeTensorsFile o = SafeTensorsFile.open(out)) {
                float[] sel = o.readFloats("selected_prefill", B, T, k);
                byte[] codes = o.readBytes("index_k_cache", DType.F8_E4M3);
                float[] scales = o.readFloats("index_k_scale_cache", B, T + 1, 1);
                for (int b = 0; b < B; b++) {
                    org.tornadomla.IndexerReference.Result ref = org.tornadomla.IndexerReference.prefill(w, java.util.Arrays.copyOfRange(x, b * T * d, (b + 1) * T * d), T);
                    for (int i = 0; i < T * k; i++) assertEquals(ref.selected()[i], (int) sel[b * T * k + i], "paged " + paged + ", sequence " + b + ", prefill entry " + i);
                    for (int i = 0; i < T * 128; i++) assertEquals(ref.kCodes()[i], codes[b * (T + 1) * 128 + i], "paged " + paged + ", key code " + i);
                    for (int t = 0; t < T; t++) assertEquals(ref.kScales()[t], scales[b * (T + 1) + t], "paged " + paged + ", key scale " + t);
                }
                float[] dsel = o.readFloats("selected_decode_0", B, 1, k);
                for (int i = 0; i < B * k; i++) assertEquals(decodeSel[i], (int) dsel[i], "paged " + paged + ", decode entry " + i);
                for (int b = 0; b < B; b++) assertTrue(dsel[b * k + k - 1] >= 0, "the decode row sees 13 positions and keeps 4");
            }
        }
        String[] base = {"run-layer", "--config", config.toString(), "--weights", weights.toString(), "--input", in.toString(),
                "--output", dir.resolve("no.safetensors").toString(), "--write-indices"};
        CliTest.Run dense = CliTest.mla(java.util.stream.Stream.concat(java.util.Arrays.stream(base), java.util.stream.Stream.of("--dense")).toArray(String[]::new));
        assertEquals(2, dense.code(), dense.out());
        assertTrue(dense.err().contains("--write-indices with --dense"), dense.err());
        assertTrue(!Files.exists(dir.resolve("no.safetensors")));
    }
}
