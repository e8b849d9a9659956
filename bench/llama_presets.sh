#!/bin/bash
# Benchmark: the Llama 3 and Pythia presets (wsc-translate --gpt-config, weights
# elided) compiled for wse3 at fp16. Each run prints wafers used (pipelined:
# wafers=auto, the fewest whose SRAM holds the model), estimated tokens/s and
# the kernel that bounds it, generic kernels (0: fused kinds took every op),
# compile wall time and peak RSS of translate + pipeline.
#   bench/llama_presets.sh ["PIPELINE OPTIONS"]   default "arch=wse3 precision=fp16"
#   SEQ=512 bench/llama_presets.sh                tokens per sequence (default 2048)
#   RUNS="llama3-8b:pipelined pythia-6.9b:pipelined" bench/llama_presets.sh
# Each run is capped at TIMEOUT seconds (default 1800) and MEM_GB of virtual
# memory (default 14). A failed run prints its first error line.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=build/bin
out=bench/out/llama_presets
seq=${SEQ:-2048}
mkdir -p "$out"
options=${1:-"arch=wse3 precision=fp16"}
runs=${RUNS:-"llama3-8b:pipelined llama3-70b:pipelined llama3-70b:weight-streaming
  llama3-405b:pipelined llama3-405b:weight-streaming pythia-1.4b:pipelined"}
source bench/compile-preset.sh
echo "options: $options, seq $seq"
printf "%-12s %-17s %6s %10s %-30s %7s %8s %8s\n" preset mode wafers tokens/s "bound by (kernel, cycles)" \
  generic "wall s" "RSS MiB"
for run in $runs; do
  p=${run%%:*} mode=${run#*:}
  if ! compile_preset "$p" "$mode" "$options" "${TIMEOUT:-1800}"; then
    printf "%-12s %-17s failed after %s s (%s MiB): %s\n" "$p" "$mode" "$wall" "$((rss / 1024))" \
      "${why:0:220}"
    continue
  fi
  /usr/bin/python3 - "$rep" "$p" "$mode" "$wall" "$rss" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
kernels = [k for w in r["wafers"] for k in w["kernels"]]
slowest = max(kernels, key=lambda k: k["cycles_per_token"])
bound = f"{slowest['name']} ({slowest['kind']}, {slowest['cycles_per_token']:.0f})"
generic = sum(k["kind"] == "generic" for k in kernels)
print(f"{sys.argv[2]:<12} {sys.argv[3]:<17} {len(r['wafers']):>6} {r['estimate']['tokens_per_s']:>10.0f} "
      f"{bound:<30} {generic:>7} {float(sys.argv[4]):>8.1f} {int(sys.argv[5]) / 1024:>8.0f}")
PY
done
