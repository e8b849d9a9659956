// Every fault kind and validation error must come back as a message naming
// the place, never as a crash or a hang.
#include "TestPrograms.h"

#include <gtest/gtest.h>

using namespace wsc::runtime;
using namespace wsc::runtime::test;
namespace format = wsc::format;

namespace {

/// Runs `p` and returns its error message ("" if it succeeded).
std::string errorOf(const format::Program &p, unsigned threads = 1) {
  RunResult res = runProgram(p, {}, threads);
  return res.status.ok() ? "" : res.status.message();
}

#define EXPECT_ERROR(program, text) EXPECT_EQ(errorOf(program), text)
#define EXPECT_ERROR_HAS(program, text) EXPECT_NE(errorOf(program).find(text), std::string::npos) << errorOf(program)

TEST(Fault, SramOverflow) {
  format::Program p = makeProgram(1, 1);
  *addRegion(p, "big", 0, 0, 1, 1)->add_code() = ins(format::ADD, {0, 0, 4000}, 32);
  EXPECT_ERROR(p, "SRAM overflow: wafer 0 PE (0,0) (kernel 'big'): instruction 0 (ADD): addr[2] "
                  "spans bytes [4000, 4128) outside the kernel's 4096 SRAM bytes");
}

TEST(Fault, OverflowOfTheKernelsDeclaredSram) {
  format::Program p = makeProgram(2, 1);
  format::Region *r = addRegion(p, "small", 0, 0, 2, 1);
  r->set_sram_bytes_per_pe(1024);
  format::Instr s = only(recv(3, 1020, 2), 1, 1, 0, 0);
  *r->add_code() = s;
  EXPECT_ERROR(p, "SRAM overflow: wafer 0 PE (1,0) (kernel 'small'), color 3: instruction 0 "
                  "(RECV): addr[0] spans bytes [1020, 1028) outside the kernel's 1024 SRAM bytes");
}

TEST(Fault, MisalignedAndNegativeOperands) {
  format::Program p = makeProgram(1, 1);
  format::Region *r = addRegion(p, "k", 0, 0, 1, 1);
  *r->add_code() = ins(format::COPY, {0, 6}, 1);
  EXPECT_ERROR_HAS(p, "misaligned address: wafer 0 PE (0,0) (kernel 'k')");
  r->mutable_code(0)->mutable_addr(1)->set_base(-4);
  EXPECT_ERROR_HAS(p, "SRAM overflow");
  r->mutable_code(0)->mutable_addr(1)->set_base(0);
  r->mutable_code(0)->mutable_n()->set_base(-1);
  EXPECT_ERROR_HAS(p, "bad count");
}

TEST(Fault, NoRouteAtTheSender) {
  format::Program p = makeProgram(2, 1);
  *addRegion(p, "s", 0, 0, 1, 1)->add_code() = send(1, 0, 1);
  EXPECT_ERROR(p, "no route: wafer 0 PE (0,0) (kernel 's'), color 1: a wavelet arriving on RAMP "
                  "has no router entry (sent by wafer 0 PE (0,0) (kernel 's') on color 1)");
}

TEST(Fault, NoRouteOnTheWay) {
  format::Program p = makeProgram(3, 1);
  *addRegion(p, "s", 0, 0, 1, 1)->add_code() = send(1, 0, 1);
  addRoute(p, 0, 0, 1, format::RAMP, {format::EAST});
  EXPECT_ERROR_HAS(p, "no route: wafer 0 PE (1,0) (no kernel), color 1: a wavelet arriving on "
                      "WEST has no router entry");
}

TEST(Fault, RoutedOffTheGridIntoDeadPeOrNoKernel) {
  format::Program p = makeProgram(3, 1);
  *addRegion(p, "s", 0, 0, 1, 1)->add_code() = send(1, 0, 1);
  addRoute(p, 0, 0, 1, format::RAMP, {format::NORTH});
  EXPECT_ERROR_HAS(p, "off the grid: wafer 0 PE (0,0) (kernel 's'), color 1: routed NORTH");
  p.mutable_wafers(0)->mutable_routes(0)->set_out_mask(1u << format::EAST);
  format::Pe *dead = p.mutable_wafers(0)->add_dead_pes();
  dead->set_x(1);
  EXPECT_ERROR_HAS(p, "dead PE: wafer 0 PE (0,0) (kernel 's'), color 1: routed EAST into dead PE (1,0)");
  p.mutable_wafers(0)->clear_dead_pes();
  addRoute(p, 1, 0, 1, format::WEST, {format::RAMP});
  EXPECT_ERROR_HAS(p, "no kernel: wafer 0 PE (1,0) (no kernel), color 1: delivered to the core");
  p.mutable_wafers(0)->mutable_routes(1)->set_out_mask(1u << format::EAST);
  addRoute(p, 2, 0, 1, format::WEST, {format::LINK});
  EXPECT_ERROR_HAS(p, "no link: wafer 0 PE (2,0) (no kernel), color 1: routed through LINK");
}

TEST(Fault, CollisionOfTwoOrigins) {
  // (0,0) sends east through (1,0), which also sends on the same color east.
  format::Program p = makeProgram(3, 1);
  *addRegion(p, "a", 0, 0, 1, 1)->add_code() = send(4, 0, 1);
  *addRegion(p, "b", 1, 0, 1, 1)->add_code() = send(4, 0, 1);
  *addRegion(p, "c", 2, 0, 1, 1)->add_code() = recv(4, 0, 2);
  addRoute(p, 0, 0, 4, format::RAMP, {format::EAST});
  addRoute(p, 1, 0, 4, format::WEST, {format::EAST});
  addRoute(p, 1, 0, 4, format::RAMP, {format::EAST});
  addRoute(p, 2, 0, 4, format::WEST, {format::RAMP});
  EXPECT_ERROR(p, "collision: wafer 0 PE (1,0) (kernel 'b'), color 4: EAST already carries "
                  "wavelets of wafer 0 PE (0,0) (kernel 'a') on color 4 (sent by wafer 0 PE "
                  "(1,0) (kernel 'b') on color 4)");
}

TEST(Fault, RoutingLoop) {
  format::Program p = makeProgram(2, 1);
  *addRegion(p, "a", 0, 0, 1, 1)->add_code() = send(0, 0, 1);
  addRoute(p, 0, 0, 0, format::RAMP, {format::EAST});
  addRoute(p, 1, 0, 0, format::WEST, {format::WEST});
  addRoute(p, 0, 0, 0, format::EAST, {format::EAST});
  EXPECT_ERROR_HAS(p, "routing loop: wafer 0 PE (0,0) (kernel 'a'), color 0: the same wavelet "
                      "leaves through EAST twice");
}

TEST(Fault, DeadlockWithACyclicWait) {
  format::Program p = makeProgram(2, 1);
  format::Region *r = addRegion(p, "pair", 0, 0, 2, 1);
  *r->add_code() = only(recv(0, 0, 1), 0, 0, 0, 0);
  *r->add_code() = only(recv(1, 0, 1), 1, 1, 0, 0);
  *r->add_code() = only(send(1, 0, 1), 0, 0, 0, 0);
  *r->add_code() = only(send(0, 0, 1), 1, 1, 0, 0);
  routeEast(p, 0, 0, 1, 1);
  addRoute(p, 1, 0, 0, format::RAMP, {format::WEST});
  addRoute(p, 0, 0, 0, format::EAST, {format::RAMP});
  for (unsigned threads : {1u, 3u})
    EXPECT_EQ(errorOf(p, threads),
              "deadlock: 2 PEs blocked in RECV and no wavelet in flight\n"
              "  wafer 0 PE (0,0) (kernel 'pair'), color 0: waits for 1 words, has 0 (instruction 0)\n"
              "  wafer 0 PE (1,0) (kernel 'pair'), color 1: waits for 1 words, has 0 (instruction 1)");
}

TEST(Fault, TheLowestPeFaultIsReportedWhateverTheThreads) {
  format::Program p = makeProgram(8, 8);
  format::Region *r = addRegion(p, "many", 0, 0, 8, 8);
  *r->add_code() = only(ins(format::FILL, {0}, 5000), 3, 7, 2, 7);
  for (unsigned threads : {1u, 2u, 5u})
    EXPECT_EQ(errorOf(p, threads).substr(0, 50), "SRAM overflow: wafer 0 PE (3,2) (kernel 'many'): i");
}

TEST(Fault, CycleLimitStopsRunawayLoops) {
  format::Program p = makeProgram(1, 1);
  format::Region *r = addRegion(p, "spin", 0, 0, 1, 1);
  *r->add_code() = loop(4000000000u);
  *r->add_code() = loop(4000000000u);
  *r->add_code() = only(ins(format::NOP, {}), 1, 1, 1, 1); // skipped: costs nothing
  *r->add_code() = end();
  *r->add_code() = end();
  Expected<std::unique_ptr<Emulator>> e = Emulator::create(p);
  ASSERT_TRUE(e.ok()) << e.error();
  RunOptions o;
  o.maxCycles = 100000;
  // Every PE must run the loops' ENDs: refused before the run.
  EXPECT_EQ((*e)->run(o).message(),
            "cycle limit: kernel 'spin' (wafer 0): every PE runs at least 16000000008000000001 "
            "instructions (LOOP and END included), more than the limit of 100000");
  // Under a predicate the loops may not run: the PE trips the limit as it goes.
  r->mutable_code(0)->add_pred()->set_x1(0);
  e = Emulator::create(p);
  ASSERT_TRUE(e.ok()) << e.error();
  // (The inner loop's body is skipped: its ENDs pass the limit at once.)
  EXPECT_EQ((*e)->run(o).message(), "cycle limit: wafer 0 PE (0,0) (kernel 'spin'): instruction 1 "
                                    "(LOOP): the PE passed the limit of 100000 instructions (LOOP "
                                    "and END included)");
}

TEST(Fault, VersionAndTruncation) {
  format::Program p = makeProgram(1, 1);
  addRegion(p, "k", 0, 0, 1, 1);
  // Version 1 (before the int32 and general ops) and a future version are refused.
  p.set_format_version(1);
  std::string bytes = p.SerializeAsString();
  Expected<format::Program> r = parseProgram(bytes, "m.wafer");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "m.wafer: .wafer format version 1, this runtime reads version 2");
  EXPECT_EQ(Emulator::create(p).error(), ".wafer format version 1, this runtime reads version 2");
  p.set_format_version(3);
  EXPECT_EQ(parseProgram(p.SerializeAsString(), "m.wafer").error(),
            "m.wafer: .wafer format version 3, this runtime reads version 2");
  p.set_format_version(2);
  bytes = p.SerializeAsString();
  ASSERT_TRUE(parseProgram(bytes, "m.wafer").ok());
  r = parseProgram(bytes.substr(0, bytes.size() - 3), "m.wafer");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "m.wafer: not a .wafer program (truncated or not a Program protobuf)");
  EXPECT_EQ(parseProgram("", "e").error(), "e: not a .wafer program (empty file)");
  EXPECT_EQ(parseProgram("hello world\n", "t").error(),
            "t: not a .wafer program (truncated or not a Program protobuf)");
  // Bytes that happen to parse (an unknown varint field) still lack a version.
  EXPECT_EQ(parseProgram(std::string("\x50\x01", 2), "u").error(),
            "u: not a .wafer program (no format_version)");
  EXPECT_EQ(loadProgramFile("/nonexistent/x.wafer").error(),
            "/nonexistent/x.wafer: cannot open: No such file or directory");
}

