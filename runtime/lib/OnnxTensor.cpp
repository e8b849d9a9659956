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
  kFloat16 = 10,
  kDouble = 11,
  kUint32 = 12,
  kUint64 = 13,
  kBfloat16 = 16,
};

/// How a supported ONNX element type is read: its host dtype, its width in
/// raw_data, whether it is signed there, and the range of the values of its
/// typed field (int32_data for the integers narrower than 32 bits, BOOL and
/// FLOAT16/BFLOAT16's 16-bit patterns; uint64_data for UINT32 and UINT64).
struct OnnxType {
  const char *name;
  DType dtype;
  size_t width;
  bool isSigned;
  int64_t lo, hi;
};

const OnnxType *onnxType(int dataType) {
  static const OnnxType kFloatT{"FLOAT", DType::F32, 4, true, 0, 0};
  static const OnnxType kDoubleT{"DOUBLE", DType::F64, 8, true, 0, 0};
  static const OnnxType kFloat16T{"FLOAT16", DType::F16, 2, false, 0, UINT16_MAX};
  static const OnnxType kBfloat16T{"BFLOAT16", DType::BF16, 2, false, 0, UINT16_MAX};
  static const OnnxType kInt32T{"INT32", DType::I32, 4, true, INT32_MIN, INT32_MAX};
  static const OnnxType kInt64T{"INT64", DType::I64, 8, true, INT64_MIN, INT64_MAX};
  static const OnnxType kBoolT{"BOOL", DType::Bool, 1, false, 0, 1};
  static const OnnxType kInt8T{"INT8", DType::I8, 1, true, INT8_MIN, INT8_MAX};
  static const OnnxType kUint8T{"UINT8", DType::U8, 1, false, 0, UINT8_MAX};
  static const OnnxType kInt16T{"INT16", DType::I16, 2, true, INT16_MIN, INT16_MAX};
  static const OnnxType kUint16T{"UINT16", DType::U16, 2, false, 0, UINT16_MAX};
  static const OnnxType kUint32T{"UINT32", DType::U32, 4, false, 0, UINT32_MAX};
  static const OnnxType kUint64T{"UINT64", DType::U64, 8, false, 0, INT64_MAX};
  switch (dataType) {
  case kFloat:
    return &kFloatT;
  case kDouble:
    return &kDoubleT;
  case kFloat16:
    return &kFloat16T;
  case kBfloat16:
    return &kBfloat16T;
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
  case kUint32:
    return &kUint32T;
  case kUint64:
    return &kUint64T;
  default:
    return nullptr;
  }
}

/// The little-endian element i of raw_data, zero-extended to 64 bits.
uint64_t rawBits(const std::string &raw, size_t i, size_t width) {
  uint64_t v = 0;
  std::memcpy(&v, raw.data() + i * width, width);
  return v;
}

/// A 16-bit float pattern of type `dataType` (FLOAT16 or BFLOAT16) as an f32.
float halfToFloat(int dataType, uint16_t bits) {
  return dataType == kFloat16 ? halfBitsToFloat(bits) : bfloat16BitsToFloat(bits);
}

} // namespace

Expected<HostArray> readOnnxTensor(const std::string &path) {
  Expected<std::string> bytes = readFileBytes(path);
  if (!bytes)
    return bytes.status();
  return parseOnnxTensor(*bytes, path);
}

Expected<HostArray> parseOnnxTensor(const std::string &bytes, const std::string &path) {
  onnxtensor::TensorProto t;
  if (bytes.size() > size_t(INT_MAX) || !t.ParseFromArray(bytes.data(), int(bytes.size())))
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
    return Status::failure(fmt::format(
        "{}: ONNX data_type {} unsupported (FLOAT, DOUBLE, FLOAT16, BFLOAT16, INT8, INT16, "
        "INT32, INT64, UINT8, UINT16, UINT32, UINT64 and BOOL are)",
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
  auto invalid = [&](size_t i, auto value) {
    const char *why = dataType == kBool                                      ? " (0 or 1)"
                      : dataType == kFloat16 || dataType == kBfloat16 ? " (a 16-bit pattern)"
                      : dataType == kUint64 ? " (the host reads integers up to 2^63 - 1)"
                                            : "";
    return Status::failure(
        fmt::format("{}: element {} = {} is not a valid {}{}", path, i, value, type->name, why));
  };
  // A typed integer (or 16-bit pattern) must fit its type.
  auto checkRange = [&](const std::vector<int64_t> &v) -> Status {
    for (size_t i = 0; i < v.size(); ++i)
      if (v[i] < type->lo || v[i] > type->hi)
        return invalid(i, v[i]);
    return Status::success();
  };
  if (!raw.empty() || n == 0) {
    if (raw.size() % width)
      return Status::failure(fmt::format("{}: {} raw_data size {} is not a multiple of {}", path,
                                         type->name, raw.size(), width));
    if (Status s = count(raw.size() / width); !s)
      return s;
    // n == 0: no memcpy, whose pointers (of empty vectors) may be null.
    if (dataType == kFloat) {
      a.f32.resize(n);
      if (n)
        std::memcpy(a.f32.data(), raw.data(), n * 4);
    } else if (dataType == kDouble) {
      std::vector<double> d(n);
      if (n)
        std::memcpy(d.data(), raw.data(), n * 8);
      a.f32.assign(d.begin(), d.end());
    } else if (dataType == kFloat16 || dataType == kBfloat16) {
      a.f32.resize(n);
      for (uint64_t i = 0; i < n; ++i)
        a.f32[i] = halfToFloat(dataType, uint16_t(rawBits(raw, i, 2)));
    } else {
      a.ints.resize(n);
      for (uint64_t i = 0; i < n; ++i) {
        uint64_t v = rawBits(raw, i, width);
        if (type->isSigned && width < 8)
          a.ints[i] = int64_t(v << (64 - 8 * width)) >> (64 - 8 * width);
        else if (!type->isSigned && v > uint64_t(INT64_MAX))
          return invalid(i, v);
        else
          a.ints[i] = int64_t(v);
      }
      if (Status s = checkRange(a.ints); !s)
        return s;
    }
    return a;
  }
  if (dataType == kFloat) {
    if (Status s = count(t.float_data_size()); !s)
      return s;
    a.f32.assign(t.float_data().begin(), t.float_data().end());
  } else if (dataType == kDouble) {
    if (Status s = count(t.double_data_size()); !s)
      return s;
    a.f32.assign(t.double_data().begin(), t.double_data().end());
  } else if (dataType == kInt64) {
    if (Status s = count(t.int64_data_size()); !s)
      return s;
    a.ints.assign(t.int64_data().begin(), t.int64_data().end());
  } else if (dataType == kUint32 || dataType == kUint64) {
    if (Status s = count(t.uint64_data_size()); !s)
      return s;
    a.ints.resize(n);
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t v = t.uint64_data(int(i));
      if (v > uint64_t(type->hi))
        return invalid(i, v);
      a.ints[i] = int64_t(v);
    }
  } else {
    // INT32, BOOL, the narrow integers and the 16-bit float patterns: one
    // int32_data entry per element.
    if (Status s = count(t.int32_data_size()); !s)
      return s;
    std::vector<int64_t> v(t.int32_data().begin(), t.int32_data().end());
    if (Status s = checkRange(v); !s)
      return s;
    if (dataType == kFloat16 || dataType == kBfloat16) {
      a.f32.resize(n);
      for (uint64_t i = 0; i < n; ++i)
        a.f32[i] = halfToFloat(dataType, uint16_t(v[i]));
    } else {
      a.ints = std::move(v);
    }
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
