# generation_timing.py REPORT.json STDOUT.txt: the `generation` object of a
# `wsc-run --generate` report is consistent with itself, with the run's
# clock and with the token lines wsc-run printed.
import json
import re
import sys

report = json.load(open(sys.argv[1]))
g = report["generation"]
clock = report["clock_hz"]
out = open(sys.argv[2]).read().splitlines()
lines = [l for l in out if l.startswith("sequence ")]
# Each token as the emulator picked it: "token K of sequence B: ID (picked at cycle C)".
live = [re.match(r"token (\d+) of sequence (\d+): (-?\d+) \(picked at cycle (\d+)\)$", l)
        for l in out if l.startswith("token ")]


def close(a, b):
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1.0)


def check(what, ok):
    print("%s: %s" % (what, "ok" if ok else "WRONG"))


steps = g["steps"]
previous_first = -1
for b, s in enumerate(g["sequences"]):
    c = s["token_cycles"]
    check("sequence %d: %d tokens picked at increasing cycles" % (b, steps),
          len(s["tokens"]) == len(c) == steps and all(x < y for x, y in zip(c, c[1:])))
    check("sequence %d: ttft > 0, = first pick - start" % b,
          s["ttft_cycles"] > 0 and s["ttft_cycles"] == c[0] - s["start_cycle"]
          and close(s["ttft_s"], s["ttft_cycles"] / clock))
    check("sequence %d: starts after the previous sequence's first token" % b,
          (b == 0 and s["start_cycle"] == 0) or (b > 0 and s["start_cycle"] > previous_first))
    decode = s["decode_cycles_per_token"]
    check("sequence %d: decode cycles per token > 0, tokens/s = clock / decode" % b,
          decode > 0 and close(decode, (c[-1] - c[0]) / (steps - 1))
          and close(s["tokens_per_s"], clock / decode))
    printed = re.match(r"sequence %d: ([0-9 ]+) \(picked at cycles ([0-9 ]+)\)$" % b, lines[b])
    check("sequence %d: printed as in the report" % b,
          printed is not None and [int(x) for x in printed.group(1).split()] == s["tokens"]
          and [int(x) for x in printed.group(2).split()] == c)
    mine = [(int(m.group(1)), int(m.group(3)), int(m.group(4))) for m in live
            if m and int(m.group(2)) == b]
    check("sequence %d: each token printed as it was picked, in order" % b,
          mine == [(k + 1, s["tokens"][k], c[k]) for k in range(steps)])
    previous_first = c[0]
check("every token line well formed", all(live))
seqs = g["sequences"]
last = max(s["token_cycles"][-1] for s in seqs)
mean = sum(s["token_cycles"][-1] - s["token_cycles"][0] for s in seqs) / (len(seqs) * (steps - 1))
check("batch: decode cycles per token is the mean over every gap",
      close(g["decode_cycles_per_token"], mean) and close(g["tokens_per_s"], clock / mean))
check("batch: tokens/s = B * G * clock / last pick",
      g["last_token_cycle"] == last and last <= report["cycles"]
      and close(g["batch_tokens_per_s"], len(seqs) * steps * clock / last))
print("kv_cache_bytes:", g["kv_cache_bytes"])
