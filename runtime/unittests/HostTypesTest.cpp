// Host dtypes the PEs have no words of (f64, f16, bf16, the narrow and
// unsigned integers): the conversions at the host boundary, in files and in
// the emulator's inputs and outputs.
#include "TestPrograms.h"
#include "onnx_tensor.pb.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <unistd.h>

using namespace wsc::runtime;
using namespace wsc::runtime::test;
namespace format = wsc::format;

namespace {

float fromBits(uint32_t x) {
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

uint32_t toBits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  return x;
}

std::string tempPath(const std::string &name) {
  return ::testing::TempDir() + "wsc-ht-" + std::to_string(::getpid()) + "-" + name;
}

/// A version-1 .npy file as numpy.save writes it: header dict `dict`, padded.
std::string npyBytes(std::string dict, const std::string &data) {
  dict.append((64 - (10 + dict.size() + 1) % 64) % 64, ' ');
  dict += '\n';
  std::string bytes("\x93NUMPY\x01\x00", 8);
  bytes += char(dict.size());
  bytes += char(0);
  return bytes + dict + data;
}

template <typename T> std::string le(std::initializer_list<T> v) {
  std::string s;
  for (T x : v)
    s.append(reinterpret_cast<const char *>(&x), sizeof x);
  return s;
}

void writeTensor(const std::string &path, const wsc::onnxtensor::TensorProto &t) {
  std::ofstream(path, std::ios::binary) << t.SerializeAsString();
}

// --- f16 and bf16 rounding -------------------------------------------------

TEST(Half, RoundsToNearestEven) {
  struct Case {
    float in;
    uint16_t want;
  };
  const float u = std::ldexp(1.0f, -24); // the f16 subnormal unit
  std::vector<Case> cases = {
      {0.0f, 0x0000},
      {-0.0f, 0x8000},
      {1.0f, 0x3c00},
      {-2.0f, 0xc000},
      {0.1f, 0x2e66},
      // Halfway between 1 and 1 + 2^-10: to the even 1.
      {1.0f + std::ldexp(1.0f, -11), 0x3c00},
      // Halfway between 1 + 2^-10 and 1 + 2^-9: to the even 1 + 2^-9.
      {1.0f + 3 * std::ldexp(1.0f, -11), 0x3c02},
      // Just above and below the tie.
      {1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -23), 0x3c01},
      {1.0f + std::ldexp(1.0f, -11) - std::ldexp(1.0f, -23), 0x3c00},
      // The top: 65504 is the largest f16; 65520 is halfway to 2^16, which is
      // the even neighbour, hence inf.
      {65504.0f, 0x7bff},
      {65519.0f, 0x7bff},
      {65520.0f, 0x7c00},
      {-65520.0f, 0xfc00},
      {1e6f, 0x7c00},
      {FLT_MAX, 0x7c00},
      {INFINITY, 0x7c00},
      {-INFINITY, 0xfc00},
      // Subnormals: ties to even there too.
      {u, 0x0001},
      {u / 2, 0x0000},
      {u / 2 * (1 + std::ldexp(1.0f, -15)), 0x0001},
      {1.5f * u, 0x0002},
      {2.5f * u, 0x0002},
      {3.5f * u, 0x0004},
      {-u, 0x8001},
      // Halfway between the largest subnormal and the smallest normal: the even normal.
      {1023.5f * u, 0x0400},
      {std::ldexp(1.0f, -14), 0x0400},
      {1e-40f, 0x0000}, // an f32 subnormal
      {-1e-40f, 0x8000},
  };
  for (const Case &c : cases)
    EXPECT_EQ(floatToHalfBits(c.in), c.want) << c.in;
}

