"""Writes small malformed or unsupported ONNX models into the folder given as argv[1].

Each model isolates one class of bad input that the importer must reject with a
clean error naming the file and node.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
F = TensorProto.FLOAT


def save(name, nodes, inputs, outputs, inits=(), opset=17):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.save(model, os.path.join(out, name + ".onnx"))


x = helper.make_tensor_value_info("x", F, [2, 4])
y = helper.make_tensor_value_info("y", F, [2, 4])
w = numpy_helper.from_array(np.ones((4, 4), np.float32), "w")

# Two nodes that consume each other's outputs.
save("cycle", [helper.make_node("Add", ["x", "b"], ["a"], name="first"),
               helper.make_node("Mul", ["a", "x"], ["b"], name="second"),
               helper.make_node("Identity", ["a"], ["y"], name="out")], [x], [y])
# A node input that nothing defines (a missing initializer).
save("missing-input", [helper.make_node("MatMul", ["x", "w_missing"], ["y"], name="mm")], [x], [y])
# Inner dimensions that do not agree.
w3 = numpy_helper.from_array(np.ones((3, 4), np.float32), "w3")
save("shape-mismatch", [helper.make_node("MatMul", ["x", "w3"], ["y"], name="mm")], [x], [y], [w3])
# float + int64.
i = numpy_helper.from_array(np.ones((2, 4), np.int64), "i")
save("type-mismatch", [helper.make_node("Add", ["x", "i"], ["y"], name="add")], [x], [y], [i])
# Opsets outside 13..17.
save("opset12", [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], [x], [y], [w], opset=12)
save("opset18", [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], [x], [y], [w], opset=18)
# Several unsupported ops: all must be named in one report.
save("unsupported", [helper.make_node("Relu", ["x"], ["r"], name="act"),
                     helper.make_node("LSTM", ["r", "w", "w"], ["l"], name="rnn"),
                     helper.make_node("Relu", ["l"], ["y"], name="act2")], [x], [y], [w])
# External data whose file does not exist, and one that is too short.
ext = numpy_helper.from_array(np.ones((4, 4), np.float32) * 2, "w")
ext.ClearField("raw_data")
ext.data_location = TensorProto.EXTERNAL
for k, v in (("location", "absent.bin"), ("offset", "0"), ("length", "64")):
    ext.external_data.add(key=k, value=v)
save("extdata-missing", [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], [x], [y], [ext])
short = onnx.TensorProto()
short.CopyFrom(ext)
del short.external_data[:]
for k, v in (("location", "short.bin"), ("offset", "16"), ("length", "64")):
    short.external_data.add(key=k, value=v)
with open(os.path.join(out, "short.bin"), "wb") as f:
    f.write(b"\0" * 40)
save("extdata-short", [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], [x], [y], [short])
# A good little model, for truncation and bit flips.
save("good", [helper.make_node("MatMul", ["x", "w"], ["m"], name="mm"),
              helper.make_node("Add", ["m", "x"], ["y"], name="add")], [x], [y], [w])
