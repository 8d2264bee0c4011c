package org.tornadomla.fast;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;
import org.tornadomla.kernels.Bf16;
import org.tornadomla.kernels.CacheOps;
import org.tornadomla.kernels.LatentAttention;

import java.util.stream.IntStream;

/**
 * Fast versions of the heavy kernels: same names, parameters and results as the reference kernels in
 * {@code org.tornadomla.kernels}, parallel over the reference's {@code @Parallel} dimensions (common
 * ForkJoin pool) and vectorised over the contiguous dimension with the Vector API.
 *
 * <p>The attention core over the latent is two matrix products per (row, group of heads): scores
 * S = [q_lat | q_pe]·[c_kv | k_pe]ᵀ and o_lat = P·c_kv. Both are register-blocked: 4 heads × 4 cached tokens
 * of scores per pass (16 vector accumulators, 8 loads per 16 FMAs), and 4 heads × one vector of latent
 * dims per pass over a block of tokens for the values. A bf16 cache is decoded a block of rows at a time
 * into a small per-thread buffer (never the whole cache).
 */
public final class VectorKernels {
    private VectorKernels() {
    }

    static final VectorSpecies<Float> SPECIES = FloatVector.SPECIES_PREFERRED;
    private static final int L = SPECIES.length();
    /** Heads and cached tokens per register block. */
    private static final int HB = 4, JB = 4;
    /** Cached rows decoded/visited per block in the values kernel. */
    private static final int ROWS = 64;

    private static final ThreadLocal<float[]> ROW_BUF = ThreadLocal.withInitial(() -> new float[0]);

    private static float[] rowBuffer(int n) {
        float[] b = ROW_BUF.get();
        if (b.length < n) {
            b = new float[n];
            ROW_BUF.set(b);
        }
        return b;
    }

    // ------------------------------------------------------------------ vector helpers

    static float dot(float[] a, int ao, float[] b, int bo, int n) {
        FloatVector acc = FloatVector.zero(SPECIES);
        int i = 0;
        for (; i <= n - L; i += L) {
            acc = FloatVector.fromArray(SPECIES, a, ao + i).fma(FloatVector.fromArray(SPECIES, b, bo + i), acc);
        }
        float s = acc.reduceLanes(VectorOperators.ADD);
        for (; i < n; i++) s += a[ao + i] * b[bo + i];
        return s;
    }

    /** y[yo..yo+n) += alpha·x[xo..xo+n). */
    static void axpy(float alpha, float[] x, int xo, float[] y, int yo, int n) {
        FloatVector va = FloatVector.broadcast(SPECIES, alpha);
        int i = 0;
        for (; i <= n - L; i += L) {
            FloatVector.fromArray(SPECIES, x, xo + i).fma(va, FloatVector.fromArray(SPECIES, y, yo + i)).intoArray(y, yo + i);
        }
        for (; i < n; i++) y[yo + i] += alpha * x[xo + i];
    }

    /** Cache rows [row, row+n) of width w as f32: the cache itself (offset returned) or decoded into buf. */
    private static int rows(float[] kv32, short[] kv16, int dtype, float[] pow2, int row, int n, int w, float[] buf) {
        if (dtype != CacheOps.BF16) return row * w;
        int from = row * w;
        for (int i = 0; i < n * w; i++) buf[i] = Bf16.decode(kv16[from + i], pow2);
        return 0;
    }

    // ------------------------------------------------------------------ projections

    public static void matVec(float[] x, float[] w, float[] y, int in, int out) {
        IntStream.range(0, (out + 15) / 16).parallel().forEach(blk -> {
            for (int o = blk * 16; o < Math.min(out, blk * 16 + 16); o++) y[o] = dot(w, o * in, x, 0, in);
        });
    }

    public static void matMul(float[] x, float[] w, float[] y, int rows, int in, int out) {
        IntStream.range(0, (out + 15) / 16).parallel().forEach(blk -> {
            for (int o = blk * 16; o < Math.min(out, blk * 16 + 16); o++) {
                for (int r = 0; r < rows; r++) y[r * out + o] = dot(w, o * in, x, r * in, in);
            }
        });
    }

