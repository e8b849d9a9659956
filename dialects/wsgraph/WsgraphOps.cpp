//===- WsgraphOps.cpp - wsgraph verifiers and type inference --------------===//
#include "wsgraph/WsgraphDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"

using namespace mlir;
using namespace wsc::wsgraph;

#define GET_OP_CLASSES
#include "wsgraph/WsgraphOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<int64_t>> wsc::wsgraph::broadcastShapes(ArrayRef<int64_t> a,
                                                             ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == db || db == 1)
      result[i] = da;
    else if (da == 1)
      result[i] = db;
    else if (ShapedType::isDynamic(da) || ShapedType::isDynamic(db))
      result[i] = ShapedType::isDynamic(da) ? db : da;
    else
      return failure();
  }
  return result;
}

FailureOr<int64_t> wsc::wsgraph::normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return failure();
  return axis < 0 ? axis + rank : axis;
}

static std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleave(
      shape, os, [&](int64_t d) { ShapedType::isDynamic(d) ? os << "?" : os << d; }, ", ");
  os << "]";
  return s;
}

static RankedTensorType tensorOf(ArrayRef<int64_t> shape, Type element) {
  return RankedTensorType::get(shape, element);
}

static RankedTensorType rankedType(Value v) { return cast<RankedTensorType>(v.getType()); }

/// Emits "'op' expects operands of one element type" unless all `operands`
/// (null ones skipped) have the same element type.
static LogicalResult verifyOneElementType(std::optional<Location> loc, StringRef opName,
                                          ArrayRef<Value> operands) {
  Type first;
  for (Value v : operands) {
    if (!v)
      continue;
    Type element = getElementTypeOrSelf(v.getType());
    if (!first)
      first = element;
    else if (element != first)
      return emitOptionalError(loc, "'", opName, "' expects operands of one element type, got ",
                               first, " and ", element);
  }
  return success();
}

static LogicalResult inferBroadcast(std::optional<Location> loc, StringRef opName,
                                    ArrayRef<Value> operands, Type resultElement,
                                    SmallVectorImpl<Type> &inferred) {
  SmallVector<int64_t> shape;
  for (Value v : operands) {
    auto next = broadcastShapes(shape, rankedType(v).getShape());
    if (failed(next))
      return emitOptionalError(loc, "'", opName, "' operand shapes ", shapeStr(shape), " and ",
                               shapeStr(rankedType(v).getShape()), " do not broadcast");
    shape = *next;
  }
  inferred.push_back(tensorOf(shape, resultElement));
  return success();
}

/// What the operands of a binary op may be and what its result is.
enum class BinaryKind {
  Arithmetic, // one element type (pow: any exponent type), result of that type
  Numeric,    // one float or integer type (not i1), result of that type
  Compare,    // one float or integer type (not i1), i1 result
  Equal,      // one element type, i1 result
  Logical,    // i1 operands, i1 result
  Bitwise,    // one integer type (not i1), result of that type
};

static bool isNumeric(Type t) {
  return isa<FloatType>(t) || (isa<IntegerType>(t) && !t.isInteger(1));
}

template <typename BinaryOp>
static LogicalResult inferBinary(std::optional<Location> loc, typename BinaryOp::Adaptor adaptor,
                                 SmallVectorImpl<Type> &inferred, BinaryKind kind) {
  Type lhs = getElementTypeOrSelf(adaptor.getLhs().getType());
  Type rhs = getElementTypeOrSelf(adaptor.getRhs().getType());
  StringRef name = BinaryOp::getOperationName();
  // Pow allows a different exponent type, as in ONNX.
  if (lhs != rhs && !std::is_same_v<BinaryOp, PowOp>)
    return emitOptionalError(loc, "'", name, "' expects operands of one element type, got ", lhs,
                             " and ", rhs);
  if ((kind == BinaryKind::Numeric || kind == BinaryKind::Compare) && !isNumeric(lhs))
    return emitOptionalError(loc, "'", name, "' expects float or integer (not i1) operands, got ",
                             lhs);
  if (kind == BinaryKind::Logical && !lhs.isInteger(1))
    return emitOptionalError(loc, "'", name, "' expects i1 operands, got ", lhs);
  if (kind == BinaryKind::Bitwise && (!isa<IntegerType>(lhs) || lhs.isInteger(1)))
    return emitOptionalError(loc, "'", name, "' expects integer (not i1) operands, got ", lhs);
  bool boolResult = kind == BinaryKind::Compare || kind == BinaryKind::Equal ||
                    kind == BinaryKind::Logical;
  Type element = boolResult ? IntegerType::get(lhs.getContext(), 1) : lhs;
  return inferBroadcast(loc, name, {adaptor.getLhs(), adaptor.getRhs()}, element, inferred);
}

#define WSGRAPH_BINARY_INFER(OP, KIND)                                                          \
  LogicalResult OP::inferReturnTypes(MLIRContext *, std::optional<Location> loc,               \
                                     Adaptor adaptor, SmallVectorImpl<Type> &inferred) {       \
    return inferBinary<OP>(loc, adaptor, inferred, BinaryKind::KIND);                          \
  }
