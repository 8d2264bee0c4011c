#!/usr/bin/env bash
# tools/gpu/gate/compile-gate.sh [ptx|cuda|both] — compiles every kernel the project gives TornadoVM for sm_90 (the
# H200), through TornadoVM's PTX route, its CUDA route or both, on a machine with no GPU, no driver and no NVRTC.
#
# 1. Builds the driver stand-in (standin_cuda.c) as libcuda.so.1 and libnvrtc.so.13, and the cuBLAS stand-in
#    (standin_cublas.c) as libcublas.so.13 and libcublasLt.so.13, under target/compile-gate/.
# 2. Per route: unpacks the SDK (../shared/tornadovm or $TORNADOVM_SDKS), builds the CLI jar against it and runs
#    the project's own graphs on the stand-in's "H200": `mla check --backend tornado --quick` over every path x
#    cache dtype x kernel set (plain, KernelContext, KernelContext over a paged cache), every path x weight dtype,
#    again at batch 1 (the matrix-vector projections), and with --sparse (DeepSeek-V3.2's indexer and top-k). TornadoVM generates its PTX or CUDA C for every task; the
#    stand-in writes each module to target/compile-gate/ROUTE/dump and runs nothing, so the check's own
#    PASS/FAIL lines mean nothing here — but a line whose error is an exception means TornadoVM could not build
#    or generate that graph, and fails the gate.
# 3. CompileGate.java assembles each PTX module with `ptxas -arch=sm_90 -v` or compiles each CUDA C module with
#    `nvcc -cubin -arch=sm_90 -Xptxas -v` (NVRTC's options), and prints one line per kernel and the summary
#    "N kernels compiled for sm_90 (ROUTE), F failed, S spilling"; the per-kernel table also goes to
#    target/compile-gate/ROUTE/kernels.md. The CUDA route must also have compiled TensorCoreAttention.scores (the
#    tensor-core scores it picks for a bf16 cache).
# 4. CUDA route only: a prefill past 128 token rows, whose weight products become cuBLAS SGEMM library tasks
#    (CublasProjections); the cuBLAS stand-in (standin_cublas.c) logs each call to dump/cublas.tsv and the gate fails
#    unless both SGEMM forms were called. Then CublasStandInCheck runs those tasks through TornadoVM's own cuBLAS
#    binding with real copies (STANDIN_CUDA_COPY=1), the stand-in computing each SGEMM as cuBLAS defines it.
# Exit code 0 when every module compiled on every route asked for, 1 otherwise, 2 when a tool is missing.
# Needs: a JDK 25, Maven, gcc, the CUDA toolkit's nvcc and ptxas, and the TornadoVM SDK archives.
# Env: GATE_MIN_KERNELS (default 30), GATE_JOBS (compiler processes, default nproc).
set -euo pipefail
ROOT="$(git -C "$(dirname "${BASH_SOURCE[0]}")" rev-parse --show-toplevel)"
cd "$ROOT"
ROUTES="${1:-both}"
case "$ROUTES" in ptx|cuda) ;; both) ROUTES="ptx cuda" ;; *) echo "usage: $0 [ptx|cuda|both]" >&2; exit 2 ;; esac
SDKS="${TORNADOVM_SDKS:-$ROOT/../shared/tornadovm}"
JDK="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
"$JDK/bin/java" -version 2>&1 | grep -q '"25' || JDK=/usr/lib/jvm/temurin-25-jdk-amd64
missing=""
for t in gcc nvcc ptxas mvn; do command -v "$t" >/dev/null || missing="$missing $t"; done
[ -x "$JDK/bin/java" ] || missing="$missing JDK-25"
[ -x "$SDKS/install.sh" ] || missing="$missing TornadoVM-SDKs($SDKS)"
if [ -n "$missing" ]; then echo "compile-gate: error: missing:$missing" >&2; exit 2; fi

WORK="$ROOT/target/compile-gate"
tools/gpu/gate/build-standin.sh "$WORK/standin" || exit 2
echo "compile-gate: driver stand-in built ($WORK/standin: libcuda.so.1, libnvrtc.so.13, libcublas.so.13, libcublasLt.so.13)"

