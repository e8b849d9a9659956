//===- OnnxComposite.cpp - ONNX ops built from other wsgraph ops ----------===//
//
// Operators with no wsgraph op of their own import as a few ops that have
// one, as ONNX's function bodies define them: activations, hyperbolic and
// inverse hyperbolic functions, Round, IsNaN and IsInf, the reductions that
// are a sum or a max with an elementwise step around it, global pools,
// ArgMax, ArgMin and Hardmax, EyeLike, OneHot, CumSum, Dropout at
// inference, CastLike, and the two losses. Each then lowers
// like the ops it is made of (a fused kind or a generic kernel).
//
//===----------------------------------------------------------------------===//
#include "OnnxImporter.h"

#include "llvm/ADT/StringSet.h"

#include <cmath>

using namespace mlir;
using namespace wsc;
using namespace wsc::onnx_import;

bool wsc::onnx_import::isCompositeOp(StringRef op) {
  // clang-format off
  static const llvm::StringSet<> ops = {
      "Elu", "Celu", "Selu", "LeakyRelu", "ThresholdedRelu", "HardSigmoid", "HardSwish", "Softplus",
      "Mish", "Softsign", "Sign", "Shrink", "Sinh", "Cosh", "Tan", "Asinh", "Acosh", "Atanh", "PRelu",
      "IsNaN", "IsInf", "Round", "Dropout", "CastLike", "ReduceL1", "ReduceL2", "ReduceSumSquare",
      "ReduceLogSum", "ReduceLogSumExp", "GlobalAveragePool", "GlobalMaxPool", "ArgMax", "ArgMin",
      "NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss", "Hardmax", "EyeLike", "OneHot",
      "CumSum", "ReduceProd", "Atan", "Asin", "Acos", "QuantizeLinear", "DequantizeLinear",
      "HannWindow", "HammingWindow", "BlackmanWindow", "GlobalLpPool", "LpNormalization",
      "Swish"};
  // clang-format on
  return ops.contains(op);
}

/// x rounded to the nearest integer, halves to even: floor(x), and one up
/// when the rest is over a half, or is a half and floor(x) is odd
/// (|fmod(floor(x), 2)| is 1).
static Value roundHalfEven(Composer &c, Value x, function_ref<Value(double)> k,
                           NamedAttribute fmod) {
  Value fl = c.unary(wg::FloorOp::getOperationName(), x);
  Value rest = c.sub(x, fl);
  Value odd = c.abs(c.op(wg::ModOp::getOperationName(), {fl, k(2)}, {fmod}));
  Value up = c.where(c.greater(rest, k(0.5)), k(1), c.where(c.equal(rest, k(0.5)), odd, k(0)));
  return c.add(fl, up);
}

Value Importer::roundHalfEven(Composer &c, Value x) {
  if (!x) // an op before it failed
    return c.ok = false, Value();
  Type element = typeOf(x).getElementType();
  return ::roundHalfEven(
      c, x, [&](double v) { return scalarConstant(element, v); },
      attr("fmod", builder.getBoolAttr(true)));
}

/// atan(x), to about 1e-7: odd, so from |x|; past 1 as pi/2 - atan(1/|x|);
/// past tan(pi/8) as pi/4 + atan((t - 1) / (t + 1)); then its Taylor series
/// on |u| <= tan(pi/8) (the first term left out is u^17 / 17 < 2e-8).
Value Importer::arcTangent(Composer &c, Value x) {
  if (!x)
    return c.ok = false, Value();
  Type element = typeOf(x).getElementType();
  auto k = [&](double v) { return scalarConstant(element, v); };
  Value a = c.abs(x);
  Value big = c.greater(a, k(1));
  Value t = c.where(big, c.div(k(1), a), a);
  Value mid = c.greater(t, k(0.41421356237309503));
  Value u = c.where(mid, c.div(c.sub(t, k(1)), c.add(t, k(1))), t);
  Value u2 = c.mul(u, u);
  Value series = k(-1.0 / 15);
  for (int n = 13; n >= 1; n -= 2)
    series = c.add(k((n % 4 == 1 ? 1.0 : -1.0) / n), c.mul(u2, series));
  Value r = c.add(c.where(mid, k(M_PI / 4), k(0)), c.mul(u, series));
  r = c.where(big, c.sub(k(M_PI / 2), r), r);
  return c.where(c.less(x, k(0)), c.neg(r), r);
}

