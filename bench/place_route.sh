#!/bin/bash
# Benchmark (issue: placement and routing): wall time and peak RSS of
# --wsc-place, --wsc-route and --wsc-verify-routes on wse3, with the routing
# figures (wafer.route_stats). Figures are printed, never asserted.
#
#   bench/place_route.sh [KERNELS]     # default 1000
#
# Cases:
#   synthetic  KERNELS kernels of assorted sizes in a chain with skip
#              connections (bench/gen_kernel_graph.py, half the wafer's PEs)
#   gpt2-small the gpt3-125m preset (GPT-2-small shapes, T=128) lowered to
#              kernels; skipped when wsc-translate or the lowering fails
# Tools: wsc-opt from build/bin (WSC_BIN=dir to override), else build-c/bin;
# wsc-translate from build/bin (WSC_TRANSLATE=path to override).
set -euo pipefail
cd "$(dirname "$0")/.."
kernels=${1:-1000}
bin=${WSC_BIN:-build/bin}
[[ -x $bin/wsc-opt ]] || bin=build-c/bin
translate=${WSC_TRANSLATE:-build/bin/wsc-translate}
[[ -x $translate ]] || translate=$bin/wsc-translate
out=bench/out/place_route
mkdir -p "$out"

# run NAME INPUT [wsc-opt passes...]: times the passes, prints the figures.
run() {
  local name=$1 input=$2
  shift 2
  local log=$out/$name.time log2=$out/$name.timing
  if ! /usr/bin/time -f "%e %M" -o "$log" "$bin/wsc-opt" "$input" "$@" \
      --wsc-place --wsc-route --wsc-verify-routes --mlir-timing \
      -o "$out/$name.placed.mlir" 2> "$log2"; then
    echo "$name: failed"
    grep -m3 "error" "$log2" | cut -c1-300
    return 0
  fi
  /usr/bin/python3 - "$name" "$input" "$log" "$log2" "$out/$name.placed.mlir" <<'PY'
import re, sys
name, inp, timef, timing, placed = sys.argv[1:]
wall, rss = open(timef).read().split()
passes = {m.group(2): float(m.group(1)) for m in
          re.finditer(r"^\s*([\d.]+) \(\s*[\d.]+%\)\s+(Wsc\w+)", open(timing).read(), re.M)}
text = open(placed).read()
stats = re.search(r"wafer\.route_stats = \{([^}]*)\}", text).group(1)
stats = {k.strip(): v.split(":")[0].strip() for k, v in (s.split("=") for s in stats.split(", "))}
kernels = len(re.findall(r"wskernel\.kernel \"", text))
pes = sum(int(h) * int(w) for h, w in re.findall(r"grid \[(\d+), (\d+)\]", text))
print(f"{name}: {kernels} kernels, {pes} PEs in kernels")
print(f"  wall {float(wall):.2f} s (whole wsc-opt run), peak RSS {int(rss) / 1024:.0f} MiB")
print("  " + ", ".join(f"{p[3:]} {t:.2f} s" for p, t in passes.items()))
print(f"  route length total {stats['total_length']}, max {stats['max_length']} hops; "
      f"colors used {stats['colors_used']}, max per router {stats['max_colors_per_router']}")
print(f"  link load max {float(stats['max_link_load']):.0f}, mean {float(stats['mean_link_load']):.1f} "
      f"words/token (budget {stats['link_budget']}); {stats['entries']} router entries, "
      f"{stats['groups']} color groups, {stats['iterations']} rounds")
PY
}

echo "tools: $bin"
/usr/bin/python3 bench/gen_kernel_graph.py --kernels "$kernels" --width 762 --height 1172 \
  --fill 0.5 --skip 4 -o "$out/synthetic.mlir"
run synthetic "$out/synthetic.mlir" --wsc-set-arch="arch=wse3"

if [[ -x $translate ]] &&
   "$translate" --gpt-config=gpt3-125m --seq=128 -o "$out/gpt2-small.mlir" 2>/dev/null &&
   "$bin/wsc-opt" "$out/gpt2-small.mlir" --wsgraph-fuse --wsc-set-arch="arch=wse3" \
     --wsc-lower-to-kernels -o "$out/gpt2-small.kernels.mlir" 2>/dev/null; then
  run gpt2-small "$out/gpt2-small.kernels.mlir"
else
  echo "gpt2-small: skipped (no wsc-translate --gpt-config, or the lowering failed)"
fi
