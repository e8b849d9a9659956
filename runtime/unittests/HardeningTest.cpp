// Hostile inputs (issue 27): out-of-range token ids, corrupt and odd files,
// runaway programs, absurd arch figures and outputs that must not be
// half-written. Each one is a clean error, never a wrong answer.
#include "TestPrograms.h"
#include "wsc/runtime/OutputFiles.h"
#include "wsc/format/Digest.h"
#include "onnx_tensor.pb.h"

#include <fmt/format.h>
#include <algorithm>
#include <gtest/gtest.h>

#include <cmath>
#include <dirent.h>
#include <fcntl.h>

#include <sys/stat.h>
#include <unistd.h>

using namespace wsc::runtime;
using namespace wsc::runtime::test;
namespace format = wsc::format;

namespace {

// --- the valid range of an input (token ids) --------------------------------

/// One PE holding an I64 input "ids" of 3 elements whose valid range is [lo, hi).
format::Program boundedIds(int64_t lo, int64_t hi) {
  format::Program p = makeProgram(1, 1);
  addRegion(p, "k", 0, 0, 1, 1);
  format::HostTensor *t = addTensor(p, false, "ids", format::I64, {3});
  addPiece(t, 0, 0, 0, 0, 3);
  t->mutable_valid()->set_lo(lo);
  t->mutable_valid()->set_hi(hi);
  return p;
}

TEST(InputRange, IdsOutsideTheValidRangeAreRefused) {
  Expected<std::unique_ptr<Emulator>> e = Emulator::create(boundedIds(0, 64));
  ASSERT_TRUE(e.ok()) << e.error();
  Emulator &emu = **e;
  EXPECT_TRUE(emu.setInput("ids", HostArray::integers(DType::I64, {3}, {0, 63, 7})).ok());
  EXPECT_EQ(emu.setInput("ids", HostArray::integers(DType::I64, {3}, {0, -1, 7})).message(),
            "input 'ids': element 1 = -1 is outside [0, 64)");
  EXPECT_EQ(emu.setInput("ids", HostArray::integers(DType::I64, {3}, {0, 1, 64})).message(),
            "input 'ids': element 2 = 64 is outside [0, 64)");
  EXPECT_EQ(emu.setInput("ids", HostArray::integers(DType::I32, {3}, {1000000, 1, 2})).message(),
            "input 'ids': element 0 = 1000000 is outside [0, 64)");
  EXPECT_EQ(emu.setInput("ids", HostArray::integers(DType::I32, {3}, {INT32_MIN, 1, 2})).message(),
            "input 'ids': element 0 = -2147483648 is outside [0, 64)");
  // Without a range any int32 goes, as before.
  format::Program free = boundedIds(0, 64);
  free.mutable_inputs(0)->clear_valid();
  e = Emulator::create(free);
  ASSERT_TRUE(e.ok()) << e.error();
  EXPECT_TRUE((*e)->setInput("ids", HostArray::integers(DType::I64, {3}, {-1, 64, 7})).ok());
}

TEST(InputRange, TheRangeIsValidated) {
  EXPECT_EQ(Emulator::create(boundedIds(5, 5)).error(), "input 'ids': valid range [5, 5) is empty");
  format::Program p = boundedIds(0, 4);
  p.mutable_inputs(0)->set_dtype(format::F32);
  EXPECT_EQ(Emulator::create(p).error(),
            "input 'ids': a valid range is only for inputs of an integer dtype");
  p = boundedIds(0, 4);
  format::HostTensor *out = addTensor(p, true, "y", format::I32, {1});
  addPiece(out, 0, 0, 64, 0, 1);
  out->mutable_valid()->set_hi(1);
  EXPECT_EQ(Emulator::create(p).error(),
            "output 'y': a valid range is only for inputs of an integer dtype");
}

// --- section digests ----------------------------------------------------------

TEST(Digest, Xxh64MatchesTheReference) {
  // XXH64 reference values (seed 0).
  EXPECT_EQ(format::Xxh64::of("", 0), 0xEF46DB3751D8E999ULL);
  EXPECT_EQ(format::Xxh64::of("Nobody inspects the spammish repetition", 39),
            0xFBCEA83C8A378BF1ULL);
  // Fed in pieces, the digest of the concatenation.
  std::string s(1000, 'x');
  for (size_t i = 0; i < s.size(); ++i)
    s[i] = char(i * 131 + 7);
  format::Xxh64 h;
  for (size_t i = 0, k = 1; i < s.size(); i += k, k = k % 37 + 1)
    h.update(s.data() + i, std::min(k, s.size() - i));
  EXPECT_EQ(h.digest(), format::Xxh64::of(s.data(), s.size()));
}

/// A program with something in every section: code, a route, an init, a blob, a host tensor.
format::Program everySection() {
  format::Program p = makeProgram(2, 1);
  format::Region *r = addRegion(p, "k", 0, 0, 1, 1);
  *r->add_code() = ins(format::EXT_LOAD, {0, 0}, 2);
  initFloats(r, 0, 0, 16, {1, 2, 3});
  addRoute(p, 1, 0, 0, format::WEST, {format::RAMP});
  format::ExternalBlob *b = p.add_external();
  b->set_data(std::string(8, '\1'));
  addPiece(addTensor(p, true, "y", format::F32, {2}), 0, 0, 0, 0, 2);
  *p.mutable_digests() = format::computeDigests(p);
  return p;
}

TEST(Digest, EachSectionIsCheckedAndNamed) {
  format::Program good = everySection();
  ASSERT_TRUE(parseProgram(good.SerializeAsString(), "m.wafer").ok());
  auto errorOf = [](const format::Program &p) {
    return parseProgram(p.SerializeAsString(), "m.wafer").error();
  };
  auto corrupt = [](const char *section) {
    return fmt::format("m.wafer: corrupt .wafer: the {} section does not match its digest",
                       section);
  };
  format::Program p = good;
  p.mutable_wafers(0)->mutable_regions(0)->mutable_code(0)->mutable_n()->set_base(1);
  EXPECT_EQ(errorOf(p), corrupt("code"));
  p = good;
  p.mutable_wafers(0)->mutable_routes(0)->set_out_mask(3);
  EXPECT_EQ(errorOf(p), corrupt("routes"));
  p = good;
  (*p.mutable_wafers(0)->mutable_regions(0)->mutable_init(0)->mutable_data())[5] ^= 1;
  EXPECT_EQ(errorOf(p), corrupt("sram_init"));
  p = good;
  (*p.mutable_external(0)->mutable_data())[7] ^= 0x80;
  EXPECT_EQ(errorOf(p), corrupt("external"));
  p = good;
  p.mutable_outputs(0)->set_shape(0, 3);
  EXPECT_EQ(errorOf(p), corrupt("host"));
  p = good;
  p.mutable_arch()->set_hop_cycles(2);
  EXPECT_EQ(errorOf(p), corrupt("host"));
  // A digest that is itself wrong, or missing.
  p = good;
  p.mutable_digests()->set_routes(good.digests().routes() + 1);
  EXPECT_EQ(errorOf(p), corrupt("routes"));
  p = good;
  p.mutable_digests()->clear_external();
  EXPECT_EQ(errorOf(p), "m.wafer: corrupt .wafer: its section digests are incomplete");
  // No digests at all (hand-written programs): not checked.
  p = good;
  p.clear_digests();
  p.mutable_arch()->set_hop_cycles(2);
  EXPECT_TRUE(parseProgram(p.SerializeAsString(), "m.wafer").ok());
}

// --- the default cycle and instruction limits ----------------------------------

TEST(CycleLimit, ALongLoopEndsUnderTheDefaultLimit) {
  // A LOOP of 2^32 - 1 trips (a 300-byte program) would emulate for minutes:
  // every PE must run its ENDs, so the default limit refuses it at once.
  format::Program p = makeProgram(1, 1);
  format::Region *r = addRegion(p, "spin", 0, 0, 1, 1);
  *r->add_code() = loop(UINT32_MAX);
  *r->add_code() = ins(format::FILL, {0}, 1);
  *r->add_code() = end();
  RunResult res = runProgram(p);
  EXPECT_EQ(res.status.message(),
            "cycle limit: kernel 'spin' (wafer 0): every PE runs at least 8589934591 "
            "instructions (LOOP and END included), more than the limit of 4294967296");
  // A loop this PE runs with a body it skips: its 4e9 ENDs are counted at
  // once, and pass the limit at once (not after 2^32 ENDs one by one).
  format::Program q = makeProgram(2, 1);
  format::Region *idle = addRegion(q, "idle", 0, 0, 2, 1);
  for (int i = 0; i < 2; ++i) {
    *idle->add_code() = only(loop(4000000000u), 0, 0, 0, 0);
    *idle->add_code() = only(ins(format::NOP, {}), 1, 1, 0, 0);
    *idle->add_code() = end();
  }
  EXPECT_EQ(runProgram(q).status.message(),
            "cycle limit: wafer 0 PE (0,0) (kernel 'idle'): instruction 3 (LOOP): the PE passed "
            "the limit of 4294967296 instructions (LOOP and END included)");
  idle->mutable_code(3)->set_count(4000);
  EXPECT_TRUE(runProgram(q).status.ok());

  // The clock: 2^41 cycles of EXP pass the default 2^40 at the next instruction.
  r->clear_code();
  *r->add_code() = ins(format::EXP, {0, 0}, 1024);
  *r->add_code() = ins(format::EXP, {0, 0}, 1024);
  p.mutable_arch()->set_transcendental_cycles(1u << 31);
  res = runProgram(p);
  EXPECT_EQ(res.status.message(), "cycle limit: wafer 0 PE (0,0) (kernel 'spin'): instruction 1 "
                                  "(EXP): the PE passed the limit of 1099511627776 cycles");
  // Within the limits nothing changes.
  p.mutable_arch()->set_transcendental_cycles(1u << 20);
  EXPECT_TRUE(runProgram(p).status.ok());
}

// --- arch figures and the timings derived from them ---------------------------

TEST(ArchFigures, NonFiniteOrNegativeAreRefused) {
  auto errorWith = [](auto set) {
    format::Program p = makeProgram(1, 1);
    addRegion(p, "k", 0, 0, 1, 1);
    set(*p.mutable_arch());
    return Emulator::create(p).error();
  };
  double nan = std::nan(""), inf = HUGE_VAL;
  EXPECT_EQ(errorWith([&](format::Arch &a) { a.set_clock_hz(nan); }),
            "arch: clock_hz nan must be positive and finite");
  EXPECT_EQ(errorWith([&](format::Arch &a) { a.set_clock_hz(inf); }),
            "arch: clock_hz inf must be positive and finite");
  EXPECT_EQ(errorWith([&](format::Arch &a) { a.set_clock_hz(-1); }),
            "arch: clock_hz -1 must be positive and finite");
  EXPECT_EQ(errorWith([&](format::Arch &a) { a.set_ext_mem_bytes_per_cycle(nan); }),
            "arch: ext_mem_bytes_per_cycle nan must be finite and not negative");
  EXPECT_EQ(errorWith([&](format::Arch &a) { a.set_ext_mem_bytes_per_cycle(-1); }),
            "arch: ext_mem_bytes_per_cycle -1 must be finite and not negative");
  EXPECT_EQ(errorWith([&](format::Arch &a) { a.set_link_bytes_per_cycle(inf); }),
            "arch: link_bytes_per_cycle inf must be finite and not negative");
}

TEST(ArchFigures, TheGridBoundIsTheCompilers) {
  // 65535 PEs a side and 2^24 PEs a wafer, as wafer/WaferDialect.h says.
  format::Program p = makeProgram(1, 1);
  addRegion(p, "k", 0, 0, 1, 1);
  p.mutable_arch()->set_width(5000);
  p.mutable_arch()->set_height(5000);
  EXPECT_EQ(Emulator::create(p).error(),
            "arch: grid 5000x5000 must be between 1x1 and 65535x65535, at most 16777216 PEs");
  p.mutable_arch()->set_width(65536);
  p.mutable_arch()->set_height(1);
  EXPECT_EQ(Emulator::create(p).error(),
            "arch: grid 65536x1 must be between 1x1 and 65535x65535, at most 16777216 PEs");
  p.mutable_arch()->set_width(4096);
  p.mutable_arch()->set_height(4096);
  EXPECT_TRUE(Emulator::create(p).ok());
}

TEST(ArchFigures, ATinyExternalBandwidthIsACycleLimitNotAWrongTime) {
  // 4 bytes at 1e-300 bytes per cycle: 4e300 cycles, which no integer holds
  // (the cast used to be undefined, and came out as 2^63 cycles).
  format::Program p = makeProgram(1, 1);
  format::Region *r = addRegion(p, "load", 0, 0, 1, 1);
  *r->add_code() = ins(format::EXT_LOAD, {0, 0}, 1);
  p.add_external()->set_data(std::string(4, '\0'));
  p.mutable_arch()->set_ext_mem_bytes_per_cycle(1e-300);
  EXPECT_EQ(runProgram(p).status.message(),
            "cycle limit: wafer 0 PE (0,0) (kernel 'load'): instruction 0 (EXT_LOAD): 1 words at "
            "ext_mem_bytes_per_cycle 1e-300 take 4e+300 cycles, more than the limit of "
            "1099511627776");
  // A small one that fits is charged exactly.
  p.mutable_arch()->set_ext_mem_bytes_per_cycle(1e-6);
  RunResult ok = runProgram(p);
  ASSERT_TRUE(ok.status.ok()) << ok.status.message();
  EXPECT_EQ(ok.report.cycles, 4000000u);
}

TEST(ArchFigures, ATinyLinkBandwidthIsAHostLimit) {
  format::Program p = twoWafersOverALink();
  p.mutable_arch()->set_link_bytes_per_cycle(1e-300);
  std::string err = runProgram(p).status.message();
  EXPECT_EQ(err.substr(0, 12), "host limit: ") << err;
  EXPECT_NE(err.find("2^32 cycles or more"), std::string::npos) << err;
}

// --- files that are not regular -------------------------------------------------

TEST(Files, DirectoriesDevicesAndFifosAreRefusedUnopened) {
  std::string dir = ::testing::TempDir() + "wsc-hard-" + std::to_string(::getpid());
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  EXPECT_EQ(loadProgramFile(dir).error(), dir + ": is a directory, not a regular file");
  EXPECT_EQ(readFileBytes(dir).error(), dir + ": is a directory, not a regular file");
  EXPECT_EQ(loadProgramFile("/dev/zero").error(),
            "/dev/zero: is a character device, not a regular file");
  EXPECT_EQ(readFileBytes("/dev/zero").error(),
            "/dev/zero: is a character device, not a regular file");
  // Opening a FIFO for reading would wait for a writer for ever.
  std::string fifo = dir + "/f";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(loadProgramFile(fifo).error(), fifo + ": is a FIFO, not a regular file");
  EXPECT_EQ(readFileBytes(fifo).error(), fifo + ": is a FIFO, not a regular file");
  ::unlink(fifo.c_str());
  // A regular file is read up to the limit asked for.
  std::string file = dir + "/r";
  ASSERT_TRUE(writeFileAtomic(file, std::string(100, 'x')).ok());
  EXPECT_EQ(readFileBytes(file, 100)->size(), 100u);
  EXPECT_EQ(readFileBytes(file, 99).error(), file + ": larger than 99 bytes");
  ::unlink(file.c_str());
  ::rmdir(dir.c_str());
}

TEST(Files, APipeIsReadThroughItsDescriptorAndCutOff) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ASSERT_EQ(::write(fds[1], "0123456789", 10), 10);
  ::close(fds[1]);
  std::string name = fmt::format("/dev/fd/{}", fds[0]);
  EXPECT_EQ(readFileBytes(name, 9).error(), name + ": larger than 9 bytes");
  ::close(fds[0]);
  ASSERT_EQ(::pipe(fds), 0);
  ASSERT_EQ(::write(fds[1], "0123456789", 10), 10);
  ::close(fds[1]);
  name = fmt::format("/proc/self/fd/{}", fds[0]);
  Expected<std::string> got = readFileBytes(name);
  ASSERT_TRUE(got.ok()) << got.error();
  EXPECT_EQ(*got, "0123456789");
  ::close(fds[0]);
}

