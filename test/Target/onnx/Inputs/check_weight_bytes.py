"""Reads wsgraph IR on stdin; checks each weight's bytes against the ONNX initializer."""
import re
import sys

import numpy as np
import onnx
from onnx import numpy_helper

model = onnx.load(sys.argv[1])  # loads external data too
inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
pattern = re.compile(r'wsgraph\.weight "([^"]+)" from "([^"]+)" at (\d+) : tensor<([0-9x]+)xf32>')
match = differ = 0
for name, path, offset, dims in pattern.findall(sys.stdin.read()):
    shape = [int(d) for d in dims.split("x")]
    count = int(np.prod(shape))
    with open(path, "rb") as f:
        f.seek(int(offset))
        got = np.frombuffer(f.read(4 * count), np.float32).reshape(shape)
    if name in inits and np.array_equal(inits[name], got):
        match += 1
    else:
        differ += 1
        print("differs:", name)
print(f"{match} weights match, {differ} differ")