    // ------------------------------------------------------------------ absorption

    public static void absorbQuery(float[] q, float[] wkvB, float[] qLat, int rows, int heads, int dn, int dr, int dv, int dc) {
        IntStream.range(0, rows * heads).parallel().forEach(rh -> {
            int h = rh % heads;
            java.util.Arrays.fill(qLat, rh * dc, rh * dc + dc, 0f);
            for (int d = 0; d < dn; d++) axpy(q[rh * (dn + dr) + d], wkvB, (h * (dn + dv) + d) * dc, qLat, rh * dc, dc);
        });
    }

    public static void unabsorbValue(float[] oLat, float[] wkvB, float[] o, int rows, int heads, int dn, int dv, int dc) {
        IntStream.range(0, rows * heads).parallel().forEach(rh -> {
            int h = rh % heads;
            for (int v = 0; v < dv; v++) o[rh * dv + v] = dot(wkvB, (h * (dn + dv) + dn + v) * dc, oLat, rh * dc, dc);
        });
    }

    // ------------------------------------------------------------------ absorbed attention

    public static void absorbedScores(float[] qLat, float[] q, float[] kvF32, short[] kvBf16, int dtype, float[] pow2,
                                      float[] scores, int[] seqStart, int batch, int tokens, int capacity, int heads,
                                      int dn, int dr, int dc, float scale) {
        int w = dc + dr;
        int blocks = (heads + HB - 1) / HB;
        IntStream.range(0, batch * tokens * blocks).parallel().forEach(task -> {
            int r = task / blocks, h0 = (task % blocks) * HB, nh = Math.min(HB, heads - h0);
            int b = r / tokens, len = seqStart[b] + r % tokens + 1;
            float[] buf = dtype == CacheOps.BF16 ? rowBuffer(JB * w) : null;
            for (int j0 = 0; j0 < len; j0 += JB) {
                int nj = Math.min(JB, len - j0);
                float[] src = dtype == CacheOps.BF16 ? buf : kvF32;
                int off = rows(kvF32, kvBf16, dtype, pow2, b * capacity + j0, nj, w, buf);
                if (nh == HB && nj == JB && dc % L == 0 && dr % L == 0) {
                    scoreBlock(qLat, q, src, off, scores, r, h0, heads, j0, capacity, dn, dr, dc, scale);
                } else {
                    for (int hh = 0; hh < nh; hh++) {
                        int rh = r * heads + h0 + hh;
                        for (int jj = 0; jj < nj; jj++) {
                            int row = off + jj * w;
                            float s = dot(qLat, rh * dc, src, row, dc) + dot(q, rh * (dn + dr) + dn, src, row + dc, dr);
                            scores[rh * capacity + j0 + jj] = s * scale;
                        }
                    }
                }
            }
        });
    }

