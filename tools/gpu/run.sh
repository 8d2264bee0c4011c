#!/usr/bin/env bash
# run.sh OUT [--quick] — the GPU kit (made by tools/gpu/pack.sh): runs TornadoMLA on this machine's TornadoVM
# device and writes into OUT (a kit with several SDKs — the nvidia kit holds TornadoVM's CUDA and PTX routes —
# runs the device steps once per route, CUDA first, into OUT/cuda/ and OUT/ptx/, each with its own summary.md,
# and OUT/summary.md sets the routes and PyTorch side by side):
#
#   devices.txt            mla devices (the TornadoVM devices)
#   check.txt              mla check --backend tornado: PASS/FAIL per path x cache dtype x kernel set
#   check-sparse.txt       mla check --backend tornado --sparse: the same for DeepSeek-V3.2's sparse attention
#                          (indexer, top-k, sparse gathers; absorbed and tiled, bf16 and fp8; --quick: tiled, bf16,
#                          plain kernels only)
#   check-cublas.txt       CUDA route only: mla check --backend tornado --quick --prefill 70 --path absorbed: a prefill
#                          of 140 token rows, whose weight products run as cuBLAS SGEMMs (CublasProjections), f32 weights
#   layer.csv              mla bench --layer-only: the whole layer's decode step, bytes copied in and out
#   torch.csv, torch-peaks.csv   torch_absorb.py, where python3 has PyTorch with CUDA: DeepSeek's absorb einsums
#   bench-tc.csv, bench-notc.csv     CUDA route only: mla bench on the absorbed path (bf16 cache, H128 T4096, B128 and
#                          B1) with the tensor-core tasks, then with -Dtornadomla.tensorCores=false (the KernelContext kernels)
#   bench.csv, bench-transfers.csv   mla bench --grid flashmla: the attention core over FlashMLA's grid
#   nvidia-smi.txt, nvidia-smi.csv   nvidia-smi, where present
#   run-log.tsv, run.log   each step: exit code, seconds, command; everything printed
#   summary.md, bench-chart.png   mla gpu-report OUT
#
# Needs no Java, Maven or network: the kit carries its runtime and the TornadoVM SDK and unpacks them into
# a temporary folder (tar with xz, else python3's tarfile). Every step runs under `timeout`. The full run
# fits in 8 minutes (the grid gets what the other steps leave); --quick runs small shapes (how the kit is
# tested on PoCL). Exit code: 0 all well, 1 a check failed, 3 another step failed (see run-log.tsv).
# Env: KIT_UNPACK=python forces the python3 unpacker; KIT_BUDGET_S overrides the budget (full 480 s, quick 900 s;
# shared by the routes); KIT_STEPS=devices stops each route after `mla devices` (how CI proves a kit's routes start).
set -uo pipefail

KIT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
usage() { echo "usage: $0 OUT [--quick]" >&2; exit 2; }
[ $# -ge 1 ] || usage
OUT="$1"; shift
QUICK=0
for a in "$@"; do
  case "$a" in --quick) QUICK=1 ;; *) echo "run.sh: error: unknown argument '$a' (expected --quick)" >&2; usage ;; esac
done
mkdir -p "$OUT" || { echo "run.sh: error: cannot create $OUT" >&2; exit 2; }
OUT="$(cd "$OUT" && pwd)"
KIT_FILES_OUT=(devices.txt check.txt check-sparse.txt check-cublas.txt layer.csv bench-tc.csv bench-notc.csv torch.csv torch-peaks.csv bench.csv bench-transfers.csv nvidia-smi.txt nvidia-smi.csv run-log.tsv run.log summary.md bench-chart.png)
for d in "$OUT" "$OUT/cuda" "$OUT/ptx" "$OUT/opencl"; do for f in "${KIT_FILES_OUT[@]}"; do rm -f "$d/$f"; done; done
LOG_TSV="$OUT/run-log.tsv"   # where step() logs; a route's steps log into its own folder
T0=$(date +%s)
if [ "$QUICK" = 1 ]; then BUDGET=${KIT_BUDGET_S:-900}; else BUDGET=${KIT_BUDGET_S:-480}; fi
Q=(); [ "$QUICK" = 1 ] && Q=(--quick)

