package org.tornadomla.tornado;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.tornadomla.kernels.Bf16;
import org.tornadomla.kernels.CacheLayout;
import org.tornadomla.kernels.CacheOps;
import org.tornadomla.kernels.CacheRows;
import uk.ac.manchester.tornado.api.types.arrays.FloatArray;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The tensor-core scores' and values' staging and tile layouts, on the JVM (where the MMA calls do nothing): the kernel's own
 * {@code pack…} and {@code unpack…} kernels and index helpers run for every warp, in the staging loops of the kernels; the
 * 16×16·16×8 products in between are emulated from the layouts TornadoVM's own bf16 GEMM test stages for
 * {@code mmaLoadA}/{@code mmaLoadB} (A: row m of 16 numbers at byte offset + 32·m, two bf16 a word, the lower k in
 * the low half; B: row k of 8 columns at byte offset + 16·k, the lower column in the low half) and from
 * {@code mmaStore}'s row-major 16×8 block. Compared with a double-precision sum over a paged, shuffled bf16 or fp8
 * cache, decoded by {@link CacheOps#load} (the plain kernels' decode).
 */
class TensorCoreAttentionTest {
    private static final float[] POW2 = Bf16.pow2();

    /** Number k (&lt; 16) of row m (&lt; 16) of the A tile that starts {@code byteOffset} bytes into {@code tile}. */
    private static float aAt(int[] tile, int byteOffset, int m, int k) {
        int word = tile[byteOffset / 4 + m * 8 + k / 2];
        return Bf16.decode(k % 2 == 0 ? word : word >>> 16, POW2);
    }

    /** Column n (&lt; 8) of row k (&lt; 16) of the B panel that starts {@code byteOffset} bytes into {@code tile}. */
    private static float bAt(int[] tile, int byteOffset, int k, int n) {
        int word = tile[byteOffset / 4 + k * 4 + n / 2];
        return Bf16.decode(n % 2 == 0 ? word : word >>> 16, POW2);
    }

    /** A cache's three arrays, as the graphs pass them to the kernels. */
    private record Cache(int dtype, float[] floats, short[] halves, byte[] bytes, int dc, int dr) {
        /** Number col of a slot as the plain kernels decode it. */
        double at(int slot, int col) {
            return CacheOps.load(floats, halves, bytes, dtype, slot, col, dc + dr, dc);
        }
    }

    /**
     * A bf16 or fp8 cache of {@code slots} rows drawn from a standard normal distribution (the fp8 latent's blocks of 128
     * scaled by up to 2^5 apart, so that the scales differ); written with the cache's own row writer.
     */
    private static Cache randomCache(Random rnd, int dtype, int slots, int dc, int dr) {
        float[] floats = new float[(int) CacheLayout.floatsLength(dtype, slots, dc, dr)];
        System.arraycopy(POW2, 0, floats, 0, CacheLayout.TABLE);
        short[] halves = new short[(int) CacheLayout.halvesLength(dtype, slots, dc, dr)];
        byte[] bytes = new byte[(int) CacheLayout.bytesLength(dtype, slots, dc, dr)];
        float[] lat = new float[dc], pe = new float[dr];
        for (int slot = 0; slot < slots; slot++) {
            for (int i = 0; i < dc; i++) lat[i] = (float) (rnd.nextGaussian() * (1 << (i / CacheLayout.FP8_BLOCK + slot % 3)));
            for (int i = 0; i < dr; i++) pe[i] = (float) rnd.nextGaussian();
            if (dtype == CacheLayout.FP8) {
                CacheRows.writeRowFp8(lat, 0, pe, 0, floats, halves, bytes, slot, dc, dr);
            } else {
                for (int i = 0; i < dc + dr; i++) halves[slot * (dc + dr) + i] = Bf16.encode(i < dc ? lat[i] : pe[i - dc], POW2);
            }
        }
        return new Cache(dtype, floats, halves, bytes, dc, dr);
    }

    @ParameterizedTest(name = "cache dtype {0}")
    @ValueSource(ints = {CacheLayout.BF16, CacheLayout.FP8})
    void theStagedBitsAreTheCacheNumbersExactly(int dtype) {
        int dc = 160, dr = 32, slots = 9;                    // two fp8 scale blocks, the second one partial
        Cache kv = randomCache(new Random(3), dtype, slots, dc, dr);
        int distinctScales = 0;
        for (int slot = 0; slot < slots; slot++) {
            for (int col = 0; col < dc + dr; col++) {
                int bits = TensorCoreAttention.cacheBits(kv.floats, kv.halves, kv.bytes, dtype, slot, col, dc + dr, dc);
                // an fp8 number times its power-of-two scale has at most 4 significant bits: bf16 holds it exactly
                assertEquals(kv.at(slot, col), Bf16.decode(bits & 0xFFFF, POW2), 0.0, "slot " + slot + " col " + col);
            }
            if (dtype == CacheLayout.FP8 && kv.floats[CacheLayout.fp8ScaleIndex(slot, 0, dc)] != kv.floats[CacheLayout.fp8ScaleIndex(slot, 128, dc)]) {
                distinctScales++;
            }
        }
        if (dtype == CacheLayout.FP8) assertTrue(distinctScales > 0, "the two scale blocks of a row differ somewhere");
    }

    /**
     * A step's metadata: row r at {@code positions[r]} in sequence min(r, seqs − 1); sequence b's block table lists
     * blocks {@code order[b·maxBlocks …]} of the paged cache, a shuffled order.
     */
    private static int[] pagedMeta(int[] positions, int seqs, int maxBlocks, int[] order) {
        int rows = positions.length;
        int[] meta = new int[(int) CacheLayout.metaLength(rows, seqs, maxBlocks)];
        for (int b = 0; b < seqs; b++) {
            for (int k = 0; k < maxBlocks; k++) meta[CacheLayout.metaTableStart(rows, seqs, maxBlocks, b) + k] = order[b * maxBlocks + k];
        }
        for (int r = 0; r < rows; r++) {
            meta[2 * r] = positions[r];
            meta[2 * r + 1] = CacheLayout.metaTableStart(rows, seqs, maxBlocks, Math.min(r, seqs - 1));
        }
        return meta;
    }

    @ParameterizedTest(name = "cache dtype {0}")
    @ValueSource(ints = {CacheLayout.BF16, CacheLayout.FP8})
    void stagedTilesTimesEmulatedMmaEqualTheScoresInDoublePrecision(int dtype) {
        int heads = 32, dn = 16, dc = 160, dr = 32, w = dc + dr, blockSize = 4, rows = 3, seqs = 2, maxBlocks = 6;
        int capacity = 21;                                   // not a multiple of 16: a partial last tile
        int[] positions = {20, 6, -1};                       // row 2 is padding
        Random rnd = new Random(7);
        float[] qLat = new float[rows * heads * dc];
        float[] q = new float[rows * heads * (dn + dr)];
        for (int i = 0; i < qLat.length; i++) qLat[i] = (float) rnd.nextGaussian();
        for (int i = 0; i < q.length; i++) q[i] = (float) rnd.nextGaussian();
        // a paged cache of 12 blocks handed out in a shuffled order
        Cache kv = randomCache(rnd, dtype, seqs * maxBlocks * blockSize, dc, dr);
        int[] meta = pagedMeta(positions, seqs, maxBlocks, new int[]{7, 2, 11, 0, 5, 9, 3, 10, 1, 6, 8, 4});

        int[] qWords = new int[rows * heads * w / 2];
        TensorCoreAttention.packQuery(qLat, q, POW2, qWords, rows, heads, dn, dr, dc);
        int padded = TensorCoreAttention.padded(capacity);
        assertEquals(32, padded);
        FloatArray s = new FloatArray(rows * heads * padded);
        s.init(Float.NaN);                                   // a tile the warps skip stays NaN; unpack must not read it
        int tiles = padded / TensorCoreAttention.N;
        assertEquals(rows * (heads / 16) * (padded / 8), TensorCoreAttention.groups(rows, heads, capacity));
        for (int g = 0; g < TensorCoreAttention.groups(rows, heads, capacity); g++) {
            // the warp's work-group decomposition, as in TensorCoreAttention.scores
            int t = g % tiles, hb = (g / tiles) % (heads / 16), r = g / (tiles * (heads / 16));
            int len = positions[r] + 1, j0 = t * TensorCoreAttention.N;
            if (j0 >= len) continue;
            int[] aTile = new int[TensorCoreAttention.MAX_W * 8];
            int[] bTile = new int[TensorCoreAttention.MAX_W * 4];
            int[] raw = new int[TensorCoreAttention.MAX_W * 8];
            // the kernel's staging loops, over all 32 lanes' words at once, with its index helpers
            int pairs = w / 2, table = meta[2 * r + 1];
            for (int i = 0; i < 16 * pairs; i++) aTile[TensorCoreAttention.aWord(i / pairs, 2 * (i % pairs))] = qWords[TensorCoreAttention.queryWord(r, hb, heads, pairs, i)];
            for (int i = 0; i < 8 * w; i++) raw[i] = TensorCoreAttention.latentRaw(kv.floats, kv.halves, kv.bytes, dtype, meta, table, j0, len, blockSize, dc, w, i);
            for (int i = 0; i < 4 * w; i++) {
                bTile[TensorCoreAttention.bWord(i / w, i % w)] = TensorCoreAttention.pack(raw[(2 * (i / w)) * w + i % w], raw[(2 * (i / w) + 1) * w + i % w]);
            }
            float[][] acc = new float[16][8];
            for (int ks = 0; ks < w / 16; ks++) {
                for (int m = 0; m < 16; m++) {
                    for (int n = 0; n < 8; n++) {
                        for (int k = 0; k < 16; k++) {
                            acc[m][n] += aAt(aTile, TensorCoreAttention.stepBytesA(ks), m, k) * bAt(bTile, TensorCoreAttention.stepBytesB(ks), k, n);
                        }
                    }
                }
            }
            for (int m = 0; m < 16; m++) {             // mmaStore: row-major 16×8 at (row0 + m, j0 + n)
                for (int n = 0; n < 8; n++) s.set((r * heads + hb * 16 + m) * padded + j0 + n, acc[m][n]);
            }
        }
        float scale = 0.125f;
        float[] scores = new float[rows * heads * capacity];
        java.util.Arrays.fill(scores, -7f);                 // what unpack must leave alone
        TensorCoreAttention.unpackScores(s, scores, meta, rows, capacity, heads, scale);

        double worstBf16Q = 0, worstF32Q = 0;
        for (int r = 0; r < rows; r++) {
            for (int h = 0; h < heads; h++) {
                int rh = r * heads + h;
                for (int j = 0; j < capacity; j++) {
                    float got = scores[rh * capacity + j];
                    if (j > positions[r]) {
                        assertEquals(-7f, got, 0f, "row " + r + " j " + j + " is past the position: not written");
                        continue;
                    }
                    int slot = CacheLayout.slot(meta, meta[2 * r + 1], j, blockSize);
                    double exactBf16Q = 0, exactF32Q = 0, magnitude = 0;
                    for (int k = 0; k < w; k++) {
                        double c = kv.at(slot, k);
                        double qk = k < dc ? qLat[rh * dc + k] : q[rh * (dn + dr) + dn + k - dc];
                        exactBf16Q += Bf16.decode(Bf16.encode((float) qk, POW2), POW2) * c;
                        exactF32Q += qk * c;
                        magnitude += Math.abs(qk * c);
                    }
                    assertFalse(Float.isNaN(got), "row " + r + " head " + h + " j " + j + " read a skipped tile");
                    // the emulated product sums in f32 as the tensor core does: f32 rounding of 96 terms
                    worstBf16Q = Math.max(worstBf16Q, Math.abs(got - scale * exactBf16Q) / (scale * magnitude));
                    // against the f32 query: each number of q moved by at most half a bf16 step, bf16's unit roundoff
                    // 2^-8 of itself (8 significant bits)
                    worstF32Q = Math.max(worstF32Q, Math.abs(got - scale * exactF32Q) / (scale * magnitude));
                }
            }
        }
        double f32Sum = w * Math.scalb(1.0, -24);            // a sum of w f32 terms: at most w half-ulps of the magnitude
        assertTrue(worstBf16Q <= f32Sum, "against the bf16 query in double precision: " + worstBf16Q);
        assertTrue(worstF32Q <= Math.scalb(1.0, -8) + f32Sum, "against the f32 query: " + worstF32Q);
        assertTrue(worstF32Q > worstBf16Q, "the f32 query's scores differ by the query's rounding");
    }

    @ParameterizedTest(name = "cache dtype {0}")
    @ValueSource(ints = {CacheLayout.BF16, CacheLayout.FP8})
    void stagedValueTilesTimesEmulatedMmaEqualPTimesTheLatentInDoublePrecision(int dtype) {
        int heads = 16, dc = 160, dr = 32, w = dc + dr, blockSize = 4, rows = 3, seqs = 2, maxBlocks = 6;
        int capacity = 23;
        int[] positions = {22, 9, -1};                       // row 2 is padding: its o_lat must be zeros
        Random rnd = new Random(11);
        Cache kv = randomCache(rnd, dtype, seqs * maxBlocks * blockSize, dc, dr);
        int[] meta = pagedMeta(positions, seqs, maxBlocks, new int[]{4, 9, 1, 11, 6, 0, 8, 3, 10, 2, 7, 5});
        // probabilities where the softmax wrote them (j ≤ position), garbage after: packProbs must zero it
        float[] probs = new float[rows * heads * capacity];
        for (int i = 0; i < probs.length; i++) probs[i] = i % capacity <= positions[i / capacity / heads] ? rnd.nextFloat() : 1e30f;
        int padded = TensorCoreAttention.padded(capacity);
        int[] pWords = new int[rows * heads * padded / 2];
        TensorCoreAttention.packProbs(probs, POW2, pWords, meta, rows, capacity, heads);
        FloatArray o = new FloatArray(rows * heads * dc);
        o.init(Float.NaN);
        int colBlocks = dc / TensorCoreAttention.VALUE_COLS;
        for (int g = 0; g < TensorCoreAttention.valueGroups(rows, heads, dc); g++) {
            int cb = g % colBlocks, hb = (g / colBlocks) % (heads / 16), r = g / (colBlocks * (heads / 16));
            int len = positions[r] + 1, c0 = cb * TensorCoreAttention.VALUE_COLS;
            float[][] acc = new float[16][TensorCoreAttention.VALUE_COLS];
            for (int j0 = 0; j0 < len; j0 += 16) {
                int[] aTile = new int[16 * 8];
                int[] bTile = new int[16 * TensorCoreAttention.VALUE_COLS / 2];
                int[] raw = new int[16 * TensorCoreAttention.VALUE_COLS];
                for (int i = 0; i < 16 * 8; i++) aTile[i] = pWords[TensorCoreAttention.probWord(r, hb, heads, padded / 2, j0, i)];
                for (int i = 0; i < 16 * 32; i++) raw[i] = TensorCoreAttention.valueRaw(kv.floats, kv.halves, kv.bytes, dtype, meta, meta[2 * r + 1], j0, len, c0, blockSize, dc, w, i);
                for (int i = 0; i < 16 * 16; i++) bTile[TensorCoreAttention.valueWord(i)] = TensorCoreAttention.pack(raw[2 * i], raw[2 * i + 1]);
                for (int panel = 0; panel < 4; panel++) {
                    for (int m = 0; m < 16; m++) {
                        for (int n = 0; n < 8; n++) {
                            for (int k = 0; k < 16; k++) acc[m][8 * panel + n] += aAt(aTile, 0, m, k) * bAt(bTile, panel * 256, k, n);
                        }
                    }
                }
            }
            for (int m = 0; m < 16; m++) {                   // mmaStore of the four panels: (row0 + m, c0 + 8·panel + n)
                for (int c = 0; c < TensorCoreAttention.VALUE_COLS; c++) o.set((r * heads + hb * 16 + m) * dc + c0 + c, acc[m][c]);
            }
        }
        float[] oLat = new float[rows * heads * dc];
        TensorCoreAttention.unpackValues(o, oLat, rows, heads, dc);

        double worstBf16P = 0, worstF32P = 0;
        for (int r = 0; r < rows; r++) {
            for (int h = 0; h < heads; h++) {
                int rh = r * heads + h;
                for (int c = 0; c < dc; c++) {
                    double exactBf16P = 0, exactF32P = 0, magnitude = 0;
                    for (int j = 0; j <= positions[r]; j++) {
                        int slot = CacheLayout.slot(meta, meta[2 * r + 1], j, blockSize);
                        double v = kv.at(slot, c);
                        float p = probs[rh * capacity + j];
                        exactBf16P += Bf16.decode(Bf16.encode(p, POW2), POW2) * v;
                        exactF32P += p * v;
                        magnitude += Math.abs(p * v);
                    }
                    float got = oLat[rh * dc + c];
                    if (positions[r] < 0) {
                        assertEquals(0f, got, 0f, "a padding row's o_lat is zeros");
                        continue;
                    }
                    worstBf16P = Math.max(worstBf16P, Math.abs(got - exactBf16P) / magnitude);
                    worstF32P = Math.max(worstF32P, Math.abs(got - exactF32P) / magnitude);
                }
            }
        }
        double f32Sum = capacity * Math.scalb(1.0, -24);
        assertTrue(worstBf16P <= f32Sum, "against the bf16 probabilities in double precision: " + worstBf16P);
        assertTrue(worstF32P <= Math.scalb(1.0, -8) + f32Sum, "against the f32 probabilities: " + worstF32P);
        assertTrue(worstF32P > worstBf16P, "the f32 probabilities' values differ by their rounding");
    }

    @Test
    void thePropertyTurnsTheTensorCoresOffAndRefusesAnythingButTrueOrFalse() {
        String saved = System.getProperty(TornadoExecutor.TENSOR_CORES);
        try {
            System.clearProperty(TornadoExecutor.TENSOR_CORES);
            assertTrue(TornadoExecutor.tensorCoresAllowed(), "on by default");
            System.setProperty(TornadoExecutor.TENSOR_CORES, "false");
            assertFalse(TornadoExecutor.tensorCoresAllowed());
            System.setProperty(TornadoExecutor.TENSOR_CORES, "TRUE");
            assertTrue(TornadoExecutor.tensorCoresAllowed());
            System.setProperty(TornadoExecutor.TENSOR_CORES, "off");
            org.tornadomla.MlaException e = org.junit.jupiter.api.Assertions.assertThrows(org.tornadomla.MlaException.class,
                    TornadoExecutor::tensorCoresAllowed);
            assertTrue(e.getMessage().contains("-Dtornadomla.tensorCores must be true or false, found 'off'"), e.getMessage());
        } finally {
            if (saved == null) System.clearProperty(TornadoExecutor.TENSOR_CORES);
            else System.setProperty(TornadoExecutor.TENSOR_CORES, saved);
        }
    }

    @Test
    void shapesOutsideTheKernelAreRefused() {
        assertTrue(TensorCoreAttention.supports(CacheLayout.BF16, 128, 512, 64));
        assertTrue(TensorCoreAttention.supports(CacheLayout.BF16, 16, 256, 32));
        assertFalse(TensorCoreAttention.supports(CacheLayout.F32, 128, 512, 64), "an f32 cache");
        assertTrue(TensorCoreAttention.supports(CacheLayout.FP8, 128, 512, 64), "an fp8 cache, decoded into bf16 tiles");
        assertFalse(TensorCoreAttention.supports(CacheLayout.INT8, 128, 512, 64), "an int8 cache");
        assertFalse(TensorCoreAttention.supports(CacheLayout.BF16, 40, 512, 64), "heads not in blocks of 16");
        assertFalse(TensorCoreAttention.supports(CacheLayout.BF16, 128, 520, 64), "d_c not in steps of 16");
        assertFalse(TensorCoreAttention.supports(CacheLayout.BF16, 128, 528, 64), "wider than the shared tiles");
        assertTrue(TensorCoreAttention.supportsValues(CacheLayout.BF16, 128, 512, 64));
        assertFalse(TensorCoreAttention.supportsValues(CacheLayout.BF16, 128, 496, 64), "d_c not in steps of 32");
    }
}
