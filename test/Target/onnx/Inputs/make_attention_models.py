"""Models of opset 23's Attention and RotaryEmbedding, their inputs and their
expected outputs (numpy, from the operators' definitions).

usage: make_attention_models.py OUT_DIR

- attention.onnx: four Attention nodes, outputs
  - causal: 4-D q, k, v [1, 2, 8, 16], is_causal;
  - gqa: 3-D q [2, 6, 32] with 4 heads, k and v [2, 6, 16] with 2 (each
    k/v head serves two q heads), a float mask [6, 6], scale 0.3, softcap 2;
  - cached (and present_k, present_v, probs): q, k, v [1, 2, 3, 8] after a
    cache of 5 positions, is_causal (query i sees keys up to 5 + i), a bool
    mask [1, 1, 3, 7] (the 8th key left out), the softmax as output 3;
  - scores: the scaled q k^T as output 3 (mode 0) beside y2.
  The inputs are NAME.npy and the expected outputs want_NAME.npy.
- rotary.onnx: RotaryEmbedding of x [1, 2, 5, 8] at position_ids [1, 5]
  from caches [16, 4] (halves), and of a 3-D xi [2, 5, 12] with 2 heads,
  rotating 4 of 6 dimensions interleaved, caches [2, 5, 2] given per position.
- bad-mode.onnx, no-heads.onnx, heads.onnx, rotary-odd.onnx, dynamic.onnx
  (an unbound batch): refused.
- opset24.onnx: a static KV cache's decoding step: TensorScatter writes k
  and v [2, 2, 2, 8] into caches [2, 2, 6, 8] at positions pos [2] (linear),
  then causal Attention reads them with nonpad_kv_seqlen = pos + 2 (want_
  step.npy); TensorScatter in circular mode at wrap [2] (want_ring.npy);
  Swish with alpha 0.5 (want_swish.npy). Inputs s_q, s_k, s_v, cache_k,
  cache_v, pos, wrap, nonpad.
"""
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(23)
F = TensorProto.FLOAT


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def heads(x, n):
    b, t, h = x.shape
    return x.reshape(b, t, n, h // n).transpose(0, 2, 1, 3)


def attention(q, k, v, mask=None, past=None, causal=False, scale=None, softcap=0.0,
              qh=None, kvh=None, nonpad=None):
    """Y, present k, present v, scaled scores, softmax."""
    flat = q.ndim == 3
    if flat:
        q, k, v = heads(q, qh), heads(k, kvh), heads(v, kvh)
    if past is not None:
        k = np.concatenate([past[0], k], 2)
        v = np.concatenate([past[1], v], 2)
    t, s, p = q.shape[2], k.shape[2], 0 if past is None else past[0].shape[2]
    scale = 1 / np.sqrt(q.shape[3]) if scale is None else scale
    reps = q.shape[1] // k.shape[1]
    kr, vr = np.repeat(k, reps, 1), np.repeat(v, reps, 1)
    scores = q @ kr.transpose(0, 1, 3, 2) * scale
    x = softcap * np.tanh(scores / softcap) if softcap else scores
    if mask is not None:
        if mask.dtype == bool:
            mask = np.where(mask, 0.0, -np.inf)
        pad = s - mask.shape[-1]
        mask = np.concatenate([mask, np.full(mask.shape[:-1] + (pad,), -np.inf)], -1)
        x = x + mask
    j, i = np.arange(s)[None, :], np.arange(t)[:, None]
    if nonpad is not None:
        x = np.where(j[None, None] >= nonpad[:, None, None, None], -np.inf, x)
    if causal and nonpad is not None and past is None:
        ends = (nonpad - t)[:, None, None, None]
        x = np.where(j[None, None] > i[None, None] + ends, -np.inf, x)
    elif causal:
        x = np.where(j > i + p, -np.inf, x)
    probs = softmax(x)
    y = probs @ vr
    if flat:
        y = y.transpose(0, 2, 1, 3).reshape(y.shape[0], t, -1)
    return [a.astype(np.float32) for a in (y, k, v, scores, probs)]


def rotary(x, cos, sin, ids=None, interleaved=False, dims=0, nheads=0):
    flat = x.ndim == 3
    x4 = heads(x, nheads) if flat else x
    d = dims or x4.shape[3]
    c, s = (cos[ids], sin[ids]) if ids is not None else (cos, sin)  # [B, S, d/2]
    c, s = c[:, None], s[:, None]
    rot, rest = x4[..., :d], x4[..., d:]
    x1, x2 = (rot[..., 0::2], rot[..., 1::2]) if interleaved else np.split(rot, 2, -1)
    real, imag = c * x1 - s * x2, s * x1 + c * x2
    if interleaved:
        rot = np.stack([real, imag], -1).reshape(rot.shape)
    else:
        rot = np.concatenate([real, imag], -1)
    y = np.concatenate([rot, rest], -1)
    if flat:
        y = y.transpose(0, 2, 1, 3).reshape(x.shape)
    return y.astype(np.float32)


def save(name, a):
    np.save(os.path.join(out, name + ".npy"), a)


def value(name, a):
    kinds = {np.dtype(np.float32): F, np.dtype(bool): TensorProto.BOOL,
             np.dtype(np.int64): TensorProto.INT64}
    return helper.make_tensor_value_info(name, kinds[a.dtype], list(a.shape))


def model(path, nodes, inputs, outputs, inits=(), opset=23):
    g = helper.make_graph(nodes, "g", [value(n, a) for n, a in inputs],
                          [value(n, a) for n, a in outputs], list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    onnx.save(m, os.path.join(out, path))


def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32)


# attention.onnx
ins, outs, nodes = {}, {}, []
ins.update(q1=rand(1, 2, 8, 16), k1=rand(1, 2, 8, 16), v1=rand(1, 2, 8, 16))
nodes.append(helper.make_node("Attention", ["q1", "k1", "v1"], ["causal"], is_causal=1))
outs["causal"] = attention(ins["q1"], ins["k1"], ins["v1"], causal=True)[0]

ins.update(q2=rand(2, 6, 32), k2=rand(2, 6, 16), v2=rand(2, 6, 16), m2=rand(6, 6))
nodes.append(helper.make_node("Attention", ["q2", "k2", "v2", "m2"], ["gqa"], q_num_heads=4,
                              kv_num_heads=2, scale=0.3, softcap=2.0))
outs["gqa"] = attention(ins["q2"], ins["k2"], ins["v2"], ins["m2"], scale=0.3, softcap=2.0,
                        qh=4, kvh=2)[0]

ins.update(q3=rand(1, 2, 3, 8), k3=rand(1, 2, 3, 8), v3=rand(1, 2, 3, 8),
           m3=rng.random((1, 1, 3, 7)) > 0.3, pk3=rand(1, 2, 5, 8), pv3=rand(1, 2, 5, 8))
ins["m3"][..., 0] = True  # every query sees some key
nodes.append(helper.make_node("Attention", ["q3", "k3", "v3", "m3", "pk3", "pv3"],
                              ["cached", "present_k", "present_v", "probs"], is_causal=1,
                              qk_matmul_output_mode=3))
y, pk, pv, _, probs = attention(ins["q3"], ins["k3"], ins["v3"], ins["m3"],
                                past=(ins["pk3"], ins["pv3"]), causal=True)
outs.update(cached=y, present_k=pk, present_v=pv, probs=probs)

nodes.append(helper.make_node("Attention", ["q1", "k1", "v1"], ["y4", "", "", "scores"]))
y, _, _, scores, _ = attention(ins["q1"], ins["k1"], ins["v1"])
outs.update(y4=y, scores=scores)
model("attention.onnx", nodes, ins.items(), outs.items())
for n, a in ins.items():
    save(n, a)
for n, a in outs.items():
    save("want_" + n, a)

# rotary.onnx
positions = np.arange(16)[:, None] * (1e4 ** (-np.arange(4) / 4))[None, :]
cos, sin = np.cos(positions).astype(np.float32), np.sin(positions).astype(np.float32)
x, ids = rand(1, 2, 5, 8), np.array([[3, 4, 5, 6, 7]], np.int64)
xi, ci, si = rand(2, 5, 12), rand(2, 5, 2), rand(2, 5, 2)
model("rotary.onnx",
      [helper.make_node("RotaryEmbedding", ["x", "cos", "sin", "ids"], ["rx"]),
       helper.make_node("RotaryEmbedding", ["xi", "ci", "si"], ["ri"], interleaved=1,
                        num_heads=2, rotary_embedding_dim=4)],
      [("x", x), ("ids", ids), ("xi", xi), ("ci", ci), ("si", si)],
      [("rx", x), ("ri", xi)],
      [numpy_helper.from_array(cos, "cos"), numpy_helper.from_array(sin, "sin")])
for n, a in (("x", x), ("ids", ids), ("xi", xi), ("ci", ci), ("si", si)):
    save(n, a)
save("want_rx", rotary(x, cos, sin, ids))
save("want_ri", rotary(xi, ci, si, interleaved=True, dims=4, nheads=2))

# Refused.
q = rand(1, 2, 4, 8)
model("bad-mode.onnx",
      [helper.make_node("Attention", ["q", "q", "q"], ["y", "", "", "s"], name="masked",
                        qk_matmul_output_mode=1)],
      [("q", q)], [("y", q), ("s", rand(1, 2, 4, 4))])
model("no-heads.onnx", [helper.make_node("Attention", ["f", "f", "f"], ["y"], name="flat")],
      [("f", rand(1, 4, 8))], [("y", rand(1, 4, 8))])
model("heads.onnx", [helper.make_node("Attention", ["q", "k", "k"], ["y"], name="three")],
      [("q", rand(1, 3, 4, 8)), ("k", rand(1, 2, 4, 8))], [("y", rand(1, 3, 4, 8))])
model("rotary-odd.onnx",
      [helper.make_node("RotaryEmbedding", ["x", "c", "c"], ["y"], name="odd",
                        rotary_embedding_dim=3)],
      [("x", rand(1, 2, 5, 8)), ("c", rand(1, 5, 2))], [("y", rand(1, 2, 5, 8))])

# block.onnx: a Llama-style attention block of x [1, 8, 32]: q, k, v
# projections split into 4 heads of 8, RotaryEmbedding on q and k at
# positions 0..7, causal Attention, heads merged, the output projection.
x = rand(1, 8, 32)
w = {n: rand(32, 32) * 0.2 for n in ("wq", "wk", "wv", "wo")}
shape4 = np.array([1, 8, 4, 8], np.int64)
shape3 = np.array([1, 8, 32], np.int64)
nodes = []
for p in "qkv":
    nodes += [helper.make_node("MatMul", ["x", "w" + p], [p + "_flat"]),
              helper.make_node("Reshape", [p + "_flat", "shape4"], [p + "_split"]),
              helper.make_node("Transpose", [p + "_split"], [p + "_heads"], perm=[0, 2, 1, 3])]
for p in "qk":
    nodes.append(helper.make_node("RotaryEmbedding", [p + "_heads", "cos", "sin", "pos"],
                                  [p + "_rot"]))
nodes += [helper.make_node("Attention", ["q_rot", "k_rot", "v_heads"], ["o_heads"], is_causal=1),
          helper.make_node("Transpose", ["o_heads"], ["o_split"], perm=[0, 2, 1, 3]),
          helper.make_node("Reshape", ["o_split", "shape3"], ["o_flat"]),
          helper.make_node("MatMul", ["o_flat", "wo"], ["block"])]
pos = np.arange(8, dtype=np.int64)[None]
inits = [numpy_helper.from_array(a, n) for n, a in
         list(w.items()) + [("cos", cos), ("sin", sin), ("shape4", shape4), ("shape3", shape3),
                            ("pos", pos)]]
model("block.onnx", nodes, [("x", x)], [("block", x)], inits)
qkv = [heads(x @ w["w" + p], 4) for p in "qkv"]
rq, rk = (rotary(a, cos, sin, pos) for a in qkv[:2])
o = attention(rq, rk, qkv[2], causal=True)[0]
save("bx", x)
save("want_block", o.transpose(0, 2, 1, 3).reshape(1, 8, 32) @ w["wo"])


def tensor_scatter(cache, update, index, circular=False):
    out = cache.copy()
    for b in range(cache.shape[0]):
        for i in range(update.shape[2]):
            at = index[b] + i
            out[b, :, at % cache.shape[2] if circular else at] = update[b, :, i]
    return out


ins = {"s_q": rand(2, 2, 2, 8), "s_k": rand(2, 2, 2, 8), "s_v": rand(2, 2, 2, 8),
       "cache_k": rand(2, 2, 6, 8), "cache_v": rand(2, 2, 6, 8),
       "pos": np.array([1, 4], np.int64), "wrap": np.array([3, 5], np.int64),
       "nonpad": np.array([3, 6], np.int64)}
pk = tensor_scatter(ins["cache_k"], ins["s_k"], ins["pos"])
pv = tensor_scatter(ins["cache_v"], ins["s_v"], ins["pos"])
outs = {"step": attention(ins["s_q"], pk, pv, causal=True, nonpad=ins["nonpad"])[0],
        "ring": tensor_scatter(ins["cache_k"], ins["s_k"], ins["wrap"], circular=True),
        "swish": (ins["s_q"] / (1 + np.exp(-0.5 * ins["s_q"]))).astype(np.float32)}
model("opset24.onnx",
      [helper.make_node("TensorScatter", ["cache_k", "s_k", "pos"], ["present_k"]),
       helper.make_node("TensorScatter", ["cache_v", "s_v", "pos"], ["present_v"], axis=2),
       helper.make_node("Attention", ["s_q", "present_k", "present_v", "", "", "", "nonpad"],
                        ["step"], is_causal=1),
       helper.make_node("TensorScatter", ["cache_k", "s_k", "wrap"], ["ring"], mode="circular"),
       helper.make_node("Swish", ["s_q"], ["swish"], alpha=0.5)],
      ins.items(), outs.items(), opset=24)
for n, a in ins.items():
    save(n, a)
for n, a in outs.items():
    save("want_" + n, a)

# dynamic.onnx: Attention of inputs with an unbound batch, refused until bound
# (its heads' sizes multiplied the dynamic marker).
q = helper.make_tensor_value_info("q", TensorProto.FLOAT, ["batch", 2, 4, 8])
g = helper.make_graph([helper.make_node("Attention", ["q", "q", "q"], ["y"], name="unbound")],
                      "g", [q], [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                                               ["batch", 2, 4, 8])])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 23)]),
          os.path.join(out, "dynamic.onnx"))
