#!/usr/bin/env bash
# Builds and runs roofline.c: this machine's FMA peak and read bandwidth as C measures them, to cross-check
# ./mla bench --roofline. Usage: benchmarks/roofline/run.sh [threads] (default: every core).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${TMPDIR:-/tmp}/tornado-mla-roofline"
gcc -O3 -march=native -fopenmp "$here/roofline.c" -o "$out"
OMP_NUM_THREADS="${1:-$(nproc)}" OMP_PROC_BIND=spread "$out"
