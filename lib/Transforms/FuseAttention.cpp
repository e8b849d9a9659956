//===- FuseAttention.cpp - attention forms for the fusion pass -----------===//
//
// softmax(mask(q @ k^T * scale)) @ v as torch exports it for GPT-2, HF GPT-2,
// Llama, GPT-NeoX and GPT-J: the causal mask as a Where or added, the padding
// mask, rotary embeddings on q and k, and scores over heads merged into the
// batch.
//
//===----------------------------------------------------------------------===//
#include "FusePatterns.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace wsc;
using namespace wsc::wsgraph;
using namespace wsc::fuse;

namespace {

//===----------------------------------------------------------------------===//
// attention
//===----------------------------------------------------------------------===//

/// Each [T, S] slice of the constant `mask` (broadcast to [.., T, S]), as
/// pred(i, j, element) over its elements; all leading slices alike.
template <typename Element, typename Pred>
bool everyCausalSlice(Value mask, int64_t t, int64_t s, Pred pred) {
  auto type = cast<RankedTensorType>(mask.getType());
  if (type.getRank() < 2 || type.getDimSize(type.getRank() - 1) != s ||
      type.getDimSize(type.getRank() - 2) != t)
    return false;
  DenseElementsAttr dense = getConstantElements(mask);
  if (!dense)
    return false;
  auto values = dense.getValues<Element>();
  int64_t k = 0, slice = t * s;
  for (Element e : values) {
    int64_t at = k % slice, i = at / s, j = at % s;
    if (!pred(j > i + (s - t), e) || (k >= slice && !(e == values[at])))
      return false;
    ++k;
  }
  return true;
}

/// Does the i1 constant `mask` mark exactly the future keys (j > i + S - T)
/// when `masksFuture`, or exactly the visible ones otherwise?
bool isCausalMask(Value mask, int64_t t, int64_t s, bool masksFuture) {
  if (!cast<ShapedType>(mask.getType()).getElementType().isInteger(1))
    return false;
  return everyCausalSlice<bool>(mask, t, s, [&](bool future, bool bit) {
    return bit == (masksFuture ? future : !future);
  });
}

/// A number that masks a score: -inf, or one so large (finfo.min) that its
/// exponent is exactly zero beside any visible score.
bool masksScore(double v) { return std::isinf(v) ? v < 0 : v <= -1e30; }

/// Is the float constant `mask` the additive causal mask: 0 on visible keys,
/// a masking number on future ones (Llama's full(finfo.min).triu(1))?
/// `fill` is the future keys' number, NaN if they differ.
bool isAdditiveCausalMask(Value mask, int64_t t, int64_t s, double &fill) {
  if (!isa<FloatType>(cast<ShapedType>(mask.getType()).getElementType()))
    return false;
  std::optional<double> seen;
  bool ok = everyCausalSlice<APFloat>(mask, t, s, [&](bool future, const APFloat &f) {
    double v = f.convertToDouble();
    if (future && seen && *seen != v)
      seen = std::nan("");
    else if (future && !seen)
      seen = v;
    return future ? masksScore(v) : v == 0.0;
  });
  fill = seen.value_or(-INFINITY);
  return ok;
}

/// The masks added to attention scores [B, H, T, S]: the causal one, and a
/// padding mask that is the same for every head and query, [B, 1, 1, S]
/// (possibly expanded over the queries).
struct ScoreMasks {
  bool causal = false;
  bool clamped = false;          // max(scores, finfo.min) (OPT) on the way
  double causalFill = -INFINITY; // the future keys' score (NaN: not one number)
  Value padding;                 // [B, 1, 1, S]
  /// Takes `m` if it is a sum of such masks.
  bool take(Value m, ShapedType scores) {
    int64_t t = scores.getDimSize(2), s = scores.getDimSize(3);
    if (auto add = m.getDefiningOp<AddOp>())
      return take(add.getLhs(), scores) && take(add.getRhs(), scores);
    if (isAdditiveCausalMask(m, t, s, causalFill) && !causal)
      return causal = true;
    if (auto expand = m.getDefiningOp<ExpandOp>())
      m = expand.getInput();
    auto mt = cast<RankedTensorType>(m.getType());
    if (padding || mt.getRank() != 4 || mt.getDimSize(0) != scores.getDimSize(0) ||
        mt.getDimSize(1) != 1 || mt.getDimSize(2) != 1 || mt.getDimSize(3) != s ||
        mt.getElementType() != scores.getElementType())
      return false;
    padding = m;
    return true;
  }
};

/// Does the constant padding mask [B, 1, 1, S] leave every sequence's first
/// key visible (0), so that every query sees an unpadded key?
bool firstKeysVisible(Value padding) {
  DenseElementsAttr dense = getConstantElements(padding);
  if (!dense || !isa<FloatType>(dense.getElementType()))
    return false;
  int64_t s = cast<ShapedType>(padding.getType()).getShape().back();
  auto values = dense.getValues<APFloat>();
  for (int64_t at = 0; at < dense.getNumElements(); at += s)
    if (!values[at].isZero())
      return false;
  return true;
}

/// Walks from the softmax's input back to q @ kT over the masks added (in
/// any order and grouping), a causal Where and scalar scales, in any order
/// (HF GPT-2 scales before the Where, GPT-J after it). A Where's fill is
/// taken as it reaches the softmax (times the scales after it); a padding
/// mask must come after every scale, as attention adds it unscaled.
LogicalResult peelScores(Value &scores, RankedTensorType type, ScoreMasks &masks, double &scale) {
  int64_t t = type.getDimSize(2), s = type.getDimSize(3);
  auto isMasking = [](Value fill) {
    std::optional<double> f = splatValue(fill);
    return f && masksScore(*f);
  };
  bool scaled = false;
  while (true) {
    if (auto add = singleUseDef<AddOp>(scores)) {
      if (scaled || add.getType() != type)
        return failure();
      ScoreMasks before = masks;
      if (masks.take(add.getRhs(), type))
        scores = add.getLhs();
      else if (masks = before; masks.take(add.getLhs(), type))
        scores = add.getRhs();
      else
        return failure();
    } else if (auto where = singleUseDef<WhereOp>(scores)) {
      Value fill;
      if (isMasking(where.getOnTrue()) && isCausalMask(where.getCond(), t, s, true))
        scores = where.getOnFalse(), fill = where.getOnTrue();
      else if (isMasking(where.getOnFalse()) && isCausalMask(where.getCond(), t, s, false))
        scores = where.getOnTrue(), fill = where.getOnFalse();
      else
        return failure();
      if (masks.causal || where.getType() != type || !masksScore(*splatValue(fill) * scale))
        return failure();
      masks.causal = true;
      masks.causalFill = *splatValue(fill) * scale;
    } else if (auto max = singleUseDef<MaxOp>(scores)) {
      Value c, rest;
      if (max.getType() != type || !matchEither(max, c, rest, isMasking))
        return failure();
      masks.clamped = true, scores = rest;
    } else if (auto mul = singleUseDef<MulOp>(scores)) {
      Value c, rest;
      if (!matchEither(mul, c, rest, [](Value x) { return splatValue(x).has_value(); }))
        return failure();
      scale *= *splatValue(c), scores = rest, scaled = true;
    } else if (auto div = singleUseDef<DivOp>(scores)) {
      auto c = splatValue(div.getRhs());
      if (!c || *c == 0)
        return failure();
      scale /= *c, scores = div.getLhs(), scaled = true;
    } else {
      return success();
    }
  }
}

/// k or v of one head that a matmul broadcasts over q's `heads` (Falcon's
/// multi-query attention) as repeat_kv writes it: reshape(expand(unsqueeze)),
/// which attention's lowering reads as a group of heads.
Value repeatedHeads(PatternRewriter &rewriter, Location loc, Value x, int64_t heads) {
  auto t = cast<RankedTensorType>(x.getType()); // [B, 1, S, D]
  ArrayRef<int64_t> s = t.getShape();
  Value one = UnsqueezeOp::create(rewriter, loc, t.clone({s[0], 1, 1, s[2], s[3]}), x,
                                  rewriter.getDenseI64ArrayAttr({2}));
  Value many = ExpandOp::create(rewriter, loc, t.clone({s[0], 1, heads, s[2], s[3]}), one);
  return ReshapeOp::create(rewriter, loc, t.clone({s[0], heads, s[2], s[3]}), many);
}

/// A scalar multiply under reshapes and transposes of q or kT (OPT scales q
/// as it projects it): its factor and the views, innermost last, so that
/// attention takes the factor in its scale and the views on the unscaled
/// value. Nothing when there is none.
bool isScalarConstant(Value x) {
  return cast<ShapedType>(x.getType()).getNumElements() == 1 && splatValue(x).has_value();
}
struct ScaledViews {
  Value rest; // the multiply's unscaled operand
  double factor = 1.0;
  SmallVector<Operation *, 2> views;
};
std::optional<ScaledViews> scaledViews(Value v) {
  ScaledViews found;
  while (true) {
    Operation *def = v.getDefiningOp();
    if (!def || !def->hasOneUse())
      return std::nullopt;
    if (isa<ReshapeOp, TransposeOp>(def)) {
      found.views.push_back(def);
      v = def->getOperand(0);
      continue;
    }
    auto mul = dyn_cast<MulOp>(def);
    Value c, rest;
    if (!mul || !matchEither(mul, c, rest, isScalarConstant) || rest.getType() != mul.getType())
      return std::nullopt;
    found.rest = rest, found.factor = *splatValue(c);
    return found;
  }
}

/// The views of `s` rebuilt on the multiply's unscaled operand.
Value unscaled(const ScaledViews &s, PatternRewriter &rewriter) {
  Value rest = s.rest;
  for (Operation *view : llvm::reverse(s.views)) {
    IRMapping map;
    map.map(view->getOperand(0), rest);
    rest = rewriter.clone(*view, map)->getResult(0);
  }
  return rest;
}

/// softmax(mask(q @ kT * scale)) @ v is attention(q, k, v). The masks are
/// a causal Where or an added causal mask, and a padding mask added.
/// A causal mask of finfo.min beside a padding mask becomes `future_fill`
/// unless every query sees an unpadded key: on a query that sees padding
/// only (left padding's first rows) torch spreads the weights, by rounding,
/// over the masked keys, future ones too.
/// A constant padding mask of zeros is no mask.
struct FuseAttention : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op, PatternRewriter &rewriter) const override {
    auto softmax = singleUseDef<SoftmaxOp>(op.getLhs());
    Value v = op.getRhs();
    if (!softmax || softmax.getType().getRank() != 4 ||
        *normalizeAxis(softmax.getAxis(), 4) != 3)
      return failure();
    Value scores = softmax.getInput();
    auto type = softmax.getType();
    int64_t s = type.getDimSize(3);
    ScoreMasks masks;
    double scale = 1.0;
    if (failed(peelScores(scores, type, masks, scale)))
      return failure();
    if (masks.padding && isSplat(masks.padding, 0.0))
      masks.padding = Value();
    // A clamp at a masking number (OPT's max(scores, finfo.min)) changes
    // nothing beside a causal mask alone: some key of every query stays
    // visible. Beside a padding mask it gives weight back, on a query that
    // sees only padding, to the padded future keys that both masks hide.
    if (masks.clamped && masks.padding)
      return failure();
    FloatAttr futureFill;
    if (masks.causal && masks.padding && !std::isinf(masks.causalFill) &&
        !firstKeysVisible(masks.padding)) {
      if (std::isnan(masks.causalFill))
        return failure();
      futureFill = rewriter.getF32FloatAttr(float(masks.causalFill));
    }
    auto qk = singleUseDef<MatmulOp>(scores);
    if (!qk || scores.getType() != type)
      return failure();
    Value q = qk.getLhs(), kT = qk.getRhs();
    auto qType = cast<RankedTensorType>(q.getType());
    auto kTType = cast<RankedTensorType>(kT.getType());
    auto vType = cast<RankedTensorType>(v.getType());
    if (kTType.getRank() != 4 || qType.getRank() != 4 || vType.getRank() != 4)
      return failure();
    // Check the operands attention expects before building anything: a
    // failed match must neither change the IR nor report an error (the
    // matmuls may broadcast where attention does not).
    ArrayRef<int64_t> qs = qType.getShape(), kts = kTType.getShape(), vs = vType.getShape();
    Type element = qType.getElementType();
    // One key and value head broadcast over the query heads (multi-query).
    bool broadcast = kts[1] == 1 && vs[1] == 1 && qs[1] > 1;
    if (qs[0] != kts[0] || (qs[1] != kts[1] && !broadcast) || qs[3] != kts[2] || kts[0] != vs[0] ||
        kts[1] != vs[1] || kts[3] != vs[2] || kTType.getElementType() != element ||
        vType.getElementType() != element ||
        op.getType() != RankedTensorType::get({qs[0], qs[1], qs[2], vs[3]}, element))
      return failure();
    // q or kT scaled under its views: the factor joins the scale.
    std::optional<ScaledViews> qScaled = scaledViews(q), kScaled = scaledViews(kT);
    for (const std::optional<ScaledViews> &sv : {qScaled, kScaled})
      if (sv)
        scale *= sv->factor;
    if (qScaled)
      q = unscaled(*qScaled, rewriter);
    if (kScaled)
      kT = unscaled(*kScaled, rewriter);
    Value k = TransposeOp::create(rewriter, op.getLoc(), kT, rewriter.getDenseI64ArrayAttr({0, 1, 3, 2}));
    if (broadcast) {
      k = repeatedHeads(rewriter, op.getLoc(), k, qs[1]);
      v = repeatedHeads(rewriter, op.getLoc(), v, qs[1]);
    }
    Value padding = masks.padding;
    if (padding)
      padding = ReshapeOp::create(
          rewriter, op.getLoc(),
          RankedTensorType::get({qs[0], s}, cast<ShapedType>(padding.getType()).getElementType()),
          padding);
    rewriter.replaceOpWithNewOp<AttentionOp>(op, op.getType(), q, k, v, padding,
                                             rewriter.getBoolAttr(masks.causal),
                                             rewriter.getF32FloatAttr(scale), futureFill);
    return success();
  }
};

