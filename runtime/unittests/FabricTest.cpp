// Moving data between PEs: hops, multicast, reductions, a tiled MATVEC and
// two wafers joined by a link; with the timing model's cycle counts.
#include "Machine.h"
#include "TestPrograms.h"

#include <gtest/gtest.h>

#include <numeric>
#include <random>

using namespace wsc::runtime;
using namespace wsc::runtime::test;
namespace format = wsc::format;

namespace {

HostArray vec(std::vector<float> v) {
  int64_t n = int64_t(v.size());
  return HostArray::floats({n}, std::move(v));
}

TEST(Fabric, SendEastOverThreeHops) {
  format::Program p = makeProgram(5, 1);
  *addRegion(p, "src", 0, 0, 1, 1)->add_code() = send(1, 0, 4);
  *addRegion(p, "dst", 3, 0, 1, 1)->add_code() = recv(1, 0, 4);
  routeEast(p, 0, 0, 3, 1);
  addPiece(addTensor(p, false, "x", format::F32, {4}), 0, 0, 0, 0, 4);
  addPiece(addTensor(p, true, "y", format::F32, {4}), 3, 0, 0, 0, 4);
  RunResult res = runProgram(p, {{"x", vec({1, 2, 3, 4})}});
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  EXPECT_EQ(res.out("y"), (std::vector<float>{1, 2, 3, 4}));
  // Word j is at (3,0) from cycle 0 + 1 + 3 hops + j; pulling the last ends at 8.
  EXPECT_EQ(res.report.cycles, 8u);
  EXPECT_EQ(res.report.wavelets, 12u);
  EXPECT_EQ(res.report.linksUsed, 3u);
  EXPECT_DOUBLE_EQ(res.report.linkMaxUtilization, 4.0 / 8.0);
  EXPECT_TRUE(res.report.warnings.empty());
}

TEST(Fabric, MessagesOfOneVisitKeepTheirOrderPerColor) {
  // One visit sends on colors 1, 2, 1, 2, 1 (color 2's sizes differ): the
  // fabric walks a color's messages of one size as one block, and each
  // color's queue still gets them in send order, each with its own time.
  format::Program p = makeProgram(3, 1);
  format::Region *src = addRegion(p, "src", 0, 0, 1, 1);
  for (format::Instr i :
       {send(1, 0, 2), send(2, 8, 3), send(1, 20, 2), send(2, 28, 1), send(1, 32, 2)})
    *src->add_code() = i;
  format::Region *dst = addRegion(p, "dst", 2, 0, 1, 1);
  *dst->add_code() = recv(1, 0, 6);
  *dst->add_code() = recv(2, 24, 4);
  routeEast(p, 0, 0, 2, 1);
  routeEast(p, 0, 0, 2, 2);
  addPiece(addTensor(p, false, "x", format::F32, {10}), 0, 0, 0, 0, 10);
  addPiece(addTensor(p, true, "y1", format::F32, {6}), 2, 0, 0, 0, 6);
  addPiece(addTensor(p, true, "y2", format::F32, {4}), 2, 0, 24, 0, 4);
  RunResult res = runProgram(p, {{"x", vec({0, 1, 2, 3, 4, 5, 6, 7, 8, 9})}});
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  EXPECT_EQ(res.out("y1"), (std::vector<float>{0, 1, 5, 6, 8, 9}));
  EXPECT_EQ(res.out("y2"), (std::vector<float>{2, 3, 4, 7}));
  // Sends start at cycles 0, 2, 5, 7, 8; word j of one sent at t is at the
  // core from t + 1 + 2 hops + j. Color 1's words are there at 3, 4, 8, 9,
  // 11, 12: pulled by 13; color 2's (5, 6, 7, 10) then take 4 more: 17.
  EXPECT_EQ(res.report.cycles, 17u);
  EXPECT_EQ(res.report.messages, 5u);
  EXPECT_EQ(res.report.wavelets, 20u); // 10 words over 2 links
}

TEST(Fabric, MulticastToTwoPes) {
  format::Program p = makeProgram(3, 2);
  *addRegion(p, "a", 0, 0, 1, 1)->add_code() = recv(2, 0, 2);
  *addRegion(p, "s", 1, 0, 1, 1)->add_code() = send(2, 0, 2);
  *addRegion(p, "b", 2, 1, 1, 1)->add_code() = recv(2, 0, 2);
  addRoute(p, 1, 0, 2, format::RAMP, {format::EAST, format::WEST});
  addRoute(p, 0, 0, 2, format::EAST, {format::RAMP});
  addRoute(p, 2, 0, 2, format::WEST, {format::SOUTH});
  addRoute(p, 2, 1, 2, format::NORTH, {format::RAMP});
  addPiece(addTensor(p, false, "x", format::F32, {2}), 1, 0, 0, 0, 2);
  addPiece(addTensor(p, true, "ya", format::F32, {2}), 0, 0, 0, 0, 2);
  addPiece(addTensor(p, true, "yb", format::F32, {2}), 2, 1, 0, 0, 2);
  RunResult res = runProgram(p, {{"x", vec({7, -7})}});
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  EXPECT_EQ(res.out("ya"), (std::vector<float>{7, -7}));
  EXPECT_EQ(res.out("yb"), (std::vector<float>{7, -7}));
  EXPECT_EQ(res.report.cycles, 1u + 2 + 2); // the far PE is 2 hops away
}

TEST(Fabric, FiltersGiveEachCoreItsWindow) {
  // One 6-word message to two PEs; their filters keep words [1, 3) and
  // [4, 6) of each 6-word period: each core receives 2 words, which arrive
  // as late as their place in the message says.
  format::Program p = makeProgram(3, 1);
  *addRegion(p, "a", 0, 0, 1, 1)->add_code() = recv(2, 0, 2);
  *addRegion(p, "s", 1, 0, 1, 1)->add_code() = send(2, 0, 6);
  format::Region *b = addRegion(p, "b", 2, 0, 1, 1);
  *b->add_code() = recv(2, 0, 2);
  addRoute(p, 1, 0, 2, format::RAMP, {format::EAST, format::WEST});
  addRoute(p, 0, 0, 2, format::EAST, {format::RAMP});
  addRoute(p, 2, 0, 2, format::WEST, {format::RAMP});
  auto filter = [](format::Region *r, uint32_t first, uint32_t count) {
    format::Filter *f = r->add_filters();
    f->set_color(2), f->set_first(first), f->set_count(count), f->set_period(6);
  };
  filter(p.mutable_wafers(0)->mutable_regions(0), 1, 2);
  filter(b, 4, 2);
  addPiece(addTensor(p, false, "x", format::F32, {6}), 1, 0, 0, 0, 6);
  addPiece(addTensor(p, true, "ya", format::F32, {2}), 0, 0, 0, 0, 2);
  addPiece(addTensor(p, true, "yb", format::F32, {2}), 2, 0, 0, 0, 2);
  RunResult res = runProgram(p, {{"x", vec({1, 2, 3, 4, 5, 6})}});
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  EXPECT_EQ(res.out("ya"), (std::vector<float>{2, 3}));
  EXPECT_EQ(res.out("yb"), (std::vector<float>{5, 6}));
  // Word 5 reaches (2,0) at 1 + 1 hop + 5: pulled by 8.
  EXPECT_EQ(res.report.cycles, 8u);
  EXPECT_TRUE(res.report.warnings.empty());

  // A second filter of one core's color is refused, naming the later one.
  format::Program twice = p;
  filter(twice.mutable_wafers(0)->mutable_regions(2), 0, 1);
  RunResult both = runProgram(twice, {{"x", vec({1, 2, 3, 4, 5, 6})}});
  EXPECT_FALSE(both.status.ok());
  EXPECT_NE(
      both.status.message().find("filter 1 of region 'b': a second filter for color 2 at PE (2,0)"),
      std::string::npos)
      << both.status.message();

  // A filter where the router gives the core nothing is refused.
  format::Region *s = p.mutable_wafers(0)->mutable_regions(1);
  filter(s, 0, 1);
  RunResult bad = runProgram(p, {{"x", vec({1, 2, 3, 4, 5, 6})}});
  EXPECT_FALSE(bad.status.ok());
  EXPECT_NE(bad.status.message().find(
                "filter 0 of region 's': PE (1,0) of wafer 0 gets nothing on color 2"),
            std::string::npos)
      << bad.status.message();
}

TEST(Fabric, FilterWindowsSpanMessages) {
  // A 6-word block per period sent as two 3-word messages, twice: the
  // window [2, 5) takes the last word of one message and two of the next.
  format::Program p = makeProgram(2, 1);
  format::Region *s = addRegion(p, "s", 0, 0, 1, 1);
  for (uint32_t at : {0u, 12u, 24u, 36u})
    *s->add_code() = send(2, at, 3);
  format::Region *r = addRegion(p, "r", 1, 0, 1, 1);
  *r->add_code() = recv(2, 0, 6);
  addRoute(p, 0, 0, 2, format::RAMP, {format::EAST});
  addRoute(p, 1, 0, 2, format::WEST, {format::RAMP});
  format::Filter *f = r->add_filters();
  f->set_color(2), f->set_first(2), f->set_count(3), f->set_period(6);
  addPiece(addTensor(p, false, "x", format::F32, {12}), 0, 0, 0, 0, 12);
  addPiece(addTensor(p, true, "y", format::F32, {6}), 1, 0, 0, 0, 6);
  RunResult res = runProgram(p, {{"x", vec({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})}});
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  EXPECT_EQ(res.out("y"), (std::vector<float>{2, 3, 4, 8, 9, 10}));
}

// A queue counts its words from the origin's total: it must give what a
// look at each message's window gives, for messages of any sizes.
TEST(Fabric, FilterCountsFromTheStreamTotal) {
  std::mt19937 rng(7);
  for (uint32_t period : {1u, 2u, 5u, 6u, 64u})
    for (uint32_t first = 0; first < period; ++first)
      for (uint32_t count = 1; first + count <= period; ++count) {
        detail::RecvQueue q;
        q.first = first, q.count = count, q.period = period;
        uint64_t stream = 0, windows = 0;
        for (int k = 0; k < 40; ++k) {
          uint32_t size = rng() % (2 * period + 3), phase = uint32_t(stream % period);
          for (uint32_t at = 0, from, to; at < size; at = to) {
            q.window(phase, size, at, from, to);
            windows += to - from;
          }
          stream += size;
          ASSERT_EQ(q.passing(stream), windows)
              << "window [" << first << ", " << first + count << ") of " << period;
        }
      }
}

// A sum along a row of 4 PEs: PE 0 sends its 4 words east, PEs 1-2 add
// theirs and pass the sum on (two steps, or one forwarding receive), PE 3
// adds the last. Returns the run's cycles after checking the sums.
static uint64_t chainSum(bool forwarding) {
  format::Program p = makeProgram(4, 1);
  format::Region *r = addRegion(p, "reduce", 0, 0, 4, 1);
  *r->add_code() = only(send(0, 0, 4), 0, 0, 0, 0);
  if (forwarding) {
    format::Instr relay = recv(0, 0, 4, format::RECV_ADD);
    relay.set_forward(0);
    *r->add_code() = only(relay, 1, 2, 0, 0);
  } else {
    *r->add_code() = only(recv(0, 0, 4, format::RECV_ADD), 1, 2, 0, 0);
    *r->add_code() = only(send(0, 0, 4), 1, 2, 0, 0);
  }
  *r->add_code() = only(recv(0, 0, 4, format::RECV_ADD), 3, 3, 0, 0);
  for (uint32_t x = 0; x < 3; ++x) {
    addRoute(p, x, 0, 0, format::RAMP, {format::EAST});
    addRoute(p, x + 1, 0, 0, format::WEST, {format::RAMP});
  }
  format::HostTensor *x = addTensor(p, false, "x", format::F32, {4, 4});
  for (uint32_t px = 0; px < 4; ++px)
    addPiece(x, px, 0, 0, 4 * px, 4);
  addPiece(addTensor(p, true, "sum", format::F32, {4}), 3, 0, 0, 0, 4);
  std::vector<float> in(16);
  for (int i = 0; i < 16; ++i)
    in[i] = float(i * i) / 8;
  RunResult res = runProgram(p, {{"x", HostArray::floats({4, 4}, in)}});
  EXPECT_TRUE(res.status.ok()) << res.status.message();
  for (int c = 0; c < 4; ++c)
    EXPECT_EQ(res.out("sum")[c], ((in[c] + in[4 + c]) + in[8 + c]) + in[12 + c]);
  return res.report.cycles;
}

TEST(Fabric, ChainReductionAlongARow) {
  // Each stage: send 4 at t, first word at t + 2, received by t + 6.
  EXPECT_EQ(chainSum(/*forwarding=*/false), 18u);
}

TEST(Fabric, ForwardingChainReduction) {
  // A word leaves as it is added: each stage adds 2 cycles (the hop), not a
  // whole receive and send: PE 1 gets words at 2..5, PE 2 at 4..7, PE 3 at
  // 6..9, done at 10.
  EXPECT_EQ(chainSum(/*forwarding=*/true), 10u);
}

TEST(Fabric, TiledMatvecOnTwoByTwoPes) {
  // y = W x with W 8x6, tiled 2x2: PE (px,py) holds rows 4py..4py+3, columns 3px..3px+2.
  const int R = 8, C = 6, r = 4, c = 3;
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> W(R * C), x(C);
  for (float &w : W)
    w = dist(rng);
  for (float &v : x)
    v = dist(rng);
  format::Program p = makeProgram(2, 2);
  format::Region *reg = addRegion(p, "matvec", 0, 0, 2, 2);
  for (uint32_t py = 0; py < 2; ++py)
    for (uint32_t px = 0; px < 2; ++px) {
      std::vector<float> tile;
      for (int i = 0; i < r; ++i)
        for (int j = 0; j < c; ++j)
          tile.push_back(W[(py * r + i) * C + px * c + j]);
      initFloats(reg, px, py, 0, tile);
    }
  const int X = 4 * r * c, Y = X + 4 * c;
  // x chunks enter at the top row and are multicast down the columns.
  *reg->add_code() = only(send(0, X, c), 0, 1, 0, 0);
  *reg->add_code() = only(recv(0, X, c), 0, 1, 1, 1);
  *reg->add_code() = ins(format::MATVEC, {Y, 0, X}, r, c);
  // Partial sums are reduced along the rows into the east column.
  *reg->add_code() = only(send(1, Y, r), 0, 0, 0, 1);
  *reg->add_code() = only(recv(1, Y, r, format::RECV_ADD), 1, 1, 0, 1);
  for (uint32_t px = 0; px < 2; ++px) {
    addRoute(p, px, 0, 0, format::RAMP, {format::SOUTH});
    addRoute(p, px, 1, 0, format::NORTH, {format::RAMP});
  }
  for (uint32_t py = 0; py < 2; ++py) {
    addRoute(p, 0, py, 1, format::RAMP, {format::EAST});
    addRoute(p, 1, py, 1, format::WEST, {format::RAMP});
  }
  format::HostTensor *xt = addTensor(p, false, "x", format::F32, {C});
  addPiece(xt, 0, 0, X, 0, c);
  addPiece(xt, 1, 0, X, c, c);
  format::HostTensor *yt = addTensor(p, true, "y", format::F32, {R});
  addPiece(yt, 1, 0, Y, 0, r);
  addPiece(yt, 1, 1, Y, r, r);
  RunResult res = runProgram(p, {{"x", HostArray::floats({C}, x)}});
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  for (int i = 0; i < R; ++i) {
    double ref = 0;
    for (int j = 0; j < C; ++j)
      ref += double(W[i * C + j]) * x[j];
    EXPECT_NEAR(res.out("y")[i], ref, 1e-5) << "row " << i;
  }
  // Bottom row: recv x (done 3 + 1 + 1 = 5), matvec 3, send 4 at 8 -> received at 8 + 2 + 4.
  EXPECT_EQ(res.report.cycles, 14u);
}

TEST(Fabric, TwoWafersOverALink) {
  format::Program p = twoWafersOverALink();
  addPiece(addTensor(p, false, "x", format::F32, {4}), 0, 0, 0, 0, 4, 1, 0, 0);
  addPiece(addTensor(p, true, "y", format::F32, {4}), 1, 0, 0, 0, 4, 1, 0, 1);
  RunResult res = runProgram(p, {{"x", vec({1, 2, 3, 4})}});
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  EXPECT_EQ(res.out("y"), (std::vector<float>{1, 2, 3, 4}));
  // 3 hops, plus the link: 10 latency + 16 B / 4 B per cycle.
  EXPECT_EQ(res.report.cycles, 1u + 3 + 14 + 4);
  EXPECT_EQ(res.report.wafers, 2u);
  EXPECT_DOUBLE_EQ(res.report.linkMaxUtilization, 4.0 / 22.0);
}

TEST(Fabric, ALinkDelaysEachMessageByItsOwnSize) {
  // Two messages of one origin over the link, 4 words and then 12.
  format::Program p = twoWafersOverALink();
  format::Region *a = p.mutable_wafers(0)->mutable_regions(0);
  format::Region *b = p.mutable_wafers(1)->mutable_regions(0);
  *a->add_code() = send(2, 16, 12);
  *b->add_code() = recv(3, 16, 12);
  addPiece(addTensor(p, false, "x", format::F32, {16}), 0, 0, 0, 0, 16, 1, 0, 0);
  addPiece(addTensor(p, true, "y", format::F32, {16}), 1, 0, 0, 0, 16, 1, 0, 1);
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i)
    x[size_t(i)] = float(i);
  RunResult res = runProgram(p, {{"x", HostArray::floats({16}, x)}});
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  EXPECT_EQ(res.out("y"), x);
  // The second SEND starts at 4; its 12 words cross the link in 10 + 48 B /
  // 4 B per cycle, so word 11 arrives at 4 + 1 + 11 + 3 hops + 22 = 41 and
  // its RECV ends a cycle later (the first's 4 words crossed in 10 + 4).
  EXPECT_EQ(res.report.cycles, 42u);
}