WSGRAPH_BINARY_INFER(AddOp, Arithmetic)
WSGRAPH_BINARY_INFER(SubOp, Arithmetic)
WSGRAPH_BINARY_INFER(MulOp, Arithmetic)
WSGRAPH_BINARY_INFER(DivOp, Arithmetic)
WSGRAPH_BINARY_INFER(PowOp, Arithmetic)
WSGRAPH_BINARY_INFER(MaxOp, Numeric)
WSGRAPH_BINARY_INFER(MinOp, Numeric)
WSGRAPH_BINARY_INFER(EqualOp, Equal)
WSGRAPH_BINARY_INFER(LessOp, Compare)
WSGRAPH_BINARY_INFER(LessEqualOp, Compare)
WSGRAPH_BINARY_INFER(GreaterOp, Compare)
WSGRAPH_BINARY_INFER(GreaterEqualOp, Compare)
WSGRAPH_BINARY_INFER(AndOp, Logical)
WSGRAPH_BINARY_INFER(OrOp, Logical)
WSGRAPH_BINARY_INFER(XorOp, Logical)
WSGRAPH_BINARY_INFER(BitwiseAndOp, Bitwise)
WSGRAPH_BINARY_INFER(BitwiseOrOp, Bitwise)
WSGRAPH_BINARY_INFER(BitwiseXorOp, Bitwise)
#undef WSGRAPH_BINARY_INFER

LogicalResult ModOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                      Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  Type lhs = getElementTypeOrSelf(adaptor.getLhs().getType());
  if (isa<FloatType>(lhs) && !adaptor.getFmod())
    return emitOptionalError(loc, "'wsgraph.mod' on floating-point operands needs fmod = true, "
                                  "got ", lhs);
  return inferBinary<ModOp>(loc, adaptor, inferred, BinaryKind::Numeric);
}

//===----------------------------------------------------------------------===//
// Constants and weights
//===----------------------------------------------------------------------===//

int64_t WeightOp::getByteSize() {
  auto type = cast<RankedTensorType>(getType());
  int64_t bytes = (type.getElementTypeBitWidth() + 7) / 8;
  if (!getStrides())
    return type.getNumElements() * bytes;
  if (type.getNumElements() == 0)
    return 0;
  return (fileElement(type.getNumElements() - 1) + 1) * bytes;
}

