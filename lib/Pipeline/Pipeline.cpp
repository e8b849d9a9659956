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
#define WSC_PIPELINE_OPTION(type, field, flag, value, help)                                        \
  Option<type> field{*this, flag, llvm::cl::desc(help), llvm::cl::init(type(value))};
#include "wsc/Pipeline/PipelineOptions.def"
};
} // namespace

LogicalResult wsc::buildPipeline(OpPassManager &pm, const PipelineOptions &o,
                                 std::string &error) {
  if (o.precision != "fp32" && o.precision != "fp16" && o.precision != "bf16") {
    error = "precision '" + o.precision + "' is not one of fp32, fp16, bf16";
    return failure();
  }
  if (o.mode != "pipelined" && o.mode != "weight-streaming" && o.mode != "folded") {
    error = "mode '" + o.mode + "' is not one of pipelined, weight-streaming, folded";
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
  pm.addPass(createWsgraphFeatureRows());
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
  if (o.mode == "folded") {
    // One block's kernels as in weight streaming, as large as the wafer
    // allows: every layer's tiles stay in their SRAM.
    stages.weightStreaming = stages.residentLayers = true;
    stages.utilization = 0.85;
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
#define WSC_PIPELINE_OPTION(type, field, flag, value, help) o.field = cl.field;
#include "wsc/Pipeline/PipelineOptions.def"
        std::string error;
        if (failed(buildPipeline(pm, o, error)))
          return errorHandler("--wsc-pipeline: " + error);
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> handler) {
        handler(PipelineCLOptions());
      });
}
