"""Models that call local functions (ModelProto.functions), as torch's dynamo
exporter writes them, and models of opsets 19 to 22.

usage: make_function_models.py TINY_GPT.onnx OUT_DIR

- gpt-functions.onnx: the tiny GPT at opset 20 with each LayerNormalization a
  call of pkg.test.LayerNorm (epsilon from the call's attribute `eps`) and
  each Erf a call of pkg.test.Erf, which calls pkg.test.ScaledErf without
  its attribute `scale`: the function's default (1.0) applies.
- eps.onnx: one LayerNorm call with eps = 0.25.
- recursive.onnx, opset-mismatch.onnx, too-many-inputs.onnx, doubling.onnx
  (40 functions each calling the one before twice): calls that cannot be
  inlined.
- gelu.onnx: Gelu (opset 20), exact and tanh, and Mish (opset 18); x and the
  expected outputs as gelu_x.npy, gelu_none.npy, gelu_tanh.npy, mish.npy.
- rms.onnx: RMSNormalization (opset 23) of r [2, 3, 8] over its last axis
  (scale [8]) and over its last two (a scale [1] broadcast); r.npy and the
  expected rms_last.npy, rms_two.npy; rms-stash.onnx computes in double
  (stash_type 0), which is refused.
"""
import math
import os
import sys

import numpy as np
import onnx
from onnx import helper, TensorProto

src, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
DOMAIN = "pkg.test"


def ref(name, ref_name, kind):
    a = onnx.AttributeProto()
    a.name, a.ref_attr_name, a.type = name, ref_name, kind
    return a


def function(name, inputs, outputs, nodes, attributes=(), opset=20, defaults=()):
    f = helper.make_function(DOMAIN, name, inputs, outputs, nodes,
                             [helper.make_opsetid("", opset), helper.make_opsetid(DOMAIN, 1)],
                             list(attributes))
    # FunctionProto.attribute_proto (field 11) is newer than this onnx
    # package: its bytes are appended, as a newer exporter writes them.
    extra = b""
    for a in defaults:
        body = a.SerializeToString()
        extra += bytes([(11 << 3) | 2]) + encode_varint(len(body)) + body
    g = onnx.FunctionProto()
    g.ParseFromString(f.SerializeToString() + extra)
    return g


def encode_varint(n):
    b = b""
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            b += bytes([byte | 0x80])
        else:
            return b + bytes([byte])


def layer_norm():
    n = helper.make_node("LayerNormalization", ["X", "W", "B"], ["Y"], axis=-1)
    n.attribute.append(ref("epsilon", "eps", onnx.AttributeProto.FLOAT))
    return function("LayerNorm", ["X", "W", "B"], ["Y"], [n], ["eps"])


def erf_functions():
    const = helper.make_node("Constant", [], ["s"])
    const.attribute.append(ref("value_float", "scale", onnx.AttributeProto.FLOAT))
    scaled = function("ScaledErf", ["x"], ["y"], [
        const, helper.make_node("Erf", ["x"], ["e"]), helper.make_node("Mul", ["e", "s"], ["y"])],
        ["scale"], defaults=[helper.make_attribute("scale", 1.0)])
    outer = function("Erf", ["x"], ["y"], [
        helper.make_node("ScaledErf", ["x"], ["y"], domain=DOMAIN)])
    return [scaled, outer]


def set_opset(model, version):
    del model.opset_import[:]
    model.opset_import.extend([helper.make_opsetid("", version), helper.make_opsetid(DOMAIN, 1)])


# The tiny GPT with its layer norms and erfs as calls.
gpt = onnx.load(src)
for node in gpt.graph.node:
    if node.op_type == "LayerNormalization":
        eps = next((a.f for a in node.attribute if a.name == "epsilon"), 1e-5)
        del node.attribute[:]
        node.op_type, node.domain = "LayerNorm", DOMAIN
        node.attribute.append(helper.make_attribute("eps", eps))
    elif node.op_type == "Erf":
        node.op_type, node.domain = "Erf", DOMAIN
set_opset(gpt, 20)
gpt.functions.extend([layer_norm()] + erf_functions())
onnx.save(gpt, os.path.join(out, "gpt-functions.onnx"))


def small(name, nodes, functions, opset=20, inputs=None):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])
    w = helper.make_tensor("w", TensorProto.FLOAT, [4], [1.0] * 4)
    b = helper.make_tensor("b", TensorProto.FLOAT, [4], [0.0] * 4)
    graph = helper.make_graph(nodes, name, inputs or [x], [y], [w, b])
    model = helper.make_model(graph)
    set_opset(model, opset)
    model.functions.extend(functions)
    onnx.save(model, os.path.join(out, name + ".onnx"))


