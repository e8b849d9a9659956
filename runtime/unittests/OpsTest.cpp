// Format version 2's ops on one PE: int32 arithmetic (Instr.type), MIN,
// POW, MOD, comparisons, logic, SELECT, the new unary ops, conversions,
// REDUCE_MIN and INDEX_COPY; their costs, faults and validation.
#include "TestPrograms.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

using namespace wsc::runtime;
using namespace wsc::runtime::test;
namespace format = wsc::format;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

uint32_t W(float f) {
  uint32_t w;
  std::memcpy(&w, &f, 4);
  return w;
}
uint32_t I(int32_t i) { return uint32_t(i); }
float F(uint32_t w) {
  float f;
  std::memcpy(&f, &w, 4);
  return f;
}

std::vector<uint32_t> fw(const std::vector<float> &v) {
  std::vector<uint32_t> out;
  for (float f : v)
    out.push_back(W(f));
  return out;
}
std::vector<uint32_t> iw(std::initializer_list<int32_t> v) {
  std::vector<uint32_t> out;
  for (int32_t i : v)
    out.push_back(I(i));
  return out;
}

/// An instruction of element type `t`.
format::Instr typed(format::Instr i, format::ElemType t) {
  i.set_type(t);
  return i;
}
format::Instr withImm(format::Instr i, float imm, format::ElemType t = format::ELEM_F32) {
  i.set_imm(imm);
  i.set_type(t);
  return i;
}

/// One PE with `words` at byte offsets (offset -> words) runs `code`; the
/// result is the `count` words from byte `out` on, raw (read as int32).
struct OnePe {
  std::map<uint32_t, std::vector<uint32_t>> init;
  std::vector<format::Instr> code;
  uint32_t out = 0, count = 0;

  format::Program program() const {
    format::Program p = makeProgram(1, 1);
    format::Region *r = addRegion(p, "k", 0, 0, 1, 1);
    for (const auto &[offset, words] : init) {
      format::SramInit *s = r->add_init();
      s->set_offset(offset);
      s->set_data(std::string(reinterpret_cast<const char *>(words.data()), words.size() * 4));
    }
    for (const format::Instr &i : code)
      *r->add_code() = i;
    if (count)
      addPiece(addTensor(p, true, "out", format::I32, {int64_t(count)}), 0, 0, out, 0, count);
    return p;
  }
  /// The result words; fails the test on an error.
  std::vector<uint32_t> run(uint64_t *cycles = nullptr) const {
    RunResult res = runProgram(program());
    EXPECT_TRUE(res.status.ok()) << res.status.message();
    if (!res.status.ok())
      return {};
    if (cycles)
      *cycles = res.report.cycles;
    std::vector<uint32_t> words;
    for (int64_t v : res.outputs.at("out").ints)
      words.push_back(uint32_t(int32_t(v)));
    return words;
  }
  std::vector<float> runFloats(uint64_t *cycles = nullptr) const {
    std::vector<float> f;
    for (uint32_t w : run(cycles))
      f.push_back(F(w));
    return f;
  }
  std::string error() const {
    RunResult res = runProgram(program());
    return res.status.ok() ? "" : res.status.message();
  }
};

/// Compares floats bit for bit (NaN equals NaN, -0 differs from +0).
void expectBits(const std::vector<float> &got, const std::vector<float> &want,
                const char *what = "") {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!(std::isnan(got[i]) && std::isnan(want[i]))) {
      EXPECT_EQ(W(got[i]), W(want[i])) << what << " element " << i << ": " << got[i] << " vs "
                                       << want[i];
    }
  }
}

TEST(Ops, MinF32PropagatesNaNAsMax) {
  OnePe pe;
  pe.init[0] = fw({1, -2, kNaN, 3, -0.0f});
  pe.init[32] = fw({2, -3, 1, kNaN, 0.0f});
  pe.code = {ins(format::MIN, {64, 0, 32}, 5), ins(format::MAX, {96, 0, 32}, 5)};
  pe.out = 64;
  pe.count = 13;
  std::vector<float> r = pe.runFloats();
  expectBits({r.begin(), r.begin() + 4}, {1, -3, kNaN, kNaN}, "min");
  expectBits({r.begin() + 8, r.begin() + 12}, {2, -2, kNaN, kNaN}, "max");
}

