#!/bin/sh
# Builds build/gpubench: a self-contained bundle that checks and times bf16
# blocks on tensor cores on a real GPU (a machine with the CUDA driver and
# PyTorch but no MLIR), beside PyTorch eager, and writes its results as
# files (benchmarks/gpu/README.md has the protocol and every file):
#   - the small example block in bf16 (GQA 8/2, d 256) compiled for sm_90a
#     (Hopper's TMA + wgmma projections; BLOCKC_GPU_ARCH=sm_90 for the
#     mma.sync kernels, sm_80 for an A100), its inputs and the float64
#     reference with bf16 rounding points (ref.npy), compared on the GPU
#     machine;
#   - the Llama-2-7B block in bf16 compiled for the same arch, timed at T =
#     128, 2048 and 8192, with per-kernel GPU times (the runtime's
#     blockcCudaProfile* functions) at T = 2048 and 8192;
#   - the same 7B bf16 block compiled with --decode (block_l7bd: the entry
#     and the KV-cached decode entry, head-major caches; block_l7bds: the
#     same with --kv-layout=bshd; block_l7bdu: each kernel its own launch,
#     -gpu-merge-launches=false; block_l7bdn: the norms as kernels of their
#     own, -gpu-gemv-norm-prologue=false), whose one-token steps run.sh
#     times at KV
#     cache lengths 512 and 4096 beside PyTorch's;
#   - the bound tables of the GPU emulator's profile of that block
#     (blockc-run --emulate --profile) at the profiled T in
#     BLOCKC_BOUND_SEQ_LENS (default 2048), which run.sh merges with the
#     measured times; without blockc-run --profile the bundle has none and
#     says so;
#   - the same block in f32 with -gpu-allow-tf32 (TF32 mma.sync kernels,
#     docs/GPU.md#tf32), timed beside PyTorch f32 with TF32 matmuls;
#   - benchmarks/gpu/torch_block.py for the peers on the same GPU,
#     benchmarks/gpu/run.sh, profile_merge.py and results.py.
# BLOCKC_GPU_CHIP=h200 (t4, a100, l4, h100, h200, b200) compiles the
# kernels and computes the bounds for that chip instead of the arch's
# default one: set it when you know which GPU the bundle will run on.
# On the GPU machine:  sh gpubench/run.sh   (OUT=DIR; about 3 minutes, at
# most 8 on an H100/H200), then commit $OUT/latest.json and $OUT/latest.md
# as benchmarks/results/gpu-<chip>/ (run.sh prints the directory).
set -eu
cd "$(dirname "$0")/.."
G=build/gpubench
PY=/usr/bin/python3
REF="$PY utils/blockc_ref.py"
ARCH=${BLOCKC_GPU_ARCH:-sm_90a}
CHIP=${BLOCKC_GPU_CHIP:-}
CHIP_FLAG=
if [ -n "$CHIP" ]; then CHIP_FLAG=-gpu-chip=$CHIP; fi
BOUND_SEQ_LENS=${BLOCKC_BOUND_SEQ_LENS:-2048}
BOUND_BLOCKS=${BLOCKC_BOUND_PROFILE_BLOCKS:-4}
BOUND_TIMEOUT=${BLOCKC_BOUND_TIMEOUT:-1800}
rm -rf "$G" && mkdir -p "$G"
sed 's/xf32>/xbf16>/g' examples/small/model.mlir > "$G/small.mlir"
build/bin/blockc-import --hf-config=benchmarks/configs/7b.json --dtype=bf16 \
  -o "$G/l7b.mlir"
build/bin/blockc-import --hf-config=benchmarks/configs/7b.json -o "$G/l7b32.mlir"
cp build/lib/libblockc_cuda_runtime.so benchmarks/gpu/torch_block.py \
  benchmarks/gpu/run.sh benchmarks/gpu/profile_merge.py \
  benchmarks/gpu/results.py "$G/"
