#!/usr/bin/env bash
# run.sh OUT [--quick] — the GPU kit (made by tools/gpu/pack.sh): runs TornadoMLA on this machine's TornadoVM
# device and writes into OUT:
#
#   devices.txt            mla devices (the TornadoVM devices)
#   check.txt              mla check --backend tornado: PASS/FAIL per path x cache dtype x kernel set
#   layer.csv              mla bench --layer-only: the whole layer's decode step, bytes copied in and out
#   torch.csv, torch-peaks.csv   torch_absorb.py, where python3 has PyTorch with CUDA: DeepSeek's absorb einsums
#   bench.csv, bench-transfers.csv   mla bench --grid flashmla: the attention core over FlashMLA's grid
#   nvidia-smi.txt, nvidia-smi.csv   nvidia-smi, where present
#   run-log.tsv, run.log   each step: exit code, seconds, command; everything printed
#   summary.md, bench-chart.png   mla gpu-report OUT
#
# Needs no Java, Maven or network: the kit carries its runtime and the TornadoVM SDK and unpacks them into
# a temporary folder (tar with xz, else python3's tarfile). Every step runs under `timeout`. The full run
# fits in 8 minutes (the grid gets what the other steps leave); --quick runs small shapes (how the kit is
# tested on PoCL). Exit code: 0 all well, 1 a check failed, 3 another step failed (see run-log.tsv).
# Env: KIT_UNPACK=python forces the python3 unpacker; KIT_BUDGET_S overrides the budget (full 480 s, quick 900 s).
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
rm -f "$OUT"/{devices.txt,check.txt,layer.csv,torch.csv,torch-peaks.csv,bench.csv,bench-transfers.csv,nvidia-smi.txt,nvidia-smi.csv,run-log.tsv,run.log,summary.md,bench-chart.png}
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
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$rc" "$(( $(date +%s) - s0 ))" "$*" "$note" | sed -e "s#$WORK/bin/##g" -e "s#$WORK/#WORK/#g" -e "s#$WORK#WORK#g" -e "s#$KIT/##g" -e "s#$OUT/##g" -e "s#$OUT#OUT#g" >>"$OUT/run-log.tsv"
  rm -f "$err"
  return "$rc"
}
skip() { printf '%s\t-\t0\t%s\t%s\n' "$1" "$2" "$3" >>"$OUT/run-log.tsv"; say "$1: skipped: $3"; }

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
SDK="$(ls -d "$WORK"/tornadovm-*/ 2>/dev/null | head -1)"; SDK="${SDK%/}"
[ -f "$SDK/tornado-argfile.template" ] || { say "error: the SDK in $SDK_ARCHIVE has no tornado-argfile.template"; exit 3; }
# TornadoVM's argfile for this place (as its install.sh does), without "." on the module path (as ./mla does)
sed -e "s#\${TORNADOVM_HOME}#$SDK#g" -e 's#--module-path \.:#--module-path #' "$SDK/tornado-argfile.template" >"$SDK/tornado-argfile"
export TORNADOVM_HOME="$SDK"
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
JOPTS=(-Djava.awt.headless=true "-Xmx$XMX" "@$SDK/tornado-argfile" "@$KIT/tornado.argfile" -Dtornado.recover.bailout=False)
[ -n "$DEVMEM" ] && JOPTS+=("-Dtornado.device.memory=$DEVMEM")
say "java options: -Xmx$XMX${DEVMEM:+, tornado.device.memory=$DEVMEM}, bailout off"
cd "$WORK" || exit 3
# `mla` on TornadoVM and `mla-jvm` without it (the report needs no device), as commands `timeout` can run
mkdir -p "$WORK/bin"
wrapper() {   # wrapper NAME CMD...: a script running CMD with the caller's arguments appended
  { echo '#!/bin/bash'; printf 'exec'; printf ' %q' "${@:2}"; echo ' "$@"'; } >"$WORK/bin/$1"
}
wrapper mla "$JAVA" "${JOPTS[@]}" -cp "$KIT/tornado-mla-cli.jar" org.tornadomla.cli.MlaCommand
wrapper mla-jvm "$JAVA" -Djava.awt.headless=true --add-modules jdk.incubator.vector -cp "$KIT/tornado-mla-cli.jar" org.tornadomla.cli.MlaCommand
chmod +x "$WORK/bin/mla" "$WORK/bin/mla-jvm"
PATH="$WORK/bin:$PATH"

# ------------------------------------------------------------------ the device steps
# the PTX driver loads the NVIDIA driver's libcuda.so.1: where the loader does not know it, look where
# container images mount the driver (never a CUDA toolkit's stubs/ folder: that one cannot run anything)
if grep -q '^backend=ptx' "$KIT/KIT" 2>/dev/null && ! { "$(command -v ldconfig || echo /sbin/ldconfig)" -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; }; then
  for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/local/cuda/compat /usr/lib/wsl/lib; do
    if [ -e "$d/libcuda.so.1" ]; then
      export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; say "libcuda.so.1: $d (added to LD_LIBRARY_PATH)"; break
    fi
  done
