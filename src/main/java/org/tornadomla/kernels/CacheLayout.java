package org.tornadomla.kernels;

/**
 * The one owner of the latent cache's storage layout: array sizes, where each number and each scale of a
 * cached token lives, bytes per token. Kernel-safe static functions (TornadoVM inlines them), used alike by
 * the kernels, java-fast, {@code LatentCache}, {@code CacheDtype} and {@code CacheFiles}.
 *
 * <p>Logically the cache is [slots, w] with w = d_c + d_r: each token's row is its normalised latent c_kv
 * followed by its roped shared key k_pe (576 numbers for DeepSeek-V3, FlashMLA's row). A slot is where one
 * token's row is stored. The slots are cut into blocks (pages) of {@code blockSize} slots, and sequence b's
 * position j lives in slot {@link #slot block_table[b][j / blockSize]·blockSize + j % blockSize}, as in vLLM
 * and FlashMLA. A contiguous cache is the case of one block of {@code capacity} slots per sequence
 * (block_table[b] = [b], slot = b·capacity + j). Physically it is three arrays, one per number width, whose
 * role depends on the dtype:
 *
 * <pre>
 *  dtype  floats (float[], 32-bit part)           halves (short[], 16-bit part)  bytes (byte[], 8-bit part)
 *  F32    the values [slot, w]                     1-element placeholder          1-element placeholder
 *  BF16   the decoding table Bf16.pow2()             the values, bf16 [slot, w]     1-element placeholder
 *  INT8   2 scales per slot [slot, 2]: latent, rope  1-element placeholder        the values [slot, w]; value = byte · scale
 *  FP8    Bf16.pow2(), then one scale per 128 latent the rope part, bf16 [slot, d_r]  the latent, e4m3 [slot, d_c]
 *         numbers [slot, ⌈d_c/128⌉]
 * </pre>
 *
 * In every array consecutive slots are adjacent (a run of rows can be read as one block). FP8 is FlashMLA's layout: 512 e4m3 bytes + 4 fp32 scales + 64 bf16 numbers = 656 bytes per token for
 * DeepSeek-V3; each block of 128 latent numbers is scaled by its largest magnitude / 448 (at least 1e-4) rounded up to a
 * power of two (ue8m0, as FlashMLA and DeepSeek-V3.2 do).
 *
 * <p>Why three arrays: TornadoVM takes primitive arrays, at most 20 kernel arguments, and 5.2 reads bytes
 * signed only (so bf16 is a {@code short[]}, not byte pairs). The decoding table rides in the float array of
 * the dtypes that need it and otherwise leave it unused.
 */
public final class CacheLayout {
    private CacheLayout() {
    }

    /** Storage dtype codes, as kernels take them (a shape constant: TornadoVM folds the branches on it). */
    public static final int F32 = 0, BF16 = 1, INT8 = 2, FP8 = 3;

    /** Length of the decoding table {@link Bf16#POW2} at the start of a BF16 or FP8 cache's float array. */
    public static final int TABLE = 280;
    /** Latent numbers per FP8 scale. */
    public static final int FP8_BLOCK = 128;

    /** FP8 scales per token: ⌈d_c / 128⌉. */
    public static int fp8Blocks(int dc) {
        return (dc + FP8_BLOCK - 1) / FP8_BLOCK;
    }

    // ---------------------------------------------------------------- array sizes (slots = tokens stored)

    public static long floatsLength(int dtype, long slots, int dc, int dr) {
        if (dtype == F32) return slots * (dc + dr);
        if (dtype == BF16) return TABLE;
        if (dtype == INT8) return 2 * slots;
        return TABLE + slots * fp8Blocks(dc);
    }

    public static long halvesLength(int dtype, long slots, int dc, int dr) {
        if (dtype == BF16) return slots * (dc + dr);
        if (dtype == FP8) return slots * dr;
        return 1;
    }

    public static long bytesLength(int dtype, long slots, int dc, int dr) {
        if (dtype == INT8) return slots * (dc + dr);
        if (dtype == FP8) return slots * dc;
        return 1;
    }

    /** Bytes stored per token, scales included (f32 2,304, bf16 1,152, int8 584, fp8 656 for DeepSeek-V3). */
    public static long bytesPerToken(int dtype, int dc, int dr) {
        if (dtype == F32) return 4L * (dc + dr);
        if (dtype == BF16) return 2L * (dc + dr);
        if (dtype == INT8) return dc + dr + 8L;
        return dc + 4L * fp8Blocks(dc) + 2L * dr;
    }

    // ---------------------------------------------------------------- where a number lives

    /** Index of number col (&lt; w) of a slot in the values array of F32 (floats), BF16 (halves) and INT8 (bytes). */
    public static int valueIndex(int slot, int col, int w) {
        return slot * w + col;
    }

    /** INT8: index in floats of the scale of part 0 (latent, col &lt; d_c) or 1 (rope) of a slot. */
    public static int int8ScaleIndex(int slot, int part) {
        return 2 * slot + part;
    }

    /** FP8: index in bytes of latent number col (&lt; d_c) of a slot. */
    public static int fp8LatentIndex(int slot, int col, int dc) {
        return slot * dc + col;
    }

    /** FP8: index in halves of rope number k (&lt; d_r) of a slot. */
    public static int fp8RopeIndex(int slot, int k, int dr) {
        return slot * dr + k;
    }

    /** FP8: index in floats of the scale of latent number col (&lt; d_c) of a slot. */
    public static int fp8ScaleIndex(int slot, int col, int dc) {
        return TABLE + slot * fp8Blocks(dc) + col / FP8_BLOCK;
    }

