#!/usr/bin/env bash
# Runs every blockc fuzz target for SECONDS each (default 60) on a copy of
# its checked-in seed corpus (fuzz/corpus/<target>), in the instrumented
# build ./build-san (ASan + UBSan + libFuzzer). Prints, per target, the
# executions, the final coverage and the findings (crash/leak/timeout
# files); exits nonzero if any target found something.
#   ./scripts/fuzz.sh            # 60 s per target
#   ./scripts/fuzz.sh 600        # the documented 10-minute run
#   ./scripts/fuzz.sh 5 ir       # one target
#   ./scripts/fuzz.sh --smoke    # CI: fixed seed, fixed number of runs
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SMOKE=0
if [ "${1:-}" = "--smoke" ]; then
  SMOKE=1
  shift
  SECONDS_PER_TARGET=120
else
  SECONDS_PER_TARGET="${1:-60}"
  shift || true
fi
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=(ir tensor-files hf-config pipeline tokenizer)
source "$ROOT/scripts/sanitize-setup.sh" || exit 1
# sanitize-setup.sh runs under `set -e`; this script collects exit codes
# itself (a grep that counts zero findings exits 1).
set +e

step "Building the fuzz targets"
ninja -C "$SAN_BUILD" $(printf 'blockc-fuzz-%s ' "${TARGETS[@]}") || die "fuzz build failed"

WORK="$(mktemp -d /tmp/blockc-fuzz.XXXXXX)"
status=0
printf '\n%-14s %10s %8s %9s %s\n' target seconds execs coverage findings
for t in "${TARGETS[@]}"; do
  mkdir -p "$WORK/$t/corpus" "$WORK/$t/artifacts"
  cp "$ROOT/fuzz/corpus/$t/"* "$WORK/$t/corpus/"
  limits=(-max_total_time="$SECONDS_PER_TARGET")
  if [ $SMOKE -eq 1 ]; then
    # Deterministic: the same mutations on every machine.
    runs=2000
    [ "$t" = pipeline ] && runs=40
    limits+=(-seed=1 -runs=$runs)
  fi
  "$SAN_BUILD/bin/blockc-fuzz-$t" "$WORK/$t/corpus" "${limits[@]}" \
      -timeout=60 -rss_limit_mb=4096 \
      -print_final_stats=1 -artifact_prefix="$WORK/$t/artifacts/" \
      > "$WORK/$t/log" 2>&1
  rc=$?
  execs=$(grep -m1 'stat::number_of_executed_units' "$WORK/$t/log" | awk '{print $2}')
  cov=$(grep -o 'cov: [0-9]*' "$WORK/$t/log" | tail -1 | awk '{print $2}')
  # slow-unit-* files are inputs slower than libFuzzer's report threshold,
  # not failures; crash-, leak-, timeout- and oom- files are findings.
  findings=$(ls "$WORK/$t/artifacts" | grep -vc '^slow-unit-' || true)
  printf '%-14s %10s %8s %9s %s\n' "$t" "$SECONDS_PER_TARGET" "${execs:-?}" "${cov:-?}" "$findings"
  if [ $rc -ne 0 ] || [ "$findings" -ne 0 ]; then
    status=1
    echo "  finding(s) in $WORK/$t/artifacts; log: $WORK/$t/log"
    grep -m5 -E 'ERROR|runtime error|deadly signal' "$WORK/$t/log" | sed 's/^/  /'
  fi
done
if [ $status -eq 0 ]; then
  echo "fuzz: no findings (logs in $WORK)"
else
  echo "fuzz: FINDINGS (see above)"
fi
exit $status
