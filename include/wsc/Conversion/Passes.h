//===- Passes.h - passes that change level ----------------------*- C++ -*-===//
#ifndef WSC_CONVERSION_PASSES_H
#define WSC_CONVERSION_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "wafer/WaferDialect.h"
#include "wskernel/WskernelDialect.h"

namespace wsc {
#define GEN_PASS_DECL
#include "wsc/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "wsc/Conversion/Passes.h.inc"
} // namespace wsc

#endif // WSC_CONVERSION_PASSES_H
