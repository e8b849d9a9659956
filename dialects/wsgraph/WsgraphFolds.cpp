//===- WsgraphFolds.cpp - constant folding of wsgraph ops -----------------===//
//
// Folds evaluate small constants on the host. They exist so that the shape
// computations of dynamic ONNX exports and the causal-mask subgraph collapse
// into constants; results larger than kMaxFoldElements are left alone so that
// no weight is ever copied into the IR.
//
//===----------------------------------------------------------------------===//
#include "wsgraph/WsgraphDialect.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/APFloat.h"

#include <cmath>

using namespace mlir;
using namespace wsc::wsgraph;

static constexpr int64_t kMaxFoldElements = 1 << 18;

/// A double as int64, toward zero and saturating (NaN: 0), as the wafer's
/// TO_INT converts: a plain cast of a value out of range is undefined.
static int64_t saturatingInt(double x) {
  if (std::isnan(x))
    return 0;
  if (x >= 9223372036854775807.0)
    return INT64_MAX;
  if (x <= -9223372036854775808.0)
    return INT64_MIN;
  return static_cast<int64_t>(x);
}

/// Integer arithmetic modulo 2^64, as the wafer's wraps modulo 2^32: a
/// signed overflow is undefined in C++.
static int64_t wrapAdd(int64_t a, int64_t b) { return int64_t(uint64_t(a) + uint64_t(b)); }
static int64_t wrapSub(int64_t a, int64_t b) { return int64_t(uint64_t(a) - uint64_t(b)); }
static int64_t wrapMul(int64_t a, int64_t b) { return int64_t(uint64_t(a) * uint64_t(b)); }
/// a / b toward zero; INT64_MIN / -1 wraps to INT64_MIN (b is not 0).
static int64_t wrapDiv(int64_t a, int64_t b) { return b == -1 ? wrapSub(0, a) : a / b; }

namespace {
/// A small constant unpacked for host evaluation: floats as double, integers
/// and i1 as int64.
struct Values {
  RankedTensorType type;
  bool isFloat = false;
  std::vector<double> f;
  std::vector<int64_t> i;

  int64_t size() const { return isFloat ? f.size() : i.size(); }
  double asDouble(int64_t k) const { return isFloat ? f[k] : static_cast<double>(i[k]); }
  int64_t asInt(int64_t k) const { return isFloat ? saturatingInt(f[k]) : i[k]; }
};
} // namespace

static bool foldable(Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  return t && t.hasStaticShape() && t.getNumElements() <= kMaxFoldElements;
}

static std::optional<Values> unpack(Attribute attr, int64_t maxElements = kMaxFoldElements) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(attr);
  if (!dense || !dense.getType().hasStaticShape() || dense.getNumElements() > maxElements)
    return std::nullopt;
  Values v;
  v.type = cast<RankedTensorType>(dense.getType());
  Type element = v.type.getElementType();
  if (isa<FloatType>(element)) {
    v.isFloat = true;
    for (APFloat x : dense.getValues<APFloat>()) {
      bool lost;
      x.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
      v.f.push_back(x.convertToDouble());
    }
    return v;
  }
  if (auto intType = dyn_cast<IntegerType>(element)) {
    bool isBool = intType.getWidth() == 1;
    for (APInt x : dense.getValues<APInt>())
      v.i.push_back(isBool || intType.isUnsigned() ? x.getZExtValue() : x.getSExtValue());
    return v;
  }
  return std::nullopt;
}

static DenseElementsAttr pack(RankedTensorType type, const Values &v) {
  Type element = type.getElementType();
  int64_t n = type.getNumElements();
  if (auto floatType = dyn_cast<FloatType>(element)) {
    SmallVector<APFloat> out;
    out.reserve(n);
    for (int64_t k = 0; k < n; ++k) {
      APFloat x(v.asDouble(k));
      bool lost;
      x.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      out.push_back(x);
    }
    return DenseElementsAttr::get(type, out);
  }
  auto intType = cast<IntegerType>(element);
  SmallVector<APInt> out;
  out.reserve(n);
  for (int64_t k = 0; k < n; ++k) {
    int64_t x;
    if (intType.getWidth() == 1)
      x = v.isFloat ? v.f[k] != 0 : v.i[k] != 0; // Any nonzero is true, 0.5 too.
    else
      x = v.isFloat ? saturatingInt(v.f[k]) : v.i[k];
    out.push_back(APInt(intType.getWidth(), x, /*isSigned=*/true, /*implicitTrunc=*/true));
  }
  return DenseElementsAttr::get(type, out);
}

