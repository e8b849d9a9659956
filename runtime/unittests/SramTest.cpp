// The SRAM words each PE's code can reach (SramFootprint.cpp), runs whose
// PEs reach less than their kernel's limit, and SRAM images freed once copied.
#include "Model.h"
#include "TestPrograms.h"

#include <gtest/gtest.h>

namespace wsc::runtime {
namespace {

using namespace test;

std::vector<uint32_t> footprints(const format::Program &p) {
  Expected<detail::Model> m = detail::buildModel(p);
  EXPECT_TRUE(bool(m)) << m.status().message();
  return m ? m->sramWords : std::vector<uint32_t>{};
}

TEST(SramFootprint, APredicatedRowReachesFurtherThanTheOthers) {
  format::Program p = makeProgram(2, 2);
  format::Region *r = addRegion(p, "k", 0, 0, 2, 2);
  *r->add_code() = ins(format::FILL, {0}, 4);
  *r->add_code() = only(ins(format::FILL, {2000}, 8), 0, 1, 1, 1); // the last row's outputs
  // 4 words to a cache line of 16; 2000 + 32 bytes: 508 words, to 512.
  EXPECT_EQ(footprints(p), (std::vector<uint32_t>{16, 16, 512, 512}));
}

TEST(SramFootprint, LoopsAndCoordinatesReachTheirLargestAddress) {
  format::Program p = makeProgram(3, 1);
  format::Region *r = addRegion(p, "k", 0, 0, 3, 1);
  *r->add_code() = loop(10);
  format::Instr fill = ins(format::FILL, {0}, 10);
  *fill.mutable_addr(0) = aff(0, {40});
  *r->add_code() = fill;
  *r->add_code() = end();
  format::Instr copy = ins(format::COPY, {0, 0}, 1);
  *copy.mutable_addr(0) = aff(0, {}, 1000); // x * 1000 on local column x
  *r->add_code() = copy;
  // The loop: 9 * 40 + 40 bytes; the copy: 2000 + 4 on column 2. One cell.
  EXPECT_EQ(footprints(p), (std::vector<uint32_t>{512, 512, 512}));
  // A LOOP of no trips reaches nothing.
  r->mutable_code(0)->set_count(0);
  r->mutable_code()->RemoveLast();
  EXPECT_EQ(footprints(p), (std::vector<uint32_t>{0, 0, 0}));
}

TEST(SramFootprint, InitsPiecesAndSparseTilesReachTheirWords) {
  format::Program p = makeProgram(2, 1);
  format::Region *r = addRegion(p, "k", 0, 0, 2, 1);
  initFloats(r, 1, 0, 400, {1, 2, 3});
  format::HostTensor *t = addTensor(p, false, "x", format::F32, {2});
  addPiece(t, 0, 0, 800, 0, 2);
  EXPECT_EQ(footprints(p), (std::vector<uint32_t>{208, 112}));
  // A sparse tile's length is in its words: all of the limit (4096 bytes).
  format::Instr mv = ins(format::MATVEC, {0, 64, 32}, 4, 4);
  mv.set_storage(format::STORE_SPARSE);
  *r->add_code() = mv;
  EXPECT_EQ(footprints(p), (std::vector<uint32_t>{1024, 1024}));
}

TEST(SramFootprint, APeReadsAndWritesWithinItsWords) {
  // Row 0 stays low; row 1 writes its result near the top of the limit.
  format::Program p = makeProgram(1, 2);
  format::Region *r = addRegion(p, "k", 0, 0, 1, 2);
  initFloats(r, 0, 0, 0, {1, 2});
  initFloats(r, 0, 1, 0, {3, 4});
  *r->add_code() = ins(format::ADD, {8, 0, 4}, 1);
  *r->add_code() = only(ins(format::MUL_S, {4000, 0, 8}, 2), 0, 0, 1, 1);
  format::HostTensor *t = addTensor(p, true, "y", format::F32, {2});
  addPiece(t, 0, 1, 4000, 0, 2);
  EXPECT_EQ(footprints(p), (std::vector<uint32_t>{16, 1008}));
  RunResult res = runProgram(p);
  ASSERT_TRUE(res.status) << res.status.message();
  EXPECT_EQ(res.out("y"), (std::vector<float>{21, 28}));
}

/// One PE doubles its two init words into output y.
format::Program doubler() {
  format::Program p = makeProgram(1, 1);
  format::Region *r = addRegion(p, "k", 0, 0, 1, 1);
  initFloats(r, 0, 0, 0, {1.5f, -2});
  *r->add_code() = ins(format::ADD, {8, 0, 0}, 2);
  addPiece(addTensor(p, true, "y", format::F32, {2}), 0, 0, 8, 0, 2);
  return p;
}

TEST(SramImages, ReleasedImagesComeBackForTheNextRun) {
  format::Program p = doubler();
  addRoute(p, 0, 0, 1, format::RAMP, {format::EAST}); // held by the model alone once released
  Expected<std::unique_ptr<Emulator>> e = Emulator::create(p);
  ASSERT_TRUE(bool(e)) << e.error();
  int reloads = 0;
  (*e)->releaseProgramBulk([&]() -> Expected<format::Program> {
    ++reloads;
    return p;
  });
  EXPECT_EQ((*e)->program().wafers(0).routes_size(), 0);
  for (int run = 0; run < 2; ++run) {
    ASSERT_TRUE((*e)->run()) << run;
    EXPECT_EQ((*e)->output("y")->f32, (std::vector<float>{3, -4})) << run;
    EXPECT_EQ((*e)->program().wafers(0).regions(0).init_size(), 0) << run; // freed once copied
  }
  EXPECT_EQ(reloads, 1);
}

TEST(SramImages, AnotherProgramGivenAgainIsRefused) {
  format::Program p = doubler();
  format::Program other = doubler();
  format::SectionDigests d;
  d.set_code(1);
  *p.mutable_digests() = d; // digests tell the programs apart
  Expected<std::unique_ptr<Emulator>> e = Emulator::create(p);
  ASSERT_TRUE(bool(e)) << e.error();
  (*e)->releaseProgramBulk([&]() -> Expected<format::Program> { return other; });
  ASSERT_TRUE((*e)->run());
  Status again = (*e)->run();
  ASSERT_FALSE(again);
  EXPECT_EQ(again.message(), "the program given again for its SRAM images is another program");
}

} // namespace
} // namespace wsc::runtime
