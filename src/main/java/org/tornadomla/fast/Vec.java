package org.tornadomla.fast;

import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/** The vector shapes java-fast uses (the machine's preferred width) and the small loops every family shares. */
final class Vec {
    private Vec() {
    }

    static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    /** Floats per vector (16 with AVX-512, 8 with AVX2). */
    static final int L = F.length();
    /** L bf16 numbers, L int8 numbers and L ints as vectors. */
    static final VectorSpecies<Short> SHORTS = VectorSpecies.of(short.class, VectorShape.forBitSize(F.vectorBitSize() / 2));
    static final VectorSpecies<Byte> BYTES = bytes(F);
    /**
     * Where {@link #BYTES} holds more than L bytes (128-bit vectors: no 32-bit byte vector exists, so 64 bits), the
     * first L lanes: a load of L bytes near an array's end must not read past it.
     */
    static final VectorMask<Byte> FIRST_BYTES = BYTES.indexInRange(0, F.length());
    private static final boolean WIDE_BYTES = BYTES.length() > F.length();

    /** L bytes as a vector: a quarter of the float vector's bits, at least 64 (the narrowest byte vector). */
    static VectorSpecies<Byte> bytes(VectorSpecies<Float> f) {
        return VectorSpecies.of(byte.class, VectorShape.forBitSize(Math.max(64, f.vectorBitSize() / 4)));
    }

    /**
     * The L bytes at b[at …] in the first L lanes of a {@link #BYTES} vector (the others 0 where it is wider). Kept under
     * 35 bytes of bytecode, which C2 inlines at any call site (a vector returned from a call that is not inlined is boxed).
     */
    static ByteVector loadBytes(byte[] b, int at) {
        return WIDE_BYTES ? ByteVector.fromArray(BYTES, b, at, FIRST_BYTES) : ByteVector.fromArray(BYTES, b, at);
    }
    static final VectorSpecies<Integer> INTS = VectorSpecies.of(int.class, F.vectorShape());

    /** Lane i to lane (i + k) mod L: the rotations of {@link #sum}'s tree (those of k ≥ L are not used). */
    private static final VectorShuffle<Float> R8 = VectorShuffle.iota(F, 8, 1, true), R4 = VectorShuffle.iota(F, 4, 1, true),
            R2 = VectorShuffle.iota(F, 2, 1, true), R1 = VectorShuffle.iota(F, 1, 1, true);

    /**
     * The sum of v's lanes, always added in the same tree (lane i with lane i + L/2, then i + L/4, …). The Vector
     * API's {@code reduceLanes(ADD)} leaves the order open, and takes different ones in interpreted code (lane after
     * lane) and in C2's (a tree): a dot product computed before C2 compiled its kernel and the same one after differed
     * in the last bit, so two layers stepping the same tokens in one JVM, or one sequence batched two ways, did not
     * give the same bits. The projections' dot products (and so every number the cache stores; the norms run the
     * scalar reference kernels) and the softmax's sums go through here, as do bf16 and FP8 weights' absorption dot
     * products ({@link WeightKernels} shares one dot with their projections). Its four rotations cost about three
     * times reduceLanes' throughput, so {@link FastAbsorb}'s f32 blocks (16 sums of 512 numbers per block of
     * unabsorb_v: 1.3 → 2.5 ms at B8 H128) keep reduceLanes: their outputs may still differ in the last bit between a
     * step run before C2 and one after.
     */
    static float sum(FloatVector v) {
        // one small method per level: C2 inlines methods of up to 35 bytes of bytecode at any call site, and a sum at
        // the end of a kernel's loop is not hot enough for a larger one (a 75-byte sum, left as a call, boxed its
        // vector and made unabsorb_v 7 times slower)
        return fold1(fold2(fold4(fold8(v))));
    }

    private static FloatVector fold8(FloatVector v) {
        return L >= 16 ? v.add(v.rearrange(R8)) : v;
    }

    private static FloatVector fold4(FloatVector v) {
        return L >= 8 ? v.add(v.rearrange(R4)) : v;
    }

    private static FloatVector fold2(FloatVector v) {
        return L >= 4 ? v.add(v.rearrange(R2)) : v;
    }

    private static float fold1(FloatVector v) {
        return v.add(v.rearrange(R1)).lane(0);
    }