SmallVector<int64_t> WeightOp::getElementStrides() {
  if (auto strides = getStrides())
    return SmallVector<int64_t>(*strides);
  ArrayRef<int64_t> shape = cast<RankedTensorType>(getType()).getShape();
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = int64_t(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

int64_t WeightOp::fileElement(int64_t flat) {
  auto strides = getStrides();
  if (!strides)
    return flat;
  ArrayRef<int64_t> shape = cast<RankedTensorType>(getType()).getShape();
  int64_t at = 0;
  for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
    at += flat % shape[d] * (*strides)[d];
    flat /= shape[d];
  }
  return at;
}

LogicalResult WeightOp::verify() {
  auto type = cast<RankedTensorType>(getType());
  if (!type.hasStaticShape())
    return emitOpError("weight must have a static shape, got ") << type;
  if (static_cast<int64_t>(getOffset()) < 0)
    return emitOpError("offset must be non-negative, got ")
           << static_cast<int64_t>(getOffset());
  if (getFile() && getFile()->empty())
    return emitOpError("file name must not be empty");
  if (auto strides = getStrides()) {
    if (int64_t(strides->size()) != type.getRank())
      return emitOpError("has ") << strides->size() << " strides for a rank-" << type.getRank()
                                 << " weight";
    if (llvm::any_of(*strides, [](int64_t s) { return s < 0; }))
      return emitOpError("strides must be non-negative");
  }
  return success();
}

// wsgraph.weight "name" (from "file" at N | elided) attr-dict : type
ParseResult WeightOp::parse(OpAsmParser &parser, OperationState &result) {
  std::string name;
  Type type;
  if (parser.parseString(&name))
    return failure();
  Builder &b = parser.getBuilder();
  result.addAttribute("name", b.getStringAttr(name));
  if (succeeded(parser.parseOptionalKeyword("from"))) {
    std::string file;
    int64_t offset = 0;
    if (parser.parseString(&file) || parser.parseKeyword("at") || parser.parseInteger(offset))
      return failure();
    result.addAttribute("file", b.getStringAttr(file));
    result.addAttribute("offset", b.getI64IntegerAttr(offset));
  } else if (parser.parseKeyword("elided")) {
    return failure();
  }
  if (parser.parseOptionalAttrDict(result.attributes) || parser.parseColonType(type))
    return failure();
  result.addTypes(type);
  return success();
}

void WeightOp::print(OpAsmPrinter &p) {
  p << " ";
  p.printString(getName());
  if (getFile()) {
    p << " from ";
    p.printString(*getFile());
    p << " at " << getOffset();
  } else {
    p << " elided";
  }
  // An elided weight has no `at N`: keep a nonzero offset in the attr-dict.
  SmallVector<StringRef, 3> elidedAttrs = {"name", "file"};
  if (getFile() || getOffset() == 0)
    elidedAttrs.push_back("offset");
  p.printOptionalAttrDict((*this)->getAttrs(), elidedAttrs);
  p << " : " << getType();
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

LogicalResult WhereOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                        Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  Type t = getElementTypeOrSelf(adaptor.getOnTrue().getType());
  Type f = getElementTypeOrSelf(adaptor.getOnFalse().getType());
  if (t != f)
    return emitOptionalError(loc, "'wsgraph.where' expects branches of one element type, got ", t,
                             " and ", f);
  return inferBroadcast(loc, getOperationName(),
                        {adaptor.getCond(), adaptor.getOnTrue(), adaptor.getOnFalse()}, t,
                        inferred);
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  auto a = rankedType(adaptor.getLhs()), b = rankedType(adaptor.getRhs());
  if (a.getRank() < 2 || b.getRank() < 2)
    return emitOptionalError(loc, "'wsgraph.matmul' expects operands of rank 2 or more, got ",
                             a, " and ", b);
  if (a.getElementType() != b.getElementType())
    return emitOptionalError(loc, "'wsgraph.matmul' expects one element type, got ", a, " and ",
                             b);
  int64_t k1 = a.getShape().back(), k2 = b.getShape()[b.getRank() - 2];
  if (k1 != k2 && !ShapedType::isDynamic(k1) && !ShapedType::isDynamic(k2))
    return emitOptionalError(loc, "'wsgraph.matmul' contraction dimensions differ: ", a, " has K=",
                             k1, " but ", b, " has K=", k2);
  auto batch = broadcastShapes(a.getShape().drop_back(2), b.getShape().drop_back(2));
  if (failed(batch))
    return emitOptionalError(loc, "'wsgraph.matmul' batch dimensions of ", a, " and ", b,
                             " do not broadcast");
  SmallVector<int64_t> shape = *batch;
  shape.push_back(a.getShape()[a.getRank() - 2]);
  shape.push_back(b.getShape().back());
  inferred.push_back(tensorOf(shape, a.getElementType()));
  return success();
}

LogicalResult GemmOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                       Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  auto a = rankedType(adaptor.getA()), b = rankedType(adaptor.getB());
  if (a.getRank() != 2 || b.getRank() != 2)
    return emitOptionalError(loc, "'wsgraph.gemm' expects rank-2 operands, got ", a, " and ", b);
  if (failed(verifyOneElementType(loc, getOperationName(),
                                  {adaptor.getA(), adaptor.getB(), adaptor.getC()})))
    return failure();
  bool ta = adaptor.getTransA(), tb = adaptor.getTransB();
  int64_t m = a.getDimSize(ta ? 1 : 0), k1 = a.getDimSize(ta ? 0 : 1);
  int64_t k2 = b.getDimSize(tb ? 1 : 0), n = b.getDimSize(tb ? 0 : 1);
  if (k1 != k2)
    return emitOptionalError(loc, "'wsgraph.gemm' contraction dimensions differ: ", k1, " vs ",
                             k2);
  if (Value c = adaptor.getC()) {
    int64_t mn[2] = {m, n};
    auto bc = broadcastShapes(mn, rankedType(c).getShape());
    if (failed(bc) || ArrayRef<int64_t>(*bc) != ArrayRef<int64_t>(mn))
      return emitOptionalError(loc, "'wsgraph.gemm' C of shape ",
                               shapeStr(rankedType(c).getShape()), " does not broadcast to ",
                               shapeStr(mn));
  }
  inferred.push_back(tensorOf({m, n}, a.getElementType()));
  return success();
}

