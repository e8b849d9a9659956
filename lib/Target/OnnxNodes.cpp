//===- OnnxNodes.cpp - ONNX operators to wsgraph ops ----------------------===//
//
// One converter per ONNX operator (or family). Shape parameters must fold to
// constants; each failure names the node through Importer::nodeError.
//
//===----------------------------------------------------------------------===//
#include "OnnxImporter.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>

using namespace mlir;
using namespace wsc;
using namespace wsc::onnx_import;

//===----------------------------------------------------------------------===//
// Node converters
//===----------------------------------------------------------------------===//


LogicalResult Importer::convertConstant(const onnx::NodeProto &node,
                                        SmallVectorImpl<Value> &results) {
  if (auto *a = findAttr(node, "value")) {
    auto type = tensorType(a->t(), currentNode);
    if (::failed(type))
      return failure();
    auto value = tensorValue(a->t(), *type, nullptr, currentNode);
    if (::failed(value))
      return failure();
    results.push_back(constant(*value));
    return success();
  }
  if (auto *a = findAttr(node, "value_float")) {
    results.push_back(constant(DenseElementsAttr::get(
        RankedTensorType::get({}, builder.getF32Type()), a->f())));
    return success();
  }
  if (auto *a = findAttr(node, "value_int")) {
    results.push_back(constant(DenseElementsAttr::get(
        RankedTensorType::get({}, builder.getIntegerType(64)), int64_t(a->i()))));
    return success();
  }
  if (auto *a = findAttr(node, "value_ints")) {
    SmallVector<int64_t> v(a->ints().begin(), a->ints().end());
    results.push_back(constant(DenseElementsAttr::get(
        RankedTensorType::get({int64_t(v.size())}, builder.getIntegerType(64)),
        ArrayRef<int64_t>(v))));
    return success();
  }
  if (auto *a = findAttr(node, "value_floats")) {
    SmallVector<float> v(a->floats().begin(), a->floats().end());
    results.push_back(constant(DenseElementsAttr::get(
        RankedTensorType::get({int64_t(v.size())}, builder.getF32Type()), ArrayRef<float>(v))));
    return success();
  }
  nodeError("has no value attribute that wsc supports (value, value_float, value_int, "
            "value_ints, value_floats)");
  return failure();
}

LogicalResult Importer::convertReshape(const onnx::NodeProto &node, ArrayRef<Value> in,
                                       SmallVectorImpl<Value> &results) {
  auto shape = constInts(in.size() > 1 ? in[1] : Value(), "shape");
  if (::failed(shape))
    return failure();
  auto type = typeOf(in[0]);
  bool allowZero = intAttr(node, "allowzero", 0) != 0;
  SmallVector<int64_t> dims(*shape);
  int64_t known = 1, inferAt = -1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 0 && !allowZero) {
      if (i >= static_cast<size_t>(type.getRank())) {
        nodeError("shape copies dimension " + std::to_string(i) + " that the input lacks");
        return failure();
      }
      dims[i] = type.getDimSize(i);
    }
    if (dims[i] == -1) {
      if (inferAt >= 0) {
        nodeError("shape has more than one -1");
        return failure();
      }
      inferAt = i;
      continue;
    }
    if (ShapedType::isDynamic(dims[i]) || dims[i] < 0) {
      if (dims[i] < 0) {
        nodeError("shape has invalid dimension " + std::to_string(dims[i]));
        return failure();
      }
      known = -1;
    } else if (known >= 0 && __builtin_mul_overflow(known, dims[i], &known)) {
      nodeError("shape has more than 2^63 elements");
      return failure();
    }
  }
  if (inferAt >= 0) {
    if (!type.hasStaticShape() || known <= 0) {
      dims[inferAt] = ShapedType::kDynamic;
    } else if (type.getNumElements() % known != 0) {
      nodeError("cannot reshape " + std::to_string(type.getNumElements()) +
                " elements into a shape with " + std::to_string(known) + " elements per -1");
      return failure();
    } else {
      dims[inferAt] = type.getNumElements() / known;
    }
  }
  auto v = build(wg::ReshapeOp::getOperationName(), {in[0]}, {},
                 RankedTensorType::get(dims, type.getElementType()));
  if (::failed(v))
    return failure();
  results.push_back(*v);
  return success();
}

