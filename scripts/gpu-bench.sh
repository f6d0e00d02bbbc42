#!/bin/sh
# Builds build/gpubench: a self-contained bundle that checks and times bf16
# blocks on tensor cores on a real GPU (a machine with the CUDA driver and
# PyTorch but no MLIR), beside PyTorch bf16 eager (benchmarks/gpu/README.md):
#   - the small example block in bf16 (GQA 8/2, d 256) compiled for sm_90a
#     (Hopper's TMA + wgmma projections; BLOCKC_GPU_ARCH=sm_90 for the
#     mma.sync kernels, sm_80 for an A100),
#     its inputs and the float64 reference with bf16 rounding points: the
#     GPU's output goes to $OUT/y.bin;
#   - the Llama-2-7B block in bf16 compiled for the same arch, timed at T = 128,
#     2048 and 8192 with per-kernel GPU times (BLOCKC_CUDA_PROFILE);
#   - the same block in f32 with -gpu-allow-tf32 (TF32 mma.sync kernels,
#     docs/GPU.md#tf32), timed beside PyTorch f32 with TF32 matmuls;
#   - benchmarks/gpu/torch_block.py for the peers on the same GPU.
# On the GPU machine:  sh build/gpubench/run.sh
# then here:
#   python3 test/blockc/Inputs/raw_io.py import <y.bin> 2 130 256 y.npy
#   python3 utils/blockc_ref.py compare y.npy build/gpubench/ref.npy --dtype bf16
set -eu
cd "$(dirname "$0")/.."
G=build/gpubench
PY=/usr/bin/python3
REF="$PY utils/blockc_ref.py"
ARCH=${BLOCKC_GPU_ARCH:-sm_90a}
rm -rf "$G" && mkdir -p "$G"
sed 's/xf32>/xbf16>/g' examples/small/model.mlir > "$G/small.mlir"
build/bin/blockc-import --hf-config=benchmarks/configs/7b.json --dtype=bf16 \
  -o "$G/l7b.mlir"
build/bin/blockc-import --hf-config=benchmarks/configs/7b.json -o "$G/l7b32.mlir"
cp build/lib/libblockc_cuda_runtime.so benchmarks/gpu/torch_block.py "$G/"
cp /usr/lib/llvm-22/lib/libmlir_c_runner_utils.so.22.1 "$G/"
ln -s libmlir_c_runner_utils.so.22.1 "$G/libmlir_c_runner_utils.so"
for m in small l7b l7b32; do
  flags= cflags=
  if [ "$m" = l7b32 ]; then flags=-gpu-allow-tf32 cflags=-DBLOCK_F32; fi
  build/bin/blockc "$G/$m.mlir" -target=nvptx -gpu-arch="$ARCH" $flags \
    -gpu-binary=fatbin -emit=obj -o "$G/$m.o" --header="$G/$m.h"
  cc -std=c99 -O2 -Wall -Werror $cflags -I"$G" -DBLOCK_HEADER="\"$m.h\"" \
    benchmarks/gpu/block_gpu.c "$G/$m.o" -lm -L"$G" \
    -lmlir_c_runner_utils -lblockc_cuda_runtime \
    -L/usr/local/cuda/lib64/stubs -lcuda -Wl,-rpath,'$ORIGIN' -o "$G/block_$m"
done
rm "$G/l7b32.mlir"
# Which kernels are tensor-core GEMMs (for the per-kernel table).
build/bin/blockc "$G/l7b.mlir" -target=nvptx -gpu-arch="$ARCH" -emit=ptx \
  -o "$G/l7b.ptx"
awk '/^\.visible \.entry/ { name = $3; sub(/\(.*/, "", name) }
     /mma\.sync/ && name != "" { print name; name = "" }' "$G/l7b.ptx" \
  > "$G/tensor_core_kernels.txt"
rm "$G/l7b.ptx"
$REF gen-weights --config examples/small/config.json --seed 5 -o "$G/w.safetensors"
$REF gen-input --config examples/small/config.json --seed 6 --batch 2 \
  --seq-len 130 -o "$G/x.npy"
$PY test/blockc/Inputs/raw_io.py export "$G/w.safetensors" "$G/x.npy" "$G" llama
$REF run --config examples/small/config.json --dtype bf16 \
  --weights "$G/w.safetensors" --input "$G/x.npy" -o "$G/ref.npy"
rm "$G/w.safetensors"
cat > "$G/run.sh" <<'RUN'
#!/bin/sh
cd "$(dirname "$0")"
OUT=${OUT:-out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv
./block_small check . 2 130 256 64 688 && cp y.bin "$OUT/y.bin"
echo "tensor-core kernels: $(tr '\n' ' ' < tensor_core_kernels.txt)"
for t in 128 2048 8192; do
  ./block_l7b time 1 $t 4096 4096 11008 10
done
BLOCKC_CUDA_PROFILE=1 ./block_l7b time 1 2048 4096 4096 11008 5
BLOCKC_CUDA_PROFILE=1 ./block_l7b time 1 8192 4096 4096 11008 3
python3 torch_block.py peak
for t in 2048 8192; do python3 torch_block.py gemm $t; done
for t in 128 2048 8192; do python3 torch_block.py block $t; done
python3 torch_block.py decode 4096
echo "TF32 (f32 blocks, -gpu-allow-tf32; PyTorch with allow_tf32):"
for t in 2048 8192; do ./block_l7b32 time 1 $t 4096 4096 11008 5; done
BLOCKC_CUDA_PROFILE=1 ./block_l7b32 time 1 2048 4096 4096 11008 3
python3 torch_block.py peak tf32
python3 torch_block.py gemm 2048 tf32
for t in 2048 8192; do python3 torch_block.py block $t tf32; done
RUN
echo "bundle: $G ($(du -sh "$G" | cut -f1)); run: sh $G/run.sh"