say() { echo "run.sh: $*" | tee -a "$OUT/run.log" >&2; }
elapsed() { echo $(( $(date +%s) - T0 )); }
STATUS=0
fail() { [ "$STATUS" = 0 ] && STATUS=$1; }

# step NAME SECONDS OUTFILE CMD... : runs CMD under timeout with stdout to OUTFILE (or run.log if "-"), stderr
# to run.log; logs "NAME rc seconds command note" to run-log.tsv; returns CMD's exit code (124: timed out)
step() {
  local name="$1" secs="$2" outfile="$3"; shift 3
  local s0 rc note="" err
  s0=$(date +%s)
  say "[$(elapsed) s] $name: $* (timeout ${secs} s)"
  err="$(mktemp "$WORK/err.XXXXXX")"
  if [ "$outfile" = - ]; then
    timeout --kill-after=10 "$secs" "$@" >>"$OUT/run.log" 2>"$err"; rc=$?
  else
    timeout --kill-after=10 "$secs" "$@" >"$outfile" 2>"$err"; rc=$?
  fi
  grep -v -e 'WARNING: Using incubator modules' "$err" >>"$OUT/run.log"
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then note="timed out after ${secs} s"; fi
  if [ "$rc" != 0 ]; then
    # the first error line tells most (TornadoVM ignores a failed cuInit and may then loop: see its first words)
    local first
    first="$(grep -m1 -i -E 'error|exception|fail|cannot|unable' "$err" | cut -c1-300)"
    [ -n "$first" ] && note="${note:+$note; }first error: $first"
    say "$name: exit $rc${note:+ ($note)}"
  fi
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$rc" "$(( $(date +%s) - s0 ))" "$*" "$note" | sed -e "s#$WORK/bin/##g" -e "s#$WORK/#WORK/#g" -e "s#$WORK#WORK#g" -e "s#$KIT/##g" -e "s#$OUT/##g" -e "s#$OUT#OUT#g" >>"$LOG_TSV"
  rm -f "$err"
  return "$rc"
}
skip() { printf '%s\t-\t0\t%s\t%s\n' "$1" "$2" "$3" >>"$LOG_TSV"; say "$1: skipped: $3"; }

WORK="$(mktemp -d "${TMPDIR:-/tmp}/mla-kit.XXXXXX")" || { echo "run.sh: error: cannot make a temporary folder" >&2; exit 3; }
trap 'rm -rf "$WORK"' EXIT
say "kit $KIT ($(tr '\n' ' ' <"$KIT/KIT" 2>/dev/null)), output $OUT, work $WORK, $([ "$QUICK" = 1 ] && echo quick || echo "full, budget ${BUDGET} s")"

# ------------------------------------------------------------------ unpack runtime and SDK
# the command that unpacks ARCHIVE into DEST: tar (with xz or gzip) where it can, else python3's tarfile
unpack_cmd() {
  local archive="$1" dest="$2" mode="" tool=""
  case "$archive" in *.xz|*.txz) mode=J; tool=xz ;; *.tgz|*.gz) mode=z; tool=gzip ;; esac
  if [ "${KIT_UNPACK:-}" != python ] && command -v tar >/dev/null && command -v "$tool" >/dev/null; then
    UNPACK=(tar -x${mode}f "$archive" -C "$dest")
  elif command -v python3 >/dev/null; then
    UNPACK=(python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$archive" "$dest")
  else
    say "error: cannot unpack $archive: neither tar with $tool nor python3 on this machine"; exit 3
  fi
}
SDK_ARCHIVE="$(ls "$KIT"/tornadovm-*.t?z 2>/dev/null | head -1)"
[ -n "$SDK_ARCHIVE" ] && [ -f "$KIT/runtime.tar.xz" ] && [ -f "$KIT/tornado-mla-cli.jar" ] \
  || { say "error: $KIT is not a complete kit (runtime.tar.xz, tornadovm-*.t?z, tornado-mla-cli.jar)"; exit 2; }
