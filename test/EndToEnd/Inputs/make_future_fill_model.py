# make_future_fill_model.py DIR: a wsgraph module with causal attention whose
# future keys score `future_fill` (finfo.min) plus a padding mask given at run
# time, left-padded so that the first queries see padded keys only, with
# numpy's answer computed as torch does (where, then add, then softmax). Its
# result is not merged into [B, T, C], so the generic kind computes it.
import os
import sys

import numpy

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = numpy.random.default_rng(2)
B, T, D, V = 2, 4, 8, 10
MIN = numpy.finfo(numpy.float32).min
E = rng.standard_normal((V, 3 * D)).astype(numpy.float32)
idx = numpy.array([[1, 7, 3, 2], [4, 0, 9, 5]])
mask = numpy.array([[MIN, MIN, 0, 0], [0, 0, 0, MIN]], numpy.float32)
scale = numpy.float32(0.25)


def dense(a):
    return "dense<[" + ", ".join("[" + ", ".join("%.9e" % x for x in row) + "]" for row in a) + "]>"


x = E[idx]  # [B, T, 3D]
q, k, v = (x[..., i * D:(i + 1) * D][:, None] for i in range(3))  # [B, 1, T, D]
scores = (q @ k.transpose(0, 1, 3, 2)) * scale
future = numpy.triu(numpy.ones((T, T), bool), 1)
with numpy.errstate(over="ignore"):  # finfo.min + finfo.min is -inf, as in torch
    scores = numpy.where(future, MIN, scores) + mask[:, None, None, :]
scores = numpy.exp(scores - scores.max(-1, keepdims=True))
want = (scores / scores.sum(-1, keepdims=True)) @ v
numpy.save(os.path.join(out, "want.npy"), want.astype(numpy.float32))
numpy.save(os.path.join(out, "idx.npy"), idx)
numpy.save(os.path.join(out, "mask.npy"), mask)
h = f"tensor<{B}x1x{T}x{D}xf32>"
open(os.path.join(out, "model.mlir"), "w").write(f'''module {{
  func.func @main(%idx: tensor<{B}x{T}xi64> {{wsgraph.name = "idx"}}, %m: tensor<{B}x{T}xf32> {{wsgraph.name = "mask"}}) -> ({h} {{wsgraph.name = "y"}}) {{
    %e = wsgraph.constant {dense(E)} : tensor<{V}x{3 * D}xf32>
    %x = wsgraph.gather %e, %idx : (tensor<{V}x{3 * D}xf32>, tensor<{B}x{T}xi64>) -> tensor<{B}x{T}x{3 * D}xf32>
    %r = wsgraph.reshape %x : (tensor<{B}x{T}x{3 * D}xf32>) -> tensor<{B}x1x{T}x{3 * D}xf32>
    %q, %k, %v = wsgraph.split %r {{axis = 3 : i64, sizes = array<i64: {D}, {D}, {D}>}} : (tensor<{B}x1x{T}x{3 * D}xf32>) -> ({h}, {h}, {h})
    %y = wsgraph.attention %q, %k, %v, %m {{future_fill = {MIN:.9e} : f32, scale = 0.25 : f32}} : ({h}, {h}, {h}, tensor<{B}x{T}xf32>) -> {h}
    return %y : {h}
  }}
}}
''')
