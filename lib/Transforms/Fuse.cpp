//===- Fuse.cpp - fold and fuse wsgraph into GPT building blocks ----------===//
//
// torch.onnx.export spells layer norm, GELU, attention and dense layers as
// chains of primitive ops, differently at each opset. This pass folds the
// constant parts and rewrites the chains into one fused op each, so that what
// follows sees one form.
//
//===----------------------------------------------------------------------===//
#include "FusePatterns.h"
#include "wsc/Analysis/TokenGeometry.h"
#include "wsc/Analysis/WeightData.h"
#include "wsc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/STLExtras.h"

#include <array>
#include <cmath>

namespace wsc {
#define GEN_PASS_DEF_WSGRAPHFUSE
#include "wsc/Transforms/Passes.h.inc"
} // namespace wsc

using namespace mlir;
using namespace wsc;
using namespace wsc::wsgraph;
using namespace wsc::fuse;

namespace {

/// The function `v` belongs to.
func::FuncOp functionOf(Value v) {
  Operation *at = isa<BlockArgument>(v) ? v.getParentBlock()->getParentOp() : v.getDefiningOp();
  auto func = at ? dyn_cast<func::FuncOp>(at) : func::FuncOp();
  return !func && at ? at->getParentOfType<func::FuncOp>() : func;
}

/// Is `v` a [batch, tokens, C] activation of its function (tokenGeometry)?
/// The fused kernel kinds take such activations only (the lowering's
/// PlanContext::isActivation); fused ops that only they compute are made
/// for such values alone.
bool isTokenActivation(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  func::FuncOp func = functionOf(v);
  if (!t || t.getRank() != 3 || !t.hasStaticShape() || !func)
    return false;
  auto [batch, tokens] = wsc::tokenGeometry(func);
  return batch > 0 && t.getDimSize(0) == batch && t.getDimSize(1) == tokens;
}

//===----------------------------------------------------------------------===//
// linear
//===----------------------------------------------------------------------===//

/// matmul(x, W) with a static 2-D W is linear(x, W).
struct MatmulToLinear : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op, PatternRewriter &rewriter) const override {
    auto w = op.getRhs();
    if (cast<RankedTensorType>(w.getType()).getRank() != 2 || !isStatic(w))
      return failure();
    rewriter.replaceOpWithNewOp<LinearOp>(op, op.getType(), op.getLhs(), w, Value());
    return success();
  }
};

/// linear(x, W) + b with a static [N] b is linear(x, W, b).
struct FoldBiasIntoLinear : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp op, PatternRewriter &rewriter) const override {
    Value linearValue, bias;
    if (!matchEither(op, linearValue, bias, [](Value v) {
          auto l = singleUseDef<LinearOp>(v);
          return l && !l.getBias();
        }))
      return failure();
    auto linear = linearValue.getDefiningOp<LinearOp>();
    auto biasType = cast<RankedTensorType>(bias.getType());
    auto w = cast<RankedTensorType>(linear.getWeight().getType());
    if (!isStatic(bias) || biasType.getRank() != 1 || biasType.getDimSize(0) != w.getDimSize(1) ||
        op.getType() != linear.getType())
      return failure();
    rewriter.replaceOpWithNewOp<LinearOp>(op, op.getType(), linear.getInput(),
                                          linear.getWeight(), bias);
    return success();
  }
};

/// The float literal `v` (1-D or 2-D), transposed if asked and times
/// `scale`; null when `v` is no float literal.
DenseElementsAttr scaledLiteral(Value v, bool transpose, double scale) {
  auto constant = v.getDefiningOp<ConstantOp>();
  auto dense = constant ? dyn_cast<DenseElementsAttr>(constant.getValue()) : DenseElementsAttr();
  auto type = dense ? dyn_cast<RankedTensorType>(dense.getType()) : RankedTensorType();
  if (!type || !isa<FloatType>(type.getElementType()) || type.getRank() > 2 ||
      (transpose && type.getRank() != 2))
    return {};
  SmallVector<APFloat> in(dense.getValues<APFloat>());
  SmallVector<APFloat> out;
  SmallVector<int64_t> shape(type.getShape());
  if (transpose) {
    int64_t rows = shape[0], cols = shape[1];
    for (int64_t j = 0; j < cols; ++j)
      for (int64_t i = 0; i < rows; ++i)
        out.push_back(in[i * cols + j]);
    std::swap(shape[0], shape[1]);
  } else {
    out = in;
  }
  if (scale != 1.0) {
    auto &semantics = cast<FloatType>(type.getElementType()).getFloatSemantics();
    APFloat factor(scale);
    bool lost;
    factor.convert(semantics, APFloat::rmNearestTiesToEven, &lost);
    for (APFloat &x : out)
      x.multiply(factor, APFloat::rmNearestTiesToEven);
  }
  return DenseElementsAttr::get(RankedTensorType::get(shape, type.getElementType()), out);
}