TEST(Fabric, RecvMaxAndAnEmptySend) {
  format::Program p = makeProgram(2, 1);
  *addRegion(p, "s", 0, 0, 1, 1)->add_code() = send(0, 0, 0); // routed, delivers nothing
  format::Region *s = p.mutable_wafers(0)->mutable_regions(0);
  *s->add_code() = send(0, 0, 3);
  format::Region *r = addRegion(p, "r", 1, 0, 1, 1);
  *r->add_code() = recv(0, 0, 3, format::RECV_MAX);
  routeEast(p, 0, 0, 1, 0);
  addPiece(addTensor(p, false, "x", format::F32, {3}), 0, 0, 0, 0, 3);
  addPiece(addTensor(p, false, "y", format::F32, {3}), 1, 0, 0, 0, 3);
  addPiece(addTensor(p, true, "m", format::F32, {3}), 1, 0, 0, 0, 3);
  RunResult res = runProgram(p, {{"x", vec({1, 5, -2})}, {"y", vec({3, 4, -1})}});
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  EXPECT_EQ(res.out("m"), (std::vector<float>{3, 5, -1}));
  EXPECT_EQ(res.report.messages, 2u);
  EXPECT_TRUE(res.report.warnings.empty());
}

TEST(Fabric, CountsFromThePeCoordinate) {
  // One SPMD region of 3 PEs in a row: PE 0 sends 2 words to PE 1 and 4 to PE 2
  // (two colors); every PE receives n = 2 * px words (PE 0: none).
  format::Program p = makeProgram(3, 1);
  format::Region *r = addRegion(p, "row", 0, 0, 3, 1);
  *r->add_code() = only(send(1, 0, 2), 0, 0, 0, 0);
  *r->add_code() = only(send(2, 0, 4), 0, 0, 0, 0);
  format::Instr in1 = recv(1, 64, 0);
  *in1.mutable_n() = aff(0, {}, 2);
  *r->add_code() = only(in1, 1, 1, 0, 0);
  format::Instr in2 = recv(2, 64, 0);
  *in2.mutable_n() = aff(0, {}, 2);
  *r->add_code() = in2; // PE 0: n = 0, completes at once; PE 1: color 2 never arrives
  routeEast(p, 0, 0, 1, 1);
  addRoute(p, 0, 0, 2, format::RAMP, {format::EAST});
  addRoute(p, 1, 0, 2, format::WEST, {format::EAST});
  addRoute(p, 2, 0, 2, format::WEST, {format::RAMP});
  addPiece(addTensor(p, false, "x", format::F32, {4}), 0, 0, 0, 0, 4);
  format::HostTensor *y = addTensor(p, true, "y", format::F32, {2, 4});
  addPiece(y, 1, 0, 64, 0, 4);
  addPiece(y, 2, 0, 64, 4, 4);
  RunResult res = runProgram(p, {{"x", vec({1, 2, 3, 4})}});
  // PE 1 waits for 2 words of color 2 that nobody sends to it.
  ASSERT_FALSE(res.status.ok());
  EXPECT_NE(res.status.message().find("deadlock"), std::string::npos) << res.status.message();
  EXPECT_NE(res.status.message().find("PE (1,0) (kernel 'row'), color 2: waits for 2 words, has 0"),
            std::string::npos)
      << res.status.message();

  // Predicate the second RECV to PE 2 only, and the run completes.
  *p.mutable_wafers(0)->mutable_regions(0)->mutable_code(3) = only(in2, 2, 2, 0, 0);
  res = runProgram(p, {{"x", vec({1, 2, 3, 4})}});
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  EXPECT_EQ(res.out("y"), (std::vector<float>{1, 2, 0, 0, 1, 2, 3, 4}));
}

