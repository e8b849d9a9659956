"""ONNX Runtime's com.microsoft ops as its transformer optimizer and 4-bit
quantizer write them, with numpy's expected outputs.

usage: make_microsoft_models.py OUT_DIR

microsoft.onnx takes x [2, 3, 32] and r [2, 3, 32] (x.npy, r.npy) and gives
(want_NAME.npy):
- fast (FastGelu with a bias), biasgelu, gelu, quick (QuickGelu, alpha 1.5);
- mha_packed (MultiHeadAttention of q, k and v packed in one [B, S, N, 3, H]
  input) and mha_cross (key and value given as heads [B, N, 5, H]);
- fused (FusedMatMul, x transposed, alpha 0.5, against r), biasadd (BiasAdd),
  gemmgelu (GemmFastGelu);
- skip and skip_sum (SkipLayerNormalization with beta and bias, and its
  input + skip + bias output), simple (SkipSimplifiedLayerNormalization),
  rms (SimplifiedLayerNormalization in the default domain, as ONNX Runtime
  registers it);
- q4 (MatMulNBits, 4 bits, blocks of 16 along K = 32, N = 24, packed zero
  points and a bias) and q8 (8 bits, blocks of 32, no zero points: 128);
- rot (RotaryEmbedding of x as 4 heads at position_ids [2, 3]) and
  rot_offset (interleaved, at positions from one offset, 2);
- att and present (Attention, GPT-2's fused form: x's first 3 positions,
  4 heads of 8, a cache of 4 positions, a raw mask over the 7 keys,
  unidirectional) and att0 (the same without cache or mask, the form the
  fusion pass takes to the attention kernel);
- mha, mha_k, mha_v (MultiHeadAttention of x, r and x / 2's first 3
  positions with one bias, a cache of 2, a raw key padding mask,
  unidirectional; its present key and value).
bad-nbits.onnx asks for 3 bits, refused. nbits-big.onnx holds a MatMulNBits
of K = 2048, N = 1040, whose codes --elide-weights elides.
"""
import math
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(1)
x = rng.standard_normal((2, 3, 32)).astype(np.float32)
r = rng.standard_normal((2, 3, 32)).astype(np.float32)
h = 32
bias, gamma, beta = (rng.standard_normal(h).astype(np.float32) for _ in range(3))


def erf_gelu(v):
    return 0.5 * v * (1 + np.vectorize(math.erf)(v / math.sqrt(2)))


def tanh_gelu(v):
    return 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3)))


def layer_norm(v, eps):
    mu = v.mean(-1, keepdims=True)
    return (v - mu) / np.sqrt(((v - mu) ** 2).mean(-1, keepdims=True) + eps)


def rms_norm(v, eps):
    return v / np.sqrt((v * v).mean(-1, keepdims=True) + eps)


def pack(codes, bits):
    """Fields of `bits` bits, each byte filled from its low bits up."""
    flat = codes.reshape(-1).astype(np.uint32)
    per = 8 // bits
    flat = np.concatenate([flat, np.zeros((-len(flat)) % per, np.uint32)]).reshape(-1, per)
    return sum(flat[:, j] << (bits * j) for j in range(per)).astype(np.uint8)


def nbits(bits, block, n, with_zeros):
    """B codes [N, blocks, blob], scales [N * blocks], zero points, and W [K, N]."""
    k = h
    blocks = k // block
    codes = rng.integers(0, 1 << bits, (n, k))
    scales = rng.uniform(0.01, 0.1, (n, blocks)).astype(np.float32)
    zeros = (rng.integers(0, 1 << bits, (n, blocks)) if with_zeros
             else np.full((n, blocks), 1 << (bits - 1)))
    w = (codes - np.repeat(zeros, block, 1)) * np.repeat(scales.astype(np.float64), block, 1)
    b = np.stack([pack(codes[i], bits) for i in range(n)]).reshape(n, blocks, block * bits // 8)
    zp = np.stack([pack(zeros[i], bits) for i in range(n)]).reshape(-1) if with_zeros else None
    return b, scales.reshape(-1), zp, w.T


b4, s4, z4, w4 = nbits(4, 16, 24, True)
qbias = rng.standard_normal(24).astype(np.float32)
b8, s8, _, w8 = nbits(8, 32, 8, False)
angles = np.arange(16)[:, None] * (1e4 ** (-np.arange(4) / 4))[None, :]
cos_cache, sin_cache = np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)
pos = np.array([[0, 1, 2], [5, 6, 7]], np.int64)


