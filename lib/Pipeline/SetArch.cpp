//===- SetArch.cpp - attach the machine to the module ---------------------===//
#include "wsc/Arch/Arch.h"
#include "wsc/Pipeline/Pipeline.h"

namespace wsc {
#define GEN_PASS_DEF_WSCSETARCH
#include "wsc/Pipeline/Passes.h.inc"
} // namespace wsc

using namespace mlir;

namespace {
struct SetArchPass : wsc::impl::WscSetArchBase<SetArchPass> {
  using WscSetArchBase::WscSetArchBase;
  void runOnOperation() override {
    std::string error;
    auto attr = wsc::wafer::parseArch(&getContext(), arch, error);
    if (!attr) {
      getOperation().emitError() << error;
      return signalPassFailure();
    }
    getOperation()->setAttr(wsc::wafer::kArchAttrName, attr);
  }
};
} // namespace
