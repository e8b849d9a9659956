//===- wsc-translate.cpp - translations into and out of wsc IR ------------===//
//
// Imports (--import-onnx) read their own input: a model file is mapped, never
// copied, and its weights stay where they are. Everything else goes through
// mlir-translate's driver.
//
//===----------------------------------------------------------------------===//
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/ToolUtilities.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "wafer/WaferDialect.h"
#include "wsc/Target/ExportWafer.h"
#include "wsc/Target/GptConfig.h"
#include "wsc/Target/OnnxImport.h"
#include "wsc/Target/WaferToSvg.h"
#include "wsc/runtime/HugePageHeap.h"
#include "wsc/runtime/OutputFiles.h"
#include "wsgraph/WsgraphDialect.h"
#include "wskernel/WskernelDialect.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <cstring>

using namespace llvm;

/// Writes `bytes` to `path` ("-": stdout) through the runtime's
/// OutputFiles: a device, a FIFO or a symbolic link is written through, a
/// regular file replaced atomically.
static int writeOutput(StringRef path, const std::string &bytes) {
  wsc::runtime::OutputFiles files;
  wsc::runtime::Status s = files.stage(path == "-" ? "/dev/stdout" : path.str(), bytes);
  if (s)
    s = files.commit();
  if (!s) {
    errs() << "error: " << s.message() << "\n";
    return 1;
  }
  return 0;
}

/// Writes `module` to `path` only once it is complete.
static int writeModule(mlir::ModuleOp module, StringRef path) {
  std::string text;
  raw_string_ostream os(text);
  module.print(os);
  return writeOutput(path, text);
}

static int importOnnxMain(int argc, char **argv) {
  cl::opt<bool> importFlag("import-onnx", cl::desc("Import an ONNX model into wsgraph"));
  cl::opt<std::string> input(cl::Positional, cl::desc("<model.onnx>"), cl::Required);
  cl::opt<std::string> output("o", cl::desc("Output file"), cl::value_desc("file"),
                              cl::init("-"));
  cl::list<std::string> inputShapes(
      "input-shape", cl::desc("Bind a graph input's dynamic dimensions: NAME=1x16"),
      cl::value_desc("NAME=DIMS"));
  cl::list<std::string> binds(
      "bind", cl::desc("Fix a graph input as a constant from a file: NAME=FILE.npy|FILE.pb"),
      cl::value_desc("NAME=FILE"));
  cl::opt<bool> elideWeights("elide-weights",
                             cl::desc("Keep weight shapes only, not where their bytes are"));
  cl::opt<std::string> sparsityMask(
      "sparsity-mask",
      cl::desc("An ONNX file of masks named like the weights: zero elements drop weights"),
      cl::value_desc("FILE"));
  cl::ParseCommandLineOptions(argc, argv, "wsc-translate --import-onnx\n");

  wsc::OnnxImportOptions options;
  options.elideWeights = elideWeights;
  options.sparsityMask = sparsityMask;
  for (const std::string &spec : inputShapes) {
    std::string err;
    if (!wsc::parseInputShape(spec, options, err)) {
      errs() << "error: " << err << "\n";
      return 1;
    }
  }
  for (const std::string &spec : binds) {
    std::string err;
    if (!wsc::parseBind(spec, options, err)) {
      errs() << "error: " << err << "\n";
      return 1;
    }
  }
  mlir::MLIRContext context;
  auto module = wsc::importOnnx(input, &context, options);
  if (!module)
    return 1;
  return writeModule(*module, output);
}

static int gptConfigMain(int argc, char **argv) {
  cl::opt<std::string> config("gpt-config",
                              cl::desc("A preset (gpt3-125m gpt3-1.3b gpt3-6.7b gpt3-13b "
                                       "gpt3-175b gpt-1t llama3-8b llama3-70b llama3-405b "
                                       "pythia-1.4b pythia-6.9b) or a JSON file: nanoGPT keys "
                                       "or a HuggingFace config.json (llama, gpt_neox)"),
                              cl::Required);
  cl::opt<int64_t> seq("seq", cl::desc("Tokens per sequence (default: the model's context)"),
                       cl::init(0));
  cl::opt<int64_t> batch("batch", cl::desc("Sequences per batch"), cl::init(1));
  cl::opt<std::string> output("o", cl::desc("Output file"), cl::value_desc("file"),
                              cl::init("-"));
  cl::ParseCommandLineOptions(argc, argv, "wsc-translate --gpt-config\n");
  wsc::GptConfig cfg;
  std::string err;
  if (!wsc::resolveGptConfig(config, cfg, err)) {
    errs() << "error: " << err << "\n";
    return 1;
  }
  int64_t tokens = seq ? int64_t(seq) : cfg.context;
  // Bounds that keep shapes within int64 and the rotary tables (seq x R
  // floats each) in memory.
  constexpr int64_t maxTokens = int64_t(1) << 20, maxBatch = int64_t(1) << 16;
  if (tokens <= 0 || tokens > maxTokens || batch <= 0 || batch > maxBatch) {
    errs() << "error: --seq must be from 1 to " << maxTokens << " and --batch from 1 to "
           << maxBatch << "\n";
    return 1;
  }
  mlir::MLIRContext context;
  auto module = wsc::buildGpt(cfg, batch, tokens, &context);
  return writeModule(*module, output);
}

