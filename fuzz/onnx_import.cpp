//===- onnx_import.cpp - libFuzzer harness: the ONNX importer -------------===//
//
// Bytes as model.onnx in a folder of the harness's own, imported as
// `wsc-translate --import-onnx` does (external data resolves inside that
// folder only). The importer either builds a module that verifies or
// reports an error; a crash, a sanitizer report or a hang is a finding.
//
//===----------------------------------------------------------------------===//
#include "wsc/Target/OnnxImport.h"
#include "wsgraph/WsgraphDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

namespace {

struct State {
  std::string folder, path;
  State() {
    char dir[] = "/tmp/wsc-fuzz-onnx.XXXXXX";
    if (!mkdtemp(dir))
      abort();
    folder = dir;
    path = folder + "/model.onnx";
    // The folder goes when the fuzzer exits (libFuzzer ends with exit()).
    std::atexit([] {
      std::remove(state()->path.c_str());
      ::rmdir(state()->folder.c_str());
    });
  }
  static State *state() {
    static State *s = new State;
    return s;
  }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  State *state = State::state();
  FILE *f = fopen(state->path.c_str(), "wb");
  if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
    abort();
  // A context per input, as wsc-translate has one per run: the constants
  // one input interns must not pile up into the next inputs' memory.
  mlir::MLIRContext context;
  context.loadDialect<mlir::func::FuncDialect, wsc::wsgraph::WsgraphDialect>();
  // Errors are expected; their text is not what is fuzzed.
  mlir::ScopedDiagnosticHandler quiet(&context, [](mlir::Diagnostic &) { return mlir::success(); });
  wsc::OnnxImportOptions options;
  mlir::OwningOpRef<mlir::ModuleOp> module = wsc::importOnnx(state->path, &context, options);
  if (module && mlir::failed(mlir::verify(*module)))
    __builtin_trap(); // the importer's module must verify
  return 0;
}
