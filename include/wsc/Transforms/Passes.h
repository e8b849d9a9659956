//===- Passes.h - passes inside one level -----------------------*- C++ -*-===//
#ifndef WSC_TRANSFORMS_PASSES_H
#define WSC_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "wafer/WaferDialect.h"
#include "wsgraph/WsgraphDialect.h"
#include "wskernel/WskernelDialect.h"

namespace wsc {
#define GEN_PASS_DECL
#include "wsc/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "wsc/Transforms/Passes.h.inc"
} // namespace wsc

#endif // WSC_TRANSFORMS_PASSES_H
