#!/bin/sh
# Builds build/gpurun: a self-contained bundle that runs a blockc NVPTX block
# on a real GPU (a machine with the CUDA driver but no MLIR or LLVM): the
# tiny test block (GQA, RoPE, SwiGLU) compiled here for sm_90 as a fatbin
# object, the C driver of test/blockc/Inputs/main_gpu.c linked against
# libblockc_cuda_runtime (libcuda resolves on the GPU machine), the runtime
# libraries, the inputs and the NumPy reference output. On the GPU machine:
#   sh build/gpurun/run.sh        (writes $OUT/y.bin)
# then here:
#   python3 test/blockc/Inputs/raw_io.py import <y.bin> 2 5 32 y.npy
#   python3 utils/blockc_ref.py compare y.npy build/gpurun/ref.npy --tol 1e-4
set -eu
cd "$(dirname "$0")/.."
G=build/gpurun
PY=/usr/bin/python3
rm -rf "$G" && mkdir -p "$G"
build/bin/blockc test/blockc/Inputs/tiny.mlir -target=nvptx -gpu-arch=sm_90 \
  -gpu-binary=fatbin -emit=obj -o "$G/tiny.o"
sed 's/blockcEmuLastError/blockcCudaLastError/g' test/blockc/Inputs/main_gpu.c \
  > "$G/main_cuda.c"
cp test/blockc/Inputs/tiny_io.h build/lib/libblockc_cuda_runtime.so "$G/"
cp /usr/lib/llvm-22/lib/libmlir_c_runner_utils.so.22.1 "$G/"
ln -s libmlir_c_runner_utils.so.22.1 "$G/libmlir_c_runner_utils.so"
cc -std=c99 -Wall -Werror -I"$G" "$G/main_cuda.c" "$G/tiny.o" -lm -L"$G" \
  -lmlir_c_runner_utils -lblockc_cuda_runtime \
  -L/usr/local/cuda/lib64/stubs -lcuda -Wl,-rpath,'$ORIGIN' -o "$G/main"
REF="$PY utils/blockc_ref.py"
$REF gen-weights --config test/blockc/Inputs/tiny.json --seed 3 -o "$G/w.safetensors"
$REF gen-input --config test/blockc/Inputs/tiny.json --seed 4 --batch 2 \
  --seq-len 5 -o "$G/x.npy"
$PY test/blockc/Inputs/raw_io.py export "$G/w.safetensors" "$G/x.npy" "$G" llama
$REF run --config test/blockc/Inputs/tiny.json --weights "$G/w.safetensors" \
  --input "$G/x.npy" -o "$G/ref.npy"
cat > "$G/run.sh" <<'RUN'
#!/bin/sh
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv
./main . 2 5 2>err.txt; echo "rc=$?"; echo "stderr:"; cat err.txt
mkdir -p "${OUT:-out}" && cp y.bin "${OUT:-out}/y.bin"
./main . 2 0; echo "rc(T=0)=$?"
RUN
echo "bundle: $G ($(du -sh "$G" | cut -f1)); run: sh $G/run.sh"