TEST(Ops, Int32Arithmetic) {
  const int32_t kMin = std::numeric_limits<int32_t>::min();
  const int32_t kMax = std::numeric_limits<int32_t>::max();
  OnePe pe;
  pe.init[0] = iw({kMax, -7, 7, -7, 6, kMin, 100000, 3});
  pe.init[32] = iw({1, 2, -2, -3, -3, -1, 100000, 5});
  pe.code = {typed(ins(format::ADD, {64, 0, 32}, 8), format::ELEM_I32),
             typed(ins(format::SUB, {96, 0, 32}, 8), format::ELEM_I32),
             typed(ins(format::MUL, {128, 0, 32}, 8), format::ELEM_I32),
             typed(ins(format::DIV, {160, 0, 32}, 8), format::ELEM_I32),
             typed(ins(format::MOD, {192, 0, 32}, 8), format::ELEM_I32),
             typed(ins(format::MAX, {224, 0, 32}, 8), format::ELEM_I32),
             typed(ins(format::MIN, {256, 0, 32}, 8), format::ELEM_I32)};
  pe.out = 64;
  pe.count = 56;
  std::vector<uint32_t> r = pe.run();
  auto row = [&](int k) { return std::vector<uint32_t>(r.begin() + 8 * k, r.begin() + 8 * k + 8); };
  EXPECT_EQ(row(0), iw({kMin, -5, 5, -10, 3, kMax, 200000, 8})) << "ADD wraps";
  EXPECT_EQ(row(1), iw({kMax - 1, -9, 9, -4, 9, kMin + 1, 0, -2})) << "SUB";
  EXPECT_EQ(row(2), iw({kMax, -14, -14, 21, -18, kMin, 1410065408, 15})) << "MUL wraps";
  EXPECT_EQ(row(3), iw({kMax, -3, -3, 2, -2, kMin, 1, 0})) << "DIV truncates, MIN / -1 wraps";
  EXPECT_EQ(row(4), iw({0, 1, -1, -1, 0, 0, 0, 3})) << "MOD takes the divisor's sign";
  EXPECT_EQ(row(5), iw({kMax, 2, 7, -3, 6, -1, 100000, 5})) << "MAX";
  EXPECT_EQ(row(6), iw({1, -7, -2, -7, -3, kMin, 100000, 3})) << "MIN";
}

TEST(Ops, Int32ScalarImmediateFillAndCosts) {
  OnePe pe;
  pe.init[0] = iw({-7, 0, 7, 9});
  pe.init[16] = iw({-2});
  pe.code = {typed(ins(format::ADD_S, {32, 0, 16}, 4), format::ELEM_I32),     // 1 cycle
             typed(ins(format::SUB_S, {48, 0, 16}, 4), format::ELEM_I32),     // 1
             typed(ins(format::MUL_S, {64, 0, 16}, 4), format::ELEM_I32),     // 1
             typed(ins(format::DIV_S, {80, 0, 16}, 4), format::ELEM_I32),     // 4 * 8
             withImm(ins(format::ADD_I, {96, 0}, 4), 2.5f, format::ELEM_I32), // 1: imm 3
             withImm(ins(format::MUL_I, {112, 0}, 4), -2.5f, format::ELEM_I32), // 1: imm -3
             withImm(ins(format::FILL, {128}, 2), 1e10f, format::ELEM_I32),   // 1: saturates
             withImm(ins(format::FILL, {136}, 2), -1.4f, format::ELEM_I32)};  // 1
  pe.out = 32;
  pe.count = 28;
  uint64_t cycles = 0;
  std::vector<uint32_t> r = pe.run(&cycles);
  EXPECT_EQ(r, iw({-9, -2, 5, 7, -5, 2, 9, 11, 14, 0, -14, -18, 3, 0, -3, -4, //
                   -4, 3, 10, 12, 21, 0, -21, -27, 2147483647, 2147483647, -1, -1}));
  EXPECT_EQ(cycles, 7u + 4 * 8);
}

TEST(Ops, Int32ScalarReadOnceWhenDstOverlapsIt) {
  OnePe pe;
  pe.init[0] = iw({5, 6, 7});
  pe.code = {typed(ins(format::ADD_S, {0, 0, 0}, 3), format::ELEM_I32)};
  pe.out = 0;
  pe.count = 3;
  EXPECT_EQ(pe.run(), iw({10, 11, 12}));
}

