package org.tornadomla.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code mla bench --sparse} on tiny shapes (hidden 128, 2 heads, top-16; the indexer keeps V3.2's 64 heads × 128):
 * the table, the CSV and its invariants, the crossover lines, and the refusals.
 */
class SparseBenchCliTest {
    /** Bytes per cached token counted from the layouts (docs/kv-memory.md, docs/sparse-attention.md), not from the code's formula. */
    private static long rowBytes(String dtype) {
        return switch (dtype) {
            case "f32" -> 4L * (512 + 64);                     // 512 latent + 64 rope numbers, 4 bytes each
            case "fp8" -> 512 + 4 * 4 + 2 * 64;                // FlashMLA's fp8_ds_mla row: 512 e4m3, 4 fp32 scales, 64 bf16
            default -> throw new AssertionError(dtype);
        };
    }

    private static final long INDEXER_KEY_BYTES = 128 + 4;      // 128 e4m3 codes + one fp32 scale per 128

    @Test
    void measuresDenseAndSparseWithTheirBytes(@TempDir Path dir) throws IOException {
        Path csv = dir.resolve("out/sparse.csv"), png = dir.resolve("sparse.png");
        CliTest.Run r = CliTest.mla("bench", "--sparse", "--layer-hidden", "128", "--heads", "2", "--topk", "16", "--context", "32,8",
                "--batch", "1,2", "--dtype", "fp8,f32", "--budget-ms", "0", "--backend", "java-reference", "--csv", csv.toString(),
                "--chart", png.toString());
        assertEquals(0, r.code(), r.err() + r.out());
        assertTrue(r.out().contains("top-16"), r.out());
        assertTrue(r.out().contains("note: context 8 <= index_topk 16"), r.out());
        List<String> lines = Files.readAllLines(csv);
        assertEquals("backend,path,dtype,batch,hidden,heads,context,topk,dense_ms,sparse_ms,indexer_ms,indexer_share,"
                + "dense_latent_bytes,sparse_latent_bytes,indexer_bytes,dense_steps,sparse_steps", lines.get(0));
        assertEquals(1 + 2 * 2 * 2, lines.size(), String.join("\n", lines));     // dtypes × batches × contexts
        for (String line : lines.subList(1, lines.size())) {
            String[] f = line.split(",", -1);
            assertEquals(17, f.length, line);
            assertEquals("java-reference", f[0]);
            assertEquals("tiled", f[1]);
            String dtype = f[2];
            int batch = Integer.parseInt(f[3]), context = Integer.parseInt(f[6]), k = Integer.parseInt(f[7]);
            assertEquals(128, Integer.parseInt(f[4]));
            assertEquals(2, Integer.parseInt(f[5]));
            assertEquals(16, k);
            double dense = Double.parseDouble(f[8]), sparse = Double.parseDouble(f[9]), ixMs = Double.parseDouble(f[10]), share = Double.parseDouble(f[11]);
            assertTrue(dense > 0 && sparse > 0 && Double.isFinite(dense) && Double.isFinite(sparse), line);
            assertTrue(ixMs > 0 && share > 0 && share < 1, "the indexer takes part of the step, not all of it: " + line);
            long denseBytes = Long.parseLong(f[12]), sparseBytes = Long.parseLong(f[13]), ixBytes = Long.parseLong(f[14]);
            // dense reads every row; sparse the selected ones, at most the context; both read rows of the same size
            assertEquals(batch * context * rowBytes(dtype), denseBytes, line);
            int selected = Math.min(k, context);
            assertEquals(batch * selected * rowBytes(dtype), sparseBytes, line);
            assertEquals(batch * context * INDEXER_KEY_BYTES, ixBytes, line);
            if (context <= k) assertEquals(denseBytes, sparseBytes, "top-k >= context selects every row: " + line);
            else assertTrue(sparseBytes < denseBytes, line);
            assertTrue(Integer.parseInt(f[15]) >= 2 && Integer.parseInt(f[16]) >= 2, line);
        }
        for (String dt : List.of("fp8", "f32")) {
            for (int b : new int[] {1, 2}) {
                String prefix = "java-reference " + dt + " B" + b + ": ";
                assertTrue(r.out().contains(prefix + "sparse wins from context ") || r.out().contains(prefix
                        + "sparse does not win within the contexts measured (8, 32)"), r.out());
            }
        }
        assertTrue(Files.size(png) > 1000, "a PNG chart");
    }

    @Test
    void refusesWhatItCannotMeasure() {
        CliTest.Run dense = CliTest.mla("bench", "--sparse", "--preset", "deepseek-v3");
        assertTrue(dense.code() != 0 && dense.err().contains("--sparse needs a config with an indexer")
                && dense.err().contains("--preset deepseek-v3 is dense"), dense.err());
        CliTest.Run combo = CliTest.mla("bench", "--sparse", "--offload");
        assertTrue(combo.code() != 0 && combo.err().contains("does not combine with --offload"), combo.err());
        CliTest.Run tiny = CliTest.mla("bench", "--sparse", "--context", "1");
        assertTrue(tiny.code() != 0 && tiny.err().contains("--context must be >= 2 tokens with --sparse"), tiny.err());
        CliTest.Run heads = CliTest.mla("bench", "--sparse", "--heads", "2,4");
        assertTrue(heads.code() != 0 && heads.err().contains("one head count"), heads.err());
        CliTest.Run topk = CliTest.mla("bench", "--topk", "4");
        assertTrue(topk.code() != 0 && topk.err().contains("--topk applies to --sparse only"), topk.err());
        CliTest.Run k0 = CliTest.mla("bench", "--sparse", "--topk", "0");
        assertTrue(k0.code() != 0 && k0.err().contains("--topk must be >= 1, found 0"), k0.err());
        // B32 × 131072 f32 rows are more numbers than one Java array holds (32 · 131072 · 576): the point says why it is
        // skipped, then the run fails, having measured nothing
        CliTest.Run big = CliTest.mla("bench", "--sparse", "--layer-hidden", "64", "--heads", "1", "--batch", "32", "--context", "131072",
                "--dtype", "f32", "--backend", "java-reference");
        assertTrue(big.code() != 0, big.out());
        assertTrue(big.out().contains("B32   T131072  skipped: 32 x 131072 tokens need 2415919104 numbers in one f32 array, more than a Java array holds (2147483639)"), big.out());
        assertTrue(big.err().contains("every point was skipped"), big.err());
        // fp8 (the default): its latent codes alone are 32 · 131072 · 512 = 2^31 bytes, one more than an array holds; the
        // smaller context of the same batch still runs (its cache is only as long as the contexts that fit)
        CliTest.Run fp8 = CliTest.mla("bench", "--sparse", "--layer-hidden", "64", "--heads", "1", "--batch", "32", "--context", "4,131072",
                "--backend", "java-reference");
        assertEquals(0, fp8.code(), fp8.out() + fp8.err());
        assertTrue(fp8.out().contains("B32   T131072  skipped: 32 x 131072 tokens need 2147483648 numbers in one fp8 array"), fp8.out());
        assertTrue(fp8.out().lines().anyMatch(l -> l.matches("java-reference +fp8 +B32 +T4 .*")), fp8.out());
    }
}