/// `weight` read as `type` with these file strides: the same bytes, its
/// discardable attributes (mask, pruning, density) kept. Row-major strides
/// (a transpose undone) make a plain weight.
WeightOp weightView(PatternRewriter &rewriter, WeightOp weight, RankedTensorType type,
                    ArrayRef<int64_t> strides) {
  SmallVector<int64_t> rowMajor(strides.size(), 1);
  for (int64_t d = int64_t(strides.size()) - 2; d >= 0; --d)
    rowMajor[size_t(d)] = rowMajor[size_t(d) + 1] * type.getDimSize(d + 1);
  DenseI64ArrayAttr view =
      llvm::equal(strides, rowMajor) ? DenseI64ArrayAttr() : rewriter.getDenseI64ArrayAttr(strides);
  auto op = WeightOp::create(rewriter, weight.getLoc(), type, weight.getNameAttr(),
                             weight.getFileAttr(), weight.getOffsetAttr(), view);
  op->setDiscardableAttrs(weight->getDiscardableAttrDictionary());
  return op;
}

/// The 2-D weight transposed: a view, not a copy.
WeightOp transposedWeight(PatternRewriter &rewriter, WeightOp weight) {
  auto type = cast<RankedTensorType>(weight.getType());
  SmallVector<int64_t> strides = weight.getElementStrides();
  return weightView(rewriter, weight,
                    RankedTensorType::get({type.getDimSize(1), type.getDimSize(0)},
                                          type.getElementType()),
                    {strides[1], strides[0]});
}

/// transpose(weight) as the weight of a product (nn.Linear's weight before
/// a MatMul) is the weight read in another order. Elsewhere the transpose
/// stays a kernel: a static value is held whole by the kernel that uses it.
struct TransposedWeightIsAView : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op, PatternRewriter &rewriter) const override {
    auto weight = op.getInput().getDefiningOp<WeightOp>();
    auto weightOfProduct = [&](OpOperand &use) {
      Operation *user = use.getOwner();
      return (isa<MatmulOp>(user) && use.getOperandNumber() == 1) ||
             (isa<GemmOp>(user) && use.getOperandNumber() == 1);
    };
    if (!weight || !llvm::all_of(op->getUses(), weightOfProduct))
      return failure();
    SmallVector<int64_t> strides = weight.getElementStrides(), permuted;
    for (int64_t d : op.getPerm())
      permuted.push_back(strides[size_t(d)]);
    rewriter.replaceOp(op, weightView(rewriter, weight, cast<RankedTensorType>(op.getType()),
                                      permuted));
    return success();
  }
};

/// A reshape (or squeeze, unsqueeze) of a stored row-major weight, before a
/// transpose or as a product's weight (an LSTM's [1, 4H, K] gates squeezed),
/// is the same bytes in another shape.
template <typename OpTy> struct ReshapedWeightIsAWeight : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op, PatternRewriter &rewriter) const override {
    auto weight = op->getOperand(0).template getDefiningOp<WeightOp>();
    auto forWeights = [](OpOperand &use) {
      Operation *user = use.getOwner();
      return isa<TransposeOp>(user) || (isa<MatmulOp, GemmOp>(user) && use.getOperandNumber() == 1);
    };
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    if (!weight || weight.getStrides() || !type.hasStaticShape() ||
        !llvm::all_of(op->getUses(), forWeights))
      return failure();
    auto same = WeightOp::create(rewriter, weight.getLoc(), type, weight.getNameAttr(),
                                 weight.getFileAttr(), weight.getOffsetAttr(), DenseI64ArrayAttr());
    same->setDiscardableAttrs(weight->getDiscardableAttrDictionary());
    rewriter.replaceOp(op, same);
    return success();
  }
};

