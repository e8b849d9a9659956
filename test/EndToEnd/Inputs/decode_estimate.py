# decode_estimate.py COMPILE.json RUN.json [TOLERANCE]: whether the compile
# report's decode estimate (the longest path through the kernels) is within
# TOLERANCE (default 0.15) of the decode cycles per token that wsc-run
# --generate measured.
import json
import sys

estimate = json.load(open(sys.argv[1]))["generation"]["decode_cycles_per_token"]
emulated = json.load(open(sys.argv[2]))["generation"]["decode_cycles_per_token"]
ratio = estimate / emulated
tolerance = float(sys.argv[3]) if len(sys.argv) > 3 else 0.15
print("decode estimate %s %g%% of the emulator's" % (
    "within" if abs(ratio - 1) <= tolerance else "NOT within (ratio %.3f)" % ratio,
    100 * tolerance))
# The estimate's terms add up to it, and the bound names the largest.
gen = json.load(open(sys.argv[1]))["generation"]
terms = {"compute": gen["path"]["compute_cycles"], "chains": gen["path"]["chain_cycles"],
         "fabric latency": gen["path"]["fabric_cycles"],
         "wafer links": gen["path"]["wafer_link_cycles"],
         "external bandwidth": gen["path"]["weight_load_cycles"]}
adds = abs(sum(terms.values()) - estimate) <= 1e-6 * estimate
largest = max(terms, key=terms.get) == gen["bound"]
print("path terms %s, bound %s" % ("add up" if adds else "DO NOT add up",
                                   "is the largest" if largest else "is NOT the largest"))
# The CLI's decode figures (docs/generation.md): the compile report's
# estimate.decode and the run report's decode give the same figures as
# their generation sections.
compiled, run = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
cd, rd, rg = compiled["estimate"]["decode"], run["decode"], run["generation"]
first = sum(s["ttft_cycles"] for s in rg["sequences"]) / len(rg["sequences"])
# A one-token prompt's first token: one step at the clock.
same = (cd["cycles_per_token"] == gen["decode_cycles_per_token"] and
        cd["tokens_per_s"] == gen["decode_tokens_per_s"] and
        cd["kv_cache_bytes"] == gen["kv_cache_bytes"] and
        abs(cd["time_to_first_token_s"] * run["clock_hz"] - estimate) <= 1e-6 * estimate)
print("compile report's estimate.decode:", sorted(cd), "agrees" if same else "DISAGREES")
same = (rd["cycles_per_token"] == rg["decode_cycles_per_token"] and
        rd["tokens_per_s"] == rg["tokens_per_s"] and rd["time_to_first_token_cycles"] == round(first))
print("run report's decode:", sorted(rd), "agrees" if same else "DISAGREES")
