//===- Pipeline.cpp - the named compile pipeline --------------------------===//
#include "wsc/Pipeline/Pipeline.h"
#include "wsc/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace {
/// The largest defect map read: a line per dead PE or link of every wafer
/// (docs/defects.md); a whole 2^24-PE wafer listed dead is about 250 MB.
constexpr int64_t kMaxDefectsFileBytes = int64_t(1) << 28;

struct PipelineCLOptions : PassPipelineOptions<PipelineCLOptions> {
  Option<std::string> arch{*this, "arch", llvm::cl::desc("wse2 | wse3 | mesh:WxH | FILE"),
                           llvm::cl::init("wse3")};
  Option<std::string> wafers{*this, "wafers", llvm::cl::desc("auto | N"), llvm::cl::init("auto")};
  Option<std::string> precision{*this, "precision", llvm::cl::desc("fp32 | fp16 | bf16"),
                                llvm::cl::init("fp32")};
  Option<std::string> mode{*this, "mode", llvm::cl::desc("pipelined | weight-streaming"),
                           llvm::cl::init("pipelined")};
  Option<std::string> defects{*this, "defects", llvm::cl::desc("Defect map file")};
  Option<double> defectRate{*this, "defect-rate",
                            llvm::cl::desc("Random defect map: probability a PE is dead"),
                            llvm::cl::init(0.0)};
  Option<std::string> report{*this, "report", llvm::cl::desc("Write the compile report here")};
  Option<int64_t> seed{*this, "seed", llvm::cl::desc("Placement seed"), llvm::cl::init(1)};
  Option<double> utilization{
      *this, "utilization",
      llvm::cl::desc("Fraction of a wafer's PEs kernels may take (0: the mode's default)"),
      llvm::cl::init(0.0)};
  Option<double> sparsity{
      *this, "sparsity",
      llvm::cl::desc("Fraction of each linear weight pruned by magnitude (held sparse)"),
      llvm::cl::init(0.0)};
};
} // namespace

LogicalResult wsc::buildPipeline(OpPassManager &pm, const PipelineOptions &o,
                                 std::string &error) {
  if (o.precision != "fp32" && o.precision != "fp16" && o.precision != "bf16") {
    error = "precision '" + o.precision + "' is not one of fp32, fp16, bf16";
    return failure();
  }
  if (o.mode != "pipelined" && o.mode != "weight-streaming") {
    error = "mode '" + o.mode + "' is not one of pipelined, weight-streaming";
    return failure();
  }
  int64_t forced;
  if (o.wafers != "auto" && (StringRef(o.wafers).getAsInteger(10, forced) || forced <= 0)) {
    error = "wafers=" + o.wafers + " is not auto or a positive number";
    return failure();
  }
  // Written so that NaN fails too.
  if (!(o.utilization >= 0 && o.utilization <= 1)) {
    error = llvm::formatv("utilization={0} is not in (0, 1]", o.utilization).str();
    return failure();
  }
  if (!(o.sparsity >= 0 && o.sparsity < 1)) {
    error = llvm::formatv("sparsity={0} is not in [0, 1)", o.sparsity).str();
    return failure();
  }
  if (!(o.defectRate >= 0 && o.defectRate <= 1)) {
    error = llvm::formatv("defect-rate={0} is not in [0, 1]", o.defectRate).str();
    return failure();
  }
  if (!o.defects.empty()) {
    // A missing file is the defects pass's error; a device, a FIFO or a huge
    // file must not be read at all (/dev/zero would be read for ever).
    llvm::sys::fs::file_status status;
    if (!llvm::sys::fs::status(o.defects, status)) {
      if (status.type() != llvm::sys::fs::file_type::regular_file) {
        error = "defects file '" + o.defects + "' is not a regular file";
        return failure();
      }
      if (status.getSize() > uint64_t(kMaxDefectsFileBytes)) {
        error = "defects file '" + o.defects + "' is larger than " +
                std::to_string(kMaxDefectsFileBytes) + " bytes";
        return failure();
      }
    }
  }
  pm.addPass(createWscSetArch({o.arch}));
  pm.addPass(createWsgraphFuse());
  WsgraphSparsifyOptions sparsify;
  sparsify.sparsity = o.sparsity;
  pm.addPass(createWsgraphSparsify(sparsify));
  WscLowerPlaceRouteOptions stages;
  stages.wafers = o.wafers, stages.precision = o.precision, stages.defects = o.defects;
  stages.defectRate = o.defectRate, stages.seed = o.seed;
  if (o.mode == "weight-streaming") {
    stages.weightStreaming = true;
    stages.utilization = 0.7; // one block's few kernels need little routing room
  }
  if (o.utilization > 0)
    stages.utilization = o.utilization;
  else if (!stages.weightStreaming) {
    // Kept only when they place and route strictly. (The pace steps with
    // the share: GPT-2-small on wse3 lowers to 160 at 0.95, 162 at 0.945,
    // 165 at 0.925; 0.945 is the one of them that routes.)
    stages.tryUtilization = {0.95, 0.945, 0.925, 0.9, 0.85, 0.8, 0.7};
    // Also with kernels no taller than 1/12 and 1/10 of the wafer: they
    // pack in bands (GPT-2-small at 0.945 within 117 rows routes, as tall
    // as they need its kernels do not pack).
    stages.tryBands = {12, 10};
  }
  pm.addPass(createWscLowerPlaceRoute(stages));
  if (!o.report.empty())
    pm.addPass(createWscWriteReport({o.report, o.mode, o.precision}));
  return success();
}

void wsc::registerPipeline() {
  registerPassPipeline(
      "wsc-pipeline",
      "The whole compile: fuse, partition, lower to kernels, place, route, verify routes",
      [](OpPassManager &pm, StringRef optionsText,
         function_ref<LogicalResult(const Twine &)> errorHandler) -> LogicalResult {
        PipelineCLOptions cl;
        if (failed(cl.parseFromString(optionsText)))
          return failure();
        PipelineOptions o;
        o.arch = cl.arch, o.wafers = cl.wafers, o.precision = cl.precision, o.mode = cl.mode;
        o.defects = cl.defects, o.defectRate = cl.defectRate, o.report = cl.report;
        o.seed = cl.seed, o.utilization = cl.utilization, o.sparsity = cl.sparsity;
        std::string error;
        if (failed(buildPipeline(pm, o, error)))
          return errorHandler("--wsc-pipeline: " + error);
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> handler) {
        handler(PipelineCLOptions());
      });
}
