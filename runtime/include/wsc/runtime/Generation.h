// Generation with a generating program (wafer.proto's Generation): the
// prompts a `wsc-run --generate G` run takes, the tokens and logits it gives
// back, and its timing, from the cycle at which the wafer picked each token.
#ifndef WSC_RUNTIME_GENERATION_H
#define WSC_RUNTIME_GENERATION_H

#include "wsc/runtime/Emulator.h"

#include <cstdint>
#include <string>
#include <vector>

namespace wsc::runtime {

/// A request for `steps` tokens after each sequence's prompt, checked
/// against the program.
struct GenerationPlan {
  std::string tokenInput;   ///< the program's [B, T] token input
  std::string logitsOutput; ///< its one [B, T, V] float output; empty when it has none
  int64_t batch = 0, context = 0, steps = 0;
  /// P_b: the ids of sequence b before its first negative one.
  std::vector<int64_t> promptLengths;
  /// The prompts padded to [B, T] with -1: what the token input gets.
  HostArray input;
  /// A sampling program's [temperature, seed] (with top-k: and top_k); empty: the argmax.
  std::vector<float> sampling;
};

/// Checks a request for `steps` (G) tokens after each prompt of `prompt`, a
/// [B, P] integer array (P <= T; a shorter prompt ends in negative ids),
/// and pads it to [B, T] with -1. Errors: G < 1, a program without
/// `generation`, a prompt that is not [B, P <= T], P_b + G > T.
Expected<GenerationPlan> planGeneration(const format::Program &program, const HostArray &prompt,
                                        int64_t steps);

/// The `tokens` output, [B, P_max + G] int64: each sequence's prompt, its G
/// tokens, then -1 to the row's end (a shorter prompt's row).
HostArray generatedTokens(const GenerationPlan &plan, const HostArray &nextToken);
/// The steps' logits, [B, G, V] of the program's [B, T, V] logits: those of
/// positions P_b - 1 .. P_b + G - 2, which picked the generated tokens.
HostArray stepLogits(const GenerationPlan &plan, const HostArray &logits);

/// One sequence's generated tokens and their times.
struct SequenceTiming {
  int64_t prompt = 0;              ///< P_b
  std::vector<int64_t> tokens;     ///< the G generated tokens
  std::vector<StoreTime> picks;    ///< when and where each was picked
  /// When the sequence's first position could enter the wafer: 0 for the
  /// first sequence; for a later one, the pick of the previous sequence's
  /// last fed-back token (position T - 2), which the embedding waits for
  /// before it takes the next sequence.
  uint64_t startCycle = 0;
  uint64_t ttftCycles = 0;         ///< picks[0].cycle - startCycle
  double ttftS = 0;                ///< ttftCycles at the arch clock
  /// The mean gap between its picks after the first; 0 when G = 1.
  double decodeCyclesPerToken = 0;
  double tokensPerS = 0;           ///< clock / decodeCyclesPerToken; 0 when G = 1
};

struct GenerationReport {
  int64_t steps = 0, context = 0;
  double clockHz = 0;
  uint64_t kvCacheBytes = 0; ///< 0: the program does not give it
  std::vector<float> sampling; ///< [temperature, seed(, top_k)]; empty: the argmax
  std::vector<SequenceTiming> sequences;
  /// Over every sequence's picks after its first; 0 when G = 1.
  double decodeCyclesPerToken = 0;
  double tokensPerS = 0;     ///< clock / decodeCyclesPerToken; 0 when G = 1
  uint64_t lastCycle = 0;    ///< when the batch's last generated token was picked
  /// B * G tokens over lastCycle: sequences run one after another, so this
  /// includes every prefill and each sequence's positions past its G-th
  /// token up to the context.
  double batchTokensPerS = 0;
};

/// The timing of a run of `plan`, from the run's next_token store times.
/// An error when a generated token was never written during the run.
Expected<GenerationReport> generationReport(const format::Program &program,
                                            const GenerationPlan &plan,
                                            const HostArray &nextToken, const RunReport &run);

} // namespace wsc::runtime

#endif
