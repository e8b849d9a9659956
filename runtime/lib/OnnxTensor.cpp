// Reading ONNX TensorProto .pb files (ONNX test-data format).
#include "wsc/runtime/HostArray.h"

#include "onnx_tensor.pb.h"

#include <fmt/format.h>

#include <climits>
#include <cstdint>
#include <cstring>

namespace wsc::runtime {
namespace {

// ONNX TensorProto.DataType values.
enum : int {
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kBool = 9,
  kDouble = 11,
};

/// How a supported ONNX element type is read: its host dtype, its width in
/// raw_data, and the range of its values (checked for the typed int32_data,
/// which ONNX uses for every integer type narrower than 64 bits and for BOOL).
struct OnnxType {
  const char *name;
  DType dtype;
  size_t width;
  int64_t lo, hi;
};

const OnnxType *onnxType(int dataType) {
  static const OnnxType kFloatT{"FLOAT", DType::F32, 4, 0, 0};
  static const OnnxType kDoubleT{"DOUBLE", DType::F32, 8, 0, 0};
  static const OnnxType kInt32T{"INT32", DType::I32, 4, INT32_MIN, INT32_MAX};
  static const OnnxType kInt64T{"INT64", DType::I64, 8, INT64_MIN, INT64_MAX};
  static const OnnxType kBoolT{"BOOL", DType::Bool, 1, 0, 1};
  static const OnnxType kInt8T{"INT8", DType::I32, 1, INT8_MIN, INT8_MAX};
  static const OnnxType kUint8T{"UINT8", DType::I32, 1, 0, UINT8_MAX};
  static const OnnxType kInt16T{"INT16", DType::I32, 2, INT16_MIN, INT16_MAX};
  static const OnnxType kUint16T{"UINT16", DType::I32, 2, 0, UINT16_MAX};
  switch (dataType) {
  case kFloat:
    return &kFloatT;
  case kDouble:
    return &kDoubleT;
  case kInt32:
    return &kInt32T;
  case kInt64:
    return &kInt64T;
  case kBool:
    return &kBoolT;
  case kInt8:
    return &kInt8T;
  case kUint8:
    return &kUint8T;
  case kInt16:
    return &kInt16T;
  case kUint16:
    return &kUint16T;
  default:
    return nullptr;
  }
}

/// Element i of little-endian raw_data as an integer of ONNX type `dataType`.
int64_t rawInt(const std::string &raw, size_t i, int dataType) {
  const char *p = raw.data() + i * onnxType(dataType)->width;
  switch (dataType) {
  case kInt8:
    return int8_t(*p);
  case kUint8:
  case kBool:
    return uint8_t(*p);
  case kInt16: {
    int16_t v;
    std::memcpy(&v, p, 2);
    return v;
  }
  case kUint16: {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return v;
  }
  case kInt32: {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  default: {
    int64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  }
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
  const int dataType = t.data_type();
  const OnnxType *type = onnxType(dataType);
  if (!type)
    return Status::failure(fmt::format("{}: ONNX data_type {} unsupported (FLOAT, DOUBLE, INT32, "
                                       "INT64, BOOL, INT8, UINT8, INT16 and UINT16 are)",
                                       path, dataType));
  a.dtype = type->dtype;
  const size_t width = type->width;
  const std::string &raw = t.raw_data();
  auto count = [&](uint64_t have) -> Status {
    if (have != n)
      return Status::failure(fmt::format("{}: {} elements for dims {}", path, have,
                                         shapeString(a.shape)));
    return Status::success();
  };
  // A BOOL element must be 0 or 1, a narrow integer must fit its type.
  auto checkRange = [&]() -> Status {
    for (size_t i = 0; i < a.ints.size(); ++i)
      if (a.ints[i] < type->lo || a.ints[i] > type->hi)
        return Status::failure(fmt::format("{}: element {} = {} is not a valid {}{}", path, i,
                                           a.ints[i], type->name,
                                           dataType == kBool ? " (0 or 1)" : ""));
    return Status::success();
  };
  if (!raw.empty() || n == 0) {
    if (raw.size() % width)
      return Status::failure(fmt::format("{}: {} raw_data size {} is not a multiple of {}", path,
                                         type->name, raw.size(), width));
    if (Status s = count(raw.size() / width); !s)
      return s;
    if (dataType == kFloat) {
      a.f32.resize(n);
      std::memcpy(a.f32.data(), raw.data(), n * 4);
    } else if (dataType == kDouble) {
      std::vector<double> d(n);
      std::memcpy(d.data(), raw.data(), n * 8);
      a.f32.assign(d.begin(), d.end());
    } else {
      a.ints.resize(n);
      for (uint64_t i = 0; i < n; ++i)
        a.ints[i] = rawInt(raw, i, dataType);
      if (Status s = checkRange(); !s)
        return s;
    }
    return a;
  }
  if (dataType == kFloat) {
    if (Status s = count(t.float_data_size()); !s)
      return s;
    a.f32.assign(t.float_data().begin(), t.float_data().end());
  } else if (dataType == kInt64) {
    if (Status s = count(t.int64_data_size()); !s)
      return s;
    a.ints.assign(t.int64_data().begin(), t.int64_data().end());
  } else if (dataType == kDouble) {
    return Status::failure(fmt::format("{}: DOUBLE tensors must use raw_data", path));
  } else {
    // INT32, BOOL and the narrow integers: one int32_data entry per element.
    if (Status s = count(t.int32_data_size()); !s)
      return s;
    a.ints.assign(t.int32_data().begin(), t.int32_data().end());
    if (Status s = checkRange(); !s)
      return s;
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
