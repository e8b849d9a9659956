// Single-PE semantics and costs: arithmetic, loops, coordinate-affine operands,
// GATHER, EXT_LOAD.
#include "TestPrograms.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace wsc::runtime;
using namespace wsc::runtime::test;
namespace format = wsc::format;

namespace {

TEST(Core, ArithmeticOnOnePe) {
  format::Program p = makeProgram(1, 1);
  format::Region *r = addRegion(p, "alu", 0, 0, 1, 1);
  *r->add_code() = ins(format::ADD, {32, 0, 16}, 4);    // 1 cycle
  *r->add_code() = ins(format::MUL, {48, 32, 0}, 4);    // 1
  format::Instr addi = ins(format::ADD_I, {64, 48}, 4);  // 1
  addi.set_imm(1.5f);
  *r->add_code() = addi;
  *r->add_code() = ins(format::REDUCE_SUM, {80, 64}, 4); // 1
  *r->add_code() = ins(format::EXP, {96, 0}, 4);         // 4 * 8
  *r->add_code() = ins(format::GELU, {112, 0}, 4);       // 4 * 8
  *r->add_code() = ins(format::DIV_S, {128, 0, 16}, 4);  // 4 * 8
  *r->add_code() = ins(format::REDUCE_MAX, {84, 0}, 4);  // 1
  *r->add_code() = ins(format::RSQRT, {144, 16}, 4);     // 4 * 8
  addTensor(p, false, "x", format::F32, {4})->add_pieces()->set_count(4);
  addPiece(addTensor(p, false, "y", format::F32, {4}), 0, 0, 16, 0, 4);
  const char *outs[] = {"sum", "prod", "plus", "red", "exp", "gelu", "divs", "max", "rsqrt"};
  uint32_t offsets[] = {32, 48, 64, 80, 96, 112, 128, 84, 144};
  for (int i = 0; i < 9; ++i) {
    bool scalar = offsets[i] == 80 || offsets[i] == 84;
    addPiece(addTensor(p, true, outs[i], format::F32, {scalar ? 1 : 4}), 0, 0, offsets[i], 0,
             scalar ? 1 : 4);
  }
  std::vector<float> x = {1, -2, 0.5f, 3}, y = {2, 4, 8, -1};
  RunResult res =
      runProgram(p, {{"x", HostArray::floats({4}, x)}, {"y", HostArray::floats({4}, y)}});
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  float red = 0;
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(res.out("sum")[i], x[i] + y[i]);
    EXPECT_EQ(res.out("prod")[i], (x[i] + y[i]) * x[i]);
    EXPECT_EQ(res.out("plus")[i], (x[i] + y[i]) * x[i] + 1.5f);
    red += res.out("plus")[i];
    EXPECT_EQ(res.out("exp")[i], std::exp(x[i]));
    EXPECT_NEAR(res.out("gelu")[i], 0.5 * x[i] * (1 + std::erf(x[i] / std::sqrt(2.0))), 1e-6);
    EXPECT_EQ(res.out("divs")[i], x[i] / y[0]);
    if (i < 3) {
      EXPECT_EQ(res.out("rsqrt")[i], 1.0f / std::sqrt(y[i]));
    }
  }
  EXPECT_EQ(res.out("red")[0], red);
  EXPECT_EQ(res.out("max")[0], 3.0f);
  EXPECT_TRUE(std::isnan(res.out("rsqrt")[3]));
  EXPECT_EQ(res.report.cycles, 5u + 4 * 32);
  ASSERT_EQ(res.report.kernels.size(), 1u);
  EXPECT_DOUBLE_EQ(res.report.kernels[0].busyPct, 100.0);
  EXPECT_DOUBLE_EQ(res.report.tokensPerS, 1e9 / double(5 + 4 * 32));
}

TEST(Core, MatvecVecmatAndAccumulate) {
  format::Program p = makeProgram(1, 1);
  format::Region *r = addRegion(p, "mm", 0, 0, 1, 1);
  // W is 2x3 at 0, x3 at 64, x2 at 80.
  initFloats(r, 0, 0, 0, {1, 2, 3, 4, 5, 6});
  initFloats(r, 0, 0, 64, {1, 10, 100});
  initFloats(r, 0, 0, 80, {1, -1});
  initFloats(r, 0, 0, 96, {1000, 2000});
  *r->add_code() = ins(format::MATVEC, {96, 0, 64}, 2, 3); // overwrite
  format::Instr acc = ins(format::MATVEC, {96, 0, 64}, 2, 3);
  acc.set_count(1); // accumulate
  *r->add_code() = acc;
  *r->add_code() = ins(format::VECMAT, {112, 0, 80}, 2, 3);
  addPiece(addTensor(p, true, "mv", format::F32, {2}), 0, 0, 96, 0, 2);
  addPiece(addTensor(p, true, "vm", format::F32, {3}), 0, 0, 112, 0, 3);
  RunResult res = runProgram(p);
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  EXPECT_EQ(res.out("mv"), (std::vector<float>{2 * 321, 2 * 654}));
  EXPECT_EQ(res.out("vm"), (std::vector<float>{-3, -3, -3}));
  EXPECT_EQ(res.report.cycles, 2u * 3 /* ceil(6/4) each */);
}