unpack_cmd "$KIT/runtime.tar.xz" "$WORK"
step unpack-runtime 120 - "${UNPACK[@]}" || { say "error: cannot unpack the Java runtime"; exit 3; }
unpack_cmd "$SDK_ARCHIVE" "$WORK"
step unpack-sdk 120 - "${UNPACK[@]}" || { say "error: cannot unpack the TornadoVM SDK"; exit 3; }
JAVA="$WORK/runtime/bin/java"
# the routes: one SDK folder each (tornadovm-5.2.0-jdk25-cuda, -ptx, -opencl), CUDA first (the route users keep)
ROUTES=()
for r in cuda ptx opencl; do
  for d in "$WORK"/tornadovm-*-"$r"; do [ -f "$d/tornado-argfile.template" ] && ROUTES+=("$r"); done
done
[ "${#ROUTES[@]}" -gt 0 ] || { say "error: the SDK archive $SDK_ARCHIVE holds no TornadoVM SDK (no tornado-argfile.template)"; exit 3; }
step java-version 60 - "$JAVA" -version || { say "error: the kit's Java runtime does not start on this machine"; exit 3; }

# ------------------------------------------------------------------ memory settings
mem_kb=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo 2>/dev/null || echo 8000000)
if [ "$QUICK" = 1 ]; then XMX=4g; else XMX="$(( mem_kb * 6 / 10 / 1048576 ))g"; fi   # a B=128 T=16384 f32 cache is 4.8 GB
[ "$XMX" = 0g ] && XMX=2g
# TornadoVM counts device memory against tornado.device.memory (default 4GB): the grid's largest f32 cache is
# 4.8 GB, so give it most of the GPU's memory (nvidia-smi's total; 85% of it)
DEVMEM=""
if command -v nvidia-smi >/dev/null; then
  step nvidia-smi.txt 30 "$OUT/nvidia-smi.txt" nvidia-smi
  step nvidia-smi.csv 30 "$OUT/nvidia-smi.csv" nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.memory,power.limit,compute_cap,pci.bus_id --format=csv
  gpu_mib=$(awk -F', *' 'NR == 2 {print $3 + 0}' "$OUT/nvidia-smi.csv" 2>/dev/null)
  [ -n "$gpu_mib" ] && [ "$gpu_mib" -gt 0 ] 2>/dev/null && DEVMEM="$(( gpu_mib * 85 / 100 / 1024 ))GB"
else
  skip nvidia-smi.txt+nvidia-smi.csv nvidia-smi "no nvidia-smi on this machine"
fi
say "routes: ${ROUTES[*]}; java options: -Xmx$XMX${DEVMEM:+, tornado.device.memory=$DEVMEM}, bailout off"
cd "$WORK" || exit 3
mkdir -p "$WORK/bin"
wrapper() {   # wrapper NAME CMD...: a script running CMD with the caller's arguments appended
  { echo '#!/bin/bash'; printf 'exec'; printf ' %q' "${@:2}"; echo ' "$@"'; } >"$WORK/bin/$1"
  chmod +x "$WORK/bin/$1"
}
# `mla-jvm` runs without TornadoVM (the report needs no device)
wrapper mla-jvm "$JAVA" -Djava.awt.headless=true --add-modules jdk.incubator.vector -cp "$KIT/tornado-mla-cli.jar" org.tornadomla.cli.MlaCommand
PATH="$WORK/bin:$PATH"