LogicalResult Importer::convertSlice(const onnx::NodeProto &, ArrayRef<Value> in,
                                     SmallVectorImpl<Value> &results) {
  auto type = typeOf(in[0]);
  int64_t rank = type.getRank();
  auto starts = constInts(in.size() > 1 ? in[1] : Value(), "starts");
  auto ends = constInts(in.size() > 2 ? in[2] : Value(), "ends");
  if (::failed(starts) || ::failed(ends))
    return failure();
  SmallVector<int64_t> axes, steps;
  if (in.size() > 3 && in[3]) {
    auto a = constInts(in[3], "axes");
    if (::failed(a))
      return failure();
    axes = *a;
  } else {
    for (size_t i = 0; i < starts->size(); ++i)
      axes.push_back(i);
  }
  if (in.size() > 4 && in[4]) {
    auto s = constInts(in[4], "steps");
    if (::failed(s))
      return failure();
    steps = *s;
  } else {
    steps.assign(starts->size(), 1);
  }
  if (ends->size() != starts->size() || axes.size() != starts->size() ||
      steps.size() != starts->size()) {
    nodeError("starts, ends, axes and steps differ in length");
    return failure();
  }
  SmallVector<int64_t> offsets(rank, 0), sizes(type.getShape()), strides(rank, 1);
  for (size_t i = 0; i < axes.size(); ++i) {
    auto axis = wg::normalizeAxis(axes[i], rank);
    if (::failed(axis)) {
      nodeError("axis " + std::to_string(axes[i]) + " is out of range for rank " +
                std::to_string(rank));
      return failure();
    }
    int64_t dim = type.getDimSize(*axis), step = steps[i];
    if (ShapedType::isDynamic(dim)) {
      nodeError("slices dimension " + std::to_string(*axis) +
                ", which is dynamic; bind it with --input-shape");
      return failure();
    }
    if (step == 0) {
      nodeError("step is zero");
      return failure();
    }
    // ONNX clamping rules: indices count from the end when negative.
    auto clampIndex = [&](int64_t v, int64_t lo, int64_t hi) {
      if (v < 0)
        v = v < -dim ? -1 : v + dim; // keep "before the start" distinct
      return std::clamp(v, lo, hi);
    };
    int64_t start, end;
    if (step > 0) {
      start = clampIndex((*starts)[i], 0, dim);
      end = clampIndex((*ends)[i], 0, dim);
    } else {
      start = clampIndex((*starts)[i], -1, dim - 1);
      end = clampIndex((*ends)[i], -1, dim - 1);
    }
    int64_t size = step > 0 ? std::max<int64_t>(0, (end - start + step - 1) / step)
                            : std::max<int64_t>(0, (start - end + (-step) - 1) / (-step));
    offsets[*axis] = size == 0 ? 0 : start;
    sizes[*axis] = size;
    strides[*axis] = step;
  }
  auto v = build(wg::SliceOp::getOperationName(), {in[0]},
                 {attr("offsets", builder.getDenseI64ArrayAttr(offsets)),
                  attr("sizes", builder.getDenseI64ArrayAttr(sizes)),
                  attr("strides", builder.getDenseI64ArrayAttr(strides))});
  if (::failed(v))
    return failure();
  results.push_back(*v);
  return success();
}

LogicalResult Importer::convertSplit(const onnx::NodeProto &node, ArrayRef<Value> in,
                                     SmallVectorImpl<Value> &results) {
  auto type = typeOf(in[0]);
  int64_t axisAttr = intAttr(node, "axis", 0);
  auto axis = wg::normalizeAxis(axisAttr, type.getRank());
  if (::failed(axis)) {
    nodeError("axis " + std::to_string(axisAttr) + " is out of range");
    return failure();
  }
  SmallVector<int64_t> sizes;
  auto given = intsFromInputOrAttr(node, in, 1, "split");
  if (::failed(given))
    return failure();
  if (*given) {
    sizes = **given;
  } else {
    // Opset 18 may say how many pieces; they are the node's outputs anyway.
    int64_t n = intAttr(node, "num_outputs", node.output_size()), dim = type.getDimSize(*axis);
    if (ShapedType::isDynamic(dim) || n == 0) {
      nodeError("cannot split a dynamic dimension evenly; bind it with --input-shape");
      return failure();
    }
    int64_t chunk = (dim + n - 1) / n;
    for (int64_t i = 0; i < n; ++i)
      sizes.push_back(std::min(chunk, dim - i * chunk));
  }
  if (static_cast<int>(sizes.size()) != node.output_size()) {
    nodeError("has " + std::to_string(node.output_size()) + " outputs but " +
              std::to_string(sizes.size()) + " split sizes");
    return failure();
  }
  auto vs = buildMulti(wg::SplitOp::getOperationName(), {in[0]},
                       {attr("axis", builder.getI64IntegerAttr(*axis)),
                        attr("sizes", builder.getDenseI64ArrayAttr(sizes))},
                       sizes.size());
  if (::failed(vs))
    return failure();
  results.append(vs->begin(), vs->end());
  return success();
}

