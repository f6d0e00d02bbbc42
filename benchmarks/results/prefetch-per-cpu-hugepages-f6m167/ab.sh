#!/bin/bash
# Interleaved A/B of blockc-run builds on the 7B block at one token.
# usage: ab.sh ROUNDS MODEL LABEL=BIN[@ENV] ... -- [extra blockc-run flags...]
# Each variant is LABEL=PATH-TO-blockc-run, optionally @VAR=VALUE for the
# environment (e.g. new-nohp=/path/blockc-run@BLOCKC_HUGE_PAGES=0), and
# optionally %FLAGS (comma-separated extra flags for that variant only;
# --weights=FILE there replaces --random-weights).
rounds=$1; model=$2; shift 2
variants=()
while [ "$1" != "--" ]; do variants+=("$1"); shift; done
shift
for r in $(seq $rounds); do
  for v in "${variants[@]}"; do
    label=${v%%=*}; rest=${v#*=}
    flags=""; if [[ $rest == *%* ]]; then flags=${rest#*%}; flags=${flags//,/ }; rest=${rest%%%*}; fi
    envv=""; if [[ $rest == *@* ]]; then envv=${rest#*@}; rest=${rest%%@*}; fi
    bin=$rest
    w=--random-weights; [[ $flags == *--weights=* ]] && w=""
    out=$(env $envv $bin $model $w --random-input --seq-len=${SEQ:-1} \
          --repeat=${REP:-15} --threads=${TH:-1} --no-cache "$@" $flags 2>&1)
    med=$(echo "$out" | grep -oP 'median \K[0-9.]+ ms')
    sum=$(echo "$out" | grep -oP 'checksum \K.*')
    echo "round=$r $label env='$envv' flags='$* $flags' median=$med  $sum"
  done
done
