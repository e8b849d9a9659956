"""DeformConv (opset 19) with numpy's expected outputs: each kernel tap reads X
bilinearly (zero outside) where the window's tap moved by its offset lands,
times the mask, then a grouped convolution.

usage: make_deformconv_models.py OUT_DIR

deformconv.onnx: X [2, 4, 5, 6], offsets [2, 2 * 3 * 2 * 2, 3, 3] (2 offset
groups, a 3 x 2 kernel), mask [2, 2 * 3 * 2, 3, 3] (x.npy, off.npy,
mask.npy); W [6, 2, 3, 2] (2 groups) and B as initializers; strides 2 x 2,
pads 1 0 1 1, dilations 1 x 2. Outputs y (with mask and bias) and plain
(offsets only) in want_y.npy and want_plain.npy.
"""
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(19)
x = rng.standard_normal((2, 4, 5, 6)).astype(np.float32)
w = rng.standard_normal((6, 2, 3, 2)).astype(np.float32)
b = rng.standard_normal(6).astype(np.float32)
off = (rng.standard_normal((2, 24, 3, 3)) * 1.5).astype(np.float32)
mask = rng.uniform(0, 1, (2, 12, 3, 3)).astype(np.float32)
strides, pads, dil, group, ogroups = (2, 2), (1, 0, 1, 1), (1, 2), 2, 2


def bilinear(img, y, xx):
    h, wd = img.shape
    y0, x0 = int(np.floor(y)), int(np.floor(xx))
    total = 0.0
    for yy, wy in ((y0, 1 - (y - y0)), (y0 + 1, y - y0)):
        for xc, wx in ((x0, 1 - (xx - x0)), (x0 + 1, xx - x0)):
            if 0 <= yy < h and 0 <= xc < wd:
                total += wy * wx * img[yy, xc]
    return total


def deform_conv(with_mask, with_bias):
    n, c = x.shape[:2]
    m, cg, kh, kw = w.shape
    oh, ow = off.shape[2:]
    o = off.reshape(n, ogroups, kh, kw, 2, oh, ow).astype(np.float64)
    mk = (mask.reshape(n, ogroups, kh, kw, oh, ow) if with_mask
          else np.ones((n, ogroups, kh, kw, oh, ow)))
    y = np.zeros((n, m, oh, ow))
    for bi in range(n):
        for oc in range(m):
            g = oc // (m // group)
            for ci in range(g * cg, (g + 1) * cg):
                og = ci // (c // ogroups)
                for i in range(oh):
                    for j in range(ow):
                        for a in range(kh):
                            for e in range(kw):
                                dy, dx = o[bi, og, a, e, :, i, j]
                                py = i * strides[0] - pads[0] + a * dil[0] + dy
                                px = j * strides[1] - pads[1] + e * dil[1] + dx
                                v = bilinear(x[bi, ci].astype(np.float64), py, px)
                                y[bi, oc, i, j] += (w[oc, ci - g * cg, a, e] * v
                                                    * mk[bi, og, a, e, i, j])
    if with_bias:
        y += b.reshape(1, -1, 1, 1)
    return y.astype(np.float32)


attrs = dict(strides=list(strides), pads=list(pads), dilations=list(dil), group=group,
             offset_group=ogroups)
nodes = [helper.make_node("DeformConv", ["x", "w", "off", "b", "mask"], ["y"], **attrs),
         helper.make_node("DeformConv", ["x", "w", "off"], ["plain"], kernel_shape=[3, 2],
                          **attrs)]
want = {"y": deform_conv(True, True), "plain": deform_conv(False, False)}
F = TensorProto.FLOAT
g = helper.make_graph(
    nodes, "g", [helper.make_tensor_value_info(n, F, list(a.shape))
                 for n, a in (("x", x), ("off", off), ("mask", mask))],
    [helper.make_tensor_value_info(n, F, list(a.shape)) for n, a in want.items()],
    [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)]),
          os.path.join(out, "deformconv.onnx"))
for n, a in (("x", x), ("off", off), ("mask", mask)):
    np.save(os.path.join(out, n + ".npy"), a)
for n, a in want.items():
    np.save(os.path.join(out, "want_" + n + ".npy"), a)
