#!/usr/bin/env bash
# tools/gpu/pack.sh DIR [--backend nvidia|cuda|ptx|opencl] — writes a self-contained GPU kit into DIR:
#
#   DIR/run.sh                 runs everything on a machine with no Java, Maven or network (see run.sh)
#   DIR/runtime.tar.xz         a Java 25 runtime made with jlink from the JDK here (only the modules needed)
#   DIR/tornadovm-*.t?z        the TornadoVM SDK archive for the backend, as ../shared/tornadovm holds it; for
#                              nvidia (the default) one archive holding both NVIDIA SDKs, CUDA and PTX, so that
#                              one GPU run measures both routes (the two share most files: 19.6 MiB together)
#   DIR/tornado-mla-cli.jar    the CLI with its dependencies and the TornadoVM backend
#   DIR/tornado.argfile        tornado-config/tornado.argfile (bailout off)
#   DIR/torch_absorb.py        the PyTorch yardstick (DeepSeek's absorb einsums on the GPU)
#   DIR/KIT                    what was packed, from which commit
#
# A GPU run receives at most 64 MiB together with the working tree, so an NVIDIA kit must stay within 60 MiB:
# archives are unpacked on the GPU machine. Env: JAVA_HOME (a JDK 25 with jlink; default Temurin 25 here),
# TORNADOVM_SDKS (the folder with the SDK archives and install.sh; default ../shared/tornadovm beside the repo).
set -euo pipefail

usage() { echo "usage: $0 DIR [--backend nvidia|cuda|ptx|opencl]" >&2; exit 2; }
[ $# -ge 1 ] || usage
DIR="$1"; shift
BACKEND=nvidia
while [ $# -gt 0 ]; do
  case "$1" in
    --backend) [ $# -ge 2 ] || usage; BACKEND="$2"; shift 2 ;;
    --backend=*) BACKEND="${1#--backend=}"; shift ;;
    *) echo "pack.sh: error: unknown argument '$1'" >&2; usage ;;
  esac
done
case "$BACKEND" in nvidia|cuda|ptx|opencl) ;; *) echo "pack.sh: error: --backend must be nvidia, cuda, ptx or opencl, found '$BACKEND'" >&2; exit 2 ;; esac
case "$BACKEND" in nvidia) SDK_NAMES="cuda ptx" ;; *) SDK_NAMES="$BACKEND" ;; esac

ROOT="$(git -C "$(dirname "${BASH_SOURCE[0]}")" rev-parse --show-toplevel)"
SDKS="${TORNADOVM_SDKS:-$ROOT/../shared/tornadovm}"
JDK="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
if [ ! -x "$JDK/bin/jlink" ] || ! "$JDK/bin/java" -version 2>&1 | grep -q '"25'; then
  JDK=/usr/lib/jvm/temurin-25-jdk-amd64
fi
[ -x "$JDK/bin/jlink" ] || { echo "pack.sh: error: needs a JDK 25 with jlink (JAVA_HOME=$JDK has none)" >&2; exit 2; }
[ -x "$SDKS/install.sh" ] || { echo "pack.sh: error: no TornadoVM SDKs at $SDKS (expected install.sh and the archives; set TORNADOVM_SDKS)" >&2; exit 2; }
for b in $SDK_NAMES; do
  ARCHIVE=""
  for a in "$SDKS/tornadovm-5.2.0-jdk25-$b.tgz" "$SDKS/tornadovm-5.2.0-jdk25-$b.txz"; do [ -f "$a" ] && ARCHIVE="$a"; done
  [ -n "$ARCHIVE" ] || { echo "pack.sh: error: no tornadovm-5.2.0-jdk25-$b.tgz or .txz in $SDKS" >&2; exit 2; }
done
command -v xz >/dev/null || { echo "pack.sh: error: needs xz to compress the runtime (apt-get install xz-utils)" >&2; exit 2; }

mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
# an earlier kit is replaced; any other non-empty folder is left alone
if [ -n "$(ls -A "$DIR")" ] && [ ! -f "$DIR/KIT" ]; then
  echo "pack.sh: error: $DIR is not empty and holds no kit (no KIT file): choose an empty or new folder" >&2
  exit 2
