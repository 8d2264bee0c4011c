#!/usr/bin/env bash
# java-fast against libtorch 2.7.1 (DJL 0.36, the MKL and oneDNN libtorch links in), side by side in one run on
# this machine: the FMA peak and read bandwidth (Java's and C's), libtorch's setup (threads, the BLAS it
# mapped and its own build configuration, a 2048³ sgemm), a check that both sides compute the same output
# on one small shape, then for each round java-fast (./mla bench, absorbed, f32) and libtorch (djl/TorchAbsorb:
# DeepSeek's absorb einsums over ./mla bench's own data) on the same shapes and thread count, alternately;
# per round and backend the mean ms of the timed runs after warm-up (the same statistic on both sides), then
# the best round per backend and shape, and the ratio libtorch / java-fast (> 1: java-fast is faster); beside them the
# medians (a run cut short, or a host that slows now and then, moves a mean far more than a median).
# Results: target/vs-libtorch/{java-*.csv,libtorch-N.csv,log.txt,summary.md}.
# With --layer, afterwards the decode step of the whole DeepSeek-V3 layer (djl/TorchLayer: java-fast's MlaLayer
# with f32, bf16 and FP8 weights against libtorch's model.py steps on the same weights dequantised to f32, B1
# and B8 at T4096, alternating in one JVM after a check of the two outputs), then a prefill of 1024 and 4096
# tokens with f32 and FP8 weights (java-fast's tiled path against model.py's absorb path with the causal mask):
# target/vs-libtorch/{layer,prefill}.txt. The layer needs about 15 GB of memory and 15 minutes more.
#
# With --isa avx2 both sides are held to AVX2 on an AVX-512 machine, to stand for one without it (a Zen 3, an Intel
# client core): java-fast's JVM gets -XX:UseAVX=2 (256-bit vectors, 16 registers), libtorch ATEN_CPU_CAPABILITY=avx2,
# MKL_ENABLE_INSTRUCTIONS=AVX2 and ONEDNN_MAX_CPU_ISA=AVX2, the C peak -mno-avx512f. The FMA units stay the machine's.
#
# Usage: benchmarks/vs-libtorch.sh [--rounds N] [--shapes B:H:T,...] [--budget-ms MS] [--threads N] [--layer] [--isa avx2]
#   defaults: 3 rounds; shapes 1:128:4096, 8:128:4096, 1:16:16384; 2000 ms timed per shape and backend
#   (libtorch: that plus a second, as vs-torch.sh gives PyTorch); every core.
# Needs a JDK 25 ($JAVA_HOME or Temurin 25 at its Debian path) and DJL's jars in ~/.m2 (the libtorch native
# jar is 110 MB: Maven fetches it the first time unless it is there); nothing is downloaded at run time.
set -euo pipefail
root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
rounds=3; shapes="1:128:4096,8:128:4096,1:16:16384"; budget=2000; threads=$(nproc); check_shape="1:16:1024"; layer=0; isa=""; jvm_isa=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --shapes) shapes="$2"; shift 2 ;;
    --budget-ms) budget="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --layer) layer=1; shift ;;
    --isa) isa="$2"; shift 2 ;;
    *) echo "usage: $0 [--rounds N] [--shapes B:H:T,...] [--budget-ms MS] [--threads N] [--layer] [--isa avx2]" >&2; exit 2 ;;
  esac
done
case "$isa" in
  "") ;;
  avx2)
    grep -q -w avx2 /proc/cpuinfo || { echo "vs-libtorch: --isa avx2 needs a CPU with AVX2" >&2; exit 2; }
    export MLA_JAVA_OPTS="${MLA_JAVA_OPTS:-} -XX:UseAVX=2" ATEN_CPU_CAPABILITY=avx2 MKL_ENABLE_INSTRUCTIONS=AVX2 \
      ONEDNN_MAX_CPU_ISA=AVX2 ROOFLINE_CFLAGS="-mno-avx512f"
    jvm_isa="-XX:UseAVX=2" ;;                                # the JVMs run here directly (the layer's java-fast)
  *) echo "vs-libtorch: --isa takes avx2 (the one instruction set it can hold a machine to), not '$isa'" >&2; exit 2 ;;