/// For each element of `resultShape`, the linear index of the element of a
/// tensor of `sourceShape` that numpy broadcasting maps to it.
static std::vector<int64_t> broadcastIndices(ArrayRef<int64_t> resultShape,
                                             ArrayRef<int64_t> sourceShape) {
  int64_t rank = resultShape.size(), offset = rank - sourceShape.size();
  SmallVector<int64_t> strides(rank, 0);
  for (int64_t d = rank - 1, s = 1; d >= offset; --d) {
    int64_t dim = sourceShape[d - offset];
    strides[d] = dim == 1 ? 0 : s;
    s *= dim;
  }
  int64_t n = 1;
  for (int64_t d : resultShape)
    n *= d;
  std::vector<int64_t> out(n);
  SmallVector<int64_t> index(rank, 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t src = 0;
    for (int64_t d = 0; d < rank; ++d)
      src += index[d] * strides[d];
    out[k] = src;
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < resultShape[d])
        break;
      index[d] = 0;
    }
  }
  return out;
}

/// Evaluates an elementwise op over broadcast operands.
template <typename FloatFn, typename IntFn>
static OpFoldResult foldElementwise(Type resultType, ArrayRef<Attribute> operands,
                                    FloatFn floatFn, IntFn intFn) {
  if (!foldable(resultType))
    return {};
  auto type = cast<RankedTensorType>(resultType);
  SmallVector<Values> in;
  for (Attribute a : operands) {
    auto v = unpack(a);
    if (!v)
      return {};
    in.push_back(std::move(*v));
  }
  SmallVector<std::vector<int64_t>> maps;
  for (const Values &v : in)
    maps.push_back(broadcastIndices(type.getShape(), v.type.getShape()));
  Values out;
  out.type = type;
  // Compute in floating point if any operand is floating point: pow mixes a
  // float base with an integer exponent (and the reverse), and where's i1
  // condition must not decide for its branches.
  out.isFloat = llvm::any_of(in, [](const Values &v) { return v.isFloat; });
  int64_t n = type.getNumElements();
  SmallVector<double> fargs(in.size());
  SmallVector<int64_t> iargs(in.size());
  for (int64_t k = 0; k < n; ++k) {
    if (out.isFloat) {
      for (size_t j = 0; j < in.size(); ++j)
        fargs[j] = in[j].asDouble(maps[j][k]);
      out.f.push_back(floatFn(fargs));
    } else {
      for (size_t j = 0; j < in.size(); ++j)
        iargs[j] = in[j].asInt(maps[j][k]);
      out.i.push_back(intFn(iargs));
    }
  }
  return pack(type, out);
}

static bool isSplatOf(Attribute attr, double value) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(attr);
  if (!dense || !dense.isSplat())
    return false;
  auto v = unpack(DenseElementsAttr::get(
      RankedTensorType::get({}, dense.getElementType()), dense.getSplatValue<Attribute>()));
  return v && v->asDouble(0) == value;
}

//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  if (getLhs().getType() == getType() && isSplatOf(adaptor.getRhs(), 0))
    return getLhs();
  if (getRhs().getType() == getType() && isSplatOf(adaptor.getLhs(), 0))
    return getRhs();
  return foldElementwise(
      getType(), adaptor.getOperands(), [](auto a) { return a[0] + a[1]; },
      [](auto a) { return wrapAdd(a[0], a[1]); });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  if (getLhs().getType() == getType() && isSplatOf(adaptor.getRhs(), 0))
    return getLhs();
  return foldElementwise(
      getType(), adaptor.getOperands(), [](auto a) { return a[0] - a[1]; },
      [](auto a) { return wrapSub(a[0], a[1]); });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  if (getLhs().getType() == getType() && isSplatOf(adaptor.getRhs(), 1))
    return getLhs();
  if (getRhs().getType() == getType() && isSplatOf(adaptor.getLhs(), 1))
    return getRhs();
  return foldElementwise(
      getType(), adaptor.getOperands(), [](auto a) { return a[0] * a[1]; },
      [](auto a) { return wrapMul(a[0], a[1]); });
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  if (getLhs().getType() == getType() && isSplatOf(adaptor.getRhs(), 1))
    return getLhs();
  // Integer division by zero is left for the runtime to report.
  if (auto rhs = unpack(adaptor.getRhs()); rhs && !rhs->isFloat)
    for (int64_t x : rhs->i)
      if (x == 0)
        return {};
  return foldElementwise(
      getType(), adaptor.getOperands(), [](auto a) { return a[0] / a[1]; },
      [](auto a) { return wrapDiv(a[0], a[1]); });
}

OpFoldResult PowOp::fold(FoldAdaptor adaptor) {
  if (getLhs().getType() == getType() && isSplatOf(adaptor.getRhs(), 1))
    return getLhs();
  return foldElementwise(
      getType(), adaptor.getOperands(), [](auto a) { return std::pow(a[0], a[1]); },
      [](auto a) { return saturatingInt(std::pow(double(a[0]), double(a[1]))); });
}

