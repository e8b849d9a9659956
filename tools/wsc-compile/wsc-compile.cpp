//===- wsc-compile.cpp - ONNX model to .wafer program in one process ------===//
//
//   wsc-compile model.onnx -o model.wafer [--input-shape NAME=1x16 ...]
//       [--arch= --wafers= --precision= --mode= --defects= --defect-rate= --report=]
//
// Import (as --import-onnx), the pipeline (as --wsc-pipeline, with the same
// options as flags) and --export-wafer, without writing the IR in between.
// The output file and the report are written only when every step succeeded,
// through the runtime's OutputFiles (a device or a link is written through).
//
//===----------------------------------------------------------------------===//
#include "wafer/WaferDialect.h"
#include "wsc/Conversion/KernelSizing.h"
#include "wsc/Conversion/Passes.h"
#include "wsc/Pipeline/Pipeline.h"
#include "wsc/Support/Progress.h"
#include "wsc/Target/ExportWafer.h"
#include "wsc/Target/OnnxImport.h"
#include "wsc/Transforms/Passes.h"
#include "wsgraph/WsgraphDialect.h"
#include "wskernel/WskernelDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "wsc/runtime/HugePageHeap.h"
#include "wsc/runtime/OutputFiles.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace llvm;

namespace {
/// A temporary file, removed when this goes out of scope.
class TempReport {
public:
  std::error_code create() { return sys::fs::createTemporaryFile("wsc-report", "json", path_); }
  std::string path() const { return std::string(path_.str()); }
  ~TempReport() {
    if (!path_.empty())
      sys::fs::remove(path_);
  }

private:
  SmallString<128> path_;
};
} // namespace

int main(int argc, char **argv) {
  InitLLVM y(argc, argv);
  cl::OptionCategory category("wsc-compile options");
  cl::opt<std::string> input(cl::Positional, cl::desc("<model.onnx>"), cl::Required,
                             cl::cat(category));
  cl::opt<std::string> output("o", cl::desc("Output .wafer file ('-' for stdout)"),
                              cl::value_desc("file"), cl::Required, cl::cat(category));
  cl::list<std::string> inputShapes("input-shape",
                                    cl::desc("Bind a graph input's dynamic dimensions: NAME=1x16"),
                                    cl::value_desc("NAME=DIMS"), cl::cat(category));
  cl::list<std::string> binds("bind",
                              cl::desc("Fix a graph input as a constant from a file: NAME=FILE.npy|FILE.pb"),
                              cl::value_desc("NAME=FILE"), cl::cat(category));
  cl::opt<bool> generate("generate",
                         cl::desc("Build a program that generates: each next token is the "
                                  "argmax of the logits, fed back on the wafer"),
                         cl::cat(category));
  cl::opt<bool> sampling("sampling",
                         cl::desc("A generating program that samples each next token from the "
                                  "softmax at the temperature and seed wsc-run gives it"),
                         cl::cat(category));
  cl::opt<bool> topK("top-k",
                     cl::desc("A sampling program that also takes top_k at run time "
                              "(wsc-run --top-k): each pick is among the top_k largest logits"),
                     cl::cat(category));
  cl::opt<int64_t> maxContext(
      "max-context", cl::desc("Positions a generating program holds (the token input's T)"),
      cl::init(0), cl::cat(category));
  // Each pipeline option, as a flag of the same name (PipelineOptions.def).
#define WSC_PIPELINE_OPTION(type, field, flag, value, help)                                        \
  cl::opt<type> field##Flag(flag, cl::desc(help), cl::init(type(value)), cl::cat(category));
#include "wsc/Pipeline/PipelineOptions.def"
  cl::opt<std::string> sparsityMask(
      "sparsity-mask",
      cl::desc("An ONNX file of masks named like the weights: zero elements drop weights"),
      cl::value_desc("FILE"), cl::cat(category));
  // Registered first, so that --mlir-print-ir-after=wsc-route and the like
  // can name them.
  wsc::registerTransformsPasses();
  wsc::registerConversionPasses();
  wsc::registerPipelinePasses();
  mlir::registerPassManagerCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerAsmPrinterCLOptions();
  // LLVM's and MLIR's own options still work; --help-hidden lists them.
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "wsc compiler: ONNX model to .wafer program\n\n"
      "  wsc-compile model.onnx -o model.wafer [--input-shape NAME=1x16 ...] [--bind NAME=FILE ...]\n"
      "      [--generate [--max-context=N] [--sampling [--top-k]]]\n"
      "      [--arch= --wafers= --precision= --mode= --defects= --defect-rate= --report=\n"
      "       --utilization= --seed= --sparsity= --sparsity-mask=]\n");
  // Before anything is read: a large model is compiled on a heap in huge pages.
  wsc::runtime::restartWithHugePageHeap(input, argv);

  wsc::OnnxImportOptions importOptions;
  importOptions.sparsityMask = sparsityMask;
  for (const std::string &spec : inputShapes) {
    std::string err;
    if (!wsc::parseInputShape(spec, importOptions, err)) {
      errs() << "error: " << err << "\n";
      return 1;
    }
  }
  for (const std::string &spec : binds) {
    std::string err;
    if (!wsc::parseBind(spec, importOptions, err)) {
      errs() << "error: " << err << "\n";
      return 1;
    }
  }
  wsc::PipelineOptions options;
