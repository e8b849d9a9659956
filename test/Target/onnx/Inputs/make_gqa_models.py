"""com.microsoft GroupQueryAttention as ONNX Runtime's model builder writes
it, with numpy's expected outputs (a loop over batches, heads and queries,
written from ONNX Runtime's CPU kernel's definition).

usage: make_gqa_models.py OUT_DIR

gqa.onnx has three nodes, each with its own inputs (NAME.npy) and outputs
y_X, key_X and value_X (want_*.npy, and mask_*.npy: 1 where defined):
- a: a first prompt of two sequences right-padded to 4 (seqlens_k [3, 1]),
  4 query heads over 2 kv heads of 16, q, k and v apart, rotary
  (do_rotary) at the positions the kernel derives; no cache.
- b: one decoding token per sequence of two against a static cache of 6
  (seqlens_k [4, 2]), q, k and v packed, 4 query heads over 1, softcap,
  local_window_size 2 and smooth_softmax.
- c: a prompt of 3 after 4 cached tokens (a growing cache, total 7),
  interleaved rotary at given position_ids, scale, attention_bias and
  head_sink.
A padded query's output and the cache past the written positions are not
defined (ONNX Runtime leaves or zeroes them): the masks leave them out.
bad-total.onnx takes total_sequence_length as an input, refused; so is
bad-later.onnx's prompt after cached tokens at batch 2, and bad-rank.onnx's
cache of rank 3.
"""
import os
import sys

import numpy as np
from onnx import helper, numpy_helper, TensorProto, save

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(7)
f32 = np.float32