TEST(Half, KeepsNaNAndConvertsBackExactly) {
  for (uint32_t nan : {0x7fc00000u, 0x7f800001u, 0x7fffffffu, 0xffc00000u, 0xff800001u}) {
    uint16_t h = floatToHalfBits(fromBits(nan));
    EXPECT_EQ(h & 0x7c00, 0x7c00) << std::hex << nan;
    EXPECT_NE(h & 0x03ff, 0) << std::hex << nan; // NaN, not inf
    EXPECT_EQ(h >> 15, nan >> 31) << std::hex << nan;
    EXPECT_TRUE(std::isnan(halfBitsToFloat(h)));
  }
  EXPECT_TRUE(std::isnan(roundToFloatType(DType::F16, NAN)));
  // Every f16 converts to f32 and back to itself.
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = halfBitsToFloat(uint16_t(h));
    if (std::isnan(f))
      continue;
    ASSERT_EQ(floatToHalfBits(f), h) << std::hex << h;
  }
  EXPECT_EQ(halfBitsToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(halfBitsToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(halfBitsToFloat(0xfc00), -INFINITY);
  EXPECT_EQ(halfBitsToFloat(0x2e66), 0.0999755859375f);
}

#ifdef __FLT16_MAX__
TEST(Half, AgreesWithTheCompilersFloat16) {
  // Every 4099th f32 and the f32s around every f16 tie.
  auto check = [](uint32_t x) {
    float f = fromBits(x);
    if (std::isnan(f))
      return;
    _Float16 h = (_Float16)f;
    uint16_t want;
    std::memcpy(&want, &h, 2);
    ASSERT_EQ(floatToHalfBits(f), want) << std::hex << x;
  };
  for (uint64_t x = 0; x <= 0xffffffffu; x += 4099)
    check(uint32_t(x));
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    uint32_t tie = toBits((halfBitsToFloat(uint16_t(h)) + halfBitsToFloat(uint16_t(h + 1))) / 2);
    for (uint32_t x : {tie - 1, tie, tie + 1}) {
      check(x);
      check(x | 0x80000000u);
    }
  }
}
#endif

TEST(Bfloat16, RoundsToNearestEven) {
  struct Case {
    uint32_t in;
    uint16_t want;
  };
  std::vector<Case> cases = {
      {toBits(1.0f), 0x3f80},
      {toBits(-0.0f), 0x8000},
      {toBits(3.14159265f), 0x4049},
      {0x3f808000, 0x3f80}, // 1 + 2^-8: halfway, to the even 1
      {0x3f818000, 0x3f82}, // 1 + 3 * 2^-8: halfway, to the even 1 + 2^-6
      {0x3f808001, 0x3f81}, // just above the tie
      {0x3f807fff, 0x3f80}, // just below
      {0x7f7f7fff, 0x7f7f}, // just below halfway from the largest bf16 to inf
      {0x7f7f8000, 0x7f80}, // halfway: the even neighbour is inf
      {toBits(FLT_MAX), 0x7f80},
      {toBits(INFINITY), 0x7f80},
      {toBits(-INFINITY), 0xff80},
      {0x00008000, 0x0000}, // subnormals: a tie to the even 0
      {0x00018000, 0x0002}, // a tie to the even 2
      {0x7fc00000, 0x7fc0}, // NaN stays NaN, quiet
      {0x7f800001, 0x7fc0}, // a payload only in the low bits does not become inf
      {0xff800001, 0xffc0},
  };
  for (const Case &c : cases)
    EXPECT_EQ(floatToBfloat16Bits(fromBits(c.in)), c.want) << std::hex << c.in;
  EXPECT_EQ(bfloat16BitsToFloat(0x4049), 3.140625f);
  EXPECT_EQ(roundToFloatType(DType::BF16, 3.14159265f), 3.140625f);
  EXPECT_TRUE(std::isnan(roundToFloatType(DType::BF16, fromBits(0x7f800001))));
  EXPECT_EQ(roundToFloatType(DType::F32, 3.14159265f), 3.14159265f);
  EXPECT_EQ(roundToFloatType(DType::F64, 0.1f), 0.1f);
}

// --- .npy -------------------------------------------------------------------