/// QuantizeLinear: round(x / scale) + zero point, saturated to the zero
/// point's type (uint8 by default); DequantizeLinear: (x - zero point) *
/// scale. A 1-D scale and zero point run along `axis`.
LogicalResult Importer::convertQuantize(const onnx::NodeProto &node, ArrayRef<Value> in,
                                        SmallVectorImpl<Value> &results) {
  Composer c = composer();
  if (in.size() < 2 || !in[1])
    return nodeError("expects x and a scale"), failure();
  bool quantize = node.op_type() == "QuantizeLinear";
  Value x = in[0], scale = in[1], zero = in.size() > 2 ? in[2] : Value();
  auto type = typeOf(x);
  int64_t rank = type.getRank(), axis = intAttr(node, "axis", 1);
  Type f32 = builder.getF32Type();
  Type quantized = zero       ? typeOf(zero).getElementType()
                   : quantize ? Type(builder.getIntegerType(8, false))
                              : type.getElementType();
  int64_t a = axis < 0 ? axis + rank : axis, block = intAttr(node, "block_size", 0);
  // The axis matters for a scale of more than one element (or blocks).
  bool perAxis = typeOf(scale).getNumElements() != 1 || block > 0;
  if (perAxis && (a < 0 || a >= rank))
    return nodeError("axis " + std::to_string(axis) + " is outside the input's " +
                     std::to_string(rank) + " dimensions"),
           failure();
  if (const onnx::AttributeProto *out = findAttr(node, "output_dtype");
      out && out->i() && quantize && !zero) {
    auto t = elementType(int32_t(out->i()), currentNode + ": output_dtype");
    if (::failed(t))
      return failure();
    quantized = *t;
  }
  // A 1-D scale (and zero point) along `axis`; opset 21's blocks: one per
  // `block` elements along it.
  bool ok = true;
  auto perElement = [&](Value v) {
    if (block <= 0 || !v)
      return alongAxis(c, v, rank, a);
    auto vt = typeOf(v);
    // A block past the axis is one block of the whole axis.
    int64_t each = std::max<int64_t>(1, std::min(block, type.getDimSize(a)));
    if (vt.getRank() != rank || vt.getDimSize(a) != (type.getDimSize(a) + each - 1) / each)
      return ok = false, Value();
    SmallVector<int64_t> many(vt.getShape()), merged(vt.getShape());
    many.insert(many.begin() + a + 1, each);
    merged[a] *= each;
    Value wide = c.op(wg::ExpandOp::getOperationName(), {c.unsqueeze(v, {a + 1})}, {},
                      RankedTensorType::get(many, vt.getElementType()));
    return castTo(c, c.sliceAlong(c.reshape(wide, merged), a, 0, type.getDimSize(a)),
                  builder.getF32Type());
  };
  Value s = perElement(scale);
  Value z = perElement(zero);
  if (!ok)
    return nodeError("a blocked scale or zero point must have the input's rank and cover its "
                     "axis in blocks of block_size"),
           failure();
  Value y;
  if (quantize) {
    auto integer = dyn_cast<IntegerType>(quantized);
    if (!integer || integer.getWidth() > 16)
      return nodeError("quantizes to 8- or 16-bit integers only"), failure();
    unsigned bits = integer.getWidth();
    double lo = integer.isUnsigned() ? 0 : -std::ldexp(1.0, bits - 1);
    double hi = integer.isUnsigned() ? std::ldexp(1.0, bits) - 1 : std::ldexp(1.0, bits - 1) - 1;
    Value xf =
        c.op(wg::CastOp::getOperationName(), {x}, {}, RankedTensorType::get(type.getShape(), f32));
    Value q = c.add(roundHalfEven(c, c.div(xf, s)), z);
    q = c.min(c.max(q, scalarConstant(f32, lo)), scalarConstant(f32, hi));
    y = c.op(wg::CastOp::getOperationName(), {q}, {},
             RankedTensorType::get(type.getShape(), quantized));
  } else {
    Value xf =
        c.op(wg::CastOp::getOperationName(), {x}, {}, RankedTensorType::get(type.getShape(), f32));
    y = c.mul(c.sub(xf, z), s);
  }
  return c.finish(results, {y});
}

