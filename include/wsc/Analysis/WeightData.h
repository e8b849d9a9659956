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
/// On a wsgraph.weight: a sparsity mask (--sparsity-mask), one element per
/// weight element at this offset of this file, each this many bytes; an
/// element whose bytes are all zero makes its weight read as zero.
inline constexpr llvm::StringLiteral kMaskFileAttr = "wsgraph.mask_file";
inline constexpr llvm::StringLiteral kMaskOffsetAttr = "wsgraph.mask_offset";
inline constexpr llvm::StringLiteral kMaskElementBytesAttr = "wsgraph.mask_element_bytes";
/// On a part of a pruned wsgraph.weight (beside kPruneAttr): the cut the
/// whole matrix's pruning made, as [magnitude bits, ties, first]: an element
/// whose index in the whole (first + its index here, in file order) is i
/// reads as zero when its magnitude is below the cut, or equal and i < ties.
inline constexpr llvm::StringLiteral kPruneCutAttr = "wsgraph.prune_cut";

/// The fp32 bit patterns of a static f32 tensor: a wsgraph.weight's bytes
/// from its file, or a wsgraph.constant's literal, masked as its mask
/// attributes say and pruned as its kPruneAttr asks, each -0.0 as +0.0. An elided weight, another element type or an unreadable
/// file fail with an error at `user`.
mlir::FailureOr<std::vector<uint32_t>> readF32Weight(mlir::Value v, mlir::Operation *user);

/// Zeroes each element of `bits` whose mask element (`elementBytes` bytes
/// at `mask`, one per element) is all zero bytes.
void zeroMasked(llvm::MutableArrayRef<uint32_t> bits, const char *mask, uint64_t elementBytes);

/// Zeroes the floor(fraction * size) elements of `bits` (fp32) with the
/// smallest magnitudes; of equal magnitudes the lower index goes first.
void pruneByMagnitude(llvm::MutableArrayRef<uint32_t> bits, double fraction);

/// Fixes a pruned weight's kPruneCutAttr from its values, so that views of
/// it (keepAlterations) prune as the whole matrix does. Elided: nothing.
mlir::LogicalResult fixPruneCut(mlir::Operation *weight, mlir::Operation *user);

/// Gives `part`, a view of `whole`'s file that starts `first` elements into
/// its bytes, the mask, pruning (its cut, fixed first) and density `whole`
/// reads with: it reads as the same elements of the whole.
void keepAlterations(mlir::Operation *whole, mlir::Operation *part, int64_t first);

/// Are a weight's values read through readF32Weight, not as its bytes
/// (masked, pruned, or held sparse: its zeros as the sparsity pass counted
/// them)?
inline bool readsAltered(mlir::Operation *def) {
  return def->hasAttr(kPruneAttr) || def->hasAttr(kMaskFileAttr) || def->hasAttr(kDensityAttr);
}

/// The weight's kDensityAttr, 1 without it.
double weightDensity(mlir::Value v);

} // namespace wsc

#endif // WSC_ANALYSIS_WEIGHTDATA_H
