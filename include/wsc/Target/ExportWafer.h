//===- ExportWafer.h - placed wskernel module to a .wafer program -*- C++ -*-===//
#ifndef WSC_TARGET_EXPORTWAFER_H
#define WSC_TARGET_EXPORTWAFER_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace wsc {

/// Serializes a placed and routed module (one func.func of wskernel.kernel
/// ops, with wafer.origin/wafer.colors on every kernel and wafer.routes
/// tables) into a .wafer Program (runtime/wafer.proto, format version 1).
/// The bytes are deterministic for a given module. On failure emits errors
/// that name the kernel or op, and `bytes` is unspecified.
mlir::LogicalResult exportWafer(mlir::ModuleOp module, std::string &bytes);

/// The same, written to `os` only on success.
mlir::LogicalResult exportWafer(mlir::ModuleOp module, llvm::raw_ostream &os);

/// Registers the `--export-wafer` translation with mlir-translate's driver.
void registerExportWafer();

} // namespace wsc

#endif // WSC_TARGET_EXPORTWAFER_H