# NVIDIA routes load the driver's libcuda.so.1: where the loader does not know it, look where container images
# mount the driver (never a CUDA toolkit's stubs/ folder: that one cannot run anything)
if printf '%s\n' "${ROUTES[@]}" | grep -qE '^(ptx|cuda)$' && ! { "$(command -v ldconfig || echo /sbin/ldconfig)" -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; }; then
  for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/local/cuda/compat /usr/lib/wsl/lib; do
    if [ -e "$d/libcuda.so.1" ]; then
      export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; say "libcuda.so.1: $d (added to LD_LIBRARY_PATH)"; break
    fi
  done
fi

# the yardstick first, once for every route: python3 with PyTorch and CUDA, on the same grid as the bench below
if [ "${KIT_STEPS:-all}" = devices ]; then
  skip torch.csv+torch-peaks.csv "python3 torch_absorb.py" "KIT_STEPS=devices"
elif command -v python3 >/dev/null && timeout 60 python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1; then
  if [ "$QUICK" = 1 ]; then TORCH_LIMIT=60; TORCH_S=120; else TORCH_LIMIT=40; TORCH_S=80; fi
  step torch.csv+torch-peaks.csv "$TORCH_S" - python3 "$KIT/torch_absorb.py" --out "$OUT" --time-limit-s "$TORCH_LIMIT" "${Q[@]}" || fail 3
else
  skip torch.csv+torch-peaks.csv "python3 torch_absorb.py" "python3 with PyTorch and CUDA not found here"
fi

