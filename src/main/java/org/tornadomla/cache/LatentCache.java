package org.tornadomla.cache;

import org.tornadomla.MlaException;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.graph.DeviceResident;
import org.tornadomla.kernels.Bf16;
import org.tornadomla.kernels.CacheLayout;
import org.tornadomla.weights.Bf16Bits;
import org.tornadomla.kernels.CacheOps;
import org.tornadomla.kernels.CacheRows;
import org.tornadomla.Memory;

import java.util.Arrays;
import java.util.Objects;

/**
 * The MLA cache of one layer for a batch of sequences: per token only the normalised latent c_kv
 * (kv_lora_rank numbers, DeepSeek's {@code kv_cache}) and the roped shared key k_pe (qk_rope_head_dim
 * numbers, {@code pe_cache}), in interleaved rope order. Contiguous: sequence b's token t is slot
 * b·capacity + t, a row [c_kv | k_pe] (FlashMLA's layout) stored as {@link CacheLayout} says for the dtype;
 * capacity fixed at creation; each sequence has its own length.
 *
 * <p>Appending is done by the layer's cache-append kernel; {@link #checkRoom} runs first, so a request
 * that does not fit fails before anything is written and leaves the cache as it was.
 */
public final class LatentCache implements DeviceResident {
    private final int batch;
    private final int capacity;
    private final int kvLoraRank;
    private final int ropeDim;
    private final CacheDtype dtype;
    // storage as CacheLayout describes it: the 32-, 16- and 8-bit parts
    private final float[] floats;
    private final short[] halves;
    private final byte[] bytes;
    private final int[] lengths;
    // who holds the newest copy of the storage (null: the host arrays), and how to pull it back
    private Object residentOwner;
    private Runnable pull;

    public LatentCache(MlaConfig config, int batch, int capacity, CacheDtype dtype) {
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(dtype, "dtype");
        if (batch <= 0) throw new MlaException("cache batch must be > 0, found " + batch);
        if (capacity <= 0) throw new MlaException("cache capacity must be > 0 tokens, found " + capacity);
        this.batch = batch;
        this.capacity = capacity;
        this.kvLoraRank = config.kvLoraRank();
        this.ropeDim = config.qkRopeHeadDim();
        this.dtype = dtype;
        int code = dtype.code;
        long slots = (long) batch * capacity;
        long largest = Math.max(CacheLayout.floatsLength(code, slots, kvLoraRank, ropeDim),
                Math.max(CacheLayout.halvesLength(code, slots, kvLoraRank, ropeDim), CacheLayout.bytesLength(code, slots, kvLoraRank, ropeDim)));
        if (largest > Integer.MAX_VALUE - 8)
            throw new MlaException("cache too large for one Java array: batch " + batch + " × capacity " + capacity
                    + " needs " + largest + " numbers in one " + dtype + " array (max " + (Integer.MAX_VALUE - 8) + ")");
        Memory.require(dtype.bytesPerToken(kvLoraRank, ropeDim) * slots, "a latent cache of " + batch + " × " + capacity + " tokens");
        floats = new float[(int) CacheLayout.floatsLength(code, slots, kvLoraRank, ropeDim)];
        if (code == CacheLayout.BF16 || code == CacheLayout.FP8) System.arraycopy(Bf16.pow2(), 0, floats, 0, CacheLayout.TABLE);
        halves = new short[(int) CacheLayout.halvesLength(code, slots, kvLoraRank, ropeDim)];
        bytes = new byte[(int) CacheLayout.bytesLength(code, slots, kvLoraRank, ropeDim)];
        lengths = new int[batch];
    }

    public int batch() {
        return batch;
    }

    public int capacity() {
        return capacity;
    }

    public CacheDtype dtype() {
        return dtype;
    }

    public int kvLoraRank() {
        return kvLoraRank;
    }

    public int ropeDim() {
        return ropeDim;
    }

    /** Tokens held by sequence b. */
    public int length(int b) {
        checkSequence(b);
        return lengths[b];
    }

    /** Throws unless b is a sequence of this cache (0 … batch − 1). */
    public void checkSequence(int b) {
        if (b < 0 || b >= batch) throw new MlaException("sequence " + b + " out of range: the cache holds sequences 0 … " + (batch - 1));
    }

    /** Bytes stored per cached token, scales included (f32 2,304, bf16 1,152, int8 584, fp8 656 for DeepSeek-V3). */
    public long bytesPerToken() {
        return CacheLayout.bytesPerToken(dtype.code, kvLoraRank, ropeDim);
    }

