#!/bin/bash
# Benchmark (issue: models at scale): every GPT preset compiled for wse3 with
# weights elided, in both modes. Prints wafers used, SRAM used per wafer,
# inter-wafer bytes per token, estimated tokens/s (and, streaming, whether
# the wafer is compute- or bandwidth-bound), compile wall time and peak RSS.
#   bench/presets.sh ["PIPELINE OPTIONS"]   default "arch=wse3 precision=fp16"
#   SEQ=128 bench/presets.sh        tokens per sequence (default 2048, the GPT-3 context)
#   MODES=weight-streaming PRESETS="gpt3-175b gpt-1t" bench/presets.sh
# Each run is capped at TIMEOUT seconds (default 900) and MEM_GB of virtual
# memory (default 14): pipelined 1T needs more than this machine has.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=build/bin
out=bench/out/presets
seq=${SEQ:-2048}
mkdir -p "$out"
options=${1:-"arch=wse3 precision=fp16"}
modes=${MODES:-"pipelined weight-streaming"}
presets=${PRESETS:-"gpt3-125m gpt3-1.3b gpt3-6.7b gpt3-13b gpt3-175b gpt-1t"}
source bench/compile-preset.sh
echo "options: $options, seq $seq"
printf "%-10s %-17s %6s %10s %12s %10s %-10s %8s %8s\n" preset mode wafers "GiB/wafer" \
  "xwafer B/tok" tokens/s bound "wall s" "RSS MiB"
for mode in $modes; do
  for p in $presets; do
    if ! compile_preset "$p" "$mode" "$options" "${TIMEOUT:-900}"; then
      printf "%-10s %-17s failed after %s s (%s MiB): %s\n" "$p" "$mode" "$wall" "$((rss / 1024))" \
        "${why:0:140}"
      continue
    fi
    /usr/bin/python3 - "$rep" "$p" "$mode" "$wall" "$rss" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
w = r["wafers"]
sram = max(x["sram_bytes_used"] for x in w) / 2**30
bound = r.get("weight_streaming", {}).get("bound", "")
print(f"{sys.argv[2]:<10} {sys.argv[3]:<17} {len(w):>6} {sram:>10.2f} "
      f"{r['inter_wafer_bytes_per_token']:>12} {r['estimate']['tokens_per_s']:>10.0f} {bound:<10} "
      f"{float(sys.argv[4]):>8.2f} {int(sys.argv[5]) / 1024:>8.0f}")
PY
  done
done