LogicalResult LinearOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  auto x = rankedType(adaptor.getInput()), w = rankedType(adaptor.getWeight());
  if (x.getRank() < 1 || w.getRank() != 2)
    return emitOptionalError(loc, "'wsgraph.linear' expects an input of rank >= 1 and a rank-2 "
                                  "weight, got ", x, " and ", w);
  if (failed(verifyOneElementType(loc, getOperationName(),
                                  {adaptor.getInput(), adaptor.getWeight(), adaptor.getBias()})))
    return failure();
  if (x.getShape().back() != w.getDimSize(0))
    return emitOptionalError(loc, "'wsgraph.linear' input feature size ", x.getShape().back(),
                             " does not match weight rows ", w.getDimSize(0));
  if (Value bias = adaptor.getBias()) {
    auto b = rankedType(bias);
    if (b.getRank() != 1 || b.getDimSize(0) != w.getDimSize(1))
      return emitOptionalError(loc, "'wsgraph.linear' expects a bias of shape [",
                               w.getDimSize(1), "], got ", b);
  }
  SmallVector<int64_t> shape(x.getShape());
  shape.back() = w.getDimSize(1);
  inferred.push_back(tensorOf(shape, x.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Normalization and attention
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxOp::verify() {
  if (failed(normalizeAxis(getAxis(), getType().getRank())))
    return emitOpError("axis ") << static_cast<int64_t>(getAxis())
                                << " is out of range for rank " << getType().getRank();
  return success();
}

LogicalResult LogSoftmaxOp::verify() {
  if (failed(normalizeAxis(getAxis(), getType().getRank())))
    return emitOpError("axis ") << static_cast<int64_t>(getAxis())
                                << " is out of range for rank " << getType().getRank();
  return success();
}

/// A normalization over the dimensions from `axis` on: its `axis` is in
/// range and its parameters (scale, bias) have the shape of those dimensions
/// and the input's element type.
static LogicalResult verifyNormalization(Operation *op, RankedTensorType x, int64_t axisAttr,
                                         ArrayRef<std::pair<Value, StringRef>> params) {
  auto axis = normalizeAxis(axisAttr, x.getRank());
  if (failed(axis))
    return op->emitOpError("axis ") << axisAttr << " is out of range for rank " << x.getRank();
  ArrayRef<int64_t> normalized = x.getShape().drop_front(*axis);
  for (auto [v, what] : params) {
    if (!v)
      continue;
    if (rankedType(v).getShape() != normalized || rankedType(v).getElementType() !=
                                                      x.getElementType())
      return op->emitOpError("expects ") << what << " of type "
                                         << tensorOf(normalized, x.getElementType()) << ", got "
                                         << v.getType();
  }
  return success();
}

LogicalResult LayerNormOp::verify() {
  return verifyNormalization(*this, getInput().getType(), getAxis(),
                             {{getScale(), "scale"}, {getBias(), "bias"}});
}

LogicalResult RmsNormOp::verify() {
  if (!(getEpsilon().convertToFloat() >= 0))
    return emitOpError("epsilon ") << getEpsilon().convertToFloat() << " is negative";
  return verifyNormalization(*this, getInput().getType(), getAxis(), {{getScale(), "scale"}});
}

LogicalResult GeluOp::verify() {
  if (getApproximate() != "none" && getApproximate() != "tanh")
    return emitOpError("approximate \"") << getApproximate()
                                         << "\" is not one of \"none\", \"tanh\"";
  return success();
}

LogicalResult ArgMaxOp::verify() {
  ArrayRef<int64_t> in = getInput().getType().getShape();
  auto axis = normalizeAxis(getAxis(), int64_t(in.size()));
  if (failed(axis))
    return emitOpError("axis ") << getAxis() << " is out of range for rank " << in.size();
  SmallVector<int64_t> want(in);
  if (getKeepdims())
    want[*axis] = 1;
  else
    want.erase(want.begin() + *axis);
  if (getResult().getType().getShape() != ArrayRef<int64_t>(want))
    return emitOpError("result must be ") << shapeStr(want) << ", not "
                                          << shapeStr(getResult().getType().getShape());
  return success();
}

LogicalResult SampleOp::verify() {
  ArrayRef<int64_t> in = getLogits().getType().getShape();
  if (in.size() != 3)
    return emitOpError("logits must be [B, T, V], not ") << getLogits().getType();
  ArrayRef<int64_t> params = getParams().getType().getShape();
  if (params != ArrayRef<int64_t>{2} && params != ArrayRef<int64_t>{3})
    return emitOpError("params must be [temperature, seed] or [temperature, seed, top_k], a "
                       "tensor<2xf32> or tensor<3xf32>, not ")
           << getParams().getType();
  if (getResult().getType().getShape() != in.drop_back())
    return emitOpError("result must be ") << shapeStr(in.drop_back()) << ", not "
                                          << shapeStr(getResult().getType().getShape());
  return success();
}

LogicalResult RotaryOp::verify() {
  ArrayRef<int64_t> x = getInput().getType().getShape();
  if (x.size() < 2)
    return emitOpError("input must be [..., T, D], not ") << getInput().getType();
  int64_t r = getRotaryDims();
  for (Value table : {getCos(), getSin()}) {
    auto t = cast<RankedTensorType>(table.getType());
    if (t.getElementType() != getInput().getType().getElementType())
      return emitOpError("tables must have the input's element type, not ") << t;
    SmallVector<int64_t> want(x.begin(), x.end());
    want.back() = r;
    auto shape = broadcastShapes(want, t.getShape());
    if (failed(shape) || ArrayRef<int64_t>(*shape) != ArrayRef<int64_t>(want))
      return emitOpError("table ") << t << " does not broadcast to " << shapeStr(want);
  }
  if (r <= 0 || r % 2 || r > x.back())
    return emitOpError("rotates ") << r << " of " << x.back()
                                   << " dimensions; it must be even, positive and at most D";
  return success();
}

Value RotaryOp::decompose(OpBuilder &b) {
  Location loc = getLoc();
  Value x = getInput();
  auto type = getInput().getType();
  ArrayRef<int64_t> shape = type.getShape();
  int64_t rank = type.getRank(), d = shape.back(), r = getRotaryDims();
  auto slice = [&](Value v, int64_t from, int64_t size, int64_t stride) -> Value {
    SmallVector<int64_t> offsets(rank, 0), sizes(shape), strides(rank, 1);
    offsets.back() = from, sizes.back() = size, strides.back() = stride;
    return SliceOp::create(b, loc, v, b.getDenseI64ArrayAttr(offsets),
                           b.getDenseI64ArrayAttr(sizes), b.getDenseI64ArrayAttr(strides));
  };
  auto concat = [&](ValueRange parts) -> Value {
    return ConcatOp::create(b, loc, parts, b.getI64IntegerAttr(-1));
  };
  Value xr = r == d ? x : slice(x, 0, r, 1);
  Value rotated;
  if (!getInterleaved()) {
    Value x1 = slice(xr, 0, r / 2, 1), x2 = slice(xr, r / 2, r / 2, 1);
    rotated = concat({NegOp::create(b, loc, x2), x1});
  } else {
    // (-x[2i+1], x[2i]) as the even and odd pairs stacked on a new last
    // dimension, then folded back.
    Value even = slice(xr, 0, r / 2, 2), odd = slice(xr, 1, r / 2, 2);
    SmallVector<int64_t> half(shape);
    half.back() = r / 2;
    half.push_back(1);
    auto pairType = RankedTensorType::get(half, type.getElementType());
    Value a = ReshapeOp::create(b, loc, pairType, NegOp::create(b, loc, odd));
    Value c = ReshapeOp::create(b, loc, pairType, even);
    Value pairs = ConcatOp::create(b, loc, ValueRange{a, c}, b.getI64IntegerAttr(-1));
    SmallVector<int64_t> flat(shape);
    flat.back() = r;
    rotated = ReshapeOp::create(b, loc, RankedTensorType::get(flat, type.getElementType()), pairs);
  }
  Value y = AddOp::create(b, loc, MulOp::create(b, loc, xr, getCos()),
                          MulOp::create(b, loc, rotated, getSin()));
  return r == d ? y : concat({y, slice(x, r, d - r, 1)});
}

Value AttentionOp::decompose(OpBuilder &b) {
  Location loc = getLoc();
  auto qt = getQuery().getType();
  Type element = qt.getElementType();
  int64_t batch = qt.getDimSize(0), t = qt.getDimSize(2), s = getKey().getType().getDimSize(2);
  auto scalar = [&](double v) -> Value {
    auto type = RankedTensorType::get({}, element);
    return ConstantOp::create(b, loc, type,
                              DenseElementsAttr::get(type, b.getFloatAttr(element, v)));
  };
  Value kT = TransposeOp::create(b, loc, getKey(), b.getDenseI64ArrayAttr({0, 1, 3, 2}));
  Value scores = MulOp::create(b, loc, MatmulOp::create(b, loc, getQuery(), kT),
                               scalar(getScale().convertToDouble()));
  if (getCausal()) {
    // Query i sees keys 0..i + (s - t); the others take -inf or the fill.
    SmallVector<bool> future;
    for (int64_t i = 0; i < t; ++i)
      for (int64_t j = 0; j < s; ++j)
        future.push_back(j > i + s - t);
    auto condType = RankedTensorType::get({t, s}, b.getI1Type());
    Value cond = ConstantOp::create(b, loc, condType,
                                    DenseElementsAttr::get(condType, ArrayRef<bool>(future)));
    std::optional<APFloat> fill = getFutureFill();
    scores =
        WhereOp::create(b, loc, cond, scalar(fill ? fill->convertToDouble() : -INFINITY), scores);
  }
  if (Value mask = getMask()) {
    auto perKey =
        RankedTensorType::get({batch, 1, 1, s}, cast<ShapedType>(mask.getType()).getElementType());
    scores = AddOp::create(b, loc, scores, ReshapeOp::create(b, loc, perKey, mask));
  }
  Value probs = SoftmaxOp::create(b, loc, scores, b.getI64IntegerAttr(-1));
  return MatmulOp::create(b, loc, probs, getValue());
}

LogicalResult AttentionOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                            Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  auto q = rankedType(adaptor.getQuery()), k = rankedType(adaptor.getKey()),
       v = rankedType(adaptor.getValue());
  if (q.getRank() != 4 || k.getRank() != 4 || v.getRank() != 4)
    return emitOptionalError(loc, "'wsgraph.attention' expects rank-4 [B, H, T, D] operands");
  if (failed(verifyOneElementType(
          loc, getOperationName(),
          {adaptor.getQuery(), adaptor.getKey(), adaptor.getValue()})))
    return failure();
  if (q.getShape().take_front(2) != k.getShape().take_front(2) ||
      k.getShape().take_front(3) != v.getShape().take_front(3) ||
      q.getDimSize(3) != k.getDimSize(3))
    return emitOptionalError(loc, "'wsgraph.attention' operand shapes ", shapeStr(q.getShape()),
                             ", ", shapeStr(k.getShape()), " and ", shapeStr(v.getShape()),
                             " are not [B,H,T,D], [B,H,S,D], [B,H,S,E]");
  inferred.push_back(tensorOf({q.getDimSize(0), q.getDimSize(1), q.getDimSize(2),
                               v.getDimSize(3)},
                              q.getElementType()));
  return success();
}

LogicalResult AttentionOp::verify() {
  if (std::optional<APFloat> fill = getFutureFill()) {
    if (!getCausal())
      return emitOpError("future_fill needs causal");
    if (!fill->isFinite())
      return emitOpError("future_fill must be finite (an infinite fill is causal's default)");
  }
  if (!getMask())
    return success();
  auto q = getQuery().getType(), k = getKey().getType();
  auto m = cast<RankedTensorType>(getMask().getType());
  if (m.getRank() != 2 || m.getDimSize(0) != q.getDimSize(0) || m.getDimSize(1) != k.getDimSize(2) ||
      m.getElementType() != q.getElementType())
    return emitOpError("mask must be [B, S] ")
           << shapeStr(SmallVector<int64_t>{q.getDimSize(0), k.getDimSize(2)})
                                               << " of the queries' element type, not " << m;
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

static FailureOr<SmallVector<int64_t>> normalizeAxes(std::optional<Location> loc,
                                                     ArrayRef<int64_t> axes, int64_t rank,
                                                     StringRef opName) {
  SmallVector<int64_t> result;
  llvm::SmallSet<int64_t, 4> seen;
  for (int64_t axis : axes) {
    auto a = normalizeAxis(axis, rank);
    if (failed(a))
      return emitOptionalError(loc, "'", opName, "' axis ", axis, " is out of range for rank ",
                               rank);
    if (!seen.insert(*a).second)
      return emitOptionalError(loc, "'", opName, "' axis ", axis, " is repeated");
    result.push_back(*a);
  }
  return result;
}

static LogicalResult inferReduce(std::optional<Location> loc, StringRef opName, Value input,
                                 ArrayRef<int64_t> axesAttr, bool keepdims,
                                 SmallVectorImpl<Type> &inferred) {
  auto type = rankedType(input);
  auto axes = normalizeAxes(loc, axesAttr, type.getRank(), opName);
  if (failed(axes))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    bool reduced = axes->empty() || llvm::is_contained(*axes, i);
    if (!reduced)
      shape.push_back(type.getDimSize(i));
    else if (keepdims)
      shape.push_back(1);
  }
  inferred.push_back(tensorOf(shape, type.getElementType()));
  return success();
}

#define WSGRAPH_REDUCE(OP)                                                                      \
  LogicalResult OP::inferReturnTypes(MLIRContext *, std::optional<Location> loc,               \
                                     Adaptor adaptor, SmallVectorImpl<Type> &inferred) {       \
    return inferReduce(loc, getOperationName(), adaptor.getInput(), adaptor.getAxes(),         \
                       adaptor.getKeepdims(), inferred);                                       \
  }                                                                                             \
  LogicalResult OP::verify() {                                                                  \
    return success(succeeded(                                                                   \
        normalizeAxes(getLoc(), getAxes(), getInput().getType().getRank(), getOperationName()))); \
  }
WSGRAPH_REDUCE(ReduceMeanOp)
WSGRAPH_REDUCE(ReduceSumOp)
WSGRAPH_REDUCE(ReduceMaxOp)
WSGRAPH_REDUCE(ReduceMinOp)
#undef WSGRAPH_REDUCE

//===----------------------------------------------------------------------===//
// Data movement and shapes
//===----------------------------------------------------------------------===//

static bool isPermutation(ArrayRef<int64_t> perm) {
  SmallVector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[p])
      return false;
    seen[p] = true;
  }
  return true;
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                            Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  auto type = rankedType(adaptor.getInput());
  ArrayRef<int64_t> perm = adaptor.getPerm();
  if (static_cast<int64_t>(perm.size()) != type.getRank() || !isPermutation(perm))
    return emitOptionalError(loc, "'wsgraph.transpose' perm ", shapeStr(perm),
                             " is not a permutation of ", type.getRank(), " dimensions");
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(type.getDimSize(p));
  inferred.push_back(tensorOf(shape, type.getElementType()));
  return success();
}