TEST(Ops, PowF32AndI32) {
  OnePe pe;
  pe.init[0] = fw({2, 9, -8, 0, 1.5f});
  pe.init[32] = fw({10, 0.5f, 1.0f / 3, -1, 2.5f});
  pe.init[64] = iw({2, -3, 2, 3, 0, 2, 7, -1});
  pe.init[96] = iw({10, 3, 31, 40, -1, -1, 0, -1});
  pe.code = {ins(format::POW, {128, 0, 32}, 5),                                 // 5 * 8
             typed(ins(format::POW, {160, 64, 96}, 8), format::ELEM_I32)};       // 8 * 8
  pe.out = 128;
  pe.count = 16;
  uint64_t cycles = 0;
  std::vector<uint32_t> r = pe.run(&cycles);
  std::vector<float> f;
  for (int i = 0; i < 5; ++i)
    f.push_back(F(r[i]));
  expectBits(f, {std::pow(2.0f, 10.0f), std::pow(9.0f, 0.5f), std::pow(-8.0f, 1.0f / 3), kInf,
                 std::pow(1.5f, 2.5f)});
  EXPECT_TRUE(std::isnan(f[2])) << "a negative base to a fractional power";
  // 2^31 and 3^40 wrap modulo 2^32 (3^40 as the double rounds it); 0^-1 is
  // inf (0), 2^-1 is 0.5 (0), 7^0 is 1, (-1)^-1 is -1.
  int64_t p340 = int64_t(std::fmod(std::pow(3.0, 40.0), 4294967296.0));
  EXPECT_EQ(std::vector<uint32_t>(r.begin() + 8, r.end()),
            iw({1024, -27, std::numeric_limits<int32_t>::min(), int32_t(uint32_t(p340)), 0, 0, 1,
                -1}));
  EXPECT_EQ(cycles, (5u + 8) * 8) << "POW is transcendental";
}

TEST(Ops, ModF32TakesTheDivisorsSign) {
  OnePe pe;
  pe.init[0] = fw({5.5f, -5.5f, 5.5f, -5.5f, -4, 4, 1, -1, kInf});
  pe.init[64] = fw({2, 2, -2, -2, 2, -2, 0, kInf, 2});
  pe.code = {ins(format::MOD, {128, 0, 64}, 9)};
  pe.out = 128;
  pe.count = 9;
  uint64_t cycles = 0;
  expectBits(pe.runFloats(&cycles), {1.5f, 0.5f, -0.5f, -1.5f, 0.0f, -0.0f, kNaN, kInf, kNaN});
  EXPECT_EQ(cycles, 3u) << "MOD costs ceil(n / simd)";
}

/// RANDOM over the counters 0..n-1 under `key`, the results as floats.
std::vector<float> uniforms(uint32_t n, uint32_t key, uint64_t *cycles = nullptr) {
  OnePe pe;
  std::vector<uint32_t> counters(n);
  for (uint32_t i = 0; i < n; ++i)
    counters[i] = W(float(i));
  pe.init[0] = counters;
  pe.init[4 * n] = {key};
  pe.code = {ins(format::RANDOM, {4 * n + 4, 0, 4 * n}, n)};
  pe.out = 4 * n + 4;
  pe.count = n;
  return pe.runFloats(cycles);
}

TEST(Ops, RandomIsUniformInTheOpenInterval) {
  uint64_t cycles = 0;
  std::vector<float> u = uniforms(496, W(7.0f), &cycles); // as many as the PE holds
  ASSERT_EQ(u.size(), 496u);
  EXPECT_EQ(cycles, 496u / 4) << "RANDOM costs ceil(n / simd)";
  std::vector<int> bins(16);
  double sum = 0;
  for (float x : u) {
    ASSERT_TRUE(x > 0.0f && x < 1.0f) << x;
    sum += x;
    ++bins[int(x * 16)];
  }
  EXPECT_NEAR(sum / 496, 0.5, 0.05); // 4 standard deviations
  // 31 expected per bin; chi-square with 15 degrees of freedom, p < 1e-4 above 42.
  double chi = 0;
  for (int b : bins)
    chi += (b - 31.0) * (b - 31.0) / 31.0;
  EXPECT_LT(chi, 42.0);
}

TEST(Ops, RandomDependsOnTheKeyAndTheWordOnly) {
  std::vector<float> a = uniforms(64, W(7.0f)), again = uniforms(64, W(7.0f)),
                     other = uniforms(64, W(8.0f));
  expectBits(again, a, "same key");
  int same = 0;
  for (size_t i = 0; i < a.size(); ++i)
    same += a[i] == other[i];
  EXPECT_LE(same, 1) << "another key draws other numbers";
  // A shorter run draws the same numbers for the same words.
  expectBits(uniforms(8, W(7.0f)), std::vector<float>(a.begin(), a.begin() + 8), "prefix");
}

TEST(Ops, RandomReadsItsKeyBeforeWriting) {
  OnePe pe;
  pe.init[0] = fw({0, 1, 2, 3});
  pe.init[16] = {W(7.0f)};
  // The destination starts at the key word.
  pe.code = {ins(format::RANDOM, {16, 0, 16}, 4)};
  pe.out = 16;
  pe.count = 4;
  expectBits(pe.runFloats(), uniforms(4, W(7.0f)));
}