cp /usr/lib/llvm-22/lib/libmlir_c_runner_utils.so.22.1 "$G/"
ln -s libmlir_c_runner_utils.so.22.1 "$G/libmlir_c_runner_utils.so"
# A block with head dim 128 (GQA 4/2, d 512), checked like the small one:
# on sm_90a its attention is the warpgroup kernel, which the small block's
# head dim 32 does not take.
build/bin/blockc-import --hf-config=benchmarks/gpu/hd128.json --dtype=bf16 \
  -o "$G/hd128.mlir"
# On sm_90a the 7B bf16 block also with the other two schedules of the
# warpgroup-MMA projections (docs/GPU.md): block_l7bp (persistent) and
# block_l7bc (cooperative, no producer warpgroup); the small block too
# (block_smallp, block_smallc), checked.
cp "$G/l7b.mlir" "$G/l7bd.mlir"
cp "$G/l7b.mlir" "$G/l7bds.mlir"
cp "$G/l7b.mlir" "$G/l7bdu.mlir"
cp "$G/l7b.mlir" "$G/l7bdn.mlir"
models="small hd128 l7b l7b32 l7bd l7bds l7bdu l7bdn"
if [ "$ARCH" = sm_90a ]; then
  cp "$G/l7b.mlir" "$G/l7bp.mlir"
  cp "$G/l7b.mlir" "$G/l7bc.mlir"
  cp "$G/small.mlir" "$G/smallp.mlir"
  cp "$G/small.mlir" "$G/smallc.mlir"
  models="$models l7bp l7bc smallp smallc"
fi
for m in $models; do
  flags= cflags=
  if [ "$m" = l7b32 ]; then flags=-gpu-allow-tf32 cflags=-DBLOCK_F32; fi
  if [ "$m" = l7bd ]; then flags=--decode; fi
  # The decode steps with each kernel launched on its own (the q, k and v
  # projections as three launches): the A/B of blockc-gpu-merge-launches.
  if [ "$m" = l7bdu ]; then flags="--decode -gpu-merge-launches=false"; fi
  # The decode steps with the norms as kernels of their own (not computed
  # by the projections' warps): the A/B of the norm prologue.
  if [ "$m" = l7bdn ]; then flags="--decode -gpu-gemv-norm-prologue=false"; fi
  if [ "$m" = l7bds ]; then
    flags="--decode --kv-layout=bshd" cflags=-DBLOCK_KV_BSHD
  fi
  case $m in
  l7bp | smallp) flags=-gpu-warpgroup-schedule=persistent ;;
  l7bc | smallc) flags=-gpu-warpgroup-schedule=cooperative ;;
  esac
  build/bin/blockc "$G/$m.mlir" -target=nvptx -gpu-arch="$ARCH" $CHIP_FLAG \
    $flags -gpu-binary=fatbin -emit=obj -o "$G/$m.o" --header="$G/$m.h"
  cc -std=c99 -O2 -Wall -Werror $cflags -I"$G" -DBLOCK_HEADER="\"$m.h\"" \
    benchmarks/gpu/block_gpu.c "$G/$m.o" -lm -L"$G" \
    -lmlir_c_runner_utils -lblockc_cuda_runtime \
    -L/usr/local/cuda/lib64/stubs -lcuda -Wl,-rpath,'$ORIGIN' -o "$G/block_$m"
done
rm -f "$G/l7b32.mlir" "$G/l7bd.mlir" "$G/l7bds.mlir" "$G/l7bdu.mlir" "$G/l7bdn.mlir" "$G/l7bp.mlir" \
  "$G/l7bc.mlir" "$G/smallp.mlir" "$G/smallc.mlir" "$G/hd128.mlir"
# Which kernels are tensor-core GEMMs (mma.sync or wgmma).
build/bin/blockc "$G/l7b.mlir" -target=nvptx -gpu-arch="$ARCH" $CHIP_FLAG \
  -emit=ptx -o "$G/l7b.ptx"
awk '/^\.visible \.entry/ { name = $3; sub(/\(.*/, "", name) }
     /mma\.sync|wgmma\.mma_async/ && name != "" { print name; name = "" }' \
  "$G/l7b.ptx" > "$G/tensor_core_kernels.txt"
