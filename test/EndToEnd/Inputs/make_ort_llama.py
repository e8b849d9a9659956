"""A tiny Llama in the form ONNX Runtime's model builder exports (what
onnx-community's Llama, Mistral and Phi models hold), with numpy's greedy loop.

usage: make_ort_llama.py OUT_DIR

model.onnx takes input_ids and attention_mask [B, S] and the empty caches
past_key_values.L.key/value [B, 2, past, 16], and gives logits [B, S, 64]
and the present caches. Its layers: SimplifiedLayerNormalization and
SkipSimplifiedLayerNormalization (the residual adds), 4-bit MatMulNBits
projections, com.microsoft GroupQueryAttention (4 query heads over 2 kv
heads of 16, do_rotary with the caches HF's rotary makes; seqlens_k and
total_sequence_length computed from attention_mask, as the builder does),
a SiLU-gated MLP, and an f32 LM head.
prompt.npy, greedy.npy and greedy_logits.npy: numpy's greedy loop from
prompts of 3 and 6 tokens up to 16 positions (as export.py --greedy writes
torch's); want_present.L.key/value.npy: the caches of a prefill of its
final sequences; empty_cache.npy: a past of none.
"""
import os
import sys

import numpy as np
from onnx import helper, numpy_helper, TensorProto, save

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(11)
VOCAB, HIDDEN, HEADS, KV, HEAD, LAYERS, INNER, CTX, EPS = 64, 64, 4, 2, 16, 2, 128, 16, 1e-5
BLOCK = 32
MS = "com.microsoft"
inits, nodes = [], []


def init(name, value):
    inits.append(numpy_helper.from_array(value, name))
    return name


def node(op, ins, outs, domain="", **attrs):
    nodes.append(helper.make_node(op, ins, outs, domain=domain, name=outs[0], **attrs))
    return outs[0]


def quantized(name, k, n):
    """A 4-bit MatMulNBits weight of K x N: its codes, scales and zero
    points as initializers, and the matrix they make (the reference's)."""
    blocks = k // BLOCK
    codes = rng.integers(0, 16, (n, k))
    zeros = rng.integers(0, 16, (n, blocks))
    scales = rng.uniform(0.02, 0.06, (n, blocks)).astype(np.float32)
    w = (codes - np.repeat(zeros, BLOCK, 1)) * np.repeat(scales.astype(np.float64), BLOCK, 1)
    packed = (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(np.uint8).reshape(n, blocks, BLOCK // 2)
    zp = (zeros[:, 0::2] | (zeros[:, 1::2] << 4)).astype(np.uint8).reshape(-1)
    ins = [init(name + ".qweight", packed), init(name + ".scales", scales.reshape(-1)),
           init(name + ".zeros", zp)]
    return ins, w.T


def matmul_nbits(x, name, k, n, weights):
    ins, w = quantized(name, k, n)
    weights[name] = w
    return node("MatMulNBits", [x] + ins, [name + ".out"], MS, K=k, N=n, bits=4, block_size=BLOCK)


inv_freq = 1.0 / (10000 ** (np.arange(0, HEAD, 2) / HEAD))
angles = np.arange(CTX)[:, None] * inv_freq[None, :]
cos, sin = np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)
init("cos_cache", cos)
init("sin_cache", sin)
embed = (rng.standard_normal((VOCAB, HIDDEN)) * 0.5).astype(np.float32)
head = (rng.standard_normal((HIDDEN, VOCAB)) * 0.2).astype(np.float32)
norms = {}
weights = {}

# seqlens_k and total_sequence_length from attention_mask, as the builder does.
node("ReduceSum", ["attention_mask", init("one_axis", np.array([1], np.int64))], ["mask_sum"],
     keepdims=0)
node("Sub", ["mask_sum", init("one", np.array(1, np.int64))], ["seqlens_minus"])
node("Cast", ["seqlens_minus"], ["seqlens_k"], to=TensorProto.INT32)
node("Shape", ["attention_mask"], ["mask_shape"])
node("Gather", ["mask_shape", init("one_index", np.array(1, np.int64))], ["total_i64"], axis=0)
node("Cast", ["total_i64"], ["total_seq_len"], to=TensorProto.INT32)

x = node("Gather", [init("embed_tokens", embed), "input_ids"], ["embedded"], axis=0)
residual = None
for layer in range(LAYERS):
    p = f"layers.{layer}"
    norms[p + ".ln1"] = (1 + 0.1 * rng.standard_normal(HIDDEN)).astype(np.float32)
    norms[p + ".ln2"] = (1 + 0.1 * rng.standard_normal(HIDDEN)).astype(np.float32)
    if residual is None:
        h = node("SimplifiedLayerNormalization", [x, init(p + ".ln1", norms[p + ".ln1"])],
                 [p + ".ln1.out"], axis=-1, epsilon=EPS)
        residual = x
    else:
        h = node("SkipSimplifiedLayerNormalization",
                 [x, residual, init(p + ".ln1", norms[p + ".ln1"])],
                 [p + ".ln1.out", "", "", p + ".ln1.sum"], MS, epsilon=EPS)
        residual = p + ".ln1.sum"
    q = matmul_nbits(h, p + ".q_proj", HIDDEN, HEADS * HEAD, weights)
    k = matmul_nbits(h, p + ".k_proj", HIDDEN, KV * HEAD, weights)
    v = matmul_nbits(h, p + ".v_proj", HIDDEN, KV * HEAD, weights)
    a = node("GroupQueryAttention",
             [q, k, v, f"past_key_values.{layer}.key", f"past_key_values.{layer}.value",
              "seqlens_k", "total_seq_len", "cos_cache", "sin_cache"],
             [p + ".attn", f"present.{layer}.key", f"present.{layer}.value"], MS,
             num_heads=HEADS, kv_num_heads=KV, do_rotary=1)
    o = matmul_nbits(a, p + ".o_proj", HEADS * HEAD, HIDDEN, weights)
    h = node("SkipSimplifiedLayerNormalization", [o, residual, init(p + ".ln2", norms[p + ".ln2"])],
             [p + ".ln2.out", "", "", p + ".ln2.sum"], MS, epsilon=EPS)
    residual = p + ".ln2.sum"
    gate = matmul_nbits(h, p + ".gate_proj", HIDDEN, INNER, weights)
    up = matmul_nbits(h, p + ".up_proj", HIDDEN, INNER, weights)
    silu = node("Mul", [gate, node("Sigmoid", [gate], [p + ".sig"])], [p + ".silu"])
    x = matmul_nbits(node("Mul", [silu, up], [p + ".act"]), p + ".down_proj", INNER, HIDDEN,
                     weights)
norms["norm"] = (1 + 0.1 * rng.standard_normal(HIDDEN)).astype(np.float32)
h = node("SkipSimplifiedLayerNormalization", [x, residual, init("norm", norms["norm"])],
         ["norm.out"], MS, epsilon=EPS)
node("MatMul", [h, init("lm_head", head)], ["logits"])

tensor = helper.make_tensor_value_info
graph = helper.make_graph(
    nodes, "llama",
    [tensor("input_ids", TensorProto.INT64, ["batch", "seq"]),
     tensor("attention_mask", TensorProto.INT64, ["batch", "total"])] +
    [tensor(f"past_key_values.{i}.{kv}", TensorProto.FLOAT, ["batch", KV, "past", HEAD])
     for i in range(LAYERS) for kv in ("key", "value")],
    [tensor("logits", TensorProto.FLOAT, ["batch", "seq", VOCAB])] +
    [tensor(f"present.{i}.{kv}", TensorProto.FLOAT, ["batch", KV, "total", HEAD])
     for i in range(LAYERS) for kv in ("key", "value")],
    inits)
save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                             helper.make_opsetid(MS, 1)]),
     os.path.join(out, "model.onnx"))