LogicalResult Importer::convertReduce(const onnx::NodeProto &node, ArrayRef<Value> in,
                                      SmallVectorImpl<Value> &results, StringRef opName) {
  // Axes are an attribute up to opset 12 (ReduceSum) or 17 (the others) and
  // an optional input from then on; a model has one form or the other.
  auto given = intsFromInputOrAttr(node, in, 1, "axes");
  if (::failed(given))
    return failure();
  SmallVector<int64_t> axes = given->value_or(SmallVector<int64_t>());
  if (axes.empty() && intAttr(node, "noop_with_empty_axes", 0)) {
    results.push_back(in[0]);
    return success();
  }
  auto v = build(opName, {in[0]},
                 {attr("axes", builder.getDenseI64ArrayAttr(axes)),
                  attr("keepdims", builder.getBoolAttr(intAttr(node, "keepdims", 1) != 0))});
  if (::failed(v))
    return failure();
  results.push_back(*v);
  return success();
}

Value Importer::positionsAlong(int64_t rank, int64_t axis, int64_t n) {
  SmallVector<int64_t> shape(rank, 1);
  shape[axis] = n;
  SmallVector<float> positions;
  for (int64_t i = 0; i < n; ++i)
    positions.push_back(float(i));
  return constant(DenseElementsAttr::get(RankedTensorType::get(shape, builder.getF32Type()),
                                         ArrayRef<float>(positions)));
}

Value Importer::scalarConstant(Type element, double value) {
  auto type = RankedTensorType::get({}, element);
  if (auto f = dyn_cast<FloatType>(element)) {
    APFloat x(value);
    bool lost;
    x.convert(f.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    return constant(DenseElementsAttr::get(type, x));
  }
  unsigned width = element.getIntOrFloatBitWidth();
  return constant(DenseElementsAttr::get(
      type, APInt(width, static_cast<int64_t>(value), /*isSigned=*/true, /*implicitTrunc=*/true)));
}

FailureOr<Value> Importer::buildChain(ArrayRef<Value> in, StringRef binaryOp) {
  if (in.empty() || llvm::any_of(in, [](Value v) { return !v; })) {
    nodeError("expects one or more inputs");
    return failure();
  }
  Value acc = in.front();
  for (Value next : in.drop_front()) {
    auto v = build(binaryOp, {acc, next}, {});
    if (::failed(v))
      return failure();
    acc = *v;
  }
  return acc;
}

/// Product of dims [begin, end) of a shape; dynamic if any of them is.
static int64_t product(ArrayRef<int64_t> shape, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t d = begin; d < end; ++d) {
    if (ShapedType::isDynamic(shape[d]))
      return ShapedType::kDynamic;
    n *= shape[d];
  }
  return n;
}

LogicalResult Importer::convertSoftmax(const onnx::NodeProto &node, ArrayRef<Value> in,
                                       SmallVectorImpl<Value> &results) {
  StringRef name = node.op_type() == "Softmax" ? wg::SoftmaxOp::getOperationName()
                                               : wg::LogSoftmaxOp::getOperationName();
  auto type = typeOf(in[0]);
  // Opset 13 normalizes along one axis (default -1); older opsets flatten the
  // input to 2-D at `axis` (default 1) and normalize each row.
  int64_t axisAttr = intAttr(node, "axis", opset >= 13 ? -1 : 1);
  auto axisValue = [&](int64_t a) { return attr("axis", builder.getI64IntegerAttr(a)); };
  if (opset >= 13) {
    auto v = build(name, {in[0]}, {axisValue(axisAttr)}, type);
    if (::failed(v))
      return failure();
    results.push_back(*v);
    return success();
  }
  int64_t rank = type.getRank();
  auto axis = wg::normalizeAxis(axisAttr, rank);
  if (::failed(axis)) {
    nodeError("axis " + std::to_string(axisAttr) + " is out of range for rank " +
              std::to_string(rank));
    return failure();
  }
  if (*axis == rank - 1) { // the rows are the last dimension already
    auto v = build(name, {in[0]}, {axisValue(-1)}, type);
    if (::failed(v))
      return failure();
    results.push_back(*v);
    return success();
  }
  if (!type.hasStaticShape()) {
    nodeError("flattens a dynamic shape to 2-D (opset " + std::to_string(opset) +
              " semantics); bind it with --input-shape");
    return failure();
  }
  auto flatType = RankedTensorType::get(
      {product(type.getShape(), 0, *axis), product(type.getShape(), *axis, rank)},
      type.getElementType());
  auto flat = build(wg::ReshapeOp::getOperationName(), {in[0]}, {}, flatType);
  if (::failed(flat))
    return failure();
  auto norm = build(name, {*flat}, {axisValue(1)}, flatType);
  if (::failed(norm))
    return failure();
  auto back = build(wg::ReshapeOp::getOperationName(), {*norm}, {}, type);
  if (::failed(back))
    return failure();
  results.push_back(*back);
  return success();
}