def rotary(v, positions, interleaved):
    """v [B, S, 4 heads * 8]; positions [B, S]."""
    heads = v.reshape(2, 3, 4, 8)
    c, s_ = cos_cache[positions][:, :, None], sin_cache[positions][:, :, None]
    if interleaved:
        x1, x2 = heads[..., 0::2], heads[..., 1::2]
        return np.stack([c * x1 - s_ * x2, s_ * x1 + c * x2], -1).reshape(v.shape)
    x1, x2 = heads[..., :4], heads[..., 4:]
    return np.concatenate([c * x1 - s_ * x2, s_ * x1 + c * x2], -1).reshape(v.shape)


wsq = (rng.standard_normal((32, 32)) * 0.2).astype(np.float32)
# Attention: GPT-2's fused form, 4 heads of 8, a cache of 4 positions, a raw
# mask over the 7 keys, unidirectional.
wqkv = (rng.standard_normal((32, 96)) * 0.2).astype(np.float32)
bqkv = rng.standard_normal(96).astype(np.float32)
past = rng.standard_normal((2, 2, 4, 4, 8)).astype(np.float32)
raw = np.ones((2, 7), np.int32)
raw[1, :2] = 0  # the second sequence's first keys are padding


def ms_attention(v, mask, cache, filter_value=-10000.0):
    qkv = v @ wqkv + bqkv
    heads = [qkv[..., i * 32:(i + 1) * 32].reshape(2, 3, 4, 8).transpose(0, 2, 1, 3)
             for i in range(3)]
    q, k, vv = heads
    p = 0 if cache is None else cache.shape[3]
    if cache is not None:
        k = np.concatenate([cache[0], k], 2)
        vv = np.concatenate([cache[1], vv], 2)
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(8)
    if mask is not None:
        scores = scores + np.where(mask > 0, 0.0, filter_value)[:, None, None, :]
    future = np.arange(3 + p)[None, :] > np.arange(3)[:, None] + p
    scores = np.where(future, filter_value, scores)
    e = np.exp(scores - scores.max(-1, keepdims=True))
    y = (e / e.sum(-1, keepdims=True)) @ vv
    return y.transpose(0, 2, 1, 3).reshape(2, 3, 32), np.stack([k, vv])


att, present = ms_attention(x[:, :3], raw, past)

# MultiHeadAttention: separate q, k and v [2, 3, 32] with one bias, a cache
# of 2 positions [2, 4, 2, 8], a raw key padding mask over the 5 keys,
# unidirectional.
mbias = rng.standard_normal(96).astype(np.float32)
past_k, past_v = (rng.standard_normal((2, 4, 2, 8)).astype(np.float32) for _ in range(2))
kpm = np.ones((2, 5), np.int32)
kpm[0, 0] = 0


def mha(q, k, v):
    def split(t):
        return t.reshape(2, 3, 4, 8).transpose(0, 2, 1, 3)
    qh = split(q + mbias[:32])
    kh = np.concatenate([past_k, split(k + mbias[32:64])], 2)
    vh = np.concatenate([past_v, split(v + mbias[64:])], 2)
    scores = qh @ kh.transpose(0, 1, 3, 2) / math.sqrt(8)
    scores = scores + np.where(kpm > 0, 0.0, -10000.0)[:, None, None, :]
    scores = np.where(np.arange(5)[None, :] > np.arange(3)[:, None] + 2, -np.inf, scores)
    e = np.exp(scores - scores.max(-1, keepdims=True))
    y = (e / e.sum(-1, keepdims=True)) @ vh
    return y.transpose(0, 2, 1, 3).reshape(2, 3, 32), kh, vh


