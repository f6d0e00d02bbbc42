#!/bin/bash
# Runs inside the lock with /work/wt-int4 bound at /work/main.
# A: bytes vs instructions of the weight-only int4 decode kernel (pair, T=1, 2 threads)
# B: 7B block, T=1, 1 thread: f32 / int4 g32 / int4 g128 / int4+act g32.
BIN=/work/main/build/bin/blockc-run
M=/tmp/int4m/models
ROUNDS=${ROUNDS:-3}
one() { # label env model T threads repeat
  local res
  res=$(env $2 $BIN $3 --random-weights --random-input --seq-len=$4 --repeat=$6 --threads=$5 --no-cache 2>&1 | grep -o "median [0-9.]* [mu]\?s" | head -1)
  echo "r$round $1 $res"
}
/tmp/int4m/models/triad 2 5 256 | sed "s/^/pre /"
for round in $(seq 1 $ROUNDS); do
  one g32 X=1 $M/pair.f32.int4.g32.mlir 1 2 31
  one g32-scalebytes0 BLOCKC_EXP_SCALE0=a $M/pair.f32.int4.g32.mlir 1 2 31
  one g32-tablehoisted BLOCKC_EXP_SCALE0=c $M/pair.f32.int4.g32.mlir 1 2 31
  one g128 X=1 $M/pair.f32.int4.g128.mlir 1 2 31
  one act-g32 X=1 $M/pair.f32.int4.g32.act.mlir 1 2 31
  /tmp/int4m/models/triad 2 3 256 | sed "s/^/r$round /"
done
echo A-END $(date -u +%T)
for round in $(seq 1 $ROUNDS); do
  one 7b-f32 X=1 /tmp/x7/7b.f32.mlir 1 1 21
  one 7b-int4-g32 X=1 /tmp/x7/7b.int4.mlir 1 1 21
  one 7b-int4-g128 X=1 /tmp/x7/7b.int4g128.mlir 1 1 21
  one 7b-int4act-g32 X=1 /tmp/x7/7b.int4act.mlir 1 1 21
done
/tmp/int4m/models/triad 1 5 256 | sed "s/^/post /"
echo B-END $(date -u +%T)