TEST(Validation, ErrorsNameTheRegionOrPe) {
  auto check = [](auto edit, const std::string &text) {
    format::Program p = makeProgram(4, 4);
    addRegion(p, "a", 0, 0, 2, 2);
    edit(p);
    EXPECT_EQ(errorOf(p), text);
  };
  check([](format::Program &p) { addRegion(p, "b", 1, 1, 2, 2); },
        "region 'b' (wafer 0): overlaps region 'a' at PE (1,1)");
  check([](format::Program &p) { addRegion(p, "b", 3, 3, 2, 1); },
        "region 'b' (wafer 0): 2x1 at (3,3) does not fit the 4x4 grid");
  check(
      [](format::Program &p) {
        format::Pe *d = p.mutable_wafers(0)->add_dead_pes();
        d->set_x(1);
        d->set_y(0);
      },
      "region 'a' (wafer 0): covers dead PE (1,0)");
  check([](format::Program &p) { addRoute(p, 4, 0, 0, format::RAMP, {format::EAST}); },
        "route 0 of wafer 0 at PE (4,0): outside the grid");
  check([](format::Program &p) { addRoute(p, 1, 0, 8, format::RAMP, {format::EAST}); },
        "route 0 of wafer 0 at PE (1,0): color 8 >= arch.colors 8");
  check([](format::Program &p) { addRoute(p, 1, 1, 0, format::RAMP, {format::LINK}); },
        "route 0 of wafer 0 at PE (1,1): uses LINK but the PE is not on the wafer's edge");
  check(
      [](format::Program &p) {
        addRoute(p, 1, 0, 0, format::RAMP, {format::EAST});
        addRoute(p, 1, 0, 0, format::RAMP, {format::SOUTH});
      },
      "route 1 of wafer 0 at PE (1,0): a second entry for color 0 input RAMP");
  // Entries are sorted to find a key twice; the one named is still the
  // first repeat in the program's order (route 3), not the first by key.
  check(
      [](format::Program &p) {
        addRoute(p, 2, 0, 0, format::RAMP, {format::EAST});
        addRoute(p, 1, 0, 0, format::RAMP, {format::EAST});
        addRoute(p, 0, 0, 0, format::RAMP, {format::EAST});
        addRoute(p, 2, 0, 0, format::RAMP, {format::SOUTH});
        addRoute(p, 1, 0, 0, format::RAMP, {format::SOUTH});
      },
      "route 3 of wafer 0 at PE (2,0): a second entry for color 0 input RAMP");
  check([](format::Program &p) { initFloats(p.mutable_wafers(0)->mutable_regions(0), 1, 1, 4092, {1, 2}); },
        "region 'a' (wafer 0): init 0 at local PE (1,1) spans bytes [4092, 4100) beyond the "
        "kernel's 4096 SRAM bytes");
  check([](format::Program &p) { *p.mutable_wafers(0)->mutable_regions(0)->add_code() = loop(2); },
        "region 'a' (wafer 0) instruction 0 (LOOP): no matching END");
  check(
      [](format::Program &p) {
        format::Instr i = ins(format::FILL, {0}, 1);
        i.mutable_addr(0)->add_stride(4);
        *p.mutable_wafers(0)->mutable_regions(0)->add_code() = i;
      },
      "region 'a' (wafer 0) instruction 0 (FILL): addr[0] has 1 strides but only 0 enclosing "
      "LOOPs");
  check(
      [](format::Program &p) {
        format::Instr i = ins(format::GATHER, {0, 0, 0}, 1, 1);
        *i.mutable_k() = aff(0, {1}, 2, 3);
        *p.mutable_wafers(0)->mutable_regions(0)->add_code() = i;
      },
      "region 'a' (wafer 0) instruction 0 (GATHER): k has 1 strides but only 0 enclosing LOOPs");
  check([](format::Program &p) { *p.mutable_wafers(0)->mutable_regions(0)->add_code() = ins(format::ADD, {0, 0}, 1); },
        "region 'a' (wafer 0) instruction 0 (ADD): needs 3 addresses, has 2");
  check([](format::Program &p) { addPiece(addTensor(p, false, "x", format::F32, {2}), 3, 3, 0, 0, 2); },
        "input 'x' piece 0: wafer 0 PE (3,3) has no kernel, hence no SRAM");
  check([](format::Program &p) { addPiece(addTensor(p, true, "y", format::F32, {3}), 0, 0, 0, 0, 2); },
        "output 'y': element 2 is not held by any piece");
  // Sized past every PE's SRAM: refused before any per-element bookkeeping.
  check([](format::Program &p) { addTensor(p, true, "y", format::F32, {int64_t(1) << 36}); },
        "output 'y': 68719476736 elements, more than the 4096 words of SRAM its kernels have");
  check([](format::Program &p) { p.mutable_arch()->set_simd_fp32(0); },
        "arch: simd_fp32 and fmac_per_cycle_fp32 must be positive");
}

