"""Imports ONNX's node tests (Debian's libonnx-testdata) whose ops wsc imports.

usage: node_tests.py TESTDATA_NODE_DIR WORK_DIR

A node test passes shape parameters (Slice's starts, Tile's repeats, an If's
condition, ...) as graph inputs; wsc needs them at compile time, so they are
bound to the test's input values first, as initializers. Each test is
imported twice: so bound, and with every input bound, when the whole graph
often folds to constants, which must then equal the test's expected outputs.

A test in REFUSED must fail with an error naming its reason; any other test
must import. Prints one line per unexpected result and a closing line.
"""
import glob
import os
import re
import struct
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

root, work = sys.argv[1], sys.argv[2]

# The operators wsc imports (OnnxImport.cpp's supportedOps).
SUPPORTED = set("""Add Sub Mul Div Pow Mod Max Min Sum Mean Clip Sqrt Erf Tanh Exp Log Neg Abs
Relu Sigmoid Reciprocal Floor Ceil Sin Cos Equal Less Greater LessOrEqual GreaterOrEqual Not And Or
Xor Where MatMul Gemm Einsum Softmax LogSoftmax LayerNormalization ReduceMean ReduceSum ReduceMax ReduceMin
Transpose Reshape Flatten Gather GatherElements Concat Slice Split Tile Cast Unsqueeze Squeeze Expand
Trilu Range Constant ConstantOfShape Shape Size Identity If""".split())
# Inputs that are shape parameters, by op: bound as constants.
SHAPE_INPUTS = {"Slice": [1, 2, 3, 4], "Split": [1], "Squeeze": [1], "Unsqueeze": [1],
                "Tile": [1], "ReduceSum": [1], "ReduceMean": [1], "ReduceMax": [1],
                "ReduceMin": [1], "If": [0], "Reshape": [1], "Expand": [1], "Trilu": [1],
                "ConstantOfShape": [0], "Range": [0, 1, 2]}
# Tests that must be refused, and the error that says why.
REFUSED = {
    "test_identity_opt": "only tensor inputs are supported",
    "test_identity_sequence": "only tensor inputs are supported",
    "test_if_opt": "(SequenceConstruct)",
    "test_if_seq": "(SequenceConstruct)",
}
for t in ("test_cast_FLOAT_to_STRING", "test_cast_STRING_to_FLOAT",
          "test_castlike_FLOAT_to_STRING_expanded", "test_castlike_STRING_to_FLOAT_expanded"):
    REFUSED[t] = "unsupported element type STRING"

# Tests that import but whose folded values are not compared, and why.
NOT_COMPARED = {
    # ONNX 1.12's reference truncates float to bfloat16; wsc rounds to nearest even.
    "test_cast_FLOAT_to_BFLOAT16": "rounding",
    "test_castlike_FLOAT_to_BFLOAT16_expanded": "rounding",
    # ONNX 1.12's test data holds these bfloat16 inputs as UINT16 tensors of the bits.
    "test_cast_BFLOAT16_to_FLOAT": "input data typed UINT16",
    "test_castlike_BFLOAT16_to_FLOAT_expanded": "input data typed UINT16",
}


def ops_of(graph):
    ops = set()
    for n in graph.node:
        ops.add(n.op_type)
        for a in n.attribute:
            if a.HasField("g"):
                ops |= ops_of(a.g)
    return ops


def bind(name, model, inputs, every):
    """Saves a copy of the model whose chosen inputs are initializers."""
    names = set()
    for n in model.graph.node:
        for k in SHAPE_INPUTS.get(n.op_type, []):
            if k < len(n.input) and n.input[k]:
                names.add(n.input[k])
    keep = []
    for k, v in enumerate(list(model.graph.input)):
        if (every or v.name in names) and k < len(inputs):
            tensor = onnx.TensorProto()
            tensor.CopyFrom(inputs[k])
            tensor.name = v.name
            model.graph.initializer.append(tensor)
        else:
            keep.append(v)
    del model.graph.input[:]
    model.graph.input.extend(keep)
    path = os.path.join(work, name + (".all" if every else "") + ".onnx")
    onnx.save(model, path)
    return path