OpFoldResult EqualOp::fold(FoldAdaptor adaptor) {
  auto lhs = unpack(adaptor.getLhs()), rhs = unpack(adaptor.getRhs());
  if (!lhs || !rhs || !foldable(getType()))
    return {};
  auto type = getType();
  auto ml = broadcastIndices(type.getShape(), lhs->type.getShape());
  auto mr = broadcastIndices(type.getShape(), rhs->type.getShape());
  Values out;
  out.type = type;
  for (int64_t k = 0; k < type.getNumElements(); ++k)
    out.i.push_back(lhs->isFloat ? lhs->f[ml[k]] == rhs->f[mr[k]]
                                 : lhs->i[ml[k]] == rhs->i[mr[k]]);
  return pack(type, out);
}

OpFoldResult MaxOp::fold(FoldAdaptor adaptor) {
  return foldElementwise(
      getType(), adaptor.getOperands(),
      [](auto a) { return std::isnan(a[0]) || std::isnan(a[1]) ? NAN : std::max(a[0], a[1]); },
      [](auto a) { return std::max(a[0], a[1]); });
}

OpFoldResult MinOp::fold(FoldAdaptor adaptor) {
  return foldElementwise(
      getType(), adaptor.getOperands(),
      [](auto a) { return std::isnan(a[0]) || std::isnan(a[1]) ? NAN : std::min(a[0], a[1]); },
      [](auto a) { return std::min(a[0], a[1]); });
}

OpFoldResult ModOp::fold(FoldAdaptor adaptor) {
  // Integer remainders by zero are left for the runtime, as in div.
  if (auto rhs = unpack(adaptor.getRhs()); rhs && !rhs->isFloat)
    for (int64_t x : rhs->i)
      if (x == 0)
        return {};
  bool fmod = getFmod();
  return foldElementwise(
      getType(), adaptor.getOperands(), [](auto a) { return std::fmod(a[0], a[1]); },
      [fmod](auto a) {
        int64_t r = a[1] == -1 ? 0 : a[0] % a[1]; // INT64_MIN % -1 overflows
        // Python's %: the remainder takes the divisor's sign.
        if (!fmod && r != 0 && ((r < 0) != (a[1] < 0)))
          r += a[1];
        return r;
      });
}

/// Comparisons and logical ops: evaluated as doubles when the operands are
/// floats, else as integers; the i1 result packs any nonzero as true.
#define WSGRAPH_FOLD_PREDICATE(OP, EXPR)                                                        \
  OpFoldResult OP::fold(FoldAdaptor adaptor) {                                                  \
    return foldElementwise(                                                                     \
        getType(), adaptor.getOperands(), [](auto a) { return double(EXPR); },                 \
        [](auto a) { return int64_t(EXPR); });                                                 \
  }
WSGRAPH_FOLD_PREDICATE(LessOp, a[0] < a[1])
WSGRAPH_FOLD_PREDICATE(LessEqualOp, a[0] <= a[1])
WSGRAPH_FOLD_PREDICATE(GreaterOp, a[0] > a[1])
WSGRAPH_FOLD_PREDICATE(GreaterEqualOp, a[0] >= a[1])
WSGRAPH_FOLD_PREDICATE(AndOp, a[0] != 0 && a[1] != 0)
WSGRAPH_FOLD_PREDICATE(OrOp, a[0] != 0 || a[1] != 0)
WSGRAPH_FOLD_PREDICATE(XorOp, (a[0] != 0) != (a[1] != 0))
#undef WSGRAPH_FOLD_PREDICATE

/// Bitwise ops take integers only: the float form is never called.
#define WSGRAPH_FOLD_BITWISE(OP, EXPR)                                                          \
  OpFoldResult OP::fold(FoldAdaptor adaptor) {                                                  \
    return foldElementwise(                                                                     \
        getType(), adaptor.getOperands(), [](auto) { return 0.0; },                            \
        [](auto a) { return int64_t(EXPR); });                                                 \
  }
WSGRAPH_FOLD_BITWISE(BitwiseAndOp, a[0] & a[1])
WSGRAPH_FOLD_BITWISE(BitwiseOrOp, a[0] | a[1])
WSGRAPH_FOLD_BITWISE(BitwiseXorOp, a[0] ^ a[1])
#undef WSGRAPH_FOLD_BITWISE

OpFoldResult WhereOp::fold(FoldAdaptor adaptor) {
  if (getOnTrue() == getOnFalse() && getOnTrue().getType() == getType())
    return getOnTrue();
  // A condition all true or all false picks one operand whole, when it has
  // the result's shape (a cache written everywhere).
  if (auto cond = dyn_cast_or_null<DenseElementsAttr>(adaptor.getCond()); cond && cond.isSplat()) {
    Value picked = cond.getSplatValue<bool>() ? getOnTrue() : getOnFalse();
    if (picked.getType() == getType())
      return picked;
  }
  return foldElementwise(
      getType(), adaptor.getOperands(), [](auto a) { return a[0] != 0 ? a[1] : a[2]; },
      [](auto a) { return a[0] != 0 ? a[1] : a[2]; });
}