esac
jdk="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
[ -x "$jdk/bin/java" ] || { echo "vs-libtorch: no JDK at $jdk (set JAVA_HOME to a JDK 25)" >&2; exit 2; }
export JAVA_HOME="$jdk"
out="$root/target/vs-libtorch"
rm -rf "$out" && mkdir -p "$out"
cd "$root"
log() { tee -a "$out/log.txt"; }

# The CLI jar first (./mla builds it when stale): the DJL tool compiles against it and replays its data.
./mla --version >/dev/null
(cd benchmarks/djl && { mvn -B -q -o package 2>/dev/null || mvn -B -q package; }) | grep -v '^WARNING' || true
[ -f benchmarks/djl/target/classpath.txt ] || { echo "vs-libtorch: benchmarks/djl did not build" >&2; exit 2; }
cp="benchmarks/djl/target/classes:$(cat benchmarks/djl/target/classpath.txt):target/tornado-mla-cli.jar"
libtorch() {
  "$jdk/bin/java" $jvm_isa --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -Xmx8g -Dai.djl.offline=true \
    -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Dorg.slf4j.simpleLogger.log.ai.djl.util.cuda.CudaUtils=error \
    -cp "$cp" org.tornadomla.benchmarks.djl.TorchAbsorb --threads "$threads" "$@" 2>&1 | grep -v '^WARNING: Using incubator'
}

load=$(cut -d' ' -f1-3 /proc/loadavg)
cpu="$(lscpu | sed -n 's/^Model name: *//p') (family $(lscpu | sed -n 's/^CPU family: *//p'), model $(lscpu | sed -n 's/^Model: *//p'))"
if grep -q -w avx512f /proc/cpuinfo; then has=AVX-512; elif grep -q -w avx2 /proc/cpuinfo; then has=AVX2; else has="no AVX2"; fi
[ -z "$isa" ] || has="$has, both sides held to AVX2 (--isa avx2)"
echo "== machine: $cpu, $has, $(nproc) CPUs, $threads threads both sides; load average $load; $(date -u +%FT%TZ)" | log
if awk -v l="${load%% *}" 'BEGIN { exit !(l > 0.5) }'; then
  echo "== warning: load average ${load%% *} at the start: other work shares the CPUs, the timings are noisy" | log
fi
echo "== ceilings" | log
benchmarks/roofline/run.sh "$threads" | log
./mla bench --roofline --backends java-fast --heads 16 --context 64 --batch 1 --path tiled --dtype f32 --budget-ms 50 2>&1 \
  | grep -E '^(limits|kernels):' | sed 's/^limits/java limits/' | log
echo "== libtorch" | log
MKL_VERBOSE=1 libtorch --info | grep -v -E '^MKL_VERBOSE [A-Z0-9_]+\(' | sed 's/^MKL_VERBOSE /libtorch MKL_VERBOSE: /' | log
echo "== check: the same output on $check_shape (libtorch against java-fast and the reference kernels)" | log
checked=0; libtorch --check --shapes "$check_shape" > "$out/check.txt" || checked=$?
grep '^check ' "$out/check.txt" | log || true
[ "$checked" = 0 ] || { cat "$out/check.txt" >&2; echo "vs-libtorch: the check failed (exit $checked); no timings" | log; exit 1; }