/// A padding mask that turned out constant (a generating program binds
/// attention_mask to ones; folding may come after the fusion): zeros are no
/// mask, and with every first key visible no future fill is needed.
struct SimplifyAttentionMask : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AttentionOp op, PatternRewriter &rewriter) const override {
    Value mask = op.getMask();
    if (!mask || !getConstantElements(mask))
      return failure();
    bool zeros = isSplat(mask, 0.0);
    if (!zeros && !(op.getFutureFill() && firstKeysVisible(mask)))
      return failure();
    rewriter.modifyOpInPlace(op, [&] {
      op.removeFutureFillAttr();
      if (zeros)
        op.getMaskMutable().clear();
    });
    return success();
  }
};

/// A scalar operand: one element, or rank 0.
bool isScalar(Value v) { return cast<ShapedType>(v.getType()).getNumElements() == 1; }

/// op(expand(x), expand(y), scalars...) is expand(op(x, y, scalars...)): a mask computed
/// from [B, 1, 1, S] after it was expanded over the queries is computed
/// before, once per key (and attention sees a padding mask).
template <typename OpTy>
struct SinkExpand : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op, PatternRewriter &rewriter) const override {
    // Every operand a scalar or an expand of one shape (the same rank).
    IRMapping map;
    RankedTensorType small;
    auto result = cast<RankedTensorType>(op->getResult(0).getType());
    for (Value v : op->getOperands()) {
      auto expand = v.getDefiningOp<ExpandOp>();
      if (!expand) {
        if (!isScalar(v))
          return failure();
        continue;
      }
      auto in = cast<RankedTensorType>(expand.getInput().getType());
      if (in.getRank() != result.getRank() || (small && in.getShape() != small.getShape()))
        return failure();
      small = in;
      map.map(v, expand.getInput());
    }
    if (!small)
      return failure();
    Operation *inner = rewriter.clone(*op, map);
    inner->getResult(0).setType(RankedTensorType::get(small.getShape(), result.getElementType()));
    rewriter.replaceOpWithNewOp<ExpandOp>(op, result, inner->getResult(0));
    return success();
  }
};