template <typename Fn>
static OpFoldResult foldUnary(Type type, Attribute input, Fn fn) {
  return foldElementwise(
      type, {input}, [&](auto a) { return fn(a[0]); }, [](auto a) { return a[0]; });
}

/// A unary op that also takes integers: `intFn` evaluates those.
template <typename FloatFn, typename IntFn>
static OpFoldResult foldUnary(Type type, Attribute input, FloatFn floatFn, IntFn intFn) {
  return foldElementwise(
      type, {input}, [&](auto a) { return floatFn(a[0]); }, [&](auto a) { return intFn(a[0]); });
}

OpFoldResult SqrtOp::fold(FoldAdaptor a) {
  return foldUnary(getType(), a.getInput(), [](double x) { return std::sqrt(x); });
}
OpFoldResult ErfOp::fold(FoldAdaptor a) {
  return foldUnary(getType(), a.getInput(), [](double x) { return std::erf(x); });
}
OpFoldResult TanhOp::fold(FoldAdaptor a) {
  return foldUnary(getType(), a.getInput(), [](double x) { return std::tanh(x); });
}
OpFoldResult ExpOp::fold(FoldAdaptor a) {
  return foldUnary(getType(), a.getInput(), [](double x) { return std::exp(x); });
}
OpFoldResult LogOp::fold(FoldAdaptor a) {
  return foldUnary(getType(), a.getInput(), [](double x) { return std::log(x); });
}
OpFoldResult SigmoidOp::fold(FoldAdaptor a) {
  return foldUnary(getType(), a.getInput(), [](double x) { return 1.0 / (1.0 + std::exp(-x)); });
}
OpFoldResult SinOp::fold(FoldAdaptor a) {
  return foldUnary(getType(), a.getInput(), [](double x) { return std::sin(x); });
}
OpFoldResult CosOp::fold(FoldAdaptor a) {
  return foldUnary(getType(), a.getInput(), [](double x) { return std::cos(x); });
}
OpFoldResult ReciprocalOp::fold(FoldAdaptor a) {
  return foldUnary(getType(), a.getInput(), [](double x) { return 1.0 / x; });
}
OpFoldResult FloorOp::fold(FoldAdaptor a) {
  return foldUnary(getType(), a.getInput(), [](double x) { return std::floor(x); });
}
OpFoldResult CeilOp::fold(FoldAdaptor a) {
  return foldUnary(getType(), a.getInput(), [](double x) { return std::ceil(x); });
}
OpFoldResult NegOp::fold(FoldAdaptor a) {
  return foldUnary(
      getType(), a.getInput(), [](double x) { return -x; },
      [](int64_t x) { return wrapSub(0, x); });
}
OpFoldResult AbsOp::fold(FoldAdaptor a) {
  return foldUnary(
      getType(), a.getInput(), [](double x) { return std::fabs(x); },
      [](int64_t x) { return x < 0 ? wrapSub(0, x) : x; });
}
OpFoldResult ReluOp::fold(FoldAdaptor a) {
  // NaN stays NaN, as max(x, 0) in ONNX's reference.
  return foldUnary(
      getType(), a.getInput(), [](double x) { return x < 0 ? 0.0 : x; },
      [](int64_t x) { return x < 0 ? int64_t(0) : x; });
}
OpFoldResult NotOp::fold(FoldAdaptor a) {
  return foldUnary(
      getType(), a.getInput(), [](double x) { return double(x == 0); },
      [](int64_t x) { return int64_t(x == 0); });
}
OpFoldResult BitwiseNotOp::fold(FoldAdaptor a) {
  return foldUnary(
      getType(), a.getInput(), [](double) { return 0.0; }, [](int64_t x) { return ~x; });
}
OpFoldResult GeluOp::fold(FoldAdaptor a) {
  constexpr double kSqrt2OverPi = 0.79788456080286535588;
  if (isTanh())
    return foldUnary(getType(), a.getInput(), [](double x) {
      return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
    });
  return foldUnary(getType(), a.getInput(),
                   [](double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); });
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  auto in = unpack(adaptor.getInput());
  if (!in || !foldable(getType()))
    return {};
  return pack(getType(), *in);
}

