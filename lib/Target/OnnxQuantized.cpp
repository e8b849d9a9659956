//===- OnnxQuantized.cpp - integer and quantized ONNX ops ------------------===//
//
// MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv,
// DynamicQuantizeLinear and BitShift, built from other wsgraph ops. The PEs
// multiply in f32, which holds every integer below 2^24 exactly: a product of
// zero-point-shifted 8-bit operands whose sums could pass that is taken over
// their 4-bit halves, and the partial products are added as int32.
//
//===----------------------------------------------------------------------===//
#include "OnnxImporter.h"

#include <cmath>

using namespace wsc::onnx_import;

bool wsc::onnx_import::isQuantizedOp(StringRef op) {
  return llvm::is_contained({"MatMulInteger", "ConvInteger", "QLinearMatMul", "QLinearConv",
                             "DynamicQuantizeLinear", "BitShift"},
                            op);
}

namespace {
/// Products summed exactly in one f32 sum: |a - a_zero| and |b - b_zero| are
/// at most 255, so 256 of their products stay below 2^24.
constexpr int64_t kExactTerms = 256;
} // namespace

Value Importer::castTo(Composer &c, Value v, Type element) {
  if (!v)
    return c.ok = false, Value();
  if (typeOf(v).getElementType() == element)
    return v;
  return c.op(wg::CastOp::getOperationName(), {v}, {},
              RankedTensorType::get(typeOf(v).getShape(), element));
}

/// `v` (a scalar, or 1-D along `axis`) shaped to broadcast along `axis` of a
/// rank-`rank` operand, as f32.
Value Importer::alongAxis(Composer &c, Value v, int64_t rank, int64_t axis) {
  Type f32 = builder.getF32Type();
  if (!v)
    return scalarConstant(f32, 0);
  auto type = typeOf(v);
  if (type.getNumElements() == 1)
    return castTo(c, c.reshape(v, ArrayRef<int64_t>{}), f32);
  SmallVector<int64_t> shape(std::max<int64_t>(rank - axis, 1), 1);
  shape[0] = type.getNumElements();
  return castTo(c, c.reshape(v, shape), f32);
}

/// An integer-valued f32 `v` in [-255, 255] as 16 * high + low, low in [0, 15].
static std::pair<Value, Value> nibbles(Composer &c, Value v, Value sixteen) {
  Value high = c.op(wg::FloorOp::getOperationName(), {c.div(v, sixteen)}, {}, v.getType());
  return {high, c.sub(v, c.mul(high, sixteen))};
}

/// product(a, b) of integer-valued f32 operands in [-255, 255] that sums
/// `terms` products per result, as exact int32. Past 256 terms an operand is
/// split into 4-bit halves (products below 2^12, exact to 4,096 terms), past
/// 4,096 both are (below 2^8: 65,536 terms); the parts add as int32.
Value Importer::exactIntegerProduct(Composer &c, Value a, Value b, int64_t terms,
                                    function_ref<Value(Value, Value)> product) {
  Type f32 = builder.getF32Type(), i32 = builder.getI32Type();
  if (terms > 65536) {
    nodeError("sums " + std::to_string(terms) +
              " products per result; wsc sums at most 65536 "
              "exactly");
    return c.ok = false, Value();
  }
  auto exact = [&](Value x, Value y) { return castTo(c, product(x, y), i32); };
  if (terms <= kExactTerms)
    return exact(a, b);
  Value sixteen = scalarConstant(f32, 16);
  auto [bHigh, bLow] = nibbles(c, b, sixteen);
  auto scaled = [&](Value v, int64_t k) { return c.mul(v, scalarConstant(i32, double(k))); };
  // Each product in its own statement: the ops come in one order whatever
  // order a host compiler evaluates arguments in.
  if (terms <= 4096) {
    Value high = exact(a, bHigh), low = exact(a, bLow);
    return c.add(scaled(high, 16), low);
  }
  auto [aHigh, aLow] = nibbles(c, a, sixteen);
  Value hh = exact(aHigh, bHigh), hl = exact(aHigh, bLow), lh = exact(aLow, bHigh),
        ll = exact(aLow, bLow);
  Value middle = scaled(c.add(hl, lh), 16);
  return c.add(c.add(scaled(hh, 256), middle), ll);
}

/// A quantized operand less its zero point, as f32: the zero point is a
/// scalar or 1-D along `axis`.
Value Importer::shifted(Composer &c, Value q, Value zero, int64_t axis) {
  int64_t rank = typeOf(q).getRank();
  Value qf = castTo(c, q, builder.getF32Type());
  return zero ? c.sub(qf, alongAxis(c, zero, rank, axis < 0 ? axis + rank : axis)) : qf;
}

