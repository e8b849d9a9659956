"""Exports frontends/pytorch/gpt.py's tiny GPT with torch.onnx at the opsets given.

usage: export_gpt.py WSC_SRC OUT_DIR OPSET...

Writes OUT_DIR/op<N>.onnx (static batch 1 x 8 tokens) and op<N>-dynamic.onnx
(batch and sequence dynamic) for each opset. frontends/pytorch/export.py
keeps to opsets 13 to 17; this reaches the older forms (11 and 12) of the
ops a GPT export uses.
"""
import os
import sys
import warnings

import torch

sys.path.insert(0, os.path.join(sys.argv[1], "frontends", "pytorch"))
import gpt  # noqa: E402

warnings.simplefilter("ignore")
out = sys.argv[2]
os.makedirs(out, exist_ok=True)
model = gpt.build(gpt.PRESETS["tiny"]).eval()
idx = torch.zeros(1, 8, dtype=torch.long)
for opset in map(int, sys.argv[3:]):
    for dynamic in (False, True):
        axes = {"idx": {0: "batch", 1: "sequence"}, "logits": {0: "batch", 1: "sequence"}}
        torch.onnx.export(model, (idx,), os.path.join(out, "op%d%s.onnx" % (
            opset, "-dynamic" if dynamic else "")), opset_version=opset, input_names=["idx"],
            output_names=["logits"], dynamic_axes=axes if dynamic else None)