mha_y, mha_k, mha_v = mha(x[:, :3], r[:, :3], x[:, :3] * np.float32(0.5))


def plain_attention(qh, kh, vh):
    """Heads [2, 4, T, 8] of q against k and v, no mask."""
    scores = qh @ kh.transpose(0, 1, 3, 2) / math.sqrt(8)
    e = np.exp(scores - scores.max(-1, keepdims=True))
    return ((e / e.sum(-1, keepdims=True)) @ vh).transpose(0, 2, 1, 3).reshape(2, -1, 32)


# MultiHeadAttention with q, k and v packed in query [2, 3, 4, 3, 8] (x, r
# and x / 2's first 3 positions), and with key and value as heads [2, 4, 5,
# 8] (cross attention over 5 keys).
cross_k, cross_v = (rng.standard_normal((2, 4, 5, 8)).astype(np.float32) for _ in range(2))
heads3 = [t.reshape(2, 3, 4, 8).transpose(0, 2, 1, 3) for t in (x[:, :3], r[:, :3], x[:, :3] * 0.5)]
want = {
    "att": att, "present": present, "att0": ms_attention(x[:, :3], None, None)[0],
    "mha": mha_y, "mha_k": mha_k, "mha_v": mha_v,
    "rot": rotary(x, pos, False), "rot_offset": rotary(x, np.array([[2, 3, 4]] * 2), True),
    "fast": tanh_gelu(x + bias), "biasgelu": erf_gelu(x + bias), "gelu": erf_gelu(x),
    "quick": x / (1 + np.exp(-1.5 * x)),
    "skip": layer_norm(x + r + bias, 1e-12) * gamma + beta, "skip_sum": x + r + bias,
    "simple": rms_norm(x + r, 1e-6) * gamma, "rms": rms_norm(x, 1e-5) * gamma,
    "q4": x.astype(np.float64) @ w4 + qbias, "q8": x.astype(np.float64) @ w8,
    # FusedMatMul: 0.5 x (x^T r) per batch; BiasAdd: x + bias + r;
    # GemmFastGelu: the tanh GELU of x W + bias.
    "fused": 0.5 * (x.transpose(0, 2, 1) @ r), "biasadd": x + bias + r,
    "gemmgelu": tanh_gelu(x @ wsq + bias),
    "mha_packed": plain_attention(*heads3), "mha_cross": plain_attention(heads3[0], cross_k, cross_v),
}
MS = "com.microsoft"
N = helper.make_node
nodes = [
    N("Slice", ["x", "start", "three", "axis1"], ["x3"]),
    N("Attention", ["x3", "wqkv", "bqkv", "raw", "past"], ["att", "present"], domain=MS,
      num_heads=4, unidirectional=1),
    N("Attention", ["x3", "wqkv", "bqkv"], ["att0"], domain=MS, num_heads=4, unidirectional=1),
    N("Slice", ["r", "start", "three", "axis1"], ["r3"]),
    N("Mul", ["x3", "half"], ["v3"]),
    N("MultiHeadAttention", ["x3", "r3", "v3", "mbias", "kpm", "", "past_k", "past_v"],
      ["mha", "mha_k", "mha_v"], domain=MS, num_heads=4, unidirectional=1),
    N("RotaryEmbedding", ["x", "pos", "cos_cache", "sin_cache"], ["rot"], domain=MS, num_heads=4),
    N("RotaryEmbedding", ["x", "offset", "cos_cache", "sin_cache"], ["rot_offset"], domain=MS,
      num_heads=4, interleaved=1),
    N("FastGelu", ["x", "bias"], ["fast"], domain=MS),
    N("BiasGelu", ["x", "bias"], ["biasgelu"], domain=MS),
    N("Gelu", ["x"], ["gelu"], domain=MS),
    N("QuickGelu", ["x"], ["quick"], domain=MS, alpha=1.5),
    N("SkipLayerNormalization", ["x", "r", "gamma", "beta", "bias"],
      ["skip", "", "", "skip_sum"], domain=MS),
    N("SkipSimplifiedLayerNormalization", ["x", "r", "gamma"], ["simple"], domain=MS,
      epsilon=1e-6),
    N("SimplifiedLayerNormalization", ["x", "gamma"], ["rms"], axis=-1, epsilon=1e-5),
    N("MatMulNBits", ["x", "b4", "s4", "z4", "", "qbias"], ["q4"], domain=MS, K=32, N=24,
      bits=4, block_size=16),
    N("MatMulNBits", ["x", "b8", "s8"], ["q8"], domain=MS, K=32, N=8, bits=8, block_size=32),
    N("Reshape", ["x3", "heads5"], ["x5"]),
    N("Reshape", ["r3", "heads5"], ["r5"]),
    N("Reshape", ["v3", "heads5"], ["v5"]),
    N("Concat", ["x5", "r5", "v5"], ["qkv_packed"], axis=3),
    N("MultiHeadAttention", ["qkv_packed"], ["mha_packed"], domain=MS, num_heads=4),
    N("MultiHeadAttention", ["x3", "cross_k", "cross_v"], ["mha_cross"], domain=MS, num_heads=4),
    N("FusedMatMul", ["x", "r"], ["fused"], domain=MS, alpha=0.5, transA=1),
    N("BiasAdd", ["x", "bias", "r"], ["biasadd"], domain=MS),
    N("GemmFastGelu", ["x", "wsq", "bias"], ["gemmgelu"], domain=MS),
]
inits = [numpy_helper.from_array(a, n) for n, a in (
    ("bias", bias), ("gamma", gamma), ("beta", beta), ("b4", b4), ("s4", s4), ("z4", z4),
    ("qbias", qbias), ("b8", b8), ("s8", s8), ("pos", pos), ("offset", np.array([2], np.int64)),
    ("cos_cache", cos_cache), ("sin_cache", sin_cache), ("wqkv", wqkv), ("bqkv", bqkv),
    ("past", past), ("raw", raw), ("start", np.array([0], np.int64)),
    ("three", np.array([3], np.int64)), ("axis1", np.array([1], np.int64)), ("mbias", mbias),
    ("past_k", past_k), ("past_v", past_v), ("kpm", kpm), ("half", np.array(0.5, np.float32)),
    ("wsq", wsq), ("heads5", np.array([2, 3, 4, 1, 8], np.int64)), ("cross_k", cross_k),
    ("cross_v", cross_v))]


