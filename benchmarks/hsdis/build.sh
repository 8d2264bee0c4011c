#!/usr/bin/env bash
# Builds target/hsdis/hsdis-amd64.so, the disassembler HotSpot needs to print the machine code the JIT made of a
# kernel (-XX:+PrintAssembly): hsdis.c here, linked statically with Debian's Capstone (libcapstone-dev, fetched
# with apt-get download and unpacked under target/hsdis, nothing installed). Then, for example:
#
#   MLA_JAVA_OPTS="-XX:+UnlockDiagnosticVMOptions -XX:CompileCommand=print,org.tornadomla.fast.Gemm::v6x4j" \
#     LD_LIBRARY_PATH=target/hsdis ./mla bench --backend java-fast --heads 128 --batch 1 --context 4096 \
#     --dtype f32 --path absorbed > v6x4j.txt
#
# prints every compilation of that method; the last "Compiled method (c2)" block is the one that runs. Debian 12's
# Capstone 4 cannot decode some AVX-512 instructions (EVEX-encoded broadcasts show as ".byte 0x62" and junk).
set -euo pipefail
root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)"
dir="$root/target/hsdis"
if [ ! -f "$dir/root/usr/lib/x86_64-linux-gnu/libcapstone.a" ]; then
  mkdir -p "$dir/debs"
  (cd "$dir/debs" && apt-get download -qq libcapstone-dev) || { echo "hsdis: apt-get download libcapstone-dev failed" >&2; exit 1; }
  for d in "$dir"/debs/*.deb; do dpkg -x "$d" "$dir/root"; done
fi
gcc -shared -fPIC -O2 -I"$dir/root/usr/include" -o "$dir/hsdis-amd64.so" "$root/benchmarks/hsdis/hsdis.c" \
  "$dir/root/usr/lib/x86_64-linux-gnu/libcapstone.a"
echo "built $dir/hsdis-amd64.so (use LD_LIBRARY_PATH=$dir)"
