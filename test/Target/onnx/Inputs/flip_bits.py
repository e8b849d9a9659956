"""Imports many bit-flipped copies of a model: each must import or fail cleanly.

Usage: flip_bits.py MODEL WSC_TRANSLATE WORKDIR. Prints one summary line.
A crash (signal), a hang, or an output file left after a failure is reported.
"""
import os
import random
import subprocess
import sys

model, tool, work = sys.argv[1:4]
data = open(model, "rb").read()
rng = random.Random(1234)
counts = {"ok": 0, "error": 0, "bad": 0}
for trial in range(200):
    b = bytearray(data)
    for _ in range(rng.choice([1, 2, 8])):
        pos = rng.randrange(len(b))
        b[pos] ^= 1 << rng.randrange(8)
    path = os.path.join(work, "flipped.onnx")
    out = os.path.join(work, "flipped.mlir")
    if os.path.exists(out):
        os.remove(out)
    open(path, "wb").write(bytes(b))
    try:
        r = subprocess.run([tool, "--import-onnx", path, "-o", out], capture_output=True, timeout=30)
    except subprocess.TimeoutExpired:
        print(f"HANG at trial {trial}")
        counts["bad"] += 1
        continue
    if r.returncode == 0:
        counts["ok"] += 1
    elif r.returncode == 1 and b"error: " in r.stderr and not os.path.exists(out):
        counts["error"] += 1
    else:
        counts["bad"] += 1
        print(f"BAD trial {trial}: exit {r.returncode}: {r.stderr[-300:]!r}")
print(f"flipped: {counts['ok']} imported, {counts['error']} clean errors, {counts['bad']} bad")
