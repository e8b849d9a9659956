#!/bin/bash
# Builds wsc (if needed) and runs the whole lit suite. Ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh || { echo "0 passed, 1 failed"; exit 1; }
source scripts/lit-run.sh
run_lit 900 build/test
echo "${passed} passed, ${failed} failed"
[[ $failed -eq 0 && $passed -gt 0 ]]