rm "$G/l7b.ptx"
$REF gen-weights --config examples/small/config.json --seed 5 -o "$G/w.safetensors"
$REF gen-input --config examples/small/config.json --seed 6 --batch 2 \
  --seq-len 130 -o "$G/x.npy"
$PY test/blockc/Inputs/raw_io.py export "$G/w.safetensors" "$G/x.npy" "$G" llama
$REF run --config examples/small/config.json --dtype bf16 \
  --weights "$G/w.safetensors" --input "$G/x.npy" -o "$G/ref.npy"
rm "$G/w.safetensors"
mkdir "$G/hd128"
$REF gen-weights --config benchmarks/gpu/hd128.json --seed 7 \
  -o "$G/hd128/w.safetensors"
$REF gen-input --config benchmarks/gpu/hd128.json --seed 8 --batch 2 \
  --seq-len 300 -o "$G/hd128/x.npy"
$PY test/blockc/Inputs/raw_io.py export "$G/hd128/w.safetensors" \
  "$G/hd128/x.npy" "$G/hd128" llama
$REF run --config benchmarks/gpu/hd128.json --dtype bf16 \
  --weights "$G/hd128/w.safetensors" --input "$G/hd128/x.npy" \
  -o "$G/hd128/ref.npy"
rm "$G/hd128/w.safetensors"

# The emulator's bound tables (the kernels' modelled traffic, FLOPs and
# lower-bound time on the bundle's arch) for the profiled shapes.
bound_note=
if build/bin/blockc-run --help-hidden 2>/dev/null |
    grep -q -- '-profile-blocks'; then
  for t in $BOUND_SEQ_LENS; do
    echo "gpu-bench: the emulator's profile of the 7B block at T = $t" \
      "($BOUND_BLOCKS blocks per kernel)"
    if timeout "$BOUND_TIMEOUT" build/bin/blockc-run "$G/l7b.mlir" \
        -target=nvptx --emulate --profile --profile-blocks="$BOUND_BLOCKS" \
        -gpu-arch="$ARCH" $CHIP_FLAG --random-weights --seq-len="$t" \
        --batch=1 \
        > "$G/bound-bf16-T$t.txt" 2> "$G/bound-bf16-T$t.err" &&
        grep -q '^kernel ' "$G/bound-bf16-T$t.txt"; then
      rm "$G/bound-bf16-T$t.err"
    else
      echo "gpu-bench: the emulator's profile at T = $t failed or printed" \
        "no table (see $G/bound-bf16-T$t.err): no bound table for it" >&2
      rm -f "$G/bound-bf16-T$t.txt"
      bound_note="$bound_note the emulator profile at T = $t failed;"
    fi
  done
else
  echo "gpu-bench: build/bin/blockc-run has no --profile (the GPU" \
    "emulator's bound profile): the bundle has no bound tables, and its" \
    "per-kernel tables will have measured times only" >&2
  bound_note="blockc-run had no --profile: no bound tables"
fi

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=false
git diff --quiet HEAD 2>/dev/null || dirty=true
built=$(date -u '+%Y-%m-%d %H:%M UTC')
cat > "$G/bundle.env" <<EOF
ARCH=$ARCH
BLOCKC_COMMIT=$commit
EOF
$PY - "$G/bundle.json" "$commit" "$dirty" "$ARCH" "$CHIP" "$built" \
  "$bound_note" <<'EOF'
import json, os, sys
path, commit, dirty, arch, chip, built, note = sys.argv[1:]
bound = sorted(f for f in os.listdir(os.path.dirname(path))
               if f.startswith("bound-") and f.endswith(".txt"))
with open(path, "w") as f:
    json.dump({"blockc_commit": commit, "blockc_dirty": dirty == "true",
               "arch": arch, "chip": chip or None, "built": built,
               "bound_tables": bound, "bound_note": note.strip() or None},
              f, indent=1)
    f.write("\n")
EOF
echo "bundle: $G ($(du -sh "$G" | cut -f1)); run: sh $G/run.sh"
