package org.tornadomla.store;

import org.tornadomla.cache.internal.CacheStorage;
import org.tornadomla.MlaException;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.CacheIdentity;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.kernels.CacheLayout;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Objects;

/**
 * {@link BlockRows} over a {@link LatentCache}, contiguous or paged: sequence b's position t lives in slot
 * {@code cache.slot(b, t)} (its block table), and rows are copied straight out of and into the cache's arrays
 * ({@code floats/halves/bytes}, and a sparse cache's indexer keys) where {@link CacheLayout} puts them, bit for bit.
 *
 * <p>Appending goes through the cache's own step protocol: {@link CacheStorage#prepare} checks the room and
 * works out the blocks (new ones from the pool, and a private copy of a partial last block shared by a fork)
 * without changing anything, {@link CacheStorage#commit} makes them the sequence's, and the rows are copied
 * into their slots, with the shared block's rows first when it was copied. Nothing can fail after the commit.
 */
public final class LatentCacheRows implements BlockRows {
    private static final VarHandle F32 = MethodHandles.byteArrayViewVarHandle(float[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle I16 = MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.LITTLE_ENDIAN);

    private final LatentCache cache;

    /** The rows of {@code cache}, for a {@link LatentStore}. */
    public LatentCacheRows(LatentCache cache) {
        this.cache = Objects.requireNonNull(cache, "cache");
    }

    /** One {@link BlockRows} per layer's cache, in layer order. */
    public static List<BlockRows> of(List<LatentCache> caches) {
        return caches.stream().map(c -> (BlockRows) new LatentCacheRows(c)).toList();
    }

    /** The cache these rows are read from and written to. */
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
    public int indexDim() {
        return CacheStorage.of(cache).indexDim();
    }

    @Override
    public CacheIdentity identity() {
        return cache.identity();
    }

    @Override
    public void bind(CacheIdentity id) {
        CacheStorage.of(cache).bind(id);
    }

    @Override
    public int length(int seq) {
        return cache.length(seq);
    }

    @Override
    public int room(int seq) {
        return cache.room(seq);
    }

    @Override
    public LatentRows read(int seq, int from, int count) {
        synchronized (CacheStorage.of(cache)) {     // the cache's own lock (LatentCache)
            int n = cache.length(seq);
            if (from < 0 || count < 0 || (long) from + count > n) {
                throw new MlaException("cache read: rows [" + from + ", " + ((long) from + count) + ") of sequence " + seq + ", which holds " + n + " tokens");
            }
            int di = indexDim(), rb = LatentRows.rowBytes(cache.dtype(), cache.kvLoraRank(), cache.ropeDim(), di);
            byte[] out = new byte[Math.multiplyExact(count, rb)];
            CacheStorage s = CacheStorage.of(cache);
            float[] f = s.floats();
            short[] h = s.halves();
            byte[] b = s.bytes();
            for (int t = 0; t < count; t++) {
                int slot = s.slot(seq, from + t);
                copyOut(f, h, b, slot, out, t * rb);
                if (di > 0) copyIndexOut(s, slot, out, t * rb + LatentRows.rowBytes(cache.dtype(), cache.kvLoraRank(), cache.ropeDim()));
            }
            return new LatentRows(cache.dtype(), cache.kvLoraRank(), cache.ropeDim(), di, count, out);
        }
    }

    @Override
    public void append(int seq, LatentRows rows) {
        Objects.requireNonNull(rows, "rows");
        synchronized (CacheStorage.of(cache)) {     // the cache's own lock (LatentCache)
            CacheStorage.of(cache).checkSequence(seq);
            if (rows.dtype() != cache.dtype() || rows.kvLoraRank() != cache.kvLoraRank() || rows.ropeDim() != cache.ropeDim() || rows.indexDim() != indexDim()) {
                throw new MlaException("cache append: expected " + cache.dtype() + " rows of " + LatentRows.geometry(cache.kvLoraRank(), cache.ropeDim(), indexDim())
                        + (indexDim() > 0 ? " (a sparse cache: each row also holds the indexer's key)" : "") + ", found " + rows);
            }
            int len = cache.length(seq), room = room(seq);
            if (rows.count() > room) {
                throw new MlaException("latent cache full: sequence " + seq + " holds " + len + " tokens and has room for " + room
                        + " more (capacity " + cache.capacity() + " per sequence, " + cache.freeBlocks() + " free blocks of " + cache.blockSize()
                        + "), append of " + rows.count());
            }
            rows.check("cache append");
            if (rows.count() == 0) return;
            float[] f = CacheStorage.of(cache).floats();
            short[] h = CacheStorage.of(cache).halves();
            byte[] b = CacheStorage.of(cache).bytes();
            CacheStorage.Appends step = CacheStorage.of(cache).prepare(new int[] {seq}, new int[] {rows.count()});
            // a partial last block shared by a fork gets a private copy: its rows are carried over by hand (the
            // layer's graphs do this in their cache_copy task)
            int from = step.copies() > 0 ? len - len % cache.blockSize() : len;
            LatentRows carried = read(seq, from, len - from);
            CacheStorage.of(cache).commit(step);
            int rb = rows.rowBytes();
            for (int t = 0; t < carried.count(); t++) copyRowIn(carried.shared(), t * rb, f, h, b, CacheStorage.of(cache).slot(seq, from + t));
            for (int t = 0; t < rows.count(); t++) copyRowIn(rows.shared(), t * rb, f, h, b, CacheStorage.of(cache).slot(seq, len + t));
        }
    }

    /** A packed row, its indexer key included, into one slot's storage. */
    private void copyRowIn(byte[] in, int at, float[] f, short[] h, byte[] b, int slot) {
        copyIn(in, at, f, h, b, slot);
        if (indexDim() > 0) copyIndexIn(in, at + LatentRows.rowBytes(cache.dtype(), cache.kvLoraRank(), cache.ropeDim()), slot);
    }

    /** A slot's indexer key (e4m3 codes, then their scales) as packed at out[at …]. */
    private void copyIndexOut(CacheStorage s, int slot, byte[] out, int at) {
        int di = s.indexDim();
        System.arraycopy(s.indexKeys(), CacheLayout.indexKeyIndex(slot, 0, di), out, at, di);
        float[] sc = s.indexScales();
        for (int k = 0; k < di / CacheLayout.FP8_BLOCK; k++) F32.set(out, at + di + 4 * k, sc[CacheLayout.indexScaleIndex(slot, k, di)]);
    }

    /** The packed indexer key at in[at …] into a slot. */
    private void copyIndexIn(byte[] in, int at, int slot) {
        CacheStorage s = CacheStorage.of(cache);
        int di = s.indexDim();
        System.arraycopy(in, at, s.indexKeys(), CacheLayout.indexKeyIndex(slot, 0, di), di);
        float[] sc = s.indexScales();
        for (int k = 0; k < di / CacheLayout.FP8_BLOCK; k++) sc[CacheLayout.indexScaleIndex(slot, k, di)] = (float) F32.get(in, at + di + 4 * k);
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
