#!/bin/bash
# Installs exactly the Debian 12 packages wsc needs that are missing. Idempotent.
# clang-22 and its runtimes build the sanitizer build and the fuzzers (scripts/sanitize.sh).
set -euo pipefail
pkgs=(cmake g++ ninja-build ccache lld-22 git
      libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
      libonnx-dev libonnx-testdata libprotobuf-dev protobuf-compiler libfmt-dev nlohmann-json3-dev libgtest-dev
      python3 python3-torch python3-onnx python3-numpy libopenblas0-pthread
      clang-22 libclang-rt-22-dev libfuzzer-22-dev
      libopenmpi-dev openmpi-bin  # mpirun runs the emulator over several processes
      strace)  # test/Runtime/huge-page-heap.test counts the tools' starts
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#pkgs[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
