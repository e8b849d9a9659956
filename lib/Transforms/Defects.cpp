//===- Defects.cpp - attach the defect map to the module ------------------===//
//
// One source of truth: placement, routing and the route checker read the
// `wafer.defects` module attribute that this pass writes, and nothing else.
//
//===----------------------------------------------------------------------===//
#include "wsc/Transforms/Passes.h"

#include "wafer/Defects.h"

#include "llvm/Support/MemoryBuffer.h"

namespace wsc {
#define GEN_PASS_DEF_WSCDEFECTS
#include "wsc/Transforms/Passes.h.inc"
} // namespace wsc

using namespace mlir;
using namespace wsc;

namespace {
struct DefectsPass : wsc::impl::WscDefectsBase<DefectsPass> {
  using WscDefectsBase::WscDefectsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto arch = wafer::getArch(module);
    if (failed(arch))
      return signalPassFailure();
    int64_t width = arch->getWidth(), height = arch->getHeight();
    wafer::DefectList list = wafer::readDefects(wafer::getDefects(module));

    if (!file.empty()) {
      auto buffer = llvm::MemoryBuffer::getFile(file);
      if (!buffer) {
        module.emitError("cannot read the defect file '") << file << "'";
        return signalPassFailure();
      }
      std::string error;
      if (failed(wafer::parseDefectFile((*buffer)->getBuffer(), file, width, height,
                                        arch->getMaxWafers(), list, error))) {
        module.emitError(error);
        return signalPassFailure();
      }
    }

    double linkP = linkRate < 0 ? rate : linkRate;
    if (rate < 0 || rate > 1 || linkP > 1) {
      module.emitError("defect rates must lie in [0, 1], got rate=")
          << rate.getValue() << " link-rate=" << linkP;
      return signalPassFailure();
    }
    if (rate > 0 || linkP > 0) {
      // Every wafer that a kernel is assigned to.
      int64_t wafers = 1;
      module.walk([&](Operation *op) {
        if (auto stage = op->getAttrOfType<IntegerAttr>(wafer::kStageAttrName))
          wafers = std::max<int64_t>(wafers, stage.getInt() + 1);
      });
      wafers = std::min(wafers, arch->getMaxWafers());
      wafer::addRandomDefects(list, wafers, width, height, rate, linkP, seed);
    }
    module->setAttr(wafer::kDefectsAttrName, wafer::buildDefects(&getContext(), list));
  }
};
} // namespace