TEST(Ops, ComparisonsWriteInt32OfTheirType) {
  OnePe pe;
  // As fp32: 1 < 2, NaN compares false, -0 == 0. As int32: the same words.
  pe.init[0] = fw({1, 2, kNaN, -0.0f});
  pe.init[16] = fw({2, 2, kNaN, 0.0f});
  pe.init[32] = iw({-1, 5, 7, std::numeric_limits<int32_t>::min()});
  pe.init[48] = iw({1, 5, -7, 0});
  format::Op ops[] = {format::EQ, format::LT, format::LE, format::GT, format::GE};
  for (int k = 0; k < 5; ++k) {
    pe.code.push_back(ins(ops[k], {128 + 16 * k, 0, 16}, 4));
    pe.code.push_back(typed(ins(ops[k], {256 + 16 * k, 32, 48}, 4), format::ELEM_I32));
  }
  pe.out = 128;
  pe.count = 52;
  std::vector<uint32_t> r = pe.run();
  auto at = [&](uint32_t byte) {
    return std::vector<uint32_t>(r.begin() + (byte - 128) / 4, r.begin() + (byte - 128) / 4 + 4);
  };
  EXPECT_EQ(at(128), iw({0, 1, 0, 1})) << "EQ f32";
  EXPECT_EQ(at(144), iw({1, 0, 0, 0})) << "LT f32";
  EXPECT_EQ(at(160), iw({1, 1, 0, 1})) << "LE f32";
  EXPECT_EQ(at(176), iw({0, 0, 0, 0})) << "GT f32";
  EXPECT_EQ(at(192), iw({0, 1, 0, 1})) << "GE f32";
  EXPECT_EQ(at(256), iw({0, 1, 0, 0})) << "EQ i32";
  EXPECT_EQ(at(272), iw({1, 0, 0, 1})) << "LT i32";
  EXPECT_EQ(at(288), iw({1, 1, 0, 1})) << "LE i32";
  EXPECT_EQ(at(304), iw({0, 0, 1, 0})) << "GT i32";
  EXPECT_EQ(at(320), iw({0, 1, 1, 0})) << "GE i32";
}

TEST(Ops, LogicReadsNonzeroAsTrue) {
  OnePe pe;
  // 0x80000000 (-0.0 as fp32) is a nonzero int32.
  pe.init[0] = iw({0, 0, 5, -1, std::numeric_limits<int32_t>::min()});
  pe.init[32] = iw({0, 3, 0, 7, 1});
  pe.code = {ins(format::AND, {64, 0, 32}, 5), ins(format::OR, {96, 0, 32}, 5),
             ins(format::XOR, {128, 0, 32}, 5), ins(format::NOT, {160, 0}, 5)};
  pe.out = 64;
  pe.count = 29;
  std::vector<uint32_t> r = pe.run();
  EXPECT_EQ(std::vector<uint32_t>(r.begin(), r.begin() + 5), iw({0, 0, 0, 1, 1})) << "AND";
  EXPECT_EQ(std::vector<uint32_t>(r.begin() + 8, r.begin() + 13), iw({0, 1, 1, 1, 1})) << "OR";
  EXPECT_EQ(std::vector<uint32_t>(r.begin() + 16, r.begin() + 21), iw({0, 1, 1, 0, 0})) << "XOR";
  EXPECT_EQ(std::vector<uint32_t>(r.begin() + 24, r.begin() + 29), iw({1, 1, 0, 0, 0})) << "NOT";
}

TEST(Ops, BitOpsWorkOnTheWordsBits) {
  OnePe pe;
  pe.init[0] = iw({0, -1, 0x0f0f, std::numeric_limits<int32_t>::min(), -6});
  pe.init[32] = iw({7, 0x1234, 0x00ff, -1, 3});
  pe.code = {ins(format::BIT_AND, {64, 0, 32}, 5), ins(format::BIT_OR, {96, 0, 32}, 5),
             ins(format::BIT_XOR, {128, 0, 32}, 5), ins(format::BIT_NOT, {160, 0}, 5)};
  pe.out = 64;
  pe.count = 29;
  uint64_t cycles = 0;
  std::vector<uint32_t> r = pe.run(&cycles);
  auto at = [&](size_t i) { return std::vector<uint32_t>(r.begin() + i, r.begin() + i + 5); };
  EXPECT_EQ(at(0), iw({0, 0x1234, 0x000f, std::numeric_limits<int32_t>::min(), 2})) << "BIT_AND";
  EXPECT_EQ(at(8), iw({7, -1, 0x0fff, -1, -5})) << "BIT_OR";
  EXPECT_EQ(at(16), iw({7, ~0x1234, 0x0ff0, std::numeric_limits<int32_t>::max(), -7})) << "BIT_XOR";
  EXPECT_EQ(at(24), iw({-1, 0, ~0x0f0f, std::numeric_limits<int32_t>::max(), 5})) << "BIT_NOT";
  EXPECT_EQ(cycles, 4u * 2) << "each costs ceil(n / simd)";
  pe.code = {typed(ins(format::BIT_XOR, {0, 0, 0}, 1), format::ELEM_I32)};
  EXPECT_NE(pe.error().find("takes no element type"), std::string::npos) << pe.error();
}