TEST(NpyHostTypes, ReadsAndWritesWhatNumpyDoes) {
  // numpy.save of numpy.array(values, dtype) for every integer dtype: read,
  // and written back byte for byte.
  struct Case {
    const char *descr;
    DType dtype;
    std::string data;
    std::vector<int64_t> want;
  };
  std::vector<Case> cases = {
      {"|i1", DType::I8, le<int8_t>({-128, 127, -1}), {-128, 127, -1}},
      {"<i2", DType::I16, le<int16_t>({-32768, 32767, -1}), {-32768, 32767, -1}},
      {"<i4", DType::I32, le<int32_t>({INT32_MIN, INT32_MAX, -1}), {INT32_MIN, INT32_MAX, -1}},
      {"<i8", DType::I64, le<int64_t>({INT64_MIN, INT64_MAX, -1}), {INT64_MIN, INT64_MAX, -1}},
      {"|u1", DType::U8, le<uint8_t>({0, 255, 128}), {0, 255, 128}},
      {"<u2", DType::U16, le<uint16_t>({0, 65535, 32768}), {0, 65535, 32768}},
      {"<u4", DType::U32, le<uint32_t>({0, UINT32_MAX, 1u << 31}), {0, UINT32_MAX, int64_t(1) << 31}},
      {"<u8", DType::U64, le<uint64_t>({0, uint64_t(INT64_MAX), 7}), {0, INT64_MAX, 7}},
  };
  for (const Case &c : cases) {
    std::string bytes = npyBytes(
        fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': (3,), }}", c.descr), c.data);
    Expected<HostArray> a = parseNpy(bytes, "t.npy");
    ASSERT_TRUE(a.ok()) << a.error();
    EXPECT_EQ(a->dtype, c.dtype) << c.descr;
    EXPECT_EQ(a->ints, c.want) << c.descr;
    EXPECT_STREQ(npyDescr(c.dtype), c.descr);
    EXPECT_EQ(encodeNpy(*a), bytes) << c.descr;
  }
  // One-byte types are read with '<' too (numpy writes '|').
  Expected<HostArray> a = parseNpy(
      npyBytes("{'descr': '<u1', 'fortran_order': False, 'shape': (2,), }", "\x01\xff"), "t.npy");
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_EQ(a->dtype, DType::U8);
  EXPECT_EQ(a->ints, (std::vector<int64_t>{1, 255}));
  // Column-major narrow integers.
  a = parseNpy(npyBytes("{'descr': '<i2', 'fortran_order': True, 'shape': (2, 2), }",
                        le<int16_t>({1, 3, 2, -4})),
               "t.npy");
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_EQ(a->ints, (std::vector<int64_t>{1, 2, 3, -4}));
}

TEST(NpyHostTypes, Uint64BeyondInt64IsAnError) {
  std::string bytes = npyBytes("{'descr': '<u8', 'fortran_order': False, 'shape': (2,), }",
                               le<uint64_t>({1, uint64_t(1) << 63}));
  EXPECT_EQ(parseNpy(bytes, "u.npy").error(),
            "u.npy: not a readable .npy file (element 1 of the uint64 array is "
            "9223372036854775808, beyond the int64 range)");
}

TEST(NpyHostTypes, Float16ReadsExactlyAndWritesRounded) {
  // numpy.array([1, -2, 0.1, 65504, inf, -inf, nan, 2**-24], numpy.float16).
  std::string data = le<uint16_t>({0x3c00, 0xc000, 0x2e66, 0x7bff, 0x7c00, 0xfc00, 0x7e00, 0x0001});
  std::string bytes =
      npyBytes("{'descr': '<f2', 'fortran_order': False, 'shape': (2, 4), }", data);
  Expected<HostArray> a = parseNpy(bytes, "h.npy");
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_EQ(a->dtype, DType::F16);
  EXPECT_EQ(a->shape, (std::vector<int64_t>{2, 4}));
  ASSERT_EQ(a->f32.size(), 8u);
  EXPECT_EQ(a->f32[0], 1.0f);
  EXPECT_EQ(a->f32[1], -2.0f);
  EXPECT_EQ(a->f32[2], 0.0999755859375f);
  EXPECT_EQ(a->f32[3], 65504.0f);
  EXPECT_EQ(a->f32[4], INFINITY);
  EXPECT_EQ(a->f32[5], -INFINITY);
  EXPECT_TRUE(std::isnan(a->f32[6]));
  EXPECT_EQ(a->f32[7], std::ldexp(1.0f, -24));
  EXPECT_EQ(encodeNpy(*a), bytes);

  // Writing f16 rounds each f32 to nearest even (inf and NaN kept).
  HostArray h = HostArray::floats(DType::F16, {6},
                                  {0.1f, 1.0f + std::ldexp(1.0f, -11), 65520.0f, -INFINITY, NAN,
                                   1.0f + 3 * std::ldexp(1.0f, -11)});
  std::string w = encodeNpy(h);
  EXPECT_NE(w.find("'descr': '<f2'"), std::string::npos);
  EXPECT_EQ(w.substr(w.size() - 12), le<uint16_t>({0x2e66, 0x3c00, 0x7c00, 0xfc00, 0x7e00, 0x3c02}));
}

TEST(NpyHostTypes, Float64WidensAndBfloat16WritesRoundedF32) {
  HostArray d = HostArray::floats(DType::F64, {3}, {0.1f, -INFINITY, 3.5f});
  std::string w = encodeNpy(d);
  EXPECT_NE(w.find("'descr': '<f8'"), std::string::npos);
  EXPECT_EQ(w.substr(w.size() - 24), le<double>({double(0.1f), -INFINITY, 3.5}));
  Expected<HostArray> back = parseNpy(w, "d.npy");
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(back->dtype, DType::F64);
  EXPECT_EQ(back->f32, d.f32);
  // f64 values are rounded to nearest f32 on reading.
  back = parseNpy(npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }",
                           le<double>({0.1, 1.0 + std::ldexp(1.0, -24) + std::ldexp(1.0, -40)})),
                  "d.npy");
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(back->f32, (std::vector<float>{0.1f, 1.0f + std::ldexp(1.0f, -23)}));

  // numpy has no bf16: a BF16 array is written as f32 holding the bf16 value.
  HostArray b = HostArray::floats(DType::BF16, {3}, {3.14159265f, fromBits(0x3f808000), NAN});
  w = encodeNpy(b);
  EXPECT_NE(w.find("'descr': '<f4'"), std::string::npos);
  back = parseNpy(w, "b.npy");
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(back->dtype, DType::F32);
  EXPECT_EQ(back->f32[0], 3.140625f);
  EXPECT_EQ(back->f32[1], 1.0f);
  EXPECT_TRUE(std::isnan(back->f32[2]));
}

