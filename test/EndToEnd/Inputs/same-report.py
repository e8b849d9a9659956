# Compares wsc-run reports: the first (one process) with each other, on
# every figure but the host's own.
import json
import sys

HOST = {"wall_s", "rounds", "message_log_peak_bytes", "batched_trips"}
one = json.load(open(sys.argv[1]))
for path in sys.argv[2:]:
    other = json.load(open(path))
    for key in sorted(set(one) | set(other)):
        if key not in HOST and one.get(key) != other.get(key):
            print(f"{path}: {key} differs: {one.get(key)} != {other.get(key)}")
print(f"same as one process: {one['cycles']} cycles, {one['instructions']} instructions, "
      f"{len(one['kernels'])} kernels")
