// Generation (wsc-run --generate): prompts padded to the context, the
// tokens and step logits cut from the outputs, the store times the emulator
// records for the next_token output, and the timing computed from them.
#include "TestPrograms.h"
#include "wsc/format/Digest.h"
#include "wsc/runtime/Generation.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace wsc::runtime;
using namespace wsc::runtime::test;
namespace format = wsc::format;

namespace {

constexpr int64_t kBatch = 2, kContext = 4;

/// A stand-in for a generating program on one PE: for each of the B * T
/// positions in order, 2 cycles of other work (a FILL of 8 words), then
/// next_token[i] = ids[i] + 1 (1 cycle). So next_token[i] is written at
/// cycle 3 * (i + 1).
format::Program stepper() {
  format::Program p = makeProgram(1, 1);
  format::Region *r = addRegion(p, "argmax", 0, 0, 1, 1);
  r->set_kind("argmax");
  *r->add_code() = loop(uint32_t(kBatch * kContext));
  *r->add_code() = ins(format::FILL, {128}, 8);
  format::Instr pick = ins(format::ADD_I, {0, 0}, 1);
  *pick.mutable_addr(0) = aff(64, {4});
  *pick.mutable_addr(1) = aff(0, {4});
  pick.set_imm(1);
  pick.set_type(format::ELEM_I32);
  *r->add_code() = pick;
  *r->add_code() = end();
  addPiece(addTensor(p, false, "ids", format::I64, {kBatch, kContext}), 0, 0, 0, 0,
           uint32_t(kBatch * kContext));
  addPiece(addTensor(p, true, "next_token", format::I64, {kBatch, kContext}), 0, 0, 64, 0,
           uint32_t(kBatch * kContext));
  format::Generation *g = p.mutable_generation();
  g->set_token_input("ids");
  g->set_next_token_output("next_token");
  g->set_context(uint32_t(kContext));
  return p;
}

HostArray ids(std::vector<int64_t> v) {
  int64_t width = int64_t(v.size()) / kBatch;
  return HostArray::integers(DType::I64, {kBatch, width}, std::move(v));
}

TEST(Generation, PadsPromptsToTheContext) {
  Expected<GenerationPlan> plan = planGeneration(stepper(), ids({5, 6, 7, -1}), 2);
  ASSERT_TRUE(plan.ok()) << plan.error();
  EXPECT_EQ(plan->promptLengths, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(plan->input.shape, (std::vector<int64_t>{kBatch, kContext}));
  EXPECT_EQ(plan->input.ints, (std::vector<int64_t>{5, 6, -1, -1, 7, -1, -1, -1}));
  EXPECT_EQ(plan->tokenInput, "ids");
  EXPECT_EQ(plan->logitsOutput, ""); // the stepper has none
}

TEST(Generation, RefusesBadRequests) {
  auto error = [](const format::Program &p, const HostArray &prompt, int64_t steps) {
    Expected<GenerationPlan> plan = planGeneration(p, prompt, steps);
    return plan ? std::string("accepted") : plan.error();
  };
  EXPECT_EQ(error(stepper(), ids({5, 6, 7, 8}), 0), "--generate wants at least 1 token, got 0");
  format::Program plain = stepper();
  plain.clear_generation();
  EXPECT_NE(error(plain, ids({5, 6, 7, 8}), 1).find("no generation section"), std::string::npos);
  EXPECT_EQ(error(stepper(), ids({5, 6, 7, -1}), 3),
            "--generate 3: sequence 0 has a prompt of 2 tokens, and 2 + 3 positions exceed the "
            "context of 4");
  EXPECT_EQ(error(stepper(), ids({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}), 1),
            "input 'ids': shape [2, 5] given; --generate takes [2, P] prompts with 1 <= P <= 4, "
            "the context");
  EXPECT_EQ(error(stepper(), ids({5, 6, -1, 8}), 1),
            "input 'ids': sequence 1 has no first token: a prompt is a first token and more, then "
            "negative ids only");
  EXPECT_EQ(error(stepper(), HostArray::floats({2, 1}, {1, 2}), 1),
            "input 'ids': dtype f32 given, token ids are integers");
}

TEST(Generation, CutsTokensAndStepLogits) {
  GenerationPlan plan = *planGeneration(stepper(), ids({5, 6, 7, -1}), 2);
  // Position i's next token is picked for position i + 1.
  HostArray next = HostArray::integers(DType::I64, {2, 4}, {10, 11, 12, 13, 20, 21, 22, 23});
  HostArray tokens = generatedTokens(plan, next);
  EXPECT_EQ(tokens.shape, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(tokens.ints, (std::vector<int64_t>{5, 6, 11, 12, 7, 20, 21, -1}));
  std::vector<float> v(2 * 4 * 2);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = float(i);
  HostArray steps = stepLogits(plan, HostArray::floats({2, 4, 2}, v));
  EXPECT_EQ(steps.shape, (std::vector<int64_t>{2, 2, 2}));
  // Sequence 0: positions 1, 2; sequence 1: positions 0, 1.
  EXPECT_EQ(steps.f32, (std::vector<float>{2, 3, 4, 5, 8, 9, 10, 11}));
}

TEST(Generation, RecordsWhenEachTokenWasPicked) {
  format::Program p = stepper();
  GenerationPlan plan = *planGeneration(p, ids({5, 6, 7, -1}), 2);
  RunResult run = runProgram(p, {{"ids", plan.input}});
  ASSERT_TRUE(run.status.ok()) << run.status.message();
  ASSERT_EQ(run.report.nextTokenStores.size(), size_t(kBatch * kContext));
  for (size_t i = 0; i < run.report.nextTokenStores.size(); ++i) {
    EXPECT_TRUE(run.report.nextTokenStores[i].stored);
    EXPECT_EQ(run.report.nextTokenStores[i].cycle, 3 * (i + 1));
    EXPECT_EQ(run.report.nextTokenStores[i].kernel, 0u);
  }
  Expected<GenerationReport> g =
      generationReport(p, plan, run.outputs.at("next_token"), run.report);
  ASSERT_TRUE(g.ok()) << g.error();
  ASSERT_EQ(g->sequences.size(), 2u);
  const SequenceTiming &first = g->sequences[0], &second = g->sequences[1];
  EXPECT_EQ(first.tokens, (std::vector<int64_t>{7, 0})); // 6 + 1, then -1 + 1
  EXPECT_EQ(first.picks[0].cycle, 6u);                   // position 1
  EXPECT_EQ(first.picks[1].cycle, 9u);
  EXPECT_EQ(first.startCycle, 0u);
  EXPECT_EQ(first.ttftCycles, 6u);
  EXPECT_DOUBLE_EQ(first.ttftS, 6e-9);
  EXPECT_DOUBLE_EQ(first.decodeCyclesPerToken, 3);
  EXPECT_DOUBLE_EQ(first.tokensPerS, 1e9 / 3);
  // Sequence 1 starts when sequence 0's position T - 2 was picked (element 2).
  EXPECT_EQ(second.startCycle, 9u);
  EXPECT_EQ(second.picks[0].cycle, 15u); // element 4
  EXPECT_EQ(second.ttftCycles, 6u);
  EXPECT_EQ(g->lastCycle, 18u);
  EXPECT_DOUBLE_EQ(g->decodeCyclesPerToken, 3);
  EXPECT_DOUBLE_EQ(g->batchTokensPerS, 4 * 1e9 / 18);
  EXPECT_EQ(g->kvCacheBytes, 0u);

  nlohmann::json j = nlohmann::json::parse(reportJson(run.report, &*g));
  EXPECT_EQ(j["generation"]["sequences"][1]["token_cycles"], nlohmann::json({15, 18}));
  EXPECT_TRUE(j["generation"]["kv_cache_bytes"].is_null());
  EXPECT_TRUE(j["generation"]["sampling"].is_null()) << "a greedy plan";
  nlohmann::json trace = nlohmann::json::parse(traceJson(run.report, &*g));
  int instants = 0;
  for (const nlohmann::json &e : trace["traceEvents"])
    instants += e["ph"] == "i";
  EXPECT_EQ(instants, 4);
}

TEST(Generation, OneTokenHasNoDecodeRate) {
  format::Program p = stepper();
  p.mutable_generation()->set_kv_cache_bytes(4096);
  GenerationPlan plan = *planGeneration(p, ids({5, 6, 7, -1}), 1);
  RunResult run = runProgram(p, {{"ids", plan.input}});
  ASSERT_TRUE(run.status.ok()) << run.status.message();
  GenerationReport g = *generationReport(p, plan, run.outputs.at("next_token"), run.report);
  EXPECT_EQ(g.decodeCyclesPerToken, 0);
  nlohmann::json j = nlohmann::json::parse(reportJson(run.report, &g))["generation"];
  EXPECT_TRUE(j["decode_cycles_per_token"].is_null());
  EXPECT_TRUE(j["sequences"][0]["tokens_per_s"].is_null());
  EXPECT_EQ(j["kv_cache_bytes"], 4096);
  // A sampling plan's parameters go to the report as given; without
  // top-k, every logit (top_k 0).
  plan.sampling = {0.5f, 9.0f};
  g = *generationReport(p, plan, run.outputs.at("next_token"), run.report);
  j = nlohmann::json::parse(reportJson(run.report, &g))["generation"];
  EXPECT_EQ(j["sampling"], nlohmann::json({{"temperature", 0.5}, {"seed", 9.0}, {"top_k", 0.0}}));
  plan.sampling = {0.5f, 9.0f, 40.0f};
  g = *generationReport(p, plan, run.outputs.at("next_token"), run.report);
  j = nlohmann::json::parse(reportJson(run.report, &g))["generation"];
  EXPECT_EQ(j["sampling"], nlohmann::json({{"temperature", 0.5}, {"seed", 9.0}, {"top_k", 40.0}}));
}

TEST(Generation, TokenNeverWrittenIsAnError) {
  format::Program p = stepper();
  // Only the first 3 positions are picked.
  p.mutable_wafers(0)->mutable_regions(0)->mutable_code(0)->set_count(3);
  GenerationPlan plan = *planGeneration(p, ids({5, 6, 7, -1}), 2);
  RunResult run = runProgram(p, {{"ids", plan.input}});
  ASSERT_TRUE(run.status.ok()) << run.status.message();
  Expected<GenerationReport> g =
      generationReport(p, plan, run.outputs.at("next_token"), run.report);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error(), "output 'next_token': element [1, 0] was not written during the run, so "
                       "its token has no time");
}

TEST(Generation, StoreTimesDoNotDependOnThreads) {
  format::Program p = relay(/*lockstep=*/false);
  GenerationPlan plan = *planGeneration(p, ids({5, 6, 7, -1}), 2);
  RunResult one = runProgram(p, {{"ids", plan.input}}, 1);
  RunResult two = runProgram(p, {{"ids", plan.input}}, 2);
  ASSERT_TRUE(one.status.ok()) << one.status.message();
  ASSERT_TRUE(two.status.ok()) << two.status.message();
  for (size_t i = 0; i < one.report.nextTokenStores.size(); ++i) {
    const StoreTime &x = one.report.nextTokenStores[i], &y = two.report.nextTokenStores[i];
    EXPECT_TRUE(x.stored);
    EXPECT_EQ(x.cycle, y.cycle);
    EXPECT_EQ(x.kernel, 1u);
    if (i) {
      EXPECT_GT(x.cycle, one.report.nextTokenStores[i - 1].cycle);
    }
  }
  EXPECT_EQ(one.outputs.at("next_token").ints,
            (std::vector<int64_t>{6, 7, 0, 0, 8, 0, 0, 0}));
}

/// The relay in lockstep, stopped after element 4 (sequence 1, position
/// 0): the stores end there, and so do the run's cycles and tokens, on one
/// thread and on two.
TEST(Generation, StopsAfterTheRequestedToken) {
  format::Program p = relay(/*lockstep=*/true);
  GenerationPlan plan = *planGeneration(p, ids({5, 6, 7, -1}), 2);
  RunResult all = runProgram(p, {{"ids", plan.input}});
  ASSERT_TRUE(all.status.ok()) << all.status.message();
  for (unsigned threads : {1u, 2u}) {
    RunResult run = runProgram(p, {{"ids", plan.input}}, threads, false, /*stopAfterToken=*/4);
    ASSERT_TRUE(run.status.ok()) << run.status.message();
    const std::vector<StoreTime> &stores = run.report.nextTokenStores;
    ASSERT_EQ(stores.size(), size_t(kBatch * kContext));
    for (size_t i = 0; i < stores.size(); ++i)
      EXPECT_EQ(stores[i].stored, i <= 4) << i;
    EXPECT_EQ(run.report.cycles, all.report.nextTokenStores[4].cycle);
    EXPECT_LT(run.report.cycles, all.report.cycles);
    EXPECT_EQ(run.report.tokens, 5u);
    EXPECT_EQ(run.report.warnings, std::vector<std::string>{});
  }
}

TEST(Generation, ValidationChecksTheSection) {
  auto error = [](void (*edit)(format::Generation &)) {
    format::Program p = stepper();
    edit(*p.mutable_generation());
    Expected<std::unique_ptr<Emulator>> e = Emulator::create(p);
    return e ? std::string("valid") : e.error();
  };
  EXPECT_EQ(error([](format::Generation &) {}), "valid");
  EXPECT_EQ(error([](format::Generation &g) { g.set_token_input("x"); }),
            "generation: token input 'x' is not a [batch, positions] integer input of the program");
  EXPECT_EQ(error([](format::Generation &g) { g.set_next_token_output("ids"); }),
            "generation: next-token output 'ids' is not an integer output of the token input's "
            "shape 2x4");
  EXPECT_EQ(error([](format::Generation &g) { g.set_context(5); }),
            "generation: context 5 is not the token input's 4 positions");
}

TEST(Generation, TheHostDigestCoversIt) {
  format::Program p = stepper();
  *p.mutable_digests() = format::computeDigests(p);
  ASSERT_TRUE(parseProgram(p.SerializeAsString(), "g.wafer").ok());
  for (auto edit : {+[](format::Program &q) { q.mutable_generation()->set_context(3); },
                    +[](format::Program &q) { q.mutable_generation()->set_token_input("idy"); },
                    +[](format::Program &q) { q.mutable_generation()->set_kv_cache_bytes(1); },
                    +[](format::Program &q) { q.clear_generation(); }}) {
    format::Program q = p;
    edit(q);
    Expected<format::Program> parsed = parseProgram(q.SerializeAsString(), "g.wafer");
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.error(), "g.wafer: corrupt .wafer: the host section does not match its digest");
  }
  // An absent section adds nothing to the stream; a present one, even empty, does.
  format::Program plain = stepper();
  plain.clear_generation();
  format::Program empty = plain;
  empty.mutable_generation(); // present but empty: a different stream
  EXPECT_NE(format::computeDigests(plain).host(), format::computeDigests(empty).host());
}

} // namespace