TEST(Ops, SelectCopiesRawWords) {
  OnePe pe;
  pe.init[0] = iw({1, 0, -1, 0});
  pe.init[16] = fw({1, 2, kNaN, 4});
  pe.init[32] = iw({-5, -6, -7, -8});
  pe.code = {ins(format::SELECT, {64, 0, 16, 32}, 4)};
  pe.out = 64;
  pe.count = 4;
  uint64_t cycles = 0;
  std::vector<uint32_t> r = pe.run(&cycles);
  EXPECT_EQ(r, (std::vector<uint32_t>{W(1), I(-6), W(kNaN), I(-8)}));
  EXPECT_EQ(cycles, 1u);
}

TEST(Ops, SelectReadsEverySourceBeforeWriting) {
  // dst one word past b, so that element i of b is element i - 1 of dst;
  // then dst = cond (with b as the first SELECT left it): every word is
  // read before any is written.
  OnePe pe;
  pe.init[0] = iw({1, 0, 0, 1});
  pe.init[16] = iw({10, 11, 12, 13});
  pe.init[32] = iw({20, 21, 22, 23, 24});
  pe.code = {ins(format::SELECT, {36, 0, 16, 32}, 4), ins(format::SELECT, {0, 0, 16, 32}, 4)};
  pe.out = 0;
  pe.count = 13;
  std::vector<uint32_t> r = pe.run();
  EXPECT_EQ(std::vector<uint32_t>(r.begin(), r.begin() + 4), iw({10, 10, 21, 13})) << "dst = cond";
  EXPECT_EQ(std::vector<uint32_t>(r.begin() + 8, r.end()), iw({20, 10, 21, 22, 13}))
      << "dst overlapping b";
}

TEST(Ops, UnaryF32OpsAndCosts) {
  std::vector<float> x = {0.5f, -1.25f, 2, -0.0f, 3.75f, -3.5f, kNaN, 1e-3f};
  OnePe pe;
  pe.init[0] = fw(x);
  format::Op ops[] = {format::LOG, format::ABS, format::SIN, format::COS, format::SIGMOID,
                     format::RECIPROCAL, format::RELU, format::FLOOR, format::CEIL};
  for (int k = 0; k < 9; ++k)
    pe.code.push_back(ins(ops[k], {64 + 32 * k, 0}, 8));
  pe.out = 64;
  pe.count = 72;
  uint64_t cycles = 0;
  std::vector<float> r = pe.runFloats(&cycles);
  float (*fns[])(float) = {
      [](float v) { return std::log(v); },
      [](float v) { return std::fabs(v); },
      [](float v) { return std::sin(v); },
      [](float v) { return std::cos(v); },
      [](float v) { return 1.0f / (1.0f + std::exp(-v)); },
      [](float v) { return 1.0f / v; },
      [](float v) { return std::isnan(v) || v > 0 ? v : 0.0f; },
      [](float v) { return std::floor(v); },
      [](float v) { return std::ceil(v); },
  };
  for (int k = 0; k < 9; ++k) {
    std::vector<float> want;
    for (float v : x)
      want.push_back(fns[k](v));
    expectBits({r.begin() + 8 * k, r.begin() + 8 * k + 8}, want, format::Op_Name(ops[k]).c_str());
  }
  EXPECT_EQ(r[8 * 6 + 3], 0.0f) << "RELU(-0)";
  EXPECT_EQ(r[8 * 7 + 5], -4.0f) << "FLOOR(-3.5)";
  EXPECT_EQ(r[8 * 8 + 5], -3.0f) << "CEIL(-3.5)";
  EXPECT_TRUE(std::isnan(r[8 * 6 + 6])) << "RELU(NaN)";
  EXPECT_EQ(r[8 * 1 + 3], 0.0f) << "ABS(-0)";
  // LOG SIN COS SIGMOID RECIPROCAL: 8 * 8 each; ABS RELU FLOOR CEIL: 2 each.
  EXPECT_EQ(cycles, 5u * 64 + 4 * 2);
}

TEST(Ops, GeluTanhInDouble) {
  // GELU_TANH: 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), in double,
  // rounded once; GELU beside it is the exact (erf) form, which differs.
  std::vector<float> x = {0.5f, -1.25f, 2, -0.0f, 3.75f, -3.5f, 1e-3f, -7};
  OnePe pe;
  pe.init[0] = fw(x);
  pe.code = {ins(format::GELU_TANH, {32, 0}, 8), ins(format::GELU, {64, 0}, 8)};
  pe.out = 32;
  pe.count = 16;
  uint64_t cycles = 0;
  std::vector<float> r = pe.runFloats(&cycles);
  std::vector<float> want;
  for (float v : x) {
    double d = v;
    want.push_back(float(0.5 * d * (1 + std::tanh(std::sqrt(2 / M_PI) * (d + 0.044715 * d * d * d)))));
  }
  expectBits({r.begin(), r.begin() + 8}, want, "GELU_TANH");
  EXPECT_NE(r[0], r[8]) << "GELU_TANH(0.5) is not the exact GELU(0.5)";
  EXPECT_NEAR(r[0], r[8], 1e-3) << "but close to it";
  EXPECT_EQ(cycles, 2u * 64) << "n * tc each, as GELU";
}

