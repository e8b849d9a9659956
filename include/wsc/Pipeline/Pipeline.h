//===- Pipeline.h - the named compile pipeline ------------------*- C++ -*-===//
#ifndef WSC_PIPELINE_PIPELINE_H
#define WSC_PIPELINE_PIPELINE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "wafer/WaferDialect.h"

#include <string>

namespace wsc {

#define GEN_PASS_DECL
#include "wsc/Pipeline/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "wsc/Pipeline/Passes.h.inc"

/// The options of --wsc-pipeline and of wsc-compile (CLI.md).
struct PipelineOptions {
  std::string arch = "wse3";
  std::string wafers = "auto";
  std::string precision = "fp32";
  std::string mode = "pipelined";
  std::string defects;
  double defectRate = 0.0; // a random map of dead PEs (and links), seeded by `seed`
  std::string report;
  int64_t seed = 1;
  /// Fraction of each wafer's PEs that kernels may take (0: the mode's
  /// default, 0.6 pipelined and 0.7 in weight streaming).
  double utilization = 0.0;
  /// Fraction of each linear weight pruned by magnitude (wsgraph-sparsify);
  /// weights sparse of themselves are held sparse whatever it is.
  double sparsity = 0.0;
};

/// Adds wsgraph-fuse, the lowering, placement, routing and the route check
/// to `pm`; failure (with a message) for invalid options.
mlir::LogicalResult buildPipeline(mlir::OpPassManager &pm, const PipelineOptions &options,
                                  std::string &error);

/// Registers --wsc-pipeline="arch=... wafers=... ...".
void registerPipeline();

} // namespace wsc

#endif // WSC_PIPELINE_PIPELINE_H
