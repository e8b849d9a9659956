# decode_estimate.py COMPILE.json RUN.json: whether the compile report's
# decode estimate (the longest path through the kernels) is within 15% of
# the decode cycles per token that wsc-run --generate measured.
import json
import sys

estimate = json.load(open(sys.argv[1]))["generation"]["decode_cycles_per_token"]
emulated = json.load(open(sys.argv[2]))["generation"]["decode_cycles_per_token"]
ratio = estimate / emulated
print("decode estimate %s 15%% of the emulator's" % ("within" if abs(ratio - 1) <= 0.15 else
                                                     "NOT within (ratio %.3f)" % ratio))
