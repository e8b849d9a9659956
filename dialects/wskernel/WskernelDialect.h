//===- WskernelDialect.h - per-core kernels ---------------------*- C++ -*-===//
#ifndef WSKERNEL_WSKERNELDIALECT_H
#define WSKERNEL_WSKERNELDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "wskernel/WskernelDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "wskernel/WskernelTypes.h.inc"

#define GET_ATTRDEF_CLASSES
#include "wskernel/WskernelAttrs.h.inc"

#define GET_OP_CLASSES
#include "wskernel/WskernelOps.h.inc"

#endif // WSKERNEL_WSKERNELDIALECT_H