LogicalResult ReshapeOp::verify() {
  auto in = getInput().getType(), out = getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError("element type changes from ") << in.getElementType() << " to "
                                                    << out.getElementType();
  if (in.hasStaticShape() && out.hasStaticShape() && in.getNumElements() != out.getNumElements())
    return emitOpError("cannot reshape ") << in.getNumElements() << " elements " << in << " into "
                                          << out.getNumElements() << " elements " << out;
  return success();
}

LogicalResult ExpandOp::verify() {
  auto in = getInput().getType(), out = getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError("element type changes from ") << in.getElementType() << " to "
                                                    << out.getElementType();
  auto shape = broadcastShapes(in.getShape(), out.getShape());
  if (failed(shape) || ArrayRef<int64_t>(*shape) != out.getShape())
    return emitOpError("cannot broadcast ") << in << " to " << out;
  return success();
}

LogicalResult UnsqueezeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                            Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  auto type = rankedType(adaptor.getInput());
  int64_t rank = type.getRank() + adaptor.getAxes().size();
  auto axes = normalizeAxes(loc, adaptor.getAxes(), rank, getOperationName());
  if (failed(axes))
    return failure();
  SmallVector<int64_t> shape;
  auto dims = type.getShape();
  for (int64_t i = 0, next = 0; i < rank; ++i)
    shape.push_back(llvm::is_contained(*axes, i) ? 1 : dims[next++]);
  inferred.push_back(tensorOf(shape, type.getElementType()));
  return success();
}