TEST(NpyHostTypes, RoundTripsEveryDtype) {
  std::vector<HostArray> arrays = {
      HostArray::floats(DType::F64, {2}, {0.1f, -3}),
      HostArray::floats(DType::F16, {3}, {1, -0.5f, 65504}),
      HostArray::integers(DType::I8, {2, 2}, {-128, 127, 0, -1}),
      HostArray::integers(DType::I16, {2}, {-32768, 32767}),
      HostArray::integers(DType::U8, {3}, {0, 255, 9}),
      HostArray::integers(DType::U16, {1}, {65535}),
      HostArray::integers(DType::U32, {2}, {UINT32_MAX, 0}),
      HostArray::integers(DType::U64, {2}, {INT64_MAX, 1}),
      HostArray::integers(DType::U8, {0}, {}),
  };
  for (const HostArray &a : arrays) {
    std::string path = tempPath("rt.npy");
    ASSERT_TRUE(writeNpy(path, a).ok()) << dtypeName(a.dtype);
    Expected<HostArray> b = readNpy(path);
    std::remove(path.c_str());
    ASSERT_TRUE(b.ok()) << b.error();
    EXPECT_EQ(b->dtype, a.dtype) << dtypeName(a.dtype);
    EXPECT_EQ(b->shape, a.shape);
    EXPECT_EQ(b->f32, a.f32);
    EXPECT_EQ(b->ints, a.ints);
  }
}

TEST(NpyHostTypes, WriteRefusesIntegersOutsideTheirType) {
  std::string path = tempPath("bad.npy");
  EXPECT_EQ(writeNpy(path, HostArray::integers(DType::U8, {2}, {1, 256})).message(),
            path + ": element 1 = 256 does not fit u8");
  EXPECT_EQ(writeNpy(path, HostArray::integers(DType::I8, {1}, {-129})).message(),
            path + ": element 0 = -129 does not fit i8");
  EXPECT_EQ(writeNpy(path, HostArray::integers(DType::U32, {1}, {-1})).message(),
            path + ": element 0 = -1 does not fit u32");
  EXPECT_FALSE(std::ifstream(path).good()) << "no file on an error";
}

TEST(HostTypes, NamesAndKinds) {
  const char *names[] = {"f32", "i64", "i32", "bool", "f64", "f16", "bf16",
                         "i8",  "i16", "u8",  "u16",  "u32", "u64"};
  for (int t = 0; t <= int(DType::U64); ++t)
    EXPECT_STREQ(dtypeName(DType(t)), names[t]);
  EXPECT_TRUE(isFloatType(DType::BF16));
  EXPECT_FALSE(isFloatType(DType::U8));
  EXPECT_TRUE(isIntegerType(DType::U64));
  EXPECT_FALSE(isIntegerType(DType::Bool));
  EXPECT_FALSE(isIntegerType(DType::F16));
  int64_t lo, hi;
  integerRange(DType::U64, lo, hi);
  EXPECT_EQ(lo, 0);
  EXPECT_EQ(hi, INT64_MAX);
  integerRange(DType::I16, lo, hi);
  EXPECT_EQ(lo, INT16_MIN);
  EXPECT_EQ(hi, INT16_MAX);
}

// --- ONNX .pb ---------------------------------------------------------------

