//===- WaferToSvg.h - a picture of a placed and routed module ---*- C++ -*-===//
#ifndef WSC_TARGET_WAFERTOSVG_H
#define WSC_TARGET_WAFERTOSVG_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace wsc {

/// Draws every wafer of a placed (and usually routed) module as SVG 1.1:
/// kernels as rectangles coloured by kind and labelled with their names, the
/// load of every directed link as a heatmap (coarse tiles on large meshes),
/// defects, a legend and the figures (docs/svg.md). The text is deterministic
/// for a given module. On failure emits errors that name the kernel or op,
/// and `svg` is unspecified.
mlir::LogicalResult waferToSvg(mlir::ModuleOp module, std::string &svg);

/// The same, written to `os` only on success.
mlir::LogicalResult waferToSvg(mlir::ModuleOp module, llvm::raw_ostream &os);

/// Registers the `--wafer-to-svg` translation with mlir-translate's driver.
void registerWaferToSvg();

} // namespace wsc

#endif // WSC_TARGET_WAFERTOSVG_H
