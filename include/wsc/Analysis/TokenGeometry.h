//===- TokenGeometry.h - the rows a program's fused kernels stream -*- C++ -*-===//
#ifndef WSC_ANALYSIS_TOKENGEOMETRY_H
#define WSC_ANALYSIS_TOKENGEOMETRY_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"

#include <cstdint>
#include <utility>

namespace wsc {

/// The function's token ids: its first static 2-D integer argument, or null.
inline mlir::RankedTensorType tokenIds(mlir::func::FuncOp func) {
  for (mlir::BlockArgument arg : func.getArguments()) {
    auto t = mlir::dyn_cast<mlir::RankedTensorType>(arg.getType());
    if (t && t.getRank() == 2 && mlir::isa<mlir::IntegerType>(t.getElementType()) &&
        t.hasStaticShape())
      return t;
  }
  return {};
}

/// The [batch, tokens] the fused kernel kinds stream rows of: the shape of
/// the function's token ids; in a function without any, those of its first
/// static float argument of rank 3 ([B, T, C], embeddings given as floats)
/// or 2 ([R, C], an MLP's batch of feature rows, as (1, R)); (0, 0) when
/// none.
inline std::pair<int64_t, int64_t> tokenGeometry(mlir::func::FuncOp func) {
  if (mlir::RankedTensorType ids = tokenIds(func))
    return {ids.getDimSize(0), ids.getDimSize(1)};
  for (mlir::BlockArgument arg : func.getArguments()) {
    auto t = mlir::dyn_cast<mlir::RankedTensorType>(arg.getType());
    if (!t || !mlir::isa<mlir::FloatType>(t.getElementType()) || !t.hasStaticShape())
      continue;
    if (t.getRank() == 3)
      return {t.getDimSize(0), t.getDimSize(1)};
    if (t.getRank() == 2)
      return {1, t.getDimSize(0)};
  }
  return {0, 0};
}

} // namespace wsc

#endif // WSC_ANALYSIS_TOKENGEOMETRY_H
