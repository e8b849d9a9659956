#!/bin/bash
# Benchmark (issue: models at scale): every GPT preset compiled for wse3 with
# weights elided. Prints wafers used, SRAM used per wafer, inter-wafer bytes
# per token, estimated tokens/s, compile wall time and peak RSS.
#   bench/presets.sh ["PIPELINE OPTIONS"]   default "arch=wse3" (add e.g. "wafers=4")
#   SEQ=2048 bench/presets.sh   tokens per sequence (default 2048, the GPT-3 context)
set -uo pipefail
cd "$(dirname "$0")/.."
bin=build/bin
out=bench/out/presets
seq=${SEQ:-2048}
mkdir -p "$out"
options=${1:-"arch=wse3"}
printf "%-10s %7s %9s %22s %14s %12s %9s %9s  %s\n" preset layers params wafers sram/wafer\ GiB xwafer\ B/tok tokens/s wall\ s RSS\ MiB
for p in gpt3-125m gpt3-1.3b gpt3-6.7b gpt3-13b gpt3-175b gpt-1t; do
  rep="$out/$p.json"
  rm -f "$rep"
  /usr/bin/time -f "%e %M" -o "$out/$p.time" bash -c \
    "$bin/wsc-translate --gpt-config=$p --seq=$seq | $bin/wsc-opt --wsc-pipeline='$options report=$rep' -o /dev/null" \
    > "$out/$p.log" 2>&1
  status=$?
  read -r wall rss < <(tail -n 1 "$out/$p.time")
  if [[ $status -ne 0 || ! -f $rep ]]; then
    printf "%-10s failed after %s s (%s MiB): %s\n" "$p" "$wall" "$((rss / 1024))" \
      "$(grep -m1 'error' "$out/$p.log" | cut -c1-160)"
    continue
  fi
  /usr/bin/python3 - "$rep" "$p" "$wall" "$rss" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
w = r["wafers"]
layers = sum(1 for x in w for k in x["kernels"] if k["kind"] == "attention")
sram = [x["sram_bytes_used"] / 2**30 for x in w]
print(f"{sys.argv[2]:<10} {layers:>7} {'':>9} {len(w):>22} {max(sram):>14.2f} "
      f"{r['inter_wafer_bytes_per_token']:>12} {r['estimate']['tokens_per_s']:>9.0f} "
      f"{float(sys.argv[3]):>9.2f} {int(sys.argv[4]) / 1024:>9.0f}")
PY
done
