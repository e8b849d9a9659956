// Reading ONNX TensorProto .pb files (ONNX test-data format).
#include "wsc/runtime/HostArray.h"

#include "onnx_tensor.pb.h"

#include <fmt/format.h>

#include <climits>
#include <cstring>

namespace wsc::runtime {
namespace {

// ONNX TensorProto.DataType values.
enum : int { kFloat = 1, kInt32 = 6, kInt64 = 7, kDouble = 11 };

template <typename T> void fromRaw(const std::string &raw, size_t n, std::vector<T> &out) {
  out.resize(n);
  std::memcpy(out.data(), raw.data(), n * sizeof(T));
}

} // namespace

Expected<HostArray> readOnnxTensor(const std::string &path) {
  Expected<std::string> bytes = readFileBytes(path);
  if (!bytes)
    return bytes.status();
  onnxtensor::TensorProto t;
  if (bytes->size() > size_t(INT_MAX) || !t.ParseFromArray(bytes->data(), int(bytes->size())))
    return Status::failure(fmt::format("{}: not an ONNX TensorProto", path));
  HostArray a;
  uint64_t n = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || __builtin_mul_overflow(n, uint64_t(d), &n))
      return Status::failure(fmt::format("{}: bad dims", path));
    a.shape.push_back(d);
  }
  size_t width;
  switch (t.data_type()) {
  case kFloat:
    a.dtype = DType::F32;
    width = 4;
    break;
  case kDouble:
    a.dtype = DType::F32;
    width = 8;
    break;
  case kInt32:
    a.dtype = DType::I32;
    width = 4;
    break;
  case kInt64:
    a.dtype = DType::I64;
    width = 8;
    break;
  default:
    return Status::failure(fmt::format(
        "{}: ONNX data_type {} unsupported (FLOAT, DOUBLE, INT32 and INT64 are)", path,
        t.data_type()));
  }
  const std::string &raw = t.raw_data();
  auto count = [&](uint64_t have) -> Status {
    if (have != n)
      return Status::failure(fmt::format("{}: {} elements for dims {}", path, have,
                                         shapeString(a.shape)));
    return Status::success();
  };
  if (!raw.empty() || n == 0) {
    if (raw.size() % width)
      return Status::failure(fmt::format("{}: raw_data size {} is not a multiple of {}", path,
                                         raw.size(), width));
    if (Status s = count(raw.size() / width); !s)
      return s;
    if (t.data_type() == kFloat) {
      fromRaw(raw, n, a.f32);
    } else if (t.data_type() == kDouble) {
      std::vector<double> d;
      fromRaw(raw, n, d);
      a.f32.assign(d.begin(), d.end());
    } else if (t.data_type() == kInt32) {
      std::vector<int32_t> v;
      fromRaw(raw, n, v);
      a.ints.assign(v.begin(), v.end());
    } else {
      fromRaw(raw, n, a.ints);
    }
    return a;
  }
  if (t.data_type() == kFloat) {
    if (Status s = count(t.float_data_size()); !s)
      return s;
    a.f32.assign(t.float_data().begin(), t.float_data().end());
  } else if (t.data_type() == kInt32) {
    if (Status s = count(t.int32_data_size()); !s)
      return s;
    a.ints.assign(t.int32_data().begin(), t.int32_data().end());
  } else if (t.data_type() == kInt64) {
    if (Status s = count(t.int64_data_size()); !s)
      return s;
    a.ints.assign(t.int64_data().begin(), t.int64_data().end());
  } else {
    return Status::failure(fmt::format("{}: DOUBLE tensors must use raw_data", path));
  }
  return a;
}

Expected<HostArray> readTensorFile(const std::string &path) {
  auto endsWith = [&](const char *suffix) {
    size_t n = std::strlen(suffix);
    return path.size() >= n && path.compare(path.size() - n, n, suffix) == 0;
  };
  if (endsWith(".npy"))
    return readNpy(path);
  if (endsWith(".pb"))
    return readOnnxTensor(path);
  return Status::failure(fmt::format("{}: unknown tensor file type (use .npy or .pb)", path));
}

} // namespace wsc::runtime
