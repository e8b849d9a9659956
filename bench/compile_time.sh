#!/bin/bash
# Benchmark (issue: compile time): wall time of the default compile per
# stage, summed over every try of the search (from the progress lines of
# --wsc-progress-after=0: each stage runs until the next line), peak RSS,
# the tries the search made and the balance reached.
#   bench/compile_time.sh                 # every case below
#   CASES="gpt2-small" bench/compile_time.sh
# Cases (wse3, weights elided):
#   gpt2-small  the gpt3-125m preset (GPT-2-small shapes), 128 tokens, fp32
#   1.3b        gpt3-1.3b, 2048 tokens, fp16
#   175b        gpt3-175b, 2048 tokens, fp16
#   1t          gpt-1t pipelined, 2048 tokens, fp16
# Each is capped at TIMEOUT seconds (default 1200) and MEM_GB of virtual
# memory (default 14).
set -uo pipefail
cd "$(dirname "$0")/.."
bin=build/bin
out=bench/out/compile_time
mkdir -p "$out"
cases=${CASES:-"gpt2-small 1.3b 175b 1t"}
printf "%-11s %8s %8s %8s %8s %8s %8s %6s %8s %8s\n" case "wall s" lower place route verify \
  other tries balance "RSS MiB"
for c in $cases; do
  case $c in
    gpt2-small) preset=gpt3-125m seq=128 options="arch=wse3" ;;
    1.3b) preset=gpt3-1.3b seq=2048 options="arch=wse3 precision=fp16" ;;
    175b) preset=gpt3-175b seq=2048 options="arch=wse3 precision=fp16" ;;
    1t) preset=gpt-1t seq=2048 options="arch=wse3 precision=fp16" ;;
    *) echo "unknown case $c"; continue ;;
  esac
  $bin/wsc-translate --gpt-config=$preset --seq=$seq -o "$out/$c.mlir" || continue
  /usr/bin/time -f "%e %M" -o "$out/$c.time" bash -c \
    "ulimit -v $((${MEM_GB:-14} * 1024 * 1024)); timeout ${TIMEOUT:-1200} $bin/wsc-opt $out/$c.mlir \
     --wsc-pipeline='$options report=$out/$c.json' --wsc-progress-after=0 \
     --mlir-elide-elementsattrs-if-larger=16 -o /dev/null" \
    > "$out/$c.log" 2>&1
  status=$?
  read -r wall rss < <(tail -n 1 "$out/$c.time")
  if [[ $status -ne 0 || ! -f $out/$c.json ]]; then
    printf "%-11s failed after %s s: %s\n" "$c" "$wall" "$(grep -m1 'error' "$out/$c.log" | cut -c1-120)"
    continue
  fi
  /usr/bin/python3 - "$out/$c.log" "$out/$c.json" "$c" "$wall" "$rss" <<'PY'
import json, re, sys
log, rep, name, wall, rss = sys.argv[1:]
text = open(log).read()
lines = re.findall(r"^wsc: +([0-9.]+) s.*?: ([a-z-]+)(?:, round \d+)?$", text, re.M)
stage = {}
for (t, what), (t_next, _) in zip(lines, lines[1:] + [(wall, "")]):
    stage[what] = stage.get(what, 0) + float(t_next) - float(t)
tries = max([int(t) for t in re.findall(r" try (\d+)/", text)] or [0])
get = lambda k: stage.get(k, 0.0)
parts = [get("wsc-lower-to-kernels"), get("wsc-place"), get("wsc-route"), get("wsc-verify-routes")]
other = float(wall) - sum(parts)
r = json.load(open(rep))
print(f"{name:<11} {float(wall):>8.1f} " + " ".join(f"{p:>8.1f}" for p in parts) +
      f" {other:>8.1f} {tries:>6} {r['estimate']['balance']:>8.3f} {int(rss) / 1024:>8.0f}")
PY
done
