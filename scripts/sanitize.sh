#!/usr/bin/env bash
# The whole test suite (lit + GoogleTest) on the ASan + UBSan build in
# ./build-san. Ends with one PASS/FAIL line like test.sh.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/sanitize-setup.sh" || exit 1
set +e  # sanitize-setup.sh turned on -e; the exit code is collected below
step "Running the test suite under ASan + UBSan ($SAN_BUILD)"
start=$(date +%s)
ninja -C "$SAN_BUILD" check-blockc
status=$?
secs=$(( $(date +%s) - start ))
if [ $status -eq 0 ]; then
  printf '\nblockc sanitizer suite: PASS (%ss)\n' "$secs"
else
  printf '\nblockc sanitizer suite: FAIL (%ss)\n' "$secs"
fi
exit $status
