# Sourced by scripts/test.sh and scripts/sanitize.sh: run_lit TIMEOUT DIR...
# runs lit on the directories, prints the tests that failed (with the output
# of the first ones) and lit's summary, and sets `passed` and `failed`.
run_lit() {
  local timeout=$1 log
  shift
  log=$(mktemp)
  /usr/lib/llvm-22/bin/lit -sv --timeout="$timeout" "$@" >"$log" 2>&1
  grep -E "^(FAIL|UNRESOLVED|TIMEOUT|XPASS):" "$log" || true
  # lit's summary lines: "  Passed: 45 (100.00%)", "  Failed: 2 (4.44%)", ..., padded
  # to one width when a longer name is among them ("  Passed     : 186 (99.47%)").
  read -r passed failed < <(awk '
    /^ *(Passed|Expectedly Failed) *:/ { p += $(NF - 1) }
    /^ *(Failed|Unresolved|Timed Out|Unexpectedly Passed) *:/ { f += $(NF - 1) }
    END { print p + 0, f + 0 }' "$log")
  if [[ $failed -gt 0 ]]; then
    sed -n '/^\*\*\*\*\*\*\*\*\*\*\*\*\*\*\*\*\*\*\*\* TEST/,/^\*\*\*\*\*\*\*\*\*\*$/p' "$log" | tail -n 200
  fi
  grep -E "^ +(Passed|Failed|Unsupported|Unresolved|Timed Out|Expectedly|Unexpectedly)" "$log" || true
  rm -f "$log"
}
