"""Masks for the linear weights of an ONNX model, as --sparsity-mask takes
them, and the model with those weights masked.

make_masks.py MODEL KEEP OUT_DIR writes OUT_DIR/masks.onnx (an initializer
per weight that a MatMul or Gemm takes as its second input: a bool mask
keeping each element with probability KEEP, named like the weight) and
OUT_DIR/masked.onnx (MODEL with each of those weights times its mask).
"""
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper


def main():
    path, keep, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    model = onnx.load(path)
    weights = {i.name: i for i in model.graph.initializer}
    taken = {n.input[1] for n in model.graph.node
             if n.op_type in ("MatMul", "Gemm") and len(n.input) > 1 and n.input[1] in weights}
    rng = np.random.default_rng(7)
    masks = []
    for name in sorted(taken):
        w = numpy_helper.to_array(weights[name])
        if w.ndim != 2 or w.dtype != np.float32:
            continue
        mask = rng.random(w.shape) < keep
        masks.append(numpy_helper.from_array(mask, name))
        weights[name].CopyFrom(numpy_helper.from_array(w * mask, name))
    graph = helper.make_graph([], "masks", [], [], initializer=masks)
    onnx.save(helper.make_model(graph), os.path.join(out, "masks.onnx"))
    onnx.save(model, os.path.join(out, "masked.onnx"))
    print(f"masks: {len(masks)}")


if __name__ == "__main__":
    main()
