"""Writes ONNX models that a hostile user might hand the importer into argv[1].

Each one was accepted before (issue 27) and must now be refused with an
error naming the file and what is wrong.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
F = TensorProto.FLOAT


def save(path, nodes, inputs, outputs, inits=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.save(model, os.path.join(out, path))
    return model


x = helper.make_tensor_value_info("x", F, [2, 4])
y = helper.make_tensor_value_info("y", F, [2, 4])
shape = numpy_helper.from_array(np.array([2, 4], np.int64), "shape")

# allowzero is a flag: 0 or 1.
save("allowzero.onnx", [helper.make_node("Reshape", ["x", "shape"], ["y"], name="r", allowzero=100)],
     [x], [y], [shape])
# An attribute of the wrong type: perm is a list of ints, not a float.
save("perm-float.onnx", [helper.make_node("Transpose", ["x"], ["t"], name="t", perm=1.5),
                         helper.make_node("Identity", ["t"], ["y"], name="i")], [x], [y])
# keepdims is a flag too.
save("keepdims.onnx", [helper.make_node("ReduceSum", ["x"], ["y"], name="s", keepdims=7)],
     [x], [helper.make_tensor_value_info("y", F, [2, 1])], opset=13)
# An attribute the op does not have.
save("unknown-attr.onnx", [helper.make_node("Relu", ["x"], ["y"], name="relu", bogus=1)], [x], [y])
# Declared outputs that the graph does not compute: a double, 2^40 elements.
save("output-double.onnx", [helper.make_node("Relu", ["x"], ["y"], name="relu")], [x],
     [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [2, 4])])
save("output-huge.onnx", [helper.make_node("Relu", ["x"], ["y"], name="relu")], [x],
     [helper.make_tensor_value_info("y", F, [2 ** 40])])
save("output-rank.onnx", [helper.make_node("Relu", ["x"], ["y"], name="relu")], [x],
     [helper.make_tensor_value_info("y", F, [8])])
# A symbolic dimension is no promise: this one imports.
save("output-symbolic.onnx", [helper.make_node("Relu", ["x"], ["y"], name="relu")], [x],
     [helper.make_tensor_value_info("y", F, ["batch", 4])])

# External data through a symbolic link inside the model's folder that
# points outside it (here at a file the model has no business reading).
os.makedirs(os.path.join(out, "ext"), exist_ok=True)
with open(os.path.join(out, "secret.bin"), "wb") as f:
    f.write(np.arange(16, dtype=np.float32).tobytes())
link = os.path.join(out, "ext", "weights.bin")
if os.path.lexists(link):
    os.remove(link)
os.symlink(os.path.join("..", "secret.bin"), link)
w = numpy_helper.from_array(np.zeros((4, 4), np.float32), "w")
w.ClearField("raw_data")
w.data_location = TensorProto.EXTERNAL
for key, value in [("location", "weights.bin"), ("offset", "0"), ("length", "64")]:
    entry = w.external_data.add()
    entry.key, entry.value = key, value
save(os.path.join("ext", "model.onnx"), [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
     [x], [y], [w])
# The same file inside the folder (a link that stays inside is fine).
os.makedirs(os.path.join(out, "inside"), exist_ok=True)
with open(os.path.join(out, "inside", "data.bin"), "wb") as f:
    f.write(np.arange(16, dtype=np.float32).tobytes())
link = os.path.join(out, "inside", "weights.bin")
if os.path.lexists(link):
    os.remove(link)
os.symlink("data.bin", link)
save(os.path.join("inside", "model.onnx"),
     [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], [x], [y], [w])

# A Reshape whose shape multiplies past int64 (found by fuzz-onnx-import:
# signed overflow, undefined behaviour).
save("reshape-overflow.onnx", [helper.make_node("Reshape", ["x", "huge"], ["y"], name="r")], [x],
     [helper.make_tensor_value_info("y", F, None)],
     [numpy_helper.from_array(np.array([2 ** 62, 4], np.int64), "huge")])
