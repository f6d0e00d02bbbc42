#!/bin/bash
# Section A of exp.sh only, 5 rounds, order alternating.
BIN=/work/main/build/bin/blockc-run
M=/tmp/int4m/models
one() { local res
  res=$(env $2 $BIN $3 --random-weights --random-input --seq-len=1 --repeat=41 --threads=2 --no-cache 2>&1 | grep -o "median [0-9.]* [mu]\?s" | head -1)
  echo "r$round $1 $res"; }
for round in 1 2 3 4 5; do
  set -- "g32 X=1 pair.f32.int4.g32" "g32-scalebytes0 BLOCKC_EXP_SCALE0=a pair.f32.int4.g32" "g32-tablehoisted BLOCKC_EXP_SCALE0=c pair.f32.int4.g32" "g128 X=1 pair.f32.int4.g128" "act-g32 X=1 pair.f32.int4.g32.act"
  cases=("$@"); n=${#cases[@]}
  for i in $(seq 0 $((n-1))); do
    idx=$i; [ $((round % 2)) = 0 ] && idx=$((n-1-i))
    read l e m <<< "${cases[$idx]}"
    one $l $e $M/$m.mlir
  done
  $M/triad 2 3 256 | grep threads=2 | sed "s/^/r$round /"
done
echo A2-END $(date -u +%T)
