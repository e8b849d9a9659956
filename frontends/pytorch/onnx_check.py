#!/usr/bin/python3
"""Run an exported model with a small numpy ONNX interpreter and compare with torch.

  /usr/bin/python3 frontends/pytorch/onnx_check.py DIR [DIR...]

DIR is an export.py output directory. Every reference pair listed in DIR/config.json
(idx*.npy -> logits*.npy; for the HF families input_ids*.npy and attention_mask*.npy ->
logits*.npy) is run through DIR/model.onnx (external data included) and the largest
absolute difference to torch's logits is printed. Exit status is 1 if any difference
exceeds --atol.

The interpreter knows only the ops the GPT exports of export.py use (opsets 13..17),
computes in float32 like torch does, and does not depend on onnxruntime (not available
here) or on torch, so it is an independent check of the graph semantics.
"""

import argparse
import json
import math
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _np_type(onnx_type):
    return onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[onnx_type]


def _div(a, b):
    if np.issubdtype(a.dtype, np.integer):
        q = np.abs(a) // np.abs(b)  # ONNX integer Div truncates toward zero
        return (np.sign(a) * np.sign(b) * q).astype(a.dtype)
    return a / b


def run_node(node, ins, opset):
    op, at = node.op_type, _attrs(node)
    x = ins[0] if ins else None
    if op == "Constant":
        return [numpy_helper.to_array(at["value"])]
    if op == "Identity":
        return [x]
    if op in ("Add", "Sub", "Mul", "Pow", "Equal"):
        f = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Pow": np.power,
             "Equal": np.equal}[op]
        with np.errstate(over="ignore"):  # finfo.min + finfo.min = -inf, as in torch
            r = f(x, ins[1])
        return [r if op == "Equal" else r.astype(x.dtype)]
    if op in ("Neg", "Tanh", "Cos", "Sin"):
        f = {"Neg": np.negative, "Tanh": np.tanh, "Cos": np.cos, "Sin": np.sin}[op]
        return [f(x).astype(x.dtype)]
    if op == "Sigmoid":
        return [(1.0 / (1.0 + np.exp(-x.astype(np.float64)))).astype(x.dtype)]
    if op == "Gemm":
        a = x.T if at.get("transA", 0) else x
        b = ins[1].T if at.get("transB", 0) else ins[1]
        y = np.float32(at.get("alpha", 1.0)) * np.matmul(a, b)
        if len(ins) > 2 and ins[2] is not None:
            y = y + np.float32(at.get("beta", 1.0)) * ins[2]
        return [y.astype(x.dtype)]
    if op == "Einsum":
        return [np.einsum(at["equation"].decode() if isinstance(at["equation"], bytes) else at["equation"],
                          *ins).astype(x.dtype)]
    if op == "Expand":
        shape = np.broadcast_shapes(x.shape, tuple(int(d) for d in ins[1]))
        return [np.broadcast_to(x, shape).copy()]
    if op == "ConstantOfShape":
        val = numpy_helper.to_array(at["value"]) if "value" in at else np.zeros(1, np.float32)
        return [np.full(tuple(int(d) for d in x), val.reshape(-1)[0], dtype=val.dtype)]
    if op == "Squeeze":
        axes = ins[1].tolist() if len(ins) > 1 and ins[1] is not None else None
        return [np.squeeze(x, axis=tuple(axes) if axes is not None else None)]
    if op == "Trilu":
        k = int(ins[1]) if len(ins) > 1 and ins[1] is not None else 0
        return [np.triu(x, k) if at.get("upper", 1) else np.tril(x, k)]
    if op == "Div":
        return [_div(x, ins[1])]
    if op == "Sqrt":
        return [np.sqrt(x)]
    if op == "Erf":
        return [_erf(x).astype(x.dtype)]
    if op == "ReduceMean":
        axes = at.get("axes") if opset < 18 else (ins[1].tolist() if len(ins) > 1 else None)
        axes = tuple(axes) if axes is not None else None
        return [np.mean(x, axis=axes, keepdims=bool(at.get("keepdims", 1))).astype(x.dtype)]
    if op == "MatMul":
        return [np.matmul(x, ins[1])]
    if op == "Gather":
        return [np.take(x, ins[1], axis=at.get("axis", 0))]
    if op == "Shape":
        return [np.array(x.shape, dtype=np.int64)]
    if op == "Cast":
        return [x.astype(_np_type(at["to"]))]
    if op == "Range":
        return [np.arange(ins[0], ins[1], ins[2]).astype(ins[0].dtype)]
    if op == "Unsqueeze":
        axes = at["axes"] if opset < 13 else ins[1].tolist()
        r = x
        for ax in sorted(a % (x.ndim + len(axes)) for a in axes):
            r = np.expand_dims(r, ax)
        return [r]
    if op == "Concat":
        return [np.concatenate(ins, axis=at["axis"])]
    if op == "Reshape":
        shape = ins[1].tolist()
        if not at.get("allowzero", 0):
            shape = [x.shape[i] if s == 0 else s for i, s in enumerate(shape)]
        return [x.reshape(shape)]
    if op == "Transpose":
        return [np.transpose(x, at.get("perm"))]
    if op == "Split":
        axis = at.get("axis", 0)
        split = at.get("split") if opset < 13 else (ins[1].tolist() if len(ins) > 1 and ins[1] is not None else None)
        if split is None:
            n = len(node.output)
            split = [x.shape[axis] // n] * n
        return np.split(x, np.cumsum(split)[:-1], axis=axis)
    if op == "Slice":
        starts, ends = ins[1], ins[2]
        axes = ins[3] if len(ins) > 3 and ins[3] is not None else np.arange(len(starts))
        steps = ins[4] if len(ins) > 4 and ins[4] is not None else np.ones(len(starts), np.int64)
        sl = [slice(None)] * x.ndim
        for s, e, a, st in zip(starts, ends, axes, steps):
            sl[int(a)] = slice(int(s), int(e), int(st))
        return [x[tuple(sl)]]
    if op == "Where":
        return [np.where(x, ins[1], ins[2])]
    if op == "Softmax":
        axis = at.get("axis", -1)
        m = np.max(x, axis=axis, keepdims=True)
        with np.errstate(over="ignore", invalid="ignore"):
            e = np.exp(x - m)
        return [(e / np.sum(e, axis=axis, keepdims=True)).astype(x.dtype)]
    if op == "LayerNormalization":
        axis = at.get("axis", -1) % x.ndim
        red = tuple(range(axis, x.ndim))
        mean = np.mean(x, axis=red, keepdims=True)
        var = np.mean((x - mean) ** 2, axis=red, keepdims=True)
        y = (x - mean) / np.sqrt(var + np.float32(at.get("epsilon", 1e-5)))
        y = y * ins[1]
        if len(ins) > 2 and ins[2] is not None:
            y = y + ins[2]
        return [y.astype(x.dtype)]
    raise NotImplementedError(f"op {op} (node {node.name})")


def run_model(model, feeds):
    g = model.graph
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    env = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    env.update(feeds)
    for node in g.node:  # ONNX graphs are topologically sorted
        ins = [env[n] if n else None for n in node.input]
        outs = run_node(node, ins, opset)
        for name, val in zip(node.output, outs):
            env[name] = np.asarray(val)
    return [env[o.name] for o in g.output]


def check_dir(d, atol):
    with open(os.path.join(d, "config.json")) as f:
        conf = json.load(f)
    model = onnx.load(os.path.join(d, "model.onnx"))  # loads external data relative to d
    ok = True
    names = [i["name"] for i in conf["inputs"]] if "inputs" in conf else [conf["input"]["name"]]
    for ref in conf["references"]:
        feeds = {n: np.load(os.path.join(d, ref[n])) for n in names}
        want = np.load(os.path.join(d, ref["logits"]))
        (got,) = run_model(model, feeds)
        err = float(np.max(np.abs(got.astype(np.float64) - want)))
        good = got.shape == want.shape and got.dtype == np.float32 and err <= atol
        ok &= good
        first = feeds[names[0]]
        print(f"{'ok  ' if good else 'FAIL'} {d} {ref[names[0]]} {tuple(first.shape)} -> {got.shape} "
              f"max|diff|={err:.3g}")
    return ok


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dirs", nargs="+")
    p.add_argument("--atol", type=float, default=1e-4)
    a = p.parse_args()
    ok = all([check_dir(d, a.atol) for d in a.dirs])
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
