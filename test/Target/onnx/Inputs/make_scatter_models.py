"""Writes small models of the ops that index by data into the folder argv[1].

import-scatter.test checks the wsgraph ops they import as: ScatterElements
with "none" and "mul", ScatterND with "add", GatherND with batch_dims,
ReverseSequence, MaxUnpool, and the forms that are refused.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
F, I64 = TensorProto.FLOAT, TensorProto.INT64


def val(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def save(name, node, inputs, outputs, inits=(), opset=16):
    graph = helper.make_graph([node], name, inputs, outputs, list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.save(model, os.path.join(out, name + ".onnx"))


# ScatterElements along axis 1 of [2, 3], 2 updates per row.
scatter_io = [val("x", F, [2, 3]), val("i", I64, [2, 2]), val("u", F, [2, 2])]
save("scatter_none", helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=1),
     scatter_io, [val("y", F, [2, 3])])
save("scatter_mul",
     helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=1, reduction="mul"),
     scatter_io, [val("y", F, [2, 3])])

# ScatterND adding rows of [4, 5] at 3 (pair-less) indices.
save("scatternd_add", helper.make_node("ScatterND", ["x", "i", "u"], ["y"], reduction="add"),
     [val("x", F, [4, 5]), val("i", I64, [3, 1]), val("u", F, [3, 5])], [val("y", F, [4, 5])])

# GatherND of [2, 3, 4] with one batch axis and pairs of indices.
save("gathernd", helper.make_node("GatherND", ["x", "i"], ["y"], batch_dims=1),
     [val("x", F, [2, 3, 4]), val("i", I64, [2, 5, 2])], [val("y", F, [2, 5])])

# ReverseSequence of [time 4, batch 3, 2].
save("reverse", helper.make_node("ReverseSequence", ["x", "l"], ["y"], batch_axis=1, time_axis=0),
     [val("x", F, [4, 3, 2]), val("l", I64, [3])], [val("y", F, [4, 3, 2])])

# MaxUnpool of [1, 1, 2, 2] by 2x2 windows, to a bound [1, 1, 5, 5].
save("maxunpool",
     helper.make_node("MaxUnpool", ["x", "i", "s"], ["y"], kernel_shape=[2, 2], strides=[2, 2]),
     [val("x", F, [1, 1, 2, 2]), val("i", I64, [1, 1, 2, 2])], [val("y", F, [1, 1, 5, 5])],
     [numpy_helper.from_array(np.array([1, 1, 5, 5], np.int64), "s")])

# Refused: an unknown reduction, an unbound output_shape, a smaller one.
save("bad_reduction",
     helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], reduction="avg"),
     scatter_io, [val("y", F, [2, 3])], opset=18)
save("unbound_shape",
     helper.make_node("MaxUnpool", ["x", "i", "s"], ["y"], kernel_shape=[2, 2], strides=[2, 2]),
     [val("x", F, [1, 1, 2, 2]), val("i", I64, [1, 1, 2, 2]), val("s", I64, [4])],
     [val("y", F, [1, 1, 5, 5])])
save("small_shape",
     helper.make_node("MaxUnpool", ["x", "i", "s"], ["y"], kernel_shape=[2, 2], strides=[2, 2]),
     [val("x", F, [1, 1, 2, 2]), val("i", I64, [1, 1, 2, 2])], [val("y", F, [1, 1, 3, 3])],
     [numpy_helper.from_array(np.array([1, 1, 3, 3], np.int64), "s")])
