//===- WsgraphDialect.h - the tensor-level graph dialect --------*- C++ -*-===//
#ifndef WSGRAPH_WSGRAPHDIALECT_H
#define WSGRAPH_WSGRAPHDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "wsgraph/WsgraphDialect.h.inc"

#define GET_OP_CLASSES
#include "wsgraph/WsgraphOps.h.inc"

namespace wsc::wsgraph {

/// The value of a constant or of a weight whose bytes can be read, as dense
/// elements; null when unknown (not constant, elided, unreadable or larger
/// than maxElements).
mlir::DenseElementsAttr getConstantElements(mlir::Value value, int64_t maxElements = 1 << 22);

/// The single value of a splat constant (or of a readable one-element
/// weight), as a double; nothing for any other value.
std::optional<double> splatValue(mlir::Value v);

/// Is `name` a decoder-with-past export's past keys or values
/// (past_key_values.*, past.* or past_*)?
inline bool isPastName(llvm::StringRef name) {
  return name.starts_with("past_key_values") || name.starts_with("past.") ||
         name.starts_with("past_");
}

/// Rows [first, end) of a weight as a weight of its own: the same file at a
/// later offset, named "name[first:end]". The bytes are never copied.
WeightOp sliceWeightRows(mlir::OpBuilder &b, WeightOp weight, int64_t first, int64_t end);

/// numpy broadcast of two static or dynamic shapes; failure if incompatible.
mlir::FailureOr<llvm::SmallVector<int64_t>> broadcastShapes(llvm::ArrayRef<int64_t> a,
                                                            llvm::ArrayRef<int64_t> b);

/// Normalizes a possibly negative axis for a given rank; failure if out of range.
mlir::FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank);

} // namespace wsc::wsgraph

#endif // WSGRAPH_WSGRAPHDIALECT_H