def rotate(x, cos, sin, interleaved):
    """x [..., D] with its first 2 * cos.shape[-1] dimensions rotated."""
    r = 2 * cos.shape[-1]
    y = x.copy()
    if interleaved:
        a, b = x[..., 0:r:2], x[..., 1:r:2]
        y[..., 0:r:2], y[..., 1:r:2] = a * cos - b * sin, b * cos + a * sin
    else:
        a, b = x[..., : r // 2], x[..., r // 2 : r]
        y[..., : r // 2], y[..., r // 2 : r] = a * cos - b * sin, b * cos + a * sin
    return y


def gqa(q, k, v, past, seqlens, total, n, kv, scale=0.0, softcap=0.0, window=-1, rotary=None,
        ids=None, bias=None, sink=None, smooth=False):
    b, s, width = q.shape
    if k is None:  # packed
        h = width // (n + 2 * kv)
        q, k, v = q[..., : n * h], q[..., n * h : (n + kv) * h], q[..., (n + kv) * h :]
    h = q.shape[2] // n
    pk, pv = past if past is not None else (np.zeros((b, kv, 0, h), f32),) * 2
    p = pk.shape[2]
    length = max(total, p)
    first = not (s > 1 and s != total) and s == total
    q = q.reshape(b, s, n, h).transpose(0, 2, 1, 3).astype(np.float64)
    k = k.reshape(b, s, kv, h).transpose(0, 2, 1, 3).astype(np.float64)
    v = v.reshape(b, s, kv, h).transpose(0, 2, 1, 3).astype(np.float64)
    scale = scale or 1 / np.sqrt(h)
    y = np.zeros((b, n, s, h))
    keys = np.zeros((b, kv, length, h))
    values = np.zeros((b, kv, length, h))
    mask_y = np.zeros((b, s, n * h), f32)
    mask_kv = np.zeros((b, kv, length, h), f32)
    for i in range(b):
        tot = int(seqlens[i]) + 1
        earlier = 0 if first else tot - s
        for t in range(s):
            pos = ids[i, t] if ids is not None else earlier + t
            if rotary is not None:
                cos, sin, inter = rotary
                q[i, :, t] = rotate(q[i, :, t], cos[pos], sin[pos], inter)
                k[i, :, t] = rotate(k[i, :, t], cos[pos], sin[pos], inter)
        keys[i, :, :earlier] = pk[i, :, :earlier]
        values[i, :, :earlier] = pv[i, :, :earlier]
        keys[i, :, earlier : earlier + s] = k[i]
        values[i, :, earlier : earlier + s] = v[i]
        mask_kv[i, :, : earlier + s] = 1
        for head in range(n):
            g = head // (n // kv)
            for t in range(s):
                at = earlier + t
                if first and t >= tot:
                    continue  # a padded query
                mask_y[i, t, head * h : (head + 1) * h] = 1
                logits = keys[i, g] @ q[i, head, t] * scale
                if softcap > 0:
                    logits = softcap * np.tanh(logits / softcap)
                if bias is not None:
                    logits[:total] += bias[min(i, bias.shape[0] - 1), min(head, bias.shape[1] - 1), t]
                seen = np.arange(length) <= at
                if window > 0:  # the last `window` keys, this query's own among them
                    seen &= np.arange(length) > at - window
                logits = np.where(seen, logits, -np.inf)
                extra = sink[head] if sink is not None else (0.0 if smooth else -np.inf)
                top = max(logits.max(), extra)
                e = np.exp(logits - top)
                y[i, head, t] = (e / (e.sum() + np.exp(extra - top))) @ values[i, g]
    y = y.transpose(0, 2, 1, 3).reshape(b, s, n * h)
    return [x.astype(f32) for x in (y, keys, values)], mask_y, mask_kv


nodes, inputs, outputs, inits = [], [], [], []


def feed(name, value):
    np.save(f"{out}/{name}.npy", value)
    kind = TensorProto.INT32 if value.dtype == np.int32 else (
        TensorProto.INT64 if value.dtype == np.int64 else TensorProto.FLOAT)
    inputs.append(helper.make_tensor_value_info(name, kind, value.shape))
    return name


def init(name, value):
    inits.append(numpy_helper.from_array(value, name))
    return name


def case(tag, node_inputs, want, attrs):
    (y, k, v), mask_y, mask_kv = want
    names = [f"y_{tag}", f"key_{tag}", f"value_{tag}"]
    nodes.append(helper.make_node("GroupQueryAttention", node_inputs, names, domain="com.microsoft",
                                  name=f"gqa_{tag}", **attrs))
    for name, value in zip(names, (y, k, v)):
        np.save(f"{out}/want_{name}.npy", value)
        outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, value.shape))
    np.save(f"{out}/mask_y_{tag}.npy", mask_y)
    np.save(f"{out}/mask_key_{tag}.npy", mask_kv)
    np.save(f"{out}/mask_value_{tag}.npy", mask_kv)


def normal(*shape):
    return rng.standard_normal(shape).astype(f32)


# a: a padded first prompt with rotary.
cos_a, sin_a = (np.cos(np.arange(8)[:, None] * 0.3 * np.arange(1, 9)).astype(f32),
                np.sin(np.arange(8)[:, None] * 0.3 * np.arange(1, 9)).astype(f32))
qa, ka, va = normal(2, 4, 64), normal(2, 4, 32), normal(2, 4, 32)
seq_a = np.array([3, 1], np.int32)
case("a", [feed("q_a", qa), feed("k_a", ka), feed("v_a", va), "", "", feed("seq_a", seq_a),
           init("total_a", np.array(4, np.int32)), init("cos_a", cos_a), init("sin_a", sin_a)],
     gqa(qa, ka, va, None, seq_a, 4, 4, 2, rotary=(cos_a, sin_a, False)),
     dict(num_heads=4, kv_num_heads=2, do_rotary=1))

# b: decoding against a static cache, packed, softcap, a window, smooth softmax.
qb, pkb, pvb = normal(2, 1, (4 + 2) * 8), normal(2, 1, 6, 8), normal(2, 1, 6, 8)
seq_b = np.array([4, 2], np.int32)
case("b", [feed("q_b", qb), "", "", feed("pk_b", pkb), feed("pv_b", pvb), feed("seq_b", seq_b),
           init("total_b", np.array([6], np.int32))],
     gqa(qb, None, None, (pkb, pvb), seq_b, 6, 4, 1, softcap=2.0, window=2, smooth=True),
     dict(num_heads=4, kv_num_heads=1, softcap=2.0, local_window_size=2, smooth_softmax=1))

