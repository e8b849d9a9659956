"""Writes, into argv[1], a graph of generic ops too large for one PE (an add
with a broadcast bias, a softmax, a tanh, a batched matmul and a transpose,
whose chunks read strided windows, on [2, 48, 256]),
its input a.npy and numpy's result y.npy."""
import numpy as np, onnx, sys
from onnx import helper, TensorProto, numpy_helper
out = sys.argv[1]
rng = np.random.default_rng(0)
a = rng.standard_normal((2, 48, 256)).astype(np.float32)
b = rng.standard_normal((256,)).astype(np.float32)
w = rng.standard_normal((2, 256, 24)).astype(np.float32)
nodes = [helper.make_node("Add", ["a", "b"], ["s"]), helper.make_node("Softmax", ["s"], ["p"], axis=-1),
         helper.make_node("Tanh", ["p"], ["t"]), helper.make_node("MatMul", ["t", "w"], ["y"]),
         helper.make_node("Transpose", ["s"], ["st"], perm=[0, 2, 1])]
g = helper.make_graph(nodes, "chunks", [helper.make_tensor_value_info("a", TensorProto.FLOAT, a.shape)],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, (2, 48, 24)),
                       helper.make_tensor_value_info("st", TensorProto.FLOAT, (2, 256, 48))],
                      [numpy_helper.from_array(b, "b"), numpy_helper.from_array(w, "w")])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), f"{out}/m.onnx")
np.save(f"{out}/a.npy", a)
s = a + b
p = np.exp(s - s.max(-1, keepdims=True)); p /= p.sum(-1, keepdims=True)
np.save(f"{out}/y.npy", np.tanh(p) @ w)
np.save(f"{out}/st.npy", s.transpose(0, 2, 1))
