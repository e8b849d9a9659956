// Host file formats: .npy and ONNX TensorProto .pb, and the report JSON.
#include "TestPrograms.h"
#include "onnx_tensor.pb.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <unistd.h>

using namespace wsc::runtime;
using namespace wsc::runtime::test;
namespace format = wsc::format;

namespace {

std::string tempPath(const std::string &name) {
  return ::testing::TempDir() + "wsc-rt-" + std::to_string(::getpid()) + "-" + name;
}

/// A version-1 .npy file with header dict `dict` (padded as numpy pads it) and `data`.
std::string npyBytes(std::string dict, const std::string &data) {
  dict.append((64 - (10 + dict.size() + 1) % 64) % 64, ' ');
  dict += '\n';
  std::string bytes("\x93NUMPY\x01\x00", 8);
  bytes += char(dict.size());
  bytes += char(0);
  return bytes + dict + data;
}

void writeTensor(const std::string &path, const wsc::onnxtensor::TensorProto &t) {
  std::ofstream(path, std::ios::binary) << t.SerializeAsString();
}

TEST(Npy, RoundTripsEveryDtype) {
  std::vector<HostArray> arrays = {
      HostArray::floats({2, 3}, {1, 2, 3, 4.5f, -5, 6}),
      HostArray::floats({}, {3.25f}),
      HostArray::floats({0}, {}),
      HostArray::integers(DType::I64, {3}, {-1, int64_t(1) << 40, 7}),
      HostArray::integers(DType::I32, {1, 2, 1}, {-7, 9}),
      HostArray::integers(DType::Bool, {2, 3}, {1, 0, 0, 1, 1, 0}),
      HostArray::integers(DType::Bool, {}, {1}),
      HostArray::integers(DType::Bool, {0, 2}, {}),
  };
  for (const HostArray &a : arrays) {
    std::string bytes = encodeNpy(a);
    EXPECT_EQ((bytes.find('\n') + 1) % 64, 0u) << "data must start 64-byte aligned";
    Expected<HostArray> b = parseNpy(bytes, "t.npy");
    ASSERT_TRUE(b.ok()) << b.error();
    EXPECT_EQ(b->dtype, a.dtype);
    EXPECT_EQ(b->shape, a.shape);
    EXPECT_EQ(b->f32, a.f32);
    EXPECT_EQ(b->ints, a.ints);
  }
}

TEST(Npy, ReadsFloat64AndFortranOrder) {
  std::string header = "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }";
  header.append(64 - (10 + header.size() + 1) % 64, ' ');
  header += '\n';
  std::string bytes("\x93NUMPY\x01\x00", 8);
  bytes += char(header.size());
  bytes += char(0);
  bytes += header;
  // Column-major [[0,1,2],[3,4,5]].
  for (double v : {0.0, 3.0, 1.0, 4.0, 2.0, 5.0})
    bytes.append(reinterpret_cast<const char *>(&v), 8);
  Expected<HostArray> a = parseNpy(bytes, "f.npy");
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_EQ(a->dtype, DType::F64);
  EXPECT_EQ(a->f32, (std::vector<float>{0, 1, 2, 3, 4, 5}));
}

TEST(Npy, ReadsAndWritesNumpyBool) {
  // What numpy.save writes for numpy.array([[True, False, True], [False, False, True]]).
  std::string bytes = npyBytes("{'descr': '|b1', 'fortran_order': False, 'shape': (2, 3), }",
                               std::string("\1\0\1\0\0\1", 6));
  Expected<HostArray> a = parseNpy(bytes, "b.npy");
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_EQ(a->dtype, DType::Bool);
  EXPECT_EQ(a->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a->ints, (std::vector<int64_t>{1, 0, 1, 0, 0, 1}));
  EXPECT_TRUE(a->f32.empty());
  EXPECT_STREQ(dtypeName(a->dtype), "bool");
  // Written back byte for byte as numpy would (the same header and data).
  EXPECT_EQ(encodeNpy(*a), bytes);

  // Column-major bools.
  a = parseNpy(npyBytes("{'descr': '|b1', 'fortran_order': True, 'shape': (2, 3), }",
                        std::string("\1\0\1\0\0\1", 6)),
               "f.npy");
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_EQ(a->ints, (std::vector<int64_t>{1, 1, 0, 0, 0, 1}));

  // A nonzero element is written as 1.
  std::string w = encodeNpy(HostArray::integers(DType::Bool, {3}, {0, 5, -1}));
  EXPECT_NE(w.find("'descr': '|b1'"), std::string::npos);
  EXPECT_EQ(w.substr(w.size() - 3), std::string("\0\1\1", 3));

  std::string path = tempPath("bool.npy");
  ASSERT_TRUE(writeNpy(path, HostArray::integers(DType::Bool, {4}, {0, 1, 1, 0})).ok());
  a = readNpy(path);
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_EQ(a->dtype, DType::Bool);
  EXPECT_EQ(a->ints, (std::vector<int64_t>{0, 1, 1, 0}));
  std::remove(path.c_str());
}

TEST(Npy, RejectsBoolBytesOtherThan0And1) {
  std::string bytes = npyBytes("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
                               std::string("\1\2\0", 3));
  EXPECT_EQ(parseNpy(bytes, "bad.npy").error(),
            "bad.npy: not a readable .npy file (element 1 of the bool array is byte 2, not 0 or 1)");
  std::string path = tempPath("badbool.npy");
  ASSERT_TRUE(writeFileAtomic(path, bytes).ok());
  EXPECT_NE(readTensorFile(path).error().find(path + ": not a readable .npy file (element 1"),
            std::string::npos);
  std::remove(path.c_str());
  // One byte per element: a short file is truncated.
  EXPECT_NE(parseNpy(bytes.substr(0, bytes.size() - 1), "t.npy").error().find("2 data bytes"),
            std::string::npos);
}

TEST(Npy, RejectsGarbageAndTruncation) {
  EXPECT_NE(parseNpy("hello", "g.npy").error().find("g.npy: not a readable .npy file"),
            std::string::npos);
  std::string bytes = encodeNpy(HostArray::floats({4}, {1, 2, 3, 4}));
  EXPECT_NE(parseNpy(bytes.substr(0, bytes.size() - 1), "t.npy").error().find("data bytes"),
            std::string::npos);
  std::string c8 = bytes;
  c8.replace(c8.find("<f4"), 3, "<c8");
  EXPECT_EQ(parseNpy(c8, "c.npy").error(),
            "c.npy: not a readable .npy file (dtype '<c8'; float16/32/64, int8/16/32/64, "
            "uint8/16/32/64 and bool are supported)");
  std::string big = bytes;
  big.replace(big.find("<f4"), 3, ">f4");
  EXPECT_NE(parseNpy(big, "b.npy").error().find("dtype '>f4'"), std::string::npos);
}

TEST(Npy, WriteIsAtomic) {
  std::string path = tempPath("out.npy");
  ASSERT_TRUE(writeNpy(path, HostArray::floats({2}, {1, 2})).ok());
  Expected<HostArray> a = readNpy(path);
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_EQ(a->f32, (std::vector<float>{1, 2}));
  std::remove(path.c_str());
  EXPECT_FALSE(writeNpy("/nonexistent-dir/x.npy", *a).ok());
}

TEST(OnnxTensor, ReadsTypedAndRawData) {
  wsc::onnxtensor::TensorProto t;
  t.add_dims(2);
  t.add_dims(2);
  t.set_data_type(1);
  for (float v : {1.f, 2.f, 3.f, 4.f})
    t.add_float_data(v);
  std::string path = tempPath("t.pb");
  {
    std::ofstream(path, std::ios::binary) << t.SerializeAsString();
  }
  Expected<HostArray> a = readTensorFile(path);
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_EQ(a->shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(a->f32, (std::vector<float>{1, 2, 3, 4}));

  wsc::onnxtensor::TensorProto raw;
  raw.add_dims(3);
  raw.set_data_type(7);
  int64_t ints[] = {5, -6, int64_t(1) << 33};
  raw.set_raw_data(std::string(reinterpret_cast<const char *>(ints), sizeof ints));
  {
    std::ofstream(path, std::ios::binary) << raw.SerializeAsString();
  }
  a = readTensorFile(path);
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_EQ(a->dtype, DType::I64);
  EXPECT_EQ(a->ints, (std::vector<int64_t>{5, -6, int64_t(1) << 33}));

  raw.set_data_type(8); // STRING
  {
    std::ofstream(path, std::ios::binary) << raw.SerializeAsString();
  }
  EXPECT_NE(readTensorFile(path).error().find("ONNX data_type 8 unsupported"), std::string::npos);
  raw.set_data_type(7);
  raw.add_dims(2);
  {
    std::ofstream(path, std::ios::binary) << raw.SerializeAsString();
  }
  EXPECT_NE(readTensorFile(path).error().find("3 elements for dims [3, 2]"), std::string::npos);
  std::remove(path.c_str());
  EXPECT_NE(readTensorFile("x.txt").error().find("unknown tensor file type"), std::string::npos);
}

TEST(OnnxTensor, ReadsBool) {
  std::string path = tempPath("bool.pb");
  // What onnx.numpy_helper.from_array writes for a bool array: raw_data, one byte each.
  wsc::onnxtensor::TensorProto raw;
  raw.add_dims(2);
  raw.add_dims(2);
  raw.set_data_type(9);
  raw.set_raw_data(std::string("\1\0\0\1", 4));
  writeTensor(path, raw);
  Expected<HostArray> a = readTensorFile(path);
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_EQ(a->dtype, DType::Bool);
  EXPECT_EQ(a->shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(a->ints, (std::vector<int64_t>{1, 0, 0, 1}));

  // The typed form keeps bools in int32_data.
  wsc::onnxtensor::TensorProto typed;
  typed.add_dims(3);
  typed.set_data_type(9);
  for (int v : {0, 1, 1})
    typed.add_int32_data(v);
  writeTensor(path, typed);
  a = readTensorFile(path);
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_EQ(a->dtype, DType::Bool);
  EXPECT_EQ(a->ints, (std::vector<int64_t>{0, 1, 1}));

  // Neither may hold anything but 0 and 1; the error names the file and the type.
  raw.set_raw_data(std::string("\1\0\7\1", 4));
  writeTensor(path, raw);
  EXPECT_EQ(readTensorFile(path).error(), path + ": element 2 = 7 is not a valid BOOL (0 or 1)");
  typed.set_int32_data(0, -1);
  writeTensor(path, typed);
  EXPECT_EQ(readTensorFile(path).error(), path + ": element 0 = -1 is not a valid BOOL (0 or 1)");
  // The element count is checked as for every type.
  raw.set_raw_data(std::string("\1\0\1", 3));
  writeTensor(path, raw);
  EXPECT_EQ(readTensorFile(path).error(), path + ": 3 elements for dims [2, 2]");
  std::remove(path.c_str());
}

TEST(OnnxTensor, NarrowIntegersKeepTheirType) {
  std::string path = tempPath("narrow.pb");
  struct Case {
    int dataType;
    DType dtype;
    std::string raw;
    std::vector<int64_t> want;
  };
  std::vector<Case> cases = {
      {2, DType::U8, std::string("\x00\x7f\xff", 3), {0, 127, 255}},
      {3, DType::I8, std::string("\x80\x7f\xff", 3), {-128, 127, -1}},
      {4, DType::U16, std::string("\x01\x00\xff\xff\x00\x80", 6), {1, 65535, 32768}},
      {5, DType::I16, std::string("\x01\x00\xff\xff\x00\x80", 6), {1, -1, -32768}},
  };
  for (const Case &c : cases) {
    wsc::onnxtensor::TensorProto t;
    t.add_dims(3);
    t.set_data_type(c.dataType);
    t.set_raw_data(c.raw);
    writeTensor(path, t);
    Expected<HostArray> a = readTensorFile(path);
    ASSERT_TRUE(a.ok()) << a.error();
    EXPECT_EQ(a->dtype, c.dtype) << c.dataType;
    EXPECT_EQ(a->ints, c.want) << c.dataType;

    // The same values in int32_data.
    t.clear_raw_data();
    for (int64_t v : c.want)
      t.add_int32_data(int32_t(v));
    writeTensor(path, t);
    a = readTensorFile(path);
    ASSERT_TRUE(a.ok()) << a.error();
    EXPECT_EQ(a->ints, c.want) << c.dataType;
  }
  // A typed value outside its type is refused, naming the type.
  wsc::onnxtensor::TensorProto t;
  t.add_dims(2);
  t.set_data_type(2);
  t.add_int32_data(3);
  t.add_int32_data(256);
  writeTensor(path, t);
  EXPECT_EQ(readTensorFile(path).error(), path + ": element 1 = 256 is not a valid UINT8");
  // Raw data of a 2-byte type must come in whole elements.
  t.clear_int32_data();
  t.set_data_type(5);
  t.set_raw_data(std::string("\1\0\2", 3));
  writeTensor(path, t);
  EXPECT_EQ(readTensorFile(path).error(),
            path + ": INT16 raw_data size 3 is not a multiple of 2");
  std::remove(path.c_str());
}

TEST(Report, JsonHasTheAgreedFields) {
  format::Program p = makeProgram(2, 1);
  p.set_tokens(4);
  *addRegion(p, "s", 0, 0, 1, 1)->add_code() = send(0, 0, 4);
  *addRegion(p, "r", 1, 0, 1, 1)->add_code() = recv(0, 0, 4);
  routeEast(p, 0, 0, 1, 0);
  RunResult res = runProgram(p);
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  nlohmann::json j = nlohmann::json::parse(reportJson(res.report));
  EXPECT_EQ(j["cycles"], 6);
  EXPECT_DOUBLE_EQ(j["tokens_per_s"].get<double>(), 4 * 1e9 / 6);
  EXPECT_EQ(j["wafers"], 1);
  EXPECT_EQ(j["pes_active"], 2);
  EXPECT_TRUE(j["wall_s"].is_number());
  ASSERT_EQ(j["kernels"].size(), 2u);
  EXPECT_EQ(j["kernels"][1]["name"], "r");
  EXPECT_EQ(j["kernels"][1]["wafer"], 0);
  EXPECT_NEAR(j["kernels"][0]["busy_pct"].get<double>(), 100.0 * 4 / 6, 1e-9);
  EXPECT_NEAR(j["links"]["max_utilization"].get<double>(), 4.0 / 6, 1e-9);
  EXPECT_NEAR(j["links"]["mean_utilization"].get<double>(), 4.0 / 6, 1e-9);
}

} // namespace
