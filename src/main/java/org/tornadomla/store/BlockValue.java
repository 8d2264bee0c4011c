package org.tornadomla.store;

import org.tornadomla.MlaException;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.CacheIdentity;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;
import java.util.zip.CRC32C;

/**
 * The value stored under a block's key (format {@value #FORMAT}): a header, the block's rows in the cache's
 * own dtype ({@link LatentRows}, a sparse cache's indexer keys included) and a CRC32C over everything before
 * it, like the per-tensor checksums of the latent-cache files ({@code CacheFiles}). Little-endian:
 *
 * <pre>
 *  offset  size  field
 *       0     4  magic "MLAB"
 *       4     2  format version (3)
 *       6     1  dtype code (f32 0, bf16 1, int8 2, fp8 3)
 *       7     1  kind (0 full block, 1 a sequence's partial last block)
 *       8     4  layer
 *      12     4  start: position of the first row
 *      16     4  rows
 *      20     4  kv_lora_rank
 *      24     4  qk_rope_head_dim
 *      28    32  SHA-256 of the config (CacheIdentity.configSha256)
 *      60    32  SHA-256 of the weights that made the rows (CacheIdentity.weightsSha256)
 *      92    32  the block's digest (its key is prefix + hex of it)
 *     124     4  index_head_dim: 0 for a dense cache, else each row's indexer key width (sparse, DeepSeek-V3.2)
 *     128     …  rows × bytes per row (LatentRows.rowBytes: CacheLayout.bytesPerToken + the indexer key)
 *     end−4   4  CRC32C of bytes [0, end − 4)
 * </pre>
 *
 * The config hash, layer and weights digest are the identity ({@link CacheIdentity}) of the cache the rows
 * came from. {@link #decode} checks all of it against what the reader expects and returns the rows only when
 * everything matches: a value can be cut short, damaged, made for another config, dtype, layer or other
 * weights, or lie under a key that is not its own, and each is a one-line error naming the key. Version 2
 * values (a dense cache's, no index_head_dim field, rows from offset 124) are still read; version 1 values
 * (no weights digest) are refused like any other version: push them again.
 */
public final class BlockValue {
    private BlockValue() {
    }

    /** The format this version writes, in each block value's header. */
    public static final String FORMAT = "tornado-mla/latent-block/3";
    static final byte[] MAGIC = {'M', 'L', 'A', 'B'};
    static final int VERSION = 3;
    /** The older version still read: dense rows only, a header without the index_head_dim field. */
    static final int VERSION_2 = 2;
    /** Bytes before the rows. */
    public static final int HEADER = 128;
    /** Bytes before the rows of a version-2 value. */
    static final int HEADER_2 = 124;
    /** Bytes of the checksum after them. */
    public static final int TRAILER = 4;

    /** Bytes of a value holding {@code rows} rows of a dense cache. */
    public static long size(CacheDtype dtype, int kvLoraRank, int ropeDim, int rows) {
        return size(dtype, kvLoraRank, ropeDim, 0, rows);
    }

    /** Bytes of a value holding {@code rows} rows, each with an indexer key of {@code indexDim} (0: dense). */
    public static long size(CacheDtype dtype, int kvLoraRank, int ropeDim, int indexDim, int rows) {
        return HEADER + (long) rows * LatentRows.rowBytes(dtype, kvLoraRank, ropeDim, indexDim) + TRAILER;
    }

    /** The value of block {@code key} of the cache of identity {@code id}, holding {@code rows} (key.count() of them). */
    public static byte[] encode(CacheIdentity id, BlockKeys.Key key, LatentRows rows) {
        Objects.requireNonNull(rows, "rows");
        Objects.requireNonNull(key, "key");
        if (rows.count() != key.count()) throw new MlaException("block " + key.index() + " holds " + key.count() + " tokens, found " + rows.count() + " rows");
        return encode(id, key, rows, 0);
    }

