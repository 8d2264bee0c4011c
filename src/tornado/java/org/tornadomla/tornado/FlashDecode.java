package org.tornadomla.tornado;

import org.tornadomla.kernels.CacheLayout;
import org.tornadomla.kernels.CacheOps;
import org.tornadomla.kernels.Softmax;
import uk.ac.manchester.tornado.api.KernelContext;
import uk.ac.manchester.tornado.api.math.TornadoMath;

/**
 * Ladder step 7 (docs/ladder/07-kernel-context.md): the TILED attention core as a {@link KernelContext}
 * kernel for GPUs, a drop-in for {@link org.tornadomla.kernels.OnlineSoftmax#splitTiles} (same inputs and
 * outputs, combined by the same {@code OnlineSoftmax.combine}). A work-group = (row, KV split, group of G
 * heads), LOCAL threads. Per tile of Bc latent rows [c_kv | k_pe], loaded once into local memory and used by
 * all G heads as keys and values: scores (one (head, row) per thread), per-head online softmax, and
 * acc[h, c] += P·tile with each thread keeping d_c/LOCAL latent dims of every head in a private array (which
 * both NVIDIA compilers place in local memory, 128 bytes a thread, as it is indexed at run time: the compile
 * gate's stack frame, docs/gpu-runs.md); at the
 * end oPart = acc / l and mlPart = (m, l) (a split that is empty or all −∞: o = 0, m = 0, l = 0), the same
 * softmax convention as splitTiles ({@link Softmax}: the max from the first score, no ∞ constants). Limits ({@link #supports}): G = min(8, H)
 * divides H, d_c ≤ 512, d_c + d_r &lt; 640; local memory 41 KB, under every CUDA device's 48 KB. A
 * KernelContext has no JVM run (its ids are 0 there): it is tested on the device against splitTiles.
 * Measured (`./mla ladder --backend tornado`, H=16, T=1024, PoCL CPU): <!-- ladder:7:long -->reference –, java-fast –, TornadoVM 14.1 ms<!-- /ladder --> per decode step; no GPU yet.
 */
public final class FlashDecode {
    private FlashDecode() {
    }

    /** Threads per work-group, cache rows per tile (Bc), heads per group at most, latent dims per thread, longest row. */
    public static final int LOCAL = 128, TILE = 8, MAX_GROUP = 8, DIMS_PER_THREAD = 4, MAX_ROW = 640;

    /** Heads per work-group for H heads: min(8, H), if it divides H; 0 if the kernel cannot serve H. */
    public static int headsPerGroup(int heads) {
        int g = Math.min(MAX_GROUP, heads);
        return heads % g == 0 ? g : 0;
    }

    public static boolean supports(int heads, int dc, int dr) {
        return headsPerGroup(heads) > 0 && dc <= LOCAL * DIMS_PER_THREAD && dc + dr + 1 <= MAX_ROW;
    }

    /** Work-groups for a step: rows · splits · H/G; global size = that · {@link #LOCAL}. */
    public static int groups(int rows, int numSplits, int heads) {
        return rows * numSplits * (heads / headsPerGroup(heads));
    }