    /** 4 heads × 4 cached rows of scores: 16 vector accumulators over the 576 numbers of a row. */
    private static void scoreBlock(float[] qLat, float[] q, float[] src, int off, float[] scores, int r, int h0, int heads,
                                   int j0, int capacity, int dn, int dr, int dc, float scale) {
        int w = dc + dr;
        int rh = r * heads + h0;
        FloatVector a00 = FloatVector.zero(SPECIES), a01 = a00, a02 = a00, a03 = a00, a10 = a00, a11 = a00, a12 = a00, a13 = a00;
        FloatVector a20 = a00, a21 = a00, a22 = a00, a23 = a00, a30 = a00, a31 = a00, a32 = a00, a33 = a00;
        for (int part = 0; part < 2; part++) {
            // part 0: q_lat·c_kv over d_c; part 1: q_pe·k_pe over d_r
            float[] qa = part == 0 ? qLat : q;
            int n = part == 0 ? dc : dr;
            int qs = part == 0 ? dc : dn + dr;
            int qo = part == 0 ? 0 : dn;
            int ko = part == 0 ? 0 : dc;
            for (int c = 0; c < n; c += L) {
                FloatVector k0 = FloatVector.fromArray(SPECIES, src, off + ko + c);
                FloatVector k1 = FloatVector.fromArray(SPECIES, src, off + w + ko + c);
                FloatVector k2 = FloatVector.fromArray(SPECIES, src, off + 2 * w + ko + c);
                FloatVector k3 = FloatVector.fromArray(SPECIES, src, off + 3 * w + ko + c);
                FloatVector q0 = FloatVector.fromArray(SPECIES, qa, rh * qs + qo + c);
                a00 = q0.fma(k0, a00); a01 = q0.fma(k1, a01); a02 = q0.fma(k2, a02); a03 = q0.fma(k3, a03);
                FloatVector q1 = FloatVector.fromArray(SPECIES, qa, (rh + 1) * qs + qo + c);
                a10 = q1.fma(k0, a10); a11 = q1.fma(k1, a11); a12 = q1.fma(k2, a12); a13 = q1.fma(k3, a13);
                FloatVector q2 = FloatVector.fromArray(SPECIES, qa, (rh + 2) * qs + qo + c);
                a20 = q2.fma(k0, a20); a21 = q2.fma(k1, a21); a22 = q2.fma(k2, a22); a23 = q2.fma(k3, a23);
                FloatVector q3 = FloatVector.fromArray(SPECIES, qa, (rh + 3) * qs + qo + c);
                a30 = q3.fma(k0, a30); a31 = q3.fma(k1, a31); a32 = q3.fma(k2, a32); a33 = q3.fma(k3, a33);
            }
        }
        int s0 = rh * capacity + j0;
        store(scores, s0, scale, a00, a01, a02, a03);
        store(scores, s0 + capacity, scale, a10, a11, a12, a13);
        store(scores, s0 + 2 * capacity, scale, a20, a21, a22, a23);
        store(scores, s0 + 3 * capacity, scale, a30, a31, a32, a33);
    }

    private static void store(float[] s, int at, float scale, FloatVector a, FloatVector b, FloatVector c, FloatVector d) {
        s[at] = a.reduceLanes(VectorOperators.ADD) * scale;
        s[at + 1] = b.reduceLanes(VectorOperators.ADD) * scale;
        s[at + 2] = c.reduceLanes(VectorOperators.ADD) * scale;
        s[at + 3] = d.reduceLanes(VectorOperators.ADD) * scale;
    }

    public static void softmax(float[] scores, int[] seqStart, int batch, int tokens, int capacity, int heads) {
        IntStream.range(0, batch * tokens * heads).parallel().forEach(rh -> {
            int r = rh / heads;
            int len = seqStart[r / tokens] + r % tokens + 1;
            int base = rh * capacity;
            FloatVector vmax = FloatVector.broadcast(SPECIES, LatentAttention.NEG_INF);
            int j = 0;
            for (; j <= len - L; j += L) vmax = vmax.max(FloatVector.fromArray(SPECIES, scores, base + j));
            float max = vmax.reduceLanes(VectorOperators.MAX);
            for (; j < len; j++) max = Math.max(max, scores[base + j]);
            float sum = 0f;
            for (j = 0; j < len; j++) {
                float e = (float) Math.exp(scores[base + j] - max);
                scores[base + j] = e;
                sum += e;
            }
            FloatVector inv = FloatVector.broadcast(SPECIES, 1f / sum);
            for (j = 0; j <= len - L; j += L) FloatVector.fromArray(SPECIES, scores, base + j).mul(inv).intoArray(scores, base + j);
            for (; j < len; j++) scores[base + j] *= 1f / sum;
        });
    }

