#!/usr/bin/env bash
# java-fast against PyTorch with an optimised BLAS, side by side in one run on this machine: the FMA peak and
# read bandwidth (Java's and C's), then for each round java-fast (./mla bench) and PyTorch
# (pytorch/yardstick.sh: OpenBLAS and jemalloc for that process only) on the same shapes and thread count,
# alternately; per round and backend the mean ms of the timed runs after warm-up (the same statistic on both
# sides), then the best round per backend and shape, and the ratio PyTorch / java-fast (> 1: java-fast is
# faster). Results: target/vs-torch/{java-N.csv,torch-N.csv,summary.md}.
#
# Usage: benchmarks/vs-torch.sh [--rounds N] [--shapes B:H:T,...] [--budget-ms MS] [--with-bf16]
#   defaults: 3 rounds; shapes 1:128:4096, 8:128:4096, 1:16:16384; 2000 ms timed per shape and backend.
#   --with-bf16: also, each round, java-fast absorbed with kv_b_proj held as bf16 (--weights-dtype bf16) and
#   PyTorch with every tensor in bf16 (oneDNN): a second table, as context (neither is the f32 computation).
set -euo pipefail
root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
rounds=3; shapes="1:128:4096,8:128:4096,1:16:16384"; budget=2000; bf16=0
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --shapes) shapes="$2"; shift 2 ;;
    --budget-ms) budget="$2"; shift 2 ;;
    --with-bf16) bf16=1; shift ;;
    *) echo "usage: $0 [--rounds N] [--shapes B:H:T,...] [--budget-ms MS] [--with-bf16]" >&2; exit 2 ;;
  esac
done
out="$root/target/vs-torch"
rm -rf "$out" && mkdir -p "$out"
threads=$(nproc)
cd "$root"
echo "== machine: $(lscpu | sed -n 's/^Model name: *//p'), $threads threads; $(date -u +%FT%TZ)" | tee "$out/log.txt"
echo "== ceilings" | tee -a "$out/log.txt"
benchmarks/roofline/run.sh "$threads" | tee -a "$out/log.txt"
./mla bench --roofline --backends java-fast --heads 16 --context 64 --batch 1 --path tiled --dtype f32 --budget-ms 50 2>&1 \
  | grep '^limits:' | sed 's/^/java /' | tee -a "$out/log.txt"
for i in $(seq 1 "$rounds"); do
  echo "== round $i/$rounds: java-fast" | tee -a "$out/log.txt"
  for s in ${shapes//,/ }; do
    IFS=: read -r b h t <<<"$s"
    ./mla bench --backends java-fast --batch "$b" --heads "$h" --context "$t" --dtype f32 --path absorbed,tiled \
      --budget-ms "$budget" --csv "$out/java-$i-$b-$h-$t.csv" 2>&1 | grep -E '^java-fast' | tee -a "$out/log.txt"
    if [ "$bf16" = 1 ]; then
      ./mla bench --backends java-fast --batch "$b" --heads "$h" --context "$t" --dtype f32 --path absorbed --weights-dtype bf16 \
        --budget-ms "$budget" --csv "$out/java-w-bf16-$i-$b-$h-$t.csv" 2>&1 | grep -E '^java-fast' | tee -a "$out/log.txt"
    fi
  done
  echo "== round $i/$rounds: PyTorch" | tee -a "$out/log.txt"
  benchmarks/pytorch/yardstick.sh --shapes "$shapes" --threads "$threads" --seconds "$((budget / 1000 + 1))" \
    --csv "$out/torch-$i.csv" 2>&1 | grep -v '^W: ' | tee -a "$out/log.txt"
  if [ "$bf16" = 1 ]; then
    benchmarks/pytorch/yardstick.sh --shapes "$shapes" --threads "$threads" --seconds "$((budget / 1000 + 1))" --dtype bf16 \
      --csv "$out/torch-bf16-$i.csv" 2>&1 | grep -v '^W: ' | grep -v '^pytorch ' | tee -a "$out/log.txt"
  fi
done
/usr/bin/python3 - "$out" <<'PY'
import csv, glob, os, sys
out = sys.argv[1]
best = {}
for f in glob.glob(os.path.join(out, "*.csv")):
    for r in csv.DictReader(open(f)):
        key = (r["backend"], r["path"], int(r["batch"]), int(r["heads"]), int(r["context"]))
        best[key] = min(best.get(key, 1e18), float(r["ms_per_step"]))
shapes = sorted({k[2:] for k in best})
lines = ["| shape (f32) | PyTorch+OpenBLAS ms | java-fast absorbed ms | ratio | java-fast tiled ms | ratio |", "|---|---|---|---|---|---|"]
for s in shapes:
    t = best.get(("torch", "absorbed") + s)
    a = best.get(("java-fast", "absorbed") + s)
    ti = best.get(("java-fast", "tiled") + s)
    fmt = lambda v: "-" if v is None else f"{v:.3f}"
    ratio = lambda j: "-" if (j is None or t is None) else f"{t / j:.2f}×"
    lines.append(f"| B{s[0]} H{s[1]} T{s[2]} | {fmt(t)} | {fmt(a)} | {ratio(a)} | {fmt(ti)} | {ratio(ti)} |")
if any(k[0] == "torch-bf16" or k[0].endswith("/w-bf16") for k in best):
    lines += ["", "Context, not the f32 computation (best round, ms per step):", "",
              "| shape | PyTorch, all bf16 (oneDNN) | java-fast absorbed, f32 cache, kv_b_proj bf16 | PyTorch f32 / java-fast |",
              "|---|---|---|---|"]
    for s in shapes:
        t = best.get(("torch", "absorbed") + s)
        tb = best.get(("torch-bf16", "absorbed") + s)
        jw = best.get(("java-fast/w-bf16", "absorbed") + s)
        fmt = lambda v: "-" if v is None else f"{v:.3f}"
        lines.append(f"| B{s[0]} H{s[1]} T{s[2]} | {fmt(tb)} | {fmt(jw)} | {'-' if (t is None or jw is None) else f'{t / jw:.2f}×'} |")
text = "\n".join(lines)
print("\nms per step: the mean of each round's timed runs, best round; ratio = PyTorch ms / java-fast ms (above 1: java-fast is faster)\n" + text)
open(os.path.join(out, "summary.md"), "w").write(text + "\n")
PY