TEST(Core, VecmatSumsEachColumnInRowOrder) {
  // 7 rows (a pass of four and three more) of 37 columns, with values whose
  // fp32 sums depend on their order.
  constexpr uint32_t kRows = 7, kCols = 37;
  std::vector<float> w(kRows * kCols), x(kRows);
  for (uint32_t i = 0; i < w.size(); ++i)
    w[i] = float(std::ldexp(1.0 + i % 11, int(i % 29) - 14)) * (i % 3 ? 1.0f : -1.0f);
  for (uint32_t r = 0; r < kRows; ++r)
    x[r] = 1.0f / float(r + 3);
  format::Program p = makeProgram(1, 1);
  format::Region *reg = addRegion(p, "vm", 0, 0, 1, 1);
  const uint32_t xAt = kRows * kCols * 4, dst = xAt + kRows * 4;
  initFloats(reg, 0, 0, 0, w);
  initFloats(reg, 0, 0, xAt, x);
  *reg->add_code() = ins(format::VECMAT, {dst, 0, xAt}, kRows, kCols);
  addPiece(addTensor(p, true, "y", format::F32, {kCols}), 0, 0, dst, 0, kCols);
  RunResult res = runProgram(p);
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  std::vector<float> want(kCols, 0.0f);
  for (uint32_t c = 0; c < kCols; ++c)
    for (uint32_t r = 0; r < kRows; ++r)
      want[c] += x[r] * w[r * kCols + c];
  EXPECT_EQ(res.out("y"), want);
}

/// Writes 16-bit values two per word (the even element low) at `offset` of
/// local PE (px, 0).
void initHalves(format::Region *r, uint32_t offset, const std::vector<uint16_t> &halves,
                uint32_t px = 0) {
  std::string data((halves.size() + 1) / 2 * 4, '\0');
  for (size_t i = 0; i < halves.size(); ++i) {
    data[2 * i] = char(halves[i] & 0xff);
    data[2 * i + 1] = char(halves[i] >> 8);
  }
  format::SramInit *s = r->add_init();
  s->set_px(px);
  s->set_offset(offset);
  s->set_data(data);
}

TEST(Core, RecvVecmatMultipliesWordsAsTheyArrive) {
  // PE 0 sends x = (1, -1) east, x1 only after 10 cycles of other work; PE 1
  // multiplies them into the rows of its 2x3 W as they come, then adds a
  // second product with the same words again.
  format::Program p = makeProgram(2, 1);
  format::Region *r = addRegion(p, "mm", 0, 0, 2, 1);
  initFloats(r, 0, 0, 0, {1, -1});
  initFloats(r, 1, 0, 0, {1, 2, 3, 4, 5, 6});
  *r->add_code() = only(send(1, 0, 1), 0, 0, 0, 0);
  *r->add_code() = only(ins(format::FILL, {64}, 40), 0, 0, 0, 0); // 10 cycles
  *r->add_code() = only(send(1, 4, 1), 0, 0, 0, 0);
  *r->add_code() = only(send(1, 0, 2), 0, 0, 0, 0);
  *r->add_code() = only(ins(format::RECV_VECMAT, {112, 0}, 2, 3), 1, 1, 0, 0);
  format::Instr acc = ins(format::RECV_VECMAT, {112, 0}, 2, 3);
  acc.set_count(1);
  acc.set_color(1);
  *r->add_code() = only(acc, 1, 1, 0, 0);
  r->mutable_code(4)->set_color(1);
  routeEast(p, 0, 0, 1, 1);
  addPiece(addTensor(p, true, "vm", format::F32, {3}), 1, 0, 112, 0, 3);
  RunResult res = runProgram(p);
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  EXPECT_EQ(res.out("vm"), (std::vector<float>{-6, -6, -6}));
  // A word sent at t reaches the next core at t + 2. x0 (sent at 0) is
  // there at 2: its row is done at 2 + ceil(3/4) = 3. x1 (sent at 11) at 13:
  // done at 14 (2 cycles of multiply-adds, 12 of waiting). The second
  // product's words (sent at 12) arrive at 14 and 15: done at 15 and 16.
  EXPECT_EQ(res.report.cycles, 16u);
}

