//===- wsc-opt.cpp - run wsc passes on MLIR -------------------------------===//
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "wsc/Conversion/Passes.h"
#include "wsc/Pipeline/Pipeline.h"
#include "wsc/Transforms/Passes.h"
#include "wafer/WaferDialect.h"
#include "wsgraph/WsgraphDialect.h"
#include "wskernel/WskernelDialect.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::func::FuncDialect, wsc::wsgraph::WsgraphDialect,
                  wsc::wskernel::WskernelDialect, wsc::wafer::WaferDialect>();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  wsc::registerTransformsPasses();
  wsc::registerConversionPasses();
  wsc::registerPipelinePasses();
  wsc::registerPipeline();
  return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, "wsc optimizer\n", registry));
}
