#!/usr/bin/env bash
# README command 2: set up, build, run the whole test suite (lit + GoogleTest
# through lit) and end with one PASS/FAIL line.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/setup.sh" || exit 1

step "Running the test suite (check-blockc: lit tests and GoogleTest unit tests)"
start=$(date +%s)
ninja -C "$BUILD" check-blockc
status=$?
secs=$(( $(date +%s) - start ))
if [ $status -eq 0 ]; then
  printf '\nblockc test suite: PASS (all lit and unit tests passed in %ss)\n' "$secs"
else
  printf '\nblockc test suite: FAIL (see the failing tests above; %ss)\n' "$secs"
fi
exit $status
