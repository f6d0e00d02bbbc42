#!/bin/bash
# Interleaved A/B of blockc-run: old (copied aside at 96f6233) vs new build.
# usage: ab.sh ROUNDS THREADS MODEL [extra blockc-run flags...]
rounds=$1; th=$2; model=$3; shift 3
for r in $(seq $rounds); do
  for v in old new; do
    if [ $v = old ]; then bin=/tmp/bf16p/old/blockc-run; else bin=/work/wt-bf16/build/bin/blockc-run; fi
    out=$($bin $model --random-weights --random-input --seq-len=${SEQ:-1} --repeat=${REP:-31} --threads=$th --no-cache "$@" 2>&1)
    med=$(echo "$out" | grep -oP 'median \K[0-9.]+ ms')
    sum=$(echo "$out" | grep -oP 'checksum \K.*')
    echo "round=$r $v threads=$th flags='$*' median=$med  $sum"
  done
done
