#!/bin/bash
# Benchmark (issue: runtime): GPT-2-small at T=128 compiled for wse3 and run on
# the emulator, against torch on CPU (OpenBLAS), on this machine in one run.
# Two compiles: the default one, and a compact one on a small share of the
# wafer (--utilization=0.03: bigger tiles on fewer PEs, slower on the
# hardware) that shows what the emulator costs per PE. For each: compile
# time, .wafer size, the memory `wsc-run --plan` gives before the message logs,
# the emulator's wall time (whole process) and peak RSS (and the logs' peak) at
# 1 thread and at all threads, REPS runs each (default 3: this host's runs
# vary 10-40 %); then the ratio of the emulated run (the report's wall_s,
# without loading the program; the best and the median run) to torch's best
# of five forward passes, the logits' max abs error, and whether the runs
# gave identical logits and cycles, and the best run's instructions and
# PE-token steps per second. At one thread each rep runs both engines, the
# region engine (wsc-run's default) and the reference one, one after the
# other (which goes first alternates), and their logits and cycles must be
# the same.
#   bench/emulate_gpt2.sh            (exports the model first via bench/import_gpt2_small.sh)
#   CONFIGS="default" bench/emulate_gpt2.sh    (only the default compile)
#   REUSE=1 bench/emulate_gpt2.sh    (the .wafer files of the last run: for emulator changes)
#   RANKS="2 3" bench/emulate_gpt2.sh  (also under mpirun -np 2 and 3; default "2" when
#                                       wsc-run has MPI, "" for none)
# Each emulator run is capped (WSC_EMU_TIMEOUT seconds, default 1200, and
# WSC_EMU_MEM_KB of address space, default 11.5 GiB, so that it fails with
# "out of host memory" instead of pushing a shared machine into the OOM killer);
# a capped run is reported as not finished.
# Last, bench/host_probe.cpp prints what a dependent load and a fresh page cost
# on this host now: the emulator is bound by both, torch by neither, so the
# ratio moves with them between runs and hosts.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/bin
src=bench/out/gpt2-small
out=bench/out/emulate
configs=${CONFIGS:-default compact}
mkdir -p "$out"
[[ -f $src/config.json ]] || bench/import_gpt2_small.sh >/dev/null
limit_s=${WSC_EMU_TIMEOUT:-1200}
limit_kb=${WSC_EMU_MEM_KB:-12058624}
reps=${REPS:-3}
if [[ -z ${RANKS+x} ]]; then
  RANKS=""
  command -v mpirun > /dev/null && $bin/wsc-run --help | grep -q "mpirun -np" && RANKS=2
fi
[[ $(id -u) -eq 0 ]] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for config in $configs; do
  case $config in
    default) flags=() ;;
    compact) flags=(--utilization=0.03) ;;
    *) echo "error: unknown config '$config' (default, compact)" >&2; exit 1 ;;
  esac
  pre="$out/$config"
  echo "$config compile: wsc-compile $src/model.onnx --arch=wse3 ${flags[*]}"
  if [[ ${REUSE:-0} == 1 && -f $pre.wafer && -f $pre.compile.json && -f $pre.compile.time ]]; then
    echo "  reused from an earlier run (REUSE=1; rebuild it when the compiler changed):"
  else
    /usr/bin/time -f "%e %M" -o "$pre.compile.time" \
      $bin/wsc-compile "$src/model.onnx" --arch=wse3 "${flags[@]}" --report="$pre.compile.json" \
      -o "$pre.wafer"
  fi
  read -r cwall crss < "$pre.compile.time"
  pes=$(/usr/bin/python3 -c "import json, sys; r = json.load(open(sys.argv[1])); print(sum(k['h'] * k['w'] for w in r['wafers'] for k in w['kernels']))" "$pre.compile.json")
  echo "  $cwall s, peak RSS $((crss / 1024)) MiB, model.wafer $(( $(stat -c %s "$pre.wafer") / 1048576 )) MiB, $pes PEs"
  $bin/wsc-run "$pre.wafer" --plan --report "$pre.plan.json" > /dev/null
  plan=$(/usr/bin/python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['memory_plan']['total'] >> 20)" "$pre.plan.json")
  echo "  wsc-run --plan: $plan MiB before the message logs"
  for threads in 1 $(nproc); do
    for rep in $(seq "$reps"); do
     # A run is faster after another has freed its memory (the host backs
     # fresh pages slowly), so the engines take turns at going first.
     engines=region
     [[ $threads == 1 ]] && engines="region reference"
     [[ $threads == 1 && $((rep % 2)) == 0 ]] && engines="reference region"
     for engine in $engines; do
      run="$pre.run$threads.$rep"
      [[ $engine == reference ]] && run="$pre.ref$threads.$rep"
      rm -f "$run.json" "$run.npy"
      set +e
      ( ulimit -v "$limit_kb"
        /usr/bin/time -f "%e %M" -o "$run.time" timeout "$limit_s" \
          $bin/wsc-run "$pre.wafer" --input idx="$src/idx.npy" --output logits="$run.npy" \
          --threads "$threads" --engine "$engine" --report "$run.json" > "$run.log" 2>&1 )
      rc=$?
      set -e
      read -r rwall rrss < <(grep -v "^Command" "$run.time")
      if [[ $rc -eq 0 ]]; then
        logs=$(/usr/bin/python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['message_log_peak_bytes'] >> 20)" "$run.json")
        echo "  emulator ($engine), $threads thread(s), run $rep: $rwall s wall, peak RSS $((rrss / 1024)) MiB (message logs' peak $logs MiB)"
      else
        echo "  emulator ($engine), $threads thread(s), run $rep: did not finish (exit $rc after $rwall s, peak RSS $((rrss / 1024)) MiB):" \
          "$(grep -m1 error: "$run.log" || echo "timeout ${limit_s} s")"
      fi
     done
    done
  done
  # Split over processes (one thread each): the wall time of the whole
  # mpirun, and the largest process's peak RSS beside its plan.
  for ranks in $RANKS; do
    run="$pre.mpi$ranks"
    rm -f "$run".*
    set +e
    ( ulimit -v "$limit_kb"
      /usr/bin/time -f "%e" -o "$run.time" timeout "$limit_s" mpirun --oversubscribe -np "$ranks" \
        sh -c 'exec /usr/bin/time -f "%M" -o "$0.rss.$OMPI_COMM_WORLD_RANK" "$@"' "$run" \
        $bin/wsc-run "$pre.wafer" --input idx="$src/idx.npy" --output logits="$run.npy" \
        --report "$run.json" > "$run.log" 2>&1 )
    rc=$?
    set -e
    rwall=$(grep -v "^Command" "$run.time" | tail -1)
    rss=$(cat "$run".rss.* 2>/dev/null | grep -v "^Command" | sort -n | tail -1)
    planned=$($bin/wsc-run "$pre.wafer" --plan --ranks "$ranks" | head -1 | sed 's/.* takes \(.*\) of its.*/\1/')
    if [[ $rc -eq 0 ]]; then
      echo "  mpirun -np $ranks: $rwall s wall, largest process's peak RSS $((${rss:-0} / 1024)) MiB (plan $planned before the message logs)"
    else
      echo "  mpirun -np $ranks: did not finish (exit $rc after $rwall s): $(grep -m1 error: "$run.log" || echo "timeout ${limit_s} s")"
    fi
  done
