"""Writes the fuzzers' seed corpora into fuzz/corpus/<fuzzer>/ (committed).

usage: make_corpus.py WSC_COMPILE

Small, valid inputs of each reader, so that fuzzing starts from the formats'
real structure: ONNX models of a few ops, .npy and ONNX .pb tensors of every
dtype the readers take, and .wafer programs (hand-written ones and two that
wsc-compile makes, with section digests).
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

wsc_compile = sys.argv[1]
here = os.path.dirname(os.path.abspath(__file__))
corpus = os.path.join(here, "corpus")


def path(fuzzer, name):
    os.makedirs(os.path.join(corpus, fuzzer), exist_ok=True)
    return os.path.join(corpus, fuzzer, name)


# --- ONNX models -----------------------------------------------------------
F, I64 = TensorProto.FLOAT, TensorProto.INT64


def model(name, nodes, inputs, outputs, inits=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.save(m, path("onnx-import", name + ".onnx"))


vi = helper.make_tensor_value_info
rng = np.random.default_rng(1)
w = numpy_helper.from_array(rng.standard_normal((4, 4)).astype(np.float32), "w")
b = numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "b")
table = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(3, 4), "table")
model("gather", [helper.make_node("Gather", ["table", "idx"], ["y"], axis=0)],
      [vi("idx", I64, [2])], [vi("y", F, [2, 4])], [table])
model("linear", [helper.make_node("MatMul", ["x", "w"], ["t"]), helper.make_node("Add", ["t", "b"], ["y"])],
      [vi("x", F, [2, 4])], [vi("y", F, [2, 4])], [w, b])
model("softmax", [helper.make_node("Softmax", ["x"], ["y"], axis=-1)], [vi("x", F, [2, 4])], [vi("y", F, [2, 4])])
model("layernorm", [helper.make_node("LayerNormalization", ["x", "w1", "b"], ["y"], axis=-1, epsilon=1e-5)],
      [vi("x", F, [2, 4])], [vi("y", F, [2, 4])],
      [numpy_helper.from_array(np.ones(4, np.float32), "w1"), b])
model("reshape-transpose",
      [helper.make_node("Reshape", ["x", "shape"], ["r"]), helper.make_node("Transpose", ["r"], ["y"], perm=[1, 0])],
      [vi("x", F, [2, 4])], [vi("y", F, [4, 2])],
      [numpy_helper.from_array(np.array([2, 4], np.int64), "shape")])
model("gelu-tanh",
      [helper.make_node("Mul", ["x", "x"], ["x2"]), helper.make_node("Tanh", ["x2"], ["t"]),
       helper.make_node("Mul", ["x", "t"], ["y"])],
      [vi("x", F, ["batch", 4])], [vi("y", F, ["batch", 4])])
model("reduce-where",
      [helper.make_node("ReduceMean", ["x"], ["m"], axes=[1], keepdims=1),
       helper.make_node("Greater", ["x", "m"], ["c"]), helper.make_node("Where", ["c", "x", "m"], ["y"])],
      [vi("x", F, [2, 4])], [vi("y", F, [2, 4])], opset=13)

# --- tensors ------------------------------------------------------------------
arrays = {
    "f32": np.arange(6, dtype=np.float32).reshape(2, 3),
    "f64": np.array([1.5, -2.25], np.float64),
    "f16": np.array([0.5, 65504.0], np.float16),
    "i64": np.array([[4, 1]], np.int64),
    "i32": np.array([-7], np.int32),
    "i8": np.array([-128, 127], np.int8),
    "u8": np.array([0, 255], np.uint8),
    "u16": np.array([65535], np.uint16),
    "bool": np.array([True, False]),
    "scalar": np.array(3.0, np.float32),
    "empty": np.zeros((0, 3), np.float32),
}
for fuzzer in ("host-tensor", "bind-tensor"):
    for name, a in arrays.items():
        np.save(path(fuzzer, name + ".npy"), a)
        open(path(fuzzer, name + ".pb"), "wb").write(numpy_helper.from_array(a, name).SerializeToString())
    # Typed fields instead of raw_data.
    t = helper.make_tensor("typed", TensorProto.INT64, [2], [5, -1])
    open(path(fuzzer, "typed-i64.pb"), "wb").write(t.SerializeToString())
    t = helper.make_tensor("typed", TensorProto.FLOAT, [3], [1.0, 2.0, 3.0])
    open(path(fuzzer, "typed-f32.pb"), "wb").write(t.SerializeToString())

# --- .wafer programs -------------------------------------------------------
arch = """arch {
  width: 2 height: 1 sram_bytes_per_pe: 1024 colors: 4 clock_hz: 1e9
  hop_cycles: 1 simd_fp32: 4 fmac_per_cycle_fp32: 4 transcendental_cycles: 8
  ext_mem_bytes_per_cycle: 16
}"""
programs = {
    "neg": """wafers { regions { name: "k" w: 1 h: 1 code { op: NEG addr { base: 0 } addr { base: 0 } n { base: 4 } } } }
inputs { name: "x" dtype: F32 shape: 4 pieces { count: 4 } }
outputs { name: "y" dtype: F32 shape: 4 pieces { count: 4 } }""",
    "loop": """wafers { regions { name: "spin" w: 1 h: 1
  code { op: LOOP count: 30 }
  code { op: FILL addr { base: 0 } n { base: 1 } }
  code { op: END } } }""",
    "ext-load": """wafers { regions { name: "k" w: 1 h: 1
  code { op: EXT_LOAD blob: 1 addr { base: 0 } addr { base: 0 } n { base: 2 } } } }
external { id: 1 data: "\\001\\000\\000\\000\\002\\000\\000\\000" }""",
    "sparse": """wafers { regions { name: "k" w: 1 h: 1
  init { offset: 64 data: "\\002\\000\\000\\000\\002\\000\\000\\000\\000\\003\\000\\000\\000\\000\\200?\\000\\000\\000@" }
  code { op: MATVEC storage: STORE_SPARSE addr { base: 0 } addr { base: 64 } addr { base: 32 }
         n { base: 2 } m { base: 4 } } } }""",
    "range": """wafers { regions { name: "k" w: 1 h: 1 code { op: NOP } } }
inputs { name: "ids" dtype: I64 shape: 2 pieces { count: 2 } valid { lo: 0 hi: 64 } }
outputs { name: "out" dtype: I64 shape: 2 pieces { count: 2 } }""",
}
proto_dir = os.path.join(here, "..", "runtime")
for name, text in programs.items():
    encoded = subprocess.run(["protoc", "--encode=wsc.format.Program", f"--proto_path={proto_dir}",
                              os.path.join(proto_dir, "wafer.proto")],
                             input=("format_version: 2\n" + arch + "\n" + text).encode(),
                             capture_output=True, check=True).stdout
    open(path("wafer-load", name + ".wafer"), "wb").write(encoded)
with tempfile.TemporaryDirectory() as tmp:
    for name in ("gather", "linear"):
        subprocess.run([wsc_compile, path("onnx-import", name + ".onnx"), "-o",
                        path("wafer-load", "compiled-" + name + ".wafer"), "--arch=mesh:8x8"], check=True)
