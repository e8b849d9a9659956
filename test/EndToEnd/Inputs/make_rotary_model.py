# make_rotary_model.py DIR: wsgraph modules that apply `wsgraph.rotary` (the
# half form and the interleaved one, R = 4 of D = 6 dimensions, tables that
# are no function of the position) to embedded tokens, with numpy's answer:
# no attention takes these, so the lowering decomposes them into generic ops.
import os
import sys

import numpy

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = numpy.random.default_rng(1)
T, D, R, V = 4, 6, 4, 10
E = rng.standard_normal((V, D)).astype(numpy.float32)
C = rng.standard_normal((T, R)).astype(numpy.float32)
S = rng.standard_normal((T, R)).astype(numpy.float32)
idx = numpy.array([[1, 7, 3, 2]])


def dense(a):
    return "dense<[" + ", ".join("[" + ", ".join("%.9e" % x for x in row) + "]" for row in a) + "]>"


x = E[idx]
xr = x[..., :R]
for name, interleaved in (("half", False), ("interleaved", True)):
    if interleaved:
        rot = numpy.empty_like(xr)
        rot[..., 0::2], rot[..., 1::2] = -xr[..., 1::2], xr[..., 0::2]
    else:
        rot = numpy.concatenate([-xr[..., R // 2:], xr[..., :R // 2]], -1)
    numpy.save(os.path.join(out, name + ".want.npy"),
               numpy.concatenate([xr * C + rot * S, x[..., R:]], -1).astype(numpy.float32))
    open(os.path.join(out, name + ".mlir"), "w").write(f'''module {{
  func.func @main(%idx: tensor<1x{T}xi64> {{wsgraph.name = "idx"}}) -> (tensor<1x{T}x{D}xf32> {{wsgraph.name = "y"}}) {{
    %e = wsgraph.constant {dense(E)} : tensor<{V}x{D}xf32>
    %c = wsgraph.constant {dense(C)} : tensor<{T}x{R}xf32>
    %s = wsgraph.constant {dense(S)} : tensor<{T}x{R}xf32>
    %x = wsgraph.gather %e, %idx : (tensor<{V}x{D}xf32>, tensor<1x{T}xi64>) -> tensor<1x{T}x{D}xf32>
    %y = wsgraph.rotary %x, %c, %s {{interleaved = {str(interleaved).lower()}}} : (tensor<1x{T}x{D}xf32>, tensor<{T}x{R}xf32>, tensor<{T}x{R}xf32>) -> tensor<1x{T}x{D}xf32>
    return %y : tensor<1x{T}x{D}xf32>
  }}
}}
''')
numpy.save(os.path.join(out, "idx.npy"), idx)