TEST(Ops, UnaryInt32OpsWrap) {
  const int32_t kMin = std::numeric_limits<int32_t>::min();
  OnePe pe;
  pe.init[0] = iw({-3, 0, 7, kMin});
  pe.code = {typed(ins(format::NEG, {32, 0}, 4), format::ELEM_I32),
             typed(ins(format::ABS, {48, 0}, 4), format::ELEM_I32),
             typed(ins(format::RELU, {64, 0}, 4), format::ELEM_I32)};
  pe.out = 32;
  pe.count = 12;
  EXPECT_EQ(pe.run(), iw({3, 0, -7, kMin, 3, 0, 7, kMin, 0, 0, 7, 0}));
}

TEST(Ops, ConversionsTruncateAndSaturate) {
  const int32_t kMin = std::numeric_limits<int32_t>::min();
  const int32_t kMax = std::numeric_limits<int32_t>::max();
  OnePe pe;
  pe.init[0] = fw({2.7f, -2.7f, -0.5f, 3e9f, -3e9f, kNaN, kInf, -2147483648.0f});
  pe.init[32] = iw({-7, 16777217, kMin, kMax});
  pe.code = {ins(format::TO_INT, {64, 0}, 8), ins(format::TO_FLOAT, {96, 32}, 4)};
  pe.out = 64;
  pe.count = 12;
  uint64_t cycles = 0;
  std::vector<uint32_t> r = pe.run(&cycles);
  EXPECT_EQ(std::vector<uint32_t>(r.begin(), r.begin() + 8),
            iw({2, -2, 0, kMax, kMin, 0, kMax, kMin}));
  EXPECT_EQ(std::vector<uint32_t>(r.begin() + 8, r.end()),
            fw({-7, 16777216, -2147483648.0f, 2147483648.0f}));
  EXPECT_EQ(cycles, 3u);
}

TEST(Ops, ReductionsOfBothTypes) {
  const int32_t kMin = std::numeric_limits<int32_t>::min();
  const int32_t kMax = std::numeric_limits<int32_t>::max();
  OnePe pe;
  pe.init[0] = fw({3, -1, 4, -1.5f});
  pe.init[16] = fw({3, kNaN, -9});
  pe.init[32] = iw({kMax, 1, -5, 7});
  pe.code = {ins(format::REDUCE_MIN, {64, 0}, 4),
             ins(format::REDUCE_MIN, {68, 16}, 3), // NaN wins
             ins(format::REDUCE_MIN, {72, 0}, 0),  // +inf
             typed(ins(format::REDUCE_SUM, {76, 32}, 4), format::ELEM_I32),
             typed(ins(format::REDUCE_MAX, {80, 32}, 4), format::ELEM_I32),
             typed(ins(format::REDUCE_MIN, {84, 32}, 4), format::ELEM_I32),
             typed(ins(format::REDUCE_MAX, {88, 32}, 0), format::ELEM_I32),
             typed(ins(format::REDUCE_MIN, {92, 32}, 0), format::ELEM_I32)};
  pe.out = 64;
  pe.count = 8;
  std::vector<uint32_t> r = pe.run();
  EXPECT_EQ(F(r[0]), -1.5f);
  EXPECT_TRUE(std::isnan(F(r[1])));
  EXPECT_EQ(F(r[2]), kInf);
  EXPECT_EQ(std::vector<uint32_t>(r.begin() + 3, r.end()),
            iw({kMin + 2 /* wraps */, kMax, -5, kMin, kMax}));
}

TEST(Ops, IndexCopyTransposesBroadcastsAndPads) {
  OnePe pe;
  // A 3x2 matrix {0 1, 2 3, 4 5} with a NaN payload at 5.
  pe.init[0] = {W(0), W(1), W(2), W(3), W(4), 0x7fc01234u};
  pe.init[64] = iw({0, 2, 4, 1, 3, 5,  // transpose into 2x3
                    1, 1, 1,           // broadcast word 1
                    -1, 4, -1});       // pad
  pe.code = {ins(format::INDEX_COPY, {128, 0, 64}, 12, 6)};
  pe.out = 128;
  pe.count = 12;
  uint64_t cycles = 0;
  std::vector<uint32_t> r = pe.run(&cycles);
  EXPECT_EQ(r, (std::vector<uint32_t>{W(0), W(2), W(4), W(1), W(3), 0x7fc01234u, W(1), W(1), W(1),
                                      0, W(4), 0}));
  EXPECT_EQ(cycles, 12u) << "one word per cycle";
}