LogicalResult Importer::convertComposite(const onnx::NodeProto &node, ArrayRef<Value> in,
                                         SmallVectorImpl<Value> &results) {
  StringRef op = node.op_type();
  Composer c = composer();
  Value x = in[0];
  Type element = typeOf(x).getElementType();
  auto k = [&](double v) { return scalarConstant(element, v); };
  auto f = [&](StringRef name, float dflt) { return double(floatAttr(node, name, dflt)); };
  auto done = [&](Value v) -> LogicalResult {
    if (!c.ok || !v)
      return failure();
    results.push_back(v);
    return success();
  };
  if (op == "Elu") {
    double alpha = f("alpha", 1.0f);
    return done(c.where(c.less(x, k(0)), c.mul(k(alpha), c.sub(c.exp(x), k(1))), x));
  }
  if (op == "Celu") {
    double alpha = f("alpha", 1.0f);
    Value negative = c.mul(k(alpha), c.sub(c.exp(c.div(x, k(alpha))), k(1)));
    return done(c.add(c.max(x, k(0)), c.min(negative, k(0))));
  }
  if (op == "Selu") {
    double alpha = f("alpha", 1.67326319217681884765625f);
    double gamma = f("gamma", 1.05070102214813232421875f);
    Value negative = c.sub(c.mul(k(alpha), c.exp(x)), k(alpha));
    return done(c.mul(k(gamma), c.where(c.greater(x, k(0)), x, negative)));
  }
  if (op == "LeakyRelu")
    return done(c.where(c.less(x, k(0)), c.mul(k(f("alpha", 0.01f)), x), x));
  if (op == "PRelu")
    return in.size() > 1 && in[1] ? done(c.where(c.less(x, k(0)), c.mul(in[1], x), x)) : failure();
  if (op == "ThresholdedRelu") {
    double alpha = f("alpha", 1.0f);
    return done(c.where(c.greater(x, k(alpha)), x, k(0)));
  }
  if (op == "HardSigmoid" || op == "HardSwish") {
    bool swish = op == "HardSwish";
    double alpha = swish ? 1.0 / 6.0 : f("alpha", 0.2f), beta = swish ? 0.5 : f("beta", 0.5f);
    Value y = c.max(k(0), c.min(k(1), c.add(c.mul(k(alpha), x), k(beta))));
    return done(swish ? c.mul(x, y) : y);
  }
  if (op == "Softplus" || op == "Mish") {
    // log(1 + e^x) without overflow: max(x, 0) + log(1 + e^-|x|); Mish is x tanh(that).
    Value softplus = c.add(c.max(x, k(0)), c.log(c.add(k(1), c.exp(c.neg(c.abs(x))))));
    return done(op == "Mish" ? c.mul(x, c.tanh(softplus)) : softplus);
  }
  if (op == "Swish") // x sigmoid(alpha x)
    return done(c.mul(x, c.unary(wg::SigmoidOp::getOperationName(),
                                 c.mul(k(f("alpha", 1.0f)), x))));
  if (op == "Softsign")
    return done(c.div(x, c.add(k(1), c.abs(x))));
  if (op == "Sign")
    return done(c.where(c.greater(x, k(0)), k(1), c.where(c.less(x, k(0)), k(-1), k(0))));
  if (op == "Shrink") {
    double bias = f("bias", 0.0f), lambd = f("lambd", 0.5f);
    return done(c.where(c.less(x, k(-lambd)), c.add(x, k(bias)),
                        c.where(c.greater(x, k(lambd)), c.sub(x, k(bias)), k(0))));
  }
  if (op == "Sinh" || op == "Cosh") {
    Value a = c.exp(x), b = c.exp(c.neg(x));
    return done(c.mul(k(0.5), op == "Sinh" ? c.sub(a, b) : c.add(a, b)));
  }
  if (op == "Tan")
    return done(c.div(c.unary(wg::SinOp::getOperationName(), x),
                      c.unary(wg::CosOp::getOperationName(), x)));
  if (op == "Asinh") { // odd, so from |x|: log(|x| + sqrt(x^2 + 1)) loses -x's digits
    Value a = c.abs(x);
    Value y = c.log(c.add(a, c.sqrt(c.add(c.mul(x, x), k(1)))));
    return done(c.where(c.less(x, k(0)), c.neg(y), y));
  }
  if (op == "Acosh")
    return done(c.log(c.add(x, c.sqrt(c.sub(c.mul(x, x), k(1))))));
  if (op == "Atanh")
    return done(c.mul(k(0.5), c.log(c.div(c.add(k(1), x), c.sub(k(1), x)))));
  if (op == "IsNaN")
    return done(c.unary(wg::NotOp::getOperationName(), c.equal(x, x)));
  if (op == "IsInf") {
    if (!isa<FloatType>(element)) {
      nodeError("IsInf takes a float tensor");
      return failure();
    }
    Value pos = c.equal(x, k(INFINITY)), neg = c.equal(x, k(-INFINITY));
    bool p = intAttr(node, "detect_positive", 1), n = intAttr(node, "detect_negative", 1);
    if (p && n)
      return done(c.op(wg::OrOp::getOperationName(), {pos, neg}));
    if (p || n)
      return done(p ? pos : neg);
    return done(c.equal(x, k(NAN))); // false everywhere (NaN equals nothing)
  }
  if (op == "Round")
    return done(roundHalfEven(c, x));
  if (op == "Atan" || op == "Asin" || op == "Acos") {
    Value t = op == "Atan" ? x : c.div(x, c.sqrt(c.sub(k(1), c.mul(x, x))));
    Value y = arcTangent(c, t);
    return done(op == "Acos" ? c.sub(k(M_PI / 2), y) : y);
  }
  if (op == "QuantizeLinear" || op == "DequantizeLinear")
    return convertQuantize(node, in, results);
  if (op == "CastLike") {
    if (in.size() < 2 || !in[1])
      return failure();
    return done(c.op(wg::CastOp::getOperationName(), {x}, {},
                     RankedTensorType::get(typeOf(x).getShape(), typeOf(in[1]).getElementType())));
  }
  if (op == "Dropout")
    return convertDropout(node, in, results);
  if (op == "ArgMax" || op == "ArgMin" || op == "Hardmax")
    return convertArgExtreme(node, in, results);
  if (op == "EyeLike")
    return convertEyeLike(node, in, results);
  if (op.ends_with("Window"))
    return convertWindowFunction(node, in, results);
  if (op == "OneHot")
    return convertOneHot(node, in, results);
  if (op == "CumSum")
    return convertCumSum(node, in, results);
  if (op == "NegativeLogLikelihoodLoss" || op == "SoftmaxCrossEntropyLoss")
    return convertLoss(node, in, results);
  return convertCompositeReduce(node, in, results);
}

