"""Flips bytes of a .wafer program one at a time and runs each copy.

usage: flip.py WSC_RUN PROGRAM INPUT_NAME INPUT_NPY OUTPUT_NAME WORKDIR COUNT [SEED]

Every flipped copy must either be refused (exit 1 with an "error:" line) or
run to exit 0 with exactly the outputs of the intact program (a flip that
changes nothing the program means, such as a non-canonical varint). Prints
"flips N: refused R, same S" and exits 1 on any other outcome (a different
answer with exit 0, a crash, a hang of more than 60 s).
"""
import os
import random
import subprocess
import sys

wsc_run, program, in_name, in_npy, out_name, work, count = sys.argv[1:8]
count = int(count)
rng = random.Random(int(sys.argv[8]) if len(sys.argv) > 8 else 1)
os.makedirs(work, exist_ok=True)
data = bytearray(open(program, "rb").read())


def run(path, out):
    if os.path.exists(out):
        os.remove(out)
    return subprocess.run([wsc_run, path, "--input", f"{in_name}={in_npy}", "--output",
                           f"{out_name}={out}", "--threads", "1"],
                          capture_output=True, text=True, timeout=60)


base_out = os.path.join(work, "base.npy")
r = run(program, base_out)
if r.returncode != 0:
    sys.exit(f"the intact program fails: {r.stderr}")
base = open(base_out, "rb").read()
refused = same = 0
bad = []
flipped = os.path.join(work, "flipped.wafer")
out = os.path.join(work, "flipped.npy")
for i in range(count):
    at = rng.randrange(len(data))
    mask = rng.randrange(1, 256)
    copy = bytearray(data)
    copy[at] ^= mask
    open(flipped, "wb").write(copy)
    try:
        r = run(flipped, out)
    except subprocess.TimeoutExpired:
        bad.append(f"byte {at} ^ {mask:#x}: hangs")
        continue
    if r.returncode == 1 and r.stderr.startswith("error: ") and not os.path.exists(out):
        refused += 1
    elif r.returncode == 0 and open(out, "rb").read() == base:
        same += 1
    else:
        bad.append(f"byte {at} ^ {mask:#x}: exit {r.returncode}, {r.stderr.strip()[:200]!r}")
print(f"flips {count}: refused {refused}, same {same}")
for b in bad[:20]:
    print("BAD", b)
sys.exit(1 if bad else 0)