TEST(Ops, IndexCopyInPlaceReadsAllFirst) {
  OnePe pe;
  // Reverse 4 words in place; then write over the index table itself.
  pe.init[0] = iw({10, 11, 12, 13});
  pe.init[16] = iw({3, 2, 1, 0});
  pe.init[32] = iw({1, 0, -1});
  pe.code = {ins(format::INDEX_COPY, {0, 0, 16}, 4, 4), ins(format::INDEX_COPY, {32, 0, 32}, 3, 4)};
  pe.out = 0;
  pe.count = 11;
  std::vector<uint32_t> r = pe.run();
  EXPECT_EQ(std::vector<uint32_t>(r.begin(), r.begin() + 4), iw({13, 12, 11, 10}));
  EXPECT_EQ(std::vector<uint32_t>(r.begin() + 8, r.end()), iw({12, 13, 0}));
}

TEST(Ops, IndexCopyFollowsAffineOperands) {
  // Every PE of a 2x1 region gathers from its own source slice: the index
  // table is shared, the source address follows px.
  format::Program p = makeProgram(2, 1);
  format::Region *r = addRegion(p, "k", 0, 0, 2, 1);
  for (uint32_t px = 0; px < 2; ++px)
    initFloats(r, px, 0, 0, {1, 2, 3, 4});
  format::Instr c = ins(format::INDEX_COPY, {64, 0, 32}, 2, 2);
  *c.mutable_addr(1) = aff(0, {}, 8);
  *r->add_code() = c;
  format::HostTensor *ids = addTensor(p, false, "idx", format::I32, {2});
  addPiece(ids, 0, 0, 32, 0, 2);
  addPiece(ids, 1, 0, 32, 0, 2);
  format::HostTensor *out = addTensor(p, true, "y", format::F32, {4});
  addPiece(out, 0, 0, 64, 0, 2);
  addPiece(out, 1, 0, 64, 2, 2);
  RunResult res = runProgram(p, {{"idx", HostArray::integers(DType::I32, {2}, {1, 0})}});
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  EXPECT_EQ(res.out("y"), (std::vector<float>{2, 1, 4, 3}));
}

TEST(Ops, IndexOutOfRangeFaults) {
  OnePe pe;
  pe.init[0] = iw({0, 1, 2, 3});
  pe.init[16] = iw({0, 3, 4});
  pe.code = {ins(format::INDEX_COPY, {64, 0, 16}, 3, 4)};
  EXPECT_EQ(pe.error(), "index out of range: wafer 0 PE (0,0) (kernel 'k'): instruction 0 "
                        "(INDEX_COPY): index 4 at i = 2 is neither -1 nor in [0, m) with m = 4");
  pe.init[16] = iw({-2});
  EXPECT_EQ(pe.error(), "index out of range: wafer 0 PE (0,0) (kernel 'k'): instruction 0 "
                        "(INDEX_COPY): index -2 at i = 0 is neither -1 nor in [0, m) with m = 4");
}

TEST(Ops, Int32DivisionByZeroFaults) {
  OnePe pe;
  pe.init[0] = iw({7, -7, 9});
  pe.init[16] = iw({1, 2, 0});
  pe.code = {typed(ins(format::DIV, {64, 0, 16}, 3), format::ELEM_I32)};
  EXPECT_EQ(pe.error(), "division by zero: wafer 0 PE (0,0) (kernel 'k'): instruction 0 (DIV): "
                        "element 2: int32 9 by 0");
  pe.code = {ins(format::NOP, {}), typed(ins(format::MOD, {64, 0, 16}, 3), format::ELEM_I32)};
  EXPECT_EQ(pe.error(), "division by zero: wafer 0 PE (0,0) (kernel 'k'): instruction 1 (MOD): "
                        "element 2: int32 9 by 0");
  pe.code = {typed(ins(format::DIV_S, {64, 0, 24}, 3), format::ELEM_I32)};
  EXPECT_EQ(pe.error(), "division by zero: wafer 0 PE (0,0) (kernel 'k'): instruction 0 (DIV_S): "
                        "element 0: int32 7 by 0");
  // fp32 division by zero is IEEE's, and an empty integer division nothing.
  pe.code = {ins(format::DIV, {64, 0, 16}, 3),
             typed(ins(format::MOD, {64, 0, 24}, 0), format::ELEM_I32)};
  EXPECT_EQ(pe.error(), "");
}

