#!/bin/sh
# build/gpudiag: the small bf16 block under each projection schedule, checked on the GPU
set -eu
cd /work/main
G=build/gpudiag
rm -rf $G && mkdir -p $G
cp build/gpubench/x.bin build/gpubench/w?.bin build/gpubench/ref.npy build/gpubench/torch_block.py \
   build/gpubench/libblockc_cuda_runtime.so build/gpubench/libmlir_c_runner_utils.so.22.1 $G/
ln -s libmlir_c_runner_utils.so.22.1 $G/libmlir_c_runner_utils.so
v() { # name arch flags model
  n=$1 arch=$2 flags=$3 m=$4 cflags=${5:-}
  build/bin/blockc $m -target=nvptx -gpu-arch=$arch -gpu-chip=h200 $flags -gpu-binary=fatbin -emit=obj -o $G/$n.o --header=$G/$n.h
  build/bin/blockc $m -target=nvptx -gpu-arch=$arch -gpu-chip=h200 $flags -emit=ptx -o $G/$n.ptx
  cc -std=c99 -O2 -Wall -Werror $cflags -I$G -DBLOCK_HEADER="\"$n.h\"" benchmarks/gpu/block_gpu.c $G/$n.o -lm -L$G \
    -lmlir_c_runner_utils -lblockc_cuda_runtime -L/usr/local/cuda/lib64/stubs -lcuda -Wl,-rpath,'$ORIGIN' -o $G/b_$n
  rm $G/$n.o
}
v spec sm_90a "" build/gpubench/small.mlir
v pers sm_90a "-gpu-warpgroup-schedule=persistent" build/gpubench/small.mlir
v coop sm_90a "-gpu-warpgroup-schedule=cooperative" build/gpubench/small.mlir
v mma sm_90 "" build/gpubench/small.mlir
v l7bcd sm_90a "-gpu-warpgroup-schedule=cooperative --decode" build/gpubench/l7b.mlir
cp build/gpubench/block_l7bc $G/
cat > $G/run.sh <<'RUN'
cd "$(dirname "$0")"
O=${OUT:-out}; mkdir -p $O
for n in spec pers coop mma; do
  echo "== $n"; rm -f y.bin; timeout 60 ./b_$n check . 2 130 256 64 688 2>&1 | tail -3
  [ -f y.bin ] && timeout 60 python3 torch_block.py check y.bin ref.npy 2>&1 | tail -2
done
echo "== sanitizer spec"
timeout 120 compute-sanitizer --print-limit 4 ./b_spec check . 2 130 256 64 688 > $O/san-spec.txt 2>&1; head -c 6000 $O/san-spec.txt
echo "== sanitizer pers"
timeout 120 compute-sanitizer --print-limit 2 ./b_pers check . 2 130 256 64 688 > $O/san-pers.txt 2>&1; grep -m8 -A6 'Invalid\|Error' $O/san-pers.txt | head -40
echo "== coop 7B profile"
for t in 2048 8192; do timeout 60 ./block_l7bc time 1 $t 4096 4096 11008 5 $O/prof-coop-T$t.json 2>&1 | grep -v '^$' | tail -25; done
echo "== coop decode"
for l in 512 4096; do timeout 60 ./b_l7bcd decode 1 $l 4096 4096 11008 128 20 2>&1 | tail -3; done
RUN
du -sh $G
