#!/usr/bin/env bash
# Shared set-up for fuzz.sh and sanitize.sh: the normal set-up (packages,
# ./build), then an instrumented build in ./build-san (ASan + UBSan +
# libFuzzer coverage on blockc's own code; see docs/Robustness.md).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PACKAGES_EXTRA=(libclang-rt-22-dev)
source "$ROOT/scripts/setup.sh"
SAN_BUILD="${BLOCKC_SAN_BUILD_DIR:-$ROOT/build-san}"

for p in "${PACKAGES_EXTRA[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
    step "Installing $p (sanitizer and libFuzzer runtimes)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$p" \
      || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
             --no-install-recommends "$p"; } || die "could not install $p"
  fi
done

# Line tables make ccache hash the working directory unless told not to;
# with the compilation directory recorded as "." the objects do not depend
# on where the checkout lives, so a fresh clone (CI) reuses the cache.
export CCACHE_NOHASHDIR=true

if [ ! -f "$SAN_BUILD/build.ninja" ]; then
  step "Configuring the sanitizer + fuzzer build ($SAN_BUILD)"
  cmake -G Ninja -S "$ROOT" -B "$SAN_BUILD" \
    -DCMAKE_BUILD_TYPE=Release \
    "-DCMAKE_CXX_FLAGS=-gline-tables-only -fdebug-compilation-dir=." \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DLLVM_USE_LINKER=lld \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    -DBLOCKC_ENABLE_FUZZERS=ON \
    || die "CMake configuration of the sanitizer build failed"
fi
# Leaks in the process-lifetime MLIR registries are not findings; every
# other ASan/UBSan report aborts. allow_user_poisoning=0: LLVM's inline
# allocator code in our instrumented objects poisons memory that Debian's
# uninstrumented libMLIR/libLLVM then use legitimately (false reports).
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1:allow_user_poisoning=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
