// A --generate run's prompts, tokens, step logits and timing.
#include "wsc/runtime/Generation.h"

#include <fmt/format.h>

#include <algorithm>

namespace wsc::runtime {
namespace {

/// The program's logits: its one float output of shape [B, T, V].
std::string logitsOutputOf(const format::Program &p, int64_t batch, int64_t context) {
  std::string found;
  for (const format::HostTensor &t : p.outputs()) {
    bool isFloat = t.dtype() == format::F32 || t.dtype() == format::F64 ||
                   t.dtype() == format::F16 || t.dtype() == format::BF16;
    if (isFloat && t.shape_size() == 3 && t.shape(0) == batch && t.shape(1) == context) {
      if (!found.empty())
        return "";
      found = t.name();
    }
  }
  return found;
}

const format::HostTensor *inputOf(const format::Program &p, const std::string &name) {
  for (const format::HostTensor &t : p.inputs())
    if (t.name() == name)
      return &t;
  return nullptr;
}

/// The ids of each row before its first negative one.
std::vector<int64_t> promptLengths(const HostArray &prompt) {
  int64_t rows = prompt.shape[0], width = prompt.shape[1];
  std::vector<int64_t> lengths(size_t(rows), 0);
  for (int64_t b = 0; b < rows; ++b)
    while (lengths[b] < width && prompt.ints[size_t(b * width + lengths[b])] >= 0)
      ++lengths[b];
  return lengths;
}

} // namespace

Expected<GenerationPlan> planGeneration(const format::Program &program, const HostArray &prompt,
                                        int64_t steps) {
  if (steps < 1)
    return Status::failure(fmt::format("--generate wants at least 1 token, got {}", steps));
  if (!program.has_generation())
    return Status::failure("--generate needs a generating program, and this one has no "
                           "generation section (compile it with wsc-compile --generate)");
  const format::Generation &g = program.generation();
  GenerationPlan plan;
  plan.tokenInput = g.token_input();
  const format::HostTensor *in = inputOf(program, plan.tokenInput);
  if (!in || in->shape_size() != 2) // validation makes it [B, T]
    return Status::failure(fmt::format("the generation's token input '{}' is not [B, T]",
                                       plan.tokenInput));
  plan.batch = in->shape(0);
  plan.context = in->shape(1);
  plan.steps = steps;
  plan.logitsOutput = logitsOutputOf(program, plan.batch, plan.context);
  std::string what = fmt::format("input '{}'", plan.tokenInput);
  if (!isIntegerType(prompt.dtype))
    return Status::failure(fmt::format("{}: dtype {} given, token ids are integers", what,
                                       dtypeName(prompt.dtype)));
  if (prompt.shape.size() != 2 || prompt.shape[0] != plan.batch || prompt.shape[1] < 1 ||
      prompt.shape[1] > plan.context)
    return Status::failure(fmt::format(
        "{}: shape {} given; --generate takes [{}, P] prompts with 1 <= P <= {}, the context",
        what, shapeString(prompt.shape), plan.batch, plan.context));
  plan.promptLengths = promptLengths(prompt);
  for (int64_t b = 0; b < plan.batch; ++b)
    if (plan.promptLengths[b] == 0)
      return Status::failure(fmt::format("{}: sequence {} has no first token: a prompt is a first "
                                         "token and more, then negative ids only",
                                         what, b));
  for (int64_t b = 0; b < plan.batch; ++b)
    if (plan.promptLengths[b] + steps > plan.context)
      return Status::failure(fmt::format(
          "--generate {}: sequence {} has a prompt of {} tokens, and {} + {} positions exceed "
          "the context of {}",
          steps, b, plan.promptLengths[b], plan.promptLengths[b], steps, plan.context));
  // Padded with -1 to the context; the emulator checks the prompts' form.
  int64_t width = prompt.shape[1];
  std::vector<int64_t> ids(size_t(plan.batch * plan.context), -1);
  for (int64_t b = 0; b < plan.batch; ++b)
    std::copy_n(prompt.ints.begin() + b * width, width, ids.begin() + b * plan.context);
  plan.input = HostArray::integers(prompt.dtype, {plan.batch, plan.context}, std::move(ids));
  return plan;
}

HostArray generatedTokens(const GenerationPlan &plan, const HostArray &nextToken) {
  int64_t widest = *std::max_element(plan.promptLengths.begin(), plan.promptLengths.end());
  int64_t width = widest + plan.steps, t = plan.context;
  std::vector<int64_t> out(size_t(plan.batch * width), -1);
  for (int64_t b = 0; b < plan.batch; ++b) {
    int64_t p = plan.promptLengths[b];
    int64_t *row = out.data() + b * width;
    std::copy_n(plan.input.ints.begin() + b * t, p, row);
    // Position i's next token is the one picked for position i + 1.
    std::copy_n(nextToken.ints.begin() + b * t + p - 1, plan.steps, row + p);
  }
  return HostArray::integers(DType::I64, {plan.batch, width}, std::move(out));
}

HostArray stepLogits(const GenerationPlan &plan, const HostArray &logits) {
  int64_t t = plan.context, v = logits.shape[2], g = plan.steps;
  std::vector<float> out(size_t(plan.batch * g * v));
  for (int64_t b = 0; b < plan.batch; ++b)
    std::copy_n(logits.f32.begin() + (b * t + plan.promptLengths[b] - 1) * v, g * v,
                out.begin() + b * g * v);
  return HostArray::floats(logits.dtype, {plan.batch, g, v}, std::move(out));
}

Expected<GenerationReport> generationReport(const format::Program &program,
                                            const GenerationPlan &plan,
                                            const HostArray &nextToken, const RunReport &run) {
  GenerationReport r;
  r.steps = plan.steps;
  r.context = plan.context;
  r.clockHz = run.clockHz;
  r.kvCacheBytes = program.generation().kv_cache_bytes();
  r.sampling = plan.sampling;
  int64_t t = plan.context;
  auto pick = [&](int64_t b, int64_t position) -> Expected<StoreTime> {
    size_t e = size_t(b * t + position);
    if (e >= run.nextTokenStores.size() || !run.nextTokenStores[e].stored)
      return Status::failure(fmt::format(
          "output '{}': element [{}, {}] was not written during the run, so its token has no "
          "time",
          program.generation().next_token_output(), b, position));
    return run.nextTokenStores[e];
  };
  uint64_t decodeCycles = 0;
  for (int64_t b = 0; b < plan.batch; ++b) {
    SequenceTiming s;
    s.prompt = plan.promptLengths[b];
    for (int64_t i = 0; i < plan.steps; ++i) {
      Expected<StoreTime> at = pick(b, s.prompt - 1 + i);
      if (!at)
        return at.status();
      s.picks.push_back(*at);
      s.tokens.push_back(nextToken.ints[size_t(b * t + s.prompt - 1 + i)]);
    }
    if (b > 0) {
      Expected<StoreTime> previous = pick(b - 1, t - 2);
      if (!previous)
        return previous.status();
      s.startCycle = previous->cycle;
    }
    s.ttftCycles = s.picks.front().cycle - std::min(s.startCycle, s.picks.front().cycle);
    s.ttftS = run.clockHz > 0 ? double(s.ttftCycles) / run.clockHz : 0;
    uint64_t span = s.picks.back().cycle - s.picks.front().cycle;
    decodeCycles += span;
    if (plan.steps > 1) {
      s.decodeCyclesPerToken = double(span) / double(plan.steps - 1);
      s.tokensPerS = s.decodeCyclesPerToken > 0 ? run.clockHz / s.decodeCyclesPerToken : 0;
    }
    r.lastCycle = std::max(r.lastCycle, s.picks.back().cycle);
    r.sequences.push_back(std::move(s));
  }
  if (plan.steps > 1) {
    r.decodeCyclesPerToken = double(decodeCycles) / double(plan.batch * (plan.steps - 1));
    r.tokensPerS = r.decodeCyclesPerToken > 0 ? run.clockHz / r.decodeCyclesPerToken : 0;
  }
  r.batchTokensPerS =
      r.lastCycle ? double(plan.batch * plan.steps) * run.clockHz / double(r.lastCycle) : 0;
  return r;
}

} // namespace wsc::runtime