def dense(body, type_):
    """The value of an MLIR dense literal of a static tensor type, as float64."""
    dims = type_.split("x")
    elem, shape = dims[-1], [int(d) for d in dims[:-1]]
    if body == "":
        return np.zeros(shape)
    if body.startswith('"0x'):
        raw = bytes.fromhex(body[3:-1])
        kind = {"f32": "<f4", "f64": "<f8", "f16": "<f2", "i64": "<i8", "i32": "<i4",
                "i16": "<i2", "i8": "i1", "ui8": "u1", "i1": "u1"}[elem]
        a = np.frombuffer(raw, kind).astype(np.float64)
        count = int(np.prod(shape))
        if elem == "i1" and a.size != count and a.size > 1:  # packed bits
            a = np.unpackbits(np.frombuffer(raw, np.uint8), bitorder="little")[:count]
            a = a.astype(np.float64)
    else:
        def hexfloat(m):
            v = int(m.group(0), 16)
            if elem == "f32":
                return repr(struct.unpack("<f", struct.pack("<I", v))[0])
            if elem == "f64":
                return repr(struct.unpack("<d", struct.pack("<Q", v))[0])
            if elem == "f16":
                return repr(float(np.frombuffer(struct.pack("<H", v), np.float16)[0]))
            return str(v)
        text = re.sub(r"0x[0-9A-Fa-f]+", hexfloat, body)
        text = text.replace("true", "1").replace("false", "0")
        a = np.array(eval(text, {"inf": float("inf"), "nan": float("nan")}), np.float64)
    return np.broadcast_to(a, shape) if a.size == 1 else a.reshape(shape)


def folded_outputs(mlir):
    """The returned values when all are constants, else None."""
    consts, returned = {}, None
    for line in mlir.splitlines():
        m = re.match(r"\s*(%\S+) = wsgraph.constant dense<(.*)> : tensor<([^>]*)>\s*$", line)
        if m:
            consts[m.group(1)] = dense(m.group(2), m.group(3))
        m = re.match(r"\s*return (.*) : ", line)
        if m:
            returned = [v.strip() for v in m.group(1).split(",")]
    if returned is None or any(v not in consts for v in returned):
        return None
    return [consts[v] for v in returned]


def pbs(test, kind):
    files = glob.glob(os.path.join(root, test, "test_data_set_0", kind + "_*.pb"))
    files.sort(key=lambda p: int(re.search(r"_(\d+)\.pb$", p).group(1)))
    out = []
    for f in files:
        tensor = onnx.TensorProto()
        with open(f, "rb") as fh:
            tensor.ParseFromString(fh.read())
        out.append(tensor)
    return out


os.makedirs(work, exist_ok=True)
imported = refused = folded = unexpected = 0
for test in sorted(os.listdir(root)):
    path = os.path.join(root, test, "model.onnx")
    if not os.path.exists(path):
        continue
    model = onnx.load(path)
    if not ops_of(model.graph) <= SUPPORTED:
        continue
    inputs = pbs(test, "input")
    run = subprocess.run(["wsc-translate", "--import-onnx", bind(test, model, inputs, False),
                          "-o", os.devnull], capture_output=True, text=True)
    if test in REFUSED:
        if run.returncode == 1 and REFUSED[test] in run.stderr and "error: " in run.stderr:
            refused += 1
        else:
            unexpected += 1
            print("%s: expected an error saying '%s', got exit %d: %s"
                  % (test, REFUSED[test], run.returncode, run.stderr.strip()))
        continue
    if run.returncode != 0:
        unexpected += 1
        print("%s: %s" % (test, run.stderr.strip()))
        continue
    imported += 1
    if test in NOT_COMPARED:
        continue
    run = subprocess.run(["wsc-translate", "--import-onnx",
                          bind(test, onnx.load(path), inputs, True)],
                         capture_output=True, text=True)
    values = folded_outputs(run.stdout) if run.returncode == 0 else None
    if values is None:
        continue
    expected = []
    for t, v in zip(pbs(test, "output"), model.graph.output):
        a = numpy_helper.to_array(t)
        if v.type.tensor_type.elem_type == onnx.TensorProto.BFLOAT16:  # held as uint16 bits
            a = (a.astype(np.uint32) << 16).view(np.float32)
        expected.append(a.astype(np.float64))
    for got, want in zip(values, expected):
        # ONNX's own backend tests compare with these tolerances.
        if got.shape != want.shape or not np.allclose(got, want, rtol=1e-3, atol=1e-7,
                                                      equal_nan=True):
            unexpected += 1
            print("%s: folds to %s %s, expected %s %s" % (test, got.shape, got.ravel()[:8],
                                                        want.shape, want.ravel()[:8]))
            break
    else:
        folded += 1
print("%d imported (%d fold to the expected values), %d refused as expected, %d unexpected"
      % (imported, folded, refused, unexpected))
sys.exit(1 if unexpected else 0)