#define WSC_PIPELINE_OPTION(type, field, flag, value, help) options.field = field##Flag;
#include "wsc/Pipeline/PipelineOptions.def"
  // The pipeline writes its report into a temporary file; it is staged with
  // the program once both exist.
  TempReport reportTemp;
  if (!options.report.empty()) {
    if (std::error_code ec = reportTemp.create()) {
      errs() << "error: cannot create a temporary report file: " << ec.message() << "\n";
      return 1;
    }
    options.report = reportTemp.path();
  }

  mlir::DialectRegistry registry;
  registry.insert<mlir::func::FuncDialect, wsc::wsgraph::WsgraphDialect,
                  wsc::wskernel::WskernelDialect, wsc::wafer::WaferDialect>();
  wsc::registerKernelSizing(registry); // placement reshapes kernels through the lowering
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();

  mlir::PassManager pm(&context);
  if (mlir::failed(mlir::applyPassManagerCLOptions(pm)))
    return 1;
  wsc::progress::enable();
  pm.addInstrumentation(wsc::progress::createStageInstrumentation());
  wsc::progress::clearBeforeDiagnostics(&context);
  std::string error;
  if (mlir::failed(wsc::buildPipeline(pm, options, error))) {
    errs() << "error: " << error << "\n";
    return 1;
  }

  importOptions.emptyPast = generate; // past keys and values stay resident on the wafer
  auto module = wsc::importOnnx(input, &context, importOptions);
  if (!module)
    return 1;
  if (maxContext < 0 || (maxContext > 0 && !generate)) {
    errs() << "error: --max-context=" << maxContext << " needs --generate and a positive count\n";
    return 1;
  }
  if (sampling && !generate) {
    errs() << "error: --sampling needs --generate\n";
    return 1;
  }
  if (topK && !sampling) {
    errs() << "error: --top-k needs --sampling\n";
    return 1;
  }
  if (generate) {
    mlir::PassManager generating(&context);
    generating.addPass(wsc::createWsgraphGenerate({maxContext, sampling, topK}));
    if (mlir::failed(generating.run(*module)))
      return 1;
  }
  mlir::LogicalResult compiled = pm.run(*module);
  wsc::progress::finish();
  if (mlir::failed(compiled))
    return 1;
  std::string bytes;
  if (mlir::failed(wsc::exportWafer(*module, bytes)))
    return 1;
  // The program and the report are committed together, or neither is.
  wsc::runtime::OutputFiles files;
  auto stage = [&](const std::string &path, const std::string &what) {
    wsc::runtime::Status s = files.stage(path == "-" ? "/dev/stdout" : path, what);
    if (!s)
      errs() << "error: " << s.message() << "\n";
    return s.ok();
  };
  if (!stage(output, bytes))
    return 1;
  if (!reportFlag.empty()) {
    auto text = MemoryBuffer::getFile(reportTemp.path(), /*IsText=*/false,
                                      /*RequiresNullTerminator=*/false);
    if (!text) {
      errs() << "error: " << reportFlag << ": the report was not written\n";
      return 1;
    }
    if (!stage(reportFlag, (*text)->getBuffer().str()))
      return 1;
  }
  if (wsc::runtime::Status s = files.commit(); !s) {
    errs() << "error: " << s.message() << "\n";
    return 1;
  }
  return 0;
}
