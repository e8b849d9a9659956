//===- WeightData.h - the values of a model's weights -----------*- C++ -*-===//
#ifndef WSC_ANALYSIS_WEIGHTDATA_H
#define WSC_ANALYSIS_WEIGHTDATA_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <vector>

namespace wsc {

/// On a wsgraph.weight or wsgraph.constant: the fraction of its elements,
/// smallest magnitudes first, that read as zero (magnitude pruning).
inline constexpr llvm::StringLiteral kPruneAttr = "wsgraph.prune";
/// On a wsgraph.weight or wsgraph.constant: the fraction of its elements
/// that are not zero, when the model's weights hold few enough nonzeros
/// for kernels to keep them sparse (after any pruning).
inline constexpr llvm::StringLiteral kDensityAttr = "wsgraph.density";

/// The fp32 bit patterns of a static f32 tensor: a wsgraph.weight's bytes
/// from its file, or a wsgraph.constant's literal, pruned as its
/// kPruneAttr asks. An elided weight, another element type or an unreadable
/// file fail with an error at `user`.
mlir::FailureOr<std::vector<uint32_t>> readF32Weight(mlir::Value v, mlir::Operation *user);

/// Zeroes the floor(fraction * size) elements of `bits` (fp32) with the
/// smallest magnitudes; of equal magnitudes the lower index goes first.
void pruneByMagnitude(llvm::MutableArrayRef<uint32_t> bits, double fraction);

/// The weight's kDensityAttr, 1 without it.
double weightDensity(mlir::Value v);

} // namespace wsc

#endif // WSC_ANALYSIS_WEIGHTDATA_H
