//===- RotaryTables.h - rotary tables as functions of the position -*- C++ -*-===//
//
// The attention kind computes rotary embeddings instead of holding their
// tables: a rotary op's cos and sin tables are checked to be m * cos(t * f)
// and m * sin(t * f) to fp32 rounding, and f and m kept.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_CONVERSION_KINDS_ROTARYTABLES_H
#define WSC_CONVERSION_KINDS_ROTARYTABLES_H

#include "wsgraph/WsgraphDialect.h"

#include <optional>

namespace wsc::lowering {

/// Rotary tables that are m * cos(t * f) and m * sin(t * f) at position t,
/// per rotated dimension: what the kernel computes instead of holding them.
struct RotaryTables {
  llvm::SmallVector<float> freq, amp;
};

/// The frequencies and amplitudes of a rotary op's constant tables over
/// `tokens` positions, if they are such functions of the position (to fp32
/// rounding); nothing otherwise.
std::optional<RotaryTables> rotaryTables(wsgraph::RotaryOp op, int64_t tokens);

/// The [2, R] constant of frequencies and amplitudes the kernel holds.
mlir::Value rotaryTableConstant(mlir::Operation *at, const RotaryTables &t);

} // namespace wsc::lowering

#endif // WSC_CONVERSION_KINDS_ROTARYTABLES_H