TEST(Fabric, UnconsumedWordsAreAWarning) {
  format::Program p = makeProgram(2, 1);
  *addRegion(p, "s", 0, 0, 1, 1)->add_code() = send(0, 0, 4);
  *addRegion(p, "r", 1, 0, 1, 1)->add_code() = recv(0, 0, 3);
  routeEast(p, 0, 0, 1, 0);
  RunResult res = runProgram(p);
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  ASSERT_EQ(res.report.warnings.size(), 1u);
  EXPECT_EQ(res.report.warnings[0],
            "wafer 0 PE (1,0) (kernel 'r'), color 0: 1 received words never consumed");
}

TEST(Fabric, TraceRecordsTheFirstPeOfEachKernel) {
  format::Program p = makeProgram(2, 1);
  format::Region *r = addRegion(p, "k", 0, 0, 2, 1);
  *r->add_code() = ins(format::FILL, {0}, 8);
  *r->add_code() = ins(format::EXP, {0, 0}, 8);
  RunResult res = runProgram(p, {}, 1, true);
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  ASSERT_EQ(res.report.trace.size(), 2u);
  EXPECT_EQ(res.report.trace[1].op, format::EXP);
  EXPECT_EQ(res.report.trace[1].start, 2u);
  EXPECT_EQ(res.report.trace[1].duration, 64u);
  std::string json = traceJson(res.report);
  EXPECT_NE(json.find("\"traceEvents\""), std::string::npos);
  EXPECT_NE(json.find("\"ph\":\"X\""), std::string::npos);
}