    /** Throws, naming capacity and request, when some sequence cannot take {@code tokens} more. */
    public void checkRoom(int tokens) {
        if (tokens < 0) throw new MlaException("token count must be >= 0, found " + tokens);
        for (int b = 0; b < batch; b++) {
            if ((long) lengths[b] + tokens > capacity) {
                throw new MlaException("latent cache full: capacity " + capacity + " tokens per sequence, sequence "
                        + b + " holds " + lengths[b] + ", request appends " + tokens + " (needs " + (lengths[b] + tokens) + ")");
            }
        }
    }

    /** Copies the sequence lengths into {@code seqStart} (the kernels' per-sequence start positions). */
    public void lengthsInto(int[] seqStart) {
        Objects.requireNonNull(seqStart, "seqStart");
        if (seqStart.length < batch) throw new MlaException("seqStart holds " + seqStart.length + " numbers, the cache has " + batch + " sequences");
        System.arraycopy(lengths, 0, seqStart, 0, batch);
    }

    /** Marks {@code tokens} more tokens of every sequence as valid, after the append kernel wrote them. */
    public void advance(int tokens) {
        checkRoom(tokens);   // also refuses a negative count
        for (int b = 0; b < batch; b++) lengths[b] += tokens;
    }

    /** Keeps the first {@code length} tokens of every sequence (e.g. to roll back a speculative step). */
    public void truncate(int length) {
        if (length < 0) throw new MlaException("cache truncate: length must be >= 0, found " + length);
        for (int b = 0; b < batch; b++) lengths[b] = Math.min(lengths[b], length);
    }

    /** Forgets every token (storage is reused). */
    public void clear() {
        Arrays.fill(lengths, 0);
    }

    @Override
    public Object[] arrays() {
        return new Object[] {floats, halves, bytes};
    }

    @Override
    public void residentOn(Object owner, Runnable pullToHost) {
        this.residentOwner = owner;
        this.pull = pullToHost;
    }

    @Override
    public Object residentOwner() {
        return residentOwner;
    }

    @Override
    public void toHost() {
        if (pull != null) {
            Runnable p = pull;
            pull = null;
            residentOwner = null;
            p.run();
        }
    }

    /**
     * Replaces sequence b's content with {@code n} tokens: latent [n, kv_lora_rank] and roped keys
     * [n, qk_rope_head_dim] (rounded to bf16 when stored as bf16). Checked before anything is written.
     */
    public void write(int b, float[] latent, float[] ropeKey) {
        checkSequence(b);
        Objects.requireNonNull(latent, "latent");
        Objects.requireNonNull(ropeKey, "ropeKey");
        if (latent.length % kvLoraRank != 0 || ropeKey.length % ropeDim != 0
                || latent.length / kvLoraRank != ropeKey.length / ropeDim) {
            throw new MlaException("cache write: expected latent [n, " + kvLoraRank + "] and rope keys [n, " + ropeDim
                    + "] for the same n, found " + latent.length + " and " + ropeKey.length + " numbers");
        }
        int n = latent.length / kvLoraRank;
        if (n > capacity) throw new MlaException("latent cache full: capacity " + capacity + " tokens per sequence, write of " + n);
        requireFinite(latent, "latent", kvLoraRank);
        requireFinite(ropeKey, "ropeKey", ropeDim);
        toHost();
        for (int t = 0; t < n; t++) {
            CacheRows.writeRow(latent, t * kvLoraRank, ropeKey, t * ropeDim, floats, halves, bytes, dtype.code, b * capacity + t,
                    kvLoraRank, ropeDim);
        }
        lengths[b] = n;
    }

    /**
     * Sequence b's quantised storage as it is (int8 or fp8 caches): the byte values per token (int8: d_c + d_r,
     * fp8: d_c e4m3), the scales per token (int8: 2, fp8: one per 128 latent numbers) and, for fp8, the bf16
     * rope part as its exact float values.
     */
    public record Quantised(byte[] values, float[] scales, float[] rope, int valuesPerToken, int scalesPerToken) {
    }

    public Quantised quantised(int b) {
        int vpt = valuesPerToken(), spt = scalesPerToken(), n = length(b);
        toHost();
        int s0 = CacheLayout.firstScaleIndex(dtype.code, b * capacity, kvLoraRank);
        return new Quantised(java.util.Arrays.copyOfRange(bytes, b * capacity * vpt, (b * capacity + n) * vpt),
                java.util.Arrays.copyOfRange(floats, s0, s0 + n * spt),
                dtype == CacheDtype.FP8 ? ropeKey(b) : new float[0], vpt, spt);
    }

