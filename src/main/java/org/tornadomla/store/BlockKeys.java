package org.tornadomla.store;

import org.tornadomla.internal.Messages;
import org.tornadomla.MlaException;
import org.tornadomla.cache.CacheDtype;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;

/**
 * The names of a sequence's blocks in the store: a hash chain over the token ids, as prefix caching does it.
 * Block i of layer l holds tokens [i·B, i·B + n) and is named
 *
 * <pre>
 *  key_i = prefix + hex(SHA-256(DOMAIN, model, config sha256, dtype, l, digest_{i−1}, kind, n, token ids))
 * </pre>
 *
 * with digest_{−1} = 32 zero bytes (see {@link #digest} for the exact bytes). Because each digest covers the
 * one before it, a key names its block's tokens and every token before them: two sequences share exactly the
 * blocks of their common prefix, and an attention row (which depends on every earlier token) is only ever
 * found under the key of the prefix it was computed from. Only full blocks (n = B, kind 0) are shared as
 * prefixes; a sequence's partial last block (n &lt; B, kind 1) has its own key, which covers its length.
 * The model string names the weights (a checkpoint and revision): the config hash alone cannot tell two
 * checkpoints of one architecture apart. The dtype is hashed in so that caches of different dtypes never
 * overwrite each other's blocks.
 */
public final class BlockKeys {
    /** Key prefix of this format's blocks. */
    public static final String PREFIX = "mla:v1:";
    /** Hashed first, so that these digests can never equal another use of SHA-256 over the same bytes. */
    static final String DOMAIN = "tornado-mla/block-key/1";
    /** Largest block size (tokens). */
    public static final int MAX_BLOCK = 1 << 16;

    private final String prefix;
    private final byte[] model;
    private final byte[] configSha;
    private final CacheDtype dtype;
    private final int blockSize;

    /**
     * @param prefix    the keys' prefix, e.g. {@link #PREFIX}
     * @param model     what the weights are, e.g. "deepseek-ai/DeepSeek-V3@main" (hashed, not shown)
     * @param configSha SHA-256 of the config ({@code CacheFiles.configHash}, 64 hex digits)
     */
    public BlockKeys(String prefix, String model, String configSha, CacheDtype dtype, int blockSize) {
        this.prefix = Objects.requireNonNull(prefix, "prefix");
        this.model = Objects.requireNonNull(model, "model").getBytes(StandardCharsets.UTF_8);
        Objects.requireNonNull(configSha, "configSha");
        if (!configSha.matches("[0-9a-f]{64}")) throw new MlaException("config hash: expected 64 hex digits, found " + Messages.quote(configSha));
        this.configSha = HexFormat.of().parseHex(configSha);
        this.dtype = Objects.requireNonNull(dtype, "dtype");
        if (blockSize < 1 || blockSize > MAX_BLOCK) throw new MlaException("block size must be in 1 … " + MAX_BLOCK + " tokens, found " + blockSize);
        this.blockSize = blockSize;
    }

    /** Tokens per block. */
    public int blockSize() {
        return blockSize;
    }

    /** One block: its key, the digest the key is made of, its first position and its token count. */
    public record Key(String name, byte[] digest, int index, int start, int count, boolean partial) {
        /** Checks the components. */
        public Key {
            digest = digest.clone();
        }

        /** A copy of the digest. */
        @Override
        public byte[] digest() {
            return digest.clone();
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && k.name.equals(name);
        }

        @Override
        public int hashCode() {
            return name.hashCode();
        }

        @Override
        public String toString() {
            return name;
        }
    }

    /** Blocks of a sequence of n tokens: ⌈n / B⌉. */
    public int blocks(int n) {
        return (int) (((long) n + blockSize - 1) / blockSize);
    }

    /**
     * The keys of layer {@code layer}'s blocks for these tokens, in order: every full block, then the partial
     * last block if n is not a multiple of the block size. Token ids must be ≥ 0.
     */
    public List<Key> chain(int[] tokens, int layer) {
        Objects.requireNonNull(tokens, "tokens");
        if (layer < 0) throw new MlaException("layer must be >= 0, found " + layer);
        for (int i = 0; i < tokens.length; i++) {
            if (tokens[i] < 0) throw new MlaException("token id at position " + i + " is " + tokens[i] + "; token ids are >= 0");
        }
        List<Key> out = new ArrayList<>(blocks(tokens.length));
        byte[] prev = new byte[32];
        for (int start = 0, i = 0; start < tokens.length; start += blockSize, i++) {
            int n = Math.min(blockSize, tokens.length - start);
            boolean partial = n < blockSize;
            byte[] d = digest(model, configSha, dtype, layer, prev, partial, tokens, start, n);
            out.add(new Key(prefix + HexFormat.of().formatHex(d), d, i, start, n, partial));
            prev = d;
        }
        return out;
    }

    /**
     * SHA-256 over, in order (integers little-endian): the ASCII of {@link #DOMAIN}; the model's UTF-8 length
     * (u32) and bytes; the config's SHA-256 (32 bytes); the dtype code (u8: f32 0, bf16 1, int8 2, fp8 3); the
     * layer (u32); the previous block's digest (32 bytes); the kind (u8: 0 full, 1 partial); the token count n
     * (u32); the n token ids (u32 each).
     */
    static byte[] digest(byte[] model, byte[] configSha, CacheDtype dtype, int layer, byte[] prev, boolean partial,
                         int[] tokens, int start, int n) {
        ByteBuffer b = ByteBuffer.allocate(DOMAIN.length() + 4 + model.length + 32 + 1 + 4 + 32 + 1 + 4 + 4 * n).order(ByteOrder.LITTLE_ENDIAN);
        b.put(DOMAIN.getBytes(StandardCharsets.US_ASCII)).putInt(model.length).put(model).put(configSha).put((byte) dtype.code)
                .putInt(layer).put(prev).put((byte) (partial ? 1 : 0)).putInt(n);
        for (int i = 0; i < n; i++) b.putInt(tokens[start + i]);
        try {
            return MessageDigest.getInstance("SHA-256").digest(b.array());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
