/*
 * This machine's two ceilings, measured the way a C compiler at its best reaches them, to cross-check what
 * the JVM measures (`./mla bench --roofline`, org.tornadomla.bench.Roofline):
 *   - FMA throughput: every thread runs 24 independent chains of vector fused multiply-adds on registers
 *     (enough to cover the FMA latency on every port of current x86 cores), for about half a second;
 *   - read bandwidth: every thread sums its own 256 MiB array with vector loads.
 * Build and run (benchmarks/roofline/run.sh does both):
 *   gcc -O3 -march=native -fopenmp roofline.c -o roofline && ./roofline
 * Prints one line per measurement: the best of 5 runs, all threads together.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__AVX512F__)
#define LANES 16
#elif defined(__AVX__)
#define LANES 8
#else
#define LANES 4
#endif
typedef float vec __attribute__((vector_size(LANES * 4)));

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

#define CHAINS 24
/* FLOPs done by one call: iters x CHAINS chains x LANES lanes x 2 (multiply and add). */
static double fma_block(long iters, float seed, float *sink) {
    vec a[CHAINS];
    vec m, c;
    for (int l = 0; l < LANES; l++) { m[l] = 0.9999999f; c[l] = 1e-7f; }
    for (int k = 0; k < CHAINS; k++) for (int l = 0; l < LANES; l++) a[k][l] = seed + k;
    for (long i = 0; i < iters; i++) {
#pragma GCC unroll 24
        for (int k = 0; k < CHAINS; k++) a[k] = a[k] * m + c;   /* -march=native contracts this to one FMA */
    }
    vec s = a[0];
    for (int k = 1; k < CHAINS; k++) s += a[k];
    float t = 0;
    for (int l = 0; l < LANES; l++) t += s[l];
    *sink += t;
    return (double) iters * CHAINS * LANES * 2;
}

int main(void) {
    int threads = omp_get_max_threads();
    double best_flops = 0, best_bw = 0;
    float sink = 0;
    for (int run = 0; run < 5; run++) {
        double flops = 0;
        double t0 = now();
#pragma omp parallel reduction(+:flops) reduction(+:sink)
        {
            float local = 0;
            flops += fma_block(20000000L, (float) omp_get_thread_num(), &local);
            sink += local;
        }
        double dt = now() - t0;
        if (flops / dt > best_flops) best_flops = flops / dt;
    }
    long n = 64L << 20;   /* floats per thread: 256 MiB */
    float **data = malloc(sizeof(float *) * threads);
#pragma omp parallel
    {
        int t = omp_get_thread_num();
        data[t] = aligned_alloc(64, n * sizeof(float));
        for (long i = 0; i < n; i++) data[t][i] = 1.0f;
    }
    for (int run = 0; run < 5; run++) {
        double t0 = now();
        double total = 0;
#pragma omp parallel reduction(+:total)
        {
            const vec *p = (const vec *) data[omp_get_thread_num()];
            vec s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0};
            for (long i = 0; i < n / LANES; i += 4) { s0 += p[i]; s1 += p[i + 1]; s2 += p[i + 2]; s3 += p[i + 3]; }
            vec s = s0 + s1 + s2 + s3;
            for (int l = 0; l < LANES; l++) total += s[l];
        }
        double dt = now() - t0;
        if (total != (double) n * threads) { fprintf(stderr, "read check failed: %f\n", total); return 1; }
        double bw = (double) threads * n * sizeof(float) / dt;
        if (bw > best_bw) best_bw = bw;
    }
    printf("fma_gflops %.1f threads %d vector_bits %d chains %d\n", best_flops / 1e9, threads, LANES * 32, CHAINS);
    printf("read_gbps %.1f threads %d bytes_per_thread %ld\n", best_bw / 1e9, threads, n * 4);
    if (sink == 12345.678f) printf("(sink)\n");
    return 0;
}
