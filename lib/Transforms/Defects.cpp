//===- Defects.cpp - attach the defect map to the module ------------------===//
//
// One source of truth: placement, routing and the route checker read the
// `wafer.defects` module attribute that this pass writes, and nothing else.
//
//===----------------------------------------------------------------------===//
#include "wsc/Arch/Arch.h"
#include "wsc/Transforms/Passes.h"

#include "wsc/Arch/Defects.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

namespace wsc {
#define GEN_PASS_DEF_WSCDEFECTS
#include "wsc/Transforms/Passes.h.inc"
} // namespace wsc

using namespace mlir;
using namespace wsc;

namespace {
/// The largest defects file read, as the pipeline's --defects.
constexpr uint64_t kMaxDefectsFileBytes = uint64_t(1) << 28;

struct DefectsPass : wsc::impl::WscDefectsBase<DefectsPass> {
  using WscDefectsBase::WscDefectsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto arch = wafer::getArch(module);
    if (failed(arch))
      return signalPassFailure();
    int64_t width = arch->getWidth(), height = arch->getHeight();
    wafer::DefectList list = wafer::readDefects(wafer::getDefects(module));

    // Written so that NaN fails too; link-rate's default -1 means "rate".
    for (auto [name, value] : {std::pair<const char *, double>{"rate", rate},
                               std::pair<const char *, double>{"link-rate", linkRate}})
      if (!(value >= 0 && value <= 1) && !(value == -1 && name[0] == 'l')) {
        emitError(module.getLoc())
            << "--wsc-defects: " << name << "=" << llvm::formatv("{0}", value).str()
            << " is not in [0, 1]";
        return signalPassFailure();
      }

    if (!file.empty()) {
      // A device, a FIFO or a huge file is not read at all (/dev/zero would
      // be read for ever, a FIFO's open waits for a writer).
      llvm::sys::fs::file_status status;
      if (!llvm::sys::fs::status(file, status)) {
        if (status.type() != llvm::sys::fs::file_type::regular_file) {
          emitError(module.getLoc()) << "defects file '" << file << "' is not a regular file";
          return signalPassFailure();
        }
        if (status.getSize() > kMaxDefectsFileBytes) {
          emitError(module.getLoc()) << "defects file '" << file << "' is larger than "
                                     << kMaxDefectsFileBytes << " bytes";
          return signalPassFailure();
        }
      }
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