LogicalResult SqueezeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                          Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  auto type = rankedType(adaptor.getInput());
  auto axes = normalizeAxes(loc, adaptor.getAxes(), type.getRank(), getOperationName());
  if (failed(axes))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    if (!llvm::is_contained(*axes, i)) {
      shape.push_back(type.getDimSize(i));
      continue;
    }
    if (type.getDimSize(i) != 1 && !ShapedType::isDynamic(type.getDimSize(i)))
      return emitOptionalError(loc, "'wsgraph.squeeze' dimension ", i, " has size ",
                               type.getDimSize(i), ", not 1");
  }
  inferred.push_back(tensorOf(shape, type.getElementType()));
  return success();
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  auto data = rankedType(adaptor.getData()), indices = rankedType(adaptor.getIndices());
  auto axis = normalizeAxis(adaptor.getAxis(), data.getRank());
  if (failed(axis))
    return emitOptionalError(loc, "'wsgraph.gather' axis ",
                             static_cast<int64_t>(adaptor.getAxis()),
                             " is out of range for rank ", data.getRank());
  SmallVector<int64_t> shape(data.getShape().take_front(*axis));
  llvm::append_range(shape, indices.getShape());
  llvm::append_range(shape, data.getShape().drop_front(*axis + 1));
  inferred.push_back(tensorOf(shape, data.getElementType()));
  return success();
}