def info(name, a):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, list(a.shape))


def save(path, nodes, outputs):
    g = helper.make_graph(nodes, "g", [info("x", x), info("r", r)],
                          [info(n, want[n]) for n in outputs], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17),
                                            helper.make_opsetid(MS, 1)])
    onnx.save(m, os.path.join(out, path))


save("microsoft.onnx", nodes, list(want))
save("bad-nbits.onnx", [N("MatMulNBits", ["x", "b4", "s4"], ["q4"], domain=MS, K=32, N=24,
                          bits=3, block_size=16, name="three")], ["q4"])
# A layer's size of 4-bit codes (K = 2048, N = 1040: more elements than the
# importer inlines), which --elide-weights leaves out.
big_b = rng.integers(0, 256, (1040, 2048 // 32, 16)).astype(np.uint8)
big_s = rng.uniform(0.01, 0.1, 1040 * 2048 // 32).astype(np.float32)
g = helper.make_graph(
    [N("MatMulNBits", ["a", "big_b", "big_s"], ["y"], domain=MS, K=2048, N=1040, bits=4,
       block_size=32, name="big")], "g",
    [helper.make_tensor_value_info("a", TensorProto.FLOAT, [1, 3, 2048])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 1040])],
    [numpy_helper.from_array(big_b, "big_b"), numpy_helper.from_array(big_s, "big_s")])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17),
                                              helper.make_opsetid(MS, 1)]),
          os.path.join(out, "nbits-big.onnx"))
np.save(os.path.join(out, "x.npy"), x)
np.save(os.path.join(out, "r.npy"), r)
for n, a in want.items():
    np.save(os.path.join(out, "want_" + n + ".npy"), a.astype(np.float32))
