#!/bin/bash
# Builds wsc (if needed) and runs the whole lit suite. Ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh || { echo "0 passed, 1 failed"; exit 1; }
log=$(mktemp)
/usr/lib/llvm-22/bin/lit -sv --timeout=600 build/test 2>&1 | tee "$log" | grep -E "^(FAIL|UNRESOLVED|TIMEOUT|XPASS):|^\*\*\*\*\*\*\*\*\*\*\*\*\*\*\*\*\*\*\*\* TEST" || true
count() { awk -v k="$1" '$1 == k":" {print $2}' "$log" | tail -n 1; }
passed=$(( $(count Passed || true) + $(count Expectedly || true) ))
failed=0
for k in Failed Unresolved Timed Unexpectedly; do
  n=$(count "$k"); failed=$(( failed + ${n:-0} ))
done
tail -n 12 "$log" | grep -E "^ +(Passed|Failed|Unsupported|Unresolved|Timed Out|Expectedly|Unexpectedly)" || true
rm -f "$log"
echo "${passed} passed, ${failed} failed"
[[ $failed -eq 0 && $passed -gt 0 ]]