/// Dropout at inference is the identity; its mask, when asked for, is all
/// true. Training mode draws a random mask: it imports only with ratio 0.
LogicalResult Importer::convertDropout(const onnx::NodeProto &node, ArrayRef<Value> in,
                                       SmallVectorImpl<Value> &results) {
  if (in.size() > 2 && in[2]) {
    auto training = wg::getConstantElements(in[2]);
    if (!training || training.getNumElements() != 1) {
      nodeError("training_mode is not a compile-time constant (bind it with --bind)");
      return failure();
    }
    bool on = isa<FloatType>(training.getElementType())
                  ? !(*training.getValues<APFloat>().begin()).isZero()
                  : !(*training.getValues<APInt>().begin()).isZero();
    auto ratio = in.size() > 1 && in[1] ? wg::getConstantElements(in[1]) : DenseElementsAttr();
    bool zero =
        ratio && ratio.getNumElements() == 1 && (*ratio.getValues<APFloat>().begin()).isZero();
    if (on && !zero) {
      nodeError("training-mode Dropout draws a random mask, which wsc does not");
      return failure();
    }
  }
  results.push_back(in[0]);
  if (node.output_size() > 1) {
    auto mask = RankedTensorType::get(typeOf(in[0]).getShape(), builder.getI1Type());
    results.push_back(constant(DenseElementsAttr::get(mask, true)));
  }
  return success();
}

/// ArgMax, ArgMin and Hardmax: the first (or with select_last_index the
/// last) index along `axis` whose element equals the extreme. The indices
/// are floats (exact below 2^24) reduced by min (or max), then i64; Hardmax
/// is 1 at the first largest, 0 elsewhere.
LogicalResult Importer::convertArgExtreme(const onnx::NodeProto &node, ArrayRef<Value> in,
                                          SmallVectorImpl<Value> &results) {
  Composer c = composer();
  Value x = in[0];
  auto type = typeOf(x);
  bool hardmax = node.op_type() == "Hardmax";
  int64_t rank = type.getRank(), axis = intAttr(node, "axis", hardmax && opset >= 13 ? -1 : 0);
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1) || !type.hasStaticShape()) {
    nodeError("axis " + std::to_string(axis) + " is not an axis of a static input");
    return failure();
  }
  axis = axis < 0 ? axis + rank : axis;
  if (hardmax && opset < 13) // the old form: rows of the input flattened at `axis`
    return nodeError("Hardmax's opset-" + std::to_string(opset) +
                     " form (rows flattened at axis) is not supported"),
           failure();
  int64_t n = type.getDimSize(axis);
  bool last = intAttr(node, "select_last_index", 0);
  bool keep = hardmax || intAttr(node, "keepdims", 1);
  auto reduce = [&](StringRef name, Value v, bool keepdims) {
    return c.op(name, {v},
                {attr("axes", builder.getDenseI64ArrayAttr({axis})),
                 attr("keepdims", builder.getBoolAttr(keepdims))});
  };
  StringRef extreme = node.op_type() == "ArgMin" ? wg::ReduceMinOp::getOperationName()
                                                 : wg::ReduceMaxOp::getOperationName();
  Value hit = c.equal(x, reduce(extreme, x, true));
  Value index = positionsAlong(rank, axis, n);
  Value none = scalarConstant(builder.getF32Type(), last ? -1.0 : double(n));
  Value picked =
      reduce(last ? wg::ReduceMaxOp::getOperationName() : wg::ReduceMinOp::getOperationName(),
             c.where(hit, index, none), keep);
  Value v = hardmax ? c.op(wg::CastOp::getOperationName(), {c.equal(index, picked)}, {}, type)
                    : c.op(wg::CastOp::getOperationName(), {picked}, {},
                           picked ? RankedTensorType::get(typeOf(picked).getShape(),
                                                          builder.getIntegerType(64))
                                  : Type());
  return c.finish(results, {v});
}