fi
DEVICE_OK=0
# the first device step under a short timeout: a broken driver shows here, not as a hang in every step
if step devices.txt 90 "$OUT/devices.txt" mla devices && grep -qE '^[0-9]+:[0-9]+ ' "$OUT/devices.txt"; then
  DEVICE_OK=1
  say "devices: $(grep -E '^[0-9]+:[0-9]+ ' "$OUT/devices.txt" | tr '\n' ';')"
else
  fail 3
  say "error: TornadoVM found no device; the device steps are skipped. $(grep -m1 '^tornado none' "$OUT/devices.txt" 2>/dev/null | cut -c1-400)"
  printf 'devices\t-\t0\tmla devices\t%s\n' "$(grep -m1 '^tornado none' "$OUT/devices.txt" 2>/dev/null | cut -c1-400)" >>"$OUT/run-log.tsv"
fi

# Budgets: a full run must end within BUDGET seconds (8 minutes on an H200). Each step has its own limit and
# never more than what is left (keeping 40 s for the grid's minimum and the report); the grid gets the rest.
# --quick (PoCL, small shapes) has generous limits instead.
cap() { local left=$(( BUDGET - $(elapsed) - 40 )); [ "$left" -lt 10 ] && left=10; [ "$1" -lt "$left" ] && echo "$1" || echo "$left"; }
if [ "$QUICK" = 1 ]; then
  CHECK_S=300; LAYER_LIMIT=60; LAYER_S=180; TORCH_LIMIT=60; TORCH_S=120
else
  CHECK_S=180; LAYER_LIMIT=45; LAYER_S=110; TORCH_LIMIT=45; TORCH_S=90
fi

if [ "$DEVICE_OK" = 1 ]; then
  step check.txt "$(cap $CHECK_S)" "$OUT/check.txt" mla check --backend tornado "${Q[@]}"; rc=$?
  [ "$rc" = 1 ] && fail 1; [ "$rc" != 0 ] && [ "$rc" != 1 ] && fail 3
  say "check: $(grep -cE '^PASS ' "$OUT/check.txt") PASS, $(grep -cE '^FAIL ' "$OUT/check.txt") FAIL"

  step layer.csv "$(cap $LAYER_S)" "$OUT/layer.stdout" mla bench --layer-only "${Q[@]}" --backend tornado --layer-csv "$OUT/layer.csv" \
    --time-limit-s "$LAYER_LIMIT" || fail 3
  cat "$OUT/layer.stdout" >>"$OUT/run.log"; rm -f "$OUT/layer.stdout"
else
  for s in check.txt layer.csv; do skip "$s" "mla" "no TornadoVM device"; done
fi

# the yardstick: python3 with PyTorch and CUDA, on the same grid as the bench below
if command -v python3 >/dev/null && timeout 60 python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1; then
  step torch.csv+torch-peaks.csv "$(cap $TORCH_S)" - python3 "$KIT/torch_absorb.py" --out "$OUT" --time-limit-s "$TORCH_LIMIT" "${Q[@]}" || fail 3
else
  skip torch.csv+torch-peaks.csv "python3 torch_absorb.py" "python3 with PyTorch and CUDA not found here"
fi

if [ "$DEVICE_OK" = 1 ]; then
  # the grid: what is left, less 60 s for its last shape and the report; the timeout is the hard stop
  if [ "$QUICK" = 1 ]; then GRID_LIMIT=150; GRID_S=270; else GRID_LIMIT=$(( BUDGET - $(elapsed) - 60 )); GRID_S=$(( BUDGET - $(elapsed) - 25 )); fi
  [ "$GRID_LIMIT" -lt 20 ] && GRID_LIMIT=20
  [ "$GRID_S" -lt 40 ] && GRID_S=40
  step bench.csv+bench-transfers.csv "$GRID_S" "$OUT/bench.stdout" mla bench --grid flashmla "${Q[@]}" --backend tornado \
    --csv "$OUT/bench.csv" --transfers-csv "$OUT/bench-transfers.csv" --time-limit-s "$GRID_LIMIT" || fail 3
  cat "$OUT/bench.stdout" >>"$OUT/run.log"; rm -f "$OUT/bench.stdout"
else
  skip bench.csv+bench-transfers.csv "mla bench" "no TornadoVM device"
fi

step summary.md 60 - mla-jvm gpu-report "$OUT" || fail 3
chmod a+r "$OUT"/* 2>/dev/null   # the Java side writes through private temporary files
say "done in $(elapsed) s, exit $STATUS: $OUT/summary.md"
exit "$STATUS"