TEST(OnnxHostTypes, ReadsFloat16AndBfloat16) {
  std::string path = tempPath("half.pb");
  struct Case {
    int dataType;
    DType dtype;
    std::vector<uint16_t> bits;
    std::vector<float> want;
  };
  std::vector<Case> cases = {
      {10, DType::F16, {0x3c00, 0xc000, 0x7bff, 0x7c00, 0x0001},
       {1, -2, 65504, INFINITY, std::ldexp(1.0f, -24)}},
      {16, DType::BF16, {0x3f80, 0xc049, 0x7f80, 0xff80, 0x0001},
       {1, -3.140625f, INFINITY, -INFINITY, fromBits(0x00010000)}},
  };
  for (const Case &c : cases) {
    // What onnx.numpy_helper.from_array writes: raw_data, two bytes each.
    wsc::onnxtensor::TensorProto t;
    t.add_dims(5);
    t.set_data_type(c.dataType);
    std::string raw(c.bits.size() * 2, '\0');
    std::memcpy(raw.data(), c.bits.data(), raw.size());
    t.set_raw_data(raw);
    writeTensor(path, t);
    Expected<HostArray> a = readTensorFile(path);
    ASSERT_TRUE(a.ok()) << a.error();
    EXPECT_EQ(a->dtype, c.dtype) << c.dataType;
    EXPECT_EQ(a->f32, c.want) << c.dataType;
    EXPECT_TRUE(a->ints.empty());

    // What onnx.helper.make_tensor writes: the 16-bit patterns in int32_data.
    t.clear_raw_data();
    for (uint16_t b : c.bits)
      t.add_int32_data(b);
    writeTensor(path, t);
    a = readTensorFile(path);
    ASSERT_TRUE(a.ok()) << a.error();
    EXPECT_EQ(a->dtype, c.dtype) << c.dataType;
    EXPECT_EQ(a->f32, c.want) << c.dataType;

    // A pattern must be 16 bits.
    t.set_int32_data(3, 65536);
    writeTensor(path, t);
    EXPECT_EQ(readTensorFile(path).error(),
              fmt::format("{}: element 3 = 65536 is not a valid {} (a 16-bit pattern)", path,
                          c.dataType == 10 ? "FLOAT16" : "BFLOAT16"));
    t.set_int32_data(3, -1);
    writeTensor(path, t);
    EXPECT_NE(readTensorFile(path).error().find("element 3 = -1 is not a valid"),
              std::string::npos);
  }
  // Raw data of a 2-byte type come in whole elements.
  wsc::onnxtensor::TensorProto t;
  t.add_dims(2);
  t.set_data_type(10);
  t.set_raw_data(std::string("\0\x3c\0", 3));
  writeTensor(path, t);
  EXPECT_EQ(readTensorFile(path).error(), path + ": FLOAT16 raw_data size 3 is not a multiple of 2");
  // A NaN pattern stays NaN.
  t.set_raw_data(le<uint16_t>({0x7e00, 0xfe01}));
  writeTensor(path, t);
  Expected<HostArray> a = readTensorFile(path);
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_TRUE(std::isnan(a->f32[0]) && std::isnan(a->f32[1]));
  std::remove(path.c_str());
}

TEST(OnnxHostTypes, ReadsUint32AndUint64) {
  std::string path = tempPath("unsigned.pb");
  wsc::onnxtensor::TensorProto t;
  t.add_dims(3);
  t.set_data_type(12); // UINT32
  t.set_raw_data(le<uint32_t>({0, 1u << 31, UINT32_MAX}));
  writeTensor(path, t);
  Expected<HostArray> a = readTensorFile(path);
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_EQ(a->dtype, DType::U32);
  EXPECT_EQ(a->ints, (std::vector<int64_t>{0, int64_t(1) << 31, UINT32_MAX}));
  // The typed form keeps UINT32 and UINT64 in uint64_data.
  t.clear_raw_data();
  for (uint64_t v : {uint64_t(5), uint64_t(1) << 31, uint64_t(UINT32_MAX)})
    t.add_uint64_data(v);
  writeTensor(path, t);
  a = readTensorFile(path);
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_EQ(a->ints, (std::vector<int64_t>{5, int64_t(1) << 31, UINT32_MAX}));
  t.set_uint64_data(1, uint64_t(1) << 32);
  writeTensor(path, t);
  EXPECT_EQ(readTensorFile(path).error(), path + ": element 1 = 4294967296 is not a valid UINT32");

  t.set_data_type(13); // UINT64
  writeTensor(path, t);
  a = readTensorFile(path);
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_EQ(a->dtype, DType::U64);
  EXPECT_EQ(a->ints, (std::vector<int64_t>{5, int64_t(1) << 32, UINT32_MAX}));
  // A UINT64 beyond int64 is refused, raw or typed.
  t.set_uint64_data(2, uint64_t(1) << 63);
  writeTensor(path, t);
  EXPECT_EQ(readTensorFile(path).error(),
            path + ": element 2 = 9223372036854775808 is not a valid UINT64 (the host reads "
                   "integers up to 2^63 - 1)");
  t.clear_uint64_data();
  t.set_raw_data(le<uint64_t>({uint64_t(INT64_MAX), UINT64_MAX, 0}));
  writeTensor(path, t);
  EXPECT_EQ(readTensorFile(path).error(),
            path + ": element 1 = 18446744073709551615 is not a valid UINT64 (the host reads "
                   "integers up to 2^63 - 1)");
  t.set_raw_data(le<uint64_t>({uint64_t(INT64_MAX), 1, 0}));
  writeTensor(path, t);
  a = readTensorFile(path);
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_EQ(a->ints, (std::vector<int64_t>{INT64_MAX, 1, 0}));
  std::remove(path.c_str());
}

