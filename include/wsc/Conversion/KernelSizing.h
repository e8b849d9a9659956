//===- KernelSizing.h - the lowering's kernel sizing, for placement -*- C++ -*-===//
//
// Placement and kernel sizing agree on resources: when placement cannot pack
// a kernel as lowered, it asks for another shape through the wskernel
// dialect's KernelSizingInterface, which registerKernelSizing makes the
// lowering's: it rebuilds the kernel (body, SRAM and cycle figures).
//
//===----------------------------------------------------------------------===//
#ifndef WSC_CONVERSION_KERNELSIZING_H
#define WSC_CONVERSION_KERNELSIZING_H

#include "wskernel/WskernelDialect.h"

#include "mlir/IR/DialectRegistry.h"

namespace wsc {

/// Makes the lowering the wskernel dialect's KernelSizingInterface: a kernel
/// made by wsc-lower-to-kernels is rebuilt on about `pes` PEs within `maxH`
/// rows x `maxW` columns, its kind's own sizing picking the shape (grown
/// until its tiles fit a PE's SRAM), then its grid, channels, body, `sram`
/// and `cycles` written again. It fails and leaves the kernel as it was
/// when no such shape fits SRAM, the new shape would take more than
/// `maxCycles` cycles per token (when > 0), or the kind has no other shape
/// (an `add`, the host output, a kernel the lowering did not make).
void registerKernelSizing(mlir::DialectRegistry &registry);

} // namespace wsc

#endif // WSC_CONVERSION_KERNELSIZING_H