/// The slice [from, from + size) with `stride` of the last axis of `of`?
bool isLastAxisSlice(Value v, Value of, int64_t from, int64_t size, int64_t stride = 1) {
  auto slice = v.getDefiningOp<SliceOp>();
  if (!slice || slice.getInput() != of)
    return false;
  auto in = cast<RankedTensorType>(of.getType());
  int64_t last = in.getRank() - 1;
  for (int64_t d = 0; d < last; ++d)
    if (slice.getOffsets()[d] != 0 || slice.getStrides()[d] != 1 ||
        slice.getSizes()[d] != in.getDimSize(d))
      return false;
  return slice.getOffsets()[last] == from && slice.getSizes()[last] == size &&
         slice.getStrides()[last] == stride;
}

bool isLastAxis(int64_t axis, Value of) {
  int64_t rank = cast<ShapedType>(of.getType()).getRank();
  return axis == -1 || axis == rank - 1;
}

/// Is `rot` rotate_half(x), cat(-x[R/2:], x[:R/2]) on the last axis?
bool isRotateHalf(Value rot, Value x) {
  auto cat = rot.getDefiningOp<ConcatOp>();
  int64_t r = cast<ShapedType>(x.getType()).getShape().back();
  if (!cat || cat.getInputs().size() != 2 || !isLastAxis(cat.getAxis(), x) || r % 2)
    return false;
  auto neg = cat.getInputs()[0].getDefiningOp<NegOp>();
  return neg && isLastAxisSlice(neg.getInput(), x, r / 2, r / 2) &&
         isLastAxisSlice(cat.getInputs()[1], x, 0, r / 2);
}

