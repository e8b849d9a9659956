// Results must not depend on the number of threads: a bigger random program
// (8x8 PEs, uneven work, reductions and broadcasts) run with 1 and 4 threads.
#include "Machine.h"
#include "TestPrograms.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

using namespace wsc::runtime;
using namespace wsc::runtime::test;
namespace format = wsc::format;

namespace {

constexpr uint32_t N = 8, L = 16;
constexpr int64_t V = 0, W = 64, T = W + 4 * L * L, S = T + 4 * L;

/// Each PE of the top-left cols x rows sends `color` to the core below it.
void routeColumnsSouth(format::Program &p, uint32_t cols, uint32_t rows, uint32_t color) {
  for (uint32_t x = 0; x < cols; ++x)
    for (uint32_t y = 0; y < rows; ++y) {
      if (y + 1 < rows)
        addRoute(p, x, y, color, format::RAMP, {format::SOUTH});
      if (y > 0)
        addRoute(p, x, y, color, format::NORTH, {format::RAMP});
    }
}

format::Program randomProgram(uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::uniform_int_distribution<uint32_t> coord(0, N - 1), trips(0, 4);
  format::Program p = makeProgram(N, N);
  format::Region *r = addRegion(p, "grid", 0, 0, N, N);
  for (uint32_t py = 0; py < N; ++py)
    for (uint32_t px = 0; px < N; ++px) {
      std::vector<float> w(L * L);
      for (float &x : w)
        x = 0.1f * dist(rng);
      initFloats(r, px, py, W, w);
    }
  *r->add_code() = loop(3);
  *r->add_code() = ins(format::MATVEC, {T, W, V}, L, L);
  // Uneven work: random rectangles repeat a transcendental a random number of times.
  for (int k = 0; k < 6; ++k) {
    uint32_t x0 = coord(rng), y0 = coord(rng);
    uint32_t x1 = std::max(x0, coord(rng)), y1 = std::max(y0, coord(rng));
    *r->add_code() = only(loop(trips(rng)), x0, x1, y0, y1);
    *r->add_code() = ins(k % 2 ? format::TANH : format::GELU, {T, T}, L);
    *r->add_code() = end();
  }
  // Row reduction of T eastwards, column max of V southwards.
  *r->add_code() = only(recv(0, T, L, format::RECV_ADD), 1, N - 1, 0, N - 1);
  *r->add_code() = only(send(0, T, L), 0, N - 2, 0, N - 1);
  *r->add_code() = only(recv(1, V, L, format::RECV_MAX), 0, N - 1, 1, N - 1);
  *r->add_code() = only(send(1, V, L), 0, N - 1, 0, N - 2);
  // The east column broadcasts its row sum back west; everyone folds it into V.
  *r->add_code() = only(send(2, T, L), N - 1, N - 1, 0, N - 1);
  *r->add_code() = only(recv(2, S, L), 0, N - 2, 0, N - 1);
  format::Instr scale = only(ins(format::MUL_I, {S, S}, L), 0, N - 2, 0, N - 1);
  scale.set_imm(0.01f);
  *r->add_code() = scale;
  *r->add_code() = only(ins(format::ADD, {V, V, S}, L), 0, N - 2, 0, N - 1);
  *r->add_code() = end();
  for (uint32_t y = 0; y < N; ++y) {
    routeEast(p, y, 0, 1, 0);
    for (uint32_t x = 1; x + 1 < N; ++x)
      addRoute(p, x, y, 0, format::RAMP, {format::EAST});
    for (uint32_t x = 2; x < N; ++x)
      addRoute(p, x, y, 0, format::WEST, {format::RAMP});
    addRoute(p, N - 1, y, 2, format::RAMP, {format::WEST});
    for (uint32_t x = 1; x + 1 < N; ++x)
      addRoute(p, x, y, 2, format::EAST, {format::WEST, format::RAMP});
    addRoute(p, 0, y, 2, format::EAST, {format::RAMP});
  }
  routeColumnsSouth(p, N, N, 1);
  format::HostTensor *in = addTensor(p, false, "v", format::F32, {N, N, L});
  format::HostTensor *outV = addTensor(p, true, "v_out", format::F32, {N, N, L});
  format::HostTensor *outT = addTensor(p, true, "t_out", format::F32, {N, N, L});
  for (uint32_t y = 0; y < N; ++y)
    for (uint32_t x = 0; x < N; ++x) {
      addPiece(in, x, y, V, (y * N + x) * L, L);
      addPiece(outV, x, y, V, (y * N + x) * L, L);
      addPiece(outT, x, y, T, (y * N + x) * L, L);
    }
  return p;
}

TEST(Determinism, OneAndFourThreadsAgreeBitForBit) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    format::Program p = randomProgram(seed);
    std::mt19937 rng(seed + 100);
    std::uniform_real_distribution<float> dist(-1, 1);
    std::vector<float> v(N * N * L);
    for (float &x : v)
      x = dist(rng);
    std::map<std::string, HostArray> inputs = {{"v", HostArray::floats({N, N, L}, v)}};
    RunResult one = runProgram(p, inputs, 1, true);
    RunResult four = runProgram(p, inputs, 4, true);
    ASSERT_TRUE(one.status.ok()) << one.status.message();
    ASSERT_TRUE(four.status.ok()) << four.status.message();
    for (const char *name : {"v_out", "t_out"}) {
      const std::vector<float> &a = one.out(name), &b = four.out(name);
      ASSERT_EQ(a.size(), b.size());
      EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * 4), 0) << name << " seed " << seed;
    }
    EXPECT_EQ(one.report.cycles, four.report.cycles);
    // rounds counts the host's PE visits, which depend on how the threads interleave.
    EXPECT_EQ(one.report.instructions, four.report.instructions);
    EXPECT_EQ(one.report.wavelets, four.report.wavelets);
    EXPECT_EQ(one.report.kernels[0].busyCycles, four.report.kernels[0].busyCycles);
    EXPECT_EQ(traceJson(one.report), traceJson(four.report));
    EXPECT_GT(one.report.cycles, 3u * 64);
    EXPECT_TRUE(one.report.warnings.empty());
  }
}

