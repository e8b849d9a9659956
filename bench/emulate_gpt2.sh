#!/bin/bash
# Benchmark (issue: runtime): GPT-2-small at T=128 compiled for wse3 and run on
# the emulator, against torch on CPU (OpenBLAS), on this machine in one run.
# Prints compile time, .wafer size, emulator wall time and peak RSS at 1 thread
# and at all threads, torch's forward time, the ratios, and the logits' max abs
# error.
#   bench/emulate_gpt2.sh            (exports the model first via bench/import_gpt2_small.sh)
# Each emulator run is capped (WSC_EMU_TIMEOUT seconds, default 1200, and
# WSC_EMU_MEM_KB of address space, default 11.5 GiB, so that it fails with
# "out of host memory" instead of pushing a shared machine into the OOM killer);
# a capped run is reported as not finished.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/bin
src=bench/out/gpt2-small
out=bench/out/emulate
mkdir -p "$out"
[[ -f $src/config.json ]] || bench/import_gpt2_small.sh >/dev/null
echo "compile: wsc-compile $src/model.onnx --arch=wse3"
/usr/bin/time -f "%e %M" -o "$out/compile.time" \
  $bin/wsc-compile "$src/model.onnx" --arch=wse3 --report="$out/compile.json" -o "$out/model.wafer"
read -r cwall crss < "$out/compile.time"
echo "  $cwall s, peak RSS $((crss / 1024)) MiB, model.wafer $(( $(stat -c %s "$out/model.wafer") / 1048576 )) MiB"
limit_s=${WSC_EMU_TIMEOUT:-1200}
limit_kb=${WSC_EMU_MEM_KB:-12058624}
for threads in 1 $(nproc); do
  rm -f "$out/run$threads.json" "$out/logits$threads.npy"
  set +e
  ( ulimit -v "$limit_kb"
    /usr/bin/time -f "%e %M" -o "$out/run$threads.time" timeout "$limit_s" \
      $bin/wsc-run "$out/model.wafer" --input idx="$src/idx.npy" --output logits="$out/logits$threads.npy" \
      --threads "$threads" --report "$out/run$threads.json" > "$out/run$threads.log" 2>&1 )
  rc=$?
  set -e
  read -r rwall rrss < <(grep -v "^Command" "$out/run$threads.time")
  if [[ $rc -eq 0 ]]; then
    echo "emulator, $threads thread(s): $rwall s wall, peak RSS $((rrss / 1024)) MiB"
  else
    echo "emulator, $threads thread(s): did not finish (exit $rc after $rwall s, peak RSS $((rrss / 1024)) MiB):" \
      "$(grep -m1 error: "$out/run$threads.log" || echo "timeout ${limit_s} s")"
  fi
done
/usr/bin/python3 - "$src" "$out" "$(nproc)" <<'PY'
import json, sys, time
import numpy as np
import torch
sys.path.insert(0, "frontends/pytorch")
import gpt  # noqa: E402
src, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
cfg = json.load(open(f"{src}/config.json"))
m = cfg["model"]
model = gpt.build(gpt.GPTConfig(**{k: m[k] for k in ("n_layer", "n_head", "n_embd", "vocab_size", "block_size", "bias")}),
                  cfg.get("seed", 0)).eval()
idx = torch.from_numpy(np.load(f"{src}/idx.npy"))
want = np.load(f"{src}/logits.npy")
torch_s = {}
with torch.no_grad():
    for threads in (1, n):
        torch.set_num_threads(threads)
        model(idx)  # warm up
        t0 = time.perf_counter()
        reps = 3
        for _ in range(reps):
            model(idx)
        torch_s[threads] = (time.perf_counter() - t0) / reps
import os
for threads in (1, n):
    if not os.path.exists(f"{out}/run{threads}.json"):
        print(f"threads {threads}: emulator did not finish, torch {torch_s[threads]:.3f} s")
        continue
    r = json.load(open(f"{out}/run{threads}.json"))
    got = np.load(f"{out}/logits{threads}.npy")
    print(f"threads {threads}: emulator {r['wall_s']:.2f} s, torch {torch_s[threads]:.3f} s, "
          f"ratio {r['wall_s'] / torch_s[threads]:.1f}x; {r['cycles']} cycles; "
          f"max abs error vs torch {np.abs(got - want).max():.3g}")
PY