call = helper.make_node("LayerNorm", ["x", "w", "b"], ["y"], name="ln", domain=DOMAIN, eps=0.25)
small("eps", [call], [layer_norm()])
loop = function("Loop", ["x"], ["y"], [helper.make_node("Loop", ["x"], ["y"], domain=DOMAIN)])
small("recursive", [helper.make_node("Loop", ["x"], ["y"], name="again", domain=DOMAIN)], [loop])
old = function("Old", ["x"], ["y"], [helper.make_node("Relu", ["x"], ["y"])], opset=13)
small("opset-mismatch", [helper.make_node("Old", ["x"], ["y"], name="old", domain=DOMAIN)], [old])
doubling = [function("F0", ["x"], ["y"], [helper.make_node("Relu", ["x"], ["y"])])]
for i in range(1, 41):
    doubling.append(function("F%d" % i, ["x"], ["y"], [
        helper.make_node("F%d" % (i - 1), ["x"], ["h"], domain=DOMAIN),
        helper.make_node("F%d" % (i - 1), ["h"], ["y"], domain=DOMAIN)]))
small("doubling", [helper.make_node("F40", ["x"], ["y"], name="big", domain=DOMAIN)], doubling)
small("too-many-inputs", [helper.make_node("LayerNorm", ["x", "w", "b", "x"], ["y"], name="many",
                                           domain=DOMAIN)], [layer_norm()])

# Gelu, opset 20.
nodes = [helper.make_node("Gelu", ["x"], ["y"], name="exact"),
         helper.make_node("Gelu", ["x"], ["t"], name="tanh", approximate="tanh"),
         helper.make_node("Mish", ["x"], ["m"], name="mish")]
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 5])
outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [3, 5]) for n in ("y", "t", "m")]
model = helper.make_model(helper.make_graph(nodes, "gelu", [x], outs))
set_opset(model, 20)
onnx.save(model, os.path.join(out, "gelu.onnx"))
bad = helper.make_model(helper.make_graph(
    [helper.make_node("Gelu", ["x"], ["y"], name="bad", approximate="fast")], "bad", [x], outs[:1]))
set_opset(bad, 20)
onnx.save(bad, os.path.join(out, "gelu-bad.onnx"))
xs = np.linspace(-4, 4, 15, dtype=np.float64).reshape(3, 5)
erf = np.vectorize(math.erf)
np.save(os.path.join(out, "gelu_x.npy"), xs.astype(np.float32))
np.save(os.path.join(out, "gelu_none.npy"), (0.5 * xs * (1 + erf(xs / math.sqrt(2)))).astype(np.float32))
tanh = 0.5 * xs * (1 + np.tanh(math.sqrt(2 / math.pi) * (xs + 0.044715 * xs ** 3)))
np.save(os.path.join(out, "gelu_tanh.npy"), tanh.astype(np.float32))
np.save(os.path.join(out, "mish.npy"), (xs * np.tanh(np.log1p(np.exp(xs)))).astype(np.float32))

# RMSNormalization, opset 23.
r = np.random.RandomState(0).randn(2, 3, 8).astype(np.float32)
g = np.linspace(0.5, 2.0, 8).astype(np.float32)
inits = [helper.make_tensor("g", TensorProto.FLOAT, [8], g.tolist()),
         helper.make_tensor("h", TensorProto.FLOAT, [1], [1.5])]
nodes = [helper.make_node("RMSNormalization", ["r", "g"], ["last"], epsilon=1e-6),
         helper.make_node("RMSNormalization", ["r", "h"], ["two"], axis=1)]
value = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3, 8])
model = helper.make_model(helper.make_graph(nodes, "rms", [value("r")], [value("last"), value("two")],
                                            inits))
set_opset(model, 23)
onnx.save(model, os.path.join(out, "rms.onnx"))
r64 = r.astype(np.float64)
np.save(os.path.join(out, "r.npy"), r)
last = r64 / np.sqrt((r64 ** 2).mean(-1, keepdims=True) + 1e-6) * g
two = r64 / np.sqrt((r64 ** 2).mean((1, 2), keepdims=True) + 1e-5) * 1.5
np.save(os.path.join(out, "rms_last.npy"), last.astype(np.float32))
np.save(os.path.join(out, "rms_two.npy"), two.astype(np.float32))
stash = helper.make_model(helper.make_graph(
    [helper.make_node("RMSNormalization", ["r", "g"], ["last"], name="double", stash_type=0)],
    "stash", [value("r")], [value("last")], inits[:1]))
set_opset(stash, 23)
onnx.save(stash, os.path.join(out, "rms-stash.onnx"))
