#!/usr/bin/python3
"""Runs ONNX's node conformance tests (Debian's libonnx-testdata) through wsc.

Each test whose ops are all in scope is compiled with wsc-compile for a small mesh,
run on the emulator with wsc-run on the test's .pb inputs, and compared with the
expected outputs (floats within 1e-4 absolute or relative, integers and booleans
exactly). Inputs that fix a shape (a Reshape's shape, a Slice's starts, ...) are
bound as constants at compile time, as a user would with --bind.

The excluded file names each test left out, with its reason; the run fails when a
test outside it fails, when a test in it passes (the list must stay true), or
when fewer than --min-pass of the tests in scope pass. It prints one line per
failure, the pass count per op, and a closing line "N passed, N failed".
"""
import argparse
import collections
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

# The ops in scope: those a GPT export uses, and the general ops beside them.
SCOPE = {
    "Neg", "Abs", "Exp", "Log", "Sqrt", "Reciprocal", "Tanh", "Erf", "Sigmoid", "Relu", "Sin",
    "Cos", "Floor", "Ceil", "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean",
    "Mod", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Not", "And", "Or",
    "Xor", "Where", "Cast", "Clip", "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin",
    "Softmax", "LogSoftmax", "LayerNormalization", "MatMul", "Gemm", "Transpose", "Reshape",
    "Flatten", "Squeeze", "Unsqueeze", "Slice", "Concat", "Split", "Gather", "GatherElements",
    "Expand", "Tile", "Trilu", "Range", "Identity", "Size", "Shape", "Constant", "If",
    "ConstantOfShape", "Einsum",
    # Imported as a few of the ops above (lib/Target/OnnxComposite.cpp).
    "Elu", "Celu", "Selu", "LeakyRelu", "PRelu", "ThresholdedRelu", "HardSigmoid", "HardSwish",
    "Softplus", "Softsign", "Sign", "Shrink", "Sinh", "Cosh", "Tan", "Asinh", "Acosh", "Atanh",
    "IsNaN", "IsInf", "Round", "Dropout", "CastLike", "ReduceL1", "ReduceL2", "ReduceSumSquare",
    "ReduceLogSum", "ReduceLogSumExp", "GlobalAveragePool", "GlobalMaxPool", "ArgMax", "ArgMin",
    "NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss", "Hardmax", "EyeLike", "OneHot",
    "CumSum", "ReduceProd", "Atan", "Asin", "Acos", "QuantizeLinear", "DequantizeLinear",
    "TopK", "Compress", "Pad", "HannWindow", "HammingWindow", "BlackmanWindow",
    # The [N, C, spatial...] ops (lib/Target/OnnxImages.cpp).
    "DepthToSpace", "SpaceToDepth", "BatchNormalization", "InstanceNormalization",
    "MeanVarianceNormalization", "MaxPool", "AveragePool", "Conv", "Resize", "ConvTranspose", "LRN",
    # Integer and quantized ops (lib/Target/OnnxQuantized.cpp).
    "MatMulInteger", "ConvInteger", "QLinearMatMul", "QLinearConv", "DynamicQuantizeLinear",
    "BitShift", "Upsample", "TfIdfVectorizer",
    # The optimizers of ai.onnx.preview.training (lib/Target/OnnxTraining.cpp).
    "Adagrad", "Momentum", "Adam",
    # Recurrent ops, unrolled (lib/Target/OnnxRecurrent.cpp).
    "RNN", "GRU", "LSTM",
    # Ops that index by data (lib/Target/OnnxScatter.cpp).
    "ScatterElements", "Scatter", "ScatterND", "GatherND", "ReverseSequence", "MaxUnpool",
    # Sampled at a runtime grid by gathers (lib/Target/OnnxGridSample.cpp).
    "GridSample", "RoiAlign",
    # Sequences known at compile time, Loop unrolled (lib/Target/OnnxSequences.cpp).
    "Loop", "SequenceEmpty", "SequenceConstruct", "SequenceInsert", "SequenceAt", "SequenceErase",
    "SequenceLength", "SplitToSequence", "ConcatFromSequence", "Scan",
    # Spectral ops and Det, products with constant tables (lib/Target/OnnxSpectral.cpp).
    "DFT", "STFT", "MelWeightMatrix", "Det",
}

