//===- OnnxSelect.cpp - ONNX's selecting ops from wsgraph ops -------------===//
//
// Ops that pick parts of a tensor, known at compile time once their
// shape-giving operands are: TopK (k rounds of the extreme and its first
// index, each masked out for the next), Compress (a gather of the kept
// indices) and Pad (slices and blocks concatenated on each axis).
//
//===----------------------------------------------------------------------===//
#include "OnnxImporter.h"

#include <cmath>

using namespace mlir;
using namespace wsc;
using namespace wsc::onnx_import;

bool wsc::onnx_import::isSelectOp(StringRef op) {
  return llvm::is_contained({"TopK", "Compress", "Pad", "CenterCropPad"}, op);
}

LogicalResult Importer::convertSelectOp(const onnx::NodeProto &node, ArrayRef<Value> in,
                                        SmallVectorImpl<Value> &results) {
  if (!typeOf(in[0]).hasStaticShape())
    return nodeError("the input's shape is not static"), failure();
  StringRef op = node.op_type();
  if (op == "TopK")
    return convertTopK(node, in, results);
  if (op == "Compress")
    return convertCompress(node, in, results);
  if (op == "CenterCropPad")
    return convertCenterCropPad(node, in, results);
  return convertPad(node, in, results);
}

/// CenterCropPad: each of `axes` cropped or zero-padded to its length in
/// `shape`, centred (an odd difference leaves the extra at the end).
LogicalResult Importer::convertCenterCropPad(const onnx::NodeProto &node, ArrayRef<Value> in,
                                             SmallVectorImpl<Value> &results) {
  Composer c = composer();
  auto type = typeOf(in[0]);
  int64_t rank = type.getRank();
  auto shape = in.size() > 1 && in[1] ? constInts(in[1], "shape")
                                      : FailureOr<SmallVector<int64_t>>(failure());
  if (::failed(shape))
    return nodeError("shape is not a compile-time constant (bind it with --bind)"), failure();
  SmallVector<int64_t> axes;
  for (int64_t a : intsAttr(node, "axes").value_or(SmallVector<int64_t>()))
    axes.push_back(a < 0 ? a + rank : a);
  if (!findAttr(node, "axes"))
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  SmallVector<int64_t> result(type.getShape());
  for (auto [axis, target] : llvm::zip(axes, *shape))
    if (axis >= 0 && axis < rank)
      result[axis] = target;
  if (shape->size() != axes.size() || boundedProduct(result, int64_t(1) << 42) < 0 ||
      llvm::any_of(axes, [&](int64_t a) { return a < 0 || a >= rank; }) ||
      llvm::any_of(*shape, [](int64_t n) { return n < 0; }))
    return nodeError("shape must give a length (>= 0) to each of the input's axes it names"),
           failure();
  Value y = in[0];
  for (auto [axis, target] : llvm::zip(axes, *shape)) {
    int64_t length = type.getDimSize(axis);
    if (target <= length) {
      y = c.sliceAlong(y, axis, (length - target) / 2, target);
      continue;
    }
    int64_t before = (target - length) / 2, after = target - length - before;
    auto zeros = [&](int64_t n) {
      SmallVector<int64_t> block(typeOf(y).getShape());
      block[axis] = n;
      auto blockType = RankedTensorType::get(block, type.getElementType());
      return constant(
          DenseElementsAttr::get(blockType, builder.getZeroAttr(type.getElementType())));
    };
    SmallVector<Value> parts;
    if (before)
      parts.push_back(zeros(before));
    parts.push_back(y);
    parts.push_back(zeros(after));
    y = c.concat(parts, axis);
  }
  return c.finish(results, {y});
}

