# make_argmax_model.py DIR [--scaled | --sample | --top-k K]: a wsgraph
# module whose result is the argmax of a dense layer's logits over embedded
# tokens (idx [1, 6], vocab 24, width 8), with its inputs and numpy's
# answer. --scaled multiplies the logits by 2 first (a generic kernel) and
# returns them: a generating program cannot take that. --sample takes a
# wsgraph.sample of the logits instead, at the [temperature, seed] of input
# params.npy (2, 5); --top-k K samples too, among the K largest logits
# ([2, 5, K]), and gives tokens 3 and 17 the same logits (ties at the
# bound are kept).
import os
import sys

import numpy

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../../frontends/pytorch"))
import sampling  # noqa: E402

out, scaled, sample = sys.argv[1], "--scaled" in sys.argv, "--sample" in sys.argv
top_k = int(sys.argv[sys.argv.index("--top-k") + 1]) if "--top-k" in sys.argv else 0
sample = sample or top_k > 0
P = 3 if top_k else 2
os.makedirs(out, exist_ok=True)
rng = numpy.random.default_rng(3)
V, C, T = 24, 8, 6
E = rng.standard_normal((V, C)).astype(numpy.float32)
W = rng.standard_normal((C, V)).astype(numpy.float32)
if top_k:
    W[:, 17] = W[:, 3]
idx = rng.integers(0, V, (1, T))


def dense(a):
    return "dense<[" + ", ".join("[" + ", ".join("%.9e" % x for x in row) + "]" for row in a) + "]>"


params = f', %p: tensor<{P}xf32> {{wsgraph.name = "params"}}' if sample else ""
head = f'''module {{
  func.func @main(%idx: tensor<1x{T}xi64> {{wsgraph.name = "idx"}}{params}) -> (RESULT) {{
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
elif sample:
    body = f'''    %a = wsgraph.sample %l, %p : (tensor<1x{T}x{V}xf32>, tensor<{P}xf32>) -> tensor<1x{T}xi64>
    return %a : tensor<1x{T}xi64>
'''
    result = f'tensor<1x{T}xi64> {{wsgraph.name = "next"}}'
else:
    body = f'''    %a = wsgraph.argmax %l : (tensor<1x{T}x{V}xf32>) -> tensor<1x{T}xi64>
    return %a : tensor<1x{T}xi64>
'''
    result = f'tensor<1x{T}xi64> {{wsgraph.name = "next"}}'
open(os.path.join(out, "model.mlir"), "w").write(head.replace("RESULT", result) + body + "  }\n}\n")
numpy.save(os.path.join(out, "idx.npy"), idx)
logits = E[idx] @ W
if sample:
    params = [2.0, 5.0, float(top_k)] if top_k else [2.0, 5.0]
    numpy.save(os.path.join(out, "params.npy"), numpy.array(params, numpy.float32))
    want = numpy.array([[sampling.pick(logits[0, t], t, 2.0, 5, top_k) for t in range(T)]])
    numpy.save(os.path.join(out, "logits.npy"), logits)
    numpy.save(os.path.join(out, "greedy.npy"), logits.argmax(-1))
else:
    want = logits.argmax(-1)
numpy.save(os.path.join(out, "want.npy"), want)