// --- strict .npy headers -------------------------------------------------------

/// A version-1 .npy of `shape` text and `data`, as numpy.save pads it.
std::string npyWithShape(const std::string &shape, const std::string &data) {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  dict.append((64 - (10 + dict.size() + 1) % 64) % 64, ' ');
  dict += '\n';
  std::string bytes("\x93NUMPY\x01\x00", 8);
  bytes += char(dict.size());
  bytes += char(0);
  return bytes + dict + data;
}

TEST(NpyShape, OnlyTuplesOfNonNegativeIntegers) {
  std::string eight(16 * 4, '\0'), one(4, '\0');
  for (const char *shape : {"(2, 8.9)", "(2, x8)", "(2, -8)", "(2, +8)", "(2,, 8)", "(, 2)",
                            "(16)", "(2 8)", "(0x10,)", "(,)"})
    EXPECT_EQ(parseNpy(npyWithShape(shape, eight), "a.npy").error(),
              fmt::format("a.npy: not a readable .npy file (shape {} is not a tuple of "
                          "non-negative integers)",
                          shape))
        << shape;
  for (const char *shape : {"(2, 8)", "(2,8)", "(16,)", "( 2 , 8 , )", "(1, 16, 1)"}) {
    Expected<HostArray> a = parseNpy(npyWithShape(shape, eight), "a.npy");
    ASSERT_TRUE(a.ok()) << shape << ": " << a.error();
    EXPECT_EQ(a->numel(), 16) << shape;
  }
  Expected<HostArray> scalar = parseNpy(npyWithShape("()", one), "s.npy");
  ASSERT_TRUE(scalar.ok()) << scalar.error();
  EXPECT_TRUE(scalar->shape.empty());
}

