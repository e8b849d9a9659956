#!/bin/bash
# Regenerates the committed tiny GPT ONNX test models under test/Inputs/onnx/ with
# frontends/pytorch/export.py. The output is deterministic: rerunning must leave
# `git status` clean. Needs Debian's torch/onnx/numpy, hence /usr/bin/python3.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=/usr/bin/python3
OUT=test/Inputs/onnx
export PYTHONHASHSEED=0 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1

gen() {  # gen NAME EXPORT-ARGS...
  local name=$1; shift
  rm -rf "${OUT:?}/$name"
  "$PY" frontends/pytorch/export.py --preset tiny --seed 0 --batch 1 --seq 8 "$@" --out "$OUT/$name"
}

gen tiny-op13-dynamic  --opset 13 --dynamic --extra-ref 2x8
gen tiny-op14-nobias   --opset 14 --no-bias
gen tiny-op15          --opset 15
gen tiny-op16          --opset 16
gen tiny-op17          --opset 17 --ref-storage fp16 --ref-storage bf16
gen tiny-op17-extdata  --opset 17 --external-data one
gen tiny-op13-extmany  --opset 13 --external-data many
gen tiny-op17-b2       --opset 17 --batch 2

if [[ "${1:-}" == "--check" ]]; then
  "$PY" frontends/pytorch/onnx_check.py "$OUT"/tiny-*
fi