for i in $(seq 1 "$rounds"); do
  echo "== round $i/$rounds: java-fast" | log
  for s in ${shapes//,/ }; do
    IFS=: read -r b h t <<<"$s"
    ./mla bench --backends java-fast --batch "$b" --heads "$h" --context "$t" --dtype f32 --path absorbed \
      --budget-ms "$budget" --csv "$out/java-$i-$b-$h-$t.csv" 2>&1 | grep -E '^java-fast' | log
  done
  echo "== round $i/$rounds: libtorch" | log
  libtorch --shapes "$shapes" --seconds "$((budget / 1000 + 1))" --csv "$out/libtorch-$i.csv" | grep '^libtorch B[0-9]' | log
done

/usr/bin/python3 - "$out" <<'PY'
import csv, glob, os, re, sys
out = sys.argv[1]
runs = {}                                    # (backend, B, H, T) -> [(mean ms, median ms or None) of each round]
for f in sorted(glob.glob(os.path.join(out, "*.csv"))):
    for r in csv.DictReader(open(f)):
        if r["path"] == "absorbed" and r["dtype"] == "f32":
            med = float(r["ms_median"]) if r.get("ms_median") else None
            runs.setdefault((r["backend"], int(r["batch"]), int(r["heads"]), int(r["context"])), []).append((float(r["ms_per_step"]), med))
log = open(os.path.join(out, "log.txt")).read().splitlines()
keep = [l for l in log if re.match(r"== machine|== warning|fma_gflops|read_gbps|java limits|libtorch [0-9]|libtorch (mapped|BLAS|config|threads|MKL_VERBOSE|2048)|check ", l)]
lines = ["| shape (f32, absorbed) | java-fast ms | libtorch ms | libtorch / java-fast | medians: java-fast / libtorch ms, ratio | rounds (libtorch / java-fast) |",
         "|---|---|---|---|---|---|"]
for s in sorted({k[1:] for k in runs}):
    j, t = runs.get(("java-fast",) + s, []), runs.get(("libtorch",) + s, [])
    fmt = lambda v: f"{min(m for m, _ in v):.3f}" if v else "-"
    ratio = f"**{min(m for m, _ in t) / min(m for m, _ in j):.2f}×**" if j and t else "-"
    jm, tm = [d for _, d in j if d is not None], [d for _, d in t if d is not None]
    med = f"{min(jm):.3f} / {min(tm):.3f}, {min(tm) / min(jm):.2f}×" if jm and tm else "-"
    rounds = ", ".join(f"{a[0]:.3f} / {b[0]:.3f}" for a, b in zip(t, j))
    lines.append(f"| B{s[0]} H{s[1]} T{s[2]} | {fmt(j)} | {fmt(t)} | {ratio} | {med} | {rounds} |")
text = "\n".join(["ms per step: the mean of each round's timed runs, best round; ratio = libtorch ms / java-fast ms "
                  "(above 1: java-fast is faster); the medians: each round's median step, the least round's", ""] + lines + ["", "```"] + keep + ["```"])
print("\n" + text)
open(os.path.join(out, "summary.md"), "w").write(text + "\n")
PY

if [ "$layer" = 1 ]; then
  echo "== layer: decode step of the DeepSeek-V3 layer, java-fast against libtorch (djl/TorchLayer)" | log
  # 750 MB of f32 weights per side and form: a larger heap than the core's
  "$jdk/bin/java" $jvm_isa --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -Xmx14g -Dai.djl.offline=true \
    -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Dorg.slf4j.simpleLogger.log.ai.djl.util.cuda.CudaUtils=error \
    -cp "$cp" org.tornadomla.benchmarks.djl.TorchLayer --threads "$threads" --rounds "$rounds" --seconds "$((budget / 1000 + 1))" 2>&1 \
    | grep -v '^WARNING: Using incubator' | tee "$out/layer.txt" | log
  echo "== layer: prefill of 1024 and 4096 tokens (B1), java-fast (tiled) against libtorch (model.py's absorb, causal)" | log
  "$jdk/bin/java" $jvm_isa --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -Xmx14g -Dai.djl.offline=true \
    -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Dorg.slf4j.simpleLogger.log.ai.djl.util.cuda.CudaUtils=error \
    -cp "$cp" org.tornadomla.benchmarks.djl.TorchLayer --threads "$threads" --rounds 2 --prefill 1024,4096 --weights f32,fp8 2>&1 \
    | grep -v '^WARNING: Using incubator' | tee "$out/prefill.txt" | log
fi
