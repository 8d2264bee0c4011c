package org.tornadomla.fast;

import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;
import org.tornadomla.kernels.CacheLayout;
import org.tornadomla.kernels.CacheOps;
import org.tornadomla.kernels.Softmax;

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
    /** L bf16 numbers and L int8 numbers as vectors. */
    private static final VectorSpecies<Short> SHORTS = VectorSpecies.of(short.class, VectorShape.forBitSize(SPECIES.vectorBitSize() / 2));
    private static final VectorSpecies<Byte> BYTES = VectorSpecies.of(byte.class, VectorShape.forBitSize(SPECIES.vectorBitSize() / 4));
    private static final VectorSpecies<Integer> INTS = VectorSpecies.of(int.class, SPECIES.vectorShape());
    /** Heads and cached tokens per register block. */
    private static final int HB = 4, JB = 4;
    /** Cached rows per block: 64 rows of 576 floats (147 KB) stay in L2 while every head of a group uses them. */
    private static final int ROWS = 64;
    /** Heads per parallel task: a task streams the cache once for this many heads (8 measured best here, see docs/benchmarks.md). */
    private static final int GROUP = 8;

    /** Every e4m3 byte decoded as the kernels decode it. */
    private static final float[] E4M3 = new float[256];

    static {
        float[] pow2 = org.tornadomla.kernels.Bf16.pow2();
        for (int b = 0; b < 256; b++) E4M3[b] = org.tornadomla.kernels.Fp8.decode((byte) b, pow2);
    }

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

    /**
     * Cache slots [slot, slot+n) as f32 rows of width w = d_c + d_r: the cache itself for F32 (the offset is
     * returned), or decoded into buf (offset 0) for BF16 (widen to int, shift into a float's top half) and
     * INT8 (convert, times the slot's scale of each part).
     */
    private static int rows(float[] kv32, short[] bf16, byte[] int8, int dtype, int slot, int n, int w, int dc, float[] buf) {
        if (dtype == CacheLayout.F32) return CacheLayout.valueIndex(slot, 0, w);
        if (dtype == CacheLayout.FP8) {
            // e4m3 → float by its bits: a normal number is sign | (e + 120) << 23 | m << 20, a subnormal m·2^−9
            // (as Fp8.decode computes it), times the block's scale; the rope part is bf16, the top half of a float
            FloatVector twoToMinus9 = FloatVector.broadcast(SPECIES, 1f / 512);
            for (int t = 0; t < n; t++) {
                int s = slot + t, to = t * w, i = 0;
                for (; i <= dc - L && (i % CacheLayout.FP8_BLOCK) + L <= CacheLayout.FP8_BLOCK; i += L) {
                    IntVector v = (IntVector) ByteVector.fromArray(BYTES, int8, CacheLayout.fp8LatentIndex(s, i, dc)).convertShape(VectorOperators.B2I, INTS, 0);
                    IntVector mag = v.and(0x7F), e = mag.lanewise(VectorOperators.LSHR, 3), m = mag.and(7);
                    FloatVector normal = e.add(120).lanewise(VectorOperators.LSHL, 23).or(m.lanewise(VectorOperators.LSHL, 20)).reinterpretAsFloats();
                    FloatVector sub = ((FloatVector) m.convert(VectorOperators.I2F, 0)).mul(twoToMinus9);
                    FloatVector val = normal.blend(sub, e.eq(0).cast(SPECIES));
                    val = val.reinterpretAsInts().or(v.and(0x80).lanewise(VectorOperators.LSHL, 24)).reinterpretAsFloats();
                    val.mul(kv32[CacheLayout.fp8ScaleIndex(s, i, dc)]).intoArray(buf, to + i);
                }
                for (; i < dc; i++) buf[to + i] = E4M3[int8[CacheLayout.fp8LatentIndex(s, i, dc)] & 0xFF] * kv32[CacheLayout.fp8ScaleIndex(s, i, dc)];
                for (int k = 0; k < w - dc; k++) buf[to + dc + k] = Float.intBitsToFloat((bf16[CacheLayout.fp8RopeIndex(s, k, w - dc)] & 0xFFFF) << 16);
            }
            return 0;
        }
        if (dtype == CacheLayout.BF16) {
            int from = CacheLayout.valueIndex(slot, 0, w), count = n * w, i = 0;   // consecutive slots are adjacent
            for (; i <= count - L; i += L) {
                ((IntVector) ShortVector.fromArray(SHORTS, bf16, from + i).convertShape(VectorOperators.S2I, INTS, 0))
                        .lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats().intoArray(buf, i);
            }
            for (; i < count; i++) buf[i] = CacheOps.load(kv32, bf16, int8, dtype, slot + i / w, i % w, w, dc);
            return 0;
        }
        for (int t = 0; t < n; t++) {
            int s = slot + t, from = CacheLayout.valueIndex(s, 0, w), to = t * w;
            for (int part = 0; part < 2; part++) {
                int lo = part == 0 ? 0 : dc, hi = part == 0 ? dc : w;
                float scale = kv32[CacheLayout.int8ScaleIndex(s, part)];
                FloatVector vs = FloatVector.broadcast(SPECIES, scale);
                int i = lo;
                for (; i <= hi - L; i += L) {
                    ((FloatVector) ByteVector.fromArray(BYTES, int8, from + i).convertShape(VectorOperators.B2F, SPECIES, 0))
                            .mul(vs).intoArray(buf, to + i);
                }
                for (; i < hi; i++) buf[to + i] = int8[from + i] * scale;
            }
        }
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

    /** One task per head: each row of W^UK_h is read once and applied to every token row (weights dominate at small batch). */
    public static void absorbQuery(float[] q, float[] wkvB, float[] qLat, int rows, int heads, int dn, int dr, int dv, int dc) {
        IntStream.range(0, heads).parallel().forEach(h -> {
            for (int r = 0; r < rows; r++) java.util.Arrays.fill(qLat, (r * heads + h) * dc, (r * heads + h + 1) * dc, 0f);
            for (int d = 0; d < dn; d++) {
                int wRow = (h * (dn + dv) + d) * dc;
                for (int r = 0; r < rows; r++) {
                    int rh = r * heads + h;
                    axpy(q[rh * (dn + dr) + d], wkvB, wRow, qLat, rh * dc, dc);
                }
            }
        });
    }

    /** One task per head: each row of W^UV_h is read once and dotted with every token row's o_lat. */
    public static void unabsorbValue(float[] oLat, float[] wkvB, float[] o, int rows, int heads, int dn, int dv, int dc) {
        IntStream.range(0, heads).parallel().forEach(h -> {
            for (int v = 0; v < dv; v++) {
                int wRow = (h * (dn + dv) + dn + v) * dc;
                for (int r = 0; r < rows; r++) {
                    int rh = r * heads + h;
                    o[rh * dv + v] = dot(wkvB, wRow, oLat, rh * dc, dc);
                }
            }
        });
    }

    // ------------------------------------------------------------------ absorbed attention

    public static void absorbedScores(float[] qLat, float[] q, float[] kvFloats, short[] kvHalves, byte[] kvBytes, int dtype,
                                      float[] scores, int[] seqStart, int batch, int tokens, int capacity, int heads,
                                      int dn, int dr, int dc, float scale) {
        int w = dc + dr;
        int groups = (heads + GROUP - 1) / GROUP;
        IntStream.range(0, batch * tokens * groups).parallel().forEach(task -> {
            int r = task / groups, h0 = (task % groups) * GROUP, nh = Math.min(GROUP, heads - h0);
            int b = r / tokens, len = seqStart[b] + r % tokens + 1;
            int[] qOff = new int[nh], peOff = new int[nh], sOff = new int[nh];
            for (int hh = 0; hh < nh; hh++) {
                int rh = r * heads + h0 + hh;
                qOff[hh] = rh * dc;
                peOff[hh] = rh * (dn + dr) + dn;
                sOff[hh] = rh * capacity;
            }
            float[] buf = dtype != CacheLayout.F32 ? rowBuffer(ROWS * w) : null;
            for (int j0 = 0; j0 < len; j0 += ROWS) {
                int nj = Math.min(ROWS, len - j0);
                float[] src = dtype != CacheLayout.F32 ? buf : kvFloats;
                int off = rows(kvFloats, kvHalves, kvBytes, dtype, b * capacity + j0, nj, w, dc, buf);
                scoreTile(qLat, qOff, q, peOff, nh, src, off, nj, dc, dr, scores, sOff, j0, scale);
            }
        });
    }

    /**
     * out[sOff[hh] + j0 + jj] = scale·(q_lat[qOff[hh]]·row_jj[:d_c] + q[peOff[hh]]·row_jj[d_c:]) for nh heads and
     * nj rows src[off + jj·w]: 4 × 4 register blocks where the dimensions allow, dot products elsewhere.
     */
    static void scoreTile(float[] qLat, int[] qOff, float[] q, int[] peOff, int nh, float[] src, int off, int nj,
                          int dc, int dr, float[] out, int[] sOff, int j0, float scale) {
        int w = dc + dr;
        boolean vec = dc % L == 0 && dr % L == 0;
        for (int h = 0; h < nh; h += HB) {
            for (int jj = 0; jj < nj; jj += JB) {
                if (vec && h + HB <= nh && jj + JB <= nj) {
                    scoreBlock(qLat, qOff, q, peOff, h, src, off + jj * w, w, dc, dr, out, sOff, j0 + jj, scale);
                } else {
                    for (int hh = h; hh < Math.min(nh, h + HB); hh++) {
                        for (int j = jj; j < Math.min(nj, jj + JB); j++) {
                            int row = off + j * w;
                            out[sOff[hh] + j0 + j] = scale * (dot(qLat, qOff[hh], src, row, dc) + dot(q, peOff[hh], src, row + dc, dr));
                        }
                    }
                }
            }
        }
    }

    /** 4 heads × 4 rows: 16 vector accumulators over the d_c + d_r numbers of a row, 8 loads per 16 FMAs. */
    private static void scoreBlock(float[] qLat, int[] qOff, float[] q, int[] peOff, int h, float[] src, int off, int w,
                                   int dc, int dr, float[] out, int[] sOff, int j, float scale) {
        FloatVector a00 = FloatVector.zero(SPECIES), a01 = a00, a02 = a00, a03 = a00, a10 = a00, a11 = a00, a12 = a00, a13 = a00;
        FloatVector a20 = a00, a21 = a00, a22 = a00, a23 = a00, a30 = a00, a31 = a00, a32 = a00, a33 = a00;
        for (int part = 0; part < 2; part++) {
            // part 0: q_lat·c_kv over d_c; part 1: q_pe·k_pe over d_r
            float[] qa = part == 0 ? qLat : q;
            int[] qo = part == 0 ? qOff : peOff;
            int n = part == 0 ? dc : dr, ko = part == 0 ? 0 : dc;
            int o0 = qo[h], o1 = qo[h + 1], o2 = qo[h + 2], o3 = qo[h + 3];
            for (int c = 0; c < n; c += L) {
                FloatVector k0 = FloatVector.fromArray(SPECIES, src, off + ko + c);
                FloatVector k1 = FloatVector.fromArray(SPECIES, src, off + w + ko + c);
                FloatVector k2 = FloatVector.fromArray(SPECIES, src, off + 2 * w + ko + c);
                FloatVector k3 = FloatVector.fromArray(SPECIES, src, off + 3 * w + ko + c);
                FloatVector q0 = FloatVector.fromArray(SPECIES, qa, o0 + c);
                a00 = q0.fma(k0, a00); a01 = q0.fma(k1, a01); a02 = q0.fma(k2, a02); a03 = q0.fma(k3, a03);
                FloatVector q1 = FloatVector.fromArray(SPECIES, qa, o1 + c);
                a10 = q1.fma(k0, a10); a11 = q1.fma(k1, a11); a12 = q1.fma(k2, a12); a13 = q1.fma(k3, a13);
                FloatVector q2 = FloatVector.fromArray(SPECIES, qa, o2 + c);
                a20 = q2.fma(k0, a20); a21 = q2.fma(k1, a21); a22 = q2.fma(k2, a22); a23 = q2.fma(k3, a23);
                FloatVector q3 = FloatVector.fromArray(SPECIES, qa, o3 + c);
                a30 = q3.fma(k0, a30); a31 = q3.fma(k1, a31); a32 = q3.fma(k2, a32); a33 = q3.fma(k3, a33);
            }
        }
        store(out, sOff[h] + j, scale, a00, a01, a02, a03);
        store(out, sOff[h + 1] + j, scale, a10, a11, a12, a13);
        store(out, sOff[h + 2] + j, scale, a20, a21, a22, a23);
        store(out, sOff[h + 3] + j, scale, a30, a31, a32, a33);
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
            // the max starts at the first score (Softmax's convention: every finite score handled exactly)
            FloatVector vmax = FloatVector.broadcast(SPECIES, scores[base]);
            int j = 0;
            for (; j <= len - L; j += L) vmax = vmax.max(FloatVector.fromArray(SPECIES, scores, base + j));
            float max = vmax.reduceLanes(VectorOperators.MAX);
            for (; j < len; j++) max = Math.max(max, scores[base + j]);
            max = Softmax.shift(max);
            FloatVector vm = FloatVector.broadcast(SPECIES, max), vsum = FloatVector.zero(SPECIES);
            for (j = 0; j <= len - L; j += L) {
                FloatVector e = FloatVector.fromArray(SPECIES, scores, base + j).sub(vm).lanewise(VectorOperators.EXP);
                e.intoArray(scores, base + j);
                vsum = vsum.add(e);
            }
            float sum = vsum.reduceLanes(VectorOperators.ADD);
            for (; j < len; j++) {
                float e = (float) Math.exp(scores[base + j] - max);
                scores[base + j] = e;
                sum += e;
            }
            float inv = sum > 0f ? 1f / sum : 0f;        // 0: every score is −∞, every weight 0
            FloatVector vinv = FloatVector.broadcast(SPECIES, inv);
            for (j = 0; j <= len - L; j += L) FloatVector.fromArray(SPECIES, scores, base + j).mul(vinv).intoArray(scores, base + j);
            for (; j < len; j++) scores[base + j] *= inv;
        });
    }

    public static void absorbedValues(float[] probs, float[] kvFloats, short[] kvHalves, byte[] kvBytes, int dtype, float[] oLat,
                                      int[] seqStart, int batch, int tokens, int capacity, int heads, int dc, int dr) {
        int w = dc + dr;
        int groups = (heads + GROUP - 1) / GROUP;
        IntStream.range(0, batch * tokens * groups).parallel().forEach(task -> {
            int r = task / groups, h0 = (task % groups) * GROUP, nh = Math.min(GROUP, heads - h0);
            int b = r / tokens, len = seqStart[b] + r % tokens + 1;
            int[] pOff = new int[nh], aOff = new int[nh];
            for (int hh = 0; hh < nh; hh++) {
                pOff[hh] = (r * heads + h0 + hh) * capacity;
                aOff[hh] = (r * heads + h0 + hh) * dc;
            }
            java.util.Arrays.fill(oLat, aOff[0], aOff[0] + nh * dc, 0f);
            float[] buf = dtype != CacheLayout.F32 ? rowBuffer(ROWS * w) : null;
            for (int j0 = 0; j0 < len; j0 += ROWS) {
                int nj = Math.min(ROWS, len - j0);
                float[] src = dtype != CacheLayout.F32 ? buf : kvFloats;
                int off = rows(kvFloats, kvHalves, kvBytes, dtype, b * capacity + j0, nj, w, dc, buf);
                valueTile(probs, pOff, j0, nh, src, off, w, nj, dc, oLat, aOff);
            }
        });
    }

    /**
     * acc[aOff[hh] + c] += Σ_jj p[pOff[hh] + j0 + jj]·src[off + jj·w + c] for nh heads, c &lt; d_c: blocks of 4 heads ×
     * 2 vectors of latent dims (8 accumulators; per row 2 loads and 4 broadcasts for 8 FMAs).
     */
    static void valueTile(float[] p, int[] pOff, int j0, int nh, float[] src, int off, int w, int nj, int dc, float[] acc, int[] aOff) {
        int h = 0;
        if (dc % (2 * L) == 0) {
            for (; h + HB <= nh; h += HB) {
                int p0 = pOff[h] + j0, p1 = pOff[h + 1] + j0, p2 = pOff[h + 2] + j0, p3 = pOff[h + 3] + j0;
                int o0 = aOff[h], o1 = aOff[h + 1], o2 = aOff[h + 2], o3 = aOff[h + 3];
                for (int c = 0; c < dc; c += 2 * L) {
                    FloatVector s0 = FloatVector.fromArray(SPECIES, acc, o0 + c), t0 = FloatVector.fromArray(SPECIES, acc, o0 + c + L);
                    FloatVector s1 = FloatVector.fromArray(SPECIES, acc, o1 + c), t1 = FloatVector.fromArray(SPECIES, acc, o1 + c + L);
                    FloatVector s2 = FloatVector.fromArray(SPECIES, acc, o2 + c), t2 = FloatVector.fromArray(SPECIES, acc, o2 + c + L);
                    FloatVector s3 = FloatVector.fromArray(SPECIES, acc, o3 + c), t3 = FloatVector.fromArray(SPECIES, acc, o3 + c + L);
                    for (int jj = 0; jj < nj; jj++) {
                        FloatVector v = FloatVector.fromArray(SPECIES, src, off + jj * w + c);
                        FloatVector u = FloatVector.fromArray(SPECIES, src, off + jj * w + c + L);
                        FloatVector b0 = FloatVector.broadcast(SPECIES, p[p0 + jj]);
                        s0 = v.fma(b0, s0); t0 = u.fma(b0, t0);
                        FloatVector b1 = FloatVector.broadcast(SPECIES, p[p1 + jj]);
                        s1 = v.fma(b1, s1); t1 = u.fma(b1, t1);
                        FloatVector b2 = FloatVector.broadcast(SPECIES, p[p2 + jj]);
                        s2 = v.fma(b2, s2); t2 = u.fma(b2, t2);
                        FloatVector b3 = FloatVector.broadcast(SPECIES, p[p3 + jj]);
                        s3 = v.fma(b3, s3); t3 = u.fma(b3, t3);
                    }
                    s0.intoArray(acc, o0 + c); t0.intoArray(acc, o0 + c + L);
                    s1.intoArray(acc, o1 + c); t1.intoArray(acc, o1 + c + L);
                    s2.intoArray(acc, o2 + c); t2.intoArray(acc, o2 + c + L);
                    s3.intoArray(acc, o3 + c); t3.intoArray(acc, o3 + c + L);
                }
            }
        }
        for (; h < nh; h++) {
            for (int jj = 0; jj < nj; jj++) axpy(p[pOff[h] + j0 + jj], src, off + jj * w, acc, aOff[h], dc);
        }
    }

    // ------------------------------------------------------------------ tiled (online softmax, split-KV)

    public static void splitTiles(float[] qLat, float[] q, float[] kvFloats, short[] kvHalves, byte[] kvBytes, int dtype, float[] sTile,
                                  float[] oPart, float[] mlPart, int[] seqStart, int batch, int tokens, int capacity, int heads,
                                  int dn, int dr, int dc, float scale, int tileSize, int numSplits) {
        int w = dc + dr;
        int groups = (heads + GROUP - 1) / GROUP;
        IntStream.range(0, batch * tokens * numSplits * groups).parallel().forEach(task -> {
            int g = task % groups, s = (task / groups) % numSplits, r = task / (groups * numSplits);
            int h0 = g * GROUP, nh = Math.min(GROUP, heads - h0);
            int b = r / tokens, len = seqStart[b] + r % tokens + 1;
            int chunk = (len + numSplits - 1) / numSplits, lo = s * chunk, hi = Math.min(len, lo + chunk);
            int[] qOff = new int[nh], peOff = new int[nh], tOff = new int[nh], aOff = new int[nh];
            float[] m = new float[nh], l = new float[nh];
            for (int hh = 0; hh < nh; hh++) {
                int rh = r * heads + h0 + hh, part = rh * numSplits + s;
                qOff[hh] = rh * dc;
                peOff[hh] = rh * (dn + dr) + dn;
                tOff[hh] = part * tileSize;          // this head's tile of scores, reused as probabilities
                aOff[hh] = part * dc;
                java.util.Arrays.fill(oPart, aOff[hh], aOff[hh] + dc, 0f);
            }
            float[] buf = dtype != CacheLayout.F32 ? rowBuffer(tileSize * w) : null;
            for (int j0 = lo; j0 < hi; j0 += tileSize) {
                int n = Math.min(tileSize, hi - j0);
                float[] src = dtype != CacheLayout.F32 ? buf : kvFloats;
                int off = rows(kvFloats, kvHalves, kvBytes, dtype, b * capacity + j0, n, w, dc, buf);
                scoreTile(qLat, qOff, q, peOff, nh, src, off, n, dc, dr, sTile, tOff, 0, scale);
                for (int hh = 0; hh < nh; hh++) {
                    // as OnlineSoftmax.splitTiles: the max from the first score, the old max scaled away (0 while −∞)
                    float mTile = sTile[tOff[hh]];
                    for (int jj = 1; jj < n; jj++) mTile = Math.max(mTile, sTile[tOff[hh] + jj]);
                    float mNew = j0 == lo ? mTile : Math.max(m[hh], mTile);
                    float mOld = j0 == lo ? mNew : m[hh];
                    float shift = Softmax.shift(mNew);
                    float alpha = (float) Math.exp(mOld - shift);
                    float sum = 0f;
                    for (int jj = 0; jj < n; jj++) {
                        float e = (float) Math.exp(sTile[tOff[hh] + jj] - shift);
                        sTile[tOff[hh] + jj] = e;
                        sum += e;
                    }
                    l[hh] = l[hh] * alpha + sum;
                    m[hh] = mNew;
                    scaleInPlace(oPart, aOff[hh], dc, alpha);
                }
                valueTile(sTile, tOff, 0, nh, src, off, w, n, dc, oPart, aOff);
            }
            for (int hh = 0; hh < nh; hh++) {
                int part = (r * heads + h0 + hh) * numSplits + s;
                scaleInPlace(oPart, aOff[hh], dc, l[hh] > 0f ? 1f / l[hh] : 0f);
                mlPart[2 * part] = l[hh] > 0f ? m[hh] : 0f;
                mlPart[2 * part + 1] = l[hh];
            }
        });
    }

    /** The split weights l_s·exp(m_s − M) once per (row, head), then a vector sum of the split outputs (as OnlineSoftmax.combine). */
    public static void combine(float[] oPart, float[] mlPart, float[] oLat, int rows, int heads, int numSplits, int dc) {
        IntStream.range(0, rows * heads).parallel().forEach(rh -> {
            int part0 = rh * numSplits;
            float mMax = 0f;
            boolean seen = false;
            for (int s = 0; s < numSplits; s++) {
                if (mlPart[2 * (part0 + s) + 1] > 0f) {
                    mMax = seen ? Math.max(mMax, mlPart[2 * (part0 + s)]) : mlPart[2 * (part0 + s)];
                    seen = true;
                }
            }
            float wSum = 0f;
            float[] wts = new float[numSplits];
            for (int s = 0; s < numSplits; s++) {
                float ls = mlPart[2 * (part0 + s) + 1];
                wSum += (wts[s] = ls > 0f ? ls * (float) Math.exp(mlPart[2 * (part0 + s)] - mMax) : 0f);
            }
            java.util.Arrays.fill(oLat, rh * dc, rh * dc + dc, 0f);
            if (wSum > 0f) {
                for (int s = 0; s < numSplits; s++) axpy(wts[s] / wSum, oPart, (part0 + s) * dc, oLat, rh * dc, dc);
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

    public static void decompress(float[] kvFloats, short[] kvHalves, byte[] kvBytes, int dtype, float[] wkvB, float[] kvFull,
                                  int[] seqStart, int batch, int tokens, int capacity, int heads, int dn, int dv, int dc, int dr) {
        int width = heads * (dn + dv), w = dc + dr;
        IntStream.range(0, batch * capacity).parallel().forEach(bj -> {
            int b = bj / capacity, j = bj % capacity;
            if (j >= seqStart[b] + tokens) return;
            float[] buf = dtype != CacheLayout.F32 ? rowBuffer(w) : null;
            float[] src = dtype != CacheLayout.F32 ? buf : kvFloats;
            int off = rows(kvFloats, kvHalves, kvBytes, dtype, bj, 1, w, dc, buf);
            for (int o = 0; o < width; o++) kvFull[bj * width + o] = dot(wkvB, o * dc, src, off, dc);
        });
    }

    public static void naiveScores(float[] q, float[] kvFull, float[] kvFloats, short[] kvHalves, byte[] kvBytes, int dtype,
                                   float[] scores, int[] seqStart, int batch, int tokens, int capacity, int heads, int dn,
                                   int dr, int dv, int dc, float scale) {
        int width = heads * (dn + dv), w = dc + dr;
        IntStream.range(0, batch * tokens * heads).parallel().forEach(rh -> {
            int r = rh / heads, h = rh % heads, b = r / tokens, len = seqStart[b] + r % tokens + 1;
            float[] buf = dtype != CacheLayout.F32 ? rowBuffer(w) : null;
            for (int j = 0; j < len; j++) {
                float[] src = dtype != CacheLayout.F32 ? buf : kvFloats;
                int off = rows(kvFloats, kvHalves, kvBytes, dtype, b * capacity + j, 1, w, dc, buf);
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
