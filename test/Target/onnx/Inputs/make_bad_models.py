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
# An opset newer than wsc knows, and ops in forms older than wsc reads: Slice
# before opset 10 took its bounds as attributes, Clip before 6 had
# consumed_inputs. One report names them all.
save("opset25", [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], [x], [y], [w], opset=25)
save("old-forms", [helper.make_node("Slice", ["x"], ["s"], name="slice", starts=[0], ends=[1]),
                   helper.make_node("Clip", ["s"], ["y"], name="clip")], [x], [y], opset=5)
# Several unsupported ops and an unknown attribute: all must be named in one report.
save("unsupported", [helper.make_node("NonZero", ["x"], ["r"], name="act"),
                     helper.make_node("StringNormalizer", ["r"], ["l"], name="strings"),
                     helper.make_node("Softmax", ["l"], ["s"], name="sm", axis=1, temperature=2.0),
                     helper.make_node("NonZero", ["s"], ["y"], name="act2")], [x], [y], [w])
# An If whose condition is a graph input: only a folded condition imports.
cond = helper.make_tensor_value_info("cond", TensorProto.BOOL, [])
one = helper.make_graph([helper.make_node("Identity", ["x"], ["t"], name="then_id")], "then", [],
                        [helper.make_tensor_value_info("t", F, [2, 4])])
two = helper.make_graph([helper.make_node("Neg", ["x"], ["e"], name="else_neg")], "else", [],
                        [helper.make_tensor_value_info("e", F, [2, 4])])
save("if-dynamic", [helper.make_node("If", ["cond"], ["y"], name="branch", then_branch=one,
                                     else_branch=two)], [x, cond], [y])
# An If on a constant: the taken branch is checked and converted like the
# graph, and its errors name the If and the branch. The other branch's
# unsupported op does not matter.
yes = numpy_helper.from_array(np.array(True), "yes")
bad_then = helper.make_graph([helper.make_node("NonZero", ["x"], ["t"], name="leaky")], "then",
                             [], [helper.make_tensor_value_info("t", F, [2, 4])])
mismatch = helper.make_graph([helper.make_node("MatMul", ["x", "w3"], ["t"], name="mm")], "then",
                             [], [helper.make_tensor_value_info("t", F, [2, 4])])
unique = helper.make_graph([helper.make_node("Unique", ["x"], ["e"], name="unique")], "else",
                           [], [helper.make_tensor_value_info("e", F, [2, 4])])
save("if-branch-unsupported", [helper.make_node("If", ["yes"], ["y"], name="branch",
                                                then_branch=bad_then, else_branch=unique)],
     [x], [y], [yes, w])
save("if-branch-error", [helper.make_node("If", ["yes"], ["y"], name="branch",
                                          then_branch=mismatch, else_branch=unique)],
     [x], [y], [yes, w, w3])
# Element types wsc does not import.
strings = helper.make_tensor_value_info("u", TensorProto.STRING, [4])
save("string", [helper.make_node("Identity", ["u"], ["y"], name="identity")], [strings],
     [helper.make_tensor_value_info("y", TensorProto.STRING, [4])])
# Mod on floats needs fmod=1, as ONNX says.
save("mod-float", [helper.make_node("Mod", ["x", "x"], ["y"], name="mod")], [x], [y])
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
