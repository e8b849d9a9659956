#!/bin/bash
# Runs each libFuzzer harness of build-sanitize/ (scripts/sanitize.sh builds
# them) for a bounded time over a copy of its committed seed corpus in
# fuzz/corpus/<name>/. One test per fuzzer; ends with "N passed, N failed".
#
#   scripts/fuzz.sh [SECONDS] [NAME...]     (default 60 s each, every fuzzer)
#
# A crash, a sanitizer report, a leak, an input slower than 10 s or one that
# takes more than 2 GiB fails the fuzzer; the input is kept as
# build-sanitize/fuzz/<name>/crash-* (see docs/hardening.md for turning it
# into a regression test). New inputs found go to build-sanitize/fuzz/<name>/corpus.
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
names=("$@")
[[ ${#names[@]} -eq 0 ]] && names=(onnx-import wafer-load host-tensor bind-tensor)
passed=0 failed=0
for name in "${names[@]}"; do
  bin=build-sanitize/bin/fuzz-$name
  work=build-sanitize/fuzz/$name
  if [[ ! -x $bin ]]; then
    echo "FAIL: fuzz-$name: $bin is not built (scripts/sanitize.sh builds it)"
    failed=$((failed + 1))
    continue
  fi
  rm -rf "$work" && mkdir -p "$work/corpus"
  cp fuzz/corpus/"$name"/* "$work/corpus/"
  # -fork would outlive a crash; one process, seeded, so a run is repeatable.
  if ASAN_OPTIONS="abort_on_error=1:detect_leaks=1:allow_user_poisoning=0" UBSAN_OPTIONS="abort_on_error=1:print_stacktrace=1" \
     "$bin" -max_total_time="$seconds" -seed=1 -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
       -print_final_stats=1 -artifact_prefix="$work/" "$work/corpus" >"$work/log" 2>&1; then
    echo "PASS: fuzz-$name: $(grep -aE '^stat::number_of_executed_units' "$work/log" | awk '{print $2}') runs in ${seconds} s, corpus $(ls "$work/corpus" | wc -l) inputs"
    passed=$((passed + 1))
  else
    echo "FAIL: fuzz-$name (log: $work/log)"
    grep -aE "runtime error|==[0-9]+==ERROR|SUMMARY|Test unit written|    #[0-9] " "$work/log" | head -n 20
    failed=$((failed + 1))
  fi
done
echo "fuzz: ${passed} passed, ${failed} failed"
[[ $failed -eq 0 ]]
