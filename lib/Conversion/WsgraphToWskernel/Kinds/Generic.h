//===- Generic.h - the generic kernel kind -----------------------*- C++ -*-===//
//
// Any wsgraph op the importer accepts, on one PE: the path that makes every
// graph compile; fused kinds are the fast path beside it.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_LIB_CONVERSION_KINDS_GENERIC_H
#define WSC_LIB_CONVERSION_KINDS_GENERIC_H

#include "../KernelBody.h"

namespace wsc::lowering {

/// Does the generic kind compute `op`?
bool hasGenericKernel(Operation *op);
/// The plan of a generic kernel for result `result` of `op`.
KernelPlan planGeneric(Operation *op, unsigned result, StringRef name);

} // namespace wsc::lowering

#endif // WSC_LIB_CONVERSION_KINDS_GENERIC_H
