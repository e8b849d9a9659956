"""QuantizeLinear and DequantizeLinear in opset 21's forms, with numpy's expected
outputs.

usage: make_qdq21_models.py OUT_DIR

qdq21.onnx takes x [4, 6] (x.npy) and q [4, 6] int8 (q.npy); outputs
(want_NAME.npy):
- blocked: x quantized to int8 with a scale and zero point per 4 columns
  (block_size 4 along axis 1: [4, 2], the last block short);
- wide: x quantized with output_dtype int16 and a scalar scale;
- back: q dequantized with the blocked scale and zero point.
"""
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(21)
x = (rng.standard_normal((4, 6)) * 40).astype(np.float32)
q = rng.integers(-128, 128, (4, 6)).astype(np.int8)
scale = rng.uniform(0.2, 1.0, (4, 2)).astype(np.float32)
zero = rng.integers(-10, 10, (4, 2)).astype(np.int8)
full_scale = np.repeat(scale, 4, axis=1)[:, :6]
full_zero = np.repeat(zero, 4, axis=1)[:, :6].astype(np.float32)
want = {
    "blocked": np.clip(np.rint(x / full_scale) + full_zero, -128, 127).astype(np.int8),
    "wide": np.clip(np.rint(x / np.float32(0.01)), -32768, 32767).astype(np.int16),
    "back": ((q.astype(np.float32) - full_zero) * full_scale).astype(np.float32),
}
N = helper.make_node
nodes = [N("QuantizeLinear", ["x", "scale", "zero"], ["blocked"], axis=1, block_size=4),
         N("QuantizeLinear", ["x", "small"], ["wide"], output_dtype=TensorProto.INT16),
         N("DequantizeLinear", ["q", "scale", "zero"], ["back"], axis=1, block_size=4)]
kinds = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int8): TensorProto.INT8,
         np.dtype(np.int16): TensorProto.INT16}


def info(name, a):
    return helper.make_tensor_value_info(name, kinds[a.dtype], list(a.shape))


g = helper.make_graph(nodes, "g", [info("x", x), info("q", q)],
                      [info(n, a) for n, a in want.items()],
                      [numpy_helper.from_array(scale, "scale"), numpy_helper.from_array(zero, "zero"),
                       numpy_helper.from_array(np.array(0.01, np.float32), "small")])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)]),
          os.path.join(out, "qdq21.onnx"))
np.save(os.path.join(out, "x.npy"), x)
np.save(os.path.join(out, "q.npy"), q)
for n, a in want.items():
    np.save(os.path.join(out, "want_" + n + ".npy"), a)

# bad-scale.onnx: a 1-D scale of 8 along an axis of 6, refused (the
# composed ops failed, and what was built on them dereferenced nothing).
g = helper.make_graph([N("QuantizeLinear", ["x", "eight"], ["y"], axis=1, name="eight")], "g",
                      [info("x", x)], [info("y", want["blocked"])],
                      [numpy_helper.from_array(np.ones(8, np.float32), "eight")])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)]),
          os.path.join(out, "bad-scale.onnx"))

# bad-axis.onnx: blocks along axis 65 of a 2-D input, refused (it read past
# the shape's end).
g = helper.make_graph([N("QuantizeLinear", ["x", "scale", "zero"], ["y"], axis=65, block_size=4,
                         name="far")], "g", [info("x", x)], [info("y", want["blocked"])],
                      [numpy_helper.from_array(scale, "scale"),
                       numpy_helper.from_array(zero, "zero")])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)]),
          os.path.join(out, "bad-axis.onnx"))