/// Translates one module's text (a chunk with -split-input-file) into `out`;
/// with `verify`, checks its diagnostics against its expected-* comments.
static mlir::LogicalResult translateChunk(std::unique_ptr<MemoryBuffer> chunk, bool svg,
                                          bool verify, mlir::DialectRegistry &registry,
                                          std::string &out) {
  mlir::MLIRContext context(registry);
  context.printOpOnDiagnostic(!verify);
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(std::move(chunk), SMLoc());
  auto translate = [&]() -> mlir::LogicalResult {
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::parseSourceFile<mlir::ModuleOp>(sources, &context);
    if (!module)
      return mlir::failure();
    std::string bytes;
    if (mlir::failed(svg ? wsc::waferToSvg(*module, bytes) : wsc::exportWafer(*module, bytes)))
      return mlir::failure();
    out += bytes;
    return mlir::success();
  };
  if (!verify) {
    mlir::SourceMgrDiagnosticHandler diagnostics(sources, &context);
    return translate();
  }
  mlir::SourceMgrDiagnosticVerifierHandler diagnostics(sources, &context);
  (void)translate();
  return diagnostics.verify();
}

/// --export-wafer and --wafer-to-svg: the placed module in, the program or
/// the picture out through OutputFiles (mlir-translate's own output file
/// would truncate a link's target, then delete the link, on failure).
static int fromMlirMain(int argc, char **argv, bool svg) {
  cl::opt<bool> exportFlag("export-wafer", cl::desc("Export a placed and routed module as a "
                                                    ".wafer program"));
  cl::opt<bool> svgFlag("wafer-to-svg", cl::desc("Draw a placed and routed module as an SVG "
                                                 "picture of its wafers"));
  cl::opt<std::string> input(cl::Positional, cl::desc("<placed.mlir>"), cl::init("-"));
  cl::opt<std::string> output("o", cl::desc("Output file"), cl::value_desc("file"),
                              cl::init("-"));
  cl::opt<bool> split("split-input-file", cl::desc("Translate each '// -----' chunk on its own"));
  cl::opt<bool> verify("verify-diagnostics",
                       cl::desc("Check the diagnostics against expected-* comments"));
  cl::ParseCommandLineOptions(argc, argv, "wsc-translate --export-wafer | --wafer-to-svg\n");
  mlir::DialectRegistry registry;
  registry.insert<mlir::func::FuncDialect, wsc::wsgraph::WsgraphDialect,
                  wsc::wskernel::WskernelDialect, wsc::wafer::WaferDialect>();
  std::string error;
  auto file = mlir::openInputFile(input, &error);
  if (!file) {
    errs() << "error: " << error << "\n";
    return 1;
  }
  std::string bytes;
  auto chunk = [&](std::unique_ptr<MemoryBuffer> buffer, raw_ostream &) {
    return translateChunk(std::move(buffer), svg, verify, registry, bytes);
  };
  std::string unused;
  raw_string_ostream sink(unused);
  if (mlir::failed(mlir::splitAndProcessBuffer(std::move(file), chunk, sink,
                                               split ? mlir::kDefaultSplitMarker : "")))
    return 1;
  return writeOutput(output, bytes);
}

int main(int argc, char **argv) {
  // A large model or module is read and written on a heap in huge pages.
  wsc::runtime::restartWithHugePageHeapForArgs(argc, argv);
  InitLLVM y(argc, argv);
  for (int i = 1; i < argc; ++i)
    for (StringRef flag : {"--export-wafer", "-export-wafer", "--wafer-to-svg", "-wafer-to-svg"})
      if (argv[i] == flag)
        return fromMlirMain(argc, argv, flag.ends_with("svg"));
  for (int i = 1; i < argc; ++i)
    if (StringRef(argv[i]).starts_with("--gpt-config") || StringRef(argv[i]).starts_with("-gpt-config"))
      return gptConfigMain(argc, argv);
  for (int i = 1; i < argc; ++i)
    if (!std::strcmp(argv[i], "--import-onnx") || !std::strcmp(argv[i], "-import-onnx"))
      return importOnnxMain(argc, argv);
  wsc::registerExportWafer();
  wsc::registerWaferToSvg();
  return mlir::failed(mlir::mlirTranslateMain(
      argc, argv, "wsc translator\n\n  wsc-translate --import-onnx model.onnx [--input-shape NAME=DIMS] [--elide-weights] -o model.mlir\n  wsc-translate --export-wafer placed.mlir -o model.wafer\n"));
}
