"""Writes small GridSample models into the folder argv[1].

import-gridsample.test checks the wsgraph ops they import as: bilinear with
zeros padding, nearest with border padding, bicubic with reflection, and the
forms that are refused.
"""
import os
import sys

import onnx
from onnx import TensorProto, helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
F = TensorProto.FLOAT


def save(name, x_shape, grid_shape, y_shape, opset=16, **attrs):
    node = helper.make_node("GridSample", ["x", "grid"], ["y"], **attrs)
    graph = helper.make_graph([node], name,
                              [helper.make_tensor_value_info("x", F, x_shape),
                               helper.make_tensor_value_info("grid", F, grid_shape)],
                              [helper.make_tensor_value_info("y", F, y_shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.save(model, os.path.join(out, name + ".onnx"))


# [1, 2, 3, 4] sampled at 5x6 points.
save("bilinear", [1, 2, 3, 4], [1, 5, 6, 2], [1, 2, 5, 6])
save("nearest", [1, 2, 3, 4], [1, 5, 6, 2], [1, 2, 5, 6], mode="nearest",
     padding_mode="border", align_corners=1)
save("bicubic", [1, 2, 3, 4], [1, 5, 6, 2], [1, 2, 5, 6], mode="bicubic",
     padding_mode="reflection")

# Opset 20 names the modes linear (its default) and cubic.
save("linear20", [1, 2, 3, 4], [1, 5, 6, 2], [1, 2, 5, 6], opset=20, mode="linear")
save("default20", [1, 2, 3, 4], [1, 5, 6, 2], [1, 2, 5, 6], opset=20)
save("cubic20", [1, 2, 3, 4], [1, 5, 6, 2], [1, 2, 5, 6], opset=20, mode="cubic",
     padding_mode="reflection")
save("bilinear20", [1, 2, 3, 4], [1, 5, 6, 2], [1, 2, 5, 6], opset=20, mode="bilinear")

# Refused: opset 20's mode name, a volume (opset 16 samples images), an
# unknown padding mode, align_corners that is no flag.
save("linear_mode", [1, 2, 3, 4], [1, 5, 6, 2], [1, 2, 5, 6], mode="linear")
save("volume", [1, 2, 3, 4, 5], [1, 2, 2, 2, 3], [1, 2, 2, 2, 2])
save("bad_padding", [1, 2, 3, 4], [1, 5, 6, 2], [1, 2, 5, 6], padding_mode="wrap")
save("bad_align", [1, 2, 3, 4], [1, 5, 6, 2], [1, 2, 5, 6], align_corners=2)
