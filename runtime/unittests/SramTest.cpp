// The SRAM words each PE's code can reach (SramFootprint.cpp), runs whose
// PEs reach less than their kernel's limit, and SRAM images read from the
// program's file.
#include "Model.h"
#include "TestPrograms.h"
#include "wsc/format/Digest.h"

#include <gtest/gtest.h>

#include <fstream>

#include <unistd.h>

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

/// `p` written to a file of its own, removed at the end of the test.
struct ProgramFile {
  std::string path;
  explicit ProgramFile(const format::Program &p) {
    char name[] = "/tmp/wsc-sram-test-XXXXXX";
    int fd = ::mkstemp(name);
    EXPECT_GE(fd, 0);
    ::close(fd);
    path = name;
    write(p);
  }
  ~ProgramFile() { ::unlink(path.c_str()); }
  void write(const format::Program &p) const {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << p.SerializeAsString();
  }
  /// Loaded with its images left in the file.
  std::unique_ptr<Emulator> load() const {
    Expected<LoadedProgram> p = loadProgramLeavingImages(path);
    EXPECT_TRUE(bool(p)) << p.error();
    Expected<std::unique_ptr<Emulator>> e = Emulator::create(p.take());
    EXPECT_TRUE(bool(e)) << e.error();
    return e.take();
  }
};

/// A doubler whose image has another word before it, and digests.
format::Program doublerWithDigests() {
  format::Program p = doubler();
  initFloats(p.mutable_wafers(0)->mutable_regions(0), 0, 0, 16, {7, 8});
  *p.mutable_digests() = format::computeDigests(p);
  return p;
}

TEST(SramImages, ImagesLeftInTheFileAreReadByEveryRun) {
  format::Program p = doublerWithDigests();
  addRoute(p, 0, 0, 1, format::RAMP, {format::EAST}); // held by the model alone once released
  *p.mutable_digests() = format::computeDigests(p);
  ProgramFile file(p);
  std::unique_ptr<Emulator> e = file.load();
  EXPECT_EQ(e->program().wafers(0).regions(0).init_size(), 2);
  EXPECT_TRUE(e->program().wafers(0).regions(0).init(0).data().empty());
  EXPECT_EQ(e->program().wafers(0).regions(0).init(1).offset(), 16u);
  EXPECT_EQ(e->memoryPlan().imagesInFile, 16u);
  e->releaseProgramBulk();
  EXPECT_EQ(e->program().wafers(0).routes_size(), 0);
  EXPECT_EQ(e->program().wafers(0).regions(0).init_size(), 0);
  for (int run = 0; run < 2; ++run) {
    ASSERT_TRUE(e->run()) << run;
    EXPECT_EQ(e->output("y")->f32, (std::vector<float>{3, -4})) << run;
  }
}

TEST(SramImages, TheFileIsCheckedAsAWholeParseChecksIt) {
  format::Program p = doublerWithDigests();
  std::string bytes = p.SerializeAsString();
  ProgramFile file(p);
  // A flipped image word: the sram_init digest no longer matches.
  size_t at = bytes.find(std::string("\x00\x00\xe0\x40", 4)); // 7.0f
  ASSERT_NE(at, std::string::npos);
  bytes[at + 3] ^= 1;
  std::ofstream(file.path, std::ios::binary | std::ios::trunc) << bytes;
  Expected<LoadedProgram> flipped = loadProgramLeavingImages(file.path);
  ASSERT_FALSE(flipped);
  EXPECT_EQ(flipped.error(),
            file.path + ": corrupt .wafer: the sram_init section does not match its digest");
  // Cut short inside an image.
  std::ofstream(file.path, std::ios::binary | std::ios::trunc) << bytes.substr(0, at + 2);
  Expected<LoadedProgram> cut = loadProgramLeavingImages(file.path);
  ASSERT_FALSE(cut);
  EXPECT_EQ(cut.error(),
            file.path + ": not a .wafer program (truncated or not a Program protobuf)");
}

TEST(SramImages, LeftInTheFileTheyParseAsAWholeParseDoes) {
  // Fields in any order, a region in two messages' fields, unknown fields of
  // every wire type: the same program as Program::ParseFromString gives.
  format::Program p = doublerWithDigests();
  p.clear_digests(); // the merged wafer is not in them
  std::string bytes = p.SerializeAsString();
  bytes += std::string("\xa8\x06\x05", 3);             // field 101, a varint
  bytes += std::string("\xab\x06\x08\x01\xac\x06", 6); // field 101, a group holding a varint
  bytes += std::string("\xb5\x06\x01\x02\x03\x04", 6); // field 102, a fixed32
  format::Program more = makeProgram(1, 1);
  more.set_tokens(3);
  bytes += more.SerializeAsString(); // merged: another wafer, and tokens
  ProgramFile file(p);
  std::ofstream(file.path, std::ios::binary | std::ios::trunc) << bytes;
  format::Program whole;
  ASSERT_TRUE(whole.ParseFromString(bytes));
  Expected<LoadedProgram> left = loadProgramLeavingImages(file.path);
  ASSERT_TRUE(bool(left)) << left.error();
  for (format::Wafer &w : *whole.mutable_wafers())
    for (format::Region &r : *w.mutable_regions())
      for (format::SramInit &i : *r.mutable_init())
        i.clear_data();
  EXPECT_EQ(left->program.SerializeAsString(), whole.SerializeAsString());
}

TEST(SramImages, AFileChangedSinceItLoadedIsAnErrorOfTheRun) {
  ProgramFile file(doubler());
  std::unique_ptr<Emulator> e = file.load();
  format::Program other = doubler();
  initFloats(other.mutable_wafers(0)->mutable_regions(0), 0, 0, 0, {2.5f, -2}); // same sizes
  other.mutable_wafers(0)->mutable_regions(0)->mutable_init()->DeleteSubrange(0, 1);
  file.write(other);
  Status s = e->run();
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), file.path + ": changed since it loaded: the SRAM images of kernel 'k' "
                                     "differ from those checked then");
  file.write(doubler()); // as it was
  ASSERT_TRUE(e->run());
  EXPECT_EQ(e->output("y")->f32, (std::vector<float>{3, -4}));
}

} // namespace
} // namespace wsc::runtime
