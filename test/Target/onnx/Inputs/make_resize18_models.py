"""Resize's opset 18-19 forms, against ONNX's own test reference (interpolate_nd
in onnx.backend.test.case.node.resize) given the scales the forms mean.

usage: make_resize18_models.py OUT_DIR

resize19.onnx resizes x [1, 1, 4, 8] (x.npy) to (want_NAME.npy):
- larger: sizes [3, 12] of axes 2 and 3, keep_aspect_ratio_policy not_larger
  (one scale, 0.75), linear;
- smaller: the same, not_smaller (1.5);
- last: scales [2] of axis 3 only, linear, asymmetric;
- symmetric: scales [2, 2] of axes 2 and 3, linear, half_pixel_symmetric
  (which at a whole scale is half_pixel);
and antialias.onnx asks for antialias, huge-scale.onnx a scale of 1e30:
refused.
"""
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto
from onnx.backend.test.case.node.resize import interpolate_nd, linear_coeffs

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
x = np.random.default_rng(19).standard_normal((1, 1, 4, 8)).astype(np.float32)
np.save(os.path.join(out, "x.npy"), x)


def ref(scales, coords="half_pixel"):
    return interpolate_nd(x, linear_coeffs, scale_factors=np.array(scales),
                          coordinate_transformation_mode=coords).astype(np.float32)


want = {"larger": ref([1, 1, 0.75, 0.75]), "smaller": ref([1, 1, 1.5, 1.5]),
        "last": ref([1, 1, 1, 2], "asymmetric"), "symmetric": ref([1, 1, 2, 2])}
consts = {"sizes": np.array([3, 12], np.int64), "s_last": np.array([2], np.float32),
          "s_two": np.array([2, 2], np.float32)}
N = helper.make_node
nodes = [N("Resize", ["x", "", "", "sizes"], ["larger"], axes=[2, 3], mode="linear",
           keep_aspect_ratio_policy="not_larger"),
         N("Resize", ["x", "", "", "sizes"], ["smaller"], axes=[2, 3], mode="linear",
           keep_aspect_ratio_policy="not_smaller"),
         N("Resize", ["x", "", "s_last"], ["last"], axes=[3], mode="linear",
           coordinate_transformation_mode="asymmetric"),
         N("Resize", ["x", "", "s_two"], ["symmetric"], axes=[-2, -1], mode="linear",
           coordinate_transformation_mode="half_pixel_symmetric")]


def info(name, a):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, list(a.shape))


def save(path, nodes, outputs):
    g = helper.make_graph(nodes, "g", [info("x", x)], [info(n, want[n]) for n in outputs],
                          [numpy_helper.from_array(a, n) for n, a in consts.items()])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)]),
              os.path.join(out, path))


save("resize19.onnx", nodes, list(want))
save("antialias.onnx", [N("Resize", ["x", "", "s_two"], ["symmetric"], axes=[2, 3],
                          mode="linear", antialias=1, name="smooth")], ["symmetric"])
for n, a in want.items():
    np.save(os.path.join(out, "want_" + n + ".npy"), a)

# huge-scale.onnx: a scale of 1e30, whose output length overflowed int64 (a
# fuzzer's finding); refused.
consts["s_huge"] = np.array([1, 1, 1e30, 1], np.float32)
want["huge"] = x
save("huge-scale.onnx", [N("Resize", ["x", "", "s_huge"], ["huge"], name="huge")], ["huge"])
