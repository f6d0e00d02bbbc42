#!/bin/sh
# Prints ptxas's report (-v, file $2) on each kernel of PTX file $1 that has
# ldmatrix.trans (the mma.sync attention kernels: V loaded transposed; the
# tensor-core GEMMs read both operands K-major), in PTX order.
kernels=$(awk '/\.entry/ { e = $3; sub(/\(.*/, "", e) }
  /ldmatrix\.sync\.aligned\.m8n8\.x4\.trans/ { if (!(e in m)) { m[e] = 1; print e } }' "$1")
test -n "$kernels" || { echo "no ldmatrix.trans kernel in $1"; exit 1; }
for k in $kernels; do
  grep -A3 "entry function '$k'" "$2"
done