LogicalResult Importer::convertRmsNorm(const onnx::NodeProto &node, ArrayRef<Value> in,
                                       SmallVectorImpl<Value> &results) {
  auto type = typeOf(in[0]), scaleType = typeOf(in[1]);
  int64_t axisAttr = intAttr(node, "axis", -1);
  auto axis = wg::normalizeAxis(axisAttr, type.getRank());
  if (::failed(axis))
    return nodeError("axis " + std::to_string(axisAttr) + " is outside the input's " +
                     std::to_string(type.getRank()) + " dimensions"),
           failure();
  // The scale broadcasts to the normalized dimensions; rms_norm takes them whole.
  auto normalized = RankedTensorType::get(type.getShape().drop_front(*axis),
                                          scaleType.getElementType());
  Value scale = in[1];
  if (scaleType != normalized) {
    auto expanded = build(wg::ExpandOp::getOperationName(), {scale}, {}, normalized);
    if (::failed(expanded))
      return failure();
    scale = *expanded;
  }
  auto y = build(wg::RmsNormOp::getOperationName(), {in[0], scale},
                 {attr("axis", builder.getI64IntegerAttr(axisAttr)),
                  attr("epsilon", builder.getF32FloatAttr(floatAttr(node, "epsilon", 1e-5f)))},
                 in[0].getType());
  if (::failed(y))
    return failure();
  results.push_back(*y);
  return success();
}

LogicalResult Importer::convertLayerNorm(const onnx::NodeProto &node, ArrayRef<Value> in,
                                         SmallVectorImpl<Value> &results) {
  int64_t axisAttr = intAttr(node, "axis", -1);
  float epsilon = floatAttr(node, "epsilon", 1e-5f);
  SmallVector<Value> operands = {in[0], in[1]};
  if (in.size() > 2 && in[2])
    operands.push_back(in[2]);
  auto y = build(wg::LayerNormOp::getOperationName(), operands,
                 {attr("axis", builder.getI64IntegerAttr(axisAttr)),
                  attr("epsilon", builder.getF32FloatAttr(epsilon))},
                 in[0].getType());
  if (::failed(y))
    return failure();
  results.push_back(*y);
  auto used = [&](int i) { return node.output_size() > i && !node.output(i).empty(); };
  if (!used(1) && !used(2))
    return success();
  // Mean and InvStdDev (kept dimensions, float32 as stash_type 1 says) are
  // computed apart from the fused op, which has one result.
  auto type = typeOf(in[0]);
  int64_t rank = type.getRank();
  auto axis = wg::normalizeAxis(axisAttr, rank);
  if (::failed(axis))
    return failure(); // the layer_norm verifier reported it
  Value x = in[0];
  if (!type.getElementType().isF32()) {
    auto cast = build(wg::CastOp::getOperationName(), {x}, {},
                      RankedTensorType::get(type.getShape(), builder.getF32Type()));
    if (::failed(cast))
      return failure();
    x = *cast;
  }
  SmallVector<int64_t> axes;
  for (int64_t d = *axis; d < rank; ++d)
    axes.push_back(d);
  auto reduceMean = [&](Value v) {
    return build(wg::ReduceMeanOp::getOperationName(), {v},
                 {attr("axes", builder.getDenseI64ArrayAttr(axes)),
                  attr("keepdims", builder.getBoolAttr(true))});
  };
  auto mean = reduceMean(x);
  if (::failed(mean))
    return failure();
  results.push_back(*mean);
  if (!used(2))
    return success();
  auto centered = build(wg::SubOp::getOperationName(), {x, *mean}, {});
  if (::failed(centered))
    return failure();
  auto squared = build(wg::MulOp::getOperationName(), {*centered, *centered}, {});
  if (::failed(squared))
    return failure();
  auto variance = reduceMean(*squared);
  if (::failed(variance))
    return failure();
  auto shifted = build(wg::AddOp::getOperationName(),
                       {*variance, scalarConstant(builder.getF32Type(), epsilon)}, {});
  if (::failed(shifted))
    return failure();
  auto stddev = build(wg::SqrtOp::getOperationName(), {*shifted}, {}, shifted->getType());
  if (::failed(stddev))
    return failure();
  auto inv = build(wg::ReciprocalOp::getOperationName(), {*stddev}, {}, stddev->getType());
  if (::failed(inv))
    return failure();
  results.push_back(*inv);
  return success();
}

LogicalResult Importer::convertClip(const onnx::NodeProto &node, ArrayRef<Value> in,
                                    SmallVectorImpl<Value> &results) {
  Type element = typeOf(in[0]).getElementType();
  // Opset 11 made min and max optional inputs; opset 6 has them as float
  // attributes. Clip is min(max(x, lo), hi).
  Value bounds[2];
  const char *names[2] = {"min", "max"};
  for (int i = 0; i < 2; ++i) {
    if (opset >= 11) {
      if (in.size() > size_t(i + 1) && in[i + 1])
        bounds[i] = in[i + 1];
    } else if (findAttr(node, names[i])) {
      bounds[i] = scalarConstant(element, floatAttr(node, names[i], 0.0f));
    }
    if (!bounds[i])
      continue;
    auto t = typeOf(bounds[i]);
    if (t.getRank() != 0) {
      if (!t.hasStaticShape() || t.getNumElements() != 1) {
        nodeError(std::string("the ") + names[i] + " bound must be a scalar, got " +
                  std::to_string(t.getRank()) + "-D");
        return failure();
      }
      auto scalar = build(wg::ReshapeOp::getOperationName(), {bounds[i]}, {},
                          RankedTensorType::get({}, t.getElementType()));
      if (::failed(scalar))
        return failure();
      bounds[i] = *scalar;
    }
  }
  Value x = in[0];
  if (bounds[0]) {
    auto v = build(wg::MaxOp::getOperationName(), {x, bounds[0]}, {});
    if (::failed(v))
      return failure();
    x = *v;
  }
  if (bounds[1]) {
    auto v = build(wg::MinOp::getOperationName(), {x, bounds[1]}, {});
    if (::failed(v))
      return failure();
    x = *v;
  }
  results.push_back(x);
  return success();
}