/// `v` with a unit last axis appended (torch's stack puts one there).
Value unitLastAxisOf(Value v) {
  auto u = v.getDefiningOp<UnsqueezeOp>();
  auto in = u ? cast<ShapedType>(u.getInput().getType()) : ShapedType();
  if (!u || u.getAxes().size() != 1 ||
      (u.getAxes()[0] != -1 && u.getAxes()[0] != in.getRank()))
    return {};
  return u.getInput();
}

/// Is `rot` GPT-J's rotate_every_two(x): stack(-x[..., 1::2], x[..., ::2])
/// flattened, (-x[2i+1], x[2i]) on the pairs of the last axis?
bool isRotateEveryTwo(Value rot, Value x) {
  auto flat = rot.getDefiningOp<ReshapeOp>();
  auto cat = flat ? flat.getInput().getDefiningOp<ConcatOp>() : ConcatOp();
  int64_t r = cast<ShapedType>(x.getType()).getShape().back();
  if (!cat || cat.getInputs().size() != 2 || rot.getType() != x.getType() || r % 2 ||
      !isLastAxis(cat.getAxis(), cat.getResult()))
    return false;
  // The negation either side of the new axis.
  Value first = cat.getInputs()[0];
  Value odd;
  if (auto neg = first.getDefiningOp<NegOp>())
    odd = unitLastAxisOf(neg.getInput());
  else if (Value inner = unitLastAxisOf(first); inner && inner.getDefiningOp<NegOp>())
    odd = inner.getDefiningOp<NegOp>().getInput();
  Value even = unitLastAxisOf(cat.getInputs()[1]);
  return odd && even && isLastAxisSlice(odd, x, 1, r / 2, 2) &&
         isLastAxisSlice(even, x, 0, r / 2, 2);
}

