#!/usr/bin/env bash
# tools/gpu/ci-kit.sh — proves the GPU kit here, on PoCL: packs the OpenCL kit into target/gpu-kit-opencl, runs
# its run.sh --quick with an empty environment (no JDK, no Maven on the path; python3's tarfile unpacks), and
# checks what it wrote: devices.txt with a device, check.txt with at least 12 PASS lines and no FAIL, check-sparse.txt
# (the sparse attention) with a PASS line and no FAIL,
# bench.csv with its header and rows, layer.csv, summary.md. Then the nvidia kit (CUDA and PTX SDKs): packed
# within the 60 MiB a GPU run can carry, and run.sh with KIT_STEPS=devices brings both routes up on the compile
# gate's driver stand-in (tools/gpu/gate: an H200 that runs nothing), each listing its device in its own folder.
# Needs PoCL (pocl-opencl-icd, ocl-icd-libopencl1), gcc and the CUDA toolkit's cuda.h for the stand-in, and
# ../shared/tornadovm beside the repository (or TORNADOVM_SDKS). Prints how long each part took.
set -euo pipefail
ROOT="$(git -C "$(dirname "${BASH_SOURCE[0]}")" rev-parse --show-toplevel)"
cd "$ROOT"
KIT=target/gpu-kit-opencl
OUT=target/gpu-kit-out

t0=$(date +%s)
tools/gpu/pack.sh "$KIT" --backend opencl
t1=$(date +%s)
echo "ci-kit: packed in $((t1 - t0)) s"

rm -rf "$OUT"
rc=0
# python3's tarfile is what unpacks where the GPU machine has no xz: use it here too when there is a python3
unpacker=tar; [ -x /usr/bin/python3 ] && unpacker=python
env -i PATH=/usr/bin:/bin KIT_UNPACK=$unpacker timeout 900 "$KIT/run.sh" "$OUT" --quick || rc=$?
t2=$(date +%s)
echo "ci-kit: run.sh --quick took $((t2 - t1)) s, exit $rc"

fails=0
need() { if ! eval "$2"; then echo "ci-kit: FAILED: $1" >&2; fails=$((fails + 1)); else echo "ci-kit: ok: $1"; fi; }
# stop_if_failed WHICH LOG: after a kit's checks, stop with the end of its log when any failed
stop_if_failed() {
  [ "$fails" = 0 ] && return 0
  echo "ci-kit: $fails check(s) failed; the $1 kit's log:" >&2
  tail -40 "$2" >&2 || true
  exit 1
}
need "run.sh exit code 0" '[ "$rc" = 0 ]'
need "devices.txt lists a TornadoVM device" 'grep -qE "^[0-9]+:[0-9]+ " "$OUT/devices.txt"'
pass=$(grep -c '^PASS ' "$OUT/check.txt" 2>/dev/null || true)
need "check.txt has at least 12 PASS lines (found ${pass:-0})" '[ "${pass:-0}" -ge 12 ]'
need "check.txt has no FAIL line" '! grep -q "^FAIL " "$OUT/check.txt"'
need "check.txt has both kernel sets" 'grep -q " kernel-context " "$OUT/check.txt" && grep -q " plain " "$OUT/check.txt"'
spass=$(grep -c '^PASS ' "$OUT/check-sparse.txt" 2>/dev/null || true)
need "check-sparse.txt (DeepSeek-V3.2's sparse attention) has a PASS line (found ${spass:-0}) and no FAIL" \
  '[ "${spass:-0}" -ge 1 ] && ! grep -q "^FAIL " "$OUT/check-sparse.txt"'
need "bench.csv has the bench header and rows" \
  '[ "$(head -1 "$OUT/bench.csv")" = "backend,path,dtype,batch,heads,context,ms_per_step,gb_per_s,gflop_per_s,ms_median,device,date,warmed_up" ] && [ "$(wc -l <"$OUT/bench.csv")" -gt 1 ]'
need "bench-transfers.csv counts bytes copied in" 'awk -F, "NR > 1 && \$8 > 0 {n++} END {exit !(n > 0)}" "$OUT/bench-transfers.csv"'
need "layer.csv has rows" '[ "$(wc -l <"$OUT/layer.csv")" -gt 1 ]'
need "summary.md exists with the check and bench sections" 'grep -q "^## Correctness" "$OUT/summary.md" && grep -q "^## Attention core" "$OUT/summary.md"'
stop_if_failed OpenCL "$OUT/run.log"
echo "ci-kit: OpenCL kit passed (pack $((t1 - t0)) s, quick run $((t2 - t1)) s)"

# the nvidia kit: its size, and both routes starting on the driver stand-in
NKIT=target/gpu-kit-nvidia
NOUT=target/gpu-kit-nvidia-out
tools/gpu/pack.sh "$NKIT" --backend nvidia
t3=$(date +%s)
tools/gpu/gate/build-standin.sh target/compile-gate/standin
rm -rf "$NOUT"
nrc=0
env -i PATH=/usr/bin:/bin KIT_STEPS=devices LD_LIBRARY_PATH="$ROOT/target/compile-gate/standin" timeout 600 "$NKIT/run.sh" "$NOUT" || nrc=$?
t4=$(date +%s)
kit_bytes=$(du -cb "$NKIT"/* | tail -1 | cut -f1)
need "nvidia kit within 60 MiB (found $((kit_bytes / 1048576)) MiB)" '[ "$kit_bytes" -le $((60 * 1048576)) ]'
need "nvidia kit run.sh (KIT_STEPS=devices) exit code 0 (found $nrc)" '[ "$nrc" = 0 ]'
need "the CUDA route lists its device" 'grep -qE "^[0-9]+:[0-9]+ +CUDA" "$NOUT/cuda/devices.txt"'
need "the PTX route lists its device" 'grep -qE "^[0-9]+:[0-9]+ +PTX" "$NOUT/ptx/devices.txt"'
need "summary.md sets the routes side by side" 'grep -q "^## Routes" "$NOUT/summary.md" && grep -q "cuda/summary.md" "$NOUT/summary.md"'
stop_if_failed nvidia "$NOUT/run.log"
echo "ci-kit: passed (OpenCL kit: pack $((t1 - t0)) s, quick run $((t2 - t1)) s; nvidia kit: pack $((t3 - t2)) s, both routes up in $((t4 - t3)) s)"
