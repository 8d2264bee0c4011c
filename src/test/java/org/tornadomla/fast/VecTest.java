package org.tornadomla.fast;

import jdk.incubator.vector.FloatVector;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link Vec#exp} against Math.exp in double precision, and at the inputs a softmax meets at its edges. */
class VecTest {
    private static float[] exp(float[] x) {
        float[] in = java.util.Arrays.copyOf(x, (x.length + Vec.L - 1) / Vec.L * Vec.L), out = new float[in.length];
        for (int i = 0; i < in.length; i += Vec.L) Vec.exp(FloatVector.fromArray(Vec.F, in, i)).intoArray(out, i);
        return java.util.Arrays.copyOf(out, x.length);
    }

    /**
     * Every result a normal float within 1 ulp of e^x (from double) for x ≤ 0, the softmaxes' arguments, and within 1.1
     * ulp above (1.002 measured at x = 48.2), over a sweep of −87.3 … 88.37 and around 0.
     */
    @Test
    void withinOneUlpWhereTheResultIsNormal() {
        int n = 1 << 20;
        float[] x = new float[n + 2000];
        for (int i = 0; i < n; i++) x[i] = -87.3f + (88.37f + 87.3f) * i / n;
        for (int i = 0; i < 2000; i++) x[n + i] = (i - 1000) * 1e-6f;          // around 0, where r is x itself
        float[] e = exp(x);
        double worst = 0;
        for (int i = 0; i < x.length; i++) {
            float want = (float) Math.exp(x[i]);
            double ulps = Math.abs((double) e[i] - Math.exp(x[i])) / Math.ulp(want);
            assertTrue(ulps <= (x[i] <= 0 ? 1.0 : 1.1), "exp(" + x[i] + ") = " + e[i] + ", expected " + want + " (" + ulps + " ulp)");
            worst = Math.max(worst, ulps);
        }
        assertTrue(worst > 0.05, "a sweep that never differs from Math.exp would not test the bound: worst " + worst);
    }

    @Test
    void edgesOfTheRange() {
        float[] x = {0f, -0f, Float.NEGATIVE_INFINITY, -87.4f, -100f, -1e30f, Float.NaN, 88.4f, 1e30f, Float.POSITIVE_INFINITY};
        float[] e = exp(x);
        assertEquals(1f, e[0], "exp(0)");
        assertEquals(1f, e[1], "exp(-0)");
        for (int i = 2; i <= 5; i++) assertEquals(0f, e[i], "exp(" + x[i] + ") flushes to 0 (below 2^-126)");
        assertTrue(Float.isNaN(e[6]), "exp(NaN) = " + e[6]);
        for (int i = 7; i <= 9; i++) assertEquals(Float.POSITIVE_INFINITY, e[i], "exp(" + x[i] + ")");
    }

    /** The documented tree, lane i with lane i + L/2, then + L/4, …, written out lane by lane in scalar Java. */
    private static float tree(float[] lanes) {
        float[] t = lanes.clone();
        for (int half = t.length / 2; half >= 1; half /= 2) {
            float[] next = new float[t.length];
            for (int i = 0; i < t.length; i++) next[i] = t[i] + t[(i + half) % t.length];
            t = next;
        }
        return t[0];
    }

    /**
     * Vec.sum adds in one tree, whatever compiles it: the first calls run interpreted, the later ones C2's code, and all
     * give the bits of the tree written out in scalar Java. reduceLanes(ADD), which it replaced, added lane after lane
     * interpreted and in a tree compiled, so a kernel's dot products changed in their last bit once C2 came.
     */
    @Test
    void sumAddsInOneTreeInterpretedAndCompiled() {
        java.util.SplittableRandom r = new java.util.SplittableRandom(5);
        float[][] lanes = new float[64][Vec.L];
        for (float[] l : lanes) for (int i = 0; i < l.length; i++) l[i] = (float) (r.nextDouble(-1, 1) * Math.pow(10, r.nextInt(-3, 4)));
        float[] first = new float[lanes.length];
        for (int k = 0; k < lanes.length; k++) {
            first[k] = Vec.sum(FloatVector.fromArray(Vec.F, lanes[k], 0));
            assertEquals(Float.floatToIntBits(tree(lanes[k])), Float.floatToIntBits(first[k]), "lanes " + java.util.Arrays.toString(lanes[k]));
        }
        int differ = 0;
        for (int k = 0; k < lanes.length; k++) {
            float inOrder = 0;
            for (float v : lanes[k]) inOrder += v;
            if (inOrder != first[k]) differ++;
        }
        assertTrue(differ > 0, "data whose lane-after-lane sum equals the tree's everywhere would not tell the orders apart");
        for (int round = 0; round < 200_000; round++) {                  // long enough for C2 to compile sum
            int k = round % lanes.length;
            float again = Vec.sum(FloatVector.fromArray(Vec.F, lanes[k], 0));
            if (Float.floatToIntBits(again) != Float.floatToIntBits(first[k])) {
                throw new AssertionError("round " + round + ": " + again + " where the first call gave " + first[k]);
            }
        }
    }

    /**
     * L bytes as a vector at every float width: a quarter of its bits, but never under 64 (no 32-bit byte vector
     * exists: 128-bit JVMs, arm64's NEON and SSE-only x86, failed to load java-fast before 2026-12-07).
     */
    @Test
    void byteVectorsHoldAVectorsWorthOfBytesAtEveryWidth() {
        assertEquals(64, Vec.bytes(FloatVector.SPECIES_128).vectorBitSize());
        assertEquals(64, Vec.bytes(FloatVector.SPECIES_256).vectorBitSize());
        assertEquals(128, Vec.bytes(FloatVector.SPECIES_512).vectorBitSize());
        // the JVM's own width: the L codes at an array's very end load, and decode as the reference does
        byte[] codes = new byte[Vec.L];
        for (int i = 0; i < codes.length; i++) codes[i] = (byte) (i * 37 + 5);
        float[] got = new float[Vec.L], pow2 = org.tornadomla.kernels.Bf16.pow2();
        Vec.e4m3(codes, 0).intoArray(got, 0);
        for (int i = 0; i < codes.length; i++) assertEquals(org.tornadomla.kernels.Fp8.decode(codes[i], pow2), got[i], "code " + codes[i]);
    }
}