TEST(Core, AsyncRelayRunsBesideTheCore) {
  // PE 0 sends (1, 2, 3, 4) on its async engine and fills 40 words (10
  // cycles). PE 1 adds them to (10, 20, 30, 40) and relays the sums east on
  // its engine while its core fills 8 words (2 cycles) and then adds 1 to
  // the relay's words, which waits for the relay. PE 2 receives the sums.
  format::Program p = makeProgram(3, 1);
  format::Region *r = addRegion(p, "chain", 0, 0, 3, 1);
  initFloats(r, 0, 0, 0, {1, 2, 3, 4});
  initFloats(r, 1, 0, 0, {10, 20, 30, 40});
  format::Instr s = send(1, 0, 4);
  s.set_async(true);
  *r->add_code() = only(s, 0, 0, 0, 0);
  *r->add_code() = only(ins(format::FILL, {64}, 40), 0, 0, 0, 0);
  format::Instr relay = recv(1, 0, 4, format::RECV_ADD);
  relay.set_forward(2);
  relay.set_async(true);
  *r->add_code() = only(relay, 1, 1, 0, 0);
  *r->add_code() = only(ins(format::FILL, {64}, 8), 1, 1, 0, 0);
  format::Instr inc = ins(format::ADD_I, {0, 0}, 4);
  inc.set_imm(1);
  *r->add_code() = only(inc, 1, 1, 0, 0);
  *r->add_code() = only(recv(2, 0, 4), 2, 2, 0, 0);
  routeEast(p, 0, 0, 1, 1);
  routeEast(p, 0, 1, 2, 2);
  addPiece(addTensor(p, true, "mid", format::F32, {4}), 1, 0, 0, 0, 4);
  addPiece(addTensor(p, true, "sums", format::F32, {4}), 2, 0, 0, 0, 4);
  RunResult res = runProgram(p, {}, 1, /*trace=*/true);
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  EXPECT_EQ(res.out("sums"), (std::vector<float>{11, 22, 33, 44}));
  EXPECT_EQ(res.out("mid"), (std::vector<float>{12, 23, 34, 45}));
  // PE 0's words leave at 1..4 and reach PE 1 at 2..5: its relay ends at
  // 5 + 1 = 6 and its words leave from 2 + 1 on, reaching PE 2 at 4..7,
  // whose RECV ends at 8. PE 1's core: FILL 0..2, ADD_I waits to 6, ends
  // at 7. PE 0 ends at 10. (In turn, the relay would end at 6, the FILL at
  // 8, the ADD_I at 9.)
  EXPECT_EQ(res.report.cycles, 10u);
  // Busy time is the cores': 10 + (2 + 1) + 4.
  ASSERT_EQ(res.report.kernels.size(), 1u);
  EXPECT_EQ(res.report.kernels[0].busyCycles, 17u);
  // The first PE's async SEND is traced beside its FILL, on its own track.
  ASSERT_EQ(res.report.trace.size(), 2u);
  EXPECT_TRUE(res.report.trace[0].async);
  EXPECT_EQ(res.report.trace[0].start, 0u);
  EXPECT_EQ(res.report.trace[0].duration, 4u);
  EXPECT_FALSE(res.report.trace[1].async);
  EXPECT_EQ(res.report.trace[1].start, 0u);
}

TEST(Core, AsyncOpsQueueOnTheEngine) {
  // PE 0 sends A, B and C (4 words each) async, fills 40 words (10 cycles)
  // and sends D (1 word) in turn, all on color 1. B waits for the engine
  // (4..8); C for a free slot (two ops in flight: the core waits to 4, when
  // A ends) and for the engine (8..12); the FILL runs 4..14; D, which
  // waits for the ops on its color (to 12), starts at 14.
  format::Program p = makeProgram(2, 1);
  format::Region *r = addRegion(p, "queue", 0, 0, 2, 1);
  initFloats(r, 0, 0, 0, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13});
  for (int64_t k = 0; k < 3; ++k) {
    format::Instr s = send(1, 16 * k, 4);
    s.set_async(true);
    *r->add_code() = only(s, 0, 0, 0, 0);
  }
  *r->add_code() = only(ins(format::FILL, {256}, 40), 0, 0, 0, 0);
  *r->add_code() = only(send(1, 48, 1), 0, 0, 0, 0);
  *r->add_code() = only(recv(1, 0, 13), 1, 1, 0, 0);
  routeEast(p, 0, 0, 1, 1);
  addPiece(addTensor(p, true, "got", format::F32, {13}), 1, 0, 0, 0, 13);
  RunResult res = runProgram(p);
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  EXPECT_EQ(res.out("got"),
            (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}));
  // D's word arrives at 14 + 1 + 1 = 16: the RECV ends at 17 (15 if the
  // core had not waited for a slot).
  EXPECT_EQ(res.report.cycles, 17u);
}

