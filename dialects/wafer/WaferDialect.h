//===- WaferDialect.h - physical facts of the wafer -------------*- C++ -*-===//
#ifndef WAFER_WAFERDIALECT_H
#define WAFER_WAFERDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"

#include <array>
#include <vector>

#include "wafer/WaferDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "wafer/WaferAttrs.h.inc"

#define GET_OP_CLASSES
#include "wafer/WaferOps.h.inc"

namespace wsc::wafer {

/// The largest machine the compiler and the runtime take (docs/arch.md):
/// at most 65535 PEs a side, 2^24 PEs a wafer and 65535 wafers. The runtime
/// keeps coordinates in 16 bits; the compiler keeps per-PE grids, so a
/// larger arch is an error rather than an out-of-memory abort.
inline constexpr int64_t kMaxGridSide = 65535;
inline constexpr int64_t kMaxPesPerWafer = int64_t(1) << 24;
inline constexpr int64_t kMaxWafers = 65535;
/// The largest arch JSON file read.
inline constexpr int64_t kMaxArchFileBytes = int64_t(1) << 20;

/// ArchAttr's parameters, with the per-PE figures of the presets as defaults.
struct ArchParams {
  std::string name;
  int64_t width = 0, height = 0, sramBytes = 48 * 1024, colors = 24;
  int64_t clockHz = 1'100'000'000;
  int64_t hopCycles = 1, simdFp32 = 1, fmacFp32 = 1, fmacFp16 = 4, transcendentalCycles = 8;
  int64_t maxWafers = 2048;
  int64_t linkBytesPerCycle = 136;
  int64_t linkLatencyCycles = 2000;
  int64_t extMemBytes = 1'200'000'000'000'000;
  int64_t extMemBytesPerCycle = 136;

  /// The attribute, or null with `error` set when a figure is invalid.
  ArchAttr build(mlir::MLIRContext *context, std::string &error) const;
};

/// The module attribute that holds the machine.
inline constexpr llvm::StringLiteral kArchAttrName = "wafer.arch";
/// The module attribute that holds the defect map (a DefectsAttr).
inline constexpr llvm::StringLiteral kDefectsAttrName = "wafer.defects";
/// The module attribute where routing writes its summary figures.
inline constexpr llvm::StringLiteral kRouteStatsAttrName = "wafer.route_stats";
/// Kernel attribute written by placement: array<i64: wafer, x, y>.
inline constexpr llvm::StringLiteral kOriginAttrName = "wafer.origin";
/// Kernel attribute written by routing: {port = color : i64, ...}.
inline constexpr llvm::StringLiteral kColorsAttrName = "wafer.colors";
/// Kernel attribute set by wafer partitioning: the wafer index (i64).
inline constexpr llvm::StringLiteral kStageAttrName = "wafer.stage";

/// Router ports, as in the runtime's `Port` enum. Out masks use bit (1 << port).
enum Port : int { Ramp = 0, North = 1, East = 2, South = 3, West = 4, Link = 5 };

} // namespace wsc::wafer

#endif // WAFER_WAFERDIALECT_H