/// x * cos + rotate(x) * sin is rotary(x, cos, sin): rotate_half (Llama,
/// NeoX) or rotate_every_two (GPT-J, interleaved).
struct FuseRotary : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp op, PatternRewriter &rewriter) const override {
    for (auto [a, b] : {std::pair(op.getLhs(), op.getRhs()), std::pair(op.getRhs(), op.getLhs())}) {
      auto byCos = a.getDefiningOp<MulOp>(), bySin = b.getDefiningOp<MulOp>();
      if (!byCos || !bySin)
        continue;
      for (auto [x, cos] : {std::pair(byCos.getLhs(), byCos.getRhs()),
                            std::pair(byCos.getRhs(), byCos.getLhs())})
        for (auto [rot, sin] : {std::pair(bySin.getLhs(), bySin.getRhs()),
                                std::pair(bySin.getRhs(), bySin.getLhs())}) {
          if (x.getType() != op.getType() || !fitsTables(x, cos, sin))
            continue;
          bool interleaved = isRotateEveryTwo(rot, x);
          if (!interleaved && !isRotateHalf(rot, x))
            continue;
          rewriter.replaceOpWithNewOp<RotaryOp>(op, op.getType(), x, cos, sin, interleaved);
          return success();
        }
    }
    return failure();
  }
  /// Tables of x's element type that broadcast to x's shape.
  static bool fitsTables(Value x, Value cos, Value sin) {
    auto xt = cast<RankedTensorType>(x.getType());
    for (Value table : {cos, sin}) {
      auto t = cast<RankedTensorType>(table.getType());
      auto shape = broadcastShapes(xt.getShape(), t.getShape());
      if (t.getElementType() != xt.getElementType() || t.getRank() > xt.getRank() ||
          t.getRank() < 2 || failed(shape) || ArrayRef<int64_t>(*shape) != xt.getShape() ||
          t.getShape().back() != xt.getShape().back())
        return false;
    }
    return true;
  }
};

