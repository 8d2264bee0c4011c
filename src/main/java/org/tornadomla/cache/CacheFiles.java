package org.tornadomla.cache;

import org.tornadomla.internal.Messages;
import org.tornadomla.cache.internal.CacheStorage;
import org.tornadomla.MlaException;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.kernels.CacheLayout;
import org.tornadomla.weights.DType;
import org.tornadomla.weights.SafeTensorsFile;
import org.tornadomla.weights.SafeTensorsWriter;
import org.tornadomla.weights.TensorInfo;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * A sequence's latent cache as a safetensors file: what a prefill node hands to a decode node, or what a
 * CPU offload writes. Tensors {@code kv_cache} [n, kv_lora_rank] and {@code pe_cache} [n, qk_rope_head_dim]
 * (interleaved rope order) in the cache's own storage dtype (an int8 cache: {@code kv_cache_int8}
 * [n, d_c + d_r] and {@code kv_cache_scales} [n, 2]; an fp8 cache: {@code kv_cache_fp8} F8_E4M3 [n, d_c],
 * {@code kv_cache_scales} [n, d_c/128] and {@code pe_cache} BF16), so a round trip is bit-identical; a sparse
 * config's cache (DeepSeek-V3.2) adds the indexer's keys as stored, {@code index_k_fp8} F8_E4M3 [n, index_head_dim]
 * and {@code index_k_scales} F32 [n, index_head_dim/128]; metadata
 * (format {@value #FORMAT}): format, the identity of the cache ({@link CacheIdentity}: {@code config}, the
 * canonical config JSON without quantization_config, {@code config_sha256} its SHA-256, {@code layer} and
 * {@code weights_sha256}), dtype, length (positions 0 … n−1) and a CRC32C of each tensor's bytes
 * ({@code crc32c.<tensor>}). The identity comes from the cache itself ({@link LatentCache#identity()}: the layer
 * that made or filled it), never from an argument.
 *
 * <p>An import checks all of it before writing anything, and refuses: another format, dtype, or identity than
 * the target cache's (naming the config fields, layer or weights that differ); a metadata key the export does
 * not write; a tensor missing, extra, of another dtype or shape; a checksum that does not match (a flipped bit
 * anywhere in the data); NaN or infinite values or scales, negative scales, and the e4m3 NaN codes 0x7F/0xFF.
 * Files of formats 1 (no checksums) and 2 (config hash only: no layer, no weights) are refused with "export it
 * again": they cannot say which layer of which model they belong to.
 */
public final class CacheFiles {
    private CacheFiles() {
    }

    /** The format this version writes, in each file's metadata. */
    public static final String FORMAT = "tornado-mla/latent-cache/3";
    /** The format before per-tensor checksums. */
    static final String FORMAT_1 = "tornado-mla/latent-cache/1";
    /** The format before the layer and the weights' digest. */
    static final String FORMAT_2 = "tornado-mla/latent-cache/2";

    /**
     * Writes sequence b of {@code cache} to {@code file}, stamped with the cache's identity. Refused for a cache
     * without one (made with a constructor and written directly, never filled by a layer: make it with
     * {@code MlaLayer.newCache}, or {@link LatentCache#bind} it to the layer's identity), and, with nothing written,
     * for a sequence holding NaN or ±∞ (which {@link #importInto} would refuse), and for a {@code file} that exists
     * unless {@code options} hold {@link StandardCopyOption#REPLACE_EXISTING}: one wrong path in a server's settings
     * must not turn a checkpoint or another sequence's file into this one, nor one that another process or thread
     * creates while this one is written (the file is published only under a free name: a hard link, where the file
     * system has them). The file is written whole or not at all.
     */
    public static void export(LatentCache cache, int b, Path file, StandardCopyOption... options) {
        Objects.requireNonNull(cache, "cache");
        Objects.requireNonNull(file, "file");
        boolean replace = false;
        for (StandardCopyOption o : Objects.requireNonNull(options, "options")) {
            if (o != StandardCopyOption.REPLACE_EXISTING) {
                throw new MlaException("cache export: the only option is StandardCopyOption.REPLACE_EXISTING, found " + o);
            }
            replace = true;
        }
        SafeTensorsWriter w;
        // the cache's own lock (LatentCache) while its rows are copied out, not while the file is written: a step on
        // it would otherwise wait for the disk
        synchronized (CacheStorage.of(cache)) {
            CacheIdentity id = cache.identity();
            if (id == null) {
                throw new MlaException("cache export: the cache belongs to no layer yet (no layer made or filled it), so a file could not say which "
                        + "model and layer it is for: make the cache with MlaLayer.newCache, or bind it to the layer's identity");
            }
            MlaConfig config = id.config();
            int n = cache.length(b);
            if (cache.isOffloaded(b)) throw new MlaException("cache export: sequence " + b + " is offloaded to the host: restore it first");
            if (!replace && (Files.exists(file) || Files.isSymbolicLink(file))) {
                throw new MlaException("cache export: " + file + " exists and was left as it is; expected a new path "
                        + "(or pass StandardCopyOption.REPLACE_EXISTING to replace it)");
            }
            w = new SafeTensorsWriter().checksums()
                    .metadata("format", FORMAT)
                    .metadata("config", config.toJson())
                    .metadata("config_sha256", id.configSha256())
                    .metadata("layer", Integer.toString(id.layer()))
                    .metadata("weights_sha256", id.weightsSha256())
                    .metadata("dtype", cache.dtype().toString())
                    .metadata("length", Integer.toString(n));
            boolean quantised = cache.dtype() == CacheDtype.INT8 || cache.dtype() == CacheDtype.FP8;
            CacheStorage.Quantised q = quantised ? CacheStorage.of(cache).quantised(b) : null;
            // what an import would refuse is refused here, before anything is written: a file that cannot be read back
            // would otherwise show its fault only on the importing side
            for (Tensor t : tensors(cache.dtype(), config)) {
                long[] shape = {n, t.width};
                switch (t.name) {
                    case "kv_cache" -> w.add(t.name, t.dtype, shape, finite(b, t, cache.latent(b)));
                    case "pe_cache" -> w.add(t.name, t.dtype, shape, finite(b, t, cache.ropeKey(b)));
                    case "kv_cache_scales" -> w.add(t.name, t.dtype, shape, finite(b, t, q.scales()));
                    case INDEX_CODES -> w.addBytes(t.name, t.dtype, shape, CacheStorage.of(cache).indexKeys(b).codes());
                    case INDEX_SCALES -> w.add(t.name, t.dtype, shape, finite(b, t, CacheStorage.of(cache).indexKeys(b).scales()));
                    default -> w.addBytes(t.name, t.dtype, shape, q.values());
                }
            }
        }
        // the writer holds copies of the rows; without REPLACE_EXISTING the file is published only under a free name,
        // also if one appeared after the check above
        if (replace) w.write(file);
        else w.writeNew(file);
    }

    /** {@code v}, refused for export where it holds NaN or ±∞ (naming the tensor, token and column). */
    private static float[] finite(int b, Tensor t, float[] v) {
        for (int i = 0; i < v.length; i++) {
            if (!Float.isFinite(v[i])) {
                throw new MlaException("cache export: sequence " + b + "'s " + t.name + " holds " + v[i] + " at [" + i / t.width + ", " + i % t.width
                        + "]; an import would refuse it, so nothing was written");
            }
        }
        return v;
    }

    /** One tensor of a cache file: its name, dtype and numbers per token. */
    private record Tensor(String name, DType dtype, int width) {
    }

    /** A sparse cache's indexer key codes and scales in a file. */
    static final String INDEX_CODES = "index_k_fp8", INDEX_SCALES = "index_k_scales";

    /** The tensors a cache of this dtype exports, in file order: the latent's, then a sparse config's indexer keys. */
    private static List<Tensor> tensors(CacheDtype dtype, MlaConfig c) {
        List<Tensor> latent = latentTensors(dtype, c);
        if (!c.sparse()) return latent;
        List<Tensor> all = new java.util.ArrayList<>(latent);
        all.add(new Tensor(INDEX_CODES, DType.F8_E4M3, c.indexer().headDim()));
        all.add(new Tensor(INDEX_SCALES, DType.F32, c.indexer().blocks()));
        return List.copyOf(all);
    }

    private static List<Tensor> latentTensors(CacheDtype dtype, MlaConfig c) {
        int dc = c.kvLoraRank(), dr = c.qkRopeHeadDim();
        return switch (dtype) {
            case F32 -> List.of(new Tensor("kv_cache", DType.F32, dc), new Tensor("pe_cache", DType.F32, dr));
            case BF16 -> List.of(new Tensor("kv_cache", DType.BF16, dc), new Tensor("pe_cache", DType.BF16, dr));
            // the stored bytes and scales themselves: int8 [n, d_c + d_r] and scales [n, 2]
            case INT8 -> List.of(new Tensor("kv_cache_int8", DType.I8, CacheLayout.quantisedValuesPerToken(CacheLayout.INT8, dc, dr)),
                    new Tensor("kv_cache_scales", DType.F32, CacheLayout.scalesPerToken(CacheLayout.INT8, dc)));
            // e4m3 [n, d_c], scales [n, d_c/128] and the bf16 rope part [n, d_r]
            case FP8 -> List.of(new Tensor("kv_cache_fp8", DType.F8_E4M3, CacheLayout.quantisedValuesPerToken(CacheLayout.FP8, dc, dr)),
                    new Tensor("kv_cache_scales", DType.F32, CacheLayout.scalesPerToken(CacheLayout.FP8, dc)),
                    new Tensor("pe_cache", DType.BF16, dr));
        };
    }

    /**
     * Replaces sequence b of {@code cache} with the file's content. Refused, with the cache unchanged, when
     * anything in the file is not as {@link #export} writes it (see the class comment), does not fit, or belongs
     * to another identity than the cache's. A cache without an identity takes the file's.
     */
    public static void importInto(LatentCache cache, int b, Path file) {
        Objects.requireNonNull(file, "file");
        Objects.requireNonNull(cache, "cache");
        // the file is read and checked before the cache's own lock (LatentCache) is taken, so that a step on the cache
        // does not wait for the disk; the batch, widths, dtype and capacity checked meanwhile never change
        CacheStorage.of(cache).checkSequence(b);
        Runnable write;
        CacheIdentity fileId;
        try (SafeTensorsFile f = SafeTensorsFile.open(file)) {
            Map<String, String> meta = f.metadata();
            Contents contents = contents(file, meta);
            fileId = contents.identity();
            MlaConfig config = fileId.config();
            if (config.sparse() != cache.sparse()) {
                throw new MlaException(file + ": " + (config.sparse() ? "a sparse cache's file (with the indexer's keys), the target cache is dense"
                        : "a dense cache's file, the target cache is sparse (it also needs the indexer's keys, which the file does not hold)"));
            }
            if (cache.kvLoraRank() != config.kvLoraRank() || cache.ropeDim() != config.qkRopeHeadDim()) {
                throw new MlaException(file + ": rows of [" + config.kvLoraRank() + " + " + config.qkRopeHeadDim() + "] (kv_lora_rank + qk_rope_head_dim), the target cache's are ["
                        + cache.kvLoraRank() + " + " + cache.ropeDim() + "]");
            }
            if (cache.identity() != null) {                               // checked again under the lock
                CacheIdentity.requireSame(cache.identity(), fileId, file + ": the file's cache", "the target cache's");
            }
            if (cache.dtype() != contents.dtype()) {
                throw new MlaException(file + ": cache dtype " + Messages.quote(contents.dtype().toString()) + ", the target cache stores " + cache.dtype());
            }
            int n = contents.length();
            if (n > cache.capacity()) {
                throw new MlaException(file + ": " + n + " tokens do not fit a cache of capacity " + cache.capacity());
            }
            List<Tensor> expected = tensors(cache.dtype(), config);
            Set<String> names = new HashSet<>(f.names());
            for (Tensor t : expected) {
                TensorInfo info = f.info(t.name);
                if (info == null) throw new MlaException(file + ": expected tensor " + t.name + " (" + t.dtype + " [" + n + ", " + t.width + "])");
                if (info.dtype() != t.dtype) throw new MlaException(file + ": tensor " + t.name + " has dtype " + info.dtype() + ", expected " + t.dtype);
                long[] shape = info.shape();
                if (shape.length == 2 && shape[1] == t.width && shape[0] != n) {
                    // the rows are there, but not as many as the metadata says: one of the two was edited or damaged
                    throw new MlaException(file + ": metadata length " + n + ", but tensor " + t.name + " holds " + shape[0]
                            + " tokens; the file's metadata and tensors disagree (edited or damaged)");
                }
                if (!java.util.Arrays.equals(shape, new long[] {n, t.width})) {
                    throw new MlaException(file + ": tensor " + t.name + " has shape " + info.shapeString() + ", expected [" + n + ", " + t.width + "]");
                }
                verifyChecksum(f, file, t.name, meta);
                names.remove(t.name);
            }
            if (!names.isEmpty()) throw new MlaException(file + ": unexpected tensor " + Messages.quote(names.iterator().next()) + " in a latent-cache file");
            Set<String> keys = new HashSet<>(List.of("format", "config", "config_sha256", "layer", "weights_sha256", "dtype", "length"));
            for (Tensor t : expected) keys.add(SafeTensorsWriter.CRC_PREFIX + t.name);
            for (String key : meta.keySet()) {
                if (!keys.contains(key)) {
                    throw new MlaException(file + ": unexpected metadata key " + Messages.quote(key) + " in a latent-cache file of "
                            + cache.dtype() + " (expected only " + String.join(", ", new java.util.TreeSet<>(keys)) + ")");
                }
            }

            if (cache.dtype() == CacheDtype.INT8 || cache.dtype() == CacheDtype.FP8) {
                boolean fp8 = cache.dtype() == CacheDtype.FP8;
                String vn = expected.get(0).name;
                byte[] values = f.readBytes(vn, expected.get(0).dtype);
                if (fp8) {
                    for (int i = 0; i < values.length; i++) {
                        if ((values[i] & 0x7F) == 0x7F) throw new MlaException(file + ": tensor " + vn + " holds the e4m3 NaN code 0x"
                                + HexFormat.of().toHexDigits(values[i]) + " at " + at(i, expected.get(0).width));
                    }
                }
                float[] scales = f.readFloats("kv_cache_scales");
                for (int i = 0; i < scales.length; i++) {
                    if (!(scales[i] >= 0) || Float.isInfinite(scales[i])) {
                        throw new MlaException(file + ": tensor kv_cache_scales holds " + scales[i] + " at " + at(i, expected.get(1).width)
                                + "; scales must be finite and >= 0");
                    }
                }
                float[] rope = fp8 ? finite(f, file, "pe_cache", config.qkRopeHeadDim()) : new float[0];
                byte[][] codes = new byte[1][];
                float[][] indexScales = new float[1][];
                if (config.sparse()) readIndexKeys(f, file, config, codes, indexScales);      // checked before anything is written
                write = () -> {
                    CacheStorage.of(cache).writeQuantised(b, values, scales, rope);
                    if (config.sparse()) CacheStorage.of(cache).writeIndexKeys(b, codes[0], indexScales[0]);
                };
            } else {
                byte[][] codes = new byte[1][];
                float[][] indexScales = new float[1][];
                if (config.sparse()) readIndexKeys(f, file, config, codes, indexScales);
                float[] latent = finite(f, file, "kv_cache", config.kvLoraRank()), ropeKey = finite(f, file, "pe_cache", config.qkRopeHeadDim());
                write = () -> {
                    CacheStorage.of(cache).write(b, latent, ropeKey);
                    if (config.sparse()) CacheStorage.of(cache).writeIndexKeys(b, codes[0], indexScales[0]);
                };
            }
        }
        synchronized (CacheStorage.of(cache)) {     // one call at a time per cache
            // another thread may have bound the cache (a step, an import) while the file was read
            requireSameIdentity(cache, fileId, file);
            write.run();
            CacheStorage.of(cache).bind(fileId);                              // a cache without an identity takes the file's
        }
    }

    /** What a cache file holds, from its metadata ({@link #describe}): whose cache it is, its dtype and its tokens. */
    public record Contents(CacheIdentity identity, CacheDtype dtype, int length) {
        public Contents {
            Objects.requireNonNull(identity, "identity");
            Objects.requireNonNull(dtype, "dtype");
        }
    }

    /**
     * The identity, cache dtype and token count a cache file records, checked as {@link #importInto} checks them
     * (the format, the config and its hash, the layer, the weights' hash), without reading its tensors (an import
     * verifies them and their checksums). What a restart needs before an import: a cache of the file's dtype with room
     * for its tokens, {@code layer.newCache(1, c.length() + room, c.dtype())}, and a layer of its identity.
     */
    public static Contents describe(Path file) {
        Objects.requireNonNull(file, "file");
        try (SafeTensorsFile f = SafeTensorsFile.open(file)) {
            return contents(file, f.metadata());
        }
    }

    /** What the metadata records, each part checked: the format, the identity, the dtype (as export writes it) and the length. */
    private static Contents contents(Path file, Map<String, String> meta) {
        checkFormat(file, meta);
        CacheIdentity id = identity(file, meta);
        String dtype = meta.get("dtype");
        for (CacheDtype d : CacheDtype.values()) if (d.toString().equals(dtype)) return new Contents(id, d, length(file, meta));
        throw new MlaException(file + ": metadata dtype " + Messages.quote(dtype) + " is not a cache dtype (f32, bf16, int8 or fp8)");
    }

    /** Refused unless the metadata names this version's format (older ones by name, with what to do). */
    private static void checkFormat(Path file, Map<String, String> meta) {
        String format = meta.get("format");
        if (FORMAT_1.equals(format)) {
            throw new MlaException(file + ": a latent-cache file of format 1, which has no checksums; export it again with this version");
        }
        if (FORMAT_2.equals(format)) {
            throw new MlaException(file + ": a latent-cache file of format 2, which does not name the layer and weights it belongs to; "
                    + "export it again with this version");
        }
        if (!FORMAT.equals(format)) {
            throw new MlaException(file + ": not a latent-cache file (format " + Messages.quote(format) + ", expected '" + FORMAT + "')");
        }
    }

    /** The metadata's token count, refused unless it is a plain non-negative int. */
    private static int length(Path file, Map<String, String> meta) {
        String len = meta.get("length");
        if (len == null || !len.matches("0|[1-9][0-9]{0,9}") || Long.parseLong(len) > Integer.MAX_VALUE) {
            throw new MlaException(file + ": metadata length " + Messages.quote(len) + " is not a token count");
        }
        return Integer.parseInt(len);
    }

    /** Refused where the cache has an identity and the file's is another. */
    private static void requireSameIdentity(LatentCache cache, CacheIdentity fileId, Path file) {
        if (cache.identity() != null) CacheIdentity.requireSame(cache.identity(), fileId, file + ": the file's cache", "the target cache's");
    }

    /** A sparse cache file's indexer keys, checked: no e4m3 NaN codes, scales finite and &gt; 0. */
    private static void readIndexKeys(SafeTensorsFile f, Path file, MlaConfig config, byte[][] codes, float[][] scales) {
        int di = config.indexer().headDim(), blocks = config.indexer().blocks();
        byte[] c = f.readBytes(INDEX_CODES, DType.F8_E4M3);
        for (int i = 0; i < c.length; i++) {
            if ((c[i] & 0x7F) == 0x7F) {
                throw new MlaException(file + ": tensor " + INDEX_CODES + " holds the e4m3 NaN code 0x" + HexFormat.of().toHexDigits(c[i]) + " at " + at(i, di));
            }
        }
        float[] s = f.readFloats(INDEX_SCALES);
        for (int i = 0; i < s.length; i++) {
            if (!(s[i] > 0) || Float.isInfinite(s[i])) {
                throw new MlaException(file + ": tensor " + INDEX_SCALES + " holds " + s[i] + " at " + at(i, blocks) + "; scales must be finite and > 0");
            }
        }
        codes[0] = c;
        scales[0] = s;
    }

    /** The identity a file's metadata records, each part checked (the config must parse and match its hash). */
    private static CacheIdentity identity(Path file, Map<String, String> meta) {
        String json = meta.get("config");
        if (json == null) throw new MlaException(file + ": no metadata config (the config the cache was made with)");
        MlaConfig config;
        try {
            config = MlaConfig.fromJson(json);
        } catch (MlaException e) {
            throw new MlaException(file + ": metadata config: " + e.getMessage(), e);
        }
        String sha = meta.get("config_sha256"), hash = CacheIdentity.configHash(config);
        if (!hash.equals(sha)) {
            throw new MlaException(file + ": metadata config_sha256 " + abbrev(sha) + "… is not the hash of its config (" + abbrev(hash) + "…)");
        }
        String layer = meta.get("layer");
        if (layer == null || !layer.matches("0|[1-9][0-9]{0,8}")) throw new MlaException(file + ": metadata layer " + Messages.quote(layer) + " is not a layer index");
        String weights = meta.get("weights_sha256");
        if (weights == null || !weights.matches("[0-9a-f]{64}")) {
            throw new MlaException(file + ": metadata weights_sha256 " + Messages.quote(weights) + " is not a SHA-256 (64 hex digits)");
        }
        return new CacheIdentity(config, Integer.parseInt(layer), weights);
    }

    private static void verifyChecksum(SafeTensorsFile f, Path file, String name, Map<String, String> meta) {
        String recorded = meta.get(SafeTensorsWriter.CRC_PREFIX + name);
        if (recorded == null || !recorded.matches("[0-9a-f]{8}")) {
            throw new MlaException(file + ": no valid checksum for tensor " + name + " (metadata " + SafeTensorsWriter.CRC_PREFIX + name + " is "
                    + Messages.quote(recorded) + ")");
        }
        long actual = f.crc32c(name);
        if (Long.parseLong(recorded, 16) != actual) {
            throw new MlaException(file + ": tensor " + name + " is damaged: its bytes have CRC32C " + String.format("%08x", actual)
                    + ", the file records " + recorded);
        }
    }

    /** The tensor's numbers, which must all be finite. */
    private static float[] finite(SafeTensorsFile f, Path file, String name, int width) {
        float[] v = f.readFloats(name);
        for (int i = 0; i < v.length; i++) {
            if (!Float.isFinite(v[i])) throw new MlaException(file + ": tensor " + name + " holds " + v[i] + " at " + at(i, width));
        }
        return v;
    }

    private static String at(int i, int width) {
        return "[" + i / width + ", " + i % width + "]";
    }

    private static String abbrev(String h) {
        return h == null ? "none" : Messages.escape(h.substring(0, Math.min(12, h.length())));
    }
}