    /** Σ a[ao + i]·b[bo + i] for i &lt; n. */
    static float dot(float[] a, int ao, float[] b, int bo, int n) {
        FloatVector acc = FloatVector.zero(F);
        int i = 0;
        for (; i <= n - L; i += L) acc = FloatVector.fromArray(F, a, ao + i).fma(FloatVector.fromArray(F, b, bo + i), acc);
        float s = sum(acc);
        for (; i < n; i++) s += a[ao + i] * b[bo + i];
        return s;
    }

    /** y[yo … yo+n) += alpha·x[xo … xo+n). */
    static void axpy(float alpha, float[] x, int xo, float[] y, int yo, int n) {
        FloatVector va = FloatVector.broadcast(F, alpha);
        int i = 0;
        for (; i <= n - L; i += L) FloatVector.fromArray(F, x, xo + i).fma(va, FloatVector.fromArray(F, y, yo + i)).intoArray(y, yo + i);
        for (; i < n; i++) y[yo + i] += alpha * x[xo + i];
    }

    /** a[from … from+n) *= f. */
    static void scale(float[] a, int from, int n, float f) {
        FloatVector vf = FloatVector.broadcast(F, f);
        int i = 0;
        for (; i <= n - L; i += L) FloatVector.fromArray(F, a, from + i).mul(vf).intoArray(a, from + i);
        for (; i < n; i++) a[from + i] *= f;
    }

    /** bf16 bit patterns as floats: widen to int, shift into a float's top half. */
    static FloatVector bf16(short[] h, int at) {
        return ((IntVector) ShortVector.fromArray(SHORTS, h, at).convertShape(VectorOperators.S2I, INTS, 0))
                .lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats();
    }

    /** int8 values as floats. */
    static FloatVector int8(byte[] b, int at) {
        return (FloatVector) loadBytes(b, at).convertShape(VectorOperators.B2F, F, 0);
    }

    /**
     * e4m3 bytes as floats by their bits: a normal number is sign | (e + 120) &lt;&lt; 23 | m &lt;&lt; 20, a subnormal
     * m·2^−9 (as kernels.Fp8.decode computes it).
     */
    static FloatVector e4m3(byte[] b, int at) {
        IntVector v = (IntVector) loadBytes(b, at).convertShape(VectorOperators.B2I, INTS, 0);
        IntVector mag = v.and(0x7F), e = mag.lanewise(VectorOperators.LSHR, 3), m = mag.and(7);
        FloatVector normal = e.add(120).lanewise(VectorOperators.LSHL, 23).or(m.lanewise(VectorOperators.LSHL, 20)).reinterpretAsFloats();
        FloatVector sub = ((FloatVector) m.convert(VectorOperators.I2F, 0)).mul(1f / 512);
        FloatVector val = normal.blend(sub, e.eq(0).cast(F));
        return val.reinterpretAsInts().or(v.and(0x80).lanewise(VectorOperators.LSHL, 24)).reinterpretAsFloats();
    }

    /**
     * Whether kernels touch a tile or a block of weights in order ({@link #touch}) before they walk it in another
     * order. On an AMD Zen 5 the prefetchers fell behind 64 cached rows read 64 columns at a time and the touch made
     * the values faster (B1 H128 1.51 → 1.45 ms, H16 1.36–1.42 → 1.09–1.13); on an Intel Xeon (AVX-512, 2 MB L2 a core)
     * the same reads kept up without it and the touch, a pass that waits on memory with nothing to overlap it, cost more
     * than it saved (docs/cpu-kernels.md §7). From the CPU's vendor ({@code /proc/cpuinfo}; touch where it cannot be
     * read), unless {@code mla tune} measured it on this machine; {@code -Dtornadomla.fast.touch=true|false} overrides
     * both ({@link KernelChoices}).
     */
    static final boolean TOUCH = KernelChoices.choice("tornadomla.fast.touch", KernelChoices.autoTouch());

    /** The vendor_id line of /proc/cpuinfo ("GenuineIntel", "AuthenticAMD"), or "" where there is none. */
    static String cpuVendor() {
        return cpuInfo("vendor_id");
    }

    /** A field of the first processor in /proc/cpuinfo ("vendor_id", "cpu family", "model"), or "" where there is none. */
    static String cpuInfo(String field) {
        return KernelChoices.cpuInfo(field);
    }