TEST(OnnxHostTypes, DoubleIsF64RoundedToF32RawOrTyped) {
  std::string path = tempPath("double.pb");
  wsc::onnxtensor::TensorProto t;
  t.add_dims(2);
  t.set_data_type(11);
  t.set_raw_data(le<double>({0.1, -1e300}));
  writeTensor(path, t);
  Expected<HostArray> a = readTensorFile(path);
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_EQ(a->dtype, DType::F64);
  EXPECT_EQ(a->f32, (std::vector<float>{0.1f, -INFINITY}));
  t.clear_raw_data();
  t.add_double_data(0.1);
  t.add_double_data(2.5);
  writeTensor(path, t);
  a = readTensorFile(path);
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_EQ(a->f32, (std::vector<float>{0.1f, 2.5f}));
  std::remove(path.c_str());
}

// --- the emulator's boundary ------------------------------------------------

/// One PE; input `in` of dtype `inType` at SRAM 0, and one output per entry
/// of `outs` reading the same words (no code: the words stay as written).
format::Program sameWords(format::DType inType, std::vector<std::pair<std::string, format::DType>> outs,
                         int64_t n) {
  format::Program p = makeProgram(1, 1);
  addRegion(p, "k", 0, 0, 1, 1);
  addPiece(addTensor(p, false, "in", inType, {n}), 0, 0, 0, 0, uint32_t(n));
  for (const auto &[name, t] : outs)
    addPiece(addTensor(p, true, name, t, {n}), 0, 0, 0, 0, uint32_t(n));
  return p;
}

TEST(EmulatorHostTypes, FloatInputsAreF32WordsAndOutputsRoundToTheirType) {
  format::Program p = sameWords(format::F16, {{"words", format::F32}, {"h", format::F16},
                                            {"b", format::BF16}, {"d", format::F64}},
                               5);
  const float tie16 = 1.0f + std::ldexp(1.0f, -11), tie16b = 1.0f + 3 * std::ldexp(1.0f, -11);
  // An F16 input takes an f32 array: its words are the f32s, not rounded.
  std::vector<float> x = {0.1f, tie16, 70000.0f, tie16b, -INFINITY};
  RunResult res = runProgram(p, {{"in", HostArray::floats({5}, x)}});
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  EXPECT_EQ(res.out("words"), x);
  const HostArray &h = res.outputs.at("h");
  EXPECT_EQ(h.dtype, DType::F16);
  EXPECT_EQ(h.f32, (std::vector<float>{0.0999755859375f, 1.0f, INFINITY, 1.0f + std::ldexp(1.0f, -9),
                                       -INFINITY}));
  const HostArray &b = res.outputs.at("b");
  EXPECT_EQ(b.dtype, DType::BF16);
  EXPECT_EQ(b.f32, (std::vector<float>{fromBits(0x3dcd0000), 1.0f, 70144.0f, 1.0f, -INFINITY}));
  const HostArray &d = res.outputs.at("d");
  EXPECT_EQ(d.dtype, DType::F64);
  EXPECT_EQ(d.f32, x);

  // NaN stays NaN through f16 and bf16 outputs.
  res = runProgram(p, {{"in", HostArray::floats({5}, {NAN, 0, 0, 0, 0})}});
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  EXPECT_TRUE(std::isnan(res.outputs.at("h").f32[0]));
  EXPECT_TRUE(std::isnan(res.outputs.at("b").f32[0]));

  // F64, F16 and BF16 arrays go to any float input; f64 data were rounded to
  // f32 when read.
  for (DType t : {DType::F64, DType::F16, DType::BF16}) {
    res = runProgram(p, {{"in", HostArray::floats(t, {5}, {1, 2, 3, 4, 5})}});
    ASSERT_TRUE(res.status.ok()) << res.status.message();
    EXPECT_EQ(res.out("words"), (std::vector<float>{1, 2, 3, 4, 5}));
  }
  format::Program q = sameWords(format::F32, {{"y", format::F32}}, 2);
  res = runProgram(q, {{"in", HostArray::floats(DType::F16, {2}, {0.5f, -1})}});
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  EXPECT_EQ(res.out("y"), (std::vector<float>{0.5f, -1}));
  EXPECT_EQ(res.outputs.at("y").dtype, DType::F32);
}