// --- output files -------------------------------------------------------------

/// A fresh directory; its entries by name.
std::string freshDir(const std::string &name) {
  std::string dir = ::testing::TempDir() + "wsc-out-" + std::to_string(::getpid()) + "-" + name;
  EXPECT_EQ(::mkdir(dir.c_str(), 0700), 0);
  return dir;
}
// Found by fuzz-host-tensor: an empty FLOAT or DOUBLE tensor passed the null
// data pointer of an empty vector to memcpy (undefined behaviour that UBSan
// reports in the sanitizer build).
TEST(OnnxTensor, EmptyTensorsRead) {
  for (int type : {1, 11, 7}) { // FLOAT, DOUBLE, INT64
    wsc::onnxtensor::TensorProto t;
    t.set_data_type(type);
    t.add_dims(0);
    t.add_dims(3);
    Expected<HostArray> a = parseOnnxTensor(t.SerializeAsString(), "empty.pb");
    ASSERT_TRUE(a) << a.error();
    EXPECT_EQ(a->numel(), 0);
    EXPECT_EQ(a->shape, (std::vector<int64_t>{0, 3}));
  }
}

std::vector<std::string> entries(const std::string &dir) {
  std::vector<std::string> names;
  DIR *d = ::opendir(dir.c_str());
  while (dirent *e = d ? ::readdir(d) : nullptr)
    if (std::string(e->d_name) != "." && std::string(e->d_name) != "..")
      names.push_back(e->d_name);
  if (d)
    ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}