/// Why `gemm` cannot be a linear; empty when it can. A linear's weight is a
/// static [K, N] matrix, its bias a static [N] vector: a transposed stored
/// weight is a view of its file, a transposed literal is made at compile
/// time; a scaled weight or bias only of a literal.
std::string gemmNotLinear(GemmOp gemm) {
  Value w = gemm.getB(), c = gemm.getC();
  double alpha = gemm.getAlphaAttr().getValueAsDouble();
  double beta = gemm.getBetaAttr().getValueAsDouble();
  bool literalW = bool(w.getDefiningOp<ConstantOp>());
  if (gemm.getTransA())
    return "its A operand is transposed (transA), which no linear takes";
  if (!isStatic(w))
    return "a product of two computed tensors, not by a weight (no linear)";
  if (alpha != 1.0 && !literalW)
    return "alpha != 1 scales a weight held in a file, which wsc does not copy";
  if (c && beta != 0.0) {
    auto type = cast<RankedTensorType>(c.getType());
    int64_t n = cast<RankedTensorType>(gemm.getType()).getDimSize(1);
    if (!isStatic(c) || type.getRank() != 1 || type.getDimSize(0) != n)
      return "its C operand is not a static [N] bias";
    if (beta != 1.0 && !c.getDefiningOp<ConstantOp>())
      return "beta != 1 scales a bias held in a file, which wsc does not copy";
  }
  return "";
}

/// gemm(x, W, b) (HF GPT-2's Conv1D, torch.addmm) is linear(x, W, b): W must
/// be static, and transposed or scaled only when it is a literal.
struct GemmToLinear : OpRewritePattern<GemmOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GemmOp op, PatternRewriter &rewriter) const override {
    if (!gemmNotLinear(op).empty())
      return failure();
    double alpha = op.getAlphaAttr().getValueAsDouble();
    double beta = op.getBetaAttr().getValueAsDouble();
    Value w = op.getB(), bias = beta != 0.0 ? op.getC() : Value();
    if (auto weight = w.getDefiningOp<WeightOp>(); weight && op.getTransB()) {
      w = transposedWeight(rewriter, weight); // alpha is 1: a stored weight is not scaled
    } else if (op.getTransB() || alpha != 1.0) {
      DenseElementsAttr lit = scaledLiteral(w, op.getTransB(), alpha);
      if (!lit)
        return failure();
      w = ConstantOp::create(rewriter, op.getLoc(), lit.getType(), lit);
    }
    if (bias && beta != 1.0) {
      DenseElementsAttr lit = scaledLiteral(bias, false, beta);
      if (!lit)
        return failure();
      bias = ConstantOp::create(rewriter, op.getLoc(), lit.getType(), lit);
    }
    rewriter.replaceOpWithNewOp<LinearOp>(op, op.getType(), op.getA(), w, bias);
    return success();
  }
};

/// reshape(linear(x2d)) to [B, T, N] is linear(reshape(x2d) to [B, T, K]),
/// for any split of the rows:
/// a linear treats rows alike, so the rows may be split before it rather than
/// after, and the reshape that flattened x cancels with the new one. This
/// gives the linear kernel its [batch, tokens, C] activation where an export
/// flattened the tokens for a Gemm (HF GPT-2's Conv1D).
struct SplitRowsBeforeLinear : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op, PatternRewriter &rewriter) const override {
    auto linear = singleUseDef<LinearOp>(op.getInput());
    if (!linear)
      return failure();
    auto in = cast<RankedTensorType>(linear.getInput().getType());
    auto out = cast<RankedTensorType>(op.getType());
    auto before = cast<RankedTensorType>(linear.getType());
    // Only splits of flattened rows: from [rows, N] to [..., N].
    if (!in.hasStaticShape() || !out.hasStaticShape() || before.getRank() != 2 ||
        out.getRank() <= 2 || out.getShape().back() != before.getDimSize(1))
      return failure();
    SmallVector<int64_t> shape(out.getShape().drop_back());
    shape.push_back(in.getShape().back());
    Value x = ReshapeOp::create(rewriter, op.getLoc(),
                                RankedTensorType::get(shape, in.getElementType()),
                                linear.getInput());
    rewriter.replaceOpWithNewOp<LinearOp>(op, out, x, linear.getWeight(), linear.getBias());
    return success();
  }
};

//===----------------------------------------------------------------------===//
// gelu
//===----------------------------------------------------------------------===//