TEST(Inputs, AreCheckedByNameShapeAndType) {
  format::Program p = makeProgram(1, 1);
  addRegion(p, "k", 0, 0, 1, 1);
  addPiece(addTensor(p, false, "x", format::F32, {2, 2}), 0, 0, 0, 0, 4);
  addPiece(addTensor(p, false, "ids", format::I64, {2}), 0, 0, 16, 0, 2);
  Expected<std::unique_ptr<Emulator>> e = Emulator::create(p);
  ASSERT_TRUE(e.ok()) << e.error();
  Emulator &emu = **e;
  EXPECT_EQ(emu.setInput("z", HostArray::floats({1}, {1})).message(),
            "input 'z': the program has no such input");
  EXPECT_EQ(emu.setInput("x", HostArray::floats({4}, {1, 2, 3, 4})).message(),
            "input 'x': shape [4] given, the program wants [2, 2]");
  EXPECT_EQ(emu.setInput("x", HostArray::integers(DType::I64, {2, 2}, {1, 2, 3, 4})).message(),
            "input 'x': dtype i64 given, the program wants f32");
  EXPECT_EQ(emu.setInput("ids", HostArray::integers(DType::I64, {2}, {1, int64_t(1) << 40})).message(),
            "input 'ids': element 1 = 1099511627776 does not fit the 32-bit SRAM word");
  EXPECT_TRUE(emu.setInput("x", HostArray::floats({2, 2}, {1, 2, 3, 4})).ok());
  EXPECT_EQ(emu.run().message(), "input 'ids' was not given");
  EXPECT_TRUE(emu.setInput("ids", HostArray::integers(DType::I32, {2}, {1, 2})).ok());
  EXPECT_TRUE(emu.run().ok());
  EXPECT_EQ(emu.output("nope").error(), "output 'nope': the program has no such output");
}

