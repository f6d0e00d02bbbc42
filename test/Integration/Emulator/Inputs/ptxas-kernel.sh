#!/bin/sh
# Prints ptxas's report (-v) on the kernels of PTX file $1, from ptxas's
# output $2, in PTX order, each once: with $3 a number, the kernels that
# lower their registers to $3 (setmaxnreg.dec); with $3 = ldmatrix-trans,
# those with ldmatrix.trans (the mma.sync attention kernels: V loaded
# transposed; the tensor-core GEMMs read both operands K-major).
kernels=$(awk -v n="$3" '/\.entry/ { e = $3; sub(/\(.*/, "", e) }
  (n == "ldmatrix-trans" && /ldmatrix\.sync\.aligned\.m8n8\.x4\.trans/) ||
  (n != "ldmatrix-trans" && /setmaxnreg\.dec\.sync\.aligned\.u32/ && $2 == n ";") {
    if (e != "" && !(e in m)) { m[e] = 1; print e }
  }' "$1")
test -n "$kernels" || { echo "no kernel with ${3} in $1"; exit 1; }
for kernel in $kernels; do
  grep -A3 "entry function '$kernel'" "$2"
done
