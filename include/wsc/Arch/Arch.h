//===- Arch.h - the machine: presets and arch files -------------*- C++ -*-===//
//
// The machine model every pass reads through the module's #wafer.arch:
// the presets (wse2, wse3, mesh:WxH) and JSON arch files resolve to an
// ArchAttr here (docs/arch.md); defect maps are Defects.h.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_ARCH_ARCH_H
#define WSC_ARCH_ARCH_H

#include "wafer/WaferDialect.h"

#include <string>

namespace wsc::wafer {

/// Resolves `wse2`, `wse3`, `mesh:WxH` or a JSON file into an arch; on
/// failure returns null and sets `error`.
ArchAttr parseArch(mlir::MLIRContext *context, llvm::StringRef spec, std::string &error);
/// The machine of `module`, or an error on the module when it has none.
mlir::FailureOr<ArchAttr> getArch(mlir::ModuleOp module);

} // namespace wsc::wafer

#endif // WSC_ARCH_ARCH_H
