// Hostile inputs (issue 27): out-of-range token ids, corrupt and odd files,
// runaway programs, absurd arch figures and outputs that must not be
// half-written. Each one is a clean error, never a wrong answer.
#include "TestPrograms.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <unistd.h>

using namespace wsc::runtime;
using namespace wsc::runtime::test;
namespace wafer = wsc::wafer;

namespace {

// --- the valid range of an input (token ids) --------------------------------

/// One PE holding an I64 input "ids" of 3 elements whose valid range is [lo, hi).
wafer::Program boundedIds(int64_t lo, int64_t hi) {
  wafer::Program p = makeProgram(1, 1);
  addRegion(p, "k", 0, 0, 1, 1);
  wafer::HostTensor *t = addTensor(p, false, "ids", wafer::I64, {3});
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
  wafer::Program free = boundedIds(0, 64);
  free.mutable_inputs(0)->clear_valid();
  e = Emulator::create(free);
  ASSERT_TRUE(e.ok()) << e.error();
  EXPECT_TRUE((*e)->setInput("ids", HostArray::integers(DType::I64, {3}, {-1, 64, 7})).ok());
}

TEST(InputRange, TheRangeIsValidated) {
  EXPECT_EQ(Emulator::create(boundedIds(5, 5)).error(), "input 'ids': valid range [5, 5) is empty");
  wafer::Program p = boundedIds(0, 4);
  p.mutable_inputs(0)->set_dtype(wafer::F32);
  EXPECT_EQ(Emulator::create(p).error(),
            "input 'ids': a valid range is only for inputs of an integer dtype");
  p = boundedIds(0, 4);
  wafer::HostTensor *out = addTensor(p, true, "y", wafer::I32, {1});
  addPiece(out, 0, 0, 64, 0, 1);
  out->mutable_valid()->set_hi(1);
  EXPECT_EQ(Emulator::create(p).error(),
            "output 'y': a valid range is only for inputs of an integer dtype");
}

} // namespace