using wsc::runtime::detail::LogCursor;
using wsc::runtime::detail::MessageLog;

/// Appends message k (13 words from k on, sent at cycle k) to `log`.
void appendMessage(MessageLog &log, uint32_t k) {
  std::vector<uint32_t> words(13);
  std::iota(words.begin(), words.end(), k);
  log.append(words.data(), uint32_t(words.size()), k);
}

/// Reads message k at `cur` and passes it.
void readMessage(LogCursor &cur, uint32_t k) {
  const uint32_t *h = cur.message(true);
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h[0], 13u);
  EXPECT_EQ(h[1], k);
  EXPECT_EQ(h[MessageLog::kHeader + 12], k + 12);
  cur.pass(h, 0);
}

TEST(MessageLog, AReaderThatKeepsUpReusesTwoSegments) {
  MessageLog::Bytes bytes;
  {
    MessageLog log(1, bytes);
    appendMessage(log, 0);
    LogCursor cur{log.start()};
    readMessage(cur, 0);
    // A relay: each message read as it comes. The first two segments (16
    // and 32 words) take turns; doubling would reach 64 Ki words.
    for (uint32_t k = 1; k < 10000; ++k) {
      appendMessage(log, k);
      readMessage(cur, k);
    }
    uint64_t two = 2 * sizeof(MessageLog::Segment) + (16 + 32) * 4;
    EXPECT_EQ(bytes.peak.load(), two);
    // A reader far behind: the segments grow again, and every one the
    // reader leaves is freed or kept to serve again.
    for (uint32_t k = 10000; k < 15000; ++k)
      appendMessage(log, k);
    EXPECT_GT(bytes.live.load(), 5000u * 16 * 4);
    for (uint32_t k = 10000; k < 15000; ++k)
      readMessage(cur, k);
    EXPECT_LT(bytes.live.load(), 3u * (sizeof(MessageLog::Segment) + 65536 * 4));
    // Closed: the reader leaves the last segment, and nothing is kept.
    log.close();
    EXPECT_EQ(cur.message(true), nullptr);
    MessageLog::leave(cur.seg);
    EXPECT_EQ(bytes.live.load(), 0u);
    // A log that ends open frees the segment it kept.
    MessageLog open(1, bytes);
    appendMessage(open, 0);
    LogCursor at{open.start()};
    for (uint32_t k = 1; k < 3; ++k)
      appendMessage(open, k);
    for (uint32_t k = 0; k < 3; ++k)
      readMessage(at, k);
    EXPECT_EQ(bytes.live.load(), two);
    MessageLog::leave(at.seg);
  }
  EXPECT_EQ(bytes.live.load(), 0u);
}

