"""AffineGrid (opset 20) and Col2Im (opset 18), with their inputs and numpy's
expected outputs.

usage: make_affine_col2im_models.py OUT_DIR

- ops.onnx, inputs theta [2, 2, 3] and theta3 [1, 3, 4], cols [2, 12, 15];
  outputs (want_NAME.npy): grid (size [2, 1, 3, 5]), grid_aligned (the same
  with align_corners), grid3 (size [1, 1, 2, 3, 4]); image (cols summed into
  [2, 3, 5, 6] from 2 x 2 blocks, strides 2 and 1, dilations 1 and 2, pads
  1 0 0 1).
- affine-bad.onnx: a 2-D theta with a 3-D size, affine-huge.onnx, a size
  whose points overflow int64, and col2im-big.onnx, a Col2Im whose table
  would be too large: refused.
"""
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(20)


def coordinates(n, align):
    i = np.arange(n)
    return -1 + 2.0 * i / (n - 1) if align else (2.0 * i + 1) / n - 1


def affine_grid(theta, spatial, align):
    axes = np.meshgrid(*[coordinates(n, align) for n in spatial], indexing="ij")
    homo = np.stack(axes[::-1] + [np.ones(spatial)], -1)  # x first, then y (z), then 1
    return np.einsum("nij,...j->n...i", theta.astype(np.float64), homo)


def col2im(cols, image, block, strides, dilations, pads):
    n, ck, l = cols.shape
    k = int(np.prod(block))
    d = len(image)
    positions = [(image[i] + pads[i] + pads[i + d] - ((block[i] - 1) * dilations[i] + 1))
                 // strides[i] + 1 for i in range(d)]
    y = np.zeros((n, ck // k) + tuple(image))
    c = cols.reshape(n, ck // k, k, l)
    for kk, kat in enumerate(np.ndindex(*block)):
        for ll, lat in enumerate(np.ndindex(*positions)):
            at = [lat[i] * strides[i] - pads[i] + kat[i] * dilations[i] for i in range(d)]
            if all(0 <= at[i] < image[i] for i in range(d)):
                y[(slice(None), slice(None)) + tuple(at)] += c[:, :, kk, ll]
    return y


inputs = {"theta": rng.standard_normal((2, 2, 3)).astype(np.float32),
          "theta3": rng.standard_normal((1, 3, 4)).astype(np.float32),
          "cols": rng.standard_normal((2, 12, 15)).astype(np.float32)}
want = {"grid": affine_grid(inputs["theta"], [3, 5], False),
        "grid_aligned": affine_grid(inputs["theta"], [3, 5], True),
        "grid3": affine_grid(inputs["theta3"], [2, 3, 4], False),
        "image": col2im(inputs["cols"], [5, 6], [2, 2], [2, 1], [1, 2], [1, 0, 0, 1])}
consts = {"size": [2, 1, 3, 5], "size3": [1, 1, 2, 3, 4], "image_shape": [5, 6],
          "block_shape": [2, 2]}
N = helper.make_node
nodes = [N("AffineGrid", ["theta", "size"], ["grid"]),
         N("AffineGrid", ["theta", "size"], ["grid_aligned"], align_corners=1),
         N("AffineGrid", ["theta3", "size3"], ["grid3"]),
         N("Col2Im", ["cols", "image_shape", "block_shape"], ["image"], strides=[2, 1],
           dilations=[1, 2], pads=[1, 0, 0, 1])]


def info(name, a):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, list(a.shape))


g = helper.make_graph(nodes, "g", [info(n, a) for n, a in inputs.items()],
                      [info(n, a) for n, a in want.items()],
                      [numpy_helper.from_array(np.array(v, np.int64), n) for n, v in consts.items()])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)]),
          os.path.join(out, "ops.onnx"))
for n, a in inputs.items():
    np.save(os.path.join(out, n + ".npy"), a)
for n, a in want.items():
    np.save(os.path.join(out, "want_" + n + ".npy"), a.astype(np.float32))

# affine-bad.onnx: a 2-D theta with a 3-D size, refused.
g = helper.make_graph([N("AffineGrid", ["theta", "size3"], ["grid"], name="mixed")], "g",
                      [info("theta", inputs["theta"])], [info("grid", want["grid3"])],
                      [numpy_helper.from_array(np.array(consts["size3"], np.int64), "size3")])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)]),
          os.path.join(out, "affine-bad.onnx"))

# col2im-big.onnx: a 512 x 512 image of 3 x 3 blocks, whose table would be
# too large; refused.
big = np.zeros((1, 9, 510 * 510), np.float32)
g = helper.make_graph([N("Col2Im", ["cols", "image_shape", "block_shape"], ["image"], name="big")],
                      "g", [info("cols", big)], [info("image", np.zeros((1, 1, 512, 512)))],
                      [numpy_helper.from_array(np.array(v, np.int64), n)
                       for n, v in (("image_shape", [512, 512]), ("block_shape", [3, 3]))])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)]),
          os.path.join(out, "col2im-big.onnx"))

# affine-huge.onnx: a size whose grid points overflow int64 (a fuzzer's
# finding); refused.
g = helper.make_graph([N("AffineGrid", ["theta", "size"], ["grid"], name="huge")], "g",
                      [info("theta", inputs["theta"])], [info("grid", want["grid"])],
                      [numpy_helper.from_array(np.array([2, 1, 1 << 40, 1 << 40], np.int64),
                                               "size")])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)]),
          os.path.join(out, "affine-huge.onnx"))