TEST(Determinism, OddThreadCountsAgreeToo) {
  format::Program p = randomProgram(7);
  std::vector<float> v(N * N * L, 0.5f);
  RunResult a = runProgram(p, {{"v", HostArray::floats({N, N, L}, v)}}, 2);
  RunResult b = runProgram(p, {{"v", HostArray::floats({N, N, L}, v)}}, 7);
  ASSERT_TRUE(a.status.ok()) << a.status.message();
  ASSERT_TRUE(b.status.ok()) << b.status.message();
  EXPECT_EQ(a.out("v_out"), b.out("v_out"));
  EXPECT_EQ(a.report.cycles, b.report.cycles);
}

// Sums down each column of a 4x3 kernel, then along its last row east: its
// streams cross between column strips one way only, so with several
// threads each thread runs a strip of it (Scheduler.cpp).
format::Program oneWayProgram() {
  constexpr uint32_t Cols = 4, Rows = 3;
  format::Program p = makeProgram(Cols, Rows);
  format::Region *r = addRegion(p, "lin", 0, 0, Cols, Rows);
  *r->add_code() = loop(5);
  format::Instr grow = ins(format::MUL_I, {V, V}, L);
  grow.set_imm(1.5f);
  *r->add_code() = grow;
  *r->add_code() = only(recv(1, V, L, format::RECV_ADD), 0, Cols - 1, 1, Rows - 1);
  *r->add_code() = only(send(1, V, L), 0, Cols - 1, 0, Rows - 2);
  *r->add_code() = only(recv(0, V, L, format::RECV_ADD), 1, Cols - 1, Rows - 1, Rows - 1);
  *r->add_code() = only(send(0, V, L), 0, Cols - 2, Rows - 1, Rows - 1);
  *r->add_code() = end();
  routeColumnsSouth(p, Cols, Rows, 1);
  for (uint32_t x = 0; x + 1 < Cols; ++x)
    routeEast(p, Rows - 1, x, x + 1, 0);
  format::HostTensor *in = addTensor(p, false, "v", format::F32, {Rows, Cols, L});
  format::HostTensor *out = addTensor(p, true, "v_out", format::F32, {Rows, Cols, L});
  for (uint32_t y = 0; y < Rows; ++y)
    for (uint32_t x = 0; x < Cols; ++x) {
      addPiece(in, x, y, V, (y * Cols + x) * L, L);
      addPiece(out, x, y, V, (y * Cols + x) * L, L);
    }
  return p;
}

std::vector<bool> stripsOneWay(const format::Program &p, unsigned n) {
  Expected<detail::Model> m = detail::buildModel(p);
  EXPECT_TRUE(bool(m)) << m.status().message();
  detail::PeStates pes(m->numPes);
  return detail::Fabric(*m, pes).stripsOneWay(n);
}