TEST(Core, DropWithForwardPassesWordsThrough) {
  // A row gather: PE 0 sends (1, 2); PE 1 passes them on without storing
  // them (its SRAM at 0 keeps 7, 7) and then sends its own (3); PE 2
  // receives all three. PE 1's relay runs on its async engine while its
  // core fills 40 words (10 cycles).
  format::Program p = makeProgram(3, 1);
  format::Region *r = addRegion(p, "row", 0, 0, 3, 1);
  initFloats(r, 0, 0, 0, {1, 2});
  initFloats(r, 1, 0, 0, {7, 7, 3});
  *r->add_code() = only(send(1, 0, 2), 0, 0, 0, 0);
  format::Instr pass = recv(1, 0, 2, format::RECV_DROP);
  pass.set_forward(2);
  pass.set_async(true);
  *r->add_code() = only(pass, 1, 1, 0, 0);
  *r->add_code() = only(ins(format::FILL, {64}, 40), 1, 1, 0, 0);
  *r->add_code() = only(send(2, 8, 1), 1, 1, 0, 0);
  *r->add_code() = only(recv(2, 0, 3), 2, 2, 0, 0);
  routeEast(p, 0, 0, 1, 1);
  routeEast(p, 0, 1, 2, 2);
  addPiece(addTensor(p, true, "kept", format::F32, {2}), 1, 0, 0, 0, 2);
  addPiece(addTensor(p, true, "got", format::F32, {3}), 2, 0, 0, 0, 3);
  RunResult res = runProgram(p);
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  EXPECT_EQ(res.out("got"), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(res.out("kept"), (std::vector<float>{7, 7})) << "nothing stored";
  // PE 0's words reach PE 1 at 2 and 3: the relay ends at 4 and its words
  // leave from 2 + 1 on. PE 1's core: FILL 0..10, SEND (color 2, the
  // relay's forward color: done at 4) 10..11, its word arriving at 12. PE 2
  // gets the relayed words at 4 and 5, its own at 12: 13.
  EXPECT_EQ(res.report.cycles, 13u);
}

TEST(Core, AsyncIsRefusedOnOtherOps) {
  format::Program p = makeProgram(1, 1);
  format::Region *r = addRegion(p, "alu", 0, 0, 1, 1);
  format::Instr add = ins(format::ADD, {0, 0, 0}, 1);
  add.set_async(true);
  *r->add_code() = add;
  RunResult res = runProgram(p);
  ASSERT_FALSE(res.status.ok());
  EXPECT_NE(res.status.message().find("only SEND, RECV, RECV_ADD and RECV_DROP run async"),
            std::string::npos)
      << res.status.message();
}

TEST(Core, NestedLoopsWithAffineAddresses) {
  format::Program p = makeProgram(1, 1);
  format::Region *r = addRegion(p, "t", 0, 0, 1, 1);
  // Transposes a 4x2 matrix at 0 into a 2x4 matrix at 64.
  *r->add_code() = loop(2); // i1
  *r->add_code() = loop(4); // i0
  format::Instr c = ins(format::COPY, {64, 0}, 1);
  c.mutable_addr(0)->add_stride(4); // + 4 * i0
  c.mutable_addr(0)->add_stride(16); // + 16 * i1
  c.mutable_addr(1)->add_stride(8);
  c.mutable_addr(1)->add_stride(4);
  *r->add_code() = c;
  *r->add_code() = end();
  // A predicated-off loop skips its body; an empty loop runs nothing.
  *r->add_code() = only(loop(3), 5, 5, 0, 0);
  *r->add_code() = ins(format::FILL, {64}, 8);
  *r->add_code() = end();
  *r->add_code() = loop(0);
  *r->add_code() = ins(format::FILL, {64}, 8);
  *r->add_code() = end();
  *r->add_code() = end();
  // n can depend on loop indices too: n = i0 adds 1 to 0, 1, then 2 words.
  *r->add_code() = loop(3);
  format::Instr f = ins(format::ADD_I, {128, 128}, 0);
  f.mutable_n()->add_stride(1);
  f.set_imm(1);
  *r->add_code() = f;
  *r->add_code() = end();
  addTensor(p, false, "x", format::F32, {4, 2})->add_pieces()->set_count(8);
  addPiece(addTensor(p, true, "xt", format::F32, {2, 4}), 0, 0, 64, 0, 8);
  addPiece(addTensor(p, true, "cnt", format::F32, {3}), 0, 0, 128, 0, 3);
  std::vector<float> x = {0, 1, 2, 3, 4, 5, 6, 7};
  RunResult res = runProgram(p, {{"x", HostArray::floats({4, 2}, x)}});
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  EXPECT_EQ(res.out("xt"), (std::vector<float>{0, 2, 4, 6, 1, 3, 5, 7}));
  EXPECT_EQ(res.out("cnt"), (std::vector<float>{2, 1, 0}));
}

TEST(Core, GatherSplitOverPes) {
  format::Program p = makeProgram(2, 1);
  format::Region *r = addRegion(p, "embed", 0, 0, 2, 1);
  // Rows 0..2 on PE 0 and rows 3..5 on PE 1, 2 columns each; row k = {k, 10k}.
  initFloats(r, 0, 0, 0, {0, 0, 1, 10, 2, 20});
  initFloats(r, 1, 0, 0, {3, 30, 4, 40, 5, 50});
  // One SPMD instruction: PE px holds rows from row_lo = 3 * px on.
  format::Instr g = ins(format::GATHER, {64, 0, 32}, 3, 2);
  *g.mutable_k() = aff(0, {}, 3);
  *r->add_code() = g;
  format::HostTensor *ids = addTensor(p, false, "ids", format::I64, {1});
  addPiece(ids, 0, 0, 32, 0, 1);
  addPiece(ids, 1, 0, 32, 0, 1);
  format::HostTensor *out = addTensor(p, true, "rows", format::F32, {2, 2});
  addPiece(out, 0, 0, 64, 0, 2);
  addPiece(out, 1, 0, 64, 2, 2);
  for (int64_t id : {1, 4, 9}) {
    RunResult res = runProgram(p, {{"ids", HostArray::integers(DType::I64, {1}, {id})}});
    ASSERT_TRUE(res.status.ok()) << res.status.message();
    std::vector<float> want(4, 0.0f);
    if (id < 6) {
      want[id < 3 ? 0 : 2] = float(id);
      want[id < 3 ? 1 : 3] = float(10 * id);
    }
    EXPECT_EQ(res.out("rows"), want) << "id " << id;
  }
}

TEST(Core, GatherRowLoFollowsLoopsAndIgnoresImm) {
  format::Program p = makeProgram(1, 2);
  format::Region *r = addRegion(p, "embed", 0, 0, 1, 2);
  // Each PE holds the same 2-row table {k, 10k}; row_lo = 2 * i0 + 4 * py + 1, so
  // iteration i0 of PE py looks the index up in rows row_lo, row_lo + 1.
  for (uint32_t py = 0; py < 2; ++py)
    initFloats(r, 0, py, 0, {1, 10, 2, 20});
  *r->add_code() = loop(3);
  format::Instr g = ins(format::GATHER, {64, 0, 32}, 2, 2);
  *g.mutable_addr(0) = aff(64, {8});
  *g.mutable_k() = aff(1, {2}, 0, 4);
  g.set_imm(100.0f); // not GATHER's: row_lo comes from k alone
  *r->add_code() = g;
  *r->add_code() = end();
  format::HostTensor *ids = addTensor(p, false, "ids", format::I32, {1});
  addPiece(ids, 0, 0, 32, 0, 1);
  addPiece(ids, 0, 1, 32, 0, 1);
  format::HostTensor *out = addTensor(p, true, "rows", format::F32, {2, 6});
  addPiece(out, 0, 0, 64, 0, 6);
  addPiece(out, 0, 1, 64, 6, 6);
  // idx 6: PE 0 has row_lo 1, 3, 5 -> iteration 2, row 1;
  // PE 1 has row_lo 5, 7, 9 -> iteration 0, row 1.
  RunResult res = runProgram(p, {{"ids", HostArray::integers(DType::I32, {1}, {6})}});
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  EXPECT_EQ(res.out("rows"), (std::vector<float>{0, 0, 0, 0, 2, 20, 2, 20, 0, 0, 0, 0}));
}

TEST(Core, AddressesAndCountsFollowThePeCoordinate) {
  format::Program p = makeProgram(3, 2);
  format::Region *r = addRegion(p, "spmd", 0, 0, 3, 2);
  // Every PE holds the same 2x3 table at 0; PE (px, py) copies element (py, px)
  // to 64, then fills n = px + 3 * py + 1 ones at 128 and counts them into 192.
  *r->add_code() = [] {
    format::Instr c = ins(format::COPY, {64, 0}, 1);
    *c.mutable_addr(1) = aff(0, {}, 4, 12);
    return c;
  }();
  format::Instr f = ins(format::FILL, {128}, 0);
  *f.mutable_n() = aff(1, {}, 1, 3);
  f.set_imm(1);
  *r->add_code() = f;
  *r->add_code() = ins(format::REDUCE_SUM, {192, 128}, 6);
  // A loop index and the coordinate together: i0 * 4 + px * 16 + 256.
  *r->add_code() = loop(2);
  format::Instr w = ins(format::ADD_I, {256, 64}, 1);
  *w.mutable_addr(0) = aff(256, {4}, 16);
  w.set_imm(0.5f);
  *r->add_code() = w;
  *r->add_code() = end();
  format::HostTensor *tab = addTensor(p, false, "tab", format::F32, {2, 3});
  format::HostTensor *el = addTensor(p, true, "el", format::F32, {2, 3});
  format::HostTensor *cnt = addTensor(p, true, "cnt", format::F32, {2, 3});
  format::HostTensor *two = addTensor(p, true, "two", format::F32, {2, 3, 2});
  for (uint32_t py = 0; py < 2; ++py)
    for (uint32_t px = 0; px < 3; ++px) {
      addPiece(tab, px, py, 0, 0, 6);
      addPiece(el, px, py, 64, py * 3 + px, 1);
      addPiece(cnt, px, py, 192, py * 3 + px, 1);
      addPiece(two, px, py, 256 + 16 * px, 2 * (py * 3 + px), 2);
    }
  std::vector<float> t = {1, 2, 3, 4, 5, 6};
  RunResult res = runProgram(p, {{"tab", HostArray::floats({2, 3}, t)}});
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  EXPECT_EQ(res.out("el"), t);
  EXPECT_EQ(res.out("cnt"), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(res.out("two"), (std::vector<float>{1.5f, 1.5f, 2.5f, 2.5f, 3.5f, 3.5f, 4.5f, 4.5f,
                                                5.5f, 5.5f, 6.5f, 6.5f}));
  // FILL costs ceil(n / 4): PE (2, 1) fills 6 words in 2 cycles; 1 + 2 + 2 + 1 + 1.
  EXPECT_EQ(res.report.cycles, 7u);

  // A coordinate term that turns a count negative on some PE is a fault there.
  *p.mutable_wafers(0)->mutable_regions(0)->mutable_code(1)->mutable_n() = aff(1, {}, -1);
  res = runProgram(p, {{"tab", HostArray::floats({2, 3}, t)}});
  ASSERT_FALSE(res.status.ok());
  EXPECT_NE(res.status.message().find("bad count: wafer 0 PE (2,0) (kernel 'spmd')"),
            std::string::npos)
      << res.status.message();
  EXPECT_NE(res.status.message().find("n = -1 is negative"), std::string::npos)
      << res.status.message();
}

TEST(Core, ExtLoadReadsExternalMemory) {
  format::Program p = makeProgram(1, 1);
  format::ExternalBlob *b = p.add_external();
  b->set_id(7);
  std::vector<float> blob = {0, 1, 2, 3, 4, 5, 6, 7};
  b->set_data(std::string(reinterpret_cast<const char *>(blob.data()), blob.size() * 4));
  format::Region *r = addRegion(p, "stream", 0, 0, 1, 1);
  format::Instr e = ins(format::EXT_LOAD, {0, 16}, 4);
  e.set_blob(7);
  *r->add_code() = e;
  addPiece(addTensor(p, true, "w", format::F32, {4}), 0, 0, 0, 0, 4);
  RunResult res = runProgram(p);
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  EXPECT_EQ(res.out("w"), (std::vector<float>{4, 5, 6, 7}));
  EXPECT_EQ(res.report.cycles, 1u); // 16 bytes at 16 B/cycle

  p.mutable_wafers(0)->mutable_regions(0)->mutable_code(0)->mutable_addr(1)->set_base(20);
  res = runProgram(p);
  ASSERT_FALSE(res.status.ok());
  EXPECT_NE(res.status.message().find("external memory overflow"), std::string::npos)
      << res.status.message();
}

TEST(Core, IntegerInputsBecomeInt32Words) {
  format::Program p = makeProgram(1, 1);
  addRegion(p, "id", 0, 0, 1, 1);
  addPiece(addTensor(p, false, "i", format::I32, {3}), 0, 0, 0, 0, 3);
  addPiece(addTensor(p, true, "o", format::I64, {3}), 0, 0, 0, 0, 3);
  RunResult res = runProgram(p, {{"i", HostArray::integers(DType::I32, {3}, {-5, 0, 123456})}});
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  EXPECT_EQ(res.outputs.at("o").ints, (std::vector<int64_t>{-5, 0, 123456}));
  EXPECT_EQ(res.outputs.at("o").dtype, DType::I64);
}

TEST(Core, BoolInputsAndOutputsAreInt32ZeroOrOne) {
  // c -> NOT c, and c's words read back as a bool output through a word of 7.
  format::Program p = makeProgram(1, 1);
  format::Region *r = addRegion(p, "not", 0, 0, 1, 1);
  *r->add_code() = ins(format::NOT, {16, 0}, 4);
  initFloats(r, 0, 0, 32, {0});
  r->mutable_init(0)->set_data(std::string("\7\0\0\0", 4));
  addPiece(addTensor(p, false, "c", format::BOOL, {2, 2}), 0, 0, 0, 0, 4);
  addPiece(addTensor(p, true, "n", format::BOOL, {2, 2}), 0, 0, 16, 0, 4);
  addPiece(addTensor(p, true, "w", format::I32, {4}), 0, 0, 0, 0, 4);
  addPiece(addTensor(p, true, "seven", format::BOOL, {1}), 0, 0, 32, 0, 1);
  RunResult res = runProgram(p, {{"c", HostArray::integers(DType::Bool, {2, 2}, {1, 0, 0, 1})}});
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  EXPECT_EQ(res.outputs.at("n").dtype, DType::Bool);
  EXPECT_EQ(res.outputs.at("n").shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(res.outputs.at("n").ints, (std::vector<int64_t>{0, 1, 1, 0}));
  // The input's SRAM words are int32 0 and 1.
  EXPECT_EQ(res.outputs.at("w").ints, (std::vector<int64_t>{1, 0, 0, 1}));
  // Any nonzero word reads back as true.
  EXPECT_EQ(res.outputs.at("seven").ints, (std::vector<int64_t>{1}));
}

} // namespace

TEST(Core, GuardsCompareLoopIndicesWithTheCoordinate) {
  // Three PEs in a row; in iteration i of a loop of 3, only PEs with px > i
  // add 1 (guard px - i - 1 >= 0), so PE px ends with px.
  format::Program p = makeProgram(3, 1);
  format::Region *r = addRegion(p, "g", 0, 0, 3, 1);
  *r->add_code() = loop(3);
  format::Instr add = ins(format::ADD_I, {0, 0}, 1);
  add.set_imm(1);
  *add.add_guard() = aff(-1, {-1}, 1);
  *r->add_code() = add;
  *r->add_code() = end();
  auto *t = addTensor(p, true, "y", format::F32, {3});
  for (uint32_t x = 0; x < 3; ++x)
    addPiece(t, x, 0, 0, x, 1);
  RunResult res = runProgram(p);
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  EXPECT_EQ(res.out("y"), (std::vector<float>{0, 1, 2}));
}

TEST(Core, GuardsHeldShortAndLongAgree) {
  // Each guard set G adds 1 to word 2g where G holds and, with a fourth
  // guard that always holds (so G is held in its long form), to word 2g + 1.
  // Over a 3 x 2 kernel and a nest of 3 x 4 trips, both words must count the
  // trips where every guard of G is >= 0, here computed from its definition.
  struct Guard {
    int64_t base;
    std::vector<int64_t> stride; // innermost loop first
    int64_t px, py;
  };
  std::vector<std::vector<Guard>> sets = {
      {{-1, {1}, 0, 0}},                                // inner trip >= 1
      {{2, {-1}, 1, -2}, {0, {1}, -1, 1}},              // a band in trip, px and py
      {{-1, {1, 1}, 0, 0}},                             // two strides: long
      {{int64_t(1) << 40, {-1}, 0, 0}},                 // past 32 bits: long
      {{-(int64_t(1) << 40), {}, 0, 0}},                // never
      {{0, {1}, 0, 0}, {3, {-1}, 0, 0}, {1, {}, 1, 0}}, // three guards
  };
  auto holds = [](const std::vector<Guard> &set, int64_t inner, int64_t outer, int64_t px,
                  int64_t py) {
    for (const Guard &g : set) {
      int64_t v = g.base + g.px * px + g.py * py;
      v += g.stride.size() > 0 ? g.stride[0] * inner : 0;
      v += g.stride.size() > 1 ? g.stride[1] * outer : 0;
      if (v < 0)
        return false;
    }
    return true;
  };
  format::Program p = makeProgram(3, 2);
  format::Region *r = addRegion(p, "g", 0, 0, 3, 2);
  *r->add_code() = loop(3);
  *r->add_code() = loop(4);
  for (size_t g = 0; g < sets.size(); ++g)
    for (int form = 0; form < 2; ++form) {
      int64_t at = 4 * int64_t(2 * g + form);
      format::Instr add = ins(format::ADD_I, {at, at}, 1);
      add.set_imm(1);
      for (const Guard &gd : sets[g]) {
        format::Affine a = aff(gd.base, {}, gd.px, gd.py);
        for (int64_t st : gd.stride)
          a.add_stride(st);
        *add.add_guard() = a;
      }
      if (form == 1)
        *add.add_guard() = aff(0);
      *r->add_code() = add;
    }
  *r->add_code() = end();
  *r->add_code() = end();
  uint32_t words = uint32_t(2 * sets.size());
  auto *t = addTensor(p, true, "y", format::F32, {6, int64_t(words)});
  for (uint32_t y = 0; y < 2; ++y)
    for (uint32_t x = 0; x < 3; ++x)
      addPiece(t, x, y, 0, (y * 3 + x) * words, words);
  for (RunOptions::Engine engine : {RunOptions::Engine::Reference, RunOptions::Engine::Region}) {
    RunResult res = runProgram(p, {}, 1, false, -1, engine);
    ASSERT_TRUE(res.status.ok()) << res.status.message();
    std::vector<float> want;
    for (int64_t py = 0; py < 2; ++py)
      for (int64_t px = 0; px < 3; ++px)
        for (const std::vector<Guard> &set : sets) {
          float n = 0;
          for (int64_t outer = 0; outer < 3; ++outer)
            for (int64_t inner = 0; inner < 4; ++inner)
              n += holds(set, inner, outer, px, py) ? 1 : 0;
          want.push_back(n), want.push_back(n);
        }
    EXPECT_EQ(res.out("y"), want);
  }
}

TEST(Core, RecvDropDiscardsWordsInOrder) {
  // PE 0 sends 0..5 east; PE 1 drops 2 words, keeps 2, drops 2.
  format::Program p = makeProgram(2, 1);
  format::Region *r = addRegion(p, "d", 0, 0, 2, 1);
  initFloats(r, 0, 0, 0, {0, 1, 2, 3, 4, 5});
  *r->add_code() = only(send(1, 0, 6), 0, 0, 0, 0);
  *r->add_code() = only(recv(1, 0, 2, format::RECV_DROP), 1, 1, 0, 0);
  *r->add_code() = only(recv(1, 64, 2), 1, 1, 0, 0);
  *r->add_code() = only(recv(1, 0, 2, format::RECV_DROP), 1, 1, 0, 0);
  routeEast(p, 0, 0, 1, 1);
  addPiece(addTensor(p, true, "kept", format::F32, {2}), 1, 0, 64, 0, 2);
  RunResult res = runProgram(p);
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  EXPECT_EQ(res.out("kept"), (std::vector<float>{2, 3}));
}

TEST(Core, RecvDropMayExceedTheKernelsSram) {
  // Dropping more words than a PE's SRAM holds is fine: none are stored.
  format::Program p = makeProgram(2, 1);
  format::Region *r = addRegion(p, "d", 0, 0, 2, 1);
  r->set_sram_bytes_per_pe(64);
  *r->add_code() = only(send(1, 0, 8), 0, 0, 0, 0);
  *r->add_code() = only(send(1, 0, 8), 0, 0, 0, 0);
  *r->add_code() = only(send(1, 0, 8), 0, 0, 0, 0);
  *r->add_code() = only(recv(1, 0, 24, format::RECV_DROP), 1, 1, 0, 0);
  routeEast(p, 0, 0, 1, 1);
  RunResult res = runProgram(p);
  ASSERT_TRUE(res.status.ok()) << res.status.message();
}

namespace {


TEST(Core, MatvecReadsPackedHalfAndBfloat16Matrices) {
  // W = [[1, 2, 3], [-0.5, 65504, 2^-24]] as IEEE half, then as bfloat16
  // [[1, 2, 3], [-0.5, 256, 2^-100]]; x = {1, 1, 4}.
  const std::vector<uint16_t> half = {0x3c00, 0x4000, 0x4200, 0xb800, 0x7bff, 0x0001};
  const std::vector<uint16_t> bf16 = {0x3f80, 0x4000, 0x4040, 0xbf00, 0x4380, 0x0d80};
  for (format::Storage storage : {format::STORE_F16, format::STORE_BF16}) {
    format::Program p = makeProgram(1, 1);
    format::Region *r = addRegion(p, "mm", 0, 0, 1, 1);
    initHalves(r, 0, storage == format::STORE_F16 ? half : bf16); // 3 words
    initFloats(r, 0, 0, 64, {1, 1, 4});
    format::Instr mv = ins(format::MATVEC, {96, 0, 64}, 2, 3);
    mv.set_storage(storage);
    *r->add_code() = mv;
    addPiece(addTensor(p, true, "mv", format::F32, {2}), 0, 0, 96, 0, 2);
    RunResult res = runProgram(p);
    ASSERT_TRUE(res.status.ok()) << res.status.message();
    float tiny = storage == format::STORE_F16 ? std::ldexp(1.0f, -24) : std::ldexp(1.0f, -100);
    float big = storage == format::STORE_F16 ? 65504.0f : 256.0f;
    EXPECT_EQ(res.out("mv"), (std::vector<float>{1 + 2 + 12, -0.5f + big + 4 * tiny}));
    EXPECT_EQ(res.report.cycles, 2u) << "same cost as fp32: ceil(6 / 4)";
  }
}

TEST(Core, RecvVecmatReadsAPackedMatrix) {
  // PE 0 sends x = (2, -1); PE 1 holds W = [[1, 2, 3], [-0.5, 65504, 2^-24]]
  // as IEEE half and multiplies x into it as it arrives.
  const std::vector<uint16_t> half = {0x3c00, 0x4000, 0x4200, 0xb800, 0x7bff, 0x0001};
  format::Program p = makeProgram(2, 1);
  format::Region *r = addRegion(p, "mm", 0, 0, 2, 1);
  initFloats(r, 0, 0, 0, {2, -1});
  initHalves(r, 0, half, 1);
  *r->add_code() = only(send(1, 0, 2), 0, 0, 0, 0);
  format::Instr mv = ins(format::RECV_VECMAT, {64, 0}, 2, 3);
  mv.set_color(1);
  mv.set_storage(format::STORE_F16);
  *r->add_code() = only(mv, 1, 1, 0, 0);
  routeEast(p, 0, 0, 1, 1);
  addPiece(addTensor(p, true, "vm", format::F32, {3}), 1, 0, 64, 0, 3);
  RunResult res = runProgram(p);
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  EXPECT_EQ(res.out("vm"),
            (std::vector<float>{2 + 0.5f, 4 - 65504.0f, 6 - std::ldexp(1.0f, -24)}));
}

TEST(Core, GatherWidensAPackedRow) {
  format::Program p = makeProgram(1, 1);
  format::Region *r = addRegion(p, "embed", 0, 0, 1, 1);
  // A 2 x 3 bfloat16 table: row 0 = {1, 2, 3}, row 1 = {-1, 0.5, 4}; row 1
  // starts in the middle of word 1.
  initHalves(r, 0, {0x3f80, 0x4000, 0x4040, 0xbf80, 0x3f00, 0x4080});
  format::Instr g = ins(format::GATHER, {64, 0, 32}, 2, 3);
  g.set_storage(format::STORE_BF16);
  *r->add_code() = g;
  addPiece(addTensor(p, false, "id", format::I64, {1}), 0, 0, 32, 0, 1);
  addPiece(addTensor(p, true, "row", format::F32, {3}), 0, 0, 64, 0, 3);
  RunResult res = runProgram(p, {{"id", HostArray::integers(DType::I64, {1}, {1})}});
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  EXPECT_EQ(res.out("row"), (std::vector<float>{-1, 0.5f, 4}));
}

TEST(Core, PackedStorageIsRefusedOnOtherOps) {
  format::Program p = makeProgram(1, 1);
  format::Region *r = addRegion(p, "alu", 0, 0, 1, 1);
  format::Instr add = ins(format::ADD, {0, 0, 0}, 1);
  add.set_storage(format::STORE_F16);
  *r->add_code() = add;
  RunResult res = runProgram(p);
  ASSERT_FALSE(res.status.ok());
  EXPECT_NE(res.status.message().find(
                "only MATVEC, VECMAT, RECV_VECMAT and GATHER read packed 16-bit storage"),
            std::string::npos)
      << res.status.message();
}

} // namespace
