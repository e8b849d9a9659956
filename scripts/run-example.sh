#!/bin/bash
# The main job on the bundled example: a tiny GPT from PyTorch through the whole
# path — export, import, fuse, lower to kernels, place, route, export to .wafer —
# then run on the functional wafer emulator and compare the logits with torch's.
#   scripts/run-example.sh [--family gpt2|hf-gpt2|llama|neox]   (default gpt2, the nanoGPT layout)
# A HuggingFace family takes input_ids and an attention_mask, bound to the
# example's (all ones: no padding) so that its attention fuses.
set -euo pipefail
cd "$(dirname "$0")/.."
family=gpt2
if [[ $# -gt 0 ]]; then
  [[ $1 == --family && $# -eq 2 ]] || { echo "usage: $0 [--family gpt2|hf-gpt2|llama|neox]" >&2; exit 1; }
  family=$2
fi
out=build/example/$family
bin=build/bin
mkdir -p "$out"
ids=idx binds=()
[[ $family == gpt2 ]] || { ids=input_ids; binds=(--bind "attention_mask=$out/attention_mask.npy"); }
echo "== export: tiny $family (2 layers, width 32, vocab 64), opset 17, batch 2 x 8 tokens"
/usr/bin/python3 frontends/pytorch/export.py --family "$family" --opset 17 --batch 2 --seq 8 \
  --ref-storage bf16 --greedy 3,5 --out "$out" >/dev/null
echo "== compile: $bin/wsc-compile $out/model.onnx ${binds[*]} --arch=mesh:32x32 -o $out/model.wafer"
$bin/wsc-translate --import-onnx "$out/model.onnx" "${binds[@]}" -o "$out/model.mlir"
$bin/wsc-opt "$out/model.mlir" --wsgraph-fuse -o "$out/fused.mlir"
$bin/wsc-compile "$out/model.onnx" "${binds[@]}" --arch=mesh:32x32 --report="$out/compile.json" \
  -o "$out/model.wafer"
summarize() {
  grep -o "= wsgraph\.[a-z_]*" "$1" | sed 's/= wsgraph\.//' | sort | uniq -c | sort -rn |
    awk '{printf "%s %s", sep, $2 "×" $1; sep=","} END {print ""}'
}
echo "   imported ops:$(summarize "$out/model.mlir")"
echo "   fused ops:   $(summarize "$out/fused.mlir")"
echo "== run: $bin/wsc-run $out/model.wafer --input $ids=$out/$ids.npy --output logits=$out/logits.wsc.npy"
$bin/wsc-run "$out/model.wafer" --input "$ids=$out/$ids.npy" --output logits="$out/logits.wsc.npy" \
  --report "$out/run.json" --trace "$out/trace.json"
/usr/bin/python3 - "$out" <<'PY'
import json, sys
import numpy as np
out = sys.argv[1]
compile_report = json.load(open(f"{out}/compile.json"))
run = json.load(open(f"{out}/run.json"))
kernels = [k for w in compile_report["wafers"] for k in w["kernels"]]
print(f"   compiled: {len(kernels)} kernels on {compile_report['arch']}, "
      f"{sum(w['pes_used'] for w in compile_report['wafers'])} PEs, "
      f"slowest kernel {compile_report['estimate']['cycles_per_token']:.0f} cycles/token")
print(f"   emulated: {run['cycles']} cycles, {run['tokens_per_s']:.0f} tokens/s at the arch clock, "
      f"{run['pes_active']} PEs active, {run['wall_s']:.2f} s wall")
got, want = np.load(f"{out}/logits.wsc.npy"), np.load(f"{out}/logits.npy")
err = float(np.abs(got - want).max())
ok = got.shape == want.shape and err <= 1e-4
print(f"== compare with torch: logits {got.shape}, max abs error {err:.3g} -> {'MATCH' if ok else 'MISMATCH'}")
sys.exit(0 if ok else 1)
PY
echo "== generate: $bin/wsc-compile --generate, then wsc-run --generate 3 from prompts of 3 and 5 tokens"
$bin/wsc-compile "$out/model.onnx" --generate --arch=mesh:32x32 -o "$out/generate.wafer"
$bin/wsc-run "$out/generate.wafer" --input "$ids=$out/prompt.npy" --generate 3 \
  --output tokens="$out/tokens.wsc.npy" --report "$out/generate.run.json" | sed 's/^/   /'
/usr/bin/python3 - "$out" <<'PY'
import sys
import numpy as np
out = sys.argv[1]
got, greedy = np.load(f"{out}/tokens.wsc.npy"), np.load(f"{out}/greedy.npy")
ok = all((got[b, :p + 3] == greedy[b, :p + 3]).all() for b, p in enumerate([3, 5]))
print(f"== compare with torch's greedy loop: {'MATCH' if ok else 'MISMATCH'}")
sys.exit(0 if ok else 1)
PY
[[ $family == gpt2 ]] || exit 0
echo "== weight streaming: one block on the wafer, each layer's weights (bf16) loaded from external memory"
$bin/wsc-compile "$out/model.onnx" --arch=mesh:32x32 --mode=weight-streaming --precision=bf16 \
  --report="$out/streaming.json" -o "$out/streaming.wafer"
$bin/wsc-run "$out/streaming.wafer" --input idx="$out/idx.npy" --output logits="$out/logits.streaming.npy" \
  --report "$out/streaming.run.json" >/dev/null
/usr/bin/python3 - "$out" <<'PY'
import json, sys
import numpy as np
out = sys.argv[1]
ws = json.load(open(f"{out}/streaming.json"))["weight_streaming"]
print(f"   {ws['layers']} layers through one block, {ws['bytes_per_layer']} bytes loaded per layer, "
      f"{ws['bound']}-bound")
got, want = np.load(f"{out}/logits.streaming.npy"), np.load(f"{out}/logits_bf16.npy")
err = float(np.abs(got - want).max())
ok = got.shape == want.shape and err <= 1e-4
print(f"== compare with torch, its weights rounded to bf16 as well: max abs error {err:.3g} -> "
      f"{'MATCH' if ok else 'MISMATCH'}")
sys.exit(0 if ok else 1)
PY
echo "outputs in $out/: model.onnx, model.mlir, fused.mlir, model.wafer, compile.json, run.json, trace.json (Perfetto), generate.*, streaming.*"
