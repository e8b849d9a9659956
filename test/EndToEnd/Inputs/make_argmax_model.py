# make_argmax_model.py DIR [--scaled]: a wsgraph module whose result is the
# argmax of a dense layer's logits over embedded tokens (idx [1, 6], vocab
# 24, width 8), with its inputs and numpy's answer. --scaled multiplies the
# logits by 2 first (a generic kernel) and returns them: a generating
# program cannot take that.
import os
import sys

import numpy

out, scaled = sys.argv[1], "--scaled" in sys.argv
os.makedirs(out, exist_ok=True)
rng = numpy.random.default_rng(3)
V, C, T = 24, 8, 6
E = rng.standard_normal((V, C)).astype(numpy.float32)
W = rng.standard_normal((C, V)).astype(numpy.float32)
idx = rng.integers(0, V, (1, T))


def dense(a):
    return "dense<[" + ", ".join("[" + ", ".join("%.9e" % x for x in row) + "]" for row in a) + "]>"


head = f'''module {{
  func.func @main(%idx: tensor<1x{T}xi64> {{wsgraph.name = "idx"}}) -> (RESULT) {{
    %e = wsgraph.constant {dense(E)} : tensor<{V}x{C}xf32>
    %w = wsgraph.constant {dense(W)} : tensor<{C}x{V}xf32>
    %x = wsgraph.gather %e, %idx : (tensor<{V}x{C}xf32>, tensor<1x{T}xi64>) -> tensor<1x{T}x{C}xf32>
    %l = wsgraph.linear %x, %w : (tensor<1x{T}x{C}xf32>, tensor<{C}x{V}xf32>) -> tensor<1x{T}x{V}xf32>
'''
if scaled:
    body = f'''    %two = wsgraph.constant dense<2.0> : tensor<f32>
    %s = wsgraph.mul %l, %two : (tensor<1x{T}x{V}xf32>, tensor<f32>) -> tensor<1x{T}x{V}xf32>
    return %s : tensor<1x{T}x{V}xf32>
'''
    result = f'tensor<1x{T}x{V}xf32> {{wsgraph.name = "logits"}}'
else:
    body = f'''    %a = wsgraph.argmax %l : (tensor<1x{T}x{V}xf32>) -> tensor<1x{T}xi64>
    return %a : tensor<1x{T}xi64>
'''
    result = f'tensor<1x{T}xi64> {{wsgraph.name = "next"}}'
open(os.path.join(out, "model.mlir"), "w").write(head.replace("RESULT", result) + body + "  }\n}\n")
numpy.save(os.path.join(out, "idx.npy"), idx)
numpy.save(os.path.join(out, "want.npy"), (E[idx] @ W).argmax(-1))
