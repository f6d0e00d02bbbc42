#!/bin/sh
# The GPU benchmark bundle's run (benchmarks/gpu/README.md;
# scripts/gpu-bench.sh copies this file into build/gpubench). On a machine with an NVIDIA GPU,
# its driver and PyTorch (no MLIR needed), from anywhere:
#   sh gpubench/run.sh     # OUT=DIR (absolute, or relative to gpubench/;
#                          # default gpubench/out)
# It checks the small bf16 block against the reference, times the Llama-2-7B
# block (bf16, and f32 on TF32) and its bf16 decode steps at KV cache
# lengths 512 and 4096 beside PyTorch eager in the same run,
# profiles the kernels, and writes $OUT/latest.json and $OUT/latest.md
# (results.py), to be committed as benchmarks/results/gpu-<chip>/ (printed
# at the end). Each step has a time limit and the whole run a budget
# (BUDGET_S, default 420 s), so it ends within 8 minutes on an H100/H200
# even when a kernel hangs: a step that times out or fails is recorded and
# the run goes on; a hung block_l7b* skips that binary's later steps.
cd "$(dirname "$0")" || exit 1
. ./bundle.env
OUT=${OUT:-out}
BUDGET_S=${BUDGET_S:-420}
L="$OUT/logs"
rm -rf "$L" && mkdir -p "$L" || exit 1
: > "$L/steps.tsv"
START=$(date +%s)
DATE=$(date -u '+%Y-%m-%d %H:%M UTC')
HUNG=" "

# step NAME LIMIT_S COMMAND...: runs COMMAND (output to the terminal and to
# $L/NAME.log) for at most LIMIT_S seconds and what is left of the budget;
# appends "NAME<TAB>STATUS<TAB>seconds<TAB>limit" to steps.tsv, STATUS the
# exit status (124 or 137: timed out), skipped:budget or skipped:hung.
step() {
  name=$1 limit=$2
  shift 2
  left=$((START + BUDGET_S - $(date +%s)))
  case "$HUNG" in
  *" $1 "*)
    echo "== $name: skipped ($1 timed out before)"
    printf '%s\tskipped:hung\t0\t%s\n' "$name" "$limit" >> "$L/steps.tsv"
    return 0 ;;
  esac
  if [ "$left" -lt 10 ]; then
    echo "== $name: skipped (the budget of $BUDGET_S s is spent)"
    printf '%s\tskipped:budget\t0\t%s\n' "$name" "$limit" >> "$L/steps.tsv"
    return 0
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  echo "== $name (at most $limit s)"
  t0=$(date +%s)
  { timeout -k 5 "$limit" "$@" 2>&1; echo $? > "$L/$name.rc"; } |
    tee "$L/$name.log"
  rc=$(cat "$L/$name.rc")
  rm -f "$L/$name.rc"
  printf '%s\t%s\t%s\t%s\n' "$name" "$rc" "$(($(date +%s) - t0))" "$limit" \
    >> "$L/steps.tsv"
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    echo "== $name: timed out after $limit s"
    case "$1" in ./block_*) HUNG="$HUNG$1 " ;; esac
  elif [ "$rc" -ne 0 ]; then
    echo "== $name: exit $rc"
  fi
  return 0
}

SHAPE="4096 4096 11008" # the 7B block's D, KV and FF
# The PyTorch peers run with the OpenBLAS overrides of the lent machines
# cleared (for their processes only): their CPU-side kernels are the
# machine's own, as for any fair peer (benchmarks/README.md).
PEER="env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python3"
QUERY=name,driver_version,compute_cap,clocks.max.sm,memory.total
step gpu 30 sh -c 'nvidia-smi --query-gpu="$1" --format=csv,noheader |
  head -n 1 | tee "$0/gpu.csv"' "$L" "$QUERY"
echo "bundle: blockc $BLOCKC_COMMIT, kernels for $ARCH"