/// Row-major strides of a static shape.
static SmallVector<int64_t> rowMajorStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// The values of `type` whose element at each multi-index is element
/// `src(index)` of `in` (row-major); none when `src` gives a negative index.
static std::optional<Values> picked(const Values &in, RankedTensorType type,
                                    function_ref<int64_t(ArrayRef<int64_t>)> src) {
  Values out;
  out.type = type;
  out.isFloat = in.isFloat;
  SmallVector<int64_t> index(type.getRank(), 0);
  for (int64_t k = 0; k < type.getNumElements(); ++k) {
    int64_t from = src(index);
    if (from < 0)
      return std::nullopt;
    in.isFloat ? out.f.push_back(in.f[from]) : out.i.push_back(in.i[from]);
    for (int64_t d = type.getRank() - 1; d >= 0; --d) {
      if (++index[d] < type.getDimSize(d))
        break;
      index[d] = 0;
    }
  }
  return out;
}

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  ArrayRef<int64_t> perm = getPerm();
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return getInput();
  // transpose(transpose(x, p), q) is transpose(x, p o q).
  if (auto inner = getInput().getDefiningOp<TransposeOp>()) {
    SmallVector<int64_t> composed;
    for (int64_t p : perm)
      composed.push_back(inner.getPerm()[p]);
    getInputMutable().assign(inner.getInput());
    setPerm(composed);
    return getResult();
  }
  auto in = unpack(adaptor.getInput());
  if (!in || !foldable(getType()))
    return {};
  auto type = cast<RankedTensorType>(getType());
  SmallVector<int64_t> inStrides = rowMajorStrides(in->type.getShape());
  auto out = picked(*in, type, [&](ArrayRef<int64_t> index) {
    int64_t src = 0;
    for (size_t d = 0; d < index.size(); ++d)
      src += index[d] * inStrides[perm[d]];
    return src;
  });
  return pack(type, *out);
}

/// Reshape-like ops keep the row-major element order.
static OpFoldResult foldReshapeLike(Operation *op, Value input, Attribute inputAttr) {
  Type type = op->getResult(0).getType();
  if (input.getType() == type)
    return input;
  auto dense = dyn_cast_or_null<DenseElementsAttr>(inputAttr);
  if (dense && cast<ShapedType>(type).hasStaticShape())
    return dense.reshape(cast<ShapedType>(type));
  return {};
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  // reshape(reshape(x)) is reshape(x).
  if (auto inner = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(inner.getInput());
    return getResult();
  }
  return foldReshapeLike(*this, getInput(), adaptor.getInput());
}
OpFoldResult UnsqueezeOp::fold(FoldAdaptor adaptor) {
  return foldReshapeLike(*this, getInput(), adaptor.getInput());
}
OpFoldResult SqueezeOp::fold(FoldAdaptor adaptor) {
  return foldReshapeLike(*this, getInput(), adaptor.getInput());
}

OpFoldResult ExpandOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput()))
    if (dense.isSplat() && getType().hasStaticShape())
      return DenseElementsAttr::get(getType(), dense.getSplatValue<Attribute>());
  return foldElementwise(
      getType(), {adaptor.getInput()}, [](auto a) { return a[0]; }, [](auto a) { return a[0]; });
}

/// The most multiply-adds a product of constants folds with.
static constexpr int64_t kMaxFoldProducts = int64_t(1) << 24;

/// A product of constants, [batch..., M, K] x [batch..., K, N] with the
/// batch dimensions broadcast (`batch` the result's, each operand's leading
/// shape given), plus a bias of N, summed in f32 in K's order as the
/// kernels sum. (A CumSum of a mask that folded, say a generating program's
/// positions.)
static OpFoldResult foldProduct(RankedTensorType type, ArrayRef<int64_t> batch,
                                ArrayRef<int64_t> lhsBatch, ArrayRef<int64_t> rhsBatch,
                                int64_t m, int64_t k, int64_t n, Attribute lhs, Attribute rhs,
                                Attribute bias) {
  auto x = unpack(lhs), w = unpack(rhs);
  std::optional<Values> b;
  if (bias && !(b = unpack(bias)))
    return {};
  int64_t batches = 1;
  for (int64_t d : batch)
    batches *= d;
  if (!foldable(type) || !x || !w || !x->isFloat || !w->isFloat ||
      batches * m * n * std::max<int64_t>(k, 1) > kMaxFoldProducts)
    return {};
  std::vector<int64_t> xAt = broadcastIndices(batch, lhsBatch), wAt = broadcastIndices(batch, rhsBatch);
  Values out;
  out.type = type;
  out.isFloat = true;
  for (int64_t i = 0; i < batches; ++i)
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < n; ++c) {
        float sum = 0;
        for (int64_t j = 0; j < k; ++j)
          sum += float(x->f[(xAt[i] * m + r) * k + j]) * float(w->f[(wAt[i] * k + j) * n + c]);
        out.f.push_back(b ? double(sum + float(b->asDouble(c))) : double(sum));
      }
  return pack(type, out);
}