/// TopK: k rounds, each taking the extreme along `axis` and the first index
/// that holds it, then masking that index out (to -inf, or +inf for the
/// smallest). So the values come sorted, equal ones by index, as ONNX's
/// reference gives them.
LogicalResult Importer::convertTopK(const onnx::NodeProto &node, ArrayRef<Value> in,
                                    SmallVectorImpl<Value> &results) {
  Composer c = composer();
  Value x = in[0];
  auto type = typeOf(x);
  int64_t rank = type.getRank(), axis = intAttr(node, "axis", -1);
  if (!isa<FloatType>(type.getElementType()) || axis < -rank || axis >= rank)
    return nodeError("takes a float input and an axis of it"), failure();
  axis = axis < 0 ? axis + rank : axis;
  int64_t k = intAttr(node, "k", 0);
  if (opset >= 10) {
    FailureOr<SmallVector<int64_t>> given = failure();
    if (in.size() > 1 && in[1])
      given = constInts(in[1], "k");
    if (::failed(given) || given->size() != 1)
      return nodeError("k is not a compile-time constant (bind it with --bind)"), failure();
    k = given->front();
  }
  int64_t n = type.getDimSize(axis);
  if (k <= 0 || k > n)
    return nodeError("k = " + std::to_string(k) + " is not in [1, " + std::to_string(n) + "]"),
           failure();
  bool largest = intAttr(node, "largest", 1);
  Type element = type.getElementType();
  Value index = positionsAlong(rank, axis, n);
  auto reduce = [&](StringRef name, Value v) {
    return c.op(name, {v},
                {attr("axes", builder.getDenseI64ArrayAttr({axis})),
                 attr("keepdims", builder.getBoolAttr(true))});
  };
  StringRef extreme =
      largest ? wg::ReduceMaxOp::getOperationName() : wg::ReduceMinOp::getOperationName();
  Value masked = scalarConstant(element, largest ? -INFINITY : INFINITY);
  Value none = scalarConstant(builder.getF32Type(), double(n));
  SmallVector<Value> values, indices;
  Value rest = x;
  for (int64_t i = 0; i < k; ++i) {
    Value best = reduce(extreme, rest);
    Value at =
        reduce(wg::ReduceMinOp::getOperationName(), c.where(c.equal(rest, best), index, none));
    values.push_back(best), indices.push_back(at);
    if (i + 1 < k)
      rest = c.where(c.equal(index, at), masked, rest);
  }
  Value v = c.concat(values, axis), at = c.concat(indices, axis);
  Value i64 = at ? c.op(wg::CastOp::getOperationName(), {at}, {},
                        RankedTensorType::get(typeOf(at).getShape(), builder.getIntegerType(64)))
                 : Value();
  return c.finish(results, {v, i64});
}

/// Compress: the indices along `axis` (of the flattened input without one)
/// whose condition is true, gathered. The condition must be bound.
LogicalResult Importer::convertCompress(const onnx::NodeProto &node, ArrayRef<Value> in,
                                        SmallVectorImpl<Value> &results) {
  Composer c = composer();
  if (in.size() < 2 || !in[1])
    return nodeError("expects input and condition"), failure();
  auto condition = wg::getConstantElements(in[1]);
  if (!condition)
    return nodeError("the condition is not a compile-time constant (bind it with --bind)"),
           failure();
  Value x = in[0];
  auto type = typeOf(x);
  int64_t rank = type.getRank(), axis = 0;
  if (findAttr(node, "axis")) {
    axis = intAttr(node, "axis", 0);
    if (axis < -rank || axis >= rank)
      return nodeError("axis " + std::to_string(axis) + " is out of range"), failure();
    axis = axis < 0 ? axis + rank : axis;
  } else {
    x = c.op(wg::ReshapeOp::getOperationName(), {x}, {},
             RankedTensorType::get({type.getNumElements()}, type.getElementType()));
  }
  int64_t n = typeOf(x).getDimSize(axis);
  SmallVector<int64_t> kept;
  int64_t i = 0;
  for (const APInt &v : condition.getValues<APInt>()) {
    if (i >= n)
      break;
    if (!v.isZero())
      kept.push_back(i);
    ++i;
  }
  if (kept.empty())
    return nodeError("the condition keeps nothing: a zero-size result"), failure();
  Value indices = constant(DenseElementsAttr::get(
      RankedTensorType::get({int64_t(kept.size())}, builder.getIntegerType(64)),
      ArrayRef<int64_t>(kept)));
  Value y = c.op(wg::GatherOp::getOperationName(), {x, indices},
                 {attr("axis", builder.getI64IntegerAttr(axis))});
  return c.finish(results, {y});
}

