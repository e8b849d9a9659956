#!/usr/bin/python3
"""Print the interface and the family-characteristic op patterns of export.py outputs.

  family_ops.py DIR [DIR...]

For each export directory (config.json names the family): one line with the graph's
inputs and outputs, one with the example attention_mask (one string of 0/1 per
sequence), and one with counts of the patterns that tell the family apart.
"""

import collections
import json
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

TYPES = {onnx.TensorProto.INT64: "int64", onnx.TensorProto.FLOAT: "float"}


def value_info(v):
    t = v.type.tensor_type
    dims = [d.dim_param or str(d.dim_value) for d in t.shape.dim]
    return f"{v.name} {TYPES.get(t.elem_type, t.elem_type)} [{', '.join(dims)}]"


def const_value(graph, name):
    for t in graph.initializer:
        if t.name == name:
            return numpy_helper.to_array(t)
    for n in graph.node:
        if n.op_type == "Constant" and n.output[0] == name:
            return numpy_helper.to_array(n.attribute[0].t)
    return None


def patterns(model, conf):
    g = model.graph
    ops = collections.Counter(n.op_type for n in g.node)
    users = collections.defaultdict(list)
    for n in g.node:
        for i in n.input:
            users[i].append(n)
    producer = {o: n for n in g.node for o in n.output}
    mats = [tuple(t.dims) for t in g.initializer if len(t.dims) == 2]
    cfg = conf["model"]
    fam = conf["family"]
    norm = "LayerNormalization" if conf["opset"] >= 17 else "ReduceMean"

    def shared_input_pairs(op):
        """Inputs read by two or more `op` nodes (two norms of one x: parallel residual)."""
        c = collections.Counter(n.input[0] for n in g.node if n.op_type == op)
        return sum(1 for v in c.values() if v >= 2)

    out = {}
    if fam == "hf-gpt2":
        e = cfg["n_embd"]
        # Conv1D: Gemm on the 2-D view; c_attn's [*, 3e] output split in three along the last axis
        out["gemm"] = ops["Gemm"]
        out["qkv_split"] = sum(1 for n in g.node if n.op_type == "Split" and len(n.output) == 3
                               and n.input[0] in producer and producer[n.input[0]].op_type == "Reshape"
                               and producer[n.input[0]].input[0] in producer
                               and producer[producer[n.input[0]].input[0]].op_type == "Gemm")
        out["tanh"] = ops["Tanh"]  # gelu_new
        out["erf"] = ops["Erf"]
        out["where"] = ops["Where"]  # causal mask
        out["tied_lm_head"] = int(mats.count((cfg["vocab_size"], e)) == 1 and (e, cfg["vocab_size"]) in mats)
    elif fam == "llama":
        h, kv = cfg["hidden_size"], cfg["num_key_value_heads"] * cfg["hidden_size"] // cfg["num_attention_heads"]
        out["sigmoid"] = ops["Sigmoid"]  # silu
        out["layernorm"] = ops["LayerNormalization"]
        out["rmsnorm_sqrt"] = ops["Sqrt"]
        out["kv_proj"] = mats.count((h, kv))  # k_proj, v_proj of the kv heads, no bias
        out["repeat_kv"] = sum(1 for n in g.node if n.op_type == "Expand"
                               and any(u.op_type == "Reshape" for u in users[n.output[0]]))
        out["rotary_neg"] = ops["Neg"]  # rotate_half of q and k
        out["cos_sin"] = ops["Cos"] + ops["Sin"]
        out["trilu"] = ops["Trilu"]  # causal mask
        out["gemm"] = ops["Gemm"]
        out["untied_lm_head"] = int((h, cfg["vocab_size"]) in mats and (cfg["vocab_size"], h) in mats)
    elif fam == "neox":
        h, heads = cfg["hidden_size"], cfg["num_attention_heads"]
        # qkv viewed per head [.., heads, 3*head_size] and sliced into q, k, v
        per_head = 0
        for n in g.node:
            if n.op_type != "Reshape" or sum(u.op_type == "Slice" for u in users[n.output[0]]) < 3:
                continue
            shape = const_value(g, n.input[1])
            if shape is None or list(shape[-2:]) == [heads, 3 * h // heads]:
                per_head += 1
        out["qkv_per_head_slices"] = per_head
        out["erf"] = ops["Erf"]
        out["tanh"] = ops["Tanh"]
        out["parallel_norms"] = shared_input_pairs(norm)
        out["cos_sin"] = ops["Cos"] + ops["Sin"]
        out["where"] = ops["Where"]  # causal mask
        out["untied_embed_out"] = int((h, cfg["vocab_size"]) in mats and (cfg["vocab_size"], h) in mats)
    return out


def main():
    for d in sys.argv[1:]:
        with open(os.path.join(d, "config.json")) as f:
            conf = json.load(f)
        model = onnx.load(os.path.join(d, "model.onnx"))
        g = model.graph
        print(f"{conf['family']} opset {conf['opset']}: "
              f"{'; '.join(value_info(v) for v in g.input)} -> {'; '.join(value_info(v) for v in g.output)}")
        mask = np.load(os.path.join(d, "attention_mask.npy"))
        print("  attention_mask " + " ".join("".join(str(int(x)) for x in row) for row in mask))
        print("  " + " ".join(f"{k}={v}" for k, v in patterns(model, conf).items()))


if __name__ == "__main__":
    main()
