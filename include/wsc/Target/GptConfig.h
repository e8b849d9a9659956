//===- GptConfig.h - synthetic GPTs of any size ------------------*- C++ -*-===//
#ifndef WSC_TARGET_GPTCONFIG_H
#define WSC_TARGET_GPTCONFIG_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace wsc {

/// The shape of a GPT-2/3 style decoder.
struct GptConfig {
  std::string name;
  int64_t layers = 0, heads = 0, width = 0, vocab = 50257, context = 2048;
  bool bias = true;

  int64_t parameters() const;
};

/// A preset (gpt3-125m, gpt3-1.3b, gpt3-6.7b, gpt3-13b, gpt3-175b, gpt-1t) or a
/// JSON file with n_layer, n_head, n_embd, vocab_size, block_size, bias.
bool resolveGptConfig(llvm::StringRef spec, GptConfig &config, std::string &error);

/// Fused wsgraph IR of `config` for a [batch, seq] token input; weights are
/// elided (shapes only), so no parameter is ever materialized.
mlir::OwningOpRef<mlir::ModuleOp> buildGpt(const GptConfig &config, int64_t batch, int64_t seq,
                                           mlir::MLIRContext *context);

} // namespace wsc

#endif // WSC_TARGET_GPTCONFIG_H
