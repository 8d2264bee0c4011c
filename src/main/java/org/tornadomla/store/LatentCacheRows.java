package org.tornadomla.store;

import org.tornadomla.MlaException;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.kernels.CacheLayout;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Objects;

/**
 * {@link BlockRows} over today's contiguous {@link LatentCache} (sequence b's token t in slot b·capacity + t),
 * through its public API and {@link CacheLayout}, the owner of the storage layout: rows are copied straight
 * out of the cache's arrays ({@code floats/halves/bytes}), bit for bit.
 *
 * <p>Appending: the cache's only per-sequence writers ({@code write}, {@code writeQuantised}) replace a whole
 * sequence, and its per-token {@code advance} moves every sequence. So a cache of one sequence (the usual case
 * for a handoff) gets the rows copied into the slots after its length and then {@code advance}d, as the
 * append kernel does; a cache of several sequences has sequence b rewritten through {@code write} or
 * {@code writeQuantised} with its old rows and the new ones (exact too, slower).
 */
public final class LatentCacheRows implements BlockRows {
    private static final VarHandle F32 = MethodHandles.byteArrayViewVarHandle(float[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle I16 = MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.LITTLE_ENDIAN);

    private final LatentCache cache;

    public LatentCacheRows(LatentCache cache) {
        this.cache = Objects.requireNonNull(cache, "cache");
    }

    /** One {@link BlockRows} per layer's cache, in layer order. */
    public static List<BlockRows> of(List<LatentCache> caches) {
        return caches.stream().map(c -> (BlockRows) new LatentCacheRows(c)).toList();
    }

    public LatentCache cache() {
        return cache;
    }

    @Override
    public CacheDtype dtype() {
        return cache.dtype();
    }

    @Override
    public int kvLoraRank() {
        return cache.kvLoraRank();
    }

    @Override
    public int ropeDim() {
        return cache.ropeDim();
    }

    @Override
    public int length(int seq) {
        return cache.length(seq);
    }

    @Override
    public int room(int seq) {
        return cache.capacity() - cache.length(seq);
    }

    @Override
    public LatentRows read(int seq, int from, int count) {
        int n = cache.length(seq);
        if (from < 0 || count < 0 || (long) from + count > n) {
            throw new MlaException("cache read: rows [" + from + ", " + ((long) from + count) + ") of sequence " + seq + ", which holds " + n + " tokens");
        }
        int rb = LatentRows.rowBytes(cache.dtype(), cache.kvLoraRank(), cache.ropeDim());
        byte[] out = new byte[Math.multiplyExact(count, rb)];
        float[] f = cache.floats();
        short[] h = cache.halves();
        byte[] b = cache.bytes();
        for (int t = 0; t < count; t++) copyOut(f, h, b, seq * cache.capacity() + from + t, out, t * rb);
        return new LatentRows(cache.dtype(), cache.kvLoraRank(), cache.ropeDim(), count, out);
    }

    @Override
    public void append(int seq, LatentRows rows) {
        Objects.requireNonNull(rows, "rows");
        cache.checkSequence(seq);
        if (rows.dtype() != cache.dtype() || rows.kvLoraRank() != cache.kvLoraRank() || rows.ropeDim() != cache.ropeDim()) {
            throw new MlaException("cache append: expected " + cache.dtype() + " rows of [" + cache.kvLoraRank() + " + " + cache.ropeDim()
                    + "], found " + rows);
        }
        if (rows.count() > room(seq)) {
            throw new MlaException("latent cache full: capacity " + cache.capacity() + " tokens per sequence, sequence " + seq + " holds "
                    + cache.length(seq) + ", append of " + rows.count());
        }
        rows.check("cache append");
        if (rows.count() == 0) return;
        if (cache.batch() == 1) {
            // everything is checked: copy into the slots after the length, then advance as the append kernel would
            float[] f = cache.floats();
            short[] h = cache.halves();
            byte[] b = cache.bytes();
            int first = cache.length(0), rb = rows.rowBytes();
            for (int t = 0; t < rows.count(); t++) copyIn(rows.data(), t * rb, f, h, b, first + t);
            cache.advance(rows.count());
            return;
        }
        LatentRows all = cache.length(seq) == 0 ? rows
                : LatentRows.concat(rows.dtype(), rows.kvLoraRank(), rows.ropeDim(), List.of(read(seq, 0, cache.length(seq)), rows));
        if (all.dtype() == CacheDtype.F32 || all.dtype() == CacheDtype.BF16) {
            cache.write(seq, all.latent(), all.ropeKey());
        } else {
            cache.writeQuantised(seq, all.values(), all.scales(), all.dtype() == CacheDtype.FP8 ? all.ropeKey() : new float[0]);
        }
    }

    /** One slot's storage as a packed row ({@link LatentRows}' layout) at out[at …]. */
    private void copyOut(float[] f, short[] h, byte[] b, int slot, byte[] out, int at) {
        int dc = cache.kvLoraRank(), dr = cache.ropeDim(), w = dc + dr;
        switch (cache.dtype()) {
            case F32 -> {
                int v = CacheLayout.valueIndex(slot, 0, w);
                for (int i = 0; i < w; i++) F32.set(out, at + 4 * i, f[v + i]);
            }
            case BF16 -> {
                int v = CacheLayout.valueIndex(slot, 0, w);
                for (int i = 0; i < w; i++) I16.set(out, at + 2 * i, h[v + i]);
            }
            case INT8 -> {
                System.arraycopy(b, CacheLayout.valueIndex(slot, 0, w), out, at, w);
                F32.set(out, at + w, f[CacheLayout.int8ScaleIndex(slot, 0)]);
                F32.set(out, at + w + 4, f[CacheLayout.int8ScaleIndex(slot, 1)]);
            }
            case FP8 -> {
                System.arraycopy(b, CacheLayout.fp8LatentIndex(slot, 0, dc), out, at, dc);
                int blocks = CacheLayout.fp8Blocks(dc);
                for (int s = 0; s < blocks; s++) F32.set(out, at + dc + 4 * s, f[CacheLayout.fp8ScaleIndex(slot, s * CacheLayout.FP8_BLOCK, dc)]);
                int r = CacheLayout.fp8RopeIndex(slot, 0, dr), at2 = at + dc + 4 * blocks;
                for (int i = 0; i < dr; i++) I16.set(out, at2 + 2 * i, h[r + i]);
            }
        }
    }

    /** The packed row at in[at …] into one slot's storage. */
    private void copyIn(byte[] in, int at, float[] f, short[] h, byte[] b, int slot) {
        int dc = cache.kvLoraRank(), dr = cache.ropeDim(), w = dc + dr;
        switch (cache.dtype()) {
            case F32 -> {
                int v = CacheLayout.valueIndex(slot, 0, w);
                for (int i = 0; i < w; i++) f[v + i] = (float) F32.get(in, at + 4 * i);
            }
            case BF16 -> {
                int v = CacheLayout.valueIndex(slot, 0, w);
                for (int i = 0; i < w; i++) h[v + i] = (short) I16.get(in, at + 2 * i);
            }
            case INT8 -> {
                System.arraycopy(in, at, b, CacheLayout.valueIndex(slot, 0, w), w);
                f[CacheLayout.int8ScaleIndex(slot, 0)] = (float) F32.get(in, at + w);
                f[CacheLayout.int8ScaleIndex(slot, 1)] = (float) F32.get(in, at + w + 4);
            }
            case FP8 -> {
                System.arraycopy(in, at, b, CacheLayout.fp8LatentIndex(slot, 0, dc), dc);
                int blocks = CacheLayout.fp8Blocks(dc);
                for (int s = 0; s < blocks; s++) f[CacheLayout.fp8ScaleIndex(slot, s * CacheLayout.FP8_BLOCK, dc)] = (float) F32.get(in, at + dc + 4 * s);
                int r = CacheLayout.fp8RopeIndex(slot, 0, dr), at2 = at + dc + 4 * blocks;
                for (int i = 0; i < dr; i++) h[r + i] = (short) I16.get(in, at2 + 2 * i);
            }
        }
    }
}
