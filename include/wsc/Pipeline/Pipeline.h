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
#define WSC_PIPELINE_OPTION(type, field, flag, value, help) type field = value;
#include "wsc/Pipeline/PipelineOptions.def"
};

/// Adds wsgraph-fuse, the lowering, placement, routing and the route check
/// to `pm`; failure (with a message) for invalid options.
mlir::LogicalResult buildPipeline(mlir::OpPassManager &pm, const PipelineOptions &options,
                                  std::string &error);

/// Registers --wsc-pipeline="arch=... wafers=... ...".
void registerPipeline();

} // namespace wsc

#endif // WSC_PIPELINE_PIPELINE_H
