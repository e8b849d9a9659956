"""BitwiseAnd, BitwiseOr, BitwiseXor and BitwiseNot (opset 18) over signed and
unsigned integers, with numpy's expected outputs.

usage: make_bitwise_models.py OUT_DIR

bitwise.onnx: for each type T of int8, int16, int32, int64, uint8 and uint16,
inputs a_T [3, 4] and b_T [4] (broadcast; a_T.npy, b_T.npy) and outputs
and_T, or_T, xor_T, not_T (want_NAME.npy), values spanning the type's
range (int64's within int32, the wafer's word).
"""
import os
import sys

import numpy as np
import onnx
from onnx import helper, TensorProto

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(18)
types = {"int8": TensorProto.INT8, "int16": TensorProto.INT16, "int32": TensorProto.INT32,
         "int64": TensorProto.INT64, "uint8": TensorProto.UINT8, "uint16": TensorProto.UINT16}
nodes, inputs, outputs = [], [], []
for name, proto in types.items():
    dt = np.dtype(name)
    info = np.iinfo(np.int32) if name == "int64" else np.iinfo(dt)
    a = rng.integers(info.min, int(info.max) + 1, (3, 4)).astype(dt)
    b = rng.integers(info.min, int(info.max) + 1, (4,)).astype(dt)
    a[0, :2] = [info.min, info.max]
    np.save(os.path.join(out, f"a_{name}.npy"), a)
    np.save(os.path.join(out, f"b_{name}.npy"), b)
    inputs += [helper.make_tensor_value_info(f"a_{name}", proto, [3, 4]),
               helper.make_tensor_value_info(f"b_{name}", proto, [4])]
    for op, f in (("And", np.bitwise_and), ("Or", np.bitwise_or), ("Xor", np.bitwise_xor)):
        y = f"{op.lower()}_{name}"
        nodes.append(helper.make_node("Bitwise" + op, [f"a_{name}", f"b_{name}"], [y]))
        outputs.append(helper.make_tensor_value_info(y, proto, [3, 4]))
        np.save(os.path.join(out, f"want_{y}.npy"), f(a, b))
    nodes.append(helper.make_node("BitwiseNot", [f"a_{name}"], [f"not_{name}"]))
    outputs.append(helper.make_tensor_value_info(f"not_{name}", proto, [3, 4]))
    np.save(os.path.join(out, f"want_not_{name}.npy"), np.bitwise_not(a))
g = helper.make_graph(nodes, "g", inputs, outputs)
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]),
          os.path.join(out, "bitwise.onnx"))
