#!/usr/bin/env bash
# Installs what the benchmark's peers need (Debian packages; idempotent) and
# builds blockc, then runs benchmarks/run.py with the given arguments:
#   ./benchmarks/setup.sh            # full run (several minutes)
#   ./benchmarks/setup.sh --quick    # smoke run
# libopenblas0-pthread matters: without it Debian's numpy and PyTorch use the
# reference BLAS (~6 GFLOP/s) and every ratio would flatter blockc;
# python3-threadpoolctl lets precision.py record the OpenBLAS kernel the peers ran.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/setup.sh"
need=()
for p in python3-torch python3-numpy python3-matplotlib python3-threadpoolctl \
         libopenblas0-pthread; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  step "Installing benchmark peers: ${need[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    --no-install-recommends "${need[@]}" || die "could not install ${need[*]}"
fi
step "Running the benchmark (blockc vs PyTorch eager vs OpenBLAS, same run)"
exec /usr/bin/python3 "$ROOT/benchmarks/run.py" "$@"
