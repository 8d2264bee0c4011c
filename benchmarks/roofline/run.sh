#!/usr/bin/env bash
# Builds and runs roofline.c: this machine's FMA peak and read bandwidth as C measures them, to cross-check
# ./mla bench --roofline. Usage: benchmarks/roofline/run.sh [threads] (default: every core).
# ROOFLINE_CFLAGS adds compiler flags (vs-libtorch.sh --isa avx2 passes -mno-avx512f: the AVX2 peak).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${TMPDIR:-/tmp}/tornado-mla-roofline"
gcc -O3 -march=native ${ROOFLINE_CFLAGS:-} -fopenmp "$here/roofline.c" -o "$out"
OMP_NUM_THREADS="${1:-$(nproc)}" OMP_PROC_BIND=spread "$out"
