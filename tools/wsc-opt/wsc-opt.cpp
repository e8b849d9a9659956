//===- wsc-opt.cpp - run wsc passes on MLIR -------------------------------===//
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "wafer/WaferDialect.h"
#include "wsc/Conversion/KernelSizing.h"
#include "wsc/Conversion/Passes.h"
#include "wsc/Pipeline/Pipeline.h"
#include "wsc/Support/Progress.h"
#include "wsc/Transforms/Passes.h"
#include "wsc/runtime/HugePageHeap.h"
#include "wsc/runtime/OutputFiles.h"
#include "wsgraph/WsgraphDialect.h"
#include "wskernel/WskernelDialect.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::func::FuncDialect, wsc::wsgraph::WsgraphDialect,
                  wsc::wskernel::WskernelDialect, wsc::wafer::WaferDialect>();
  wsc::registerKernelSizing(registry); // placement reshapes kernels through the lowering
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  wsc::registerTransformsPasses();
  wsc::registerConversionPasses();
  wsc::registerPipelinePasses();
  wsc::registerPipeline();
  llvm::InitLLVM y(argc, argv);
  auto [inputFile, outputFile] =
      mlir::registerAndParseCLIOptions(argc, argv, "wsc optimizer\n", registry);
  // Before the input is read: a large module is compiled on a heap in huge pages.
  wsc::runtime::restartWithHugePageHeap(inputFile, argv);
  mlir::MlirOptMainConfig config = mlir::MlirOptMainConfig::createFromCLOptions();
  wsc::progress::enable();
  // The command line's pipeline, and the stages named as they start.
  mlir::MlirOptMainConfig fromCommandLine = config;
  config.setPassPipelineSetupFn([fromCommandLine](mlir::PassManager &pm) {
    pm.addInstrumentation(wsc::progress::createStageInstrumentation());
    wsc::progress::clearBeforeDiagnostics(pm.getContext());
    return fromCommandLine.setupPassPipeline(pm);
  });
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, inputFile, outputFile, registry));
  std::string error;
  auto file = mlir::openInputFile(inputFile, &error);
  if (!file) {
    llvm::errs() << "error: " << error << "\n";
    return 1;
  }
  // The output is kept in memory and written only when the run succeeded,
  // through the runtime's OutputFiles: a failed run leaves no file and keeps
  // what was there; a device, a FIFO or a symbolic link is written through.
  std::string text;
  llvm::raw_string_ostream os(text);
  mlir::LogicalResult ran = mlir::MlirOptMain(os, std::move(file), registry, config);
  wsc::progress::finish();
  if (mlir::failed(ran)) {
    // Standard output is no file to leave behind: it shows what was made
    // (the chunks of -split-input-file that succeeded), as mlir-opt's does.
    if (outputFile == "-")
      llvm::outs() << text;
    return 1;
  }
  wsc::runtime::OutputFiles files;
  wsc::runtime::Status s = files.stage(outputFile == "-" ? "/dev/stdout" : outputFile, text);
  if (s)
    s = files.commit();
  if (!s) {
    llvm::errs() << "error: " << s.message() << "\n";
    return 1;
  }
  return 0;
}