/// EyeLike: ones on the k-th diagonal of a 2-D shape, in `dtype` (default:
/// the input's type).
LogicalResult Importer::convertEyeLike(const onnx::NodeProto &node, ArrayRef<Value> in,
                                       SmallVectorImpl<Value> &results) {
  auto type = typeOf(in[0]);
  if (type.getRank() != 2 || !type.hasStaticShape())
    return nodeError("takes a static 2-D input"), failure();
  Type element = type.getElementType();
  if (findAttr(node, "dtype")) {
    auto e = elementType(int32_t(intAttr(node, "dtype", 1)), currentNode + ": EyeLike dtype");
    if (::failed(e))
      return failure();
    element = *e;
  }
  int64_t rows = type.getDimSize(0), cols = type.getDimSize(1), k = intAttr(node, "k", 0);
  auto result = RankedTensorType::get({rows, cols}, element);
  SmallVector<Attribute> values;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      values.push_back(j - i == k ? builder.getOneAttr(element) : builder.getZeroAttr(element));
  results.push_back(constant(DenseElementsAttr::get(result, values)));
  return success();
}

/// HannWindow, HammingWindow and BlackmanWindow of a bound size: the sum of
/// cosines a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), N the size
/// (periodic) or the size - 1 (symmetric), as a constant.
LogicalResult Importer::convertWindowFunction(const onnx::NodeProto &node, ArrayRef<Value> in,
                                              SmallVectorImpl<Value> &results) {
  auto size = wg::getConstantElements(in[0]);
  if (!size || size.getNumElements() != 1)
    return nodeError("the size is not a compile-time constant (bind it with --bind)"), failure();
  int64_t n = (*size.getValues<APInt>().begin()).getSExtValue();
  if (n <= 0)
    return nodeError("the size must be positive"), failure();
  auto element =
      elementType(int32_t(intAttr(node, "output_datatype", 1)), currentNode + ": output_datatype");
  if (::failed(element))
    return failure();
  StringRef op = node.op_type();
  double a0 = 0.5, a1 = 0.5, a2 = 0.0;
  if (op == "HammingWindow")
    a0 = 25.0 / 46, a1 = 21.0 / 46;
  else if (op == "BlackmanWindow")
    a0 = 0.42, a1 = 0.5, a2 = 0.08;
  double period = intAttr(node, "periodic", 1) ? double(n) : double(std::max<int64_t>(1, n - 1));
  SmallVector<Attribute> values;
  for (int64_t i = 0; i < n; ++i) {
    double w = a0 - a1 * std::cos(2 * M_PI * i / period) + a2 * std::cos(4 * M_PI * i / period);
    values.push_back(isa<FloatType>(*element)
                         ? Attribute(builder.getFloatAttr(*element, w))
                         : Attribute(builder.getIntegerAttr(*element, int64_t(w))));
  }
  results.push_back(constant(DenseElementsAttr::get(RankedTensorType::get({n}, *element), values)));
  return success();
}

/// OneHot: `on` where an index (negative ones counted from depth) equals
/// the position along the new axis, `off` elsewhere; values = [off, on].
LogicalResult Importer::convertOneHot(const onnx::NodeProto &node, ArrayRef<Value> in,
                                      SmallVectorImpl<Value> &results) {
  Composer c = composer();
  if (in.size() < 3 || !in[1] || !in[2])
    return nodeError("expects indices, depth and values"), failure();
  auto depthValue = wg::getConstantElements(in[1]);
  if (!depthValue || depthValue.getNumElements() != 1)
    return nodeError("depth is not a compile-time constant (bind it with --bind)"), failure();
  int64_t depth = isa<FloatType>(depthValue.getElementType())
                      ? int64_t((*depthValue.getValues<APFloat>().begin()).convertToDouble())
                      : (*depthValue.getValues<APInt>().begin()).getSExtValue();
  auto indices = typeOf(in[0]), values = typeOf(in[2]);
  int64_t rank = indices.getRank() + 1, axis = intAttr(node, "axis", -1);
  if (depth <= 0 || axis < -rank || axis >= rank || values.getNumElements() != 2 ||
      !indices.hasStaticShape())
    return nodeError("needs static indices, a positive depth, an axis of the result and two "
                     "values"),
           failure();
  axis = axis < 0 ? axis + rank : axis;
  // The indices as floats (exact below 2^24), the negative ones from the end.
  auto f32 = builder.getF32Type();
  Value index = c.op(wg::CastOp::getOperationName(), {in[0]}, {},
                     RankedTensorType::get(indices.getShape(), f32));
  index = c.where(c.less(index, scalarConstant(f32, 0)), c.add(index, scalarConstant(f32, depth)),
                  index);
  Value hit = c.equal(c.unsqueeze(index, {axis}), positionsAlong(rank, axis, depth));
  auto pick = [&](int64_t i) {
    Value flat = c.op(wg::ReshapeOp::getOperationName(), {in[2]}, {},
                      RankedTensorType::get({2}, values.getElementType()));
    return c.op(wg::GatherOp::getOperationName(),
                {flat, constant(DenseElementsAttr::get(
                           RankedTensorType::get({}, builder.getIntegerType(64)), i))},
                {attr("axis", builder.getI64IntegerAttr(0))});
  };
  Value y = c.where(hit, pick(1), pick(0));
  return c.finish(results, {y});
}

