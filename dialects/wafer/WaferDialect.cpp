//===- WaferDialect.cpp - wafer dialect registration ----------------------===//
#include "wafer/WaferDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace wsc::wafer;

#include "wafer/WaferDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "wafer/WaferAttrs.cpp.inc"

void WaferDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "wafer/WaferAttrs.cpp.inc"
      >();
}

LogicalResult ArchAttr::verify(function_ref<InFlightDiagnostic()> emitError, StringRef name,
                               int64_t width, int64_t height, int64_t sramBytes, int64_t colors,
                               int64_t clockHz, int64_t hopCycles, int64_t simdFp32,
                               int64_t fmacFp32, int64_t fmacFp16, int64_t transcendentalCycles,
                               int64_t maxWafers, int64_t linkBytesPerCycle,
                               int64_t linkLatencyCycles, int64_t extMemBytes,
                               int64_t extMemBytesPerCycle) {
  if (width <= 0 || height <= 0)
    return emitError() << "arch '" << name << "' needs a positive grid, got " << width << "x"
                       << height;
  if (sramBytes <= 0 || sramBytes % 4)
    return emitError() << "arch '" << name << "' needs SRAM a positive multiple of 4 bytes, got "
                       << sramBytes;
  if (colors <= 0 || colors > 64)
    return emitError() << "arch '" << name << "' needs 1 to 64 colors, got " << colors;
  if (clockHz <= 0 || hopCycles <= 0 || simdFp32 <= 0 || fmacFp32 <= 0 || fmacFp16 <= 0 ||
      transcendentalCycles <= 0 || maxWafers <= 0 || linkBytesPerCycle <= 0 ||
      linkLatencyCycles < 0 || extMemBytes < 0 || extMemBytesPerCycle <= 0)
    return emitError() << "arch '" << name << "' has a non-positive timing or cluster figure";
  return success();
}

ArchAttr ArchParams::build(MLIRContext *ctx, std::string &error) const {
  std::string diagText;
  ScopedDiagnosticHandler capture(ctx, [&](Diagnostic &d) {
    diagText = d.str();
    return success();
  });
  auto emit = [&]() { return mlir::emitError(UnknownLoc::get(ctx)); };
  auto attr = ArchAttr::getChecked(emit, ctx, name, width, height, sramBytes, colors, clockHz,
                                   hopCycles, simdFp32, fmacFp32, fmacFp16, transcendentalCycles,
                                   maxWafers, linkBytesPerCycle, linkLatencyCycles, extMemBytes,
                                   extMemBytesPerCycle);
  if (!attr)
    error = diagText;
  return attr;
}