LogicalResult GatherElementsOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                                 Adaptor adaptor,
                                                 SmallVectorImpl<Type> &inferred) {
  auto data = rankedType(adaptor.getData()), indices = rankedType(adaptor.getIndices());
  if (data.getRank() != indices.getRank())
    return emitOptionalError(loc, "'wsgraph.gather_elements' expects data and indices of one "
                                  "rank, got ", data, " and ", indices);
  auto axis = normalizeAxis(adaptor.getAxis(), data.getRank());
  if (failed(axis))
    return emitOptionalError(loc, "'wsgraph.gather_elements' axis ",
                             static_cast<int64_t>(adaptor.getAxis()),
                             " is out of range for rank ", data.getRank());
  for (int64_t d = 0; d < data.getRank(); ++d) {
    int64_t n = indices.getDimSize(d), limit = data.getDimSize(d);
    if (d != *axis && !ShapedType::isDynamic(n) && !ShapedType::isDynamic(limit) && n > limit)
      return emitOptionalError(loc, "'wsgraph.gather_elements' indices dimension ", d, " (", n,
                               ") is larger than the data's (", limit, ")");
  }
  inferred.push_back(tensorOf(indices.getShape(), data.getElementType()));
  return success();
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  if (adaptor.getInputs().empty())
    return emitOptionalError(loc, "'wsgraph.concat' needs at least one input");
  auto first = rankedType(adaptor.getInputs().front());
  auto axis = normalizeAxis(adaptor.getAxis(), first.getRank());
  if (failed(axis))
    return emitOptionalError(loc, "'wsgraph.concat' axis ",
                             static_cast<int64_t>(adaptor.getAxis()),
                             " is out of range for rank ", first.getRank());
  SmallVector<int64_t> shape(first.getShape());
  shape[*axis] = 0;
  for (Value v : adaptor.getInputs()) {
    auto t = rankedType(v);
    if (t.getRank() != first.getRank() || t.getElementType() != first.getElementType())
      return emitOptionalError(loc, "'wsgraph.concat' inputs ", first, " and ", t,
                               " differ in rank or element type");
    for (int64_t i = 0; i < t.getRank(); ++i) {
      if (i == *axis)
        continue;
      if (t.getDimSize(i) != first.getDimSize(i))
        return emitOptionalError(loc, "'wsgraph.concat' inputs ", first, " and ", t,
                                 " differ in dimension ", i);
    }
    int64_t d = t.getDimSize(*axis);
    shape[*axis] = ShapedType::isDynamic(d) || ShapedType::isDynamic(shape[*axis])
                       ? ShapedType::kDynamic
                       : shape[*axis] + d;
  }
  inferred.push_back(tensorOf(shape, first.getElementType()));
  return success();
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                        Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  auto type = rankedType(adaptor.getInput());
  // A negative size would make an invalid type; verify() reports it.
  if (llvm::any_of(adaptor.getSizes(), [](int64_t s) { return s < 0; }))
    return emitOptionalError(loc, "'wsgraph.slice' sizes must be non-negative");
  inferred.push_back(tensorOf(adaptor.getSizes(), type.getElementType()));
  return success();
}