    // ---------------------------------------------------------------- paging: where position j of a sequence lives

    /**
     * The slot of position j of a sequence whose block table row starts at {@code tableStart} in
     * {@code table}: table[tableStart + j / blockSize]·blockSize + j % blockSize. The one paging formula: the
     * kernels call it with the step's metadata ({@link #metaRowTable}), the host with its block tables.
     */
    public static int slot(int[] table, int tableStart, int j, int blockSize) {
        return table[tableStart + j / blockSize] * blockSize + j % blockSize;
    }

    /*
     * The step's metadata, one int[] ("attnMeta", vLLM's attention metadata) that every kernel touching the cache
     * takes, so that what changes between steps travels as data and one compiled graph serves every batch
     * composition. For a graph of R token rows over a cache of S sequences of at most M blocks each:
     *
     *   [2r], [2r + 1]               row r: the position of its token in its sequence (−1: a padding row, which
     *                                attends to nothing and writes nothing), and where its sequence's block
     *                                table row starts in attnMeta
     *   [2R + 4b … 2R + 4b + 3]      sequence b: cache_seqlens after the step (0: not in use), where its block
     *                                table row starts, and a block to copy before the step (copy-on-write of a
     *                                shared partial block: source block, or −1, and destination block)
     *   [2R + 4S + b·M + k]          block_table[b][k]
     */

    /** Length of the metadata of a step of {@code rows} token rows over {@code seqs} sequences of at most {@code maxBlocks} blocks. */
    public static long metaLength(int rows, int seqs, int maxBlocks) {
        return 2L * rows + 4L * seqs + (long) seqs * maxBlocks;
    }

    /** Position of row r's token in its sequence, −1 for a padding row. */
    public static int metaRowPosition(int[] meta, int r) {
        return meta[2 * r];
    }

    /** Where row r's block table row starts in meta. */
    public static int metaRowTable(int[] meta, int r) {
        return meta[2 * r + 1];
    }

    /** Sequence b's length after the step (cache_seqlens), for a step of {@code rows} rows. */
    public static int metaSeqLength(int[] meta, int rows, int b) {
        return meta[2 * rows + 4 * b];
    }

    /** Where sequence b's block table row starts in meta. */
    public static int metaSeqTable(int[] meta, int rows, int b) {
        return meta[2 * rows + 4 * b + 1];
    }

    /** The block sequence b copies before the step (copy-on-write), or −1. */
    public static int metaCopySource(int[] meta, int rows, int b) {
        return meta[2 * rows + 4 * b + 2];
    }

    /** The block that receives sequence b's copy. */
    public static int metaCopyTarget(int[] meta, int rows, int b) {
        return meta[2 * rows + 4 * b + 3];
    }

    /** Index in meta of block_table[b][0]. */
    public static int metaTableStart(int rows, int seqs, int maxBlocks, int b) {
        return 2 * rows + 4 * seqs + b * maxBlocks;
    }

    // ---------------------------------------------------------------- the indexer's key cache (sparse configs)

    /*
     * A sparse config (DeepSeek-V3.2's DSA) also caches, per token, the lightning indexer's key: index_head_dim
     * e4m3 codes and one fp32 ue8m0 scale per 128 of them (132 bytes for V3.2), in the same slots as the latent,
     * in two more arrays beside the three above (a dense cache has neither):
     *
     *   indexKeys   (byte[])   the codes [slot, d_idx]
     *   indexScales (float[])  the scales [slot, d_idx / 128]
     *
     * so the block tables, copy-on-write, truncate and free cover them as they cover the latent.
     */

    /** Indexer key codes of a sparse cache: slots · d_idx bytes. */
    public static long indexKeysLength(long slots, int dIdx) {
        return slots * dIdx;
    }

    /** Indexer key scales of a sparse cache: slots · d_idx / 128 floats. */
    public static long indexScalesLength(long slots, int dIdx) {
        return slots * (dIdx / FP8_BLOCK);
    }

    /** Bytes of the indexer's key per token: d_idx codes + 4 per scale (132 for DeepSeek-V3.2); 0 for d_idx = 0 (dense). */
    public static long indexBytesPerToken(int dIdx) {
        return dIdx + 4L * (dIdx / FP8_BLOCK);
    }

    /** Index in indexKeys of code i (&lt; d_idx) of a slot. */
    public static int indexKeyIndex(int slot, int i, int dIdx) {
        return slot * dIdx + i;
    }

    /** Index in indexScales of the scale of block k (&lt; d_idx / 128) of a slot. */
    public static int indexScaleIndex(int slot, int k, int dIdx) {
        return slot * (dIdx / FP8_BLOCK) + k;
    }

    // ---------------------------------------------------------------- host-side views (export, import)

    /** INT8 and FP8: the quantised values stored per token (int8: d_c + d_r bytes, fp8: d_c e4m3 bytes). */
    public static int quantisedValuesPerToken(int dtype, int dc, int dr) {
        return dtype == INT8 ? dc + dr : dc;
    }

    /** INT8 and FP8: the scales stored per token (int8: 2, fp8: ⌈d_c/128⌉). */
    public static int scalesPerToken(int dtype, int dc) {
        return dtype == INT8 ? 2 : fp8Blocks(dc);
    }

    /** INT8 and FP8: index in floats of the first scale of a slot. */
    public static int firstScaleIndex(int dtype, int slot, int dc) {
        return dtype == INT8 ? int8ScaleIndex(slot, 0) : fp8ScaleIndex(slot, 0, dc);
    }
}