def rms(v, w):
    return v / np.sqrt((v * v).mean(-1, keepdims=True) + EPS) * w


def rotate(t):
    """t [S, heads, HEAD] at positions 0.. (HF's rotate_half)."""
    c, s = np.cos(angles[: t.shape[0]])[:, None, :], np.sin(angles[: t.shape[0]])[:, None, :]
    a, b = t[..., : HEAD // 2], t[..., HEAD // 2 :]
    return np.concatenate([a * c - b * s, b * c + a * s], -1)


def forward(ids, caches=None):
    """The logits [S, VOCAB] of one unpadded sequence; its keys (turned) and
    values [KV, S, HEAD] of each layer appended to `caches`."""
    x = embed[ids].astype(np.float64)
    n = len(ids)
    for layer in range(LAYERS):
        p = f"layers.{layer}"
        h = rms(x, norms[p + ".ln1"])
        q = rotate((h @ weights[p + ".q_proj"]).reshape(n, HEADS, HEAD))
        k = rotate((h @ weights[p + ".k_proj"]).reshape(n, KV, HEAD))
        v = (h @ weights[p + ".v_proj"]).reshape(n, KV, HEAD)
        if caches is not None:
            caches += [k.transpose(1, 0, 2), v.transpose(1, 0, 2)]
        k, v = np.repeat(k, HEADS // KV, 1), np.repeat(v, HEADS // KV, 1)
        scores = np.einsum("qhd,khd->hqk", q, k) / np.sqrt(HEAD)
        scores = np.where(np.triu(np.ones((n, n), bool), 1), -np.inf, scores)
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        attn = np.einsum("hqk,khd->qhd", probs, v).reshape(n, HEADS * HEAD)
        x = x + attn @ weights[p + ".o_proj"]
        h = rms(x, norms[p + ".ln2"])
        gate, up = h @ weights[p + ".gate_proj"], h @ weights[p + ".up_proj"]
        x = x + (gate / (1 + np.exp(-gate)) * up) @ weights[p + ".down_proj"]
    return rms(x, norms["norm"]) @ head


ids = rng.integers(0, VOCAB, (2, CTX))
prompt = np.full((2, CTX), -1, np.int64)
seqs, logits = [], []
for i, n in enumerate((3, 6)):
    prompt[i, :n] = ids[i, :n]
    seq = list(ids[i, :n])
    while len(seq) < CTX:
        seq.append(int(forward(np.array(seq))[-1].argmax()))
    seqs.append(seq)
    logits.append(forward(np.array(seq)))
np.save(os.path.join(out, "prompt.npy"), prompt)
np.save(os.path.join(out, "greedy.npy"), np.array(seqs, np.int64))
np.save(os.path.join(out, "greedy_logits.npy"), np.array(logits, np.float32))
# The present caches of a prefill of the final sequences.
caches = [[] for _ in seqs]
for seq, cache in zip(seqs, caches):
    forward(np.array(seq), cache)
for i in range(2 * LAYERS):
    name = f"present.{i // 2}.{('key', 'value')[i % 2]}"
    np.save(os.path.join(out, f"want_{name}.npy"), np.array([c[i] for c in caches], np.float32))
np.save(os.path.join(out, "empty_cache.npy"), np.zeros((2, KV, 0, HEAD), np.float32))