/// cat(rotary(x[..., :R]), x[..., R:]) is rotary(x): partial rotary (NeoX).
struct FoldRotaryPassThrough : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConcatOp op, PatternRewriter &rewriter) const override {
    if (op.getInputs().size() != 2)
      return failure();
    auto rotary = op.getInputs()[0].getDefiningOp<RotaryOp>();
    if (!rotary)
      return failure();
    auto slice = rotary.getInput().getDefiningOp<SliceOp>();
    if (!slice || !isLastAxis(op.getAxis(), op.getResult()))
      return failure();
    Value x = slice.getInput();
    int64_t r = rotary.getRotaryDims(), d = cast<ShapedType>(x.getType()).getShape().back();
    if (x.getType() != op.getType() || !isLastAxisSlice(rotary.getInput(), x, 0, r) ||
        !isLastAxisSlice(op.getInputs()[1], x, r, d - r))
      return failure();
    rewriter.replaceOpWithNewOp<RotaryOp>(op, op.getType(), x, rotary.getCos(), rotary.getSin(),
                                          rotary.getInterleaved());
    return success();
  }
};

/// A gather of an activation by one constant index, or a constant run of
/// consecutive ones, along an axis is a slice there (Falcon picks its key
/// and value heads with index lists [-2] and [-1], BLOOM q, k and v by
/// scalar indices); a scalar index drops the axis, as gather does.
struct GatherOfRangeIsSlice : OpRewritePattern<GatherOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatherOp op, PatternRewriter &rewriter) const override {
    if (op.getData().getDefiningOp<WeightOp>())
      return failure(); // SliceLeadingRowsOfWeight's
    DenseElementsAttr indices = getConstantElements(op.getIndices());
    auto in = cast<RankedTensorType>(op.getData().getType());
    auto indexType = cast<RankedTensorType>(op.getIndices().getType());
    int64_t rank = in.getRank(), axis = op.getAxis() < 0 ? op.getAxis() + rank : op.getAxis();
    if (!indices || indexType.getRank() > 1 || indices.getNumElements() == 0 || axis < 0 ||
        axis >= rank || in.isDynamicDim(axis) || !in.hasStaticShape())
      return failure();
    int64_t n = in.getDimSize(axis), first = 0, count = 0;
    for (APInt i : indices.getValues<APInt>()) {
      int64_t at = i.getSExtValue() < 0 ? i.getSExtValue() + n : i.getSExtValue();
      if (at < 0 || at >= n || (count && at != first + count))
        return failure();
      first = count ? first : at;
      ++count;
    }
    SmallVector<int64_t> offsets(rank, 0), sizes(in.getShape()), strides(rank, 1);
    offsets[axis] = first, sizes[axis] = count;
    Value slice = SliceOp::create(rewriter, op.getLoc(), in.clone(sizes), op.getData(),
                                  rewriter.getDenseI64ArrayAttr(offsets),
                                  rewriter.getDenseI64ArrayAttr(sizes),
                                  rewriter.getDenseI64ArrayAttr(strides));
    if (slice.getType() == op.getType())
      rewriter.replaceOp(op, slice);
    else
      rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), slice);
    return success();
  }
};

