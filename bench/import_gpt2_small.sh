#!/bin/bash
# Benchmark: import a GPT-2-small ONNX model (random weights, opset 17, static shapes,
# batch 1 x seq 128, weights inside the one ~626 MiB model.onnx) with wsc-translate and
# report wall time and peak memory.
#
#   bench/import_gpt2_small.sh            # export once (cached in bench/out/gpt2-small/), then import
#   WSC_TRANSLATE=path/to/wsc-translate bench/import_gpt2_small.sh
#
# The export (frontends/pytorch/export.py) is skipped when bench/out/gpt2-small/ already
# holds a finished export (config.json is written last). Delete the directory to redo it.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=/usr/bin/python3
OUT=bench/out/gpt2-small
MODEL=$OUT/model.onnx
MLIR=/tmp/gpt2s.mlir
TRANSLATE=${WSC_TRANSLATE:-build/bin/wsc-translate}

# Prints "<wall seconds> <peak RSS KiB>" from a `/usr/bin/time -v` log.
time_stats() {
  awk -F': ' '
    /Elapsed \(wall clock\) time/ {
      n = split($2, p, ":"); s = 0
      for (i = 1; i <= n; i++) s = s * 60 + p[i]
      wall = s
    }
    /Maximum resident set size/ { rss = $2 }
    END { printf "%.2f %d\n", wall, rss }' "$1"
}

if [[ -f $MODEL && -f $OUT/config.json ]]; then
  echo "export: using existing $MODEL"
else
  echo "export: writing $MODEL (gpt2-small, opset 17, static, batch 1, seq 128) ..."
  mkdir -p "$OUT"
  log=$OUT/export.time.log
  /usr/bin/time -v -o "$log" "$PY" frontends/pytorch/export.py --preset gpt2-small \
      --opset 17 --batch 1 --seq 128 --external-data none --out "$OUT"
  read -r wall rss < <(time_stats "$log")
  awk -v w="$wall" -v r="$rss" 'BEGIN { printf "export: %.1f s wall, peak RSS %.0f MiB\n", w, r / 1024 }'
fi

if [[ ! -x $TRANSLATE ]]; then
  echo "error: $TRANSLATE not found (or not executable); build it first with scripts/build.sh" \
       "(or point WSC_TRANSLATE at it)" >&2
  exit 1
fi

log=$(mktemp /tmp/import_gpt2_small.time.XXXXXX)
trap 'rm -f "$log"' EXIT
set +e
/usr/bin/time -v -o "$log" "$TRANSLATE" --import-onnx "$MODEL" -o "$MLIR"
rc=$?
set -e
if [[ $rc -ne 0 ]]; then
  echo "error: $TRANSLATE --import-onnx failed with exit status $rc" >&2
  cat "$log" >&2
  exit "$rc"
fi

read -r wall rss < <(time_stats "$log")
bytes=$(stat -c %s "$MODEL")
awk -v b="$bytes" -v w="$wall" -v r="$rss" 'BEGIN {
  mib = b / 1048576; rmib = r / 1024
  printf "model.onnx size : %.1f MiB\n", mib
  printf "import wall time: %.2f s\n", w
  printf "import peak RSS : %.1f MiB\n", rmib
  printf "RSS / file size : %.2f\n", rmib / mib
}'
