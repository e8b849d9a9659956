"""Writes small RNN, GRU and LSTM models into the folder given as argv[1].

import-recurrent.test checks the wsgraph ops they unroll into: a forward RNN,
a reverse GRU whose batch entries have different lengths, a bidirectional
batch-first LSTM with peepholes, and the forms that are refused.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
F, I32 = TensorProto.FLOAT, TensorProto.INT32


def val(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def save(name, node, inputs, outputs, inits=(), opset=14):
    graph = helper.make_graph([node], name, inputs, outputs, list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.save(model, os.path.join(out, name + ".onnx"))


# RNN, 2 steps of batch 1, input 2, hidden 3; W and R graph inputs.
save("rnn", helper.make_node("RNN", ["x", "w", "r"], ["y", "y_h"], name="rnn", hidden_size=3),
     [val("x", F, [2, 1, 2]), val("w", F, [1, 3, 2]), val("r", F, [1, 3, 3])],
     [val("y", F, [2, 1, 1, 3]), val("y_h", F, [1, 1, 3])])

# GRU in reverse over 3 steps, batch entries of lengths 3 and 1.
gru_inputs = [val("x", F, [3, 2, 2]), val("w", F, [1, 6, 2]), val("r", F, [1, 6, 2]),
              val("b", F, [1, 12])]
save("gru_reverse",
     helper.make_node("GRU", ["x", "w", "r", "b", "lens"], ["y", ""], name="gru", hidden_size=2,
                      direction="reverse", linear_before_reset=1),
     gru_inputs, [val("y", F, [3, 1, 2, 2])], [const("lens", np.array([3, 1], np.int32))])

# A bidirectional batch-first LSTM with peepholes; only Y_c is asked for.
save("lstm_bidi",
     helper.make_node("LSTM", ["x", "w", "r", "", "", "", "", "p"], ["", "", "y_c"], name="lstm",
                      hidden_size=2, direction="bidirectional", layout=1, clip=3.0,
                      activations=["Sigmoid", "Tanh", "Tanh", "HardSigmoid", "Softsign", "Relu"],
                      activation_alpha=[0.25], activation_beta=[0.4]),
     [val("x", F, [1, 2, 2]), val("w", F, [2, 8, 2]), val("r", F, [2, 8, 2]),
      val("p", F, [2, 6])],
     [val("y_c", F, [1, 2, 2])])

# Refused: sequence_lens a graph input left unbound; an activation the spec
# does not list; W of the wrong shape.
save("unbound_lens",
     helper.make_node("GRU", ["x", "w", "r", "b", "lens"], ["y"], name="gru", hidden_size=2),
     gru_inputs + [val("lens", I32, [2])], [val("y", F, [3, 1, 2, 2])])
save("bad_activation",
     helper.make_node("RNN", ["x", "w", "r"], ["y"], name="rnn", hidden_size=3,
                      activations=["Gelu"]),
     [val("x", F, [2, 1, 2]), val("w", F, [1, 3, 2]), val("r", F, [1, 3, 3])],
     [val("y", F, [2, 1, 1, 3])])
save("bad_weights",
     helper.make_node("LSTM", ["x", "w", "r"], ["y"], name="lstm", hidden_size=3),
     [val("x", F, [2, 1, 2]), val("w", F, [1, 9, 2]), val("r", F, [1, 12, 3])],
     [val("y", F, [2, 1, 1, 3])])
