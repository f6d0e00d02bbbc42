#!/bin/bash
# Interleaved A/B of the prefetch distance on this AMD machine, 7B block, one token, 1 thread.
B=/work/main/build/bin
M=/tmp/x7
R=${ROUNDS:-3}
for r in $(seq 1 $R); do
  for t in f32 bf16 int8 int4 int4g128 int8act int4act; do
    for pf in ${PFS:-0 1024}; do
      out=$($B/blockc-run $M/7b.$t.mlir --random-weights --random-input --seq-len=1 --repeat=31 --threads=1 -cpu-prefetch-bytes=$pf 2>&1)
      med=$(echo "$out" | grep -o 'median [0-9.]* [mu]*s' | head -1)
      echo "round $r type $t pf $pf $med"
    done
  done
done
