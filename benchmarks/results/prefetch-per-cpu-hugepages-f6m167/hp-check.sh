#!/bin/bash
# What pages a blockc-run process holds its weights on: starts the run with
# many repeats and samples /proc/PID/smaps_rollup once the steps run.
# usage: [ENV=...] hp-check.sh LABEL BIN MODEL [blockc-run flags...]
label=$1; bin=$2; model=$3; shift 3
$bin $model --random-input --seq-len=1 --repeat=400 --threads=1 --no-cache "$@" > /dev/null 2>&1 &
pid=$!
# Wait until the steps run (the process stops growing).
prev=0
for i in $(seq 120); do
  sleep 1
  rss=$(awk '/^Rss:/{print $2}' /proc/$pid/smaps_rollup 2>/dev/null)
  [ -z "$rss" ] && break
  if [ "$rss" = "$prev" ] && [ "$i" -gt 5 ]; then break; fi
  prev=$rss
done
echo "$label flags='$*' env='${BLOCKC_HUGE_PAGES:+BLOCKC_HUGE_PAGES=$BLOCKC_HUGE_PAGES}' $(grep -E '^(Rss|Anonymous|AnonHugePages|FilePmdMapped|Shared_Clean|Private_Clean):' /proc/$pid/smaps_rollup | tr -s ' ' | tr '\n' ' ')"
kill $pid 2>/dev/null; wait $pid 2>/dev/null