OpFoldResult MatmulOp::fold(FoldAdaptor adaptor) {
  auto type = cast<RankedTensorType>(getType());
  ArrayRef<int64_t> a = getLhs().getType().getShape(), b = getRhs().getType().getShape();
  if (!type.hasStaticShape() || a.size() < 2 || b.size() < 2)
    return {};
  return foldProduct(type, type.getShape().drop_back(2), a.drop_back(2), b.drop_back(2),
                     a[a.size() - 2], a.back(), b.back(), adaptor.getLhs(), adaptor.getRhs(), {});
}

OpFoldResult LinearOp::fold(FoldAdaptor adaptor) {
  auto type = cast<RankedTensorType>(getType());
  ArrayRef<int64_t> w = getWeight().getType().getShape();
  if (!type.hasStaticShape() || w.size() != 2 || !getInput().getType().hasStaticShape())
    return {};
  int64_t rows = type.getNumElements() / std::max<int64_t>(1, w[1]);
  if (getBias() && !adaptor.getBias())
    return {};
  return foldProduct(type, {}, {}, {}, rows, w[0], w[1], adaptor.getInput(), adaptor.getWeight(),
                     adaptor.getBias());
}

/// A reduction of a constant over `axes` (empty: all), its elements met in
/// row-major order; floats combine in f32 as the kernels do. `finish`
/// turns a float total and the count into the result (the mean divides).
template <typename Combine>
static OpFoldResult foldReduce(Type resultType, Attribute input, ArrayRef<int64_t> axes,
                               Combine combine, bool mean = false) {
  auto type = cast<RankedTensorType>(resultType);
  auto in = unpack(input);
  if (!in || !foldable(type) || in->size() == 0)
    return {};
  ArrayRef<int64_t> shape = in->type.getShape();
  int64_t rank = int64_t(shape.size());
  SmallVector<bool> reduced(size_t(rank), axes.empty());
  for (int64_t a : axes) {
    if (a < -rank || a >= rank)
      return {};
    reduced[size_t(a < 0 ? a + rank : a)] = true;
  }
  // Each input element's result: its index over the dimensions kept.
  SmallVector<int64_t> stride(size_t(rank), 0);
  for (int64_t d = rank - 1, s = 1; d >= 0; --d)
    if (!reduced[size_t(d)])
      stride[size_t(d)] = s, s *= shape[size_t(d)];
  Values out;
  out.type = type;
  out.isFloat = in->isFloat;
  int64_t n = type.getNumElements(), count = in->size() / std::max<int64_t>(1, n);
  std::vector<bool> seen(size_t(n), false);
  out.f.resize(in->isFloat ? size_t(n) : 0), out.i.resize(in->isFloat ? 0 : size_t(n));
  SmallVector<int64_t> index(size_t(rank), 0);
  for (int64_t k = 0; k < in->size(); ++k) {
    int64_t o = 0;
    for (int64_t d = 0; d < rank; ++d)
      o += index[size_t(d)] * stride[size_t(d)];
    if (in->isFloat)
      out.f[size_t(o)] = seen[size_t(o)] ? double(combine(float(out.f[size_t(o)]), float(in->f[size_t(k)])))
                                         : double(float(in->f[size_t(k)]));
    else
      out.i[size_t(o)] = seen[size_t(o)] ? combine(out.i[size_t(o)], in->i[size_t(k)]) : in->i[size_t(k)];
    seen[size_t(o)] = true;
    for (int64_t d = rank - 1; d >= 0 && ++index[size_t(d)] == shape[size_t(d)]; --d)
      index[size_t(d)] = 0;
  }
  if (mean) {
    if (!in->isFloat)
      return {};
    for (double &x : out.f)
      x = double(float(x) / float(count));
  }
  return pack(type, out);
}

namespace {
/// The larger (smaller) of two values; a NaN wins, as the ops define.
struct Larger {
  bool smaller = false;
  template <typename T> T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(a) || std::isnan(b))
        return std::numeric_limits<T>::quiet_NaN();
    return smaller ? std::min(a, b) : std::max(a, b);
  }
};
} // namespace

OpFoldResult ReduceSumOp::fold(FoldAdaptor adaptor) {
  return foldReduce(getType(), adaptor.getInput(), getAxes(), [](auto a, auto b) { return a + b; });
}
OpFoldResult ReduceMeanOp::fold(FoldAdaptor adaptor) {
  return foldReduce(getType(), adaptor.getInput(), getAxes(), [](auto a, auto b) { return a + b; },
                    /*mean=*/true);
}
OpFoldResult ReduceMaxOp::fold(FoldAdaptor adaptor) {
  return foldReduce(getType(), adaptor.getInput(), getAxes(), Larger{});
}
OpFoldResult ReduceMinOp::fold(FoldAdaptor adaptor) {
  return foldReduce(getType(), adaptor.getInput(), getAxes(), Larger{/*smaller=*/true});
}

