package org.tornadomla.kernels;

import uk.ac.manchester.tornado.api.annotations.Parallel;

/**
 * The latent cache in kernels: reading one number ({@link #load}), appending a step's rows
 * ({@link #append}) and copying shared blocks before they are written ({@link #copyBlocks}). Where things live is {@link CacheLayout}'s business. Kernels take the cache's three
 * arrays (floats, halves, bytes) and the dtype code; the dtype is a shape constant, so TornadoVM folds the
 * branches in {@link #load} away. Decoding happens inside the score and accumulation loops: there is never
 * a dequantised copy of the cache.
 */
public final class CacheOps {
    private CacheOps() {
    }

    /** Number {@code col} (&lt; d_c + d_r) of cache slot {@code slot}, as float. */
    public static float load(float[] floats, short[] halves, byte[] bytes, int dtype, int slot, int col, int w, int dc) {
        if (dtype == CacheLayout.BF16) {
            return Bf16.decode(halves[CacheLayout.valueIndex(slot, col, w)], floats);
        } else if (dtype == CacheLayout.FP8) {
            if (col < dc) {
                return Fp8.decode(bytes[CacheLayout.fp8LatentIndex(slot, col, dc)], floats) * floats[CacheLayout.fp8ScaleIndex(slot, col, dc)];
            }
            return Bf16.decode(halves[CacheLayout.fp8RopeIndex(slot, col - dc, w - dc)], floats);
        } else if (dtype == CacheLayout.INT8) {
            return bytes[CacheLayout.valueIndex(slot, col, w)] * floats[CacheLayout.int8ScaleIndex(slot, col < dc ? 0 : 1)];
        }
        return floats[CacheLayout.valueIndex(slot, col, w)];
    }

    /**
     * Writes each token row r's latent, from ckv [rows, d_c], and roped key, from kvA [rows, d_c + d_r] (its last
     * d_r numbers), into the slot of its position in its sequence (attnMeta, {@link CacheLayout#slot}); padding
     * rows (position −1) write nothing. The caller has made room (blocks allocated, shared ones copied).
     */
    public static void append(float[] ckv, float[] kvA, float[] floats, short[] halves, byte[] bytes, int dtype,
                              int[] attnMeta, int rows, int blockSize, int dc, int dr) {
        for (@Parallel int r = 0; r < rows; r++) {
            int pos = CacheLayout.metaRowPosition(attnMeta, r);
            int slot = CacheLayout.slot(attnMeta, CacheLayout.metaRowTable(attnMeta, r), pos < 0 ? 0 : pos, blockSize);
            if (pos < -1) {
                // never taken: TornadoVM does not copy in an array a kernel only writes (docs/design.md §2), so
                // this read keeps the rows already cached when the cache comes from the host
                ckv[r * dc] = floats[slot] + halves[slot] + bytes[slot];
            }
            if (pos >= 0) {
                // the per-dtype writers directly, not CacheRows.writeRow: TornadoVM refuses to inline more than 600 nodes at once
                if (dtype == CacheLayout.FP8) {
                    CacheRows.writeRowFp8(ckv, r * dc, kvA, r * (dc + dr) + dc, floats, halves, bytes, slot, dc, dr);
                } else if (dtype == CacheLayout.INT8) {
                    CacheRows.writeRowInt8(ckv, r * dc, kvA, r * (dc + dr) + dc, floats, bytes, slot, dc, dr);
                } else {
                    CacheRows.writeRowFloat(ckv, r * dc, kvA, r * (dc + dr) + dc, floats, halves, dtype, slot, dc, dr);
                }
            }
        }
    }