done
RANKS="$RANKS" /usr/bin/python3 - "$src" "$out" "$(nproc)" "$reps" $configs <<'PY'
import json, os, sys, time
import numpy as np
import torch
sys.path.insert(0, "frontends/pytorch")
import gpt  # noqa: E402
src, out, n, reps, configs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:]
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
        times = []
        for _ in range(5):  # the best of five, as the emulator's best run
            t0 = time.perf_counter()
            model(idx)
            times.append(time.perf_counter() - t0)
        torch_s[threads] = min(times)
for config in configs:
    for threads, engine, kind in ((1, "region", "run"), (1, "reference", "ref"), (n, "region", "run")):
        runs = [f"{out}/{config}.{kind}{threads}.{rep}" for rep in range(1, reps + 1)]
        runs = [r for r in runs if os.path.exists(f"{r}.json")]
        if not runs:
            print(f"{config}, {engine} engine, threads {threads}: emulator did not finish, torch {torch_s[threads]:.3f} s")
            continue
        reports = [json.load(open(f"{r}.json")) for r in runs]
        logits = [np.load(f"{r}.npy") for r in runs]
        walls = sorted(r["wall_s"] for r in reports)
        best, median = walls[0], walls[len(walls) // 2]
        if kind == "ref" and os.path.exists(f"{out}/{config}.run1.1.json"):  # against the region engine's
            reports.append(json.load(open(f"{out}/{config}.run1.1.json")))
            logits.append(np.load(f"{out}/{config}.run1.1.npy"))
        same = all(np.array_equal(logits[0], l) for l in logits) and len({r["cycles"] for r in reports}) == 1
        # The engine's rates in the best run: interpreted instructions, and
        # PE-token steps (each PE in use takes each token once).
        fast = min(reports[:len(walls)], key=lambda r: r["wall_s"])
        rates = (f"{fast['instructions'] / fast['wall_s']:.3g} instructions/s, "
                 f"{fast['pes_active'] * fast['tokens'] / fast['wall_s']:.3g} PE-token steps/s, "
                 f"{fast.get('batched_trips', 0) / 1e6:.3g} M loop trips batched")
        print(f"{config}, {engine} engine, threads {threads}: emulator best {best:.2f} s, median {median:.2f} s of {len(walls)} "
              f"({', '.join(f'{w:.2f}' for w in walls)}), torch {torch_s[threads]:.3f} s, "
              f"ratio {best / torch_s[threads]:.1f}x (median {median / torch_s[threads]:.1f}x); "
              f"{reports[0]['cycles']} cycles; max abs error vs torch {np.abs(logits[0] - want).max():.3g}; "
              f"runs {'identical' if same else 'DIFFER'}; {rates}")
    one = f"{out}/{config}.run1.1"
    for ranks in os.environ.get("RANKS", "").split():
        run = f"{out}/{config}.mpi{ranks}"
        if not (os.path.exists(f"{run}.json") and os.path.exists(f"{one}.json")):
            continue
        r, base = json.load(open(f"{run}.json")), json.load(open(f"{one}.json"))
        same = np.array_equal(np.load(f"{run}.npy"), np.load(f"{one}.npy")) and r["cycles"] == base["cycles"]
        print(f"{config}, mpirun -np {ranks}: emulator {r['wall_s']:.2f} s, ratio {r['wall_s'] / torch_s[1]:.1f}x "
              f"torch at one thread; logits and cycles {'identical to' if same else 'DIFFER from'} one process")
PY
${CXX:-c++} -O2 -std=c++17 -o "$out/host_probe" bench/host_probe.cpp
"$out/host_probe"
