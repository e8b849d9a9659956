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
namespace wafer = wsc::wafer;

namespace {

std::string tempPath(const std::string &name) {
  return ::testing::TempDir() + "wsc-rt-" + std::to_string(::getpid()) + "-" + name;
}

TEST(Npy, RoundTripsEveryDtype) {
  std::vector<HostArray> arrays = {
      HostArray::floats({2, 3}, {1, 2, 3, 4.5f, -5, 6}),
      HostArray::floats({}, {3.25f}),
      HostArray::floats({0}, {}),
      HostArray::integers(DType::I64, {3}, {-1, int64_t(1) << 40, 7}),
      HostArray::integers(DType::I32, {1, 2, 1}, {-7, 9}),
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
  EXPECT_EQ(a->dtype, DType::F32);
  EXPECT_EQ(a->f32, (std::vector<float>{0, 1, 2, 3, 4, 5}));
}

TEST(Npy, RejectsGarbageAndTruncation) {
  EXPECT_NE(parseNpy("hello", "g.npy").error().find("g.npy: not a readable .npy file"),
            std::string::npos);
  std::string bytes = encodeNpy(HostArray::floats({4}, {1, 2, 3, 4}));
  EXPECT_NE(parseNpy(bytes.substr(0, bytes.size() - 1), "t.npy").error().find("data bytes"),
            std::string::npos);
  std::string u8 = bytes;
  u8.replace(u8.find("<f4"), 3, "|u1");
  EXPECT_NE(parseNpy(u8, "u.npy").error().find("dtype '|u1'"), std::string::npos);
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

  raw.set_data_type(10); // FLOAT16
  {
    std::ofstream(path, std::ios::binary) << raw.SerializeAsString();
  }
  EXPECT_NE(readTensorFile(path).error().find("ONNX data_type 10 unsupported"), std::string::npos);
  raw.set_data_type(7);
  raw.add_dims(2);
  {
    std::ofstream(path, std::ios::binary) << raw.SerializeAsString();
  }
  EXPECT_NE(readTensorFile(path).error().find("3 elements for dims [3, 2]"), std::string::npos);
  std::remove(path.c_str());
  EXPECT_NE(readTensorFile("x.txt").error().find("unknown tensor file type"), std::string::npos);
}

TEST(Report, JsonHasTheAgreedFields) {
  wafer::Program p = makeProgram(2, 1);
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