# Operand positions bound at compile time when they are graph inputs: those that
# fix a result's shape (the wafer runs static shapes), and Dropout's ratio and mode.
SHAPE_OPERANDS = {
    "Reshape": {1}, "Expand": {1}, "Tile": {1}, "Slice": {1, 2, 3, 4}, "Squeeze": {1},
    "Unsqueeze": {1}, "Split": {1}, "ReduceSum": {1}, "ReduceMean": {1}, "ReduceMax": {1},
    "ReduceMin": {1}, "Trilu": {1}, "Range": {0, 1, 2}, "If": {0}, "ConstantOfShape": {0},
    "Dropout": {1, 2}, "ReduceL1": {1}, "ReduceL2": {1}, "ReduceSumSquare": {1},
    "ReduceLogSum": {1}, "ReduceLogSumExp": {1}, "OneHot": {1}, "CumSum": {1}, "ReduceProd": {1},
    "TopK": {1}, "Compress": {1}, "Pad": {1, 3}, "Resize": {1, 2, 3}, "Upsample": {1},
    "HannWindow": {0}, "HammingWindow": {0}, "BlackmanWindow": {0},
    "RNN": {4}, "GRU": {4}, "LSTM": {4}, "MaxUnpool": {2},
    "Loop": {0, 1}, "SequenceAt": {1}, "SequenceInsert": {2}, "SequenceErase": {1},
    "SplitToSequence": {1}, "DFT": {1}, "STFT": {1, 3}, "MelWeightMatrix": {0, 1, 2, 3, 4},
}


def ops_of(graph):
    ops = set()
    for node in graph.node:
        ops.add(node.op_type)
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                ops |= ops_of(attr.g)
    return ops


def in_scope(model_path):
    model = onnx.load(model_path, load_external_data=False)
    return ops_of(model.graph) <= SCOPE, model


def shape_inputs(model):
    """Graph inputs that fix a shape, directly or through the nodes between."""
    wanted = set()
    for node in model.graph.node:
        for i in SHAPE_OPERANDS.get(node.op_type, ()):
            if i < len(node.input) and node.input[i]:
                wanted.add(node.input[i])
    producer = {out: node for node in model.graph.node for out in node.output}
    todo = list(wanted)
    while todo:
        node = producer.get(todo.pop())
        for name in node.input if node else ():
            if name and name not in wanted:
                wanted.add(name)
                todo.append(name)
    return wanted


def close(got, want):
    if got.shape != want.shape:
        return False, f"shape {got.shape} != {want.shape}"
    if want.dtype.kind == "f":
        g, w = got.astype(np.float64), want.astype(np.float64)
        same_nan = np.isnan(g) == np.isnan(w)
        diff = np.abs(g - w)
        ok = same_nan & (np.isnan(w) | (diff <= 1e-4) | (diff <= 1e-4 * np.abs(w)) | (g == w))
        if ok.all():
            return True, ""
        return False, f"max abs error {np.nanmax(np.where(ok, 0, diff)):.3g}"
    if np.array_equal(got, want):
        return True, ""
    return False, "integers differ"