    /** The value of block {@code key} of the cache of identity {@code id}, holding rows [from, from + key.count()) of {@code rows}. */
    public static byte[] encode(CacheIdentity id, BlockKeys.Key key, LatentRows rows, int from) {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(rows, "rows");
        int di = indexDimOf(id);
        if (rows.kvLoraRank() != id.config().kvLoraRank() || rows.ropeDim() != id.config().qkRopeHeadDim() || rows.indexDim() != di) {
            throw new MlaException("rows of " + LatentRows.geometry(rows.kvLoraRank(), rows.ropeDim(), rows.indexDim()) + " do not belong to a config with kv_lora_rank "
                    + id.config().kvLoraRank() + ", qk_rope_head_dim " + id.config().qkRopeHeadDim()
                    + (di > 0 ? " and an indexer key of " + di : " and no indexer (dense)"));
        }
        int layer = id.layer();
        byte[] configSha = id.configShaBytes(), weightsSha = id.weightsShaBytes();
        int n = key.count(), rb = rows.rowBytes();
        Objects.checkFromIndexSize(from, n, rows.count());
        long size = size(rows.dtype(), rows.kvLoraRank(), rows.ropeDim(), di, n);
        if (size > Integer.MAX_VALUE - 8) throw new MlaException("a block of " + n + " rows is " + size + " bytes, too large for one value");
        ByteBuffer b = ByteBuffer.allocate((int) size).order(ByteOrder.LITTLE_ENDIAN);
        b.put(MAGIC).putShort((short) VERSION).put((byte) rows.dtype().code).put((byte) (key.partial() ? 1 : 0))
                .putInt(layer).putInt(key.start()).putInt(n).putInt(rows.kvLoraRank()).putInt(rows.ropeDim())
                .put(configSha).put(weightsSha).put(key.digest()).putInt(di).put(rows.shared(), from * rb, n * rb);
        CRC32C crc = new CRC32C();
        crc.update(b.array(), 0, b.position());
        b.putInt((int) crc.getValue());
        return b.array();
    }

    /**
     * What a reader expects of a value: the config, the weights (null: any, for a cache that belongs to no
     * layer yet; {@link #weightsSha(byte[])} then says whose rows they are), the cache's dtype and geometry,
     * the layer and the block.
     */
    public record Expected(byte[] configSha, byte[] weightsSha, CacheDtype dtype, int kvLoraRank, int ropeDim, int indexDim, int layer, BlockKeys.Key key) {
        /** Checks the components. */
        public Expected {
            Objects.requireNonNull(configSha, "configSha");
            if (configSha.length != 32) throw new MlaException("config hash: expected 32 bytes, found " + configSha.length);
            if (weightsSha != null && weightsSha.length != 32) throw new MlaException("weights hash: expected 32 bytes, found " + weightsSha.length);
            if (indexDim < 0) throw new MlaException("index_head_dim: expected 0 (dense) or more, found " + indexDim);
            configSha = configSha.clone();
            weightsSha = weightsSha == null ? null : weightsSha.clone();
        }

        /** What a reader of a dense cache expects (no indexer keys). */
        public Expected(byte[] configSha, byte[] weightsSha, CacheDtype dtype, int kvLoraRank, int ropeDim, int layer, BlockKeys.Key key) {
            this(configSha, weightsSha, dtype, kvLoraRank, ropeDim, 0, layer, key);
        }

        /** What a reader of a cache of identity {@code id} expects of block {@code key}. */
        public static Expected of(CacheIdentity id, CacheDtype dtype, BlockKeys.Key key) {
            return new Expected(id.configShaBytes(), id.weightsShaBytes(), dtype, id.config().kvLoraRank(), id.config().qkRopeHeadDim(),
                    indexDimOf(id), id.layer(), key);
        }

        /** A copy of the config's SHA-256. */
        @Override
        public byte[] configSha() {
            return configSha.clone();
        }

        /** A copy of the weights' SHA-256, or null (any). */
        @Override
        public byte[] weightsSha() {
            return weightsSha == null ? null : weightsSha.clone();
        }
    }

    /** index_head_dim of the rows of a cache of identity {@code id}: its config's indexer key width, 0 for dense MLA. */
    static int indexDimOf(CacheIdentity id) {
        return id.config().sparse() ? id.config().indexer().headDim() : 0;
    }

    /** The weights' SHA-256 a value records (bytes 60 … 92; the value itself is not checked: {@link #decode} it first). */
    public static byte[] weightsSha(byte[] value) {
        Objects.requireNonNull(value, "value");
        if (value.length < HEADER_2) throw new MlaException("a latent block of " + value.length + " bytes has no weights digest (its header is " + HEADER + " bytes)");
        return Arrays.copyOfRange(value, 60, 92);
    }

