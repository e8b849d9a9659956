//===- FuseAttention.cpp - attention forms for the fusion pass -----------===//
//
// softmax(mask(q @ k^T * scale)) @ v as torch exports it for GPT-2, HF GPT-2,
// Llama and GPT-NeoX: the causal mask as a Where or added, the padding
// mask, rotary embeddings on q and k, and scores over heads merged into the
// batch.
//
//===----------------------------------------------------------------------===//
#include "FusePatterns.h"

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

/// Does the i1 constant `mask`, broadcast to [.., T, S], mark exactly the
/// future keys (j > i + S - T) when `masksFuture`, or exactly the visible ones
/// otherwise?
bool isCausalMask(Value mask, int64_t t, int64_t s, bool masksFuture) {
  auto type = cast<RankedTensorType>(mask.getType());
  if (type.getRank() < 2 || type.getDimSize(type.getRank() - 1) != s ||
      type.getDimSize(type.getRank() - 2) != t)
    return false;
  for (int64_t d = 0; d + 2 < type.getRank(); ++d)
    if (type.getDimSize(d) != 1)
      return false;
  DenseElementsAttr dense = getConstantElements(mask);
  if (!dense || !dense.getElementType().isInteger(1))
    return false;
  int64_t k = 0;
  for (bool bit : dense.getValues<bool>()) {
    int64_t i = k / s, j = k % s;
    bool future = j > i + (s - t);
    if (bit != (masksFuture ? future : !future))
      return false;
    ++k;
  }
  return true;
}

/// softmax(mask(q @ kT * scale)) @ v is attention(q, k, v).
struct FuseAttention : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op, PatternRewriter &rewriter) const override {
    auto softmax = singleUseDef<SoftmaxOp>(op.getLhs());
    Value v = op.getRhs();
    if (!softmax || softmax.getType().getRank() != 4 ||
        *normalizeAxis(softmax.getAxis(), 4) != 3)
      return failure();
    Value scores = softmax.getInput();
    int64_t t = softmax.getType().getDimSize(2), s = softmax.getType().getDimSize(3);
    // A key padding mask [B, 1, 1, S] added to the scores (HF's attention_mask).
    Value padding;
    if (auto add = singleUseDef<AddOp>(scores)) {
      auto isPadding = [&](Value m) {
        auto mt = cast<RankedTensorType>(m.getType());
        return mt.getRank() == 4 && mt.getDimSize(0) == softmax.getType().getDimSize(0) &&
               mt.getDimSize(1) == 1 && mt.getDimSize(2) == 1 && mt.getDimSize(3) == s &&
               mt.getElementType() == softmax.getType().getElementType();
      };
      if (!matchEither(add, padding, scores, isPadding) ||
          add.getType() != softmax.getType())
        return failure();
    }
    // The causal mask as a Where with -inf, or with a number that large
    // (finfo.min): either leaves the masked keys' exponents exactly zero.
    // Not a finite one beside a padding mask: a query whose visible keys are
    // all padded then spreads its weight over the future keys too, which a
    // causal kernel has not seen yet.
    auto masks = [&](Value fill) {
      std::optional<double> v = splatValue(fill);
      return v && (std::isinf(*v) ? *v < 0 : !padding && *v <= -1e30);
    };
    bool causal = false;
    if (auto where = singleUseDef<WhereOp>(scores)) {
      if (masks(where.getOnTrue()) && isCausalMask(where.getCond(), t, s, true))
        scores = where.getOnFalse();
      else if (masks(where.getOnFalse()) && isCausalMask(where.getCond(), t, s, false))
        scores = where.getOnTrue();
      else
        return failure();
      causal = true;
    }
    double scale = 1.0;
    if (auto mul = singleUseDef<MulOp>(scores)) {
      Value c, rest;
      if (!matchEither(mul, c, rest, [](Value x) { return splatValue(x).has_value(); }))
        return failure();
      scale = *splatValue(c), scores = rest;
    } else if (auto div = singleUseDef<DivOp>(scores)) {
      auto c = splatValue(div.getRhs());
      if (!c || *c == 0)
        return failure();
      scale = 1.0 / *c, scores = div.getLhs();
    }
    auto qk = singleUseDef<MatmulOp>(scores);
    if (!qk || scores.getType() != softmax.getType())
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
    if (qs[0] != kts[0] || qs[1] != kts[1] || qs[3] != kts[2] || kts[0] != vs[0] ||
        kts[1] != vs[1] || kts[3] != vs[2] || kTType.getElementType() != element ||
        vType.getElementType() != element ||
        op.getType() != RankedTensorType::get({qs[0], qs[1], qs[2], vs[3]}, element))
      return failure();
    Value k = TransposeOp::create(rewriter, op.getLoc(), kT, rewriter.getDenseI64ArrayAttr({0, 1, 3, 2}));
    if (padding)
      padding = ReshapeOp::create(
          rewriter, op.getLoc(),
          RankedTensorType::get({qs[0], s}, cast<ShapedType>(padding.getType()).getElementType()),
          padding);
    rewriter.replaceOpWithNewOp<AttentionOp>(op, op.getType(), q, k, v, padding,
                                             rewriter.getBoolAttr(causal),
                                             rewriter.getF32FloatAttr(scale));
    return success();
  }
};

} // namespace

void wsc::fuse::populateAttentionFusion(RewritePatternSet &patterns) {
  patterns.add<FuseAttention>(patterns.getContext());
}
