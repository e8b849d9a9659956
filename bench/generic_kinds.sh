#!/bin/bash
# Benchmark (issue: every ONNX op): ONNX's node tests through the whole path
# (pass count per op), then what the generic kernel kind costs: cycles per
# result element of single ops on one PE, the cost model's estimate beside
# the emulator's run, and the fused kinds' figure for the same work where one
# exists (a layer norm, a linear), so the speed gap is visible.
#   bench/generic_kinds.sh
set -uo pipefail
cd "$(dirname "$0")/.."
bin=build/bin
out=bench/out/generic
mkdir -p "$out"
echo "== ONNX node tests (scripts/onnx-node-tests.py, mesh:16x16)"
/usr/bin/python3 scripts/onnx-node-tests.py --bin "$bin" --jobs "$(nproc)" --min-pass 0 \
  --excluded test/Conformance/onnx-node-tests.excluded | grep -v '^XPASS\|^FAIL'

echo "== generic kinds: cycles per result element on one PE (8 x 256 f32 operands)"
printf "%-34s %12s %12s %12s\n" op estimate emulated "per element"
gen() { # LABEL RESULT-ELEMENTS MLIR-BODY
  local label=$1 n=$2 body=$3
  local name=${label%% *}
  cat > "$out/$name.mlir" <<MLIR
func.func @main(%x: tensor<8x256xf32> {wsgraph.name = "x"}, %y: tensor<8x256xf32> {wsgraph.name = "y"}) -> $body
MLIR
  $bin/wsc-opt "$out/$name.mlir" --wsc-pipeline="arch=mesh:8x8 report=$out/$name.json" -o "$out/$name.placed.mlir" &&
    $bin/wsc-translate --export-wafer "$out/$name.placed.mlir" -o "$out/$name.wafer" &&
    /usr/bin/python3 -c "import numpy as n; n.save('$out/x.npy', n.random.rand(8, 256).astype('f4'))" &&
    $bin/wsc-run "$out/$name.wafer" --input x="$out/x.npy" --input y="$out/x.npy" \
      --output result0="$out/$name.npy" --report "$out/$name.run.json" > /dev/null &&
    /usr/bin/python3 - "$out/$name.json" "$out/$name.run.json" "$label" "$n" <<'PY'
import json, sys
r, run, name, n = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3], int(sys.argv[4])
k = [k for w in r["wafers"] for k in w["kernels"] if k["kind"] == "generic"]
est = sum(x["cycles_per_token"] for x in k)
print(f"{name:<34} {est:12.0f} {run['cycles']:12d} {run['cycles'] / n:12.2f}")
PY
}
gen "add (same shapes)" 2048 'tensor<8x256xf32> { %r = wsgraph.add %x, %y : (tensor<8x256xf32>, tensor<8x256xf32>) -> tensor<8x256xf32>
  return %r : tensor<8x256xf32> }'
gen "tanh" 2048 'tensor<8x256xf32> { %r = wsgraph.tanh %x : tensor<8x256xf32>
  return %r : tensor<8x256xf32> }'
gen "transpose" 2048 'tensor<256x8xf32> { %r = wsgraph.transpose %x {perm = array<i64: 1, 0>} : (tensor<8x256xf32>) -> tensor<256x8xf32>
  return %r : tensor<256x8xf32> }'
gen "softmax (last axis)" 2048 'tensor<8x256xf32> { %r = wsgraph.softmax %x : tensor<8x256xf32>
  return %r : tensor<8x256xf32> }'
gen "reduce_sum (axis 0)" 256 'tensor<256xf32> { %r = wsgraph.reduce_sum %x {axes = array<i64: 0>, keepdims = false} : (tensor<8x256xf32>) -> tensor<256xf32>
  return %r : tensor<256xf32> }'
gen "matmul 8x256 @ 256x8" 64 'tensor<8x8xf32> { %t = wsgraph.transpose %y {perm = array<i64: 1, 0>} : (tensor<8x256xf32>) -> tensor<256x8xf32>
  %r = wsgraph.matmul %x, %t : (tensor<8x256xf32>, tensor<256x8xf32>) -> tensor<8x8xf32>
  return %r : tensor<8x8xf32> }'
echo "(emulated: the whole run's cycles, receiving and sending included; estimate: the generic kernels' own)"

echo "== fused kinds of the tiny GPT (mesh:32x32): cycles per result element, each kind's fastest kernel"
$bin/wsc-compile test/Inputs/onnx/tiny-op17/model.onnx --arch=mesh:32x32 --report="$out/tiny.json" \
  -o "$out/tiny.wafer" && $bin/wsc-translate --import-onnx test/Inputs/onnx/tiny-op17/model.onnx |
  $bin/wsc-opt --wsc-pipeline="arch=mesh:32x32" -o "$out/tiny.placed.mlir" &&
  /usr/bin/python3 - "$out/tiny.json" "$out/tiny.placed.mlir" <<'PY'
import json, re, sys
r = json.load(open(sys.argv[1]))
# Each kernel's result width per token, from its stream types in the IR.
widths = {}
for line in open(sys.argv[2]):
    m = re.search(r'wskernel.kernel "([^"]+)" kind .* -> (.*) \{$', line)
    if m:
        widths[m.group(1)] = sum(int(w) for w in re.findall(r"stream<(\d+),", m.group(2)))
best = {}
for k in (k for w in r["wafers"] for k in w["kernels"]):
    if widths.get(k["name"]):
        per = k["cycles_per_token"] / widths[k["name"]]
        best[k["kind"]] = min(best.get(k["kind"], per), per)
for kind, per in sorted(best.items()):
    print(f"{kind:<34} {per:12.2f} cycles per element")
PY
