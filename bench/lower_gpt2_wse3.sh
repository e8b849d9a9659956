#!/bin/bash
# Benchmark (issue: kernels): GPT-2-small lowered to kernels on wse3, placed and
# routed (the result blocks per kernel are those that route).
# Prints kernels, PEs used, the slowest kernel's cycles per token, the
# busiest link's words per token, the bound (the larger), the ideal (all
# multiply-accumulates over all PEs) and the balance ratio ideal/bound.
# Uses the exported GPT-2-small of bench/import_gpt2_small.sh when present,
# else the gpt3-125m preset (the same shapes, weights elided).
#   bench/lower_gpt2_wse3.sh [SEQ]
set -euo pipefail
cd "$(dirname "$0")/.."
seq=${1:-128}
bin=build/bin
out=bench/out/lower
mkdir -p "$out"
model=bench/out/gpt2-small/model.onnx
if [[ -f $model && $seq == 128 ]]; then
  echo "model: $model (exported GPT-2-small, T=128)"
  $bin/wsc-translate --import-onnx "$model" -o "$out/model.mlir"
else
  echo "model: --gpt-config=gpt3-125m (GPT-2-small shapes), T=$seq"
  $bin/wsc-translate --gpt-config=gpt3-125m --seq="$seq" -o "$out/model.mlir"
fi
/usr/bin/time -f "%e %M" -o "$out/time.txt" \
  $bin/wsc-opt "$out/model.mlir" --wsc-pipeline="arch=wse3 report=$out/report.json" -o "$out/kernels.mlir"
read -r wall rss < "$out/time.txt"
/usr/bin/python3 - "$out/report.json" "$wall" "$rss" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ks = [k for w in r["wafers"] for k in w["kernels"]]
e = r["estimate"]
slow = max(ks, key=lambda k: k["cycles_per_token"])
print(f"kernels:                 {len(ks)} on {len(r['wafers'])} wafer(s) of {r['arch']}")
print(f"PEs used:                {sum(w['pes_used'] for w in r['wafers'])}")
print(f"largest SRAM per PE:     {max(k['sram_bytes_per_pe'] for k in ks)} bytes")
print(f"slowest kernel:          {slow['name']} ({slow['kind']}, {slow['h']}x{slow['w']}): {slow['cycles_per_token']:.0f} cycles/token")
print(f"busiest link:            {r['routing']['max_link_load']:.0f} words/token")
print(f"bound:                   {e['bound']}, {e['cycles_per_token']:.0f} cycles/token (PE share {e['utilization']:.3f})")
print(f"ideal (MACs / all PEs):  {e['ideal_cycles_per_token']:.1f} cycles/token")
print(f"balance ratio:           {e['balance']:.4f}  (goal >= 0.85)")
# What this kernel design allows at most (docs/cost-model.md, "How far the
# balance can go"): a PE with a kb x nb tile of a linear spends at least
# kb*nb cycles on its multiply-adds (fp32, one a cycle); its slice of x
# streams in meanwhile and its async engine passes the partial sums on, so
# at a pace of S cycles it does m <= S of the work; the linears' work on the
# PEs the other kernels leave needs S >= m, with m = work / PEs left.
grid = round(sum(w["pes_used"] for w in r["wafers"]) / e["utilization"])
work = e["ideal_cycles_per_token"] * grid
other = sum(k["h"] * k["w"] for k in ks if not k["kind"].startswith("linear"))
def pace(pes):
    return work / pes
print(f"design bound:            {e['ideal_cycles_per_token'] / pace(grid - other):.4f} with the {other} PEs of the other kernels,"
      f" {e['ideal_cycles_per_token'] / pace(grid):.4f} with none")
print(f"estimated throughput:    {e['tokens_per_s']:.0f} tokens/s")
print(f"result blocks at most:   {r.get('max_blocks', '?')}")
print(f"compile wall, peak RSS:  {float(sys.argv[2]):.2f} s, {int(sys.argv[3]) / 1024:.0f} MiB")
PY