OpFoldResult GatherOp::fold(FoldAdaptor adaptor) {
  auto data = unpack(adaptor.getData()), indices = unpack(adaptor.getIndices());
  if (!data || !indices || !foldable(getType()))
    return {};
  ArrayRef<int64_t> shape = data->type.getShape();
  int64_t axis = *normalizeAxis(getAxis(), shape.size());
  int64_t outer = 1, inner = 1, dim = shape[axis];
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (int64_t d = axis + 1; d < static_cast<int64_t>(shape.size()); ++d)
    inner *= shape[d];
  Values out;
  out.type = getType();
  out.isFloat = data->isFloat;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t idx : indices->i) {
      if (idx < -dim || idx >= dim)
        return {};
      int64_t row = idx < 0 ? idx + dim : idx;
      for (int64_t k = 0; k < inner; ++k) {
        int64_t src = (o * dim + row) * inner + k;
        data->isFloat ? out.f.push_back(data->f[src]) : out.i.push_back(data->i[src]);
      }
    }
  return pack(getType(), out);
}

/// Whether `indices` of `shape` name, along `axis`, each element's own
/// position there.
static bool identityIndices(const Values &indices, ArrayRef<int64_t> shape, int64_t axis) {
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < int64_t(shape.size()); ++d)
    inner *= shape[d];
  for (int64_t k = 0; k < indices.size(); ++k)
    if (indices.i[k] != (k / inner) % shape[axis])
      return false;
  return true;
}

OpFoldResult GatherElementsOp::fold(FoldAdaptor adaptor) {
  auto indices = unpack(adaptor.getIndices());
  if (auto type = cast<RankedTensorType>(getData().getType());
      indices && !indices->isFloat && type == getType() && type.hasStaticShape() &&
      identityIndices(*indices, type.getShape(), *normalizeAxis(getAxis(), type.getRank())))
    return getData();
  auto data = unpack(adaptor.getData());
  if (!data || !indices || !foldable(getType()))
    return {};
  ArrayRef<int64_t> shape = data->type.getShape(), outShape = indices->type.getShape();
  int64_t rank = shape.size(), axis = *normalizeAxis(getAxis(), rank), dim = shape[axis];
  SmallVector<int64_t> strides = rowMajorStrides(shape), outStrides = rowMajorStrides(outShape);
  auto out = picked(*data, getType(), [&](ArrayRef<int64_t> index) -> int64_t {
    int64_t k = 0;
    for (int64_t d = 0; d < rank; ++d)
      k += index[d] * outStrides[d];
    int64_t idx = indices->i[k];
    if (idx < -dim || idx >= dim)
      return -1; // out of range: left for the runtime to report
    int64_t src = 0;
    for (int64_t d = 0; d < rank; ++d)
      src += (d == axis ? (idx < 0 ? idx + dim : idx) : index[d]) * strides[d];
    return src;
  });
  return out ? pack(getType(), *out) : OpFoldResult();
}

OpFoldResult TileOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput(); // every repeat count is 1
  auto in = unpack(adaptor.getInput());
  if (!in || !foldable(getType()))
    return {};
  ArrayRef<int64_t> inShape = in->type.getShape();
  SmallVector<int64_t> strides = rowMajorStrides(inShape);
  auto out = picked(*in, getType(), [&](ArrayRef<int64_t> index) {
    int64_t src = 0;
    for (size_t d = 0; d < index.size(); ++d)
      src += (index[d] % inShape[d]) * strides[d];
    return src;
  });
  return pack(getType(), *out);
}

OpFoldResult ConcatOp::fold(FoldAdaptor adaptor) {
  if (getInputs().size() == 1 && getInputs()[0].getType() == getType())
    return getInputs()[0];
  // Empty inputs add nothing (a decoder's past keys of length 0).
  SmallVector<Value> nonEmpty;
  for (Value v : getInputs())
    if (auto t = cast<ShapedType>(v.getType()); !t.hasStaticShape() || t.getNumElements() != 0)
      nonEmpty.push_back(v);
  if (!nonEmpty.empty() && nonEmpty.size() < getInputs().size()) {
    getInputsMutable().assign(nonEmpty);
    return getResult();
  }
  if (!foldable(getType()))
    return {};
  SmallVector<Values> in;
  for (Attribute a : adaptor.getInputs()) {
    auto v = unpack(a);
    if (!v)
      return {};
    in.push_back(std::move(*v));
  }
  auto type = getType();
  int64_t axis = *normalizeAxis(getAxis(), type.getRank());
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= type.getDimSize(d);
  Values out;
  out.type = type;
  out.isFloat = in.front().isFloat;
  for (int64_t o = 0; o < outer; ++o)
    for (const Values &v : in) {
      int64_t chunk = v.size() / outer;
      for (int64_t k = o * chunk; k < (o + 1) * chunk; ++k)
        v.isFloat ? out.f.push_back(v.f[k]) : out.i.push_back(v.i[k]);
    }
  return pack(type, out);
}