# run_route ROUTE ROUTE_OUT ROUTE_END: the device steps of one route on its SDK, ending by ROUTE_END (seconds since start)
run_route() {
  local route="$1" rout="$2" end="$3"
  local SDK; SDK="$(ls -d "$WORK"/tornadovm-*-"$route" | head -1)"
  mkdir -p "$rout"
  LOG_TSV="$rout/run-log.tsv"
  # TornadoVM's argfile for this place (as its install.sh does), without "." on the module path (as ./mla does)
  sed -e "s#\${TORNADOVM_HOME}#$SDK#g" -e 's#--module-path \.:#--module-path #' "$SDK/tornado-argfile.template" >"$SDK/tornado-argfile"
  export TORNADOVM_HOME="$SDK"
  local saved_ld="${LD_LIBRARY_PATH:-}"
  if [ "$route" = cuda ] && [ -f "$SDK/bin/cuda-pip-env.sh" ]; then
    # NVRTC, cuBLAS and the CUDA runtime from the PyTorch wheels' nvidia/*/lib (the SDK's own helper)
    # shellcheck disable=SC1091
    . "$SDK/bin/cuda-pip-env.sh" >>"$OUT/run.log" 2>&1 || true
    say "cuda: LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-} CUDA_PATH=${CUDA_PATH:-}"
  fi
  local JOPTS=(-Djava.awt.headless=true "-Xmx$XMX" "@$SDK/tornado-argfile" "@$KIT/tornado.argfile" -Dtornado.recover.bailout=False)
  [ -n "$DEVMEM" ] && JOPTS+=("-Dtornado.device.memory=$DEVMEM")
  # TornadoVM's modules load native libraries (the driver; on CUDA also cuBLAS): allowed, as ./mla does, so that no
  # restricted-method warning per module fills the logs
  local mods; mods=$(grep -o -- '--add-modules[ =][^ ]*' "$SDK/tornado-argfile" | head -n 1 | sed 's/^--add-modules[ =]//' | tr ',' '\n' | grep '^tornado\.' | paste -sd, - || true)
  [ -n "$mods" ] && JOPTS+=("--enable-native-access=$mods")
  wrapper mla "$JAVA" "${JOPTS[@]}" -cp "$KIT/tornado-mla-cli.jar" org.tornadomla.cli.MlaCommand
  wrapper mla-notc "$JAVA" "${JOPTS[@]}" -Dtornadomla.tensorCores=false -cp "$KIT/tornado-mla-cli.jar" org.tornadomla.cli.MlaCommand
  say "== route $route (SDK $(basename "$SDK")), until ${end} s"
  # Budgets: each step has its own limit and never more than what is left of this route's share (keeping 40 s
  # for the grid's minimum and the report); the grid gets the rest. --quick (PoCL, small shapes) is generous.
  cap() { local left=$(( end - $(elapsed) - 40 )); [ "$left" -lt 10 ] && left=10; [ "$1" -lt "$left" ] && echo "$1" || echo "$left"; }
  local CHECK_S SPARSE_S LAYER_LIMIT LAYER_S share=$(( end - $(elapsed) )) CUBLAS_S=$(( (end - $(elapsed)) * 12 / 100 ))
  local SPARSE_ARGS=(--path absorbed,tiled --cache-dtype bf16,fp8)
  if [ "$QUICK" = 1 ]; then
    # on PoCL a sparse line costs about 8 dense ones (its graphs compile slowly there): the plain kernels (two lines, contiguous and paged) prove the step
    CHECK_S=300; SPARSE_S=300; LAYER_LIMIT=60; LAYER_S=180; SPARSE_ARGS=(--path tiled --cache-dtype bf16 --plain-kernels)
  else
    CHECK_S=$(( share * 30 / 100 )); SPARSE_S=$(( share * 12 / 100 )); LAYER_LIMIT=$(( share * 10 / 100 )); LAYER_S=$(( share * 22 / 100 ))
  fi
  # the tensor-core pair (CUDA route): the compute-bound shape of the targets first, then a memory-bound one; the CSV
  # is written after each shape, so a run stopped by its timeout keeps what it timed
  local TC_LIMIT=$(( share * 4 / 100 )) TC_S=$(( share * 15 / 100 ))
  local TC_ARGS=(bench --backend tornado --path absorbed --dtype bf16 --heads 128 --context 4096 --batch 128,1 --check-limit 200 --budget-ms 300)
  local DEVICE_OK=0 rc
  # the first device step under a short timeout: a broken driver shows here, not as a hang in every step
  if step devices.txt 90 "$rout/devices.txt" mla devices && grep -qE '^[0-9]+:[0-9]+ ' "$rout/devices.txt"; then
    DEVICE_OK=1
    say "$route devices: $(grep -E '^[0-9]+:[0-9]+ ' "$rout/devices.txt" | tr '\n' ';')"
  else
    fail 3
    say "error: TornadoVM ($route) found no device; its device steps are skipped. $(grep -m1 '^tornado none' "$rout/devices.txt" 2>/dev/null | cut -c1-400)"
    printf 'devices\t-\t0\tmla devices\t%s\n' "$(grep -m1 '^tornado none' "$rout/devices.txt" 2>/dev/null | cut -c1-400)" >>"$LOG_TSV"
  fi
  if [ "${KIT_STEPS:-all}" = devices ]; then
    :
  elif [ "$DEVICE_OK" = 1 ]; then
    step check.txt "$(cap $CHECK_S)" "$rout/check.txt" mla check --backend tornado "${Q[@]}"; rc=$?
    [ "$rc" = 1 ] && fail 1; [ "$rc" != 0 ] && [ "$rc" != 1 ] && fail 3
    say "$route check: $(grep -cE '^PASS ' "$rout/check.txt") PASS, $(grep -cE '^FAIL ' "$rout/check.txt") FAIL"
    step check-sparse.txt "$(cap $SPARSE_S)" "$rout/check-sparse.txt" mla check --backend tornado --sparse "${Q[@]}" "${SPARSE_ARGS[@]}"; rc=$?
    [ "$rc" = 1 ] && fail 1; [ "$rc" != 0 ] && [ "$rc" != 1 ] && fail 3
    say "$route sparse check: $(grep -cE '^PASS ' "$rout/check-sparse.txt") PASS, $(grep -cE '^FAIL ' "$rout/check-sparse.txt") FAIL"
    if [ "$route" = cuda ]; then
      # 2 x 70 prefill rows: past the KernelContext projections' 128, so the weight products are cuBLAS SGEMMs
      step check-cublas.txt "$(cap $CUBLAS_S)" "$rout/check-cublas.txt" mla check --backend tornado --quick --prefill 70 --path absorbed \
        --cache-dtype bf16 --weights-dtype f32; rc=$?
      [ "$rc" = 1 ] && fail 1; [ "$rc" != 0 ] && [ "$rc" != 1 ] && fail 3
      say "$route cuBLAS check: $(grep -cE '^PASS ' "$rout/check-cublas.txt") PASS, $(grep -cE '^FAIL ' "$rout/check-cublas.txt") FAIL"
    fi
    step layer.csv "$(cap $LAYER_S)" "$rout/layer.stdout" mla bench --layer-only "${Q[@]}" --backend tornado --layer-csv "$rout/layer.csv" \
      --time-limit-s "$LAYER_LIMIT" || fail 3
    cat "$rout/layer.stdout" >>"$OUT/run.log"; rm -f "$rout/layer.stdout"
    if [ "$route" = cuda ]; then
      step bench-tc.csv "$(cap $TC_S)" "$rout/bench-tc.stdout" mla "${TC_ARGS[@]}" --csv "$rout/bench-tc.csv" --time-limit-s "$TC_LIMIT" || fail 3
      step bench-notc.csv "$(cap $TC_S)" "$rout/bench-notc.stdout" mla-notc "${TC_ARGS[@]}" --csv "$rout/bench-notc.csv" --time-limit-s "$TC_LIMIT" || fail 3
      cat "$rout/bench-tc.stdout" "$rout/bench-notc.stdout" >>"$OUT/run.log" 2>/dev/null; rm -f "$rout/bench-tc.stdout" "$rout/bench-notc.stdout"
    fi
    # the grid: what is left of the share, less 60 s for its last shape and the report; the timeout is the hard stop
    local GRID_LIMIT GRID_S
    if [ "$QUICK" = 1 ]; then GRID_LIMIT=150; GRID_S=270; else GRID_LIMIT=$(( end - $(elapsed) - 60 )); GRID_S=$(( end - $(elapsed) - 25 )); fi
    [ "$GRID_LIMIT" -lt 20 ] && GRID_LIMIT=20
    [ "$GRID_S" -lt 40 ] && GRID_S=40
    step bench.csv+bench-transfers.csv "$GRID_S" "$rout/bench.stdout" mla bench --grid flashmla "${Q[@]}" --backend tornado \
      --csv "$rout/bench.csv" --transfers-csv "$rout/bench-transfers.csv" --time-limit-s "$GRID_LIMIT" || fail 3
    cat "$rout/bench.stdout" >>"$OUT/run.log"; rm -f "$rout/bench.stdout"
  else
    for s in check.txt check-sparse.txt layer.csv bench.csv+bench-transfers.csv; do skip "$s" "mla" "no TornadoVM device ($route)"; done
  fi
  # a route's folder is a complete kit output on its own: the shared files beside its own
  if [ "$rout" != "$OUT" ]; then
    for f in torch.csv torch-peaks.csv nvidia-smi.txt nvidia-smi.csv; do [ -f "$OUT/$f" ] && cp "$OUT/$f" "$rout/"; done
  fi
  LD_LIBRARY_PATH="$saved_ld"; [ -z "$saved_ld" ] && unset LD_LIBRARY_PATH
  LOG_TSV="$OUT/run-log.tsv"
}

n=${#ROUTES[@]}
for i in "${!ROUTES[@]}"; do
  r="${ROUTES[$i]}"
  # each route gets an equal share of what is left, keeping 30 s for the report
  end=$(( $(elapsed) + (BUDGET - $(elapsed) - 30) / (n - i) ))
  if [ "$n" = 1 ]; then run_route "$r" "$OUT" "$end"; else run_route "$r" "$OUT/$r" "$end"; fi
done

step summary.md 60 - mla-jvm gpu-report "$OUT" || fail 3
chmod -R a+r "$OUT" 2>/dev/null   # the Java side writes through private temporary files
say "done in $(elapsed) s, exit $STATUS: $OUT/summary.md"
exit "$STATUS"