/// `merged` as [B*H, ...] of a rank-4 [B, H, ...] value, or null.
Value headsUnmerged(Value merged) {
  auto reshape = merged.getDefiningOp<ReshapeOp>();
  if (!reshape)
    return {};
  auto in = cast<RankedTensorType>(reshape.getInput().getType());
  auto out = cast<RankedTensorType>(reshape.getType());
  if (in.getRank() != 4 || out.getRank() != 3 || !in.hasStaticShape() ||
      out.getDimSize(0) != in.getDimSize(0) * in.getDimSize(1) ||
      out.getShape().drop_front() != in.getShape().drop_front(2))
    return {};
  return reshape.getInput();
}

/// softmax(scores [B*H, T, S]) @ v [B*H, S, E], both merged from [B, H, ..]
/// (OPT's bmm over heads merged into the batch), is the product over
/// [B, H] merged afterwards, which attention's fusion reads.
struct UnmergeHeadsOfSoftmax : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op, PatternRewriter &rewriter) const override {
    auto softmax = singleUseDef<SoftmaxOp>(op.getLhs());
    if (!softmax || softmax.getType().getRank() != 3 ||
        *normalizeAxis(softmax.getAxis(), 3) != 2)
      return failure();
    Value scores = headsUnmerged(softmax.getInput()), v = headsUnmerged(op.getRhs());
    if (!scores || !v ||
        cast<ShapedType>(scores.getType()).getShape().take_front(2) !=
            cast<ShapedType>(v.getType()).getShape().take_front(2))
      return failure();
    Location loc = op.getLoc();
    Value probs = SoftmaxOp::create(rewriter, loc, scores, rewriter.getI64IntegerAttr(-1));
    Value product = MatmulOp::create(rewriter, loc, probs, v);
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), product);
    return success();
  }
};