TEST(Determinism, KernelsSplitByStripsComputeTheSame) {
  format::Program p = oneWayProgram();
  EXPECT_EQ(stripsOneWay(p, 2), std::vector<bool>{true});
  EXPECT_EQ(stripsOneWay(p, 4), std::vector<bool>{true});
  EXPECT_EQ(stripsOneWay(p, 5), std::vector<bool>{false}); // narrower than the strips
  // A row reduction east and its broadcast back west: a round trip per step.
  EXPECT_EQ(stripsOneWay(randomProgram(1), 2), std::vector<bool>{false});
  std::vector<float> v(3 * 4 * L);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = 0.01f * float(i % 37) - 0.1f;
  std::map<std::string, HostArray> inputs = {{"v", HostArray::floats({3, 4, L}, v)}};
  RunResult one = runProgram(p, inputs, 1);
  ASSERT_TRUE(one.status.ok()) << one.status.message();
  for (unsigned threads : {2u, 3u, 4u}) {
    RunResult r = runProgram(p, inputs, threads);
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    EXPECT_EQ(r.out("v_out"), one.out("v_out")) << threads << " threads";
    EXPECT_EQ(r.report.cycles, one.report.cycles);
    EXPECT_EQ(r.report.instructions, one.report.instructions);
  }
  // The same steps on the host, in the same order of float operations.
  std::vector<float> want = v;
  auto at = [&](uint32_t y, uint32_t x, int64_t i) -> float & { return want[(y * 4 + x) * L + i]; };
  for (int step = 0; step < 5; ++step)
    for (int64_t i = 0; i < L; ++i) {
      for (uint32_t y = 0; y < 3; ++y)
        for (uint32_t x = 0; x < 4; ++x)
          at(y, x, i) *= 1.5f;
      for (uint32_t y = 1; y < 3; ++y)
        for (uint32_t x = 0; x < 4; ++x)
          at(y, x, i) += at(y - 1, x, i);
      for (uint32_t x = 1; x < 4; ++x)
        at(2, x, i) += at(2, x - 1, i);
    }
  EXPECT_EQ(one.out("v_out"), want);
}

// A fast producer and a slow consumer: the producer yields after a visit's
// worth of SENDs, so the run takes many visits; the numbers must not notice,
// at any thread count.
TEST(Determinism, YieldingPesComputeTheSame) {
  constexpr int64_t Items = 3 * int64_t(detail::VisitLimit().sends) + 7;
  format::Program p = makeProgram(2, 1);
  p.mutable_arch()->set_sram_bytes_per_pe(4 * Items + 4);
  format::Region *prod = addRegion(p, "prod", 0, 0, 1, 1);
  *prod->add_code() = loop(Items);
  format::Instr s = send(0, 0, 1);
  *s.mutable_addr(0) = aff(0, {4});
  *prod->add_code() = s;
  *prod->add_code() = end();
  format::Region *cons = addRegion(p, "cons", 1, 0, 1, 1);
  *cons->add_code() = loop(Items);
  *cons->add_code() = recv(0, 0, 1, format::RECV_ADD);
  *cons->add_code() = ins(format::EXP, {1024, 1024}, 1024);
  *cons->add_code() = end();
  addRoute(p, 0, 0, 0, format::RAMP, {format::EAST});
  addRoute(p, 1, 0, 0, format::WEST, {format::RAMP});
  addPiece(addTensor(p, false, "x", format::F32, {Items}), 0, 0, 0, 0, Items);
  addPiece(addTensor(p, true, "sum", format::F32, {1}), 1, 0, 0, 0, 1);
  std::vector<float> x(Items);
  float want = 0;
  for (int64_t i = 0; i < Items; ++i) {
    x[i] = 0.25f * float(i % 7) - 0.5f;
    want += x[i];
  }
  RunResult one = runProgram(p, {{"x", HostArray::floats({Items}, x)}}, 1);
  ASSERT_TRUE(one.status.ok()) << one.status.message();
  EXPECT_EQ(one.out("sum"), std::vector<float>{want});
  // Without yielding the producer would send everything in one visit.
  EXPECT_GT(one.report.rounds, uint64_t(Items) / detail::VisitLimit().sends);
  for (unsigned threads : {2u, 4u}) {
    RunResult r = runProgram(p, {{"x", HostArray::floats({Items}, x)}}, threads);
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    EXPECT_EQ(r.out("sum"), one.out("sum"));
    EXPECT_EQ(r.report.cycles, one.report.cycles);
    EXPECT_EQ(r.report.wavelets, one.report.wavelets);
  }
}

// Routing is walked in parallel; a collision must still be reported as the
// serial order meets it (the lowest sender first), whichever thread claimed
// a link first.
TEST(Determinism, CollisionIsReportedTheSameAtAnyThreadCount) {
  constexpr uint32_t Senders = 64;
  format::Program p = makeProgram(Senders + 1, 1);
  *addRegion(p, "s", 0, 0, Senders, 1)->add_code() = send(4, 0, 1);
  *addRegion(p, "c", Senders, 0, 1, 1)->add_code() = recv(4, 0, Senders);
  for (uint32_t x = 0; x < Senders; ++x) {
    addRoute(p, x, 0, 4, format::RAMP, {format::EAST});
    if (x > 0)
      addRoute(p, x, 0, 4, format::WEST, {format::EAST});
  }
  addRoute(p, Senders, 0, 4, format::WEST, {format::RAMP});
  const std::string want =
      "collision: wafer 0 PE (1,0) (kernel 's'), color 4: EAST already carries wavelets of "
      "wafer 0 PE (0,0) (kernel 's') on color 4 (sent by wafer 0 PE (1,0) (kernel 's') on "
      "color 4)";
  for (int rep = 0; rep < 20; ++rep)
    for (unsigned threads : {1u, 2u, 4u, 7u}) {
      RunResult r = runProgram(p, {}, threads);
      ASSERT_FALSE(r.status.ok());
      EXPECT_EQ(r.status.message(), want) << threads << " threads";
    }
}

} // namespace