    public static void splitKv(KernelContext ctx, float[] qLat, float[] q, float[] kvFloats, short[] kvHalves, byte[] kvBytes,
                               int dtype, float[] oPart, float[] mlPart, int[] attnMeta, int blockSize,
                               int heads, int group, int dn, int dr, int dc, float scale, int numSplits) {
        int tid = ctx.localIdx;
        int nThreads = ctx.localGroupSizeX;
        int wg = ctx.groupIdx;
        int groupsPerSplit = heads / group;
        int g = wg % groupsPerSplit;
        int s = (wg / groupsPerSplit) % numSplits;
        int r = wg / (groupsPerSplit * numSplits);
        int len = CacheLayout.metaRowPosition(attnMeta, r) + 1;     // 0 for a padding row: no tile, o = 0
        int table = CacheLayout.metaRowTable(attnMeta, r);
        int chunk = (len + numSplits - 1) / numSplits;
        int lo = s * chunk;
        int hi = Math.min(len, lo + chunk);
        int w = dc + dr;
        int ws = w + 1;   // local rows w + 1 apart: a warp reading one column of 8 rows hits 8 banks, not one

        float[] qs = ctx.allocateFloatLocalArray(MAX_GROUP * MAX_ROW);
        float[] tile = ctx.allocateFloatLocalArray(TILE * MAX_ROW);
        float[] p = ctx.allocateFloatLocalArray(MAX_GROUP * TILE);
        float[] m = ctx.allocateFloatLocalArray(MAX_GROUP);
        float[] l = ctx.allocateFloatLocalArray(MAX_GROUP);
        float[] alpha = ctx.allocateFloatLocalArray(MAX_GROUP);
        float[] acc = new float[MAX_GROUP * DIMS_PER_THREAD];

        for (int i = tid; i < group * w; i += nThreads) {
            int hh = i / w;
            int c = i % w;
            int rh = r * heads + g * group + hh;
            qs[hh * ws + c] = c < dc ? qLat[rh * dc + c] : q[rh * (dn + dr) + dn + c - dc];
        }
        if (tid < group) {
            m[tid] = 0f;                      // set from the first tile
            l[tid] = 0f;
        }
        for (int i = 0; i < MAX_GROUP * DIMS_PER_THREAD; i++) {
            acc[i] = 0f;
        }
        ctx.localBarrier();

        for (int j0 = lo; j0 < hi; j0 += TILE) {
            int n = Math.min(TILE, hi - j0);
            // the tile: n latent rows [c_kv | k_pe], read from the cache once for keys and values of all G heads,
            // each row from the slot its sequence's block table gives
            for (int i = tid; i < n * w; i += nThreads) {
                int slot = CacheLayout.slot(attnMeta, table, j0 + i / w, blockSize);
                tile[(i / w) * ws + i % w] = CacheOps.load(kvFloats, kvHalves, kvBytes, dtype, slot, i % w, w, dc);
            }
            ctx.localBarrier();
            for (int i = tid; i < group * n; i += nThreads) {
                int hh = i / n;
                int jj = i % n;
                float sc = 0f;
                for (int c = 0; c < w; c++) {
                    sc += qs[hh * ws + c] * tile[jj * ws + c];
                }
                p[hh * TILE + jj] = scale * sc;
            }
            ctx.localBarrier();
            if (tid < group) {
                float mTile = p[tid * TILE];
                for (int jj = 1; jj < n; jj++) {
                    mTile = TornadoMath.max(mTile, p[tid * TILE + jj]);
                }
                float mNew = j0 == lo ? mTile : TornadoMath.max(m[tid], mTile);
                float mOld = j0 == lo ? mNew : m[tid];
                float shift = Softmax.shift(mNew);
                float a = TornadoMath.exp(mOld - shift);
                float sum = 0f;
                for (int jj = 0; jj < n; jj++) {
                    float e = TornadoMath.exp(p[tid * TILE + jj] - shift);
                    p[tid * TILE + jj] = e;
                    sum += e;
                }
                l[tid] = l[tid] * a + sum;
                m[tid] = mNew;
                alpha[tid] = a;
            }
            ctx.localBarrier();
            for (int hh = 0; hh < group; hh++) {
                for (int i = 0; i < DIMS_PER_THREAD; i++) {
                    int c = tid + i * nThreads;
                    if (c < dc) {
                        float v = acc[hh * DIMS_PER_THREAD + i] * alpha[hh];
                        for (int jj = 0; jj < n; jj++) {
                            v += p[hh * TILE + jj] * tile[jj * ws + c];
                        }
                        acc[hh * DIMS_PER_THREAD + i] = v;
                    }
                }
            }
            ctx.localBarrier();
        }

        for (int hh = 0; hh < group; hh++) {
            int part = ((r * heads + g * group + hh) * numSplits) + s;
            float inv = l[hh] > 0f ? 1f / l[hh] : 0f;
            for (int i = 0; i < DIMS_PER_THREAD; i++) {
                int c = tid + i * nThreads;
                if (c < dc) {
                    oPart[part * dc + c] = acc[hh * DIMS_PER_THREAD + i] * inv;
                }
            }
            if (tid == 0) {
                mlPart[2 * part] = l[hh] > 0f ? m[hh] : 0f;
                mlPart[2 * part + 1] = l[hh];
            }
        }
    }
}