TEST(EmulatorHostTypes, IntegerInputsAreInt32WordsAndOutputsMustFit) {
  format::Program p = sameWords(format::U8, {{"u8", format::U8}, {"w", format::I32}, {"u64", format::U64},
                                           {"i16", format::I16}},
                               3);
  // Any integer array: i64, u8, u64, i8.
  for (DType t : {DType::I64, DType::U8, DType::U64, DType::I8, DType::I32}) {
    std::vector<int64_t> v = t == DType::I8 ? std::vector<int64_t>{0, 127, 7}
                                            : std::vector<int64_t>{0, 255, 7};
    RunResult res = runProgram(p, {{"in", HostArray::integers(t, {3}, v)}});
    ASSERT_TRUE(res.status.ok()) << res.status.message();
    EXPECT_EQ(res.outputs.at("u8").dtype, DType::U8);
    EXPECT_EQ(res.outputs.at("u8").ints, v);
    EXPECT_EQ(res.outputs.at("w").ints, v);
    EXPECT_EQ(res.outputs.at("u64").dtype, DType::U64);
    EXPECT_EQ(res.outputs.at("u64").ints, v);
    EXPECT_EQ(res.outputs.at("i16").ints, v);
  }
}

TEST(EmulatorHostTypes, AnOutputWordOutsideItsTypeIsAnError) {
  // The words 300, -1 and 2^31 - 1 read back as outputs of every integer type.
  format::Program p = makeProgram(1, 1);
  format::Region *r = addRegion(p, "k", 0, 0, 1, 1);
  format::SramInit *init = r->add_init();
  init->set_data(le<int32_t>({300, -1, INT32_MAX}));
  struct Case {
    format::DType type;
    const char *name;
    uint32_t offset, count;
    std::string error; // "" = fits
  };
  std::vector<Case> cases = {
      {format::U8, "a", 0, 1, "output 'a': element 0 = 300 does not fit u8"},
      {format::I8, "b", 0, 1, "output 'b': element 0 = 300 does not fit i8"},
      {format::U16, "c", 0, 1, ""},
      {format::U16, "d", 4, 1, "output 'd': element 0 = -1 does not fit u16"},
      {format::I16, "e", 4, 1, ""},
      {format::I16, "f", 8, 1, "output 'f': element 0 = 2147483647 does not fit i16"},
      {format::U32, "g", 0, 3, "output 'g': element 1 = -1 does not fit u32"},
      {format::U64, "h", 0, 3, "output 'h': element 1 = -1 does not fit u64"},
      {format::U32, "i", 8, 1, ""},
      {format::I8, "j", 4, 1, ""},
  };
  for (const Case &c : cases) {
    format::Program q = p;
    addPiece(addTensor(q, true, c.name, c.type, {c.count}), 0, 0, c.offset, 0, c.count);
    for (unsigned threads : {1u, 2u}) {
      RunResult res = runProgram(q, {}, threads);
      if (c.error.empty()) {
        EXPECT_TRUE(res.status.ok()) << c.name << ": " << res.status.message();
      } else {
        EXPECT_EQ(res.status.message(), c.error);
      }
    }
  }
  // The error is the first bad output's, in the program's order, and a failed
  // run has no outputs.
  format::Program q = p;
  addPiece(addTensor(q, true, "fine", format::I32, {3}), 0, 0, 0, 0, 3);
  addPiece(addTensor(q, true, "first", format::U8, {3}), 0, 0, 0, 0, 3);
  addPiece(addTensor(q, true, "second", format::I8, {1}), 0, 0, 0, 0, 1);
  Expected<std::unique_ptr<Emulator>> e = Emulator::create(q);
  ASSERT_TRUE(e.ok()) << e.error();
  EXPECT_EQ((*e)->run().message(), "output 'first': element 0 = 300 does not fit u8");
  EXPECT_EQ((*e)->output("fine").error(), "output 'fine': the program has not run successfully");
}