def run_test(name, args):
    """Returns (name, op, ok, reason)."""
    d = os.path.join(args.data, name)
    ok_scope, model = in_scope(os.path.join(d, "model.onnx"))
    op = model.graph.node[0].op_type if len(model.graph.node) == 1 else "+".join(
        sorted(ops_of(model.graph)))
    inits = {i.name for i in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in inits]
    outputs = [o.name for o in model.graph.output]
    binds = shape_inputs(model)
    sets = sorted(s for s in os.listdir(d) if s.startswith("test_data_set_"))
    with tempfile.TemporaryDirectory() as tmp:
        for s in sets:
            data = os.path.join(d, s)
            feeds = [(n, os.path.join(data, f"input_{k}.pb")) for k, n in enumerate(inputs)]
            compile_cmd = [os.path.join(args.bin, "wsc-compile"), os.path.join(d, "model.onnx"),
                           f"--arch={args.arch}", "-o", os.path.join(tmp, "m.wafer")]
            compile_cmd += [f"--bind={n}={f}" for n, f in feeds if n in binds]
            r = subprocess.run(compile_cmd, capture_output=True, text=True, timeout=120)
            if r.returncode:
                return name, op, False, "compile: " + first_error(r.stderr)
            run_cmd = [os.path.join(args.bin, "wsc-run"), os.path.join(tmp, "m.wafer"),
                       "--threads", "1", "--max-cycles", "100000000"]
            run_cmd += [f"--input={n}={f}" for n, f in feeds if n not in binds]
            run_cmd += [f"--output={n}={os.path.join(tmp, f'out{k}.npy')}"
                        for k, n in enumerate(outputs)]
            r = subprocess.run(run_cmd, capture_output=True, text=True, timeout=300)
            if r.returncode:
                return name, op, False, "run: " + first_error(r.stderr)
            for k, n in enumerate(outputs):
                want = numpy_helper.to_array(onnx.load_tensor(os.path.join(data, f"output_{k}.pb")))
                got = np.load(os.path.join(tmp, f"out{k}.npy"))
                ok, why = close(got, want)
                if not ok:
                    return name, op, False, f"output '{n}': {why}"
    return name, op, True, ""


def first_error(stderr):
    for line in stderr.splitlines():
        if "error:" in line:
            return line.split("error:", 1)[1].strip()[:200]
    return (stderr.strip().splitlines() or ["no message"])[-1][:200]


def read_excluded(path):
    excluded = {}
    if path and os.path.exists(path):
        for line in open(path):
            line = line.strip()
            if line and not line.startswith("#"):
                name, _, reason = line.partition(" ")
                excluded[name] = reason.strip()
    return excluded


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default="/usr/share/libonnx-testdata/data/node")
    p.add_argument("--bin", default="build/bin")
    p.add_argument("--arch", default="mesh:16x16")
    p.add_argument("--excluded", help="file: one test per line, then its reason")
    p.add_argument("--shard", default="0/1", help="i/n: run every n-th test from the i-th")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--min-pass", type=float, default=0.94)
    p.add_argument("--report", help="write per-op counts as JSON")
    p.add_argument("tests", nargs="*", help="test names (default: all in scope)")
    args = p.parse_args()

    names = args.tests or sorted(t for t in os.listdir(args.data)
                                 if in_scope(os.path.join(args.data, t, "model.onnx"))[0])
    i, n = (int(x) for x in args.shard.split("/"))
    names = names[i::n]
    excluded = read_excluded(args.excluded)
    results = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for res in pool.map(lambda t: run_test(t, args), names):
            results.append(res)

    per_op = collections.defaultdict(lambda: [0, 0])
    unexpected = []
    for name, op, ok, reason in results:
        per_op[op][0 if ok else 1] += 1
        if ok and name in excluded:
            unexpected.append(f"XPASS {name}: passes but is listed as excluded ({excluded[name]})")
        elif not ok and name not in excluded:
            unexpected.append(f"FAIL {name}: {reason}")
    for line in unexpected:
        print(line)
    passed = sum(1 for r in results if r[2])
    print("per op (passed/total):")
    for op in sorted(per_op):
        ok, bad = per_op[op]
        print(f"  {op}: {ok}/{ok + bad}")
    if args.report:
        json.dump({op: {"passed": v[0], "failed": v[1]} for op, v in per_op.items()},
                  open(args.report, "w"), indent=1, sort_keys=True)
    share = passed / max(1, len(results))
    print(f"conformance: {passed} of {len(results)} node tests pass ({100 * share:.1f}%)")
    print(f"{passed} passed, {len(results) - passed} failed")
    return 1 if unexpected or share < args.min_pass else 0


if __name__ == "__main__":
    sys.exit(main())
