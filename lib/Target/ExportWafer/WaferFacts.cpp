//===- WaferFacts.cpp - the wafer dialect's part of --export-wafer --------===//
//
// Reads #wafer.arch, the wafer.routes tables, the wafer.links table and the
// defect map into plain
// structs (see WaferFacts.h for why this file is separate), and registers the
// translation.
//
//===----------------------------------------------------------------------===//
#include "WaferFacts.h"

#include "wafer/Defects.h"
#include "wafer/WaferDialect.h"
#include "wsc/Target/ExportWafer.h"
#include "wsgraph/WsgraphDialect.h"
#include "wskernel/WskernelDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-translate/Translation.h"

#include <algorithm>

using namespace mlir;
namespace wf = wsc::wafer;

LogicalResult wsc::exportwafer::readWaferFacts(ModuleOp module, WaferFacts &facts) {
  FailureOr<wf::ArchAttr> arch = wf::getArch(module);
  if (failed(arch))
    return failure();
  ArchFacts &a = facts.arch;
  a.name = arch->getName().str();
  a.width = arch->getWidth();
  a.height = arch->getHeight();
  a.sramBytes = arch->getSramBytes();
  a.colors = arch->getColors();
  a.clockHz = arch->getClockHz();
  a.hopCycles = arch->getHopCycles();
  a.simdFp32 = arch->getSimdFp32();
  a.fmacFp32 = arch->getFmacFp32();
  a.transcendentalCycles = arch->getTranscendentalCycles();
  a.maxWafers = arch->getMaxWafers();
  a.linkBytesPerCycle = arch->getLinkBytesPerCycle();
  a.linkLatencyCycles = arch->getLinkLatencyCycles();
  a.extMemBytesPerCycle = arch->getExtMemBytesPerCycle();

  for (auto routes : module.getOps<wf::RoutesOp>()) {
    RouteTable t;
    t.wafer = routes.getWafer();
    t.op = routes;
    auto values = llvm::to_vector(routes.getTable().getValues<int32_t>());
    for (size_t i = 0; i + 4 < values.size(); i += 5)
      t.rows.push_back({values[i], values[i + 1], values[i + 2], values[i + 3], values[i + 4]});
    facts.routes.push_back(std::move(t));
  }
  for (auto links : module.getOps<wf::LinksOp>()) {
    facts.links.rows = links.getRows();
    facts.links.op = links;
  }
  wf::DefectList defects = wf::readDefects(wf::getDefects(module));
  for (const auto &pe : defects.pes)
    facts.deadPes.push_back(pe);
  std::sort(facts.deadPes.begin(), facts.deadPes.end());
  facts.deadPes.erase(std::unique(facts.deadPes.begin(), facts.deadPes.end()), facts.deadPes.end());
  facts.deadLinks = defects.links;
  std::sort(facts.deadLinks.begin(), facts.deadLinks.end());
  facts.deadLinks.erase(std::unique(facts.deadLinks.begin(), facts.deadLinks.end()),
                        facts.deadLinks.end());
  facts.originAttr = wf::kOriginAttrName.str();
  facts.colorsAttr = wf::kColorsAttrName.str();
  facts.linkPort = wf::Link;
  return success();
}

void wsc::registerExportWafer() {
  static TranslateFromMLIRRegistration registration(
      "export-wafer", "Export a placed and routed module as a .wafer program",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("cannot export: expected a builtin.module");
        return exportWafer(module, os);
      },
      [](DialectRegistry &registry) {
        registry.insert<func::FuncDialect, wsc::wsgraph::WsgraphDialect,
                        wsc::wskernel::WskernelDialect, wf::WaferDialect>();
      });
}
