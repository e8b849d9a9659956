// Host-side tensors and the files they come from (.npy, ONNX TensorProto .pb).
#ifndef WSC_RUNTIME_HOSTARRAY_H
#define WSC_RUNTIME_HOSTARRAY_H

#include "wsc/runtime/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace wsc::runtime {

/// The element type of a host array; one per .wafer DType. Bool is the
/// program's BOOL (an i1): its elements are 0 or 1. The PEs hold only 32-bit
/// words, so the others are converted at the host boundary (see Emulator).
enum class DType { F32, I64, I32, Bool, F64, F16, BF16, I8, I16, U8, U16, U32, U64 };

/// "f32", "i64", "i32", "bool", "f64", "f16", "bf16", "i8", ..., "u64".
const char *dtypeName(DType t);
/// F32, F64, F16 and BF16.
bool isFloatType(DType t);
/// The integer types (not Bool).
bool isIntegerType(DType t);
/// The range of an integer type (or Bool, 0..1), clipped to int64 (U64's
/// upper end is INT64_MAX: a host integer is an int64).
void integerRange(DType t, int64_t &lo, int64_t &hi);

/// f32 -> f16 bits, rounded to nearest even; overflow becomes inf, NaN stays
/// NaN (quiet, sign and the payload's high bits kept).
uint16_t floatToHalfBits(float f);
/// f16 bits -> f32 (exact).
float halfBitsToFloat(uint16_t h);
/// f32 -> bf16 bits (the f32's upper half), rounded to nearest even; NaN stays NaN.
uint16_t floatToBfloat16Bits(float f);
/// bf16 bits -> f32 (exact).
float bfloat16BitsToFloat(uint16_t b);
/// `f` rounded to the nearest value of the float type `t` (F16, BF16), as an
/// f32; F32 and F64 values are returned as they are.
float roundToFloatType(DType t, float f);

/// A dense row-major array. Float data (F32, F64, F16, BF16) live in `f32`:
/// F64 data read from files are rounded to f32 (the PEs compute in f32), F16
/// and BF16 values are exact in f32. Integer and Bool data live in `ints`
/// (Bool as 0 or 1).
struct HostArray {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<float> f32;
  std::vector<int64_t> ints;

  int64_t numel() const;
  bool isFloat() const { return isFloatType(dtype); }
  static HostArray floats(std::vector<int64_t> shape, std::vector<float> data);
  /// A float array of type `t` (F32, F64, F16 or BF16); the data are kept as given.
  static HostArray floats(DType t, std::vector<int64_t> shape, std::vector<float> data);
  static HostArray integers(DType t, std::vector<int64_t> shape, std::vector<int64_t> data);
};

std::string shapeString(const std::vector<int64_t> &shape);

/// Reads a .npy file (little-endian): <f4 F32, <f8 F64 (rounded to f32),
/// <f2 F16, |i1 I8, <i2 I16, <i4 I32, <i8 I64, |u1 U8, <u2 U16, <u4 U32,
/// <u8 U64 (a value beyond int64 is an error), bool (|b1, one byte per
/// element, which must be 0 or 1) Bool.
Expected<HostArray> readNpy(const std::string &path);
/// Parses .npy bytes; `name` is used in error messages.
Expected<HostArray> parseNpy(const std::string &bytes, const std::string &name);
/// The .npy descr of a dtype: F32 <f4, F64 <f8, F16 <f2, BF16 <f4 (numpy
/// has no bf16), I8 |i1, I16 <i2, I32 <i4, I64 <i8, U8 |u1, U16 <u2, U32 <u4,
/// U64 <u8, Bool |b1.
const char *npyDescr(DType t);
/// Serializes as .npy with npyDescr(a.dtype): F64 widened from f32, F16
/// rounded to f16 (nearest even), BF16 rounded to bf16 and written as f32;
/// Bool writes a nonzero element as 1; integers out of their type's range
/// are wrapped (writeNpy refuses them).
std::string encodeNpy(const HostArray &a);
/// An error naming the first integer element of `a` outside its type's range.
Status checkIntegerRange(const HostArray &a, const std::string &what);
/// Writes `a` with writeFileAtomic, so that a failure never leaves a
/// half-written file. An integer element
/// outside its type's range is an error naming `path`.
Status writeNpy(const std::string &path, const HostArray &a);

/// Reads an ONNX TensorProto (.pb): FLOAT F32, DOUBLE F64 (rounded to f32),
/// FLOAT16 F16, BFLOAT16 BF16 (raw_data, two bytes each, or the 16-bit
/// patterns in int32_data), INT8/16/32/64 I8/I16/I32/I64, UINT8/16/32/64
/// U8/U16/U32/U64 (a UINT64 beyond int64 is an error), BOOL Bool.
Expected<HostArray> readOnnxTensor(const std::string &path);
/// The same for bytes already in memory; `name` stands for the file.
Expected<HostArray> parseOnnxTensor(const std::string &bytes, const std::string &name);
/// Reads .npy or .pb, chosen by the file's extension.
Expected<HostArray> readTensorFile(const std::string &path);

/// What readFileBytes reads at most unless told otherwise (16 GiB).
constexpr uint64_t kMaxReadBytes = uint64_t(1) << 34;
/// Reads a whole file of at most `maxBytes` (more is an error): a regular
/// file, or standard input or an open descriptor named /dev/stdin, /dev/fd/N
/// or /proc/self/fd/N (which may be a pipe). Directories, devices, sockets
/// and named FIFOs are refused without being opened: "PATH: is a directory,
/// not a regular file".
Expected<std::string> readFileBytes(const std::string &path, uint64_t maxBytes = kMaxReadBytes);
/// Writes a whole file as OutputFiles does (one file): a regular file through
/// a temporary file and a rename, a device or a FIFO written through, a
/// symbolic link followed to its target.
Status writeFileAtomic(const std::string &path, const std::string &bytes);

} // namespace wsc::runtime

#endif