/// CumSum along `axis`: a product with a triangle of ones over that axis,
/// moved last (inclusive or exclusive, forward or reverse).
LogicalResult Importer::convertCumSum(const onnx::NodeProto &node, ArrayRef<Value> in,
                                      SmallVectorImpl<Value> &results) {
  Composer c = composer();
  auto type = typeOf(in[0]);
  if (in.size() < 2 || !in[1])
    return nodeError("expects x and axis"), failure();
  auto axisValue = wg::getConstantElements(in[1]);
  if (!axisValue || axisValue.getNumElements() != 1)
    return nodeError("axis is not a compile-time constant (bind it with --bind)"), failure();
  if (!isa<FloatType, IntegerType>(type.getElementType()) || !type.hasStaticShape() ||
      type.getRank() == 0)
    return nodeError("takes a static float or integer tensor"), failure();
  int64_t rank = type.getRank(), axis = (*axisValue.getValues<APInt>().begin()).getSExtValue();
  if (axis < -rank || axis >= rank)
    return nodeError("axis " + std::to_string(axis) + " is out of range"), failure();
  axis = axis < 0 ? axis + rank : axis;
  int64_t n = type.getDimSize(axis);
  bool exclusive = intAttr(node, "exclusive", 0), reverse = intAttr(node, "reverse", 0);
  // y[j] = sum of x[i] over i before j (or after, reversed), j too unless exclusive.
  SmallVector<float> triangle;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      triangle.push_back(
          float(reverse ? (exclusive ? i > j : i >= j) : (exclusive ? i < j : i <= j)));
  // Integers (a padding mask's positions) sum in f32: exact while every
  // partial sum stays within 2^24.
  bool integer = isa<IntegerType>(type.getElementType());
  Type element = integer ? builder.getF32Type() : type.getElementType();
  Value ones =
      c.op(wg::CastOp::getOperationName(),
           {constant(DenseElementsAttr::get(RankedTensorType::get({n, n}, builder.getF32Type()),
                                            ArrayRef<float>(triangle)))},
           {}, RankedTensorType::get({n, n}, element));
  SmallVector<int64_t> perm;
  for (int64_t i = 0; i < rank; ++i)
    if (i != axis)
      perm.push_back(i);
  perm.push_back(axis);
  SmallVector<int64_t> back(rank);
  for (int64_t i = 0; i < rank; ++i)
    back[perm[i]] = i;
  bool moves = axis != rank - 1;
  auto transpose = [&](Value v, ArrayRef<int64_t> p) { return moves ? c.transpose(v, p) : v; };
  Value x = transpose(in[0], perm);
  if (integer && x)
    x = c.op(wg::CastOp::getOperationName(), {x}, {},
             RankedTensorType::get(typeOf(x).getShape(), element));
  if (rank == 1) // a matmul needs a row
    x = c.unsqueeze(x, {0});
  Value y = c.op(wg::MatmulOp::getOperationName(), {x, ones});
  if (rank == 1)
    y = c.reshape(y, type.getShape());
  y = transpose(y, back);
  if (integer)
    y = c.op(wg::CastOp::getOperationName(), {y}, {}, type);
  return c.finish(results, {y});
}

/// (sum over `axes` of |x|^p)^(1/p), the axes kept.
Value Importer::lpNorm(Composer &c, Value x, ArrayRef<int64_t> axes, int64_t p) {
  Type element = typeOf(x).getElementType();
  auto sum = [&](Value v) {
    return c.op(wg::ReduceSumOp::getOperationName(), {v},
                {attr("axes", builder.getDenseI64ArrayAttr(axes)),
                 attr("keepdims", builder.getBoolAttr(true))});
  };
  if (p == 1)
    return sum(c.abs(x));
  if (p == 2)
    return c.sqrt(sum(c.mul(x, x)));
  auto power = [&](Value v, double e) {
    return c.op(wg::PowOp::getOperationName(), {v, scalarConstant(element, e)});
  };
  return power(sum(power(c.abs(x), double(p))), 1.0 / double(p));
}

