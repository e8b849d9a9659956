"""Writes a Reshape whose shape is a graph input (as ONNX's node tests pass it),
with the shape in .npy and .pb files and a wrongly typed .npy, into argv[1]."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
node = helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")
graph = helper.make_graph(
    [node], "bind",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
     helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
          os.path.join(out, "reshape.onnx"))
shape = np.array([3, 2], dtype=np.int64)
np.save(os.path.join(out, "shape.npy"), shape)
with open(os.path.join(out, "shape.pb"), "wb") as f:
    f.write(numpy_helper.from_array(shape, "shape").SerializeToString())
np.save(os.path.join(out, "shape_i32.npy"), shape.astype(np.int32))
np.save(os.path.join(out, "shape_3.npy"), np.array([3, 2, 1], dtype=np.int64))
np.save(os.path.join(out, "x.npy"), np.arange(6, dtype=np.float32).reshape(2, 3))