    public static void absorbedValues(float[] probs, float[] kvF32, short[] kvBf16, int dtype, float[] pow2, float[] oLat,
                                      int[] seqStart, int batch, int tokens, int capacity, int heads, int dc, int dr) {
        int w = dc + dr;
        int blocks = (heads + HB - 1) / HB;
        IntStream.range(0, batch * tokens * blocks).parallel().forEach(task -> {
            int r = task / blocks, h0 = (task % blocks) * HB, nh = Math.min(HB, heads - h0);
            int b = r / tokens, len = seqStart[b] + r % tokens + 1;
            int o0 = (r * heads + h0) * dc;
            java.util.Arrays.fill(oLat, o0, o0 + nh * dc, 0f);
            float[] buf = dtype == CacheOps.BF16 ? rowBuffer(ROWS * w) : null;
            for (int j0 = 0; j0 < len; j0 += ROWS) {
                int nj = Math.min(ROWS, len - j0);
                float[] src = dtype == CacheOps.BF16 ? buf : kvF32;
                int off = rows(kvF32, kvBf16, dtype, pow2, b * capacity + j0, nj, w, buf);
                int p0 = (r * heads + h0) * capacity + j0;
                if (nh == HB && dc % L == 0) {
                    for (int c = 0; c < dc; c += L) {
                        FloatVector s0 = FloatVector.fromArray(SPECIES, oLat, o0 + c);
                        FloatVector s1 = FloatVector.fromArray(SPECIES, oLat, o0 + dc + c);
                        FloatVector s2 = FloatVector.fromArray(SPECIES, oLat, o0 + 2 * dc + c);
                        FloatVector s3 = FloatVector.fromArray(SPECIES, oLat, o0 + 3 * dc + c);
                        for (int jj = 0; jj < nj; jj++) {
                            FloatVector v = FloatVector.fromArray(SPECIES, src, off + jj * w + c);
                            s0 = v.fma(FloatVector.broadcast(SPECIES, probs[p0 + jj]), s0);
                            s1 = v.fma(FloatVector.broadcast(SPECIES, probs[p0 + capacity + jj]), s1);
                            s2 = v.fma(FloatVector.broadcast(SPECIES, probs[p0 + 2 * capacity + jj]), s2);
                            s3 = v.fma(FloatVector.broadcast(SPECIES, probs[p0 + 3 * capacity + jj]), s3);
                        }
                        s0.intoArray(oLat, o0 + c);
                        s1.intoArray(oLat, o0 + dc + c);
                        s2.intoArray(oLat, o0 + 2 * dc + c);
                        s3.intoArray(oLat, o0 + 3 * dc + c);
                    }
                } else {
                    for (int hh = 0; hh < nh; hh++) {
                        for (int jj = 0; jj < nj; jj++) axpy(probs[p0 + hh * capacity + jj], src, off + jj * w, oLat, o0 + hh * dc, dc);
                    }
                }
            }
        });
    }

    // ------------------------------------------------------------------ tiled (online softmax, split-KV)

    public static void splitTiles(float[] qLat, float[] q, float[] kvF32, short[] kvBf16, int dtype, float[] pow2, float[] sTile,
                                  float[] oPart, float[] lsePart, int[] seqStart, int batch, int tokens, int capacity, int heads,
                                  int dn, int dr, int dc, float scale, int tileSize, int numSplits) {
        int w = dc + dr;
        IntStream.range(0, batch * tokens * heads * numSplits).parallel().forEach(part -> {
            int s = part % numSplits, rh = part / numSplits, r = rh / heads;
            int b = r / tokens, len = seqStart[b] + r % tokens + 1;
            int chunk = (len + numSplits - 1) / numSplits, lo = s * chunk, hi = Math.min(len, lo + chunk);
            int acc = part * dc, tile = part * tileSize;
            java.util.Arrays.fill(oPart, acc, acc + dc, 0f);
            float[] buf = dtype == CacheOps.BF16 ? rowBuffer(tileSize * w) : null;
            float m = LatentAttention.NEG_INF, l = 0f;
            for (int j0 = lo; j0 < hi; j0 += tileSize) {
                int n = Math.min(tileSize, hi - j0);
                float[] src = dtype == CacheOps.BF16 ? buf : kvF32;
                int off = rows(kvF32, kvBf16, dtype, pow2, b * capacity + j0, n, w, buf);
                float mTile = LatentAttention.NEG_INF;
                for (int jj = 0; jj < n; jj++) {
                    int row = off + jj * w;
                    float sc = scale * (dot(qLat, rh * dc, src, row, dc) + dot(q, rh * (dn + dr) + dn, src, row + dc, dr));
                    sTile[tile + jj] = sc;
                    mTile = Math.max(mTile, sc);
                }
                float mNew = Math.max(m, mTile);
                float alpha = (float) Math.exp(m - mNew);
                l *= alpha;
                scaleInPlace(oPart, acc, dc, alpha);
                for (int jj = 0; jj < n; jj++) {
                    float p = (float) Math.exp(sTile[tile + jj] - mNew);
                    l += p;
                    axpy(p, src, off + jj * w, oPart, acc, dc);
                }
                m = mNew;
            }
            if (l > 0f) {
                scaleInPlace(oPart, acc, dc, 1f / l);
                lsePart[part] = m + (float) Math.log(l);
            } else {
                lsePart[part] = LatentAttention.NEG_INF;
            }
        });
    }

