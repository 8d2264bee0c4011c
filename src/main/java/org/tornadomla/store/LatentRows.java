package org.tornadomla.store;

import org.tornadomla.internal.Memory;
import org.tornadomla.MlaException;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.kernels.CacheLayout;
import org.tornadomla.weights.Bf16Bits;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * {@code count} consecutive tokens of one layer's latent cache in the cache's own storage dtype, packed as
 * the store moves them: per token {@link CacheLayout#bytesPerToken} bytes, little-endian, the normalised
 * latent c_kv (kv_lora_rank numbers) first, then the roped shared key k_pe (qk_rope_head_dim numbers,
 * interleaved rope order):
 *
 * <pre>
 *  f32   c_kv d_c × f32   | k_pe d_r × f32                                       2,304 B for DeepSeek-V3
 *  bf16  c_kv d_c × bf16  | k_pe d_r × bf16                                      1,152 B
 *  int8  c_kv d_c × int8  | k_pe d_r × int8 | scale(c_kv) f32 | scale(k_pe) f32    584 B
 *  fp8   c_kv d_c × e4m3  | ⌈d_c/128⌉ × f32 scales | k_pe d_r × bf16             656 B (FlashMLA's row)
 * </pre>
 *
 * A sparse config's cache (DeepSeek-V3.2's DSA, {@code indexDim} = index_head_dim &gt; 0) also holds each
 * token's lightning-indexer key, which follows the latent row in every dtype:
 *
 * <pre>
 *  … latent row …  | index key d_idx × e4m3 | d_idx/128 × f32 scales              +132 B for DeepSeek-V3.2
 * </pre>
 *
 * The bytes are exactly what the cache stores, so a push and a pull move no number through a conversion that
 * could round it. The array is owned by the record (callers hand it over and must not change it afterwards);
 * {@link #data()} returns a copy.
 */
public record LatentRows(CacheDtype dtype, int kvLoraRank, int ropeDim, int indexDim, int count, byte[] data) {
    private static final VarHandle F32 = MethodHandles.byteArrayViewVarHandle(float[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle I16 = MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle I32 = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

    /** Checks that the bytes hold whole rows of the dtype and width. */
    public LatentRows {
        Objects.requireNonNull(dtype, "dtype");
        Objects.requireNonNull(data, "data");
        if (kvLoraRank <= 0 || ropeDim <= 0 || count < 0) {
            throw new MlaException("latent rows: expected kv_lora_rank, qk_rope_head_dim > 0 and count >= 0, found "
                    + kvLoraRank + ", " + ropeDim + ", " + count);
        }
        if (indexDim < 0 || indexDim % CacheLayout.FP8_BLOCK != 0) {
            throw new MlaException("latent rows: expected index_head_dim 0 (dense) or a positive multiple of " + CacheLayout.FP8_BLOCK
                    + ", found " + indexDim);
        }
        long expected = (long) count * rowBytes(dtype, kvLoraRank, ropeDim, indexDim);
        if (data.length != expected) {
            throw new MlaException("latent rows: " + count + " " + dtype + " rows of " + geometry(kvLoraRank, ropeDim, indexDim) + " are " + expected
                    + " bytes, found " + data.length);
        }
    }

    /** Rows of a dense cache (no indexer keys). */
    public LatentRows(CacheDtype dtype, int kvLoraRank, int ropeDim, int count, byte[] data) {
        this(dtype, kvLoraRank, ropeDim, 0, count, data);
    }

    /** "[d_c + d_r]", or "[d_c + d_r] + index key d_idx" for a sparse cache's rows: how messages name a geometry. */
    static String geometry(int kvLoraRank, int ropeDim, int indexDim) {
        return "[" + kvLoraRank + " + " + ropeDim + "]" + (indexDim > 0 ? " + index key " + indexDim : "");
    }

    /** A copy of the rows' bytes (the record keeps its own). */
    @Override
    public byte[] data() {
        return data.clone();
    }

    /** The record's own bytes, for this package's readers that only read them. */
    byte[] shared() {
        return data;
    }

    /** Bytes per token of a dense cache: {@link CacheLayout#bytesPerToken}, scales included. */
    public static int rowBytes(CacheDtype dtype, int kvLoraRank, int ropeDim) {
        return (int) CacheLayout.bytesPerToken(dtype.code, kvLoraRank, ropeDim);
    }

    /** Bytes per token, the indexer key of a sparse cache ({@code indexDim} &gt; 0) included. */
    public static int rowBytes(CacheDtype dtype, int kvLoraRank, int ropeDim, int indexDim) {
        return (int) (CacheLayout.bytesPerToken(dtype.code, kvLoraRank, ropeDim) + CacheLayout.indexBytesPerToken(indexDim));
    }

    /** Bytes of one row. */
    public int rowBytes() {
        return rowBytes(dtype, kvLoraRank, ropeDim, indexDim);
    }

    /** Bytes of one row's latent part, where its indexer key (if any) starts. */
    int latentBytes() {
        return rowBytes(dtype, kvLoraRank, ropeDim);
    }

    /** Rows [from, from + n) as their own record (a copy). */
    public LatentRows slice(int from, int n) {
        Objects.checkFromIndexSize(from, n, count);
        int rb = rowBytes();
        return new LatentRows(dtype, kvLoraRank, ropeDim, indexDim, n, Arrays.copyOfRange(data, from * rb, (from + n) * rb));
    }

    /** The rows of {@code parts} one after the other; all of one dtype and geometry (a dense cache's: no indexer keys). */
    public static LatentRows concat(CacheDtype dtype, int kvLoraRank, int ropeDim, List<LatentRows> parts) {
        return concat(dtype, kvLoraRank, ropeDim, 0, parts);
    }

    /** The rows of {@code parts} one after the other; all of one dtype and geometry, index_head_dim included. */
    public static LatentRows concat(CacheDtype dtype, int kvLoraRank, int ropeDim, int indexDim, List<LatentRows> parts) {
        long n = 0;
        for (LatentRows p : parts) {
            if (p.dtype != dtype || p.kvLoraRank != kvLoraRank || p.ropeDim != ropeDim || p.indexDim != indexDim) {
                throw new MlaException("latent rows: cannot join " + p.dtype + " " + geometry(p.kvLoraRank, p.ropeDim, p.indexDim) + " rows to "
                        + dtype + " " + geometry(kvLoraRank, ropeDim, indexDim));
            }
            n += p.count;
        }
        int rb = rowBytes(dtype, kvLoraRank, ropeDim, indexDim);
        byte[] out = new byte[Memory.arrayLength(n * rb, "latent rows of " + n + " tokens")];
        int at = 0;
        for (LatentRows p : parts) {
            System.arraycopy(p.data, 0, out, at, p.data.length);
            at += p.data.length;
        }
        return new LatentRows(dtype, kvLoraRank, ropeDim, indexDim, (int) n, out);
    }

    // ---------------------------------------------------------------- as the cache's public API takes them

    /** f32 or bf16 rows: the latents [count, d_c], decoded (exactly). */
    public float[] latent() {
        return plain(0, kvLoraRank);
    }

    /** f32 or bf16 rows: the roped keys [count, d_r]; fp8 rows: their bf16 rope part; decoded (exactly). */
    public float[] ropeKey() {
        if (dtype == CacheDtype.FP8) {
            int vpt = kvLoraRank, spt = CacheLayout.scalesPerToken(dtype.code, kvLoraRank), rb = rowBytes();
            float[] out = new float[count * ropeDim];
            for (int t = 0; t < count; t++) {
                int r0 = t * rb + vpt + 4 * spt;
                for (int i = 0; i < ropeDim; i++) out[t * ropeDim + i] = Bf16Bits.decode((short) I16.get(data, r0 + 2 * i));
            }
            return out;
        }
        return plain(kvLoraRank, ropeDim);
    }

    private float[] plain(int offset, int width) {
        if (dtype != CacheDtype.F32 && dtype != CacheDtype.BF16) throw new MlaException("latent rows: " + dtype + " rows are quantised");
        int rb = rowBytes(), w = kvLoraRank + ropeDim;
        float[] out = new float[count * width];
        for (int t = 0; t < count; t++) {
            for (int i = 0; i < width; i++) {
                out[t * width + i] = dtype == CacheDtype.F32 ? (float) F32.get(data, t * rb + 4 * (offset + i))
                        : Bf16Bits.decode((short) I16.get(data, t * rb + 2 * (offset + i)));
            }
        }
        return out;
    }

    /** int8 or fp8 rows: the byte values [count, values per token] as stored. */
    public byte[] values() {
        int vpt = quantisedValuesPerToken(), rb = rowBytes();
        byte[] out = new byte[count * vpt];
        for (int t = 0; t < count; t++) System.arraycopy(data, t * rb, out, t * vpt, vpt);
        return out;
    }

    /** int8 or fp8 rows: the scales [count, scales per token]. */
    public float[] scales() {
        int vpt = quantisedValuesPerToken(), spt = CacheLayout.scalesPerToken(dtype.code, kvLoraRank), rb = rowBytes();
        float[] out = new float[count * spt];
        for (int t = 0; t < count; t++) {
            for (int s = 0; s < spt; s++) out[t * spt + s] = (float) F32.get(data, t * rb + vpt + 4 * s);
        }
        return out;
    }

    /** A sparse cache's rows: the indexer keys' e4m3 codes [count, index_head_dim] as stored. */
    public byte[] indexCodes() {
        requireIndex();
        int rb = rowBytes(), at = latentBytes();
        byte[] out = new byte[count * indexDim];
        for (int t = 0; t < count; t++) System.arraycopy(data, t * rb + at, out, t * indexDim, indexDim);
        return out;
    }

    /** A sparse cache's rows: the indexer keys' scales [count, index_head_dim / 128]. */
    public float[] indexScales() {
        requireIndex();
        int rb = rowBytes(), at = latentBytes() + indexDim, spt = indexDim / CacheLayout.FP8_BLOCK;
        float[] out = new float[count * spt];
        for (int t = 0; t < count; t++) {
            for (int s = 0; s < spt; s++) out[t * spt + s] = (float) F32.get(data, t * rb + at + 4 * s);
        }
        return out;
    }

    private void requireIndex() {
        if (indexDim == 0) throw new MlaException("latent rows: rows of a dense cache hold no indexer keys");
    }

    private int quantisedValuesPerToken() {
        if (dtype != CacheDtype.INT8 && dtype != CacheDtype.FP8) throw new MlaException("latent rows: " + dtype + " rows are not quantised");
        return CacheLayout.quantisedValuesPerToken(dtype.code, kvLoraRank, ropeDim);
    }

    /**
     * Throws, naming {@code where} and the first bad number, unless every number could have come out of a
     * cache: finite values (bf16: no ±∞/NaN patterns), finite non-negative scales, no e4m3 NaN code 0x7F/0xFF.
     * A checksum catches damage in transit; this catches a writer that stored what no cache holds.
     */
    public void check(String where) {
        int rb = rowBytes();
        for (int t = 0; t < count; t++) {
            int at = t * rb;
            switch (dtype) {
                // an exponent of all ones is ±∞ or NaN: tested on the bits, which is what a pull spends its time on
                case F32 -> {
                    for (int i = 0; i < kvLoraRank + ropeDim; i++) {
                        if (((int) I32.get(data, at + 4 * i) & 0x7F800000) == 0x7F800000) finite((float) F32.get(data, at + 4 * i), where, t, i, "number");
                    }
                }
                case BF16 -> {
                    for (int i = 0; i < kvLoraRank + ropeDim; i++) {
                        if (((short) I16.get(data, at + 2 * i) & 0x7F80) == 0x7F80) finite(Bf16Bits.decode((short) I16.get(data, at + 2 * i)), where, t, i, "number");
                    }
                }
                case INT8 -> {
                    int w = kvLoraRank + ropeDim;
                    for (int s = 0; s < 2; s++) scale((float) F32.get(data, at + w + 4 * s), where, t, s);
                }
                case FP8 -> {
                    for (int i = 0; i < kvLoraRank; i++) {
                        if ((data[at + i] & 0x7F) == 0x7F) {
                            throw new MlaException(where + ": row " + t + " latent [" + i + "] is the e4m3 NaN code 0x"
                                    + String.format("%02x", data[at + i] & 0xFF));
                        }
                    }
                    int spt = CacheLayout.scalesPerToken(dtype.code, kvLoraRank);
                    for (int s = 0; s < spt; s++) scale((float) F32.get(data, at + kvLoraRank + 4 * s), where, t, s);
                    int r0 = at + kvLoraRank + 4 * spt;
                    for (int i = 0; i < ropeDim; i++) {
                        if (((short) I16.get(data, r0 + 2 * i) & 0x7F80) == 0x7F80) finite(Bf16Bits.decode((short) I16.get(data, r0 + 2 * i)), where, t, kvLoraRank + i, "number");
                    }
                }
            }
            if (indexDim > 0) checkIndex(at + latentBytes(), where, t);
        }
    }

    /** A sparse row's indexer key: no e4m3 NaN code, scales finite and &gt; 0 (what the indexer's quantisation writes). */
    private void checkIndex(int at, String where, int t) {
        for (int i = 0; i < indexDim; i++) {
            if ((data[at + i] & 0x7F) == 0x7F) {
                throw new MlaException(where + ": row " + t + " index key [" + i + "] is the e4m3 NaN code 0x" + String.format("%02x", data[at + i] & 0xFF));
            }
        }
        for (int s = 0; s < indexDim / CacheLayout.FP8_BLOCK; s++) {
            float v = (float) F32.get(data, at + indexDim + 4 * s);
            if (!(v > 0) || Float.isInfinite(v)) {
                throw new MlaException(where + ": row " + t + " index key scale [" + s + "] is " + v + "; the indexer's scales are finite and > 0");
            }
        }
    }

    private void finite(float v, String where, int t, int i, String what) {
        if (!Float.isFinite(v)) {
            throw new MlaException(where + ": row " + t + " " + what + " [" + i + "] (" + (i < kvLoraRank ? "c_kv" : "k_pe") + ") is " + v
                    + "; a cache holds finite numbers only");
        }
    }

    private static void scale(float v, String where, int t, int s) {
        if (!(v >= 0) || Float.isInfinite(v)) {
            throw new MlaException(where + ": row " + t + " scale [" + s + "] is " + v + "; scales are finite and >= 0");
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof LatentRows r && r.dtype == dtype && r.kvLoraRank == kvLoraRank && r.ropeDim == ropeDim
                && r.indexDim == indexDim && r.count == count && Arrays.equals(r.data, data);
    }

    @Override
    public int hashCode() {
        return Objects.hash(dtype, kvLoraRank, ropeDim, indexDim, count) * 31 + Arrays.hashCode(data);
    }

    @Override
    public String toString() {
        return count + " " + dtype + " rows of " + geometry(kvLoraRank, ropeDim, indexDim);
    }
}
