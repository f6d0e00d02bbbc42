#!/bin/bash
# A/B: main's build (old) vs wt-lead's (new), 7B one token, 1 thread.
for r in 1 2 3; do
  for t in ${TYPES:-int4 int4g128}; do
    o=$(/work/main/build/bin/blockc-run /tmp/x7/7b.$t.mlir --random-weights --random-input --seq-len=1 --repeat=31 --threads=1 $EXTRA 2>&1 | grep -o 'median [0-9.]* [mu]*s' | head -1)
    n=$(/tmp/inlead.sh build/bin/blockc-run /tmp/x7/7b.$t.mlir --random-weights --random-input --seq-len=1 --repeat=31 --threads=1 $EXTRA 2>&1 | grep -o 'median [0-9.]* [mu]*s' | head -1)
    echo "round $r $t old $o new $n"
  done
done
