//===- OnnxImport.h - ONNX model to wsgraph ---------------------*- C++ -*-===//
#ifndef WSC_TARGET_ONNXIMPORT_H
#define WSC_TARGET_ONNXIMPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <utility>

namespace wsc {

struct OnnxImportOptions {
  /// NAME -> static shape, binding the dynamic dimensions of graph inputs.
  llvm::SmallVector<std::pair<std::string, llvm::SmallVector<int64_t>>> inputShapes;
  /// NAME -> a .npy or .pb file: the graph input NAME becomes that constant
  /// (a shape, axes, repeats: values the wafer's static shapes depend on).
  llvm::SmallVector<std::pair<std::string, std::string>> binds;
  /// Keep weight shapes only, not where their bytes are.
  bool elideWeights = false;
  /// An ONNX file of masks named like the weights (SparsityMask.h): a
  /// weight element whose mask element is zero reads as zero.
  std::string sparsityMask;
  /// Past keys and values (inputs named past_key_values.*, past.* or past_*
  /// of a decoder-with-past export) are empty: their dimensions that no
  /// other input binds are 0 (a generating program keeps them resident).
  bool emptyPast = false;
};

/// Imports the ONNX model at `path` into a module holding one func.func of
/// wsgraph ops. On failure prints `error:` lines naming the file and the
/// nodes at fault and returns null.
mlir::OwningOpRef<mlir::ModuleOp> importOnnx(llvm::StringRef path, mlir::MLIRContext *context,
                                             const OnnxImportOptions &options);

/// Parses "NAME=1x16" into options; false (with a message) when malformed.
bool parseInputShape(llvm::StringRef spec, OnnxImportOptions &options, std::string &error);
/// Parses "NAME=FILE.npy" or "NAME=FILE.pb" into options.
bool parseBind(llvm::StringRef spec, OnnxImportOptions &options, std::string &error);

} // namespace wsc

#endif // WSC_TARGET_ONNXIMPORT_H
