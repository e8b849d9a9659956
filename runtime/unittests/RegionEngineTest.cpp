// The region engine against the reference engine: the same outputs, cycles
// and counts, with the loop nests it batches and the ones it must not.
#include "TestPrograms.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace wsc::runtime;
using namespace wsc::runtime::test;
namespace format = wsc::format;

namespace {

format::Instr at(format::Instr i, int k, int64_t base, std::initializer_list<int64_t> strides) {
  *i.mutable_addr(k) = aff(base, strides);
  return i;
}

/// Runs `p` on both engines; expects them to agree and returns the region run.
RunResult bothEngines(const format::Program &p) {
  RunResult ref = runProgram(p, {}, 1, false, -1, RunOptions::Engine::Reference);
  RunResult reg = runProgram(p, {}, 1, false, -1, RunOptions::Engine::Region);
  EXPECT_EQ(reg.status.ok(), ref.status.ok());
  EXPECT_EQ(reg.status.message(), ref.status.message());
  for (const auto &[name, value] : ref.outputs)
    EXPECT_EQ(reg.outputs.at(name).f32, value.f32) << name;
  EXPECT_EQ(reg.report.cycles, ref.report.cycles);
  EXPECT_EQ(reg.report.instructions, ref.report.instructions);
  EXPECT_EQ(reg.report.messages, ref.report.messages);
  EXPECT_EQ(reg.report.wavelets, ref.report.wavelets);
  EXPECT_EQ(ref.report.batchedTrips, 0u);
  for (size_t k = 0; k < ref.report.kernels.size() && k < reg.report.kernels.size(); ++k)
    EXPECT_EQ(reg.report.kernels[k].busyCycles, ref.report.kernels[k].busyCycles);
  return reg;
}

/// PE 0 streams `tokens` vectors of x (n words each) east; PE 1 multiplies
/// each into its n x m W as it arrives (RECV_VECMAT), each token's sums
/// kept apart in output "y". Runs both engines.
RunResult multiplyEachToken(const std::vector<float> &x, const std::vector<float> &w, int tokens,
                            int n, int m) {
  format::Program p = makeProgram(2, 1);
  format::Region *r = addRegion(p, "mm", 0, 0, 2, 1);
  initFloats(r, 0, 0, 0, x);
  initFloats(r, 1, 0, 0, w);
  const int64_t sums = 4 * n * m;
  *r->add_code() = only(loop(tokens), 0, 0, 0, 0);
  *r->add_code() = only(at(send(1, 0, n), 0, 0, {4 * n}), 0, 0, 0, 0);
  *r->add_code() = only(end(), 0, 0, 0, 0);
  *r->add_code() = only(loop(tokens), 1, 1, 0, 0);
  format::Instr mv = at(ins(format::RECV_VECMAT, {sums, 0}, n, m), 0, sums, {4 * m});
  mv.set_color(1);
  *r->add_code() = only(mv, 1, 1, 0, 0);
  *r->add_code() = only(end(), 1, 1, 0, 0);
  routeEast(p, 0, 0, 1, 1);
  addPiece(addTensor(p, true, "y", format::F32, {tokens, m}), 1, 0, uint32_t(sums), 0, tokens * m);
  return bothEngines(p);
}

TEST(RegionEngine, BatchesATokenLoopAroundAParityLoop) {
  // PE 0 streams 8 tokens of 3 words east. PE 1 multiplies each into its
  // 3x4 W as it arrives (RECV_VECMAT), adds a bias and passes the sums on
  // from its async engine, alternating two buffers (a loop of 4 pairs
  // around a loop of 2, as a linear's rows do). PE 2 keeps every token.
  constexpr int kTokens = 8, kN = 3, kM = 4;
  std::vector<float> x(kTokens * kN), w(kN * kM), bias(kM);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = 1.0f / float(i + 3) * (i % 2 ? -1.0f : 1.0f);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = float(i % 5) * 0.37f - 0.6f;
  bias = {0.5f, -0.25f, 1e-3f, 3.0f};
  format::Program p = makeProgram(3, 1);
  format::Region *r = addRegion(p, "chain", 0, 0, 3, 1);
  initFloats(r, 0, 0, 0, x);
  initFloats(r, 1, 0, 0, w);
  initFloats(r, 1, 0, 48, bias);
  *r->add_code() = only(loop(kTokens), 0, 0, 0, 0);
  *r->add_code() = only(at(send(1, 0, kN), 0, 0, {4 * kN}), 0, 0, 0, 0);
  *r->add_code() = only(end(), 0, 0, 0, 0);
  *r->add_code() = only(loop(kTokens / 2), 1, 1, 0, 0);
  *r->add_code() = only(loop(2), 1, 1, 0, 0);
  format::Instr mv = at(ins(format::RECV_VECMAT, {64, 0}, kN, kM), 0, 64, {16});
  mv.set_color(1);
  *r->add_code() = only(mv, 1, 1, 0, 0);
  *r->add_code() =
      only(at(at(ins(format::ADD, {64, 64, 48}, kM), 0, 64, {16}), 1, 64, {16}), 1, 1, 0, 0);
  format::Instr out = at(send(2, 64, kM), 0, 64, {16});
  out.set_async(true);
  *r->add_code() = only(out, 1, 1, 0, 0);
  *r->add_code() = only(end(), 1, 1, 0, 0);
  *r->add_code() = only(end(), 1, 1, 0, 0);
  *r->add_code() = only(loop(kTokens), 2, 2, 0, 0);
  *r->add_code() = only(at(recv(2, 0, kM), 0, 0, {4 * kM}), 2, 2, 0, 0);
  *r->add_code() = only(end(), 2, 2, 0, 0);
  routeEast(p, 0, 0, 1, 1);
  routeEast(p, 0, 1, 2, 2);
  addPiece(addTensor(p, true, "y", format::F32, {kTokens, kM}), 2, 0, 0, 0, kTokens * kM);
  addPiece(addTensor(p, true, "last", format::F32, {2, kM}), 1, 0, 64, 0, 2 * kM);
  RunResult res = bothEngines(p);
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  std::vector<float> want(kTokens * kM);
  for (int t = 0; t < kTokens; ++t)
    for (int c = 0; c < kM; ++c) {
      float s = 0;
      for (int k = 0; k < kN; ++k)
        s += x[t * kN + k] * w[k * kM + c];
      want[t * kM + c] = s + bias[c];
    }
  EXPECT_EQ(res.out("y"), want);
  // The buffers end as the last two tokens left them.
  EXPECT_EQ(res.out("last"), std::vector<float>(want.end() - 2 * kM, want.end()));
  // All three PEs' loops ran batched: each PE found its words there.
  EXPECT_EQ(res.report.batchedTrips, 3u * kTokens);
}

TEST(RegionEngine, MultipliesAllTheTripsAtOnceInRowOrder) {
  // 15 tokens (blocks of eight and four, and three more) of 5 words into 27
  // columns (a block of 16, eight more and three), into 11 (eight and three)
  // and into 5: every path of the batched product, bit for bit the
  // reference's.
  constexpr int kTokens = 15, kN = 5;
  for (int m : {27, 11, 5}) {
    std::vector<float> x(kTokens * kN), w(kN * m);
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = float(std::ldexp(1.0 + i % 7, int(i % 13) - 6)) * (i % 3 ? 1.0f : -1.0f);
    for (size_t i = 0; i < w.size(); ++i)
      w[i] = float(std::ldexp(1.0 + i % 11, int(i % 29) - 14)) * (i % 4 ? 1.0f : -1.0f);
    RunResult res = multiplyEachToken(x, w, kTokens, kN, m);
    ASSERT_TRUE(res.status.ok()) << res.status.message();
    std::vector<float> want(kTokens * m, 0.0f);
    for (int t = 0; t < kTokens; ++t)
      for (int c = 0; c < m; ++c)
        for (int k = 0; k < kN; ++k)
          want[t * m + c] += x[t * kN + k] * w[k * m + c];
    EXPECT_EQ(res.out("y"), want) << m << " columns";
    EXPECT_EQ(res.report.batchedTrips, 2u * kTokens);
  }
}

TEST(RegionEngine, SumsZeroProductsToPositiveZero) {
  // Four tokens of zeros of either sign into 16 columns of W (the batched
  // product's four-vector block) of +1, -1, +0 and -0: every product is a
  // zero, and in some columns of the first two tokens all are -0. A sum
  // starts at +0, so it ends +0 in every column whatever its products' signs.
  constexpr int kTokens = 4, kN = 3, kM = 16;
  const float neg0 = -0.0f;
  std::vector<float> x = {neg0, neg0, neg0, 0.0f, 0.0f, 0.0f, neg0, 0.0f, neg0, 0.0f, neg0, 0.0f};
  std::vector<float> w(kN * kM);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = i % 4 == 0 ? 1.0f : i % 4 == 1 ? -1.0f : i % 4 == 2 ? 0.0f : neg0;
  RunResult res = multiplyEachToken(x, w, kTokens, kN, kM);
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  EXPECT_EQ(res.report.batchedTrips, 2u * kTokens);
  std::vector<float> y = res.out("y");
  ASSERT_EQ(y.size(), size_t(kTokens * kM));
  for (size_t i = 0; i < y.size(); ++i)
    EXPECT_TRUE(y[i] == 0.0f && !std::signbit(y[i])) << "element " << i << " is " << y[i];
}

TEST(RegionEngine, AddsEachTripsWordsIntoItsOwn) {
  // PE 0 streams 6 trips of two messages: 11 words, which PE 1 adds into
  // its trip's copy of a's and passes on to PE 2 (RECV_ADD), and 3 words,
  // whose product by PE 1's 3x11 W it adds into its copy of b's
  // (RECV_VECMAT with count 1). 11 words: a block of eight and three more.
  constexpr int kTrips = 6, kN = 3, kM = 11;
  auto value = [](size_t i, int scale) {
    return float(std::ldexp(1.0 + i % 7, int(i % 11) - scale)) * (i % 3 ? 1.0f : -1.0f);
  };
  std::vector<float> sent(kTrips * (kM + kN)), w(kN * kM), a(kTrips * kM), b(kTrips * kM);
  for (size_t i = 0; i < sent.size(); ++i)
    sent[i] = value(i, 5);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = value(i + 3, 7);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = value(i + 5, 3), b[i] = value(i + 1, 4);
  format::Program p = makeProgram(3, 1);
  format::Region *r = addRegion(p, "adds", 0, 0, 3, 1);
  initFloats(r, 0, 0, 0, sent);
  initFloats(r, 1, 0, 0, w);
  initFloats(r, 1, 0, 256, a);
  initFloats(r, 1, 0, 640, b);
  const int64_t stride = 4 * (kM + kN);
  *r->add_code() = only(loop(kTrips), 0, 0, 0, 0);
  *r->add_code() = only(at(send(1, 0, kM), 0, 0, {stride}), 0, 0, 0, 0);
  *r->add_code() = only(at(send(1, 4 * kM, kN), 0, 4 * kM, {stride}), 0, 0, 0, 0);
  *r->add_code() = only(end(), 0, 0, 0, 0);
  // Each trip first copies its starting words, then adds into them.
  auto copy = [&](int64_t to, int64_t from) {
    return only(at(at(ins(format::COPY, {to, from}, kM), 0, to, {4 * kM}), 1, from, {4 * kM}), 1, 1,
                0, 0);
  };
  *r->add_code() = only(loop(kTrips), 1, 1, 0, 0);
  *r->add_code() = copy(1200, 256);
  format::Instr add = at(recv(1, 1200, kM, format::RECV_ADD), 0, 1200, {4 * kM});
  add.set_forward(2);
  *r->add_code() = only(add, 1, 1, 0, 0);
  *r->add_code() = copy(1600, 640);
  format::Instr mv = at(ins(format::RECV_VECMAT, {1600, 0}, kN, kM), 0, 1600, {4 * kM});
  mv.set_color(1);
  mv.set_count(1);
  *r->add_code() = only(mv, 1, 1, 0, 0);
  *r->add_code() = only(end(), 1, 1, 0, 0);
  *r->add_code() = only(loop(kTrips), 2, 2, 0, 0);
  *r->add_code() = only(at(recv(2, 0, kM), 0, 0, {4 * kM}), 2, 2, 0, 0);
  *r->add_code() = only(end(), 2, 2, 0, 0);
  routeEast(p, 0, 0, 1, 1);
  routeEast(p, 0, 1, 2, 2);
  addPiece(addTensor(p, true, "passed", format::F32, {kTrips, kM}), 2, 0, 0, 0, kTrips * kM);
  addPiece(addTensor(p, true, "a", format::F32, {kTrips, kM}), 1, 0, 1200, 0, kTrips * kM);
  addPiece(addTensor(p, true, "b", format::F32, {kTrips, kM}), 1, 0, 1600, 0, kTrips * kM);
  RunResult res = bothEngines(p);
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  std::vector<float> wantA(a), wantB(b);
  for (int t = 0; t < kTrips; ++t)
    for (int c = 0; c < kM; ++c) {
      wantA[t * kM + c] += sent[t * (kM + kN) + c];
      float sum = 0;
      for (int k = 0; k < kN; ++k)
        sum += sent[t * (kM + kN) + kM + k] * w[k * kM + c];
      wantB[t * kM + c] += sum;
    }
  EXPECT_EQ(res.out("a"), wantA);
  EXPECT_EQ(res.out("passed"), wantA);
  EXPECT_EQ(res.out("b"), wantB);
  EXPECT_EQ(res.report.batchedTrips, 3u * kTrips);
}

TEST(RegionEngine, LeavesALoopCarriedSumToTheReference) {
  // Each trip adds to a sum the trips before it left: no trip keeps its
  // writes to itself, so the nest runs an instruction at a time.
  format::Program p = makeProgram(1, 1);
  format::Region *r = addRegion(p, "sum", 0, 0, 1, 1);
  initFloats(r, 0, 0, 0, {0.0f});
  initFloats(r, 0, 0, 16, {1e8f, 1.0f, -1e8f, 0.5f, 3.0f, 1e-8f});
  *r->add_code() = loop(6);
  *r->add_code() = at(ins(format::ADD, {0, 0, 16}, 1), 2, 16, {4});
  *r->add_code() = end();
  addPiece(addTensor(p, true, "s", format::F32, {1}), 0, 0, 0, 0, 1);
  RunResult res = bothEngines(p);
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  EXPECT_EQ(res.out("s"), (std::vector<float>{((((1e8f + 1.0f) - 1e8f) + 0.5f) + 3.0f) + 1e-8f}));
  EXPECT_EQ(res.report.batchedTrips, 0u);
}

TEST(RegionEngine, BatchesTripsWhoseWritesMoveApart) {
  // Trip t copies word t of the source to a[t], then squares it into b[2t]:
  // the writes move by different strides, so each trip is placed alone.
  format::Program p = makeProgram(1, 1);
  format::Region *r = addRegion(p, "apart", 0, 0, 1, 1);
  initFloats(r, 0, 0, 0, {1.5f, -2.0f, 0.25f, 3.0f, -0.5f, 7.0f});
  *r->add_code() = loop(6);
  *r->add_code() = at(at(ins(format::COPY, {32, 0}, 1), 0, 32, {4}), 1, 0, {4});
  *r->add_code() =
      at(at(at(ins(format::MUL, {64, 32, 32}, 1), 0, 64, {8}), 1, 32, {4}), 2, 32, {4});
  *r->add_code() = end();
  addPiece(addTensor(p, true, "b", format::F32, {12}), 0, 0, 64, 0, 12);
  RunResult res = bothEngines(p);
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  EXPECT_EQ(res.out("b"),
            (std::vector<float>{2.25f, 0, 4.0f, 0, 0.0625f, 0, 9.0f, 0, 0.25f, 0, 49.0f, 0}));
  EXPECT_EQ(res.report.batchedTrips, 6u);
}

TEST(RegionEngine, LeavesEachWordAsTheLastTripWroteIt) {
  // Trip t copies two source words over words t and t + 1: each word but
  // the first two trips' is written twice, and keeps the later trip's.
  format::Program p = makeProgram(1, 1);
  format::Region *r = addRegion(p, "overlap", 0, 0, 1, 1);
  std::vector<float> src(12);
  for (size_t i = 0; i < src.size(); ++i)
    src[i] = float(i) * 1.5f - 4.0f;
  initFloats(r, 0, 0, 0, src);
  *r->add_code() = loop(6);
  *r->add_code() = at(at(ins(format::COPY, {64, 0}, 2), 0, 64, {4}), 1, 0, {8});
  *r->add_code() = end();
  addPiece(addTensor(p, true, "a", format::F32, {7}), 0, 0, 64, 0, 7);
  RunResult res = bothEngines(p);
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  std::vector<float> want(7);
  for (int t = 0; t < 6; ++t)
    want[t] = src[2 * t], want[t + 1] = src[2 * t + 1];
  EXPECT_EQ(res.out("a"), want);
  EXPECT_EQ(res.report.batchedTrips, 6u);
}

TEST(RegionEngine, LeavesAReadOfTheTripBeforeToTheReference) {
  // Trip t reads word t and writes word t + 1: the read moves with the
  // write, and from the second trip on it reads what the trip before wrote.
  format::Program p = makeProgram(1, 1);
  format::Region *r = addRegion(p, "scan", 0, 0, 1, 1);
  initFloats(r, 0, 0, 0, {1.0f});
  initFloats(r, 0, 0, 64, {0.5f});
  *r->add_code() = loop(5);
  *r->add_code() = at(at(ins(format::ADD, {4, 0, 64}, 1), 0, 4, {4}), 1, 0, {4});
  *r->add_code() = end();
  addPiece(addTensor(p, true, "s", format::F32, {6}), 0, 0, 0, 0, 6);
  RunResult res = bothEngines(p);
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  EXPECT_EQ(res.out("s"), (std::vector<float>{1.0f, 1.5f, 2.0f, 2.5f, 3.0f, 3.5f}));
  EXPECT_EQ(res.report.batchedTrips, 0u);
}

TEST(RegionEngine, KeepsTripOrderOnAColorTwoOpsShare) {
  // PE 1 takes two words a token on color 1: the first into SRAM, the second
  // dropped but passed on (color 2); then it sends the first after it on
  // color 2. Two ops read one queue and two send on one color, a trip at a
  // time: PE 2 gets each token's words swapped.
  constexpr int kTokens = 8;
  std::vector<float> x(2 * kTokens);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = float(i) + 0.5f;
  format::Program p = makeProgram(3, 1);
  format::Region *r = addRegion(p, "swap", 0, 0, 3, 1);
  initFloats(r, 0, 0, 0, x);
  *r->add_code() = only(loop(kTokens), 0, 0, 0, 0);
  *r->add_code() = only(at(send(1, 0, 2), 0, 0, {8}), 0, 0, 0, 0);
  *r->add_code() = only(end(), 0, 0, 0, 0);
  *r->add_code() = only(loop(kTokens), 1, 1, 0, 0);
  *r->add_code() = only(at(recv(1, 0, 1), 0, 0, {4}), 1, 1, 0, 0);
  format::Instr pass = recv(1, 0, 1, format::RECV_DROP);
  pass.set_forward(2);
  *r->add_code() = only(pass, 1, 1, 0, 0);
  *r->add_code() = only(at(send(2, 0, 1), 0, 0, {4}), 1, 1, 0, 0);
  *r->add_code() = only(end(), 1, 1, 0, 0);
  *r->add_code() = only(loop(kTokens), 2, 2, 0, 0);
  *r->add_code() = only(at(recv(2, 0, 2), 0, 0, {8}), 2, 2, 0, 0);
  *r->add_code() = only(end(), 2, 2, 0, 0);
  routeEast(p, 0, 0, 1, 1);
  routeEast(p, 0, 1, 2, 2);
  addPiece(addTensor(p, true, "y", format::F32, {kTokens, 2}), 2, 0, 0, 0, 2 * kTokens);
  RunResult res = bothEngines(p);
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  std::vector<float> want(2 * kTokens);
  for (int t = 0; t < kTokens; ++t)
    want[2 * t] = x[2 * t + 1], want[2 * t + 1] = x[2 * t];
  EXPECT_EQ(res.out("y"), want);
  EXPECT_EQ(res.report.batchedTrips, 3u * kTokens);
}

/// PE 0 multicasts 4 then 2 words a token along a row of four PEs, whose
/// filters keep words [2, 5) of each 6: a window across both messages.
/// Each multiplies them into its own 3x2 W and keeps the sums at 32 +
/// `sumsPerPe` * px bytes; checked against the reference and the sums.
/// With `lateWords`, PE `late` of the row first adds that many words, so
/// that its clock, not its words, starts its trips.
void multiplyAlongARow(int64_t sumsPerPe, int64_t lateWords = 0, uint32_t late = 0) {
  constexpr int kTokens = 6, kPes = 4;
  std::vector<float> x(kTokens * 6);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = float(i % 7) * 0.5f - 1.25f;
  format::Program p = makeProgram(1 + kPes, 1);
  format::Region *src = addRegion(p, "src", 0, 0, 1, 1);
  initFloats(src, 0, 0, 0, x);
  *src->add_code() = loop(kTokens);
  *src->add_code() = at(send(1, 0, 4), 0, 0, {24});
  *src->add_code() = at(send(1, 16, 2), 0, 16, {24});
  *src->add_code() = end();
  format::Region *row = addRegion(p, "row", 1, 0, kPes, 1);
  std::vector<std::vector<float>> w(kPes);
  for (int pe = 0; pe < kPes; ++pe) {
    for (int i = 0; i < 6; ++i)
      w[size_t(pe)].push_back(float((i + 2 * pe) % 5) * 0.75f - 1.0f);
    initFloats(row, uint32_t(pe), 0, 0, w[size_t(pe)]);
    format::Filter *f = row->add_filters();
    f->set_px(uint32_t(pe)), f->set_color(1), f->set_first(2), f->set_count(3), f->set_period(6);
  }
  if (lateWords)
    *row->add_code() = only(ins(format::ADD, {1024, 1024, 1024}, lateWords), late, late, 0, 0);
  *row->add_code() = loop(kTokens);
  format::Instr mv = ins(format::RECV_VECMAT, {32, 0}, 3, 2);
  *mv.mutable_addr(0) = aff(32, {8}, sumsPerPe);
  mv.set_color(1);
  *row->add_code() = mv;
  *row->add_code() = end();
  addRoute(p, 0, 0, 1, format::RAMP, {format::EAST});
  for (uint32_t xpe = 1; xpe < kPes; ++xpe)
    addRoute(p, xpe, 0, 1, format::WEST, {format::RAMP, format::EAST});
  addRoute(p, kPes, 0, 1, format::WEST, {format::RAMP});
  format::HostTensor *y = addTensor(p, true, "y", format::F32, {kPes, kTokens, 2});
  for (uint32_t pe = 0; pe < kPes; ++pe)
    addPiece(y, 1 + pe, 0, uint32_t(32 + sumsPerPe * pe), uint64_t(pe) * kTokens * 2, kTokens * 2);
  RunResult res = bothEngines(p);
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  std::vector<float> want;
  for (int pe = 0; pe < kPes; ++pe)
    for (int t = 0; t < kTokens; ++t)
      for (int c = 0; c < 2; ++c) {
        float s = 0;
        for (int k = 0; k < 3; ++k)
          s += x[size_t(t * 6 + 2 + k)] * w[size_t(pe)][size_t(k * 2 + c)];
        want.push_back(s);
      }
  EXPECT_EQ(res.out("y"), want);
  EXPECT_EQ(res.report.batchedTrips, (1u + kPes) * kTokens);
}

TEST(RegionEngine, SharesOneWalkOfAStreamAlongARow) {
  // The four PEs read one log alike, so they share one walk through it;
  // their words arrive a hop later at each, which the cycles (the farthest
  // PE's) must show. Their batches' places are alike too.
  multiplyAlongARow(0);
}

TEST(RegionEngine, TimesAPeWhoseClockStartsItsTripsOnItsOwn) {
  // The PEs' times are each other's moved a hop, but for the one whose
  // clock is late: its times are its own, and no other PE's follow from
  // them, whether it is timed first or last.
  multiplyAlongARow(0, 700, 0);
  multiplyAlongARow(0, 700, 3);
}

TEST(RegionEngine, PlacesEachPesOwnWordsWhereTheyDiffer) {
  // Each PE keeps its sums at words of its own: no PE takes the places of
  // the batch before.
  multiplyAlongARow(64);
}

TEST(RegionEngine, BatchesTheTripsWhoseWordsCameAndTheRestOnResuming) {
  // PE 0 sends 5 of 12 words, waits for PE 2's word, then sends 7 more.
  // PE 1 scales each word and passes it on: its loop batches the 5 trips
  // whose words are there, blocks in the sixth, runs it once woken and
  // batches the 6 left. PE 2 takes 5 words, answers PE 0 and takes the 7
  // (the first of them a trip on its own, as PE 1's sixth).
  constexpr int kTokens = 12, kFirst = 5;
  std::vector<float> x(kTokens);
  for (int i = 0; i < kTokens; ++i)
    x[size_t(i)] = float(i) * 0.75f - 2.0f;
  format::Program p = makeProgram(3, 1);
  format::Region *r = addRegion(p, "trickle", 0, 0, 3, 1);
  initFloats(r, 0, 0, 0, x);
  initFloats(r, 1, 0, 100, {-1.5f});
  *r->add_code() = only(loop(kFirst), 0, 0, 0, 0);
  *r->add_code() = only(at(send(1, 0, 1), 0, 0, {4}), 0, 0, 0, 0);
  *r->add_code() = only(end(), 0, 0, 0, 0);
  *r->add_code() = only(recv(3, 200, 1), 0, 0, 0, 0);
  *r->add_code() = only(loop(kTokens - kFirst), 0, 0, 0, 0);
  *r->add_code() = only(at(send(1, 4 * kFirst, 1), 0, 4 * kFirst, {4}), 0, 0, 0, 0);
  *r->add_code() = only(end(), 0, 0, 0, 0);
  *r->add_code() = only(loop(kTokens), 1, 1, 0, 0);
  *r->add_code() = only(at(recv(1, 0, 1), 0, 0, {4}), 1, 1, 0, 0);
  *r->add_code() =
      only(at(at(ins(format::MUL, {200, 0, 100}, 1), 0, 200, {4}), 1, 0, {4}), 1, 1, 0, 0);
  *r->add_code() = only(at(send(2, 200, 1), 0, 200, {4}), 1, 1, 0, 0);
  *r->add_code() = only(end(), 1, 1, 0, 0);
  *r->add_code() = only(loop(kFirst), 2, 2, 0, 0);
  *r->add_code() = only(at(recv(2, 0, 1), 0, 0, {4}), 2, 2, 0, 0);
  *r->add_code() = only(end(), 2, 2, 0, 0);
  *r->add_code() = only(send(3, 0, 1), 2, 2, 0, 0);
  *r->add_code() = only(loop(kTokens - kFirst), 2, 2, 0, 0);
  *r->add_code() = only(at(recv(2, 4 * kFirst, 1), 0, 4 * kFirst, {4}), 2, 2, 0, 0);
  *r->add_code() = only(end(), 2, 2, 0, 0);
  routeEast(p, 0, 0, 1, 1);
  routeEast(p, 0, 1, 2, 2);
  addRoute(p, 2, 0, 3, format::RAMP, {format::WEST});
  addRoute(p, 1, 0, 3, format::EAST, {format::WEST});
  addRoute(p, 0, 0, 3, format::EAST, {format::RAMP});
  addPiece(addTensor(p, true, "y", format::F32, {kTokens}), 2, 0, 0, 0, kTokens);
  RunResult res = bothEngines(p);
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  std::vector<float> want(kTokens);
  for (int i = 0; i < kTokens; ++i)
    want[size_t(i)] = x[size_t(i)] * -1.5f;
  EXPECT_EQ(res.out("y"), want);
  // PE 0: 5 + 7; PE 1: 5 + 6; PE 2: 5 + 6.
  EXPECT_EQ(res.report.batchedTrips, 34u);
}

TEST(RegionEngine, BatchesALongNestInPartsThatStopShortOfTheSendLimit) {
  // 2500 x 4 trips, a word each, from PE 0 to PE 1: more than a batch
  // takes (4096 trips) and than a visit sends (4096 messages). PE 0's
  // batches take 1023 outer trips (4092 sends), then it sends one outer trip
  // by the reference's steps and yields; 1023, one, then the 452 left. PE 1
  // batches what came each time: 1024, then 1023 after a trip blocked in
  // its first word, then 451 after another.
  format::Program p = makeProgram(2, 1);
  format::Region *r = addRegion(p, "long", 0, 0, 2, 1);
  std::vector<float> x = {0.5f, -1.25f, 3.0f, 7.5f};
  initFloats(r, 0, 0, 0, x);
  *r->add_code() = only(loop(2500), 0, 0, 0, 0);
  *r->add_code() = only(loop(4), 0, 0, 0, 0);
  *r->add_code() = only(at(send(1, 0, 1), 0, 0, {4, 0}), 0, 0, 0, 0);
  *r->add_code() = only(end(), 0, 0, 0, 0);
  *r->add_code() = only(end(), 0, 0, 0, 0);
  *r->add_code() = only(loop(2500), 1, 1, 0, 0);
  *r->add_code() = only(loop(4), 1, 1, 0, 0);
  *r->add_code() = only(at(recv(1, 0, 1), 0, 0, {4, 0}), 1, 1, 0, 0);
  *r->add_code() = only(end(), 1, 1, 0, 0);
  *r->add_code() = only(end(), 1, 1, 0, 0);
  routeEast(p, 0, 0, 1, 1);
  addPiece(addTensor(p, true, "y", format::F32, {4}), 1, 0, 0, 0, 4);
  RunResult res = bothEngines(p);
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  EXPECT_EQ(res.out("y"), x);
  EXPECT_EQ(res.report.batchedTrips, 2u * (10000 - 8));
}

TEST(RegionEngine, FaultsAsTheReferenceDoesInsideANest) {
  // The third trip's operand leaves the kernel's SRAM: the nest is not
  // batched, and the fault is the reference's, at the same instruction.
  format::Program p = makeProgram(1, 1);
  format::Region *r = addRegion(p, "far", 0, 0, 1, 1);
  r->set_sram_bytes_per_pe(64);
  *r->add_code() = loop(4);
  *r->add_code() = at(ins(format::FILL, {0}, 4), 0, 0, {24});
  *r->add_code() = end();
  RunResult res = bothEngines(p);
  ASSERT_FALSE(res.status.ok());
  EXPECT_NE(res.status.message().find("SRAM overflow"), std::string::npos) << res.status.message();
}

} // namespace
