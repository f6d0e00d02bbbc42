#!/bin/sh
# Prints ptxas's report (-v) on each kernel of PTX file $1 that lowers its
# registers to $3 (setmaxnreg.dec), from ptxas's output $2, in PTX order.
kernels=$(awk -v n="$3" '/\.entry/ { e = $3 }
  /setmaxnreg\.dec\.sync\.aligned\.u32/ { v = $2; sub(";", "", v); if (v == n && e != "") { sub(/\(.*/, "", e); print e; e = "" } }' "$1")
test -n "$kernels" || { echo "no kernel with setmaxnreg.dec $3 in $1"; exit 1; }
for kernel in $kernels; do
  grep -A3 "entry function '$kernel'" "$2"
done
