"""Writes gather{0,1}.onnx (a Gather along axis 0 or 1 of a 3x4 constant by
the graph input idx, two int64 indices) and index files into argv[1]."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
for axis in (0, 1):
    data = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(3, 4), "data")
    idx = helper.make_tensor_value_info("idx", TensorProto.INT64, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4] if axis == 0 else [3, 2])
    graph = helper.make_graph([helper.make_node("Gather", ["data", "idx"], ["y"], name="g", axis=axis)],
                              "g", [idx], [y], [data])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              os.path.join(out, f"gather{axis}.onnx"))
for name, v in [("ok", [1, -1]), ("last", [3, 0]), ("neg", [0, -5]), ("hi", [1, 4]), ("big", [100, 0])]:
    np.save(os.path.join(out, f"{name}.npy"), np.array(v, np.int64))