/// x * 0.5 * (1 + erf(x / sqrt(2))), in any association of the product.
struct FuseGelu : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;

  /// Is v == 1 + erf(x / sqrt(2)) (or x * 1/sqrt(2)); binds x.
  static bool isErfTerm(Value v, Value &x) {
    auto add = v.getDefiningOp<AddOp>();
    if (!add)
      return false;
    Value erfValue, one;
    if (!matchEither(add, erfValue, one, [](Value e) { return bool(e.getDefiningOp<ErfOp>()); }) ||
        !isSplat(one, 1.0))
      return false;
    Value t = erfValue.getDefiningOp<ErfOp>().getInput();
    if (auto div = t.getDefiningOp<DivOp>(); div && isSplat(div.getRhs(), std::sqrt(2.0), 1e-6)) {
      x = div.getLhs();
      return true;
    }
    if (auto mul = t.getDefiningOp<MulOp>()) {
      Value in, c;
      if (matchEither(mul, c, in, [](Value s) { return isSplat(s, 1 / std::sqrt(2.0), 1e-6); })) {
        x = in;
        return true;
      }
    }
    return false;
  }

  /// Are the factors {x, 0.5, 1 + erf(x / sqrt(2))} in some order? Returns x.
  static Value matchFactors(Value (&factors)[3], Type type) {
    for (int half = 0; half < 3; ++half) {
      if (!isSplat(factors[half], 0.5))
        continue;
      for (int term = 0; term < 3; ++term) {
        Value x;
        if (term == half || !isErfTerm(factors[term], x))
          continue;
        if (factors[3 - half - term] == x && x.getType() == type)
          return x;
      }
    }
    return {};
  }

  LogicalResult matchAndRewrite(MulOp op, PatternRewriter &rewriter) const override {
    // Flatten the product into three factors, through either operand.
    for (int side = 0; side < 2; ++side) {
      Value nested = side == 0 ? op.getLhs() : op.getRhs();
      Value outer = side == 0 ? op.getRhs() : op.getLhs();
      auto inner = singleUseDef<MulOp>(nested);
      if (!inner)
        continue;
      Value factors[3] = {inner.getLhs(), inner.getRhs(), outer};
      if (Value x = matchFactors(factors, op.getType())) {
        rewriter.replaceOpWithNewOp<GeluOp>(op, x);
        return success();
      }
    }
    return failure();
  }
};

/// A polynomial c0 + c1 x + c2 x^2 + c3 x^3.
using Cubic = std::array<double, 4>;

/// Is `v` a polynomial of degree 3 or less in `x`, made of mul, add, sub,
/// division by a constant, pow(., 2 or 3) and splat constants, every
/// computed value of x's type (nothing broadcast)? Gives its coefficients,
/// and adds the ops it is made of to `ops`.
std::optional<Cubic> cubicIn(Value v, Value x, SmallPtrSetImpl<Operation *> &ops,
                             int depth = 8) {
  if (v == x)
    return Cubic{0, 1, 0, 0};
  if (auto c = splatValue(v))
    return Cubic{*c, 0, 0, 0};
  Operation *op = v.getDefiningOp();
  if (!op || depth == 0 || v.getType() != x.getType() || op->getNumOperands() != 2)
    return std::nullopt;
  auto mul = [](const Cubic &a, const Cubic &b) -> std::optional<Cubic> {
    Cubic r{0, 0, 0, 0};
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        if (a[i] == 0 || b[j] == 0)
          continue;
        if (i + j > 3)
          return std::nullopt;
        r[i + j] += a[i] * b[j];
      }
    return r;
  };
  auto lhs = cubicIn(op->getOperand(0), x, ops, depth - 1);
  if (!lhs)
    return std::nullopt;
  std::optional<Cubic> r;
  if (isa<PowOp>(op)) {
    auto e = splatValue(op->getOperand(1));
    if (!e || (*e != 2.0 && *e != 3.0))
      return std::nullopt;
    r = mul(*lhs, *lhs);
    if (r && *e == 3.0)
      r = mul(*r, *lhs);
  } else if (isa<DivOp>(op)) {
    auto d = splatValue(op->getOperand(1));
    if (!d || *d == 0)
      return std::nullopt;
    r = Cubic{(*lhs)[0] / *d, (*lhs)[1] / *d, (*lhs)[2] / *d, (*lhs)[3] / *d};
  } else if (isa<MulOp, AddOp, SubOp>(op)) {
    auto rhs = cubicIn(op->getOperand(1), x, ops, depth - 1);
    if (!rhs)
      return std::nullopt;
    if (isa<MulOp>(op))
      r = mul(*lhs, *rhs);
    else {
      double sign = isa<SubOp>(op) ? -1.0 : 1.0;
      r = Cubic{(*lhs)[0] + sign * (*rhs)[0], (*lhs)[1] + sign * (*rhs)[1],
                (*lhs)[2] + sign * (*rhs)[2], (*lhs)[3] + sign * (*rhs)[3]};
    }
  }
  if (r)
    ops.insert(op);
  return r;
}

/// Within a relative `tolerance` of `expected`?
bool near(double v, double expected, double tolerance) {
  return std::abs(v - expected) <= tolerance * std::abs(expected);
}

