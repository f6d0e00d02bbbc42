#!/usr/bin/env bash
# README command 1: set up, build, then compile and JIT-run the bundled small
# Llama-style block on weights and an input written by the independent NumPy
# reference, print blockc-run's summary and compare with the reference.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/setup.sh"

EX="$ROOT/examples/small"
OUT="$BUILD/quickstart"
REF="/usr/bin/python3 $ROOT/utils/blockc_ref.py"
mkdir -p "$OUT"

step "Writing random weights and an input [2, 64, 256] with the NumPy reference"
$REF gen-weights --config "$EX/config.json" --seed 1 -o "$OUT/weights.safetensors"
$REF gen-input --config "$EX/config.json" --seed 2 --batch 2 --seq-len 64 -o "$OUT/x.npy"

step "blockc-run examples/small/model.mlir (compile in-process, JIT-run on the CPU)"
"$BUILD/bin/blockc-run" "$EX/model.mlir" --weights="$OUT/weights.safetensors" \
  --input="$OUT/x.npy" --output="$OUT/y.npy" --repeat=5

step "Comparing with the NumPy reference (utils/blockc_ref.py)"
$REF run --config "$EX/config.json" --weights "$OUT/weights.safetensors" \
  --input "$OUT/x.npy" -o "$OUT/ref.npy"
$REF compare "$OUT/y.npy" "$OUT/ref.npy" --tol 1e-4
step "Done: the output is in $OUT/y.npy"
