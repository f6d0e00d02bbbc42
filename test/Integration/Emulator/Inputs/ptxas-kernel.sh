#!/bin/sh
# Prints ptxas's report (-v) on the kernel of PTX file $1 that lowers its
# registers to $3 (setmaxnreg.dec), from ptxas's output $2.
kernel=$(awk -v n="$3" '/\.entry/ { e = $3 }
  /setmaxnreg\.dec\.sync\.aligned\.u32/ { v = $2; sub(";", "", v); if (v == n) { sub(/\(.*/, "", e); print e; exit } }' "$1")
test -n "$kernel" || { echo "no kernel with setmaxnreg.dec $3 in $1"; exit 1; }
grep -A3 "entry function '$kernel'" "$2"
