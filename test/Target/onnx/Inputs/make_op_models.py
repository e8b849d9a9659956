"""Writes small ONNX models, one per group of operators, into the folder given as argv[1].

Each model isolates the operators (and the opset forms of them) that
import-ops.test checks: the elementwise ops, the n-ary ops, Clip in its two
forms, the reductions in their attribute and input forms, softmax before and
after opset 13, the opset-11 forms of Squeeze, Unsqueeze and Split, If, and
LayerNormalization's extra outputs.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def val(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def save(name, nodes, inputs, outputs, inits=(), opset=17):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.save(model, os.path.join(out, name + ".onnx"))


x = val("x", F, [2, 3])

# Unary float ops, one output each.
unary = ["Sigmoid", "Relu", "Abs", "Log", "Sin", "Cos", "Reciprocal", "Floor", "Ceil"]
save("unary", [helper.make_node(op, ["x"], [op.lower()], name=op.lower()) for op in unary],
     [x], [val(op.lower(), F, [2, 3]) for op in unary])

# Integer unary ops, and Mod in both forms.
i = val("i", I64, [4])
save("integer", [helper.make_node("Abs", ["i"], ["abs"], name="abs"),
                 helper.make_node("Neg", ["i"], ["neg"], name="neg"),
                 helper.make_node("Relu", ["i"], ["relu"], name="relu"),
                 helper.make_node("Mod", ["i", "three"], ["mod"], name="mod"),
                 helper.make_node("Mod", ["i", "three"], ["fmod"], name="fmod", fmod=1)],
     [i], [val(n, I64, [4]) for n in ("abs", "neg", "relu", "mod", "fmod")],
     [const("three", np.array(3, np.int64))])

# Comparisons and logic (opset 7's And, Or, Xor, opset 1's Not).
a, b = val("a", F, [2, 3]), val("b", F, [3])
p, q = val("p", B, [2, 3]), val("q", B, [3])
save("logic", [helper.make_node("Less", ["a", "b"], ["lt"], name="lt"),
               helper.make_node("Greater", ["a", "b"], ["gt"], name="gt"),
               helper.make_node("LessOrEqual", ["a", "b"], ["le"], name="le"),
               helper.make_node("GreaterOrEqual", ["a", "b"], ["ge"], name="ge"),
               helper.make_node("Not", ["p"], ["not"], name="not"),
               helper.make_node("And", ["p", "q"], ["and"], name="and"),
               helper.make_node("Or", ["p", "q"], ["or"], name="or"),
               helper.make_node("Xor", ["p", "q"], ["xor"], name="xor")],
     [a, b, p, q], [val(n, B, [2, 3]) for n in ("lt", "gt", "le", "ge", "not", "and", "or", "xor")],
     opset=12)

# n-ary ops with broadcasting: chains of binary ops; Mean divides by n.
c = val("c", F, [1, 3])
save("nary", [helper.make_node("Max", ["a", "b", "c"], ["max"], name="max"),
              helper.make_node("Min", ["a"], ["min"], name="min"),
              helper.make_node("Sum", ["a", "b", "c"], ["sum"], name="sum"),
              helper.make_node("Mean", ["a", "b"], ["mean"], name="mean")],
     [a, b, c], [val(n, F, [2, 3]) for n in ("max", "min", "sum", "mean")])

# Clip: min and max as optional inputs (opset 11 on) and as attributes (opset 6).
save("clip13", [helper.make_node("Clip", ["x", "lo", "hi"], ["both"], name="both"),
                helper.make_node("Clip", ["x", "", "hi1"], ["upper"], name="upper"),
                helper.make_node("Clip", ["x"], ["none"], name="none")],
     [x], [val(n, F, [2, 3]) for n in ("both", "upper", "none")],
     [const("lo", np.array(-1.0, np.float32)), const("hi", np.array(1.0, np.float32)),
      const("hi1", np.array([0.5], np.float32))], opset=13)
save("clip6", [helper.make_node("Clip", ["x"], ["y"], name="clip", min=-0.5, max=2.0)],
     [x], [val("y", F, [2, 3])], opset=6)

# Shapes: Flatten, Size, Tile, GatherElements, Range with constant bounds.
x4 = val("x4", F, [2, 3, 4, 5])
idx = val("idx", I64, [2, 2])
save("shapes", [helper.make_node("Flatten", ["x4"], ["flat"], name="flat", axis=2),
                helper.make_node("Flatten", ["x4"], ["flat0"], name="flat0", axis=0),
                helper.make_node("Flatten", ["x4"], ["flatneg"], name="flatneg", axis=-1),
                helper.make_node("Size", ["x4"], ["size"], name="size"),
                helper.make_node("Tile", ["x", "reps"], ["tile"], name="tile"),
                helper.make_node("GatherElements", ["x", "idx"], ["ge"], name="ge", axis=1),
                helper.make_node("Range", ["start", "limit", "delta"], ["range"], name="range")],
     [x4, x, idx],
     [val("flat", F, [6, 20]), val("flat0", F, [1, 120]), val("flatneg", F, [24, 5]),
      val("size", I64, []), val("tile", F, [4, 9]), val("ge", F, [2, 2]), val("range", I64, [4])],
     [const("reps", np.array([2, 3], np.int64)), const("start", np.array(10, np.int64)),
      const("limit", np.array(2, np.int64)), const("delta", np.array(-2, np.int64))])

# Reductions: axes as an attribute (opset 11; ReduceMax and ReduceMin up to 17),
# as an input (ReduceSum from 13, all from 18), and noop_with_empty_axes.
x3 = val("x3", F, [2, 3, 4])
save("reduce11", [helper.make_node("ReduceSum", ["x3"], ["sum"], name="sum", axes=[1]),
                  helper.make_node("ReduceMean", ["x3"], ["mean"], name="mean", axes=[-1],
                                   keepdims=0),
                  helper.make_node("ReduceMin", ["x3"], ["min"], name="min")],
     [x3], [val("sum", F, [2, 1, 4]), val("mean", F, [2, 3]), val("min", F, [1, 1, 1])],
     opset=11)
save("reduce13", [helper.make_node("ReduceSum", ["x3", "axes"], ["sum"], name="sum", keepdims=0),
                  helper.make_node("ReduceSum", ["x3", "none"], ["same"], name="same",
                                   noop_with_empty_axes=1),
                  helper.make_node("ReduceMax", ["x3"], ["max"], name="max", axes=[0, 2])],
     [x3], [val("sum", F, [4]), val("same", F, [2, 3, 4]), val("max", F, [1, 3, 1])],
     [const("axes", np.array([0, 1], np.int64)), const("none", np.zeros([0], np.int64))],
     opset=13)
save("reduce18", [helper.make_node("ReduceMean", ["x3", "axes"], ["mean"], name="mean"),
                  helper.make_node("ReduceMin", ["x3", "axes"], ["min"], name="min", keepdims=0),
                  helper.make_node("ReduceMax", ["x3"], ["max"], name="max")],
     [x3], [val("mean", F, [2, 3, 1]), val("min", F, [2, 3]), val("max", F, [1, 1, 1])],
     [const("axes", np.array([2], np.int64))], opset=18)

# Softmax and LogSoftmax: before opset 13 over the input flattened to 2-D at
# `axis` (default 1), from 13 on along one axis (default -1).
for opset in (11, 13):
    save("softmax%d" % opset,
         [helper.make_node("Softmax", ["x3"], ["sm"], name="sm"),
          helper.make_node("LogSoftmax", ["x3"], ["lsm"], name="lsm", axis=0),
          helper.make_node("Softmax", ["x3"], ["last"], name="last", axis=2)],
         [x3], [val(n, F, [2, 3, 4]) for n in ("sm", "lsm", "last")], opset=opset)

# Opset 11: Squeeze and Unsqueeze axes and Split sizes as attributes.
save("attrs11", [helper.make_node("Unsqueeze", ["x"], ["u"], name="u", axes=[0, -1]),
                 helper.make_node("Squeeze", ["u"], ["s"], name="s", axes=[0]),
                 helper.make_node("Split", ["x"], ["s0", "s1"], name="split", axis=1, split=[1, 2])],
     [x], [val("s", F, [2, 3, 1]), val("s0", F, [2, 1]), val("s1", F, [2, 2])], opset=11)
# Opset 18: Split by num_outputs.
x6 = val("x6", F, [2, 6])
save("split18", [helper.make_node("Split", ["x6"], ["a", "b", "c"], name="split", axis=1,
                                  num_outputs=3)],
     [x6], [val(n, F, [2, 2]) for n in "abc"], opset=18)

# If whose condition folds once the input's shape is bound: the condition is
# "more than 8 elements". The then branch reads the outer input and a value
# of the outer graph, and has an initializer of its own; the else branch
# nests another If (on a constant) whose branch reads the outer input too.
dyn = val("d", F, ["n", 3])
then = helper.make_graph(
    [helper.make_node("Add", ["d", "bias"], ["t0"], name="then_add"),
     helper.make_node("Mul", ["t0", "two"], ["t"], name="then_mul")],
    "then", [], [val("t", F, ["n", 3])], [const("two", np.array(2.0, np.float32))])
inner = helper.make_graph([helper.make_node("Neg", ["d"], ["e"], name="inner_neg")],
                          "inner", [], [val("e", F, ["n", 3])])
inner_else = helper.make_graph([helper.make_node("Abs", ["d"], ["e2"], name="inner_abs")],
                               "inner_else", [], [val("e2", F, ["n", 3])])
other = helper.make_graph(
    [helper.make_node("Constant", [], ["yes"], name="yes",
                      value=numpy_helper.from_array(np.array(True))),
     helper.make_node("If", ["yes"], ["o"], name="nested", then_branch=inner,
                      else_branch=inner_else)],
    "else", [], [val("o", F, ["n", 3])])
save("if", [helper.make_node("Size", ["d"], ["size"], name="size"),
            helper.make_node("Greater", ["size", "eight"], ["big"], name="big"),
            helper.make_node("Sigmoid", ["d"], ["bias"], name="bias"),
            helper.make_node("If", ["big"], ["y"], name="choose", then_branch=then,
                             else_branch=other)],
     [dyn], [val("y", F, ["n", 3])], [const("eight", np.array(8, np.int64))])

# LayerNormalization with its Mean and InvStdDev outputs, over the last two dims.
save("layernorm", [helper.make_node("LayerNormalization", ["x3", "g", "beta"],
                                    ["y", "mean", "invstd"], name="ln", axis=1, epsilon=1e-3)],
     [x3], [val("y", F, [2, 3, 4]), val("mean", F, [2, 1, 1]), val("invstd", F, [2, 1, 1])],
     [const("g", np.ones([3, 4], np.float32)), const("beta", np.zeros([3, 4], np.float32))])

# Ops built from other wsgraph ops: an activation, Round, ArgMax that keeps
# the last of equals, ReduceLogSumExp, Dropout with its mask; and Dropout
# in training mode with a ratio, which draws a random mask.
save("composite", [helper.make_node("Elu", ["x"], ["elu"], name="elu", alpha=0.5),
                   helper.make_node("Round", ["x"], ["round"], name="round"),
                   helper.make_node("ArgMax", ["x"], ["argmax"], name="argmax", axis=1,
                                    keepdims=0, select_last_index=1),
                   helper.make_node("ReduceLogSumExp", ["x"], ["lse"], name="lse", axes=[1],
                                    keepdims=0),
                   helper.make_node("Dropout", ["x"], ["drop", "mask"], name="drop")],
     [x], [val("elu", F, [2, 3]), val("round", F, [2, 3]), val("argmax", I64, [2]),
           val("lse", F, [2]), val("drop", F, [2, 3]), val("mask", B, [2, 3])], opset=13)
save("training_dropout", [helper.make_node("Dropout", ["x", "ratio", "train"], ["y"], name="drop")],
     [x], [val("y", F, [2, 3])],
     [const("ratio", np.array(0.5, np.float32)), const("train", np.array(True))])

# SoftmaxCrossEntropyLoss over [N, C, d] with class weights and an ignored
# index, and its log-probabilities.
scores, labels = val("scores", F, [2, 4, 3]), val("labels", I64, [2, 3])
save("loss", [helper.make_node("SoftmaxCrossEntropyLoss", ["scores", "labels", "weights"],
                               ["loss", "logp"], name="sce", ignore_index=-1)],
     [scores, labels], [val("loss", F, []), val("logp", F, [2, 4, 3])],
     [const("weights", np.array([1, 2, 3, 4], np.float32))], opset=13)

# Window ops: a 2x2 MaxPool of stride 2 with one row of padding on top, and
# a 3x1 convolution in two groups with a bias.
img = val("img", F, [1, 2, 3, 4])
save("windows", [helper.make_node("MaxPool", ["img"], ["pool"], name="pool", kernel_shape=[2, 2],
                                  strides=[2, 2], pads=[1, 0, 0, 0]),
                 helper.make_node("Conv", ["img", "cw", "cb"], ["conv"], name="conv",
                                  kernel_shape=[3, 1], group=2)],
     [img], [val("pool", F, [1, 2, 2, 2]), val("conv", F, [1, 4, 1, 4])],
     [const("cw", np.ones([4, 1, 3, 1], np.float32)), const("cb", np.arange(4, dtype=np.float32))])

# MaxPool's Indices: a 2x2 pool of stride 2 on [1, 2, 2, 4], column-major.
save("pool_indices", [helper.make_node("MaxPool", ["pimg"], ["pool", "idx"], name="pool",
                                       kernel_shape=[2, 2], strides=[2, 2], storage_order=1)],
     [val("pimg", F, [1, 2, 2, 4])],
     [val("pool", F, [1, 2, 1, 2]), val("idx", TensorProto.INT64, [1, 2, 1, 2])])

# CumSum along axis 0, reversed and exclusive: a product with a triangle.
save("cumsum", [helper.make_node("CumSum", ["x", "axis"], ["y"], name="cumsum", exclusive=1,
                                 reverse=1)],
     [x], [val("y", F, [2, 3])], [const("axis", np.array(0, np.int32))], opset=14)
# CumSum of an int64 padding mask (OPT's positions, BLOOM's ALiBi offsets).
save("cumsum_int", [helper.make_node("CumSum", ["m", "one"], ["pos"], name="cumsum")],
     [val("m", I64, [2, 4])], [val("pos", I64, [2, 4])], [const("one", np.array(1, np.int64))])