/// Appends `sizes.size()` messages as one block (message k: sizes[k] words
/// from k * 1000, sent at cycle k), and reads them back in order.
void appendAndReadBlock(const std::vector<uint32_t> &sizes) {
  using wsc::runtime::detail::OutMsg;
  MessageLog::Bytes bytes;
  MessageLog log(1, bytes);
  std::vector<uint32_t> words;
  std::vector<OutMsg> msgs;
  uint64_t block = 0;
  for (uint32_t k = 0; k < sizes.size(); ++k) {
    msgs.push_back(OutMsg{0, sizes[k], k, words.size()});
    for (uint32_t i = 0; i < sizes[k]; ++i)
      words.push_back(k * 1000 + i);
    block += MessageLog::kHeader + sizes[k];
  }
  std::vector<const OutMsg *> order;
  for (const OutMsg &m : msgs)
    order.push_back(&m);
  log.appendBlock(words.data(), order.data(), order.size(), block);
  EXPECT_EQ(log.wordsPublished(), words.size());
  LogCursor cur{log.start()};
  for (uint32_t k = 0; k < sizes.size(); ++k) {
    const uint32_t *h = cur.message(true);
    ASSERT_NE(h, nullptr);
    EXPECT_EQ(h[0], sizes[k]);
    EXPECT_EQ(h[1], k);
    EXPECT_EQ(h[MessageLog::kHeader], k * 1000);
    EXPECT_EQ(h[MessageLog::kHeader + sizes[k] - 1], k * 1000 + sizes[k] - 1);
    cur.pass(h, 0);
  }
  EXPECT_EQ(cur.message(true), nullptr);
  log.close();
  MessageLog::leave(cur.seg);
}

TEST(MessageLog, AppendsAVisitsBlockInOrderWhetherASegmentHoldsItOrNot) {
  appendAndReadBlock({5, 1, 12});
  // 90,000 words: more than a segment's 64 Ki, so message by message.
  appendAndReadBlock({30000, 30000, 30000});
}

} // namespace
