#!/bin/sh
# Prints ptxas's report (-v, file $2) on each kernel of PTX file $1 that has
# mma.sync but no barrier (the tensor-core split-KV kernels of decode steps).
kernels=$(awk '/\.entry/ { e = $3; sub(/\(.*/, "", e) }
  /mma\.sync\.aligned/ { m[e] = 1 }
  /bar\.sync|barrier\.sync/ { bar[e] = 1 }
  END { for (e in m) if (!(e in bar)) print e }' "$1" | sort)
test -n "$kernels" || { echo "no mma.sync kernel without a barrier in $1"; exit 1; }
for k in $kernels; do
  grep -A3 "entry function '$k'" "$2"
done