TEST(Ops, EveryOperandIsBoundsChecked) {
  OnePe pe;
  pe.code = {ins(format::SELECT, {0, 0, 0, 4080}, 8)};
  EXPECT_EQ(pe.error(), "SRAM overflow: wafer 0 PE (0,0) (kernel 'k'): instruction 0 (SELECT): "
                        "addr[3] spans bytes [4080, 4112) outside the kernel's 4096 SRAM bytes");
  pe.code = {ins(format::INDEX_COPY, {0, 0, 4080}, 8, 1)};
  EXPECT_EQ(pe.error(), "SRAM overflow: wafer 0 PE (0,0) (kernel 'k'): instruction 0 "
                        "(INDEX_COPY): addr[2] spans bytes [4080, 4112) outside the kernel's "
                        "4096 SRAM bytes");
  pe.code = {ins(format::INDEX_COPY, {0, 4000, 0}, 1, 32)};
  EXPECT_EQ(pe.error(), "SRAM overflow: wafer 0 PE (0,0) (kernel 'k'): instruction 0 "
                        "(INDEX_COPY): addr[1] spans bytes [4000, 4128) outside the kernel's "
                        "4096 SRAM bytes");
  pe.code = {ins(format::INDEX_COPY, {0, 0, 0}, 1, -1)};
  EXPECT_EQ(pe.error(), "bad count: wafer 0 PE (0,0) (kernel 'k'): instruction 0 (INDEX_COPY): "
                        "m = -1 is negative");
  pe.code = {ins(format::SELECT, {0, 2, 0, 0}, 1)};
  EXPECT_EQ(pe.error(), "misaligned address: wafer 0 PE (0,0) (kernel 'k'): instruction 0 "
                        "(SELECT): addr[1] = 2 is not a multiple of 4");
}

TEST(Ops, ValidationOfTypesAndAddresses) {
  OnePe pe;
  pe.code = {typed(ins(format::EXP, {0, 0}, 1), format::ELEM_I32)};
  EXPECT_EQ(pe.error(), "region 'k' (wafer 0) instruction 0 (EXP): takes no element type ELEM_I32 "
                        "(only ADD..MAX, MIN, POW, MOD, *_S, ADD_I, MUL_I, FILL, NEG, ABS, RELU, "
                        "REDUCE_* and the comparisons do)");
  for (format::Op op : {format::AND, format::NOT, format::SELECT, format::INDEX_COPY, format::TO_INT,
                       format::TO_FLOAT, format::COPY, format::MATVEC, format::SEND}) {
    pe.code = {typed(ins(op, {0, 0, 0, 0}, 1), format::ELEM_I32)};
    EXPECT_NE(pe.error().find("takes no element type"), std::string::npos)
        << format::Op_Name(op) << ": " << pe.error();
  }
  pe.code = {ins(format::ADD, {0, 0, 0}, 1)};
  pe.code[0].set_type(format::ElemType(7));
  EXPECT_EQ(pe.error(), "region 'k' (wafer 0) instruction 0 (ADD): unknown element type 7");
  pe.code = {ins(format::SELECT, {0, 0, 0}, 1)};
  EXPECT_EQ(pe.error(), "region 'k' (wafer 0) instruction 0 (SELECT): needs 4 addresses, has 3");
  pe.code = {ins(format::INDEX_COPY, {0, 0}, 1, 1)};
  EXPECT_EQ(pe.error(),
            "region 'k' (wafer 0) instruction 0 (INDEX_COPY): needs 3 addresses, has 2");
  pe.code = {ins(format::MOD, {0, 0}, 1)};
  EXPECT_EQ(pe.error(), "region 'k' (wafer 0) instruction 0 (MOD): needs 3 addresses, has 2");
  format::Instr strided = ins(format::SELECT, {0, 0, 0, 0}, 1);
  strided.mutable_addr(3)->add_stride(4);
  pe.code = {strided};
  EXPECT_EQ(pe.error(), "region 'k' (wafer 0) instruction 0 (SELECT): addr[3] has 1 strides but "
                        "only 0 enclosing LOOPs");
  // Every I32-capable op, and F32 on every op, loads.
  for (format::Op op : {format::ADD, format::SUB, format::MUL, format::MAX, format::MIN, format::POW,
                       format::ADD_S, format::SUB_S, format::MUL_S, format::ADD_I, format::MUL_I,
                       format::FILL, format::NEG, format::ABS, format::RELU, format::REDUCE_SUM,
                       format::REDUCE_MAX, format::REDUCE_MIN, format::EQ, format::LT, format::LE,
                       format::GT, format::GE}) {
    pe.code = {typed(ins(op, {0, 0, 0}, 1), format::ELEM_I32)};
    EXPECT_EQ(pe.error(), "") << format::Op_Name(op);
  }
}

} // namespace