    /**
     * The rows of a value, after checking (in this order) its size, magic and version, that its length matches
     * its header, its checksum, then config, dtype, geometry, layer, weights, key, position and row count against
     * {@code e}, and finally that every number is one a cache can hold. {@code where} names the value in
     * messages (the store's address and the key).
     */
    public static LatentRows decode(byte[] value, Expected e, String where) {
        Objects.requireNonNull(value, "value");
        Objects.requireNonNull(e, "e");
        if (value.length < HEADER_2 + TRAILER) {
            throw new MlaException(where + ": truncated: " + value.length + " bytes, a latent block (" + FORMAT + ") has at least " + (HEADER_2 + TRAILER));
        }
        ByteBuffer b = ByteBuffer.wrap(value).order(ByteOrder.LITTLE_ENDIAN);
        if (!Arrays.equals(value, 0, 4, MAGIC, 0, 4)) {
            throw new MlaException(where + ": not a latent block: starts with 0x" + HexFormat.of().formatHex(value, 0, 4) + ", expected \"MLAB\" (" + FORMAT + ")");
        }
        int version = Short.toUnsignedInt(b.getShort(4));
        if (version != VERSION && version != VERSION_2) {
            throw new MlaException(where + ": latent block of format version " + version + ", this reader knows versions " + VERSION_2 + " and " + VERSION);
        }
        int header = version == VERSION ? HEADER : HEADER_2;
        if (value.length < header + TRAILER) {
            throw new MlaException(where + ": truncated: " + value.length + " bytes, a latent block of version " + version + " has at least " + (header + TRAILER));
        }
        int di = version == VERSION ? b.getInt(124) : 0;
        int code = value[6], kind = value[7];
        CacheDtype dtype = null;
        for (CacheDtype d : CacheDtype.values()) if (d.code == code) dtype = d;
        int layer = b.getInt(8), start = b.getInt(12), rows = b.getInt(16), dc = b.getInt(20), dr = b.getInt(24);
        // the length first: a cut value would otherwise only show as a checksum mismatch
        if (dtype != null && rows >= 0 && dc > 0 && dr > 0 && dc <= 1 << 20 && dr <= 1 << 20 && di >= 0 && di <= 1 << 20 && di % 128 == 0) {
            long expect = header + (long) rows * LatentRows.rowBytes(dtype, dc, dr, di) + TRAILER;
            if (value.length != expect) {
                throw new MlaException(where + ": " + (value.length < expect ? "truncated" : "longer than its header says") + ": " + value.length
                        + " bytes, its header describes " + rows + " " + dtype + " rows of " + LatentRows.geometry(dc, dr, di) + " in " + expect + " bytes");
            }
        }
        CRC32C crc = new CRC32C();
        crc.update(value, 0, value.length - TRAILER);
        long recorded = Integer.toUnsignedLong(b.getInt(value.length - TRAILER));
        if (crc.getValue() != recorded) {
            throw new MlaException(where + ": damaged: its bytes have CRC32C " + String.format("%08x", crc.getValue()) + ", the value records "
                    + String.format("%08x", recorded));
        }
        if (dtype == null) throw new MlaException(where + ": unknown dtype code " + code + " (expected 0 … 3)");
        if (!Arrays.equals(value, 28, 60, e.configSha(), 0, 32)) {
            throw new MlaException(where + ": made for another config (sha256 " + HexFormat.of().formatHex(value, 28, 34) + "…, this layer's is "
                    + HexFormat.of().formatHex(e.configSha(), 0, 6) + "…)");
        }
        if (dtype != e.dtype()) throw new MlaException(where + ": holds " + dtype + " rows, the cache stores " + e.dtype());
        if (dc != e.kvLoraRank() || dr != e.ropeDim() || di != e.indexDim()) {
            throw new MlaException(where + ": rows of " + LatentRows.geometry(dc, dr, di) + ", the cache's are " + LatentRows.geometry(e.kvLoraRank(), e.ropeDim(), e.indexDim())
                    + (di != e.indexDim() ? (e.indexDim() > 0 ? " (a sparse cache: its rows hold the indexer's keys too)" : " (a dense cache)") : ""));
        }
        if (layer != e.layer()) throw new MlaException(where + ": holds layer " + layer + ", expected layer " + e.layer());
        if (e.weightsSha != null && !Arrays.equals(value, 60, 92, e.weightsSha, 0, 32)) {
            throw new MlaException(where + ": made by other weights (kv_a_proj_with_mqa/kv_a_layernorm sha256 " + HexFormat.of().formatHex(value, 60, 66)
                    + "…, this layer's are " + HexFormat.of().formatHex(e.weightsSha, 0, 6) + "…)");
        }
        BlockKeys.Key k = e.key();
        if (!Arrays.equals(value, 92, 124, k.digest(), 0, 32)) {
            throw new MlaException(where + ": holds block " + HexFormat.of().formatHex(value, 92, 98) + "…, not the block its key names");
        }
        if (start != k.start() || rows != k.count() || kind != (k.partial() ? 1 : 0)) {
            throw new MlaException(where + ": holds " + rows + " rows from position " + start + (kind == 1 ? " (partial)" : "") + ", expected " + k.count()
                    + " from position " + k.start() + (k.partial() ? " (partial)" : ""));
        }
        LatentRows out = new LatentRows(dtype, dc, dr, di, rows, Arrays.copyOfRange(value, header, value.length - TRAILER));
        out.check(where);
        return out;
    }
}
