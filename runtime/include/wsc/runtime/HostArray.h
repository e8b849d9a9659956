// Host-side tensors and the files they come from (.npy, ONNX TensorProto .pb).
#ifndef WSC_RUNTIME_HOSTARRAY_H
#define WSC_RUNTIME_HOSTARRAY_H

#include "wsc/runtime/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace wsc::runtime {

/// Bool is the program's BOOL (an i1): its elements are 0 or 1.
enum class DType { F32, I64, I32, Bool };

const char *dtypeName(DType t);

/// A dense row-major array. F32 data live in `f32`, integer and Bool data in
/// `ints` (Bool as 0 or 1).
struct HostArray {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<float> f32;
  std::vector<int64_t> ints;

  int64_t numel() const;
  bool isFloat() const { return dtype == DType::F32; }
  static HostArray floats(std::vector<int64_t> shape, std::vector<float> data);
  static HostArray integers(DType t, std::vector<int64_t> shape, std::vector<int64_t> data);
};

std::string shapeString(const std::vector<int64_t> &shape);

/// Reads a .npy file: float32/float64 become F32, int32 I32, int64 I64,
/// bool (|b1, one byte per element, which must be 0 or 1) Bool.
Expected<HostArray> readNpy(const std::string &path);
/// Parses .npy bytes; `name` is used in error messages.
Expected<HostArray> parseNpy(const std::string &bytes, const std::string &name);
/// Serializes as .npy: F32 as <f4, I32 as <i4, I64 as <i8, Bool as |b1
/// (a nonzero element is written as 1).
std::string encodeNpy(const HostArray &a);
/// Writes `a` to a temporary file next to `path`, then renames it into place,
/// so that a failure never leaves a half-written file.
Status writeNpy(const std::string &path, const HostArray &a);

/// Reads an ONNX TensorProto (.pb) with FLOAT, DOUBLE, INT32, INT64 or BOOL
/// data (BOOL becomes Bool); INT8, UINT8, INT16 and UINT16 become I32.
Expected<HostArray> readOnnxTensor(const std::string &path);
/// Reads .npy or .pb, chosen by the file's extension.
Expected<HostArray> readTensorFile(const std::string &path);

/// Reads a whole file.
Expected<std::string> readFileBytes(const std::string &path);
/// Writes a whole file through a temporary file and a rename.
Status writeFileAtomic(const std::string &path, const std::string &bytes);

} // namespace wsc::runtime

#endif