/// The reductions that are a sum (or max) with an elementwise step before
/// and after it, and the global pools (a mean or max over the axes after
/// the channels).
LogicalResult Importer::convertCompositeReduce(const onnx::NodeProto &node, ArrayRef<Value> in,
                                               SmallVectorImpl<Value> &results) {
  StringRef op = node.op_type();
  Composer c = composer();
  Value x = in[0];
  if (op == "LpNormalization") {
    int64_t rank = typeOf(x).getRank(), axis = intAttr(node, "axis", -1), p = intAttr(node, "p", 2);
    if (axis < -rank || axis >= rank || (p != 1 && p != 2))
      return nodeError("needs an axis of the input and p = 1 or 2"), failure();
    Value norm = lpNorm(c, x, {axis < 0 ? axis + rank : axis}, p);
    return c.finish(results, {c.div(x, norm)});
  }
  SmallVector<int64_t> spatial;
  for (int64_t i = 2; i < typeOf(x).getRank(); ++i)
    spatial.push_back(i);
  if (op == "GlobalLpPool") {
    int64_t p = intAttr(node, "p", 2);
    if (p <= 0)
      return nodeError("p = " + std::to_string(p) + " must be positive"), failure();
    return c.finish(results, {lpNorm(c, x, spatial, p)});
  }
  if (op == "GlobalAveragePool" || op == "GlobalMaxPool") {
    SmallVector<int64_t> axes = spatial;
    StringRef name = op == "GlobalAveragePool" ? wg::ReduceMeanOp::getOperationName()
                                               : wg::ReduceMaxOp::getOperationName();
    Value v = c.op(name, {x},
                   {attr("axes", builder.getDenseI64ArrayAttr(axes)),
                    attr("keepdims", builder.getBoolAttr(true))});
    if (!c.ok)
      return failure();
    results.push_back(v);
    return success();
  }
  auto given = intsFromInputOrAttr(node, in, 1, "axes");
  if (::failed(given))
    return failure();
  SmallVector<int64_t> axes = given->value_or(SmallVector<int64_t>());
  bool none = axes.empty() && intAttr(node, "noop_with_empty_axes", 0);
  bool keep = intAttr(node, "keepdims", 1) != 0;
  auto reduce = [&](StringRef name, Value v, bool keepdims) {
    if (none)
      return v;
    return c.op(name, {v},
                {attr("axes", builder.getDenseI64ArrayAttr(axes)),
                 attr("keepdims", builder.getBoolAttr(keepdims))});
  };
  StringRef sum = wg::ReduceSumOp::getOperationName();
  Value v;
  if (op == "ReduceL1")
    v = reduce(sum, c.abs(x), keep);
  else if (op == "ReduceL2")
    v = c.sqrt(reduce(sum, c.mul(x, x), keep));
  else if (op == "ReduceSumSquare")
    v = reduce(sum, c.mul(x, x), keep);
  else if (op == "ReduceProd") {
    // |x|'s product as exp(sum(log |x|)) (a zero gives 0), its sign from
    // the count of negatives.
    if (!isa<FloatType>(typeOf(x).getElementType()))
      return nodeError("ReduceProd takes a float tensor"), failure();
    Type element = typeOf(x).getElementType();
    auto k = [&](double v) { return scalarConstant(element, v); };
    Value magnitude = c.exp(reduce(sum, c.log(c.abs(x)), keep));
    Value negatives =
        reduce(sum, c.op(wg::CastOp::getOperationName(), {c.less(x, k(0))}, {}, typeOf(x)), keep);
    Value odd = c.abs(c.op(wg::ModOp::getOperationName(), {negatives, k(2)},
                           {attr("fmod", builder.getBoolAttr(true))}));
    v = c.mul(magnitude, c.sub(k(1), c.mul(k(2), odd)));
  } else if (op == "ReduceLogSum")
    v = c.log(reduce(sum, x, keep));
  else if (op == "ReduceLogSumExp") {
    // log(sum(e^(x - m))) + m, with m the max: e^x alone overflows past 88.
    StringRef max = wg::ReduceMaxOp::getOperationName();
    Value m = reduce(max, x, true);
    Value total = reduce(sum, c.exp(c.sub(x, m)), keep);
    v = c.add(c.log(total), keep || !total ? m : c.reshape(m, typeOf(total)));
  } else {
    nodeError("is not supported");
    return failure();
  }
  return c.finish(results, {v});
}

