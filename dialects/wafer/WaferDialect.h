//===- WaferDialect.h - physical facts of the wafer -------------*- C++ -*-===//
#ifndef WAFER_WAFERDIALECT_H
#define WAFER_WAFERDIALECT_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"

#include "wafer/WaferDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "wafer/WaferAttrs.h.inc"

namespace wsc::wafer {

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

/// Resolves `wse2`, `wse3`, `mesh:WxH` or a JSON file into an arch; on
/// failure returns null and sets `error`.
ArchAttr parseArch(mlir::MLIRContext *context, llvm::StringRef spec, std::string &error);

/// The machine of `module`, or an error on the module when it has none.
mlir::FailureOr<ArchAttr> getArch(mlir::ModuleOp module);

} // namespace wsc::wafer

#endif // WAFER_WAFERDIALECT_H