# c: a prompt after cached tokens, interleaved rotary at given positions,
# scale, attention_bias and head_sink.
cos_c, sin_c = (np.cos(np.arange(10)[:, None] * 0.2 * np.arange(1, 9)).astype(f32),
                np.sin(np.arange(10)[:, None] * 0.2 * np.arange(1, 9)).astype(f32))
qc, kc, vc = normal(1, 3, 32), normal(1, 3, 32), normal(1, 3, 32)
pkc, pvc = normal(1, 2, 4, 16), normal(1, 2, 4, 16)
seq_c, ids_c = np.array([6], np.int32), np.array([[4, 5, 6]], np.int64)
bias_c, sink_c = normal(1, 2, 3, 7), np.array([0.5, -1.0], f32)
case("c", [feed("q_c", qc), feed("k_c", kc), feed("v_c", vc), feed("pk_c", pkc),
           feed("pv_c", pvc), feed("seq_c", seq_c), init("total_c", np.array(7, np.int32)),
           init("cos_c", cos_c), init("sin_c", sin_c), feed("ids_c", ids_c),
           feed("bias_c", bias_c), init("sink_c", sink_c)],
     gqa(qc, kc, vc, (pkc, pvc), seq_c, 7, 2, 2, scale=0.3, rotary=(cos_c, sin_c, True),
         ids=ids_c, bias=bias_c, sink=sink_c),
     dict(num_heads=2, kv_num_heads=2, scale=0.3, do_rotary=1, rotary_interleaved=1))

opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
save(helper.make_model(helper.make_graph(nodes, "gqa", inputs, outputs, inits),
                       opset_imports=opsets), f"{out}/gqa.onnx")



def save_bad(path, name, node_inputs, shapes, inits=()):
    """A model of one GroupQueryAttention (2 heads of 8) named `name` on
    inputs of `shapes` ({name: shape}; seq int32, the rest float)."""
    node = helper.make_node("GroupQueryAttention", node_inputs, ["y"], domain="com.microsoft",
                            name=name, num_heads=2, kv_num_heads=2)
    ins = [helper.make_tensor_value_info(n, TensorProto.INT32 if n in ("seq", "total") else
                                         TensorProto.FLOAT, shape) for n, shape in shapes.items()]
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, shapes["q"])
    graph = helper.make_graph([node], "bad", ins, [y], list(inits))
    save(helper.make_model(graph, opset_imports=opsets), f"{out}/{path}")


# total_sequence_length as an input: the cache's length would come at run time.
save_bad("bad-total.onnx", "runtime_total", ["q", "k", "v", "", "", "seq", "total"],
         {"q": [1, 2, 16], "k": [1, 2, 16], "v": [1, 2, 16], "seq": [1], "total": []})
# Two tokens each of a batch of two after earlier ones: ONNX Runtime takes a
# prompt after cached tokens only at batch 1.
save_bad("bad-later.onnx", "batched_later", ["q", "k", "v", "pk", "pv", "seq", "total"],
         {"q": [2, 2, 16], "k": [2, 2, 16], "v": [2, 2, 16], "pk": [2, 2, 3, 8],
          "pv": [2, 2, 3, 8], "seq": [2]},
         [numpy_helper.from_array(np.array(5, np.int32), "total")])
# A cache of rank 3: refused before any of its axes is read.
save_bad("bad-rank.onnx", "flat_cache", ["q", "k", "v", "pk", "pv", "seq", "total"],
         {"q": [1, 2, 16], "k": [1, 2, 16], "v": [1, 2, 16], "pk": [1, 2, 16], "pv": [1, 2, 16],
          "seq": [1]},
         [numpy_helper.from_array(np.array(4, np.int32), "total")])
