#!/bin/bash
# Configures (once) and builds wsc into build/. Builds are serialized through a lock so that two never run at once.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${WSC_JOBS:-$(nproc)}
if [[ ! -f build/build.ninja ]]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=${WSC_BUILD_TYPE:-Release} >/dev/null
fi
flock /tmp/wsc-build.lock ninja -C build -j "$jobs" "$@"