    /**
     * Copy-on-write before a step: every sequence b with a copy in attnMeta ({@link CacheLayout#metaCopySource}
     * ≥ 0) gets the {@code blockSize} slots of that block copied, stored numbers and scales as they are, into its
     * new block ({@link CacheLayout#metaCopyTarget}). A fork shares its parent's blocks; the one a sequence is
     * about to write into, its partial last block, is copied first (vLLM's copy_blocks).
     */
    public static void copyBlocks(float[] floats, short[] halves, byte[] bytes, int dtype, int[] attnMeta, int rows, int seqs,
                                  int blockSize, int dc, int dr) {
        for (@Parallel int b = 0; b < seqs; b++) {
            for (@Parallel int t = 0; t < blockSize; t++) {
                int src = CacheLayout.metaCopySource(attnMeta, rows, b);
                if (src >= 0) {
                    int from = src * blockSize + t;
                    int to = CacheLayout.metaCopyTarget(attnMeta, rows, b) * blockSize + t;
                    int w = dc + dr;
                    if (dtype == CacheLayout.F32) {
                        for (int i = 0; i < w; i++) {
                            floats[CacheLayout.valueIndex(to, i, w)] = floats[CacheLayout.valueIndex(from, i, w)];
                        }
                    } else if (dtype == CacheLayout.BF16) {
                        for (int i = 0; i < w; i++) {
                            halves[CacheLayout.valueIndex(to, i, w)] = halves[CacheLayout.valueIndex(from, i, w)];
                        }
                    } else if (dtype == CacheLayout.INT8) {
                        for (int i = 0; i < w; i++) {
                            bytes[CacheLayout.valueIndex(to, i, w)] = bytes[CacheLayout.valueIndex(from, i, w)];
                        }
                        floats[CacheLayout.int8ScaleIndex(to, 0)] = floats[CacheLayout.int8ScaleIndex(from, 0)];
                        floats[CacheLayout.int8ScaleIndex(to, 1)] = floats[CacheLayout.int8ScaleIndex(from, 1)];
                    } else {
                        for (int i = 0; i < dc; i++) {
                            bytes[CacheLayout.fp8LatentIndex(to, i, dc)] = bytes[CacheLayout.fp8LatentIndex(from, i, dc)];
                        }
                        for (int i = 0; i < dc; i += CacheLayout.FP8_BLOCK) {
                            floats[CacheLayout.fp8ScaleIndex(to, i, dc)] = floats[CacheLayout.fp8ScaleIndex(from, i, dc)];
                        }
                        for (int k = 0; k < dr; k++) {
                            halves[CacheLayout.fp8RopeIndex(to, k, dr)] = halves[CacheLayout.fp8RopeIndex(from, k, dr)];
                        }
                    }
                }
            }
        }
    }

    /**
     * A sparse cache's indexer keys, appended like {@link #append} appends the latent: each token row r's e4m3 key
     * codes [rows, d_idx] and scales [rows, d_idx/128] ({@link Indexer#quantizeBlocks} of the indexer's k) go to
     * the slot of its position (attnMeta, {@link CacheLayout#slot}), in indexKeys [slot, d_idx] and indexScales
     * [slot, d_idx/128]; padding rows write nothing. Runs after {@link #copyIndexBlocks}, before the index scores.
     */
    public static void appendIndexKeys(byte[] codes, float[] scales, byte[] indexKeys, float[] indexScales, int[] attnMeta,
                                       int rows, int blockSize, int dIdx) {
        for (@Parallel int r = 0; r < rows; r++) {
            int pos = CacheLayout.metaRowPosition(attnMeta, r);
            int slot = CacheLayout.slot(attnMeta, CacheLayout.metaRowTable(attnMeta, r), pos < 0 ? 0 : pos, blockSize);
            int blocks = dIdx / CacheLayout.FP8_BLOCK;
            if (pos < -1) {
                // never taken: keeps the rows already cached when TornadoVM copies the arrays in (docs/design.md §2)
                codes[r * dIdx] = (byte) (indexKeys[slot * dIdx] + (int) indexScales[slot * blocks]);
            }
            if (pos >= 0) {
                for (int i = 0; i < dIdx; i++) {
                    indexKeys[CacheLayout.indexKeyIndex(slot, i, dIdx)] = codes[r * dIdx + i];
                }
                for (int k = 0; k < blocks; k++) {
                    indexScales[CacheLayout.indexScaleIndex(slot, k, dIdx)] = scales[r * blocks + k];
                }
            }
        }
    }

    /**
     * Copy-on-write of a sparse cache's indexer keys, as {@link #copyBlocks} copies the latent: the
     * {@code blockSize} slots of every block to copy before the step (attnMeta) get their codes and scales copied
     * into the new block. Runs in the same step as copyBlocks, before any append.
     */
    public static void copyIndexBlocks(byte[] indexKeys, float[] indexScales, int[] attnMeta, int rows, int seqs, int blockSize, int dIdx) {
        for (@Parallel int b = 0; b < seqs; b++) {
            for (@Parallel int t = 0; t < blockSize; t++) {
                int src = CacheLayout.metaCopySource(attnMeta, rows, b);
                if (src >= 0) {
                    int from = src * blockSize + t;
                    int to = CacheLayout.metaCopyTarget(attnMeta, rows, b) * blockSize + t;
                    for (int i = 0; i < dIdx; i++) {
                        indexKeys[CacheLayout.indexKeyIndex(to, i, dIdx)] = indexKeys[CacheLayout.indexKeyIndex(from, i, dIdx)];
                    }
                    for (int k = 0; k < dIdx / CacheLayout.FP8_BLOCK; k++) {
                        indexScales[CacheLayout.indexScaleIndex(to, k, dIdx)] = indexScales[CacheLayout.indexScaleIndex(from, k, dIdx)];
                    }
                }
            }
        }
    }
}
