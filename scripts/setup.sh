#!/usr/bin/env bash
# Shared set-up for quickstart.sh and test.sh: installs missing Debian
# packages, configures and builds blockc in ./build. Idempotent: a second run
# installs nothing and rebuilds only what changed.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BLOCKC_BUILD_DIR:-$ROOT/build}"

# Every package the build and the test suite need, by Debian name (see
# docs/Dependencies.md for why each is there).
PACKAGES=(
  cmake ninja-build ccache
  clang-22 lld-22
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools libomp-22-dev
  libgtest-dev libboost-context-dev
  libsentencepiece-dev sentencepiece python3-sentencepiece
  libpcre2-dev libicu-dev
  openmpi-bin libopenmpi-dev
  pkg-config
  python3 python3-numpy
)

step() { printf '\n==> %s\n' "$*"; }
die() { printf '\nERROR: %s\n' "$*" >&2; exit 1; }

install_packages() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
      missing+=("$p")
    fi
  done
  if [ ${#missing[@]} -eq 0 ]; then
    step "All required packages are installed"
    return
  fi
  step "Installing missing packages: ${missing[*]}"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || die "not root and no sudo: install ${missing[*]} by hand"
    sudo="sudo"
  fi
  $sudo apt-get update -qq || die "apt-get update failed"
  if ! DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
      --no-install-recommends "${missing[@]}"; then
    die "could not install: ${missing[*]} (LLVM/MLIR 22 come from bookworm-security; check /etc/apt/sources.list*)"
  fi
  for p in "${missing[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" \
      || die "package $p is still missing after apt-get install"
  done
}

configure_and_build() {
  export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"
  # Paths under the checkout hash relative to it: clones in other folders
  # (CI's fresh clone) reuse the cache.
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$ROOT}"
  if [ ! -f "$BUILD/build.ninja" ]; then
    step "Configuring ($BUILD)"
    cmake -G Ninja -S "$ROOT" -B "$BUILD" \
      -DCMAKE_BUILD_TYPE=Release \
      -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
      -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
      -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
      -DLLVM_USE_LINKER=lld \
      -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
      || die "CMake configuration failed"
  fi
  step "Building blockc (ninja, $(nproc) jobs)"
  ninja -C "$BUILD" blockc blockc-opt blockc-run blockc-import blockc-tokenize \
    BlockcUnitTests \
    || die "build failed"
}

install_packages
configure_and_build