TEST(EmulatorHostTypes, InputsAreCheckedAgainstTheirType) {
  format::Program p = makeProgram(1, 1);
  addRegion(p, "k", 0, 0, 1, 1);
  addPiece(addTensor(p, false, "h", format::F16, {2}), 0, 0, 0, 0, 2);
  addPiece(addTensor(p, false, "u", format::U8, {2}), 0, 0, 8, 0, 2);
  addPiece(addTensor(p, false, "i", format::I8, {2}), 0, 0, 16, 0, 2);
  addPiece(addTensor(p, false, "u32", format::U32, {2}), 0, 0, 24, 0, 2);
  addPiece(addTensor(p, false, "u64", format::U64, {2}), 0, 0, 32, 0, 2);
  addPiece(addTensor(p, false, "c", format::BOOL, {2}), 0, 0, 40, 0, 2);
  Expected<std::unique_ptr<Emulator>> e = Emulator::create(p);
  ASSERT_TRUE(e.ok()) << e.error();
  Emulator &emu = **e;
  // Floats take floats only, integers integers only, bools bools only.
  EXPECT_EQ(emu.setInput("h", HostArray::integers(DType::I64, {2}, {1, 2})).message(),
            "input 'h': dtype i64 given, the program wants f16");
  EXPECT_EQ(emu.setInput("h", HostArray::integers(DType::Bool, {2}, {1, 0})).message(),
            "input 'h': dtype bool given, the program wants f16");
  EXPECT_EQ(emu.setInput("u", HostArray::floats({2}, {1, 2})).message(),
            "input 'u': dtype f32 given, the program wants u8");
  EXPECT_EQ(emu.setInput("u", HostArray::floats(DType::F16, {2}, {1, 2})).message(),
            "input 'u': dtype f16 given, the program wants u8");
  EXPECT_EQ(emu.setInput("u", HostArray::integers(DType::Bool, {2}, {1, 0})).message(),
            "input 'u': dtype bool given, the program wants u8");
  EXPECT_EQ(emu.setInput("c", HostArray::integers(DType::U8, {2}, {1, 0})).message(),
            "input 'c': dtype u8 given, the program wants bool");
  // Values must fit the input's type...
  EXPECT_EQ(emu.setInput("u", HostArray::integers(DType::I64, {2}, {1, 256})).message(),
            "input 'u': element 1 = 256 does not fit u8");
  EXPECT_EQ(emu.setInput("u", HostArray::integers(DType::I32, {2}, {-1, 0})).message(),
            "input 'u': element 0 = -1 does not fit u8");
  EXPECT_EQ(emu.setInput("i", HostArray::integers(DType::U8, {2}, {0, 128})).message(),
            "input 'i': element 1 = 128 does not fit i8");
  // ... and the int32 word: u32 and u64 values of 2^31 and more do not.
  EXPECT_EQ(emu.setInput("u32", HostArray::integers(DType::U32, {2}, {0, int64_t(1) << 31}))
                .message(),
            "input 'u32': element 1 = 2147483648 does not fit the 32-bit SRAM word");
  EXPECT_EQ(emu.setInput("u64", HostArray::integers(DType::U64, {2}, {int64_t(1) << 40, 0}))
                .message(),
            "input 'u64': element 0 = 1099511627776 does not fit the 32-bit SRAM word");
  EXPECT_EQ(emu.setInput("u64", HostArray::integers(DType::I64, {2}, {-1, 0})).message(),
            "input 'u64': element 0 = -1 does not fit u64");

  EXPECT_TRUE(emu.setInput("h", HostArray::floats(DType::F64, {2}, {0.1f, 2})).ok());
  EXPECT_TRUE(emu.setInput("u", HostArray::integers(DType::U8, {2}, {0, 255})).ok());
  EXPECT_TRUE(emu.setInput("i", HostArray::integers(DType::I64, {2}, {-128, 127})).ok());
  EXPECT_TRUE(emu.setInput("u32", HostArray::integers(DType::U32, {2}, {0, INT32_MAX})).ok());
  EXPECT_TRUE(emu.setInput("u64", HostArray::integers(DType::U64, {2}, {INT32_MAX, 0})).ok());
  EXPECT_TRUE(emu.setInput("c", HostArray::integers(DType::Bool, {2}, {1, 0})).ok());
  EXPECT_TRUE(emu.run().ok());
}

} // namespace

TEST(Npy, AHeaderPast64KiBTakesVersion2) {
  // 30,000 dimensions of 1: a shape an ONNX tensor file may hold, whose
  // header does not fit version 1.0's 16-bit length.
  HostArray a = HostArray::floats(std::vector<int64_t>(30000, 1), {2.5f});
  std::string bytes = encodeNpy(a);
  EXPECT_EQ(bytes[6], '\x02') << "version 2.0";
  Expected<HostArray> back = parseNpy(bytes, "wide.npy");
  ASSERT_TRUE(bool(back)) << back.error();
  EXPECT_EQ(back->shape, a.shape);
  EXPECT_EQ(back->f32, a.f32);
  EXPECT_EQ(encodeNpy(HostArray::floats({2}, {1, 2}))[6], '\x01') << "a short header stays 1.0";
}