LogicalResult Importer::convertFlatten(const onnx::NodeProto &node, ArrayRef<Value> in,
                                       SmallVectorImpl<Value> &results) {
  auto type = typeOf(in[0]);
  int64_t rank = type.getRank(), axis = intAttr(node, "axis", 1);
  if (axis < -rank || axis > rank) {
    nodeError("axis " + std::to_string(axis) + " is out of range for rank " +
              std::to_string(rank));
    return failure();
  }
  if (axis < 0)
    axis += rank;
  auto flatType = RankedTensorType::get(
      {product(type.getShape(), 0, axis), product(type.getShape(), axis, rank)},
      type.getElementType());
  auto v = build(wg::ReshapeOp::getOperationName(), {in[0]}, {}, flatType);
  if (::failed(v))
    return failure();
  results.push_back(*v);
  return success();
}

LogicalResult Importer::convertIf(const onnx::NodeProto &node, ArrayRef<Value> in,
                                  SmallVectorImpl<Value> &results) {
  auto cond = wg::getConstantElements(in[0]);
  if (!cond || cond.getNumElements() != 1) {
    nodeError("the condition is not a compile-time constant; wsc imports an If only when its "
              "condition folds" +
              (unboundInputs.empty()
                   ? std::string()
                   : " (bind the dynamic dimensions of " + unboundInputs +
                         " with --input-shape NAME=DIMS)"));
    return failure();
  }
  bool taken = isa<FloatType>(cond.getElementType())
                   ? !(*cond.getValues<APFloat>().begin()).isZero()
                   : !(*cond.getValues<APInt>().begin()).isZero();
  const char *branchName = taken ? "then_branch" : "else_branch";
  auto *a = findAttr(node, branchName);
  if (!a || !a->has_g()) {
    nodeError(std::string("has no ") + branchName + " graph");
    return failure();
  }
  const onnx::GraphProto &branch = a->g();
  if (branch.input_size() != 0 || branch.output_size() != node.output_size()) {
    nodeError(std::string("its ") + branchName + " has " + std::to_string(branch.input_size()) +
              " inputs and " + std::to_string(branch.output_size()) + " outputs; expected 0 and " +
              std::to_string(node.output_size()));
    return failure();
  }
  // The taken branch is inlined: its nodes read the enclosing values by name,
  // and its own names are dropped again once its outputs are known.
  std::string prefix = currentNode + " " + branchName + ": ";
  if (!checkNodes(branch, prefix))
    return failure();
  auto outputs = runBody(branch, prefix, {});
  if (::failed(outputs))
    return failure();
  for (const CarriedValue &v : *outputs) {
    if (!v.tensor)
      return nodeError("an output of its " + std::string(branchName) + " is a sequence"),
             failure();
    results.push_back(v.tensor);
  }
  return success();
}