/// transpose(rotary(x, cos, sin)) over axes other than the last is
/// rotary(transpose(x)) with the tables transposed alike: GPT-J turns
/// [B, T, H, D] heads before it transposes them, attention reads them
/// turned after the transpose.
struct TransposeBeforeRotary : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op, PatternRewriter &rewriter) const override {
    auto rotary = singleUseDef<RotaryOp>(op.getInput());
    ArrayRef<int64_t> perm = op.getPerm();
    int64_t rank = int64_t(perm.size());
    if (!rotary || perm.back() != rank - 1)
      return failure();
    Location loc = op.getLoc();
    auto turnTable = [&](Value table) -> Value {
      auto t = cast<RankedTensorType>(table.getType());
      if (t.getRank() < rank) { // broadcasting's leading unit axes, made explicit
        SmallVector<int64_t> shape(size_t(rank - t.getRank()), 1);
        llvm::append_range(shape, t.getShape());
        table = ReshapeOp::create(rewriter, loc, t.clone(shape), table);
      }
      return TransposeOp::create(rewriter, loc, table, op.getPermAttr());
    };
    Value x = TransposeOp::create(rewriter, loc, rotary.getInput(), op.getPermAttr());
    rewriter.replaceOpWithNewOp<RotaryOp>(op, op.getType(), x, turnTable(rotary.getCos()),
                                          turnTable(rotary.getSin()), rotary.getInterleaved());
    return success();
  }
};

/// [B*H, T, D] @ [B*H, D, S] reshaped to [B, H, T, S] (NeoX's baddbmm over
/// heads merged into the batch) is the product over [B, H] directly; a
/// scale between the product and the reshape moves along.
struct UnmergeHeadsOfScores : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op, PatternRewriter &rewriter) const override {
    auto out = cast<RankedTensorType>(op.getType());
    Value product = op.getInput();
    auto scaled = singleUseDef<MulOp>(product);
    Value scale;
    if (scaled && !matchEither(scaled, scale, product, isScalar))
      return failure();
    auto mm = singleUseDef<MatmulOp>(product);
    if (!mm || out.getRank() != 4)
      return failure();
    auto a = mm.getLhs().getDefiningOp<ReshapeOp>();
    auto bt = mm.getRhs().getDefiningOp<TransposeOp>();
    auto b = bt ? bt.getInput().getDefiningOp<ReshapeOp>() : ReshapeOp();
    if (!a || !b || bt.getPerm() != ArrayRef<int64_t>{0, 2, 1})
      return failure();
    auto at = cast<RankedTensorType>(a.getInput().getType());
    auto bs = cast<RankedTensorType>(b.getInput().getType());
    if (at.getRank() != 4 || bs.getRank() != 4 ||
        at.getShape().take_front(2) != out.getShape().take_front(2) ||
        bs.getShape().take_front(2) != out.getShape().take_front(2) ||
        at.getDimSize(2) != out.getDimSize(2) || bs.getDimSize(2) != out.getDimSize(3) ||
        at.getDimSize(3) != bs.getDimSize(3))
      return failure();
    Location loc = op.getLoc();
    Value kT = TransposeOp::create(rewriter, loc, b.getInput(),
                                   rewriter.getDenseI64ArrayAttr({0, 1, 3, 2}));
    Value scores = MatmulOp::create(rewriter, loc, a.getInput(), kT);
    if (scale)
      scores = MulOp::create(rewriter, loc, scores, scale);
    rewriter.replaceOp(op, scores);
    return success();
  }
};

} // namespace

void wsc::fuse::populateAttentionFusion(RewritePatternSet &patterns) {
  patterns.add<FuseAttention, SimplifyAttentionMask, FuseRotary, FoldRotaryPassThrough,
               TransposeBeforeRotary, UnmergeHeadsOfScores, UnmergeHeadsOfSoftmax,
               GatherOfRangeIsSlice,
               SinkExpand<CastOp>, SinkExpand<SubOp>, SinkExpand<AddOp>, SinkExpand<MulOp>,
               SinkExpand<WhereOp>>(patterns.getContext());
}