/// NegativeLogLikelihoodLoss of log-probabilities [N, C, d...] at targets
/// [N, d...], and SoftmaxCrossEntropyLoss (the same of the scores'
/// LogSoftmax over C, which is its second result). The classes are moved
/// last, so that every step splits into rows when it does not fit a PE:
/// each target's entry is picked by comparing the target with every class
/// (not a gather by data) and summed by a product with ones; its weight
/// likewise by a product with the weights. Then the entries are negated,
/// weighted (0 at ignore_index) and reduced: none, sum, or mean over the
/// weights.
LogicalResult Importer::convertLoss(const onnx::NodeProto &node, ArrayRef<Value> in,
                                    SmallVectorImpl<Value> &results) {
  Composer c = composer();
  if (in.size() < 2 || !in[1])
    return nodeError("expects the scores and the targets"), failure();
  Value scores = in[0], target = in[1];
  Value weight = in.size() > 2 ? in[2] : Value();
  auto type = typeOf(scores);
  int64_t rank = type.getRank();
  if (rank < 2 || !type.hasStaticShape() || !typeOf(target).hasStaticShape())
    return nodeError("the scores must be static and [N, C, ...]"), failure();
  const onnx::AttributeProto *r = findAttr(node, "reduction");
  std::string reduction = r ? r->s() : "mean";
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return nodeError("reduction '" + reduction + "' is not none, sum or mean"), failure();
  // [N, C, d...] <-> [N, d..., C]
  SmallVector<int64_t> last = {0}, back = {0, rank - 1};
  for (int64_t i = 2; i < rank; ++i)
    last.push_back(i), back.push_back(i - 1);
  last.push_back(1);
  auto transpose = [&](Value v, ArrayRef<int64_t> perm) {
    return rank == 2 ? v : c.transpose(v, perm);
  };
  bool softmax = node.op_type() == "SoftmaxCrossEntropyLoss";
  Value logProb = transpose(scores, last);
  if (softmax)
    logProb = c.op(wg::LogSoftmaxOp::getOperationName(), {logProb},
                   {attr("axis", builder.getI64IntegerAttr(-1))}, logProb.getType());
  Type element = type.getElementType(), index = typeOf(target).getElementType();
  int64_t classes = type.getDimSize(1);
  SmallVector<int64_t> iota;
  for (int64_t i = 0; i < classes; ++i)
    iota.push_back(i);
  Value classIds = c.op(
      wg::CastOp::getOperationName(),
      {constant(DenseElementsAttr::get(RankedTensorType::get({classes}, builder.getIntegerType(64)),
                                       ArrayRef<int64_t>(iota)))},
      {}, RankedTensorType::get({classes}, index));
  Value hit = c.equal(c.unsqueeze(target, {-1}), classIds);
  Value zero = scalarConstant(element, 0.0);
  // [N, d..., C] @ [C, 1] -> [N, d...]
  auto overClasses = [&](Value v, Value column) {
    Value product = c.op(wg::MatmulOp::getOperationName(), {v, column});
    return c.op(wg::ReshapeOp::getOperationName(), {product}, {},
                RankedTensorType::get(typeOf(target).getShape(), element));
  };
  Value ones = constant(DenseElementsAttr::get(RankedTensorType::get({classes, 1}, element),
                                               builder.getFloatAttr(element, 1.0)));
  Value picked = overClasses(c.where(hit, logProb, zero), ones);
  Value w; // each element's weight; null: all 1
  if (weight)
    w = overClasses(c.op(wg::CastOp::getOperationName(), {hit}, {},
                         RankedTensorType::get(typeOf(hit).getShape(), element)),
                    c.op(wg::ReshapeOp::getOperationName(), {weight}, {},
                         RankedTensorType::get({classes, 1}, element)));
  if (findAttr(node, "ignore_index")) {
    Value ignored =
        c.equal(target, scalarConstant(index, double(intAttr(node, "ignore_index", 0))));
    w = c.where(ignored, zero, w ? w : scalarConstant(element, 1.0));
  }
  Value loss = c.neg(w ? c.mul(picked, w) : picked);
  auto total = [&](Value v) {
    return c.op(wg::ReduceSumOp::getOperationName(), {v},
                {attr("axes", builder.getDenseI64ArrayAttr({})),
                 attr("keepdims", builder.getBoolAttr(false))});
  };
  if (reduction != "none")
    loss = total(loss);
  if (reduction == "mean")
    loss = c.div(loss,
                 w ? total(w) : scalarConstant(element, double(typeOf(target).getNumElements())));
  Value logProbOut = softmax && node.output_size() > 1 ? transpose(logProb, back) : Value();
  if (!c.ok)
    return failure();
  results.push_back(loss);
  if (logProbOut)
    results.push_back(logProbOut);
  return success();
}