LogicalResult Importer::convert(const onnx::NodeProto &node, SmallVectorImpl<Value> &in,
                                SmallVectorImpl<Value> &results) {
  StringRef op = node.op_type();
  auto need = [&](size_t n) {
    if (in.size() >= n && llvm::all_of(ArrayRef<Value>(in).take_front(n), [](Value v) { return bool(v); }))
      return true;
    nodeError("expects at least " + std::to_string(n) + " inputs, got " +
              std::to_string(in.size()));
    return false;
  };
  auto push = [&](FailureOr<Value> v) -> LogicalResult {
    if (::failed(v))
      return failure();
    results.push_back(*v);
    return success();
  };

  if (isMicrosoftOp(node.domain(), op))
    return convertMicrosoftOp(node, in, results);
  static const llvm::StringMap<StringRef> binary = {
      {"Add", wg::AddOp::getOperationName()}, {"Sub", wg::SubOp::getOperationName()},
      {"Mul", wg::MulOp::getOperationName()}, {"Div", wg::DivOp::getOperationName()},
      {"Pow", wg::PowOp::getOperationName()}, {"Equal", wg::EqualOp::getOperationName()},
      {"Less", wg::LessOp::getOperationName()},
      {"LessOrEqual", wg::LessEqualOp::getOperationName()},
      {"Greater", wg::GreaterOp::getOperationName()},
      {"GreaterOrEqual", wg::GreaterEqualOp::getOperationName()},
      {"And", wg::AndOp::getOperationName()}, {"Or", wg::OrOp::getOperationName()},
      {"Xor", wg::XorOp::getOperationName()}, {"MatMul", wg::MatmulOp::getOperationName()},
      {"BitwiseAnd", wg::BitwiseAndOp::getOperationName()},
      {"BitwiseOr", wg::BitwiseOrOp::getOperationName()},
      {"BitwiseXor", wg::BitwiseXorOp::getOperationName()}};
  static const llvm::StringMap<StringRef> unary = {
      {"Sqrt", wg::SqrtOp::getOperationName()}, {"Erf", wg::ErfOp::getOperationName()},
      {"Tanh", wg::TanhOp::getOperationName()}, {"Exp", wg::ExpOp::getOperationName()},
      {"Neg", wg::NegOp::getOperationName()}, {"Log", wg::LogOp::getOperationName()},
      {"Sigmoid", wg::SigmoidOp::getOperationName()}, {"Relu", wg::ReluOp::getOperationName()},
      {"Abs", wg::AbsOp::getOperationName()}, {"Sin", wg::SinOp::getOperationName()},
      {"Cos", wg::CosOp::getOperationName()},
      {"Reciprocal", wg::ReciprocalOp::getOperationName()},
      {"Floor", wg::FloorOp::getOperationName()}, {"Ceil", wg::CeilOp::getOperationName()},
      {"Not", wg::NotOp::getOperationName()}};
  static const llvm::StringMap<StringRef> nary = {
      {"Max", wg::MaxOp::getOperationName()}, {"Min", wg::MinOp::getOperationName()},
      {"Sum", wg::AddOp::getOperationName()}, {"Mean", wg::AddOp::getOperationName()}};

  if (auto it = binary.find(op); it != binary.end())
    return need(2) ? push(build(it->second, {in[0], in[1]}, {})) : failure();
  if (auto it = unary.find(op); it != unary.end())
    return need(1) ? push(build(it->second, {in[0]}, {}, in[0].getType())) : failure();
  if (auto it = nary.find(op); it != nary.end()) {
    auto v = buildChain(in, it->second);
    if (::failed(v) || op != "Mean" || in.size() == 1)
      return push(v);
    Value n = scalarConstant(typeOf(*v).getElementType(), double(in.size()));
    return push(build(wg::DivOp::getOperationName(), {*v, n}, {}));
  }
  if (isCompositeOp(op))
    return need(1) ? convertComposite(node, in, results) : failure();
  if (isImageOp(op))
    return need(1) ? convertImageOp(node, in, results) : failure();
  if (isSelectOp(op))
    return need(1) ? convertSelectOp(node, in, results) : failure();
  if (isQuantizedOp(op))
    return need(1) ? convertQuantizedOp(node, in, results) : failure();
  if (isNgramOp(op))
    return need(1) ? convertNgramOp(node, in, results) : failure();
  if (isTrainingOp(op))
    return need(2) ? convertTrainingOp(node, in, results) : failure();
  if (isRecurrentOp(op))
    return need(1) ? convertRecurrentOp(node, in, results) : failure();
  if (isScatterOp(op))
    return need(2) ? convertScatterOp(node, in, results) : failure();
  if (isGridSampleOp(op))
    return need(2) ? convertGridSample(node, in, results) : failure();
  if (isSpectralOp(op))
    return convertSpectralOp(node, in, results);
  if (isAttentionOp(op))
    return convertAttentionOp(node, in, results);
  if (op == "Mod")
    return need(2) ? push(build(wg::ModOp::getOperationName(), {in[0], in[1]},
                                {attr("fmod", builder.getBoolAttr(intAttr(node, "fmod", 0)))}))
                   : failure();
  if (op == "BitwiseNot") { // unsigned: x xor all ones, which stays in the type's range
    if (!need(1))
      return failure();
    auto element = dyn_cast<IntegerType>(typeOf(in[0]).getElementType());
    if (!element || element.getWidth() == 1)
      return nodeError("takes an integer tensor"), failure();
    if (!element.isUnsigned())
      return push(build(wg::BitwiseNotOp::getOperationName(), {in[0]}, {}, in[0].getType()));
    Value ones = constant(DenseElementsAttr::get(RankedTensorType::get({}, element),
                                                 APInt::getAllOnes(element.getWidth())));
    return push(build(wg::BitwiseXorOp::getOperationName(), {in[0], ones}, {}));
  }
  if (op == "Clip")
    return need(1) ? convertClip(node, in, results) : failure();
  if (op == "Flatten")
    return need(1) ? convertFlatten(node, in, results) : failure();
  if (op == "If")
    return need(1) ? convertIf(node, in, results) : failure();
  if (op == "Einsum")
    return need(1) ? convertEinsum(node, in, results) : failure();
  if (op == "Size") {
    if (!need(1))
      return failure();
    auto type = typeOf(in[0]);
    if (!type.hasStaticShape()) {
      nodeError("the input's shape is not static; bind it with --input-shape");
      return failure();
    }
    return push(constant(DenseElementsAttr::get(
        RankedTensorType::get({}, builder.getIntegerType(64)), type.getNumElements())));
  }
  if (op == "Tile") {
    if (!need(2))
      return failure();
    auto repeats = constInts(in[1], "repeats");
    if (::failed(repeats))
      return failure();
    return push(build(wg::TileOp::getOperationName(), {in[0]},
                      {attr("repeats", builder.getDenseI64ArrayAttr(*repeats))}));
  }
  if (op == "GatherElements")
    return need(2) ? push(build(wg::GatherElementsOp::getOperationName(), {in[0], in[1]},
                                {attr("axis", builder.getI64IntegerAttr(intAttr(node, "axis", 0)))}))
                   : failure();
  if (op == "Identity")
    return need(1) ? push(in[0]) : failure();
  if (op == "Constant")
    return convertConstant(node, results);
  if (op == "ConstantOfShape") {
    if (!need(1))
      return failure();
    auto shape = constInts(in[0], "shape");
    if (::failed(shape))
      return failure();
    DenseElementsAttr fill = DenseElementsAttr::get(
        RankedTensorType::get({1}, builder.getF32Type()), 0.0f);
    if (auto *a = findAttr(node, "value")) {
      auto type = tensorType(a->t(), currentNode);
      if (::failed(type))
        return failure();
      auto value = tensorValue(a->t(), *type, nullptr, currentNode);
      if (::failed(value) || value->getNumElements() != 1)
        return failure();
      fill = *value;
    }
    auto type = RankedTensorType::get(*shape, fill.getElementType());
    return push(constant(DenseElementsAttr::get(type, fill.getValues<Attribute>()[0])));
  }
  if (op == "Gelu") {
    auto *a = findAttr(node, "approximate");
    return need(1) ? push(build(wg::GeluOp::getOperationName(), {in[0]},
                                {attr("approximate", builder.getStringAttr(a ? a->s() : "none"))},
                                in[0].getType()))
                   : failure();
  }
  if (op == "Softmax" || op == "LogSoftmax")
    return need(1) ? convertSoftmax(node, in, results) : failure();
  if (op == "LayerNormalization")
    return need(2) ? convertLayerNorm(node, in, results) : failure();
  if (op == "RMSNormalization" || op == "SimplifiedLayerNormalization")
    return need(2) ? convertRmsNorm(node, in, results) : failure();
  if (op == "ReduceMean")
    return need(1) ? convertReduce(node, in, results, wg::ReduceMeanOp::getOperationName())
                   : failure();
  if (op == "ReduceSum")
    return need(1) ? convertReduce(node, in, results, wg::ReduceSumOp::getOperationName())
                   : failure();
  if (op == "ReduceMax")
    return need(1) ? convertReduce(node, in, results, wg::ReduceMaxOp::getOperationName())
                   : failure();
  if (op == "ReduceMin")
    return need(1) ? convertReduce(node, in, results, wg::ReduceMinOp::getOperationName())
                   : failure();
  if (op == "Gemm") {
    if (!need(2))
      return failure();
    SmallVector<Value> operands = {in[0], in[1]};
    if (in.size() > 2 && in[2])
      operands.push_back(in[2]);
    return push(build(wg::GemmOp::getOperationName(), operands,
                      {attr("alpha", builder.getF32FloatAttr(floatAttr(node, "alpha", 1.0f))),
                       attr("beta", builder.getF32FloatAttr(floatAttr(node, "beta", 1.0f))),
                       attr("trans_a", builder.getBoolAttr(intAttr(node, "transA", 0))),
                       attr("trans_b", builder.getBoolAttr(intAttr(node, "transB", 0)))}));
  }
  if (op == "Transpose") {
    if (!need(1))
      return failure();
    SmallVector<int64_t> perm;
    if (auto p = intsAttr(node, "perm"))
      perm = *p;
    else
      for (int64_t i = typeOf(in[0]).getRank() - 1; i >= 0; --i)
        perm.push_back(i);
    return push(build(wg::TransposeOp::getOperationName(), {in[0]},
                      {attr("perm", builder.getDenseI64ArrayAttr(perm))}));
  }
  if (op == "Reshape")
    return need(2) ? convertReshape(node, in, results) : failure();
  if (op == "Gather")
    return need(2) ? push(build(wg::GatherOp::getOperationName(), {in[0], in[1]},
                                {attr("axis", builder.getI64IntegerAttr(intAttr(node, "axis", 0)))}))
                   : failure();
  if (op == "Concat") {
    if (in.empty() || llvm::any_of(in, [](Value v) { return !v; }))
      return need(in.size() + 1), failure();
    return push(build(wg::ConcatOp::getOperationName(), in,
                      {attr("axis", builder.getI64IntegerAttr(intAttr(node, "axis", 0)))}));
  }
  if (op == "Slice")
    return need(3) ? convertSlice(node, in, results) : failure();
  if (op == "Split")
    return need(1) ? convertSplit(node, in, results) : failure();
  if (op == "Where")
    return need(3) ? push(build(wg::WhereOp::getOperationName(), {in[0], in[1], in[2]}, {}))
                   : failure();
  if (op == "Cast") {
    if (!need(1))
      return failure();
    auto element = elementType(intAttr(node, "to", 0), currentNode + ": Cast target");
    if (::failed(element))
      return failure();
    return push(build(wg::CastOp::getOperationName(), {in[0]}, {},
                      RankedTensorType::get(typeOf(in[0]).getShape(), *element)));
  }
  if (op == "Unsqueeze" || op == "Squeeze") {
    if (!need(1))
      return failure();
    SmallVector<int64_t> axes;
    auto given = intsFromInputOrAttr(node, in, 1, "axes");
    if (::failed(given))
      return failure();
    if (*given) {
      axes = **given;
    } else if (op == "Squeeze") {
      for (int64_t i = 0; i < typeOf(in[0]).getRank(); ++i)
        if (typeOf(in[0]).getDimSize(i) == 1)
          axes.push_back(i);
    } else {
      nodeError("has no axes");
      return failure();
    }
    StringRef name = op == "Unsqueeze" ? wg::UnsqueezeOp::getOperationName()
                                       : wg::SqueezeOp::getOperationName();
    return push(build(name, {in[0]}, {attr("axes", builder.getDenseI64ArrayAttr(axes))}));
  }
  if (op == "Expand") {
    if (!need(2))
      return failure();
    auto shape = constInts(in[1], "shape");
    if (::failed(shape))
      return failure();
    auto type = typeOf(in[0]);
    auto dims = wg::broadcastShapes(type.getShape(), *shape);
    if (::failed(dims)) {
      nodeError("cannot broadcast the input to the requested shape");
      return failure();
    }
    return push(build(wg::ExpandOp::getOperationName(), {in[0]}, {},
                      RankedTensorType::get(*dims, type.getElementType())));
  }
  if (op == "Trilu") {
    if (!need(1))
      return failure();
    int64_t k = 0;
    if (in.size() > 1 && in[1]) {
      auto kv = constInts(in[1], "k");
      if (::failed(kv) || kv->size() != 1)
        return failure();
      k = kv->front();
    }
    return push(build(wg::TriluOp::getOperationName(), {in[0]},
                      {attr("upper", builder.getBoolAttr(intAttr(node, "upper", 1) != 0)),
                       attr("k", builder.getI64IntegerAttr(k))},
                      in[0].getType()));
  }
  if (op == "Range") {
    if (!need(3))
      return failure();
    // The length is static only when the bounds are constants.
    int64_t n = ShapedType::kDynamic;
    auto s = wg::getConstantElements(in[0]), l = wg::getConstantElements(in[1]),
         d = wg::getConstantElements(in[2]);
    auto scalar = [](DenseElementsAttr a) {
      return isa<FloatType>(a.getElementType())
                 ? (*a.getValues<APFloat>().begin()).convertToDouble()
                 : double((*a.getValues<APInt>().begin()).getSExtValue());
    };
    if (s && l && d && s.getNumElements() == 1 && l.getNumElements() == 1 &&
        d.getNumElements() == 1 && scalar(d) != 0)
      n = std::max<int64_t>(0, int64_t(std::ceil((scalar(l) - scalar(s)) / scalar(d))));
    return push(build(wg::RangeOp::getOperationName(), {in[0], in[1], in[2]}, {},
                      RankedTensorType::get({n}, typeOf(in[0]).getElementType())));
  }
  if (op == "Shape") {
    if (!need(1))
      return failure();
    int64_t rank = typeOf(in[0]).getRank();
    int64_t start = intAttr(node, "start", 0);
    std::optional<int64_t> end;
    if (findAttr(node, "end"))
      end = intAttr(node, "end", rank);
    int64_t s = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
    int64_t e = end ? std::clamp<int64_t>(*end < 0 ? *end + rank : *end, 0, rank) : rank;
    SmallVector<NamedAttribute> attrs = {attr("start", builder.getI64IntegerAttr(start))};
    if (end)
      attrs.push_back(attr("end", builder.getI64IntegerAttr(*end)));
    return push(build(wg::ShapeOp::getOperationName(), {in[0]}, attrs,
                      RankedTensorType::get({std::max<int64_t>(0, e - s)},
                                            builder.getIntegerType(64))));
  }
  nodeError("is not supported");
  return failure();
}

