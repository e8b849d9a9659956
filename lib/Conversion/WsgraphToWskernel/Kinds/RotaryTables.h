//===- RotaryTables.h - rotary tables as functions of the position -*- C++ -*-===//
//
// Kernels compute rotary embeddings instead of holding their tables: a
// rotary op's cos and sin tables are checked to be m * cos(t * f) and
// m * sin(t * f) to fp32 rounding, and f and m kept. The attention kind
// turns q and k itself, or the linears that make them turn their results
// by pairs (PairTurn).
//
//===----------------------------------------------------------------------===//
#ifndef WSC_CONVERSION_KINDS_ROTARYTABLES_H
#define WSC_CONVERSION_KINDS_ROTARYTABLES_H

#include "../KernelBody.h"
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

/// An nb-word block turned as nb/2 rotary pairs at the token's position t:
/// (a, b) = (x[2j], x[2j + 1]) becomes (a cos - b sin, b cos + a sin) with
/// cos = m cos(t f) and sin = m sin(t f), as torch computes x cos +
/// rotate_half(x) sin for dimensions j and j + d/2 put side by side. The
/// PE's pairs' f and m are its window of a [2, N/2] table.
struct PairTurn {
  int64_t table = 0, position = 0, cosines = 0, sines = 0, products = 0, pairs = 0;

  /// SRAM for turning nb words, and the table from logical input `input`
  /// (each PE's columns from px * nb/2).
  static PairTurn allocate(Body &k, Sram &sram, unsigned input, int64_t nb);
  /// Turns the block at byte address `block` on the PEs `when`; the
  /// position starts again at 0 on tokens `firstToken` and counts up.
  void apply(Body &k, int64_t block, mlir::ArrayAttr when, mlir::ArrayAttr firstToken) const;
};

} // namespace wsc::lowering

#endif // WSC_CONVERSION_KINDS_ROTARYTABLES_H