/// round(acc * scale) + zero saturated to the zero point's type (uint8
/// without one), as QuantizeLinear rounds: half to even.
Value Importer::requantize(Composer &c, Value acc, Value scale, Value zero) {
  Type f32 = builder.getF32Type();
  auto integer = dyn_cast<IntegerType>(zero ? typeOf(zero).getElementType()
                                            : Type(builder.getIntegerType(8, false)));
  if (!integer || integer.getWidth() > 16)
    return nodeError("quantizes to 8- or 16-bit integers only"), c.ok = false, Value();
  unsigned bits = integer.getWidth();
  double lo = integer.isUnsigned() ? 0 : -std::ldexp(1.0, bits - 1);
  double hi = integer.isUnsigned() ? std::ldexp(1.0, bits) - 1 : std::ldexp(1.0, bits - 1) - 1;
  Value z = zero ? castTo(c, c.reshape(zero, ArrayRef<int64_t>{}), f32) : scalarConstant(f32, 0);
  Value rounded = roundHalfEven(c, c.mul(castTo(c, acc, f32), scale));
  Value q = c.add(rounded, z);
  Value low = scalarConstant(f32, lo), high = scalarConstant(f32, hi);
  q = c.min(c.max(q, low), high);
  return castTo(c, q, integer);
}

/// The zero-point-shifted product of MatMulInteger: a_zero per row of A,
/// b_zero per column of B.
Value Importer::integerMatmul(Composer &c, Value a, Value aZero, Value b, Value bZero) {
  int64_t rankA = typeOf(a).getRank(), rankB = typeOf(b).getRank();
  if (rankA < 2 || rankB < 2) {
    // numpy's 1-D forms: a vector operand as one row (or column).
    if (rankA == 1)
      a = c.unsqueeze(a, {0});
    if (rankB == 1)
      b = c.unsqueeze(b, {1});
    Value y = integerMatmul(c, a, aZero, b, bZero);
    if (!y)
      return y;
    SmallVector<int64_t> shape(typeOf(y).getShape());
    if (rankB == 1)
      shape.pop_back();
    if (rankA == 1)
      shape.erase(shape.end() - (rankB == 1 ? 1 : 2));
    return c.reshape(y, shape);
  }
  Value as = shifted(c, a, aZero, rankA - 2), bs = shifted(c, b, bZero, rankB - 1);
  return exactIntegerProduct(c, as, bs,
                             typeOf(a).getShape().back(), [&](Value x, Value y) {
                               return c.op(wg::MatmulOp::getOperationName(), {x, y});
                             });
}

/// ConvInteger's int32 result: the float convolution of the shifted
/// operands, exact as exactIntegerProduct makes it.
Value Importer::integerConv(Composer &c, const onnx::NodeProto &node, Value x, Value xZero, Value w,
                            Value wZero) {
  auto wType = typeOf(w);
  int64_t terms = 1;
  for (int64_t d : wType.getShape().drop_front(1))
    terms *= d;
  Value xs = shifted(c, x, xZero, 1), ws = shifted(c, w, wZero, 0);
  return exactIntegerProduct(c, xs, ws, terms,
                             [&](Value xf, Value wf) {
                               SmallVector<Value> out;
                               if (!xf || !wf || ::failed(convertWindowOp(node, {xf, wf}, out)))
                                 return c.ok = false, Value();
                               return out.front();
                             });
}

LogicalResult Importer::convertQuantizedOp(const onnx::NodeProto &node, ArrayRef<Value> in,
                                           SmallVectorImpl<Value> &results) {
  StringRef op = node.op_type();
  Composer c = composer();
  auto input = [&](size_t i) { return i < in.size() ? in[i] : Value(); };
  if (op == "BitShift")
    return convertBitShift(node, in, results);
  if (op == "DynamicQuantizeLinear")
    return convertDynamicQuantize(node, in, results);
  if ((op == "MatMulInteger" || op == "ConvInteger") && !input(1))
    return nodeError("expects two operands"), failure();
  if (op == "MatMulInteger")
    return c.finish(results, {integerMatmul(c, in[0], input(2), input(1), input(3))});
  if (op == "ConvInteger")
    return c.finish(results, {integerConv(c, node, in[0], input(2), input(1), input(3))});
  if (in.size() < 8 || llvm::any_of(in.take_front(8), [](Value v) { return !v; }))
    return nodeError("expects 8 inputs: each operand with its scale and zero point"), failure();
  // QLinearMatMul and QLinearConv: the integer product, then y's scale.
  bool conv = op == "QLinearConv";
  int64_t rankW = typeOf(in[3]).getRank();
  Value acc = conv ? integerConv(c, node, in[0], in[2], in[3], in[5])
                   : integerMatmul(c, in[0], in[2], in[3], in[5]);
  int64_t rankOut = acc ? typeOf(acc).getRank() : 0;
  if (conv && input(8)) {
    SmallVector<int64_t> shape(rankOut - 1, 1);
    shape[0] = typeOf(input(8)).getNumElements();
    acc = c.add(acc, c.reshape(input(8), shape));
  }
  // Per-row scales of A, per-column (or per-output-channel) scales of B.
  Value sa = alongAxis(c, in[1], conv ? rankOut : std::max<int64_t>(rankOut, 2),
                       conv ? 0 : std::max<int64_t>(rankOut, 2) - 2);
  Value sb = conv ? alongAxis(c, in[4], rankOut, 1)
                  : alongAxis(c, in[4], rankOut, rankW == 1 ? rankOut : rankOut - 1);
  Value scale = c.div(c.mul(sa, sb), alongAxis(c, in[6], 1, 0));
  return c.finish(results, {requantize(c, acc, scale, in[7])});
}