/// 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))) is
/// gelu(x) {approximate = "tanh"}: in any association of the product, with
/// the cube as pow(x, 3) or x * x * x and the polynomial in any arrangement
/// (HF's gelu_new and FastGELU, torch's approximate='tanh'). After a linear
/// of a [batch, tokens, K] activation the linear kind finishes it
/// (linear_gelu); elsewhere one generic kernel computes it.
struct FuseTanhGelu : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;

  /// The factors of the product `v`, through nested single-use products of
  /// the same type; the products go into `ops`.
  static void factorsOf(Value v, Type type, SmallVectorImpl<Value> &factors,
                        SmallPtrSetImpl<Operation *> &ops, bool root) {
    auto mul = root ? v.getDefiningOp<MulOp>() : singleUseDef<MulOp>(v);
    if (!mul || mul.getType() != type || factors.size() > 8) {
      factors.push_back(v);
      return;
    }
    ops.insert(mul);
    factorsOf(mul.getLhs(), type, factors, ops, false);
    factorsOf(mul.getRhs(), type, factors, ops, false);
  }

  /// Is `term` 1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)) for some x; binds x.
  static bool isTanhTerm(Value term, Type type, Value &x, SmallPtrSetImpl<Operation *> &ops) {
    auto add = singleUseDef<AddOp>(term);
    if (!add || add.getType() != type)
      return false;
    Value t, one;
    if (!matchEither(add, t, one, [](Value v) { return bool(singleUseDef<TanhOp>(v)); }) ||
        !isSplat(one, 1.0))
      return false;
    Value inner = t.getDefiningOp<TanhOp>().getInput();
    if (inner.getType() != type)
      return false;
    // x is the one value the polynomial is made of: some value on the way
    // down its first computed operands.
    constexpr double kSqrt2OverPi = 0.79788456080286535588, kKappa = 0.044715;
    Value cand = inner;
    for (int i = 0; i < 8; ++i) {
      Operation *op = cand.getDefiningOp();
      if (!op || !isa<MulOp, AddOp, SubOp, DivOp, PowOp>(op))
        return false;
      cand = splatValue(op->getOperand(0)) ? op->getOperand(1) : op->getOperand(0);
      if (splatValue(cand))
        return false;
      SmallPtrSet<Operation *, 8> polyOps;
      auto c = cubicIn(inner, cand, polyOps);
      if (!c || (*c)[0] != 0 || (*c)[2] != 0 || !near((*c)[1], kSqrt2OverPi, 1e-5) ||
          !near((*c)[3] / (*c)[1], kKappa, 1e-5))
        continue;
      x = cand;
      ops.insert(polyOps.begin(), polyOps.end());
      ops.insert(add);
      ops.insert(t.getDefiningOp());
      return true;
    }
    return false;
  }

  LogicalResult matchAndRewrite(MulOp op, PatternRewriter &rewriter) const override {
    Type type = op.getType();
    SmallVector<Value, 4> factors;
    SmallPtrSet<Operation *, 16> ops;
    factorsOf(op.getResult(), type, factors, ops, true);
    double constant = 1.0;
    SmallVector<Value, 2> computed;
    for (Value f : factors) {
      if (auto c = splatValue(f))
        constant *= *c;
      else
        computed.push_back(f);
    }
    if (computed.size() != 2 || !near(constant, 0.5, 1e-6))
      return failure();
    for (int term = 0; term < 2; ++term) {
      Value x;
      if (!isTanhTerm(computed[term], type, x, ops) || computed[1 - term] != x ||
          x.getType() != type)
        continue;
      rewriter.replaceOpWithNewOp<GeluOp>(op, x, rewriter.getStringAttr("tanh"));
      return success();
    }
    return failure();
  }
};

//===----------------------------------------------------------------------===//
// layer_norm
//===----------------------------------------------------------------------===//

/// Are `axes` exactly the trailing dimensions from some axis on? Returns it.
std::optional<int64_t> trailingAxes(ArrayRef<int64_t> axes, int64_t rank) {
  SmallVector<int64_t> sorted;
  for (int64_t a : axes) {
    auto n = normalizeAxis(a, rank);
    if (failed(n))
      return std::nullopt;
    sorted.push_back(*n);
  }
  llvm::sort(sorted);
  if (sorted.empty() || sorted.back() != rank - 1)
    return std::nullopt;
  for (size_t i = 1; i < sorted.size(); ++i)
    if (sorted[i] != sorted[i - 1] + 1)
      return std::nullopt;
  return sorted.front();
}

