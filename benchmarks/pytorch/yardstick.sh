#!/usr/bin/env bash
# PyTorch with an optimised BLAS, for this process only: Debian's OpenBLAS (OpenMP build) and jemalloc are
# downloaded once (apt-get download) and unpacked under target/yardstick (dpkg -x), then selected with
# LD_LIBRARY_PATH and LD_PRELOAD for the one python3 process this script starts. Nothing is installed
# system-wide except Debian's python3-torch if it is missing. Debian's torch calls the BLAS through
# libblas.so.3, so the OpenBLAS copy of libblas.so.3 takes its place. The script it runs prints the BLAS
# library the process mapped and a 2048³ sgemm rate as the proof.
#
# Usage: benchmarks/pytorch/yardstick.sh [absorb_decode.py options]   (see absorb_decode.py)
set -euo pipefail
here="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)"
root="$(cd "$here/../.." && pwd)"
dir="$root/target/yardstick"
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  echo "yardstick: installing Debian's python3-torch (PyTorch 1.13) ..." >&2
  if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-torch >/dev/null
fi
if [ ! -f "$dir/unpacked" ]; then
  rm -rf "$dir" && mkdir -p "$dir/debs" "$dir/root"
  (cd "$dir/debs" && apt-get download -qq libopenblas0-openmp libjemalloc2)
  for d in "$dir"/debs/*.deb; do dpkg -x "$d" "$dir/root"; done
  touch "$dir/unpacked"
fi
blas="$dir/root/usr/lib/x86_64-linux-gnu/openblas-openmp"
jemalloc="$dir/root/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
[ -f "$blas/libblas.so.3" ] && [ -f "$jemalloc" ] || { echo "yardstick: $blas/libblas.so.3 or $jemalloc missing" >&2; exit 2; }
# OpenBLAS 0.3.21 predates some AVX-512 CPUs (it takes a Zen 5 for a Haswell), and some machines pin
# OPENBLAS_CORETYPE=Haswell in the environment: where the CPU has AVX-512, use OpenBLAS's AVX-512 kernels
# (a 2048³ sgemm ran 1.7× faster with them on a 2-core Zen 5), so the yardstick is the fastest this BLAS is
# here. YARDSTICK_CORETYPE=NAME chooses another (e.g. HASWELL).
if [ -n "${YARDSTICK_CORETYPE:-}" ]; then
  export OPENBLAS_CORETYPE="$YARDSTICK_CORETYPE"
elif grep -q -w avx512f /proc/cpuinfo; then
  export OPENBLAS_CORETYPE=SKYLAKEX
fi
LD_LIBRARY_PATH="$blas${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" LD_PRELOAD="$jemalloc" exec /usr/bin/python3 "$here/absorb_decode.py" "$@"