fi
rm -rf "${DIR:?}"/*
BUILD="$ROOT/target/gpu-kit-build"
mkdir -p "$BUILD"
echo "pack.sh: $BACKEND kit into $DIR (JDK $JDK, SDKs $SDKS)"

# 1. the CLI jar, compiled with the TornadoVM backend against the first SDK (for nvidia: CUDA's; the compile gate
#    builds and runs the project against each SDK, and the nvidia kit's jar runs on both)
FIRST="${SDK_NAMES%% *}"
SDK_HOME="$("$SDKS/install.sh" "$FIRST" "$BUILD/sdk")"
echo "pack.sh: building target/tornado-mla-cli.jar with TORNADOVM_HOME=$SDK_HOME ..."
(cd "$ROOT" && TORNADOVM_HOME="$SDK_HOME" JAVA_HOME="$JDK" mvn -B -q -DskipTests package) >"$BUILD/mvn.log" 2>&1 \
  || { tail -20 "$BUILD/mvn.log" >&2; echo "pack.sh: error: mvn package failed (log: $BUILD/mvn.log)" >&2; exit 1; }
"$JDK/bin/jar" tf "$ROOT/target/tornado-mla-cli.jar" | grep -q '^org/tornadomla/tornado/TornadoExecutor.class$' \
  || { echo "pack.sh: error: the CLI jar has no TornadoVM backend" >&2; exit 1; }
cp "$ROOT/target/tornado-mla-cli.jar" "$DIR/"

# 2. a Java runtime: the modules TornadoVM's drivers and Graal need (jar --describe-module of the SDK's jars:
#    java.desktop for the PTX driver, jdk.internal.vm.ci, jdk.management, ...) plus the CLI's (java.desktop for
#    charts, java.sql for Gson, jdk.incubator.vector for java-fast); no jlink compression: xz does better
MODULES=java.base,java.logging,java.management,jdk.management,jdk.unsupported,jdk.incubator.vector,jdk.internal.vm.ci,java.sql,java.compiler,java.desktop,jdk.jartool
rm -rf "$BUILD/runtime"
"$JDK/bin/jlink" --add-modules "$MODULES" --strip-debug --no-man-pages --no-header-files --output "$BUILD/runtime" 2>&1 | grep -v "incubator modules" || true
"$BUILD/runtime/bin/java" -version >/dev/null 2>&1 || { echo "pack.sh: error: the jlink'd runtime does not start" >&2; exit 1; }
echo "pack.sh: compressing the runtime (tar | xz -9) ..."
tar -C "$BUILD" -cf - runtime | xz -9 -T0 > "$DIR/runtime.tar.xz"

# 3. the SDK archive as it is (run.sh unpacks it and writes its argfile for that place); for nvidia both SDK
#    folders in one archive, made once and kept under target/ while the shared archives are unchanged
if [ "$BACKEND" = nvidia ]; then
  both="$BUILD/tornadovm-5.2.0-jdk25-nvidia.txz"
  stamp="$(for b in $SDK_NAMES; do ls -l --time-style=+%s "$SDKS"/tornadovm-5.2.0-jdk25-$b.t?z; done | awk '{print $5, $6, $7}' | tr '\n' ' ')"
  if [ ! -f "$both" ] || [ "$(cat "$both.stamp" 2>/dev/null)" != "$stamp" ]; then
    echo "pack.sh: one archive of the CUDA and PTX SDKs (tar | xz -9, about 2 minutes) ..."
    rm -rf "$BUILD/nvidia"; mkdir -p "$BUILD/nvidia"
    for b in $SDK_NAMES; do "$SDKS/install.sh" "$b" "$BUILD/nvidia" >/dev/null; rm -f "$BUILD/nvidia/tornadovm-5.2.0-jdk25-$b/tornado-argfile"; done
    tar -C "$BUILD/nvidia" -cf - $(for b in $SDK_NAMES; do echo "tornadovm-5.2.0-jdk25-$b"; done) | xz -9 -T0 > "$both.tmp"
    mv "$both.tmp" "$both"; echo "$stamp" > "$both.stamp"
    rm -rf "$BUILD/nvidia"
  fi
  ARCHIVE="$both"
fi
cp "$ARCHIVE" "$DIR/"
cp "$ROOT/tools/gpu/run.sh" "$ROOT/tools/gpu/torch_absorb.py" "$DIR/"
cp "$ROOT/tornado-config/tornado.argfile" "$DIR/tornado.argfile"
chmod +x "$DIR/run.sh"
{
  echo "backend=$BACKEND"
  echo "sdk=$(basename "$ARCHIVE")"
  echo "commit=$(git -C "$ROOT" rev-parse HEAD)$(git -C "$ROOT" diff --quiet HEAD -- src pom.xml tools || echo ' (with uncommitted changes)')"
  echo "packed=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "jdk=$("$JDK/bin/java" -version 2>&1 | head -1)"
  echo "modules=$MODULES"
} > "$DIR/KIT"

# sizes, as the kit travels
total=0
for f in "$DIR"/*; do
  b=$(stat -c %s "$f"); total=$((total + b))
  printf 'pack.sh:   %-40s %8.1f MiB\n' "$(basename "$f")" "$(echo "$b" | awk '{print $1 / 1048576}')"
done
mib=$(echo "$total" | awk '{printf "%.1f", $1 / 1048576}')
echo "pack.sh: $DIR: $mib MiB in all ($BACKEND)"
if [ "$BACKEND" != opencl ] && [ "$total" -gt $((60 * 1048576)) ]; then
  echo "pack.sh: error: the $BACKEND kit is $mib MiB, over the 60 MiB a GPU run can carry" >&2
  exit 1
fi
