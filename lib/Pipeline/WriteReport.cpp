//===- WriteReport.cpp - the compile report -------------------------------===//
#include "wsc/Analysis/CostModel.h"
#include "wsc/Pipeline/Pipeline.h"
#include "wskernel/WskernelDialect.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/ToolOutputFile.h"

#include <map>
#include <set>

namespace wsc {
#define GEN_PASS_DEF_WSCWRITEREPORT
#include "wsc/Pipeline/Passes.h.inc"
} // namespace wsc

using namespace mlir;
namespace json = llvm::json;

namespace {
struct WriteReportPass : wsc::impl::WscWriteReportBase<WriteReportPass> {
  using WscWriteReportBase::WscWriteReportBase;
  void runOnOperation() override;
};
} // namespace

void WriteReportPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto arch = wsc::wafer::getArch(module);
  if (failed(arch))
    return signalPassFailure();
  wsc::CostModel cost{*arch};
  struct WaferFigures {
    int64_t pes = 0, sram = 0;
    json::Array kernels;
  };
  std::map<int64_t, WaferFigures> wafers;
  double slowest = 0, macs = 0;
  int64_t interWaferBytes = 0;
  module.walk([&](wsc::wskernel::KernelOp k) {
    int64_t wafer = 0, x = -1, y = -1;
    if (auto stage = k->getAttrOfType<IntegerAttr>("wafer.stage"))
      wafer = stage.getInt();
    if (auto origin = k->getAttrOfType<DenseI64ArrayAttr>("wafer.origin");
        origin && origin.size() == 3)
      wafer = origin[0], x = origin[1], y = origin[2];
    // Streams to kernels on other wafers cross a link once per wafer.
    for (Value out : k.getResults()) {
      auto stream = dyn_cast<wsc::wskernel::StreamType>(out.getType());
      if (!stream)
        continue;
      std::set<int64_t> remote;
      for (Operation *user : out.getUsers())
        if (auto s = user->getAttrOfType<IntegerAttr>("wafer.stage"); s && s.getInt() != wafer)
          remote.insert(s.getInt());
      interWaferBytes += int64_t(remote.size()) * stream.getSize() * 4;
    }
    int64_t pes = k.getHeight() * k.getWidth();
    WaferFigures &f = wafers[wafer];
    f.pes += pes;
    f.sram += pes * static_cast<int64_t>(k.getSramBytesPerPe());
    double cycles = k.getCyclesPerToken().convertToDouble();
    slowest = std::max(slowest, cycles);
    // Weights held by the kernel: its multiply-accumulates per token.
    for (Value in : k.getInputs())
      if (auto t = dyn_cast<RankedTensorType>(in.getType()); t && t.getRank() == 2 &&
                                                              isa<FloatType>(t.getElementType()) &&
                                                              k.getKind().starts_with("linear"))
        macs += double(t.getNumElements());
    f.kernels.push_back(json::Object{{"name", k.getName()},
                                     {"kind", k.getKind()},
                                     {"x", x},
                                     {"y", y},
                                     {"w", k.getWidth()},
                                     {"h", k.getHeight()},
                                     {"sram_bytes_per_pe", int64_t(k.getSramBytesPerPe())},
                                     {"cycles_per_token", cycles}});
  });
  json::Array waferList;
  int64_t pesUsed = 0;
  for (auto &[index, f] : wafers) {
    pesUsed += f.pes;
    waferList.push_back(json::Object{{"index", index},
                                     {"pes_used", f.pes},
                                     {"sram_bytes_used", f.sram},
                                     {"kernels", std::move(f.kernels)}});
  }
  int64_t grid = arch->getWidth() * arch->getHeight() * std::max<int64_t>(1, wafers.size());
  double ideal = cost.idealCyclesPerToken(macs);
  json::Object estimate{{"cycles_per_token", slowest},
                        {"tokens_per_s", cost.tokensPerSecond(slowest)},
                        {"utilization", grid ? double(pesUsed) / double(grid) : 0.0},
                        {"ideal_cycles_per_token", ideal},
                        {"balance", slowest > 0 ? ideal / slowest : 0.0}};
  json::Object report{{"arch", arch->getName()},
                      {"mode", mode},
                      {"precision", precision},
                      {"wafers", std::move(waferList)},
                      {"inter_wafer_bytes_per_token", interWaferBytes},
                      {"estimate", std::move(estimate)}};
  if (auto stats = module->getAttrOfType<DictionaryAttr>("wafer.route_stats")) {
    json::Object routing;
    for (NamedAttribute s : stats) {
      if (auto i = dyn_cast<IntegerAttr>(s.getValue()))
        routing[s.getName().getValue()] = i.getInt();
      else if (auto fl = dyn_cast<FloatAttr>(s.getValue()))
        routing[s.getName().getValue()] = fl.getValueAsDouble();
    }
    report["routing"] = std::move(routing);
  }
  std::string err;
  auto out = openOutputFile(file, &err);
  if (!out) {
    module.emitError() << "cannot write the report: " << err;
    return signalPassFailure();
  }
  out->os() << llvm::formatv("{0:2}", json::Value(std::move(report))) << "\n";
  out->keep();
}