/// (x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps) is layer_norm(x, ones).
struct FuseLayerNormCore : OpRewritePattern<DivOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DivOp op, PatternRewriter &rewriter) const override {
    auto centered = op.getLhs().getDefiningOp<SubOp>();
    auto sqrt = op.getRhs().getDefiningOp<SqrtOp>();
    if (!centered || !sqrt)
      return failure();
    Value x = centered.getLhs();
    auto mean = centered.getRhs().getDefiningOp<ReduceMeanOp>();
    if (!mean || mean.getInput() != x || !mean.getKeepdims() || x.getType() != op.getType())
      return failure();
    auto type = cast<RankedTensorType>(x.getType());
    auto axis = trailingAxes(mean.getAxes(), type.getRank());
    if (!axis)
      return failure();
    auto addEps = sqrt.getInput().getDefiningOp<AddOp>();
    if (!addEps)
      return failure();
    Value var, eps;
    if (!matchEither(addEps, var, eps, [](Value v) { return bool(v.getDefiningOp<ReduceMeanOp>()); }))
      return failure();
    auto epsValue = splatValue(eps);
    auto varMean = var.getDefiningOp<ReduceMeanOp>();
    auto square = varMean.getInput().getDefiningOp<PowOp>();
    if (!epsValue || !square || square.getLhs() != centered.getResult() ||
        !isSplat(square.getRhs(), 2.0) || varMean.getAxes() != mean.getAxes() ||
        !varMean.getKeepdims())
      return failure();
    auto normShape = type.getShape().drop_front(*axis);
    auto scaleType = RankedTensorType::get(normShape, type.getElementType());
    Value ones = ConstantOp::create(rewriter, 
        op.getLoc(), scaleType, DenseElementsAttr::get(scaleType, rewriter.getFloatAttr(type.getElementType(), 1.0)));
    rewriter.replaceOpWithNewOp<LayerNormOp>(op, op.getType(), x, ones, Value(),
                                             rewriter.getI64IntegerAttr(*axis - type.getRank()),
                                             rewriter.getF32FloatAttr(*epsValue));
    return success();
  }
};

/// layer_norm(x, ones) * gamma is layer_norm(x, gamma).
struct FoldScaleIntoLayerNorm : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp op, PatternRewriter &rewriter) const override {
    Value normValue, gamma;
    if (!matchEither(op, normValue, gamma, [](Value v) {
          auto ln = singleUseDef<LayerNormOp>(v);
          return ln && !ln.getBias() && isSplat(ln.getScale(), 1.0);
        }))
      return failure();
    auto ln = normValue.getDefiningOp<LayerNormOp>();
    if (!isStatic(gamma) || gamma.getType() != ln.getScale().getType() ||
        op.getType() != ln.getType())
      return failure();
    rewriter.replaceOpWithNewOp<LayerNormOp>(op, op.getType(), ln.getInput(), gamma, Value(),
                                             ln.getAxisAttr(), ln.getEpsilonAttr());
    return success();
  }
};

/// layer_norm(x, gamma) + beta is layer_norm(x, gamma, beta).
struct FoldBiasIntoLayerNorm : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp op, PatternRewriter &rewriter) const override {
    Value normValue, beta;
    if (!matchEither(op, normValue, beta, [](Value v) {
          auto ln = singleUseDef<LayerNormOp>(v);
          return ln && !ln.getBias();
        }))
      return failure();
    auto ln = normValue.getDefiningOp<LayerNormOp>();
    if (!isStatic(beta) || beta.getType() != ln.getScale().getType() ||
        op.getType() != ln.getType())
      return failure();
    rewriter.replaceOpWithNewOp<LayerNormOp>(op, op.getType(), ln.getInput(), ln.getScale(),
                                             beta, ln.getAxisAttr(), ln.getEpsilonAttr());
    return success();
  }
};

//===----------------------------------------------------------------------===//
// rms_norm
//===----------------------------------------------------------------------===//

/// Is `v` mean(x^2) + eps over trailing axes, kept as size 1 (x^2 as pow(x, 2)
/// or x * x); binds x, eps and the first of the axes.
bool isMeanSquarePlusEps(Value v, Value &x, double &eps, int64_t &axis) {
  auto add = v.getDefiningOp<AddOp>();
  if (!add)
    return false;
  Value mean, epsValue;
  if (!matchEither(add, mean, epsValue,
                   [](Value m) { return bool(m.getDefiningOp<ReduceMeanOp>()); }))
    return false;
  auto e = splatValue(epsValue);
  auto reduce = mean.getDefiningOp<ReduceMeanOp>();
  if (!e || *e < 0 || !reduce.getKeepdims() || add.getType() != reduce.getType())
    return false;
  Value sq = reduce.getInput();
  if (auto pow = sq.getDefiningOp<PowOp>(); pow && isSplat(pow.getRhs(), 2.0))
    x = pow.getLhs();
  else if (auto mul = sq.getDefiningOp<MulOp>(); mul && mul.getLhs() == mul.getRhs())
    x = mul.getLhs();
  else
    return false;
  auto type = cast<RankedTensorType>(x.getType());
  auto first = trailingAxes(reduce.getAxes(), type.getRank());
  if (!first || sq.getType() != x.getType())
    return false;
  eps = *e, axis = *first;
  return true;
}