    /** Where {@link #touch} leaves its sum, so that the JIT keeps the loads. */
    private static final float[] TOUCHED = new float[1];

    /**
     * Reads a[from, to) one number per 64-byte line, in order, and keeps nothing: a tile read this way arrives as
     * one sequential stream, which the hardware prefetchers run ahead of, before a kernel walks it in another order.
     */
    static void touch(float[] a, int from, int to) {
        // one number per line (a vector load would straddle two lines: Java does not align arrays to 64 bytes)
        float t0 = 0f, t1 = 0f, t2 = 0f, t3 = 0f;
        int i = from;
        for (; i + 4 * LINE <= to; i += 4 * LINE) {
            t0 += a[i];
            t1 += a[i + LINE];
            t2 += a[i + 2 * LINE];
            t3 += a[i + 3 * LINE];
        }
        for (; i < to; i += LINE) t0 += a[i];
        TOUCHED[0] = t0 + t1 + t2 + t3;
    }

    /** Floats per 64-byte cache line. */
    private static final int LINE = 16;

    private static final float LOG2E = 1.44269504088896341f, ROUND = 12582912f /* 1.5·2^23 */, LN2_HI = 0.693359375f,
            LN2_LO = -2.12194440e-4f, FLUSH = -87.33654f /* ln 2^-126 */, OVERFLOW = 88.37626f /* ln 2^127.5 */;

    /**
     * e^x lane-wise, for the softmaxes: within 1 ulp of e^x for x ≤ 0 (their arguments) and 1.1 ulp above, where the
     * result is a normal float; exactly 0 where it would be below 2^-126 (a weight of less than 1.2e-38 beside the
     * largest, which is 1; −∞ gives 0 as it must), +∞ above x = 88.376 (where n would be 128; e^x reaches the largest
     * float only at 88.723, so the top 0.35 of the range is +∞ early), NaN for NaN. x = n·ln 2 + r with n =
     * round(x·log2 e) and |r| ≤ ln 2 / 2 (ln 2 in two parts), e^r by the degree-7 polynomial of Cephes' expf, 2^n put
     * into the exponent bits. The Vector API's EXP (the JDK's SVML: within 1 ulp, subnormals too) took 0.53 ns a number
     * in a softmax-like pass over 4096 floats in L1 on a Zen 5 core, this 0.21 (2026-12-06).
     */
    static FloatVector exp(FloatVector x) {
        FloatVector t = x.fma(FloatVector.broadcast(F, LOG2E), FloatVector.broadcast(F, ROUND));   // ROUND + n in the low bits
        FloatVector n = t.sub(ROUND);
        FloatVector r = n.fma(FloatVector.broadcast(F, -LN2_HI), x);
        r = n.fma(FloatVector.broadcast(F, -LN2_LO), r);
        FloatVector p = r.fma(FloatVector.broadcast(F, 1.9875691500e-4f), FloatVector.broadcast(F, 1.3981999507e-3f));
        p = p.fma(r, FloatVector.broadcast(F, 8.3334519073e-3f));
        p = p.fma(r, FloatVector.broadcast(F, 4.1665795894e-2f));
        p = p.fma(r, FloatVector.broadcast(F, 1.6666665459e-1f));
        p = p.fma(r, FloatVector.broadcast(F, 5.0000001201e-1f));
        p = p.fma(r.mul(r), r).add(1f);
        // 2^n: n + 127 into the exponent field (n = t's low bits, t's bits − ROUND's bits)
        IntVector bits = ((IntVector) t.reinterpretAsInts()).add(127 - 0x4B400000).lanewise(VectorOperators.LSHL, 23);
        FloatVector e = p.mul((FloatVector) bits.reinterpretAsFloats());
        return e.blend(0f, x.compare(VectorOperators.LT, FLUSH)).blend(Float.POSITIVE_INFINITY, x.compare(VectorOperators.GT, OVERFLOW));
    }

    /** A per-thread scratch array of at least n floats (kernels are static; their scratch lives per thread). */
    static float[] scratch(ThreadLocal<float[]> slot, int n) {
        float[] b = slot.get();
        if (b.length < n) {
            b = new float[n];
            slot.set(b);
        }
        return b;
    }
}
