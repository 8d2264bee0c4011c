package org.tornadomla.tornado;

import org.tornadomla.kernels.CacheLayout;
import org.tornadomla.kernels.CacheOps;
import org.tornadomla.kernels.Softmax;
import uk.ac.manchester.tornado.api.KernelContext;
import uk.ac.manchester.tornado.api.math.TornadoMath;

/**
 * The ABSORBED path's scores and softmax for GPUs, as {@link KernelContext} kernels replacing
 * {@link org.tornadomla.kernels.AbsorbedAttention#absorbedScores} and {@link org.tornadomla.kernels.Softmax#softmax}
 * on TornadoVM. (The TILED path's core is {@link FlashDecode}.)
 * <ul>
 *   <li>absorbedScores: the plain kernel has one thread per (row, head, cached token), each walking that
 *   token's 576-number latent row, so neighbouring threads read addresses 576 numbers apart. Here a
 *   work-group loads a tile of {@link #TILE} latent rows into local memory once, side by side (coalesced),
 *   and every head of the row scores against it; rows are stored {@code d_c + d_r + 1} apart, so the
 *   threads of a warp reading one column of different rows hit different local-memory banks.</li>
 *   <li>softmax: the plain kernel has one thread per (row, head) walking the whole context, 128 threads at
 *   batch 1 for DeepSeek-V3; here a work-group per (row, head) takes the max and the sum in local memory.</li>
 * </ul>
 */
public final class GpuAttention {
    private GpuAttention() {
    }

    /** Threads per work-group (a power of two), latent rows per score tile, longest padded row d_c + d_r + 1. */
    public static final int LOCAL = 128, TILE = 16, MAX_ROW = 640;

    public static boolean supportsScores(int dc, int dr) {
        return dc + dr + 1 <= MAX_ROW;
    }

    /** Work-groups of {@link #absorbedScores}: one per (token row, tile of the capacity). */
    public static int scoreGroups(int rows, int capacity) {
        return rows * ((capacity + TILE - 1) / TILE);
    }

    /** score[r, h, j] = scale·(q_lat[r, h]·c_kv[slot(j)] + q_pe[r, h]·k_pe[slot(j)]) for j ≤ the row's position. */
    public static void absorbedScores(KernelContext ctx, float[] qLat, float[] q, float[] kvFloats, short[] kvHalves, byte[] kvBytes,
                                      int dtype, float[] scores, int[] attnMeta, int capacity, int blockSize,
                                      int heads, int dn, int dr, int dc, float scale) {
        float[] tile = ctx.allocateFloatLocalArray(TILE * MAX_ROW);
        int tilesPerRow = (capacity + TILE - 1) / TILE;
        int r = ctx.groupIdx / tilesPerRow;
        int j0 = (ctx.groupIdx % tilesPerRow) * TILE;
        int tid = ctx.localIdx;
        int len = CacheLayout.metaRowPosition(attnMeta, r) + 1;
        int table = CacheLayout.metaRowTable(attnMeta, r);
        int n = Math.min(TILE, len - j0);      // ≤ 0 past the row's position: the loops below do nothing
        int w = dc + dr;
        int ws = w + 1;
        for (int i = tid; i < n * w; i += LOCAL) {
            int slot = CacheLayout.slot(attnMeta, table, j0 + i / w, blockSize);
            tile[(i / w) * ws + i % w] = CacheOps.load(kvFloats, kvHalves, kvBytes, dtype, slot, i % w, w, dc);
        }
        ctx.localBarrier();
        for (int i = tid; i < heads * n; i += LOCAL) {
            int h = i / n;
            int jj = i % n;
            int rh = r * heads + h;
            float acc = 0f;
            for (int c = 0; c < dc; c++) {
                acc += qLat[rh * dc + c] * tile[jj * ws + c];
            }
            int qPe = rh * (dn + dr) + dn;
            for (int d = 0; d < dr; d++) {
                acc += q[qPe + d] * tile[jj * ws + dc + d];
            }
            scores[rh * capacity + j0 + jj] = scale * acc;
        }
    }

    /** Softmax over j &lt; len of each (row, head), in place: work-group r·H + h. */
    public static void softmax(KernelContext ctx, float[] scores, int[] attnMeta, int capacity, int heads) {
        float[] red = ctx.allocateFloatLocalArray(LOCAL);
        int rh = ctx.groupIdx;
        int tid = ctx.localIdx;
        int r = rh / heads;
        int len = CacheLayout.metaRowPosition(attnMeta, r) + 1;   // 0 for a padding row: nothing is read or written
        int base = rh * capacity;
        // every row has its own token, so scores[base] exists: the max starts there, not at an infinity (Softmax)
        float mx = scores[base];
        for (int j = tid; j < len; j += LOCAL) {
            mx = TornadoMath.max(mx, scores[base + j]);
        }
        red[tid] = mx;
        ctx.localBarrier();
        for (int s = LOCAL / 2; s > 0; s >>= 1) {
            if (tid < s) {
                red[tid] = TornadoMath.max(red[tid], red[tid + s]);
            }
            ctx.localBarrier();
        }
        float shift = Softmax.shift(red[0]);   // the max, or 0 when every score is −∞ (as the plain kernel)
        ctx.localBarrier();
        float sum = 0f;
        for (int j = tid; j < len; j += LOCAL) {
            float e = TornadoMath.exp(scores[base + j] - shift);
            scores[base + j] = e;
            sum += e;
        }
        red[tid] = sum;
        ctx.localBarrier();
        for (int s = LOCAL / 2; s > 0; s >>= 1) {
            if (tid < s) {
                red[tid] += red[tid + s];
            }
            ctx.localBarrier();
        }
        float inv = red[0] > 0f ? 1f / red[0] : 0f;   // a row of only −∞ keeps weights 0
        for (int j = tid; j < len; j += LOCAL) {
            scores[base + j] *= inv;
        }
    }
}