    private static void scaleInPlace(float[] a, int from, int n, float f) {
        FloatVector vf = FloatVector.broadcast(SPECIES, f);
        int i = 0;
        for (; i <= n - L; i += L) FloatVector.fromArray(SPECIES, a, from + i).mul(vf).intoArray(a, from + i);
        for (; i < n; i++) a[from + i] *= f;
    }

    // ------------------------------------------------------------------ naive (decompressed K/V)

    public static void decompress(float[] kvF32, short[] kvBf16, int dtype, float[] pow2, float[] wkvB, float[] kvFull,
                                  int[] seqStart, int batch, int tokens, int capacity, int heads, int dn, int dv, int dc, int dr) {
        int width = heads * (dn + dv), w = dc + dr;
        IntStream.range(0, batch * capacity).parallel().forEach(bj -> {
            int b = bj / capacity, j = bj % capacity;
            if (j >= seqStart[b] + tokens) return;
            float[] buf = dtype == CacheOps.BF16 ? rowBuffer(w) : null;
            float[] src = dtype == CacheOps.BF16 ? buf : kvF32;
            int off = rows(kvF32, kvBf16, dtype, pow2, bj, 1, w, buf);
            for (int o = 0; o < width; o++) kvFull[bj * width + o] = dot(wkvB, o * dc, src, off, dc);
        });
    }

    public static void naiveScores(float[] q, float[] kvFull, float[] kvF32, short[] kvBf16, int dtype, float[] pow2,
                                   float[] scores, int[] seqStart, int batch, int tokens, int capacity, int heads, int dn,
                                   int dr, int dv, int dc, float scale) {
        int width = heads * (dn + dv), w = dc + dr;
        IntStream.range(0, batch * tokens * heads).parallel().forEach(rh -> {
            int r = rh / heads, h = rh % heads, b = r / tokens, len = seqStart[b] + r % tokens + 1;
            float[] buf = dtype == CacheOps.BF16 ? rowBuffer(w) : null;
            for (int j = 0; j < len; j++) {
                float[] src = dtype == CacheOps.BF16 ? buf : kvF32;
                int off = rows(kvF32, kvBf16, dtype, pow2, b * capacity + j, 1, w, buf);
                float s = dot(q, rh * (dn + dr), kvFull, (b * capacity + j) * width + h * (dn + dv), dn)
                        + dot(q, rh * (dn + dr) + dn, src, off + dc, dr);
                scores[rh * capacity + j] = s * scale;
            }
        });
    }

    public static void naiveValues(float[] probs, float[] kvFull, float[] o, int[] seqStart, int batch, int tokens,
                                   int capacity, int heads, int dn, int dv) {
        int width = heads * (dn + dv);
        IntStream.range(0, batch * tokens * heads).parallel().forEach(rh -> {
            int r = rh / heads, h = rh % heads, b = r / tokens, len = seqStart[b] + r % tokens + 1;
            java.util.Arrays.fill(o, rh * dv, rh * dv + dv, 0f);
            for (int j = 0; j < len; j++) axpy(probs[rh * capacity + j], kvFull, (b * capacity + j) * width + h * (dn + dv) + dn, o, rh * dv, dv);
        });
    }
}