/// Pad, axis by axis: a negative pad crops; a positive one adds blocks of
/// the constant (broadcast), of the edge (the first or last slice,
/// broadcast), or the reflection (single slices, mirrored about the edge).
LogicalResult Importer::convertPad(const onnx::NodeProto &node, ArrayRef<Value> in,
                                   SmallVectorImpl<Value> &results) {
  Composer c = composer();
  Value x = in[0];
  auto type = typeOf(x);
  int64_t rank = type.getRank();
  FailureOr<SmallVector<int64_t>> given = failure();
  if (opset < 11)
    given = intsAttr(node, "pads").value_or(SmallVector<int64_t>());
  else if (in.size() > 1 && in[1])
    given = constInts(in[1], "pads");
  if (::failed(given))
    return nodeError("pads is not a compile-time constant (bind it with --bind)"), failure();
  SmallVector<int64_t> axes;
  if (in.size() > 3 && in[3]) {
    auto a = constInts(in[3], "axes");
    if (::failed(a))
      return nodeError("axes is not a compile-time constant (bind it with --bind)"), failure();
    for (int64_t v : *a)
      axes.push_back(v < 0 ? v + rank : v);
  } else {
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  }
  SmallVector<int64_t> pads = *given;
  if (pads.size() != 2 * axes.size() ||
      llvm::any_of(axes, [&](int64_t a) { return a < 0 || a >= rank; }))
    return nodeError("pads must hold a begin and an end for each padded axis"), failure();
  const onnx::AttributeProto *m = findAttr(node, "mode");
  std::string mode = m ? m->s() : "constant";
  if (mode != "constant" && mode != "edge" && mode != "reflect" && mode != "wrap")
    return nodeError("mode '" + mode + "' is not constant, edge, reflect or wrap"), failure();
  Type element = type.getElementType();
  Value fill;
  if (opset >= 11 && in.size() > 2 && in[2])
    fill = c.op(wg::ReshapeOp::getOperationName(), {in[2]}, {}, RankedTensorType::get({}, element));
  else
    fill = scalarConstant(element, opset < 11 ? floatAttr(node, "value", 0.0f) : 0.0);
  Value y = x;
  for (auto [j, axis] : llvm::enumerate(axes)) {
    int64_t begin = pads[j], end = pads[j + axes.size()];
    int64_t length = typeOf(y).getDimSize(axis);
    if (begin < 0 || end < 0) { // crop first
      int64_t lo = std::max<int64_t>(0, -begin), size = length - lo - std::max<int64_t>(0, -end);
      if (size <= 0)
        return nodeError("the pads crop axis " + std::to_string(axis) + " to nothing"), failure();
      y = c.sliceAlong(y, axis, lo, size);
      begin = std::max<int64_t>(0, begin), end = std::max<int64_t>(0, end), length = size;
    }
    if (mode == "reflect" && (begin >= length || end >= length))
      return nodeError("reflect pads must be shorter than the axis"), failure();
    if (mode == "wrap" && (begin || end) &&
        (length == 0 || begin / length > 4096 || end / length > 4096))
      return nodeError("wrap pads of more than 4096 times the axis are not supported"), failure();
    auto block = [&](int64_t count, bool atEnd) -> SmallVector<Value> {
      SmallVector<int64_t> shape(typeOf(y).getShape());
      shape[axis] = count;
      auto blockType = RankedTensorType::get(shape, element);
      if (mode == "constant")
        return {c.op(wg::ExpandOp::getOperationName(), {fill}, {}, blockType)};
      if (mode == "edge")
        return {c.op(wg::ExpandOp::getOperationName(),
                     {c.sliceAlong(y, axis, atEnd ? length - 1 : 0, 1)}, {}, blockType)};
      SmallVector<Value> taken;
      if (mode == "wrap") { // runs of the axis from (-count mod length) before, from 0 after
        for (int64_t at = atEnd ? 0 : (length - count % length) % length, left = count; left > 0;
             at = 0) {
          int64_t run = std::min(length - at, left);
          taken.push_back(c.sliceAlong(y, axis, at, run));
          left -= run;
        }
        return taken;
      }
      // reflect: x[count], ..., x[1] before; x[n-2], ... after
      for (int64_t i = 0; i < count; ++i)
        taken.push_back(c.sliceAlong(y, axis, atEnd ? length - 2 - i : count - i, 1));
      return taken;
    };
    SmallVector<Value> parts;
    if (begin > 0)
      parts.append(block(begin, false));
    parts.push_back(y);
    if (end > 0)
      parts.append(block(end, true));
    if (parts.size() > 1)
      y = c.concat(parts, axis);
  }
  return c.finish(results, {y});
}
