#!/bin/bash
# Benchmark (issue: unstructured sparsity): dense models beside their 75%-sparse
# forms, compiled for wse3 with weights elided (magnitude pruning of
# every linear weight but the LM head, `sparsity=0.75`). Prints wafers, SRAM
# used, PEs, cycles per token, balance, estimated tokens/s, the weight bytes
# (dense, held, and how many times fewer), and the compile's wall time:
#   - gpt3-1.3b, dense and sparse, pipelined and in weight streaming, at fp32,
#     and pipelined at fp16 (16-bit values in the sparse tiles too);
#   - gpt3-13b, which needs two wafers dense;
#   - Sparse-IFT's sparse wide gpt3-1.3b: hidden size x 1/sqrt(1 - 0.75) = 2
#     (4096, 32 heads of 128), so its nonzeros match the dense model's.
#   bench/sparsity.sh
#   CASES="1.3b wide" SEQ=128 bench/sparsity.sh
# Each compile is capped at TIMEOUT seconds (default 1800) and MEM_GB of
# virtual memory (default 14).
set -uo pipefail
cd "$(dirname "$0")/.."
bin=build/bin
out=bench/out/sparsity
seq=${SEQ:-2048}
mkdir -p "$out"
source bench/compile-preset.sh
# gpt3-1.3b widened as Sparse-IFT's sparse wide family: nanoGPT's keys.
wide=$out/gpt3-1.3b-wide.json
echo '{"n_layer": 24, "n_head": 32, "n_embd": 4096, "vocab_size": 50257, "block_size": 2048}' > "$wide"

declare -A done
row() { # LABEL PRESET MODE OPTIONS (each label compiled once a run)
  local label=$1 p=$2 mode=$3 options=$4
  local dir=$out/$label
  [[ -n ${done[$label]:-} ]] && return
  done[$label]=1
  mkdir -p "$dir"
  out=$dir compile_preset "$p" "$mode" "arch=wse3 $options" "${TIMEOUT:-1800}"
  local status=$?
  rep=$dir/$(basename "$p" .json)-$mode.json
  if [[ $status -ne 0 ]]; then
    printf "%-24s failed after %s s: %s\n" "$label" "$wall" "${why:0:140}"
    return
  fi
  /usr/bin/python3 - "$rep" "$label" "$wall" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
w, e = r["wafers"], r["estimate"]
gib = sum(x["sram_bytes_used"] for x in w) / 2**30
pes = sum(x["pes_used"] for x in w)
s = r.get("sparse_weights")
weights = (f"{s['dense_weight_bytes'] / 2**30:6.2f} {s['weight_bytes'] / 2**30:6.2f} "
           f"{s['dense_weight_bytes'] / s['weight_bytes']:5.2f}x" if s else f"{'':6} {'':6} {'':6}")
ws = r.get("weight_streaming")
layer = f" streamed {ws['bytes_per_layer'] / 2**20:.0f} MiB/layer ({ws['bound']})" if ws else ""
print(f"{sys.argv[2]:<24} {len(w):>3} {gib:>8.2f} {pes:>8} {e['cycles_per_token']:>8.0f} "
      f"{e['balance']:>6.3f} {e['tokens_per_s']:>10.0f} {weights} {float(sys.argv[3]):>7.1f}{layer}")
PY
}

echo "wse3, fp32 unless named, seq $seq; weights: GiB of the sparse kernels' tiles, dense and held"
printf "%-24s %3s %8s %8s %8s %6s %10s %6s %6s %6s %7s\n" model waf "SRAM GiB" PEs cyc/tok \
  bal tokens/s dense held fewer "wall s"
for c in ${CASES:-1.3b fp16 streaming 13b wide}; do
  case $c in
  1.3b)
    row gpt3-1.3b gpt3-1.3b pipelined ""
    row gpt3-1.3b-s75 gpt3-1.3b pipelined "sparsity=0.75" ;;
  fp16)
    row gpt3-1.3b-fp16 gpt3-1.3b pipelined "precision=fp16"
    row gpt3-1.3b-fp16-s75 gpt3-1.3b pipelined "precision=fp16 sparsity=0.75" ;;
  streaming)
    row gpt3-1.3b-ws gpt3-1.3b weight-streaming ""
    row gpt3-1.3b-ws-s75 gpt3-1.3b weight-streaming "sparsity=0.75" ;;
  13b)
    row gpt3-13b gpt3-13b pipelined ""
    row gpt3-13b-s75 gpt3-13b pipelined "sparsity=0.75" ;;
  wide)
    row gpt3-1.3b gpt3-1.3b pipelined ""
    row gpt3-1.3b-wide-s75 "$wide" pipelined "sparsity=0.75" ;;
  esac
done
