#!/usr/bin/env bash
# tools/gpu/gate/build-standin.sh DIR — builds the driver stand-in (standin_cuda.c) as DIR/libcuda.so.1 and
# DIR/libnvrtc.so.13 with gcc and the CUDA toolkit's cuda.h, and the cuBLAS stand-in (standin_cublas.c) as
# DIR/libcublas.so.13 and DIR/libcublasLt.so.13. For the compile gate and CI only: never shipped.
set -euo pipefail
DIR="${1:?usage: $0 DIR}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CUDA_INCLUDE="$(dirname "$(dirname "$(readlink -f "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")")")/include"
[ -f "$CUDA_INCLUDE/cuda.h" ] || CUDA_INCLUDE=/usr/local/cuda/include
[ -f "$CUDA_INCLUDE/cuda.h" ] || { echo "build-standin: error: no cuda.h (the CUDA toolkit's include folder) found" >&2; exit 2; }
command -v gcc >/dev/null || { echo "build-standin: error: needs gcc" >&2; exit 2; }
mkdir -p "$DIR"
for lib in libcuda.so.1 libnvrtc.so.13; do
  gcc -O1 -fPIC -shared -Wall -Wextra -Werror -I"$CUDA_INCLUDE" -Wl,-soname,$lib -o "$DIR/$lib" "$HERE/standin_cuda.c"
done
for lib in libcublas.so.13 libcublasLt.so.13; do
  gcc -O1 -fPIC -shared -Wall -Wextra -Werror -Wl,-soname,$lib -o "$DIR/$lib" "$HERE/standin_cublas.c"
done