/// Is `v` 1 / sqrt(s) (as a division, a reciprocal or pow(s, -0.5))? Binds s.
bool isInverseSqrt(Value v, Value &s) {
  if (auto div = v.getDefiningOp<DivOp>(); div && isSplat(div.getLhs(), 1.0)) {
    auto sqrt = div.getRhs().getDefiningOp<SqrtOp>();
    return sqrt && (s = sqrt.getInput(), true);
  }
  if (auto rec = v.getDefiningOp<ReciprocalOp>()) {
    auto sqrt = rec.getInput().getDefiningOp<SqrtOp>();
    return sqrt && (s = sqrt.getInput(), true);
  }
  if (auto pow = v.getDefiningOp<PowOp>(); pow && isSplat(pow.getRhs(), -0.5))
    return s = pow.getLhs(), true;
  return false;
}

/// x * rsqrt(mean(x^2) + eps) (or x / sqrt(mean(x^2) + eps)) over the last
/// axis is rms_norm(x, ones), as torch exports Llama's RMSNorm (its float32
/// casts are identities on an f32 model and fold away).
///
/// The generic kind has no body for rms_norm, so it is made only for
/// [batch, tokens, C] activations, normalized over C: the form the rms_norm
/// kernel kind takes. Other shapes keep their primitive ops.
struct FuseRmsNormCore : RewritePattern {
  FuseRmsNormCore(MLIRContext *ctx) : RewritePattern(MatchAnyOpTypeTag(), 1, ctx) {}
  LogicalResult matchAndRewrite(Operation *op, PatternRewriter &rewriter) const override {
    Value x, s;
    if (auto mul = dyn_cast<MulOp>(op)) {
      Value inv;
      if (!matchEither(mul, inv, x, [&](Value v) { return isInverseSqrt(v, s); }))
        return failure();
    } else if (auto div = dyn_cast<DivOp>(op)) {
      auto sqrt = div.getRhs().getDefiningOp<SqrtOp>();
      if (!sqrt)
        return failure();
      x = div.getLhs(), s = sqrt.getInput();
    } else {
      return failure();
    }
    Value squared;
    double eps;
    int64_t axis;
    if (!isMeanSquarePlusEps(s, squared, eps, axis) || squared != x ||
        x.getType() != op->getResult(0).getType() || !isTokenActivation(x) || axis != 2)
      return failure();
    auto type = cast<RankedTensorType>(x.getType());
    auto scaleType = RankedTensorType::get({type.getDimSize(2)}, type.getElementType());
    Value ones = ConstantOp::create(
        rewriter, op->getLoc(), scaleType,
        DenseElementsAttr::get(scaleType, rewriter.getFloatAttr(type.getElementType(), 1.0)));
    rewriter.replaceOpWithNewOp<RmsNormOp>(op, type, x, ones, rewriter.getI64IntegerAttr(-1),
                                           rewriter.getF32FloatAttr(eps));
    return success();
  }
};