/// DynamicQuantizeLinear: uint8 with the scale and zero point that map
/// [min(0, x), max(0, x)] onto [0, 255].
LogicalResult Importer::convertDynamicQuantize(const onnx::NodeProto &node, ArrayRef<Value> in,
                                               SmallVectorImpl<Value> &results) {
  Composer c = composer();
  Type f32 = builder.getF32Type(), u8 = builder.getIntegerType(8, false);
  if (typeOf(in[0]).getElementType() != f32)
    return nodeError("quantizes f32 only"), failure();
  auto whole = [&](StringRef name) {
    return c.op(name, {in[0]},
                {attr("axes", builder.getDenseI64ArrayAttr({})),
                 attr("keepdims", builder.getBoolAttr(false))});
  };
  auto k = [&](double v) { return scalarConstant(f32, v); };
  Value hi = c.max(whole(wg::ReduceMaxOp::getOperationName()), k(0));
  Value lo = c.min(whole(wg::ReduceMinOp::getOperationName()), k(0));
  Value scale = c.div(c.sub(hi, lo), k(255));
  Value zero = c.min(c.max(roundHalfEven(c, c.sub(k(0), c.div(lo, scale))), k(0)), k(255));
  Value y = c.min(c.max(c.add(roundHalfEven(c, c.div(in[0], scale)), zero), k(0)), k(255));
  return c.finish(results, {castTo(c, y, u8), scale, castTo(c, zero, u8)});
}

/// BitShift of unsigned integers: a product with, or a quotient by, 2^y.
/// A shift past the type's width gives 0; a left shift wraps to the width.
LogicalResult Importer::convertBitShift(const onnx::NodeProto &node, ArrayRef<Value> in,
                                        SmallVectorImpl<Value> &results) {
  Composer c = composer();
  const onnx::AttributeProto *direction = findAttr(node, "direction");
  bool left = direction && direction->s() == "LEFT";
  if (!direction || (!left && direction->s() != "RIGHT"))
    return nodeError("direction must be LEFT or RIGHT"), failure();
  if (in.size() < 2 || !in[1])
    return nodeError("expects X and Y"), failure();
  Type element = typeOf(in[0]).getElementType(), f32 = builder.getF32Type();
  unsigned bits = element.getIntOrFloatBitWidth();
  // The PEs hold int32 words: shifts of 31 or more leave nothing.
  int64_t width = std::min<unsigned>(bits, 31);
  Value y = castTo(c, in[1], f32);
  Value beyond = c.op(wg::GreaterEqualOp::getOperationName(), {y, scalarConstant(f32, width)});
  Value amount = c.min(y, scalarConstant(f32, 30));
  Value power = castTo(
      c, roundHalfEven(c, c.op(wg::PowOp::getOperationName(), {scalarConstant(f32, 2), amount})),
      element);
  Value shifted;
  if (!left) {
    shifted = c.div(in[0], power);
  } else if (bits < 32) { // in int32, where 2^bits is a value
    Type i32 = builder.getI32Type();
    Value wide = c.mul(castTo(c, in[0], i32), castTo(c, power, i32));
    shifted = castTo(c,
                     c.op(wg::ModOp::getOperationName(), {wide, scalarConstant(i32, 1 << bits)},
                          {attr("fmod", builder.getBoolAttr(false))}),
                     element);
  } else {
    shifted = c.mul(in[0], power);
  }
  return c.finish(results, {c.where(beyond, scalarConstant(element, 0), shifted)});
}
