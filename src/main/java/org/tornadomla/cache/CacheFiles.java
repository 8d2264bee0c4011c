package org.tornadomla.cache;

import org.tornadomla.MlaException;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.kernels.CacheLayout;
import org.tornadomla.weights.DType;
import org.tornadomla.weights.SafeTensorsFile;
import org.tornadomla.weights.SafeTensorsWriter;
import org.tornadomla.weights.TensorInfo;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;

/**
 * A sequence's latent cache as a safetensors file: what a prefill node hands to a decode node, or what a
 * CPU offload writes. Tensors {@code kv_cache} [n, kv_lora_rank] and {@code pe_cache} [n, qk_rope_head_dim]
 * (interleaved rope order) in the cache's own storage dtype (an int8 cache: {@code kv_cache_int8}
 * [n, d_c + d_r] and {@code kv_cache_scales} [n, 2]; an fp8 cache: {@code kv_cache_fp8} F8_E4M3 [n, d_c],
 * {@code kv_cache_scales} [n, d_c/128] and {@code pe_cache} BF16), so a round trip is bit-identical; metadata:
 * format, config hash, dtype, length (positions 0 … n−1). An import checks all of it before writing
 * anything and refuses another config or dtype.
 */
public final class CacheFiles {
    private CacheFiles() {
    }

    public static final String FORMAT = "tornado-mla/latent-cache/1";

    /** SHA-256 of the config's canonical JSON: what must match between exporter and importer. */
    public static String configHash(MlaConfig c) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(c.toJson().getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(d);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Writes sequence b of {@code cache} (made for {@code config}) to {@code file}. */
    public static void export(LatentCache cache, int b, MlaConfig config, Path file) {
        checkGeometry(cache, config);
        int n = cache.length(b);
        SafeTensorsWriter w = new SafeTensorsWriter()
                .metadata("format", FORMAT)
                .metadata("config_sha256", configHash(config))
                .metadata("dtype", cache.dtype().toString())
                .metadata("length", Integer.toString(n));
        if (cache.dtype() == CacheDtype.INT8 || cache.dtype() == CacheDtype.FP8) {
            // the stored bytes and scales themselves: int8 [n, d_c + d_r] and scales [n, 2], or
            // e4m3 [n, d_c], scales [n, d_c/128] and the bf16 rope part [n, d_r]
            LatentCache.Quantised q = cache.quantised(b);
            boolean fp8 = cache.dtype() == CacheDtype.FP8;
            w.addBytes("kv_cache_" + cache.dtype(), fp8 ? DType.F8_E4M3 : DType.I8, new long[] {n, q.valuesPerToken()}, q.values())
                    .add("kv_cache_scales", new long[] {n, q.scalesPerToken()}, q.scales());
            if (fp8) w.add("pe_cache", DType.BF16, new long[] {n, config.qkRopeHeadDim()}, q.rope());
        } else {
            DType storage = cache.dtype() == CacheDtype.BF16 ? DType.BF16 : DType.F32;
            w.add("kv_cache", storage, new long[] {n, config.kvLoraRank()}, cache.latent(b))
                    .add("pe_cache", storage, new long[] {n, config.qkRopeHeadDim()}, cache.ropeKey(b));
        }
        w.write(file);
    }

    /**
     * Replaces sequence b of {@code cache} with the file's content. Refused, with the cache unchanged, when
     * the file is not a latent-cache file, was made for another config or dtype, or does not fit.
     */
    public static void importInto(Path file, MlaConfig config, LatentCache cache, int b) {
        checkGeometry(cache, config);
        try (SafeTensorsFile f = SafeTensorsFile.open(file)) {
            Map<String, String> meta = f.metadata();
            if (!FORMAT.equals(meta.get("format"))) {
                throw new MlaException(file + ": not a latent-cache file (format '" + meta.get("format") + "', expected '" + FORMAT + "')");
            }
            String hash = configHash(config);
            if (!hash.equals(meta.get("config_sha256"))) {
                throw new MlaException(file + ": made for another config (sha256 " + abbrev(meta.get("config_sha256"))
                        + "…, this layer's is " + abbrev(hash) + "…)");
            }
            if (!cache.dtype().toString().equals(meta.get("dtype"))) {
                throw new MlaException(file + ": cache dtype " + meta.get("dtype") + ", the target cache stores " + cache.dtype());
            }
            int n;
            try {
                n = Integer.parseInt(meta.get("length"));
            } catch (NumberFormatException e) {
                throw new MlaException(file + ": metadata length '" + meta.get("length") + "' is not a number");
            }
            if (n > cache.capacity()) {
                throw new MlaException(file + ": " + n + " tokens do not fit a cache of capacity " + cache.capacity());
            }
            if (cache.dtype() == CacheDtype.INT8 || cache.dtype() == CacheDtype.FP8) {
                String vn = "kv_cache_" + cache.dtype();
                TensorInfo v = f.info(vn), sc = f.info("kv_cache_scales");
                if (v == null || sc == null) throw new MlaException(file + ": expected tensors " + vn + " and kv_cache_scales");
                boolean fp8 = cache.dtype() == CacheDtype.FP8;
                int code = cache.dtype().code;
                v.requireShape(n, CacheLayout.quantisedValuesPerToken(code, config.kvLoraRank(), config.qkRopeHeadDim()));
                sc.requireShape(n, CacheLayout.scalesPerToken(code, config.kvLoraRank()));
                float[] rope = new float[0];
                if (fp8) {
                    TensorInfo pe = f.info("pe_cache");
                    if (pe == null) throw new MlaException(file + ": expected tensor pe_cache");
                    pe.requireShape(n, config.qkRopeHeadDim());
                    rope = f.readFloats("pe_cache");
                }
                cache.writeQuantised(b, f.readBytes(vn), f.readFloats("kv_cache_scales"), rope);
                return;
            }
            TensorInfo kv = f.info("kv_cache"), pe = f.info("pe_cache");
            if (kv == null || pe == null) throw new MlaException(file + ": expected tensors kv_cache and pe_cache");
            kv.requireShape(n, config.kvLoraRank());
            pe.requireShape(n, config.qkRopeHeadDim());
            cache.write(b, f.readFloats("kv_cache"), f.readFloats("pe_cache"));
        }
    }

    private static String abbrev(String h) {
        return h == null ? "none" : h.substring(0, Math.min(12, h.length()));
    }

    private static void checkGeometry(LatentCache cache, MlaConfig config) {
        if (cache.kvLoraRank() != config.kvLoraRank() || cache.ropeDim() != config.qkRopeHeadDim()) {
            throw new MlaException("cache [" + cache.kvLoraRank() + " + " + cache.ropeDim() + "] does not belong to a config with kv_lora_rank "
                    + config.kvLoraRank() + " and qk_rope_head_dim " + config.qkRopeHeadDim());
        }
    }
}
