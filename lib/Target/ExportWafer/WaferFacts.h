//===- WaferFacts.h - what the .wafer exporter and the SVG need from the wafer dialect -*- C++ -*-===//
//
// The wafer dialect's C++ namespace (::wsc::wafer) is also the namespace of
// the runtime's generated format classes (package wsc.wafer), and both define
// a `Port` enum, so no file can include WaferDialect.h and wafer.pb.h
// together. WaferFacts.cpp reads the wafer dialect into these plain structs;
// ExportWafer.cpp turns them and the wskernel ops into the Program.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_LIB_TARGET_WAFERFACTS_H
#define WSC_LIB_TARGET_WAFERFACTS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace wsc::exportwafer {

/// #wafer.arch, as plain numbers.
struct ArchFacts {
  std::string name;
  int64_t width = 0, height = 0, sramBytes = 0, colors = 0, clockHz = 0, hopCycles = 0;
  int64_t simdFp32 = 0, fmacFp32 = 0, transcendentalCycles = 0, maxWafers = 0;
  int64_t linkBytesPerCycle = 0, linkLatencyCycles = 0, extMemBytesPerCycle = 0;
};

/// One wafer.routes op: rows [x, y, color, in, out_mask].
struct RouteTable {
  int64_t wafer = 0;
  std::vector<std::array<int32_t, 5>> rows;
  mlir::Operation *op = nullptr;
};

/// The wafer.links op: rows [src_wafer, src_x, src_y, color, dst_wafer,
/// dst_x, dst_y, dst_color], sorted.
struct LinkTable {
  std::vector<std::array<int32_t, 8>> rows;
  mlir::Operation *op = nullptr;
};

struct WaferFacts {
  ArchFacts arch;
  std::vector<RouteTable> routes;              ///< in module order
  LinkTable links;                             ///< empty without a wafer.links op
  std::vector<std::array<int32_t, 3>> deadPes; ///< [wafer, x, y], sorted
  /// [wafer, x, y, dir], dir EAST (2) or SOUTH (3), dead both ways, or LINK
  /// (5), the off-wafer link of edge PE (x, y); sorted.
  std::vector<std::array<int32_t, 4>> deadLinks;
  /// Names of the kernel attributes written by placement and routing.
  std::string originAttr, colorsAttr;
  /// The LINK port number (inter-wafer links), RAMP..WEST are 0..4.
  int32_t linkPort = 5;
};

/// Reads the module's arch (an error when it has none), router tables,
/// inter-wafer links, dead PEs and dead links.
mlir::LogicalResult readWaferFacts(mlir::ModuleOp module, WaferFacts &facts);

} // namespace wsc::exportwafer

#endif // WSC_LIB_TARGET_WAFERFACTS_H