# Correctness: the small bf16 block against the float64 reference with bf16
# rounding points (ref.npy), compared on this machine with torch.
rm -f y.bin
step check-small 60 ./block_small check . 2 130 256 64 688
[ -f y.bin ] && cp y.bin "$OUT/y.bin"
step check-small-ref 90 $PEER torch_block.py check y.bin ref.npy
# The same block under the other warpgroup schedules (sm_90a bundles), and
# the head-dim-128 block (its inputs and reference in hd128/).
for s in persistent cooperative; do
  b=./block_small$(echo $s | cut -c1)
  [ -x $b ] || continue
  rm -f y.bin
  step check-small-$s 60 $b check . 2 130 256 64 688
  step check-small-$s-ref 90 $PEER torch_block.py check y.bin ref.npy
done
if [ -x block_hd128 ]; then
  rm -f hd128/y.bin
  step check-hd128 60 ./block_hd128 check hd128 2 300 512 256 1024
  step check-hd128-ref 90 $PEER torch_block.py check hd128/y.bin \
    hd128/ref.npy 0.25 4
fi
echo "tensor-core kernels: $(tr '\n' ' ' < tensor_core_kernels.txt)"

# The bf16 7B block: blockc (10 calls) and PyTorch eager, then per-kernel
# GPU times (5 more calls each, profiled) for the merged tables.
for t in 128 2048 8192; do
  step blockc-bf16-T$t 60 ./block_l7b time 1 $t $SHAPE 10
done
step torch-bf16-block 150 $PEER torch_block.py block 128 2048 8192
# sm_90a bundles: the other schedules of the warpgroup-MMA projections.
for t in 2048 8192; do
  [ -x block_l7bp ] && step blockc-bf16persistent-T$t 60 ./block_l7bp time 1 $t $SHAPE 10
  [ -x block_l7bc ] && step blockc-bf16cooperative-T$t 60 ./block_l7bc time 1 $t $SHAPE 10
done
for t in 2048 8192; do
  step profile-bf16-T$t 60 ./block_l7b time 1 $t $SHAPE 5 \
    "$OUT/profile-bf16-T$t.json"
done

# Decoding: the 7B bf16 block's decode entry (block_l7bd, compiled with
# --decode; block_l7bds with --kv-layout=bshd; block_l7bdu with each kernel
# its own launch, -gpu-merge-launches=false; block_l7bdn with the norms as
# kernels, -gpu-gemv-norm-prologue=false): a prefill of L tokens, then
# 20 timed one-token steps at cache length L (the head dimension is 128).
for l in 512 4096; do
  [ -x block_l7bd ] && step blockc-decode-bf16-L$l 60 ./block_l7bd decode 1 $l $SHAPE 128 20
  [ -x block_l7bds ] && step blockc-decode-bf16bshd-L$l 60 ./block_l7bds decode 1 $l $SHAPE 128 20
  [ -x block_l7bdu ] && step blockc-decode-bf16unmerged-L$l 60 ./block_l7bdu decode 1 $l $SHAPE 128 20
  [ -x block_l7bdn ] && step blockc-decode-bf16normkernels-L$l 60 ./block_l7bdn decode 1 $l $SHAPE 128 20
done

# Per-kernel GPU times of the decode step at L = 4096 (head-major caches).
[ -x block_l7bd ] && step profile-decode-bf16-L4096 60 env \
  BLOCK_PROFILE="$OUT/profile-decode-bf16-L4096.json" \
  ./block_l7bd decode 1 4096 $SHAPE 128 20

# Peers: the measured GEMM peak, the projection GEMMs, decode steps.
step torch-bf16-peak 90 $PEER torch_block.py peak
step torch-bf16-gemm 90 $PEER torch_block.py gemm 2048 8192
step torch-bf16-decode 60 $PEER torch_block.py decode 512 4096

# The f32 block on TF32 tensor cores (-gpu-allow-tf32) beside PyTorch f32
# with TF32 matmuls.
for t in 2048 8192; do
  step blockc-tf32-T$t 60 ./block_l7b32 time 1 $t $SHAPE 5
done
step torch-tf32-block 120 $PEER torch_block.py block 2048 8192 tf32
step profile-tf32-T2048 60 ./block_l7b32 time 1 2048 $SHAPE 3 \
  "$OUT/profile-tf32-T2048.json"
step torch-tf32-peak 60 $PEER torch_block.py peak tf32

echo "== results ($(($(date +%s) - START)) s so far)"
python3 results.py --bundle . --out "$OUT" --date "$DATE"
