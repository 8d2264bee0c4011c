package org.tornadomla.internal;

import org.tornadomla.MlaException;

import java.util.SplittableRandom;

/**
 * Reproducible normal samples for random weights and inputs ({@code MlaWeights.random}, the command line's demos,
 * the benchmarks and the tests): the same seed gives the same numbers on every JDK, which {@code
 * Random.nextGaussian} does not promise.
 */
public final class Gaussians {
    private Gaussians() {
    }

    /** n samples of N(0, std²) as floats. */
    public static float[] floats(SplittableRandom rnd, int n, double std) {
        if (n < 0) throw new MlaException("gaussians: count must be >= 0, found " + n);
        float[] a = new float[n];
        for (int i = 0; i < n; i++) a[i] = (float) (std * next(rnd));
        return a;
    }

    /** A standard normal sample (Box–Muller). */
    public static double next(SplittableRandom rnd) {
        double u = 1.0 - rnd.nextDouble();
        return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rnd.nextDouble());
    }
}