rc=0
for route in $ROUTES; do
  t0=$SECONDS
  dir="$WORK/$route"
  rm -rf "$dir"; mkdir -p "$dir/dump"
  sdk="$("$SDKS/install.sh" "$route" "$ROOT/target/tornadovm")"
  echo "== compile gate, $route route (SDK $sdk)"
  (TORNADOVM_HOME="$sdk" JAVA_HOME="$JDK" mvn -B -q -DskipTests package) >"$dir/mvn.log" 2>&1 \
    || { tail -20 "$dir/mvn.log" >&2; echo "compile-gate: error: mvn package against the $route SDK failed" >&2; exit 1; }
  cp target/tornado-mla-cli.jar "$dir/cli.jar"
  sed -e 's#--module-path \.:#--module-path #' "$sdk/tornado-argfile" > "$dir/tornado-runtime.argfile"
  drive() {   # drive NAME ARGS...: one run of `mla check` on the stand-in; its output in $dir/NAME.txt
    local name=$1; shift
    local out="$dir/$name.txt" code=0
    STANDIN_CUDA_DUMP="$dir/dump" LD_LIBRARY_PATH="$WORK/standin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" timeout 1200 \
      "$JDK/bin/java" -Djava.awt.headless=true @"$dir/tornado-runtime.argfile" @"$ROOT/tornado-config/tornado.argfile" \
      -cp "$dir/cli.jar" org.tornadomla.cli.MlaCommand check --backend tornado --quick "$@" >"$out" 2>&1 || code=$?
    local cases bad
    cases=$(grep -cE '^(PASS|FAIL) ' "$out" || true)
    bad=$(grep -E '^(PASS|FAIL) ' "$out" | grep -E 'error=[A-Za-z.]*(Exception|Error):' || true)
    if [ "$code" -gt 1 ] || ! grep -qE '^[0-9]+ PASS, [0-9]+ FAIL' "$out" || [ -n "$bad" ]; then
      echo "compile-gate: FAILED: the $route graphs of '$name' did not all build on the stand-in (exit $code); $out:" >&2
      { [ -n "$bad" ] && echo "$bad"; tail -15 "$out"; } | head -30 >&2
      return 1
    fi
    echo "compile-gate: $route: $name: $cases cases generated ($((SECONDS - t0)) s so far)"
  }
  # every path x cache dtype with f32 weights; every path with bf16 and fp8 weights over one cache dtype (the weight
  # kernels take no cache dtype and the cache kernels no weight dtype, so the full product adds no distinct module);
  # batch 1 for the matrix-vector projections
  drive all-paths --weights-dtype f32 || { rc=1; continue; }
  drive weights --cache-dtype f32 --weights-dtype bf16,fp8 || { rc=1; continue; }
  drive batch-1 --batch 1 --path absorbed,tiled --cache-dtype bf16 --weights-dtype f32,bf16,fp8 || { rc=1; continue; }
  # a sparse (DeepSeek-V3.2) layer: the indexer, top-k and sparse attention kernels, every path x cache dtype
  drive sparse --sparse --weights-dtype f32 || { rc=1; continue; }
  if [ "$route" = cuda ]; then
    # a prefill of 2 x 70 token rows: past the KernelContext projections' 128 rows, so the CUDA route's cuBLAS SGEMMs
    # (CublasProjections) replace the weight products, in every weight form; the cuBLAS stand-in logs each call
    drive cublas --prefill 70 --path absorbed --cache-dtype bf16 --weights-dtype f32,fp8 || { rc=1; continue; }
    for fn in cublasSgemm cublasSgemmStridedBatched; do
      if ! cut -f2 "$dir/dump/cublas.tsv" 2>/dev/null | grep -qx "$fn"; then
        echo "compile-gate: FAILED: the cuda route's prefill graphs made no $fn call (the cuBLAS projections were not chosen)" >&2
        rc=1
      fi
    done
    # the same tasks through TornadoVM's own cuBLAS binding with real copies: the stand-ins move the bytes and compute
    # each SGEMM on the host as cuBLAS defines it, and the test compares with the plain kernels
    rm -rf target/surefire-reports
    if ! (STANDIN_CUDA_COPY=1 STANDIN_CUDA_DUMP="$dir/dump" LD_LIBRARY_PATH="$WORK/standin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
          TORNADOVM_HOME="$sdk" JAVA_HOME="$JDK" mvn -B -q test -Dtest=CublasStandInCheck -Dsurefire.failIfNoSpecifiedTests=false) \
          >"$dir/cublas-test.log" 2>&1 \
        || ! grep -q 'tests="2" errors="0" skipped="0" failures="0"' target/surefire-reports/TEST-org.tornadomla.tornado.CublasStandInCheck.xml 2>/dev/null; then
      grep -E 'Tests run|expected|ERROR' "$dir/cublas-test.log" | head -10 >&2
      echo "compile-gate: FAILED: CublasStandInCheck (the cuBLAS tasks through TornadoVM's binding on the stand-ins); $dir/cublas-test.log" >&2
      rc=1
    else
      echo "compile-gate: cuda: cuBLAS tasks through TornadoVM's binding on the stand-ins: 2 tests passed"
    fi
  fi
  "$JDK/bin/java" "$ROOT/tools/gpu/gate/CompileGate.java" --route "$route" --dump "$dir/dump" --jar "$dir/cli.jar" \
    --min-kernels "${GATE_MIN_KERNELS:-30}" --markdown "$dir/kernels.md" --jobs "${GATE_JOBS:-$(nproc)}" || rc=1
  # the CUDA route picks the tensor-core scores for the absorbed path over a bf16 cache: a graph that silently
  # stopped choosing them would otherwise pass with the plain kernels
  if [ "$route" = cuda ] && ! grep -q '`TensorCoreAttention.scores` .*| ok |' "$dir/kernels.md"; then
    echo "compile-gate: FAILED: the cuda route compiled no TensorCoreAttention.scores (the tensor-core scores were not chosen)" >&2
    rc=1
  fi
  echo "compile-gate: $route route took $((SECONDS - t0)) s"
done
exit $rc