TEST(Inputs, BoolIsStrict) {
  format::Program p = makeProgram(1, 1);
  addRegion(p, "k", 0, 0, 1, 1);
  addPiece(addTensor(p, false, "cond", format::BOOL, {3}), 0, 0, 0, 0, 3);
  addPiece(addTensor(p, false, "ids", format::I32, {3}), 0, 0, 16, 0, 3);
  Expected<std::unique_ptr<Emulator>> e = Emulator::create(p);
  ASSERT_TRUE(e.ok()) << e.error();
  Emulator &emu = **e;
  // Integer arrays are not bools, even of 0s and 1s, and bools are not integers.
  EXPECT_EQ(emu.setInput("cond", HostArray::integers(DType::I64, {3}, {0, 1, 0})).message(),
            "input 'cond': dtype i64 given, the program wants bool");
  EXPECT_EQ(emu.setInput("cond", HostArray::integers(DType::I32, {3}, {0, 1, 0})).message(),
            "input 'cond': dtype i32 given, the program wants bool");
  EXPECT_EQ(emu.setInput("cond", HostArray::floats({3}, {0, 1, 0})).message(),
            "input 'cond': dtype f32 given, the program wants bool");
  EXPECT_EQ(emu.setInput("ids", HostArray::integers(DType::Bool, {3}, {0, 1, 0})).message(),
            "input 'ids': dtype bool given, the program wants i32");
  EXPECT_EQ(emu.setInput("cond", HostArray::integers(DType::Bool, {3}, {0, 2, 0})).message(),
            "input 'cond': element 1 = 2 of a bool array is not 0 or 1");
  EXPECT_EQ(emu.setInput("cond", HostArray::integers(DType::Bool, {2}, {0, 1})).message(),
            "input 'cond': shape [2] given, the program wants [3]");
  // Integers outside int32 are refused for I32 inputs as for I64 ones, both ends.
  EXPECT_EQ(emu.setInput("ids", HostArray::integers(DType::I64, {3}, {0, int64_t(INT32_MIN) - 1, 0}))
                .message(),
            "input 'ids': element 1 = -2147483649 does not fit the 32-bit SRAM word");
  EXPECT_EQ(emu.setInput("ids", HostArray::integers(DType::I32, {3}, {int64_t(INT32_MAX) + 1, 0, 0}))
                .message(),
            "input 'ids': element 0 = 2147483648 does not fit the 32-bit SRAM word");
  EXPECT_TRUE(emu.setInput("cond", HostArray::integers(DType::Bool, {3}, {0, 1, 1})).ok());
  EXPECT_TRUE(emu.setInput("ids", HostArray::integers(DType::I64, {3}, {INT32_MIN, 0, INT32_MAX})).ok());
  EXPECT_TRUE(emu.run().ok());
}

TEST(Fault, HostLimitOnADelayOf2To32Cycles) {
  // The emulator keeps per-PE delays in 32 bits: a link latency of 2^32 - 1
  // plus the hops does not fit, and must be a fault, not a wrapped time.
  format::Program p = twoWafersOverALink();
  p.mutable_arch()->set_link_latency_cycles(UINT32_MAX);
  EXPECT_ERROR(p, "host limit: wafer 1 PE (1,0) (kernel 'b'), color 3: a message would take 2^32 "
                  "cycles or more to arrive (sent by wafer 0 PE (0,0) (kernel 'a') on color 2)");
}

} // namespace

