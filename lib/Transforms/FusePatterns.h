//===- FusePatterns.h - what the fusion pass's pattern files share -*- C++ -*-===//
//
// The fusion pass (Fuse.cpp) keeps its patterns in files by block: dense
// layers and norms there, attention (masks, rotary, heads) in
// FuseAttention.cpp. These are the matching helpers they share.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_TRANSFORMS_FUSEPATTERNS_H
#define WSC_TRANSFORMS_FUSEPATTERNS_H

#include "wsgraph/WsgraphDialect.h"

#include "mlir/IR/PatternMatch.h"

#include <cmath>
#include <optional>

namespace wsc::fuse {

using mlir::APFloat;
using mlir::APInt;
using mlir::DenseElementsAttr;
using mlir::FloatType;
using mlir::Value;
using wsgraph::ConstantOp;
using wsgraph::WeightOp;
using wsgraph::getConstantElements;
using wsgraph::splatValue;
using llvm::isa;

inline bool isSplat(Value v, double expected, double tolerance = 0) {
  auto s = splatValue(v);
  return s && (*s == expected || std::abs(*s - expected) <= tolerance);
}

/// Weights and literals: values known before the model runs.
inline bool isStatic(Value v) { return v.getDefiningOp<WeightOp>() || v.getDefiningOp<ConstantOp>(); }

template <typename OpTy>
OpTy singleUseDef(Value v) {
  auto op = v.getDefiningOp<OpTy>();
  return op && op->hasOneUse() ? op : OpTy();
}

/// For a commutative binary op, binds (a, b) so that pred(a) holds.
template <typename OpTy, typename Pred>
bool matchEither(OpTy op, Value &a, Value &b, Pred pred) {
  if (pred(op.getLhs())) {
    a = op.getLhs(), b = op.getRhs();
    return true;
  }
  if (pred(op.getRhs())) {
    a = op.getRhs(), b = op.getLhs();
    return true;
  }
  return false;
}

/// Adds the attention patterns (FuseAttention.cpp).
void populateAttentionFusion(mlir::RewritePatternSet &patterns);

} // namespace wsc::fuse

#endif
