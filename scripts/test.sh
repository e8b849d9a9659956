#!/bin/bash
# Builds wsc (if needed) and runs the whole lit suite. Ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh || { echo "0 passed, 1 failed"; exit 1; }
log=$(mktemp)
/usr/lib/llvm-22/bin/lit -sv --timeout=900 build/test > "$log" 2>&1
grep -E "^(FAIL|UNRESOLVED|TIMEOUT|XPASS):" "$log" || true
# lit's summary lines: "  Passed: 45 (100.00%)", "  Failed: 2 (4.44%)", ...
read -r passed failed < <(awk '
  /^ *(Passed|Expectedly Failed):/ { p += $(NF - 1) }
  /^ *(Failed|Unresolved|Timed Out|Unexpectedly Passed):/ { f += $(NF - 1) }
  END { print p + 0, f + 0 }' "$log")
if [[ $failed -gt 0 ]]; then
  sed -n '/^\*\*\*\*\*\*\*\*\*\*\*\*\*\*\*\*\*\*\*\* TEST/,/^\*\*\*\*\*\*\*\*\*\*$/p' "$log" | tail -n 200
fi
grep -E "^ +(Passed|Failed|Unsupported|Unresolved|Timed Out|Expectedly|Unexpectedly)" "$log" || true
rm -f "$log"
echo "${passed} passed, ${failed} failed"
[[ $failed -eq 0 && $passed -gt 0 ]]
