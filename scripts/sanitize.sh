#!/bin/bash
# Builds wsc with AddressSanitizer + UndefinedBehaviorSanitizer (and libFuzzer's
# coverage, for the fuzzers) into build-sanitize/ with clang-22, then runs lit
# test directories against that build. Ends with "N passed, N failed".
#
#   scripts/sanitize.sh                 the whole suite (what CI runs)
#   scripts/sanitize.sh quick           all but EndToEnd/ and Conformance/
#   scripts/sanitize.sh Runtime Tools   these directories of test/
#
# Any sanitizer report aborts the process (so a test expecting "not" fails
# too) and is kept in build-sanitize/sanitizer-logs/, printed at the end and
# counted as a failure.
set -uo pipefail
cd "$(dirname "$0")/.."
dir=build-sanitize
if [[ ! -f $dir/build.ninja ]]; then
  cmake -S . -B $dir -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang-22 \
    -DCMAKE_CXX_COMPILER=clang++-22 -DWSC_SANITIZE=ON -DWSC_FUZZ=ON >/dev/null ||
    { echo "0 passed, 1 failed"; exit 1; }
fi
# Builds are serialized through the same lock as scripts/build.sh.
flock /tmp/wsc-build.lock ninja -C $dir -j "${WSC_JOBS:-$(nproc)}" >$dir/last-build.log 2>&1 ||
  { tail -n 40 $dir/last-build.log; echo "0 passed, 1 failed"; exit 1; }

# "quick" leaves out the end-to-end models and ONNX's node tests, whose code
# paths the rest covers and which take half of the time.
quick=(Dialect Transforms Conversion Pipeline Target Tools Runtime Frontends Docs)
if [[ $# -eq 0 ]]; then
  dirs=("$dir/test")
elif [[ $# -eq 1 && $1 == quick ]]; then
  dirs=(); for d in "${quick[@]}"; do dirs+=("$dir/test/$d"); done
else
  dirs=(); for d in "$@"; do dirs+=("$dir/test/$d"); done
fi

logs=$(realpath $dir)/sanitizer-logs
rm -rf "$logs" && mkdir -p "$logs"
# allow_user_poisoning=0: LLVM's headers poison BumpPtrAllocator slabs in our (instrumented)
# code, which the prebuilt, uninstrumented LLVM and MLIR libraries never unpoison.
export ASAN_OPTIONS="abort_on_error=1:detect_leaks=1:allow_user_poisoning=0:log_path=$logs/asan"
export UBSAN_OPTIONS="abort_on_error=1:print_stacktrace=1:log_path=$logs/ubsan"
export LSAN_OPTIONS="suppressions=$(pwd)/scripts/lsan.supp"
source scripts/lit-run.sh
run_lit 1800 "${dirs[@]}"
reports=$(find "$logs" -type f | wc -l)
if [[ $reports -gt 0 ]]; then
  echo "sanitizer reports: $reports (in $logs); the first:"
  find "$logs" -type f | head -n 1 | xargs head -n 60
  failed=$((failed + reports))
fi
echo "sanitize: ${passed} passed, ${failed} failed"
[[ $failed -eq 0 && $passed -gt 0 ]]