/// rms_norm(x, ones) * weight is rms_norm(x, weight).
struct FoldScaleIntoRmsNorm : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp op, PatternRewriter &rewriter) const override {
    Value normValue, weight;
    if (!matchEither(op, normValue, weight, [](Value v) {
          auto n = singleUseDef<RmsNormOp>(v);
          return n && isSplat(n.getScale(), 1.0);
        }))
      return failure();
    auto norm = normValue.getDefiningOp<RmsNormOp>();
    if (!isStatic(weight) || weight.getType() != norm.getScale().getType() ||
        op.getType() != norm.getType())
      return failure();
    rewriter.replaceOpWithNewOp<RmsNormOp>(op, op.getType(), norm.getInput(), weight,
                                           norm.getAxisAttr(), norm.getEpsilonAttr());
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Weights
//===----------------------------------------------------------------------===//

/// Leading rows a..b of a weight are a weight at a later offset: gathering
/// position embeddings by a constant range, or slicing a weight, must not
/// copy the weight into the IR. Indices [..., T] that repeat one range for
/// every sequence (OPT's positions of a batch) gather the rows once and
/// broadcast them.
struct SliceLeadingRowsOfWeight : OpRewritePattern<GatherOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatherOp op, PatternRewriter &rewriter) const override {
    auto weight = op.getData().getDefiningOp<WeightOp>();
    if (!weight || op.getAxis() != 0)
      return failure();
    DenseElementsAttr indices = getConstantElements(op.getIndices());
    auto type = cast<RankedTensorType>(weight.getType());
    if (!indices || indices.getNumElements() == 0)
      return failure();
    auto shape = cast<ShapedType>(indices.getType()).getShape();
    SmallVector<int64_t> all;
    for (APInt i : indices.getValues<APInt>())
      all.push_back(i.getSExtValue());
    // One consecutive run over the whole, else over each last-axis slice alike.
    int64_t run = isRange(all) ? int64_t(all.size()) : shape.empty() ? 0 : shape.back();
    if (!run || !isRange(ArrayRef(all).take_front(run)))
      return failure();
    for (size_t at = size_t(run); at < all.size(); ++at)
      if (all[at] != all[at - size_t(run)])
        return failure();
    int64_t first = all.front(), end = first + run;
    if (first < 0 || end > type.getDimSize(0))
      return failure();
    if (failed(fixPruneCut(weight, op)))
      return failure();
    WeightOp rows = sliceWeightRows(rewriter, weight, first, end);
    keepAlterations(weight, rows, first * weight.getElementStrides()[0]);
    if (run == int64_t(all.size())) {
      rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), rows);
      return success();
    }
    auto out = cast<RankedTensorType>(op.getType());
    SmallVector<int64_t> once(out.getShape());
    for (int64_t d = 0; d + 2 < out.getRank(); ++d)
      once[d] = 1;
    Value one = ReshapeOp::create(rewriter, op.getLoc(), out.clone(once), rows);
    rewriter.replaceOpWithNewOp<ExpandOp>(op, out, one);
    return success();
  }
  static bool isRange(ArrayRef<int64_t> v) {
    for (size_t i = 1; i < v.size(); ++i)
      if (v[i] != v[i - 1] + 1)
        return false;
    return true;
  }
};

/// Why `op`, left after fusion, is no fused op; empty for ops that compute
/// nothing (constants, weights, shapes) or are fused already.
std::string unfusedReason(Operation *op) {
  if (isa<ConstantOp, WeightOp, LinearOp, LayerNormOp, RmsNormOp, GeluOp, AttentionOp, ReshapeOp,
          SqueezeOp, UnsqueezeOp>(op) ||
      !isa<WsgraphDialect>(op->getDialect()))
    return "";
  auto isWeight = [](Value v) { return v.getDefiningOp<ConstantOp>() || v.getDefiningOp<WeightOp>(); };
  if (auto mm = dyn_cast<MatmulOp>(op))
    return !isWeight(mm.getRhs()) ? "a product of two computed tensors, not by a weight (no linear); "
                                    "no attention pattern took it"
                                  : "its weight is not a 2-D matrix (no linear)";
  if (auto gemm = dyn_cast<GemmOp>(op))
    return gemmNotLinear(gemm);
  if (isa<SoftmaxOp>(op))
    return "no attention pattern matched: attention is softmax(q @ k^T * scale, causal mask) @ v "
           "over heads of one activation";
  if (isa<TanhOp, ErfOp, PowOp>(op))
    return "part of no form the fusion knows: the erf GELU, or on a [batch, tokens, C] "
           "activation the tanh GELU of a linear and the RMS norm";
  if (isa<WhereOp>(op))
    return "a mask that no attention pattern absorbed";
  return "no fusion pattern covers it";
}

struct WsgraphFusePass : wsc::impl::WsgraphFuseBase<WsgraphFusePass> {
  using WsgraphFuseBase::WsgraphFuseBase;
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    patterns.add<TransposedWeightIsAView, ReshapedWeightIsAWeight<ReshapeOp>,
                 ReshapedWeightIsAWeight<SqueezeOp>, ReshapedWeightIsAWeight<UnsqueezeOp>,
                 MatmulToLinear, GemmToLinear, SplitRowsBeforeLinear,
                 FoldBiasIntoLinear, FuseGelu,
                 FuseTanhGelu, FuseLayerNormCore, FoldScaleIntoLayerNorm, FoldBiasIntoLayerNorm,
                 FuseRmsNormCore, FoldScaleIntoRmsNorm, SliceLeadingRowsOfWeight>(ctx);
    populateAttentionFusion(patterns);
    // Attention must see q @ kT before matmul-to-linear could claim it; it
    // never can (kT is not static), so one pattern set suffices.
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    if (remarks)
      getOperation().walk([](Operation *op) {
        if (std::string why = unfusedReason(op); !why.empty())
          op->emitRemark("left unfused (a generic kernel): ") << why;
      });
  }
};

} // namespace
