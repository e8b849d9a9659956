"""RoiAlign in max and avg mode over two images, regions partly outside them,
with numpy's expected outputs (ONNX Runtime's bilinear sampling: a sample
more than a pixel outside reads nothing; max mode takes the largest weighted
corner).

usage: make_roialign_models.py OUT_DIR

roialign.onnx: X [2, 3, 6, 7] (x.npy), rois [4, 4], batch_indices [4] as
initializers; outputs avg (output_half_pixel, 3 x 2 bins, 2 samples,
spatial_scale 0.5) and max (half_pixel, 2 x 3 bins, 3 samples), in
want_avg.npy and want_max.npy.
"""
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(16)
x = rng.standard_normal((2, 3, 6, 7)).astype(np.float32)
rois = np.array([[0, 0, 6, 5], [2.5, 1.2, 13.8, 11.0], [-3, -2, 4, 3], [5.5, 4.0, 9.0, 14.5]],
                np.float32)
batch = np.array([0, 1, 1, 0], np.int64)


def sample(img, y, xx):
    h, w = img.shape[-2:]
    if y < -1 or y > h or xx < -1 or xx > w:
        return [(0, 0, 0.0)] * 4
    y, xx = max(y, 0.0), max(xx, 0.0)
    yl, xl = int(np.floor(y)), int(np.floor(xx))
    if yl >= h - 1:
        yl = yh = h - 1
        y = float(yl)
    else:
        yh = yl + 1
    if xl >= w - 1:
        xl = xh = w - 1
        xx = float(xl)
    else:
        xh = xl + 1
    ly, lx = y - yl, xx - xl
    return [(yl, xl, (1 - ly) * (1 - lx)), (yl, xh, (1 - ly) * lx), (yh, xl, ly * (1 - lx)),
            (yh, xh, ly * lx)]


def roi_align(mode, oh, ow, ratio, scale, half_pixel):
    shift = 0.5 if half_pixel else 0.0
    y = np.zeros((len(rois), x.shape[1], oh, ow))
    for r, (box, b) in enumerate(zip(rois.astype(np.float64), batch)):
        x1, y1, x2, y2 = box * scale - shift
        rw, rh = x2 - x1, y2 - y1
        if not half_pixel:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        for ph in range(oh):
            for pw in range(ow):
                acc = np.zeros(x.shape[1]) if mode == "avg" else np.full(x.shape[1], -np.inf)
                for iy in range(ratio):
                    for ix in range(ratio):
                        sy = y1 + rh / oh * (ph + (iy + 0.5) / ratio)
                        sx = x1 + rw / ow * (pw + (ix + 0.5) / ratio)
                        parts = [wt * x[b, :, yy, xx] for yy, xx, wt in sample(x[b], sy, sx)]
                        if mode == "avg":
                            acc += sum(parts)
                        else:
                            acc = np.maximum(acc, np.max(parts, axis=0))
                y[r, :, ph, pw] = acc / ratio ** 2 if mode == "avg" else acc
    return y.astype(np.float32)


want = {"avg": roi_align("avg", 3, 2, 2, 0.5, False), "max": roi_align("max", 2, 3, 3, 1.0, True)}
nodes = [helper.make_node("RoiAlign", ["x", "rois", "batch"], ["avg"], output_height=3,
                          output_width=2, sampling_ratio=2, spatial_scale=0.5,
                          coordinate_transformation_mode="output_half_pixel"),
         helper.make_node("RoiAlign", ["x", "rois", "batch"], ["max"], output_height=2,
                          output_width=3, sampling_ratio=3, mode="max")]
g = helper.make_graph(
    nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
    [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(a.shape)) for n, a in want.items()],
    [numpy_helper.from_array(rois, "rois"), numpy_helper.from_array(batch, "batch")])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 16)]),
          os.path.join(out, "roialign.onnx"))
np.save(os.path.join(out, "x.npy"), x)
for n, a in want.items():
    np.save(os.path.join(out, "want_" + n + ".npy"), a)
