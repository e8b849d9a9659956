#!/bin/bash
# Benchmark: generation (wsc-compile --generate). Part 1 emulates GPT-2-small
# (nanoGPT layout) on wse3 generating 16 tokens after a 16-token prompt,
# pipelined and folded, checks them against torch's greedy loop, and prints the
# emulated decode cycles per token beside the compile report's estimate; then
# pipelined again, sampling at temperature 0.8 (wsc-compile --sampling),
# against torch's loop that samples with the same seed, and among the 40 largest
# logits (wsc-compile --top-k); and pipelined at a context of 256 (run
# pipelined-T256). Part 2 compiles presets as
# generating programs (weights elided) in each mode (pipelined: a kernel per
# layer's op; folded: one block's kernels hold every layer; weight-streaming:
# the same, loading each layer's tiles from external memory) and prints the
# modelled decode tokens/s per sequence beside published figures, and what
# bounds each (the estimate's largest term: compute, chains, fabric latency,
# wafer links or external bandwidth).
#   bench/decode.sh                 both parts
#   PARTS=2 SEQ=1024 bench/decode.sh
#   PARTS=2 PRESETS=llama3-8b MODES=folded bench/decode.sh
set -uo pipefail
cd "$(dirname "$0")/.."
bin=build/bin
out=bench/out/decode
seq=${SEQ:-2048}
mkdir -p "$out"
parts=${PARTS:-"1 2"}

if [[ $parts == *1* ]]; then
  /usr/bin/python3 frontends/pytorch/export.py --family gpt2 --preset gpt2-small --opset 17 --batch 1 \
    --seq 32 --greedy 16 --sample 0.8,1 --out "$out/gpt2" > /dev/null
  for run in ${EMULATED_RUNS:-pipelined folded pipelined-sampling pipelined-top-k pipelined-T256}; do
    mode=${run%%-*} sampling=() flags=() loop=greedy ref=gpt2
    if [[ $run == *-sampling ]]; then
      sampling=(--sampling) flags=(--temperature 0.8 --seed 1) loop=sample
    elif [[ $run == *-top-k ]]; then
      # torch's loop that samples among the 40 largest logits
      ref=gpt2-top-k
      [[ -f $out/$ref/sample.npy ]] || /usr/bin/python3 frontends/pytorch/export.py --family gpt2 \
        --preset gpt2-small --opset 17 --batch 1 --seq 32 --greedy 16 --sample 0.8,1,40 \
        --out "$out/$ref" > /dev/null
      sampling=(--sampling --top-k) flags=(--temperature 0.8 --seed 1 --top-k 40) loop=sample
    elif [[ $run == *-T* ]]; then
      # a longer context: more rows of keys, merged in trees
      ref=gpt2-T${run##*-T}
      [[ -f $out/$ref/greedy.npy ]] || /usr/bin/python3 frontends/pytorch/export.py --family gpt2 \
        --preset gpt2-small --opset 17 --batch 1 --seq ${run##*-T} --greedy 16 \
        --out "$out/$ref" > /dev/null
    fi
    echo "== GPT-2-small on wse3, $run, 16-token prompt, 16 generated (emulated)"
    /usr/bin/time -f "compile: %e s, %M KB" $bin/wsc-compile "$out/$ref/model.onnx" --generate \
      "${sampling[@]}" --arch=wse3 --mode=$mode --report "$out/gpt2-$run.json" -o "$out/gpt2-$run.wafer"
    /usr/bin/time -f "%M" -o "$out/gpt2-$run.run.rss" \
      $bin/wsc-run "$out/gpt2-$run.wafer" --input idx="$out/$ref/prompt.npy" --generate 16 \
      "${flags[@]}" \
      --output tokens="$out/gpt2-$run.tokens.npy" --report "$out/gpt2-$run.run.json" \
      > "$out/gpt2-$run.run.log"
    /usr/bin/python3 - "$out" "$run" "$loop" "$ref" "$(cat "$out/gpt2-$run.run.rss")" <<'PY'
import json, os, sys
import numpy
out, mode, loop, ref, rss_kb = sys.argv[1:6]
tokens = numpy.load(out + "/gpt2-%s.tokens.npy" % mode)
want = numpy.load(out + "/%s/%s.npy" % (ref, loop))
compiled = json.load(open(out + "/gpt2-%s.json" % mode))["generation"]
report = json.load(open(out + "/gpt2-%s.run.json" % mode))
run = report["generation"]
emulated = run["decode_cycles_per_token"]
estimate = compiled["decode_cycles_per_token"]
print("tokens %s torch's %s loop" % ("match" if (tokens == want[:, :tokens.shape[1]]).all() else "DIFFER from", loop))
print("decode cycles per token: emulated %.0f, estimate %.0f (estimate / emulated %.2f)" % (
    emulated, estimate, estimate / emulated))
print("tokens/s per sequence (emulated): %.0f; KV cache %d bytes" % (
    run["tokens_per_s"], compiled["kv_cache_bytes"]))
print("emulator: %.2f s wall (wall_s), peak RSS %d MiB, message logs' peak %d MiB, .wafer %d MiB" % (
    report["wall_s"], int(rss_kb) // 1024, report["message_log_peak_bytes"] >> 20,
    os.path.getsize(out + "/gpt2-%s.wafer" % mode) >> 20))
PY
  done
fi

if [[ $parts == *2* ]]; then
  echo "== modelled decode tokens/s per sequence, wse3 fp16, context $seq (weights elided)"
  printf "%-12s %-16s %6s %14s %12s %-40s\n" preset mode wafers "decode cyc/tok" "tokens/s" "published"
  published() {
    case $1 in
      llama3-8b) echo "Cerebras 1,800; WaferLLM 2,700 (WSE-2)" ;;
      llama3-70b) echo "Cerebras 450 (4 CS-3)" ;;
      llama3-405b) echo "Cerebras 969" ;;
      *) echo "-" ;;
    esac
  }
  for p in ${PRESETS:-gpt3-1.3b llama3-8b llama3-70b llama3-405b}; do
    for mode in ${MODES:-pipelined folded weight-streaming}; do
      rep="$out/$p-$mode.json"
      rm -f "$rep"
      if $bin/wsc-translate --gpt-config=$p --seq=$seq | timeout ${TIMEOUT:-1800} $bin/wsc-opt \
          --wsgraph-generate --wsc-pipeline="arch=wse3 precision=fp16 mode=$mode report=$rep" \
          -o /dev/null > "$out/$p-$mode.log" 2>&1; then
        /usr/bin/python3 -c "
import json, sys
r = json.load(open('$rep')); g = r['generation']
p = g['path']
print('%-12s %-16s %6d %14.0f %12.1f %-40s bound: %s (compute %.0f, chains %.0f, fabric %.0f, links %.0f, weight loads %.0f)' % (
      '$p', '$mode', len(r['wafers']), g['decode_cycles_per_token'], g['decode_tokens_per_s'],
      sys.argv[1], g['bound'], p['compute_cycles'], p['chain_cycles'], p['fabric_cycles'],
      p['wafer_link_cycles'], p['weight_load_cycles']))" "$(published $p)"
      else
        printf "%-12s %-16s %6s %14s %12s %-40s\n" $p $mode - - refused "$(published $p)"
        grep -m1 "error" "$out/$p-$mode.log" | cut -c1-160
      fi
    done
  done
fi
