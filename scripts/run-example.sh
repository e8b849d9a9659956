#!/bin/bash
# The main job on the bundled example: export a tiny GPT from PyTorch, import it,
# fuse it, and print what the compiler made of it.
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/example
mkdir -p "$out"
echo "== export: tiny GPT (2 layers, 2 heads, width 32, vocab 64) at opset 17"
/usr/bin/python3 frontends/pytorch/export.py --preset tiny --opset 17 --batch 1 --seq 8 --out "$out" >/dev/null
echo "== import: build/bin/wsc-translate --import-onnx $out/model.onnx"
build/bin/wsc-translate --import-onnx "$out/model.onnx" -o "$out/model.mlir"
echo "== fuse:   build/bin/wsc-opt --wsgraph-fuse"
build/bin/wsc-opt "$out/model.mlir" --wsgraph-fuse -o "$out/fused.mlir"
summarize() {
  grep -o "= wsgraph\.[a-z_]*" "$1" | sed 's/= wsgraph\.//' | sort | uniq -c | sort -rn |
    awk '{printf "%s %s", sep, $2 "×" $1; sep=","} END {print ""}'
}
echo "imported ops:$(summarize "$out/model.mlir")"
echo "fused ops:   $(summarize "$out/fused.mlir")"
/usr/bin/python3 - "$out/fused.mlir" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
params = 0
for dims in re.findall(r"wsgraph\.(?:weight|constant)[^\n]*: tensor<([0-9x]+)xf32>", text):
    n = 1
    for d in dims.split("x"):
        n *= int(d)
    params += n
sig = re.search(r"func\.func @main\(([^)]*)\) -> \(([^)]*)\)", text)
print(f"parameters:  {params} fp32 values held as weights or literals")
print(f"signature:   ({sig.group(1)}) -> ({sig.group(2)})")
PY
echo "outputs in $out/: model.onnx, model.mlir, fused.mlir"
