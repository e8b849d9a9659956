"""GroupNormalization, LpNormalization, GlobalLpPool, LpPool, CenterCropPad and
Pad's wrap mode, with their inputs and numpy's expected outputs.

usage: make_norm_pool_models.py OUT_DIR

- ops19.onnx (opset 19), input x [2, 6, 5, 5] (x.npy), outputs (want_NAME.npy):
  group (3 groups, scale and bias per group), lp1 (LpNormalization p 1 over
  axis 1), lp2 (p 2 over the last axis), glp2 and glp3 (GlobalLpPool p 2
  and 3), pool2 (LpPool p 2, kernel 2 x 3, strides 2, pads 1 0 0 1), pool3
  (LpPool p 3, kernel 3, dilations 2), crop (CenterCropPad of axes 2 and 3
  to 4 and 8: one crop, one pad, both odd), wrap (Pad wrap of axes 2 and
  3 by 1, 4, 2, 1).
- group21.onnx (opset 21): GroupNormalization of x with scale and bias per
  channel (want_group21.npy).
- group-bad.onnx: 4 groups of 6 channels, refused.
"""
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(18)
x = rng.standard_normal((2, 6, 5, 5)).astype(np.float32)
np.save(os.path.join(out, "x.npy"), x)
want = {}


def group_norm(x, groups, scale, bias, eps, per_channel):
    n, c = x.shape[:2]
    g = x.reshape(n, groups, -1)
    y = (g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + eps)
    if not per_channel:
        return (y * scale[:, None] + bias[:, None]).reshape(x.shape)
    shape = (c,) + (1,) * (x.ndim - 2)
    return y.reshape(x.shape) * scale.reshape(shape) + bias.reshape(shape)


def lp_pool(x, p, kernel, strides, pads, dilations):
    """pads: begin per axis, then end per axis."""
    d = len(kernel)
    padded = np.pad(np.abs(x).astype(np.float64) ** p,
                    [(0, 0), (0, 0)] + [(pads[i], pads[i + d]) for i in range(d)])
    span = [(kernel[i] - 1) * dilations[i] + 1 for i in range(d)]
    outs = [(padded.shape[2 + i] - span[i]) // strides[i] + 1 for i in range(d)]
    y = np.zeros(x.shape[:2] + tuple(outs))
    for o in np.ndindex(*outs):
        window = padded[(slice(None), slice(None)) + tuple(
            slice(o[i] * strides[i], o[i] * strides[i] + span[i], dilations[i]) for i in range(d))]
        y[(slice(None), slice(None)) + o] = window.sum(axis=tuple(range(2, 2 + d)))
    return y ** (1.0 / p)


def center_crop_pad(x, shape, axes):
    for a, target in zip(axes, shape):
        length = x.shape[a]
        if target <= length:
            x = np.take(x, range((length - target) // 2, (length - target) // 2 + target), a)
        else:
            before = (target - length) // 2
            pad = [(0, 0)] * x.ndim
            pad[a] = (before, target - length - before)
            x = np.pad(x, pad)
    return x


def const(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


gs, gb = rng.standard_normal(3).astype(np.float32), rng.standard_normal(3).astype(np.float32)
cs, cb = rng.standard_normal(6).astype(np.float32), rng.standard_normal(6).astype(np.float32)
inits = [const("gs", gs), const("gb", gb), const("crop_shape", np.array([4, 8], np.int64)),
         const("wrap_pads", np.array([1, 4, 2, 1], np.int64)),
         const("wrap_axes", np.array([2, 3], np.int64))]
N = helper.make_node
nodes = [
    N("GroupNormalization", ["x", "gs", "gb"], ["group"], num_groups=3, epsilon=1e-3),
    N("LpNormalization", ["x"], ["lp1"], axis=1, p=1),
    N("LpNormalization", ["x"], ["lp2"]),
    N("GlobalLpPool", ["x"], ["glp2"]),
    N("GlobalLpPool", ["x"], ["glp3"], p=3),
    N("LpPool", ["x"], ["pool2"], kernel_shape=[2, 3], strides=[2, 2], pads=[1, 0, 0, 1]),
    N("LpPool", ["x"], ["pool3"], kernel_shape=[3, 3], dilations=[2, 2], p=3),
    N("CenterCropPad", ["x", "crop_shape"], ["crop"], axes=[2, 3]),
    N("Pad", ["x", "wrap_pads", "", "wrap_axes"], ["wrap"], mode="wrap"),
]
want["group"] = group_norm(x, 3, gs, gb, 1e-3, False)
want["lp1"] = x / np.abs(x).sum(1, keepdims=True)
want["lp2"] = x / np.sqrt((x * x).sum(-1, keepdims=True))
want["glp2"] = np.sqrt((x.astype(np.float64) ** 2).sum((2, 3), keepdims=True))
want["glp3"] = ((np.abs(x).astype(np.float64) ** 3).sum((2, 3), keepdims=True)) ** (1 / 3)
want["pool2"] = lp_pool(x, 2, [2, 3], [2, 2], [1, 0, 0, 1], [1, 1])
want["pool3"] = lp_pool(x, 3, [3, 3], [1, 1], [0, 0, 0, 0], [2, 2])
want["crop"] = center_crop_pad(x, [4, 8], [2, 3])
want["wrap"] = np.pad(x, [(0, 0), (0, 0), (1, 2), (4, 1)], mode="wrap")


def tensor(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape))


def save_model(path, nodes, outputs, inits, opset):
    g = helper.make_graph(nodes, "g", [tensor("x", x.shape)],
                          [tensor(n, want[n].shape) for n in outputs], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]),
              os.path.join(out, path))


save_model("ops19.onnx", nodes, [n.output[0] for n in nodes], inits, 19)
want["group21"] = group_norm(x, 2, cs, cb, 1e-5, True)
save_model("group21.onnx", [N("GroupNormalization", ["x", "cs", "cb"], ["group21"], num_groups=2)],
           ["group21"], [const("cs", cs), const("cb", cb)], 21)
want["bad"] = x
save_model("group-bad.onnx",
           [N("GroupNormalization", ["x", "cs", "cb"], ["bad"], num_groups=4, name="four")],
           ["bad"], [const("cs", cs), const("cb", cb)], 21)
for n, a in want.items():
    np.save(os.path.join(out, "want_" + n + ".npy"), a.astype(np.float32))