    /** Replaces sequence b with quantised storage as {@link #quantised} returns it. Checked before writing. */
    public void writeQuantised(int b, byte[] values, float[] scales, float[] rope) {
        checkSequence(b);
        Objects.requireNonNull(values, "values");
        Objects.requireNonNull(scales, "scales");
        Objects.requireNonNull(rope, "rope");
        int vpt = valuesPerToken(), spt = scalesPerToken();
        int n = values.length / vpt;
        if (values.length != n * vpt || scales.length != n * spt || (dtype == CacheDtype.FP8 && rope.length != n * ropeDim)) {
            throw new MlaException("cache write: expected " + dtype + " storage of n tokens ([n, " + vpt + "] values, [n, " + spt
                    + "] scales" + (dtype == CacheDtype.FP8 ? ", [n, " + ropeDim + "] rope" : "") + "), found " + values.length + ", "
                    + scales.length + (dtype == CacheDtype.FP8 ? ", " + rope.length : "") + " numbers");
        }
        if (n > capacity) throw new MlaException("latent cache full: capacity " + capacity + " tokens per sequence, write of " + n);
        for (int i = 0; i < scales.length; i++) {
            if (!(scales[i] >= 0) || Float.isInfinite(scales[i])) {
                throw new MlaException("cache write: scale [" + i / spt + ", " + i % spt + "] is " + scales[i] + "; scales must be finite and >= 0");
            }
        }
        for (int i = 0; dtype == CacheDtype.FP8 && i < values.length; i++) {
            if ((values[i] & 0x7F) == 0x7F) throw new MlaException("cache write: value [" + i / vpt + ", " + i % vpt + "] is an e4m3 NaN code (0x7F/0xFF)");
        }
        if (dtype == CacheDtype.FP8) requireFinite(rope, "rope", ropeDim);
        toHost();
        System.arraycopy(values, 0, bytes, b * capacity * vpt, values.length);
        System.arraycopy(scales, 0, floats, CacheLayout.firstScaleIndex(dtype.code, b * capacity, kvLoraRank), scales.length);
        for (int i = 0; i < (dtype == CacheDtype.FP8 ? rope.length : 0); i++) {
            halves[CacheLayout.fp8RopeIndex(b * capacity, i, ropeDim)] = Bf16Bits.encode(rope[i]);
        }
        lengths[b] = n;
    }

    private static void requireFinite(float[] a, String name, int width) {
        for (int i = 0; i < a.length; i++) {
            if (!Float.isFinite(a[i])) throw new MlaException("cache write: " + name + " [" + i / width + ", " + i % width + "] is " + a[i] + "; expected finite numbers");
        }
    }

    private int valuesPerToken() {
        if (dtype != CacheDtype.INT8 && dtype != CacheDtype.FP8) throw new MlaException("quantised storage asked of a " + dtype + " cache");
        return CacheLayout.quantisedValuesPerToken(dtype.code, kvLoraRank, ropeDim);
    }

    private int scalesPerToken() {
        return CacheLayout.scalesPerToken(dtype.code, kvLoraRank);
    }

    /** Sequence b's latents as f32, [length(b), kv_lora_rank] (decoded when stored as bf16). */
    public float[] latent(int b) {
        return read(b, 0, kvLoraRank);
    }

    /** Sequence b's roped keys as f32, [length(b), qk_rope_head_dim], interleaved rope order. */
    public float[] ropeKey(int b) {
        return read(b, kvLoraRank, ropeDim);
    }

    private float[] read(int b, int offset, int width) {
        toHost();
        int n = length(b);
        float[] out = new float[n * width];
        for (int t = 0; t < n; t++) {
            for (int i = 0; i < width; i++) {
                out[t * width + i] = CacheOps.load(floats, halves, bytes, dtype.code, b * capacity + t, offset + i,
                        kvLoraRank + ropeDim, kvLoraRank);
            }
        }
        return out;
    }

    /** The 32-bit part, for kernels: F32 values, or the decoding table and scales ({@link CacheLayout}). */
    public float[] floats() {
        toHost();
        return floats;
    }

    /** The 16-bit part, for kernels: BF16 values, or FP8's bf16 rope part, else a 1-element placeholder. */
    public short[] halves() {
        toHost();
        return halves;
    }

    /** The 8-bit part, for kernels: INT8 values, or FP8's e4m3 latent, else a 1-element placeholder. */
    public byte[] bytes() {
        toHost();
        return bytes;
    }
}