OpFoldResult SliceOp::fold(FoldAdaptor) {
  auto inType = getInput().getType();
  if (inType == getType() && llvm::all_of(getOffsets(), [](int64_t o) { return o == 0; }) &&
      llvm::all_of(getStrides(), [](int64_t s) { return s == 1; }))
    return getInput();
  // Masks are often sliced weights, so read those too (when small).
  if (!foldable(getType()) || !inType.hasStaticShape())
    return {};
  constexpr int64_t kMaxSliceSource = 1 << 22;
  auto in = unpack(getConstantElements(getInput(), kMaxSliceSource), kMaxSliceSource);
  if (!in)
    return {};
  SmallVector<int64_t> strides = rowMajorStrides(inType.getShape());
  ArrayRef<int64_t> offsets = getOffsets(), steps = getStrides();
  auto out = picked(*in, getType(), [&](ArrayRef<int64_t> index) {
    int64_t src = 0;
    for (size_t d = 0; d < index.size(); ++d)
      src += (offsets[d] + index[d] * steps[d]) * strides[d];
    return src;
  });
  return pack(getType(), *out);
}

LogicalResult SplitOp::fold(FoldAdaptor adaptor, SmallVectorImpl<OpFoldResult> &results) {
  auto inType = cast<RankedTensorType>(getInput().getType());
  auto in = unpack(adaptor.getInput());
  if (!in || !inType.hasStaticShape())
    return failure();
  int64_t axis = *normalizeAxis(getAxis(), inType.getRank());
  SmallVector<int64_t> strides = rowMajorStrides(inType.getShape());
  int64_t first = 0;
  SmallVector<OpFoldResult> pieces;
  for (Value piece : getResults()) {
    auto type = cast<RankedTensorType>(piece.getType());
    auto out = picked(*in, type, [&](ArrayRef<int64_t> index) {
      int64_t src = 0;
      for (size_t d = 0; d < index.size(); ++d)
        src += (index[d] + (int64_t(d) == axis ? first : 0)) * strides[d];
      return src;
    });
    if (!out)
      return failure();
    pieces.push_back(pack(type, *out));
    first += type.getDimSize(axis);
  }
  results.append(pieces);
  return success();
}

OpFoldResult TriluOp::fold(FoldAdaptor adaptor) {
  auto in = unpack(adaptor.getInput());
  if (!in)
    return {};
  auto type = getType();
  int64_t rows = type.getDimSize(type.getRank() - 2), cols = type.getDimSize(type.getRank() - 1);
  for (int64_t k = 0; k < in->size(); ++k) {
    int64_t i = (k / cols) % rows, j = k % cols;
    int64_t diagonal = static_cast<int64_t>(getK());
    bool keep = getUpper() ? j - i >= diagonal : j - i <= diagonal;
    if (!keep)
      in->isFloat ? void(in->f[k] = 0) : void(in->i[k] = 0);
  }
  return pack(type, *in);
}

OpFoldResult RangeOp::fold(FoldAdaptor adaptor) {
  auto start = unpack(adaptor.getStart()), limit = unpack(adaptor.getLimit()),
       delta = unpack(adaptor.getDelta());
  if (!start || !limit || !delta || !foldable(getType()))
    return {};
  Values out;
  out.type = getType();
  out.isFloat = start->isFloat;
  double s = start->asDouble(0), d = delta->asDouble(0);
  int64_t n = getType().getDimSize(0);
  for (int64_t k = 0; k < n; ++k)
    out.isFloat ? out.f.push_back(s + k * d) : out.i.push_back(start->i[0] + k * delta->i[0]);
  return pack(getType(), out);
}

OpFoldResult ShapeOp::fold(FoldAdaptor) {
  auto in = getInput().getType();
  int64_t rank = in.getRank();
  int64_t start = static_cast<int64_t>(getStart());
  start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
  int64_t end = getEnd() ? static_cast<int64_t>(*getEnd()) : rank;
  end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
  SmallVector<int64_t> dims;
  for (int64_t d = start; d < end; ++d) {
    if (in.isDynamicDim(d))
      return {};
    dims.push_back(in.getDimSize(d));
  }
  auto type = RankedTensorType::get({static_cast<int64_t>(dims.size())},
                                    IntegerType::get(getContext(), 64));
  if (type != getType())
    return {};
  return DenseElementsAttr::get(type, ArrayRef<int64_t>(dims));
}