LogicalResult SliceOp::verify() {
  auto type = getInput().getType();
  int64_t rank = type.getRank();
  if (static_cast<int64_t>(getOffsets().size()) != rank ||
      static_cast<int64_t>(getSizes().size()) != rank ||
      static_cast<int64_t>(getStrides().size()) != rank)
    return emitOpError("expects ") << rank << " offsets, sizes and strides, got "
                                   << getOffsets().size() << ", " << getSizes().size() << " and "
                                   << getStrides().size();
  for (int64_t i = 0; i < rank; ++i) {
    int64_t off = getOffsets()[i], size = getSizes()[i], stride = getStrides()[i];
    int64_t dim = type.getDimSize(i);
    if (stride == 0)
      return emitOpError("stride of dimension ") << i << " is zero";
    if (size < 0)
      return emitOpError("size of dimension ") << i << " is negative";
    if (size == 0 || ShapedType::isDynamic(dim))
      continue;
    int64_t last = off + (size - 1) * stride;
    if (off < 0 || off >= dim || last < 0 || last >= dim)
      return emitOpError("dimension ") << i << " selects indices " << off << " to " << last
                                       << ", outside [0, " << dim << ")";
  }
  return success();
}

LogicalResult SplitOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                        Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  auto type = rankedType(adaptor.getInput());
  auto axis = normalizeAxis(adaptor.getAxis(), type.getRank());
  if (failed(axis))
    return emitOptionalError(loc, "'wsgraph.split' axis ",
                             static_cast<int64_t>(adaptor.getAxis()),
                             " is out of range for rank ", type.getRank());
  for (int64_t size : adaptor.getSizes()) {
    if (size < 0) // verify() reports it; do not build an invalid type.
      return emitOptionalError(loc, "'wsgraph.split' sizes must be non-negative");
    SmallVector<int64_t> shape(type.getShape());
    shape[*axis] = size;
    inferred.push_back(tensorOf(shape, type.getElementType()));
  }
  return success();
}

LogicalResult SplitOp::verify() {
  auto type = getInput().getType();
  // verify() runs before the inferred result types are checked, so the axis
  // may still be out of range here.
  auto normalized = normalizeAxis(getAxis(), type.getRank());
  if (failed(normalized))
    return emitOpError("axis ") << static_cast<int64_t>(getAxis())
                                << " is out of range for rank " << type.getRank();
  int64_t axis = *normalized;
  int64_t total = 0;
  for (int64_t s : getSizes()) {
    if (s < 0)
      return emitOpError("split sizes must be non-negative");
    total += s;
  }
  if (!type.isDynamicDim(axis) && total != type.getDimSize(axis))
    return emitOpError("split sizes add up to ") << total << ", but dimension " << axis
                                                  << " has size " << type.getDimSize(axis);
  return success();
}

LogicalResult TileOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                       Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  auto type = rankedType(adaptor.getInput());
  ArrayRef<int64_t> repeats = adaptor.getRepeats();
  if (static_cast<int64_t>(repeats.size()) != type.getRank())
    return emitOptionalError(loc, "'wsgraph.tile' expects ", type.getRank(),
                             " repeat counts, one per dimension, got ", repeats.size());
  SmallVector<int64_t> shape;
  for (auto [dim, r] : llvm::zip(type.getShape(), repeats)) {
    if (r < 0)
      return emitOptionalError(loc, "'wsgraph.tile' repeat counts must be non-negative, got ",
                               shapeStr(repeats));
    shape.push_back(r == 0 ? 0 : ShapedType::isDynamic(dim) ? dim : dim * r);
  }
  inferred.push_back(tensorOf(shape, type.getElementType()));
  return success();
}

LogicalResult TriluOp::verify() {
  if (getType().getRank() < 2)
    return emitOpError("expects rank 2 or more, got ") << getType();
  return success();
}

LogicalResult RangeOp::verify() {
  for (Value v : {getStart(), getLimit(), getDelta()}) {
    auto t = rankedType(v);
    if (!t.hasStaticShape() || t.getNumElements() != 1 ||
        t.getElementType() != getType().getElementType())
      return emitOpError("expects scalar operands of the result element type ")
             << getType().getElementType() << ", got " << t;
  }
  if (getType().getRank() != 1)
    return emitOpError("result must be 1-D, got ") << getType();
  return success();
}

LogicalResult ShapeOp::verify() {
  int64_t rank = getInput().getType().getRank();
  int64_t start = static_cast<int64_t>(getStart());
  start = start < 0 ? start + rank : start;
  int64_t end = getEnd() ? static_cast<int64_t>(*getEnd()) : rank;
  end = end < 0 ? end + rank : end;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  int64_t n = std::max<int64_t>(end - start, 0);
  auto type = getType();
  if (type.getRank() != 1 || (!type.isDynamicDim(0) && type.getDimSize(0) != n))
    return emitOpError("result must be tensor<") << n << "xi64>, got " << type;
  return success();
}
