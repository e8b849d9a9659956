//===- GptConfig.h - synthetic GPTs of any size ------------------*- C++ -*-===//
#ifndef WSC_TARGET_GPTCONFIG_H
#define WSC_TARGET_GPTCONFIG_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace wsc {

/// The decoder layouts the generator knows, each as frontends/pytorch exports it:
/// Gpt is nanoGPT (GPT-2/3), Llama is HF's LlamaForCausalLM, Neox is HF's
/// GPTNeoXForCausalLM (Pythia).
enum class GptFamily { Gpt, Llama, Neox };

/// The shape of a decoder-only transformer.
struct GptConfig {
  std::string name;
  GptFamily family = GptFamily::Gpt;
  int64_t layers = 0, heads = 0, width = 0, vocab = 50257, context = 2048;
  /// Key/value heads (grouped-query attention); 0 means `heads`.
  int64_t kvHeads = 0;
  /// The MLP's hidden width; 0 means 4 * width.
  int64_t intermediate = 0;
  /// Gpt: biases in every linear and layer norm (Neox always has them, Llama never).
  bool bias = true;
  /// The LM head shares the embedding's weight (counted once in parameters()).
  bool tiedEmbeddings = true;
  /// Neox: x + attn(ln1(x)) + mlp(ln2(x)) rather than two residual steps.
  bool parallelResidual = false;
  double normEpsilon = 1e-5;
  /// Rotary embeddings (Llama, Neox): the base of the frequencies, and the
  /// share of each head's dimensions they turn.
  double ropeTheta = 10000.0, rotaryPct = 1.0;
  /// HF's rope_scaling: "" (none), "linear" (every frequency / factor) or
  /// "llama3" (Llama 3.1: low frequencies / factor, high ones kept, a smooth
  /// blend between, by wavelength against the original context).
  std::string ropeScaling;
  double ropeFactor = 1.0, lowFreqFactor = 1.0, highFreqFactor = 4.0;
  int64_t ropeOriginalContext = 8192;

  int64_t headDim() const { return width / heads; }
  int64_t keyValueHeads() const { return kvHeads ? kvHeads : heads; }
  int64_t mlpWidth() const { return intermediate ? intermediate : 4 * width; }
  /// R, the rotated dimensions of a head (HF's int(head_dim * rotary_pct)).
  int64_t rotaryDims() const;
  /// The R/2 rotary frequencies in fp32 as torch computes them
  /// (1 / theta^(2i / R), then rope_scaling's).
  llvm::SmallVector<float> rotaryFrequencies() const;
  int64_t parameters() const;
};

/// A preset (see docs/models.md: GPT-3 sizes, gpt-1t, llama3-8b/70b/405b,
/// pythia-1.4b/6.9b) or a JSON file: nanoGPT keys (n_layer, n_head, n_embd,
/// ...) or a HuggingFace config.json whose model_type is "llama" or "gpt_neox".
bool resolveGptConfig(llvm::StringRef spec, GptConfig &config, std::string &error);

/// Fused wsgraph IR of `config` for a [batch, seq] token input, op for op what
/// --import-onnx + --wsgraph-fuse give for the family's export; weights are
/// elided (shapes only), so no parameter is ever materialized.
mlir::OwningOpRef<mlir::ModuleOp> buildGpt(const GptConfig &config, int64_t batch, int64_t seq,
                                           mlir::MLIRContext *context);

} // namespace wsc

#endif // WSC_TARGET_GPTCONFIG_H