std::string contents(const std::string &path) {
  Expected<std::string> b = readFileBytes(path);
  return b ? *b : "<" + b.error() + ">";
}

TEST(OutputFiles, NothingIsWrittenUntilEverythingIsStaged) {
  std::string dir = freshDir("all");
  {
    OutputFiles out;
    ASSERT_TRUE(out.stage(dir + "/a", "A").ok());
    ASSERT_TRUE(out.stage(dir + "/b", "B").ok());
    // Only temporary files so far; a failed stage removes them.
    EXPECT_EQ(entries(dir).size(), 2u);
    EXPECT_EQ(out.stage(dir + "/no/c", "C").message(),
              dir + "/no/c: cannot write: No such file or directory");
    EXPECT_TRUE(entries(dir).empty());
  }
  {
    OutputFiles out;
    ASSERT_TRUE(out.stage(dir + "/a", "A").ok());
    ASSERT_TRUE(out.stage("/dev/full", "F").ok());
    // The device is written first: when it fails, nothing is renamed.
    EXPECT_EQ(out.commit().message(), "/dev/full: cannot write: No space left on device");
    EXPECT_TRUE(entries(dir).empty());
  }
  {
    OutputFiles out;
    ASSERT_TRUE(out.stage(dir + "/a", "A").ok());
    ASSERT_TRUE(out.stage(dir + "/b", "B").ok());
    ASSERT_TRUE(out.commit().ok());
    EXPECT_EQ(entries(dir), (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(contents(dir + "/a"), "A");
  }
  {
    // Discarded (destroyed) without a commit: the old files stay as they were.
    OutputFiles out;
    ASSERT_TRUE(out.stage(dir + "/a", "new").ok());
  }
  EXPECT_EQ(entries(dir), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(contents(dir + "/a"), "A");
  EXPECT_EQ(writeFileAtomic(dir, "x").message(), dir + ": cannot write: is a directory");
}

TEST(OutputFiles, LinksAreFollowedAndDevicesWrittenThrough) {
  std::string dir = freshDir("links");
  ASSERT_TRUE(writeFileAtomic(dir + "/real", "old").ok());
  ASSERT_EQ(::symlink("real", (dir + "/link").c_str()), 0);
  ASSERT_EQ(::symlink("made", (dir + "/dangling").c_str()), 0);
  ASSERT_EQ(::symlink("/dev/null", (dir + "/null").c_str()), 0);
  ASSERT_TRUE(writeFileAtomic(dir + "/link", "new").ok());
  ASSERT_TRUE(writeFileAtomic(dir + "/dangling", "made").ok());
  ASSERT_TRUE(writeFileAtomic(dir + "/null", "gone").ok());
  struct stat st;
  for (const char *link : {"/link", "/dangling", "/null"}) {
    ASSERT_EQ(::lstat((dir + link).c_str(), &st), 0);
    EXPECT_TRUE(S_ISLNK(st.st_mode)) << link;
  }
  EXPECT_EQ(contents(dir + "/real"), "new");
  EXPECT_EQ(contents(dir + "/made"), "made");
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  // A FIFO: an error without a reader, written through with one.
  std::string fifo = dir + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(writeFileAtomic(fifo, "x").message(),
            fifo + ": cannot write: a FIFO that no process reads");
  int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  ASSERT_TRUE(writeFileAtomic(fifo, "through").ok());
  char buf[16] = {};
  EXPECT_EQ(::read(reader, buf, sizeof buf), 7);
  EXPECT_EQ(std::string(buf), "through");
  ::close(reader);
  EXPECT_EQ(entries(dir),
            (std::vector<std::string>{"dangling", "fifo", "link", "made", "null", "real"}));
}

} // namespace
