//===- TensorFile.cpp - a tensor from .npy or ONNX .pb, for --bind --------===//
//
// Reads the value a user binds to a graph input into an ONNX TensorProto, so
// the importer turns it into a constant exactly as it does an initializer.
//
//===----------------------------------------------------------------------===//
#include "OnnxModelFile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"

#include <climits>

using namespace llvm;

namespace {

/// The .npy header's value for `key` ('descr', 'fortran_order', 'shape').
StringRef headerField(StringRef header, StringRef key) {
  size_t at = header.find(("'" + key + "'").str());
  if (at == StringRef::npos)
    return {};
  StringRef rest = header.drop_front(at + key.size() + 2).ltrim(" :");
  if (rest.starts_with("("))
    return rest.take_until([](char c) { return c == ')'; }).drop_front();
  if (rest.starts_with("'"))
    return rest.drop_front().take_until([](char c) { return c == '\''; });
  return rest.take_until([](char c) { return c == ',' || c == '}'; }).trim();
}

bool parseNpy(StringRef bytes, onnx::TensorProto &t, std::string &err) {
  if (bytes.size() < 10 || !bytes.starts_with("\x93NUMPY")) {
    err = "not a .npy file";
    return false;
  }
  unsigned major = uint8_t(bytes[6]);
  size_t lenBytes = major == 1 ? 2 : 4, start = 8 + lenBytes;
  if (bytes.size() < start) {
    err = "truncated .npy header";
    return false;
  }
  uint64_t hlen = uint8_t(bytes[8]) | uint64_t(uint8_t(bytes[9])) << 8;
  if (lenBytes == 4)
    hlen |= uint64_t(uint8_t(bytes[10])) << 16 | uint64_t(uint8_t(bytes[11])) << 24;
  if (bytes.size() < start + hlen) {
    err = "truncated .npy header";
    return false;
  }
  StringRef header = bytes.substr(start, hlen);
  if (headerField(header, "fortran_order") != "False") {
    err = "a Fortran-ordered .npy array (save it C-ordered)";
    return false;
  }
  StringRef descr = headerField(header, "descr");
  auto [type, width] = StringSwitch<std::pair<int, unsigned>>(descr)
                           .Case("<f4", {onnx::TensorProto::FLOAT, 4})
                           .Case("<f8", {onnx::TensorProto::DOUBLE, 8})
                           .Case("<f2", {onnx::TensorProto::FLOAT16, 2})
                           .Case("<i8", {onnx::TensorProto::INT64, 8})
                           .Case("<i4", {onnx::TensorProto::INT32, 4})
                           .Case("<i2", {onnx::TensorProto::INT16, 2})
                           .Cases({"|i1", "<i1"}, {onnx::TensorProto::INT8, 1})
                           .Cases({"|u1", "<u1"}, {onnx::TensorProto::UINT8, 1})
                           .Cases({"|b1", "<b1"}, {onnx::TensorProto::BOOL, 1})
                           .Default({0, 0});
  if (!type) {
    err = ".npy dtype '" + descr.str() + "' is not one of float32/64/16, int64/32/16/8, uint8, bool";
    return false;
  }
  t.set_data_type(type);
  uint64_t n = 1;
  SmallVector<StringRef> dims;
  headerField(header, "shape").split(dims, ',', -1, /*KeepEmpty=*/false);
  for (StringRef d : dims) {
    int64_t v;
    if (d.trim().empty())
      continue;
    if (d.trim().getAsInteger(10, v) || v < 0) {
      err = ".npy shape dimension '" + d.trim().str() + "' is not a size";
      return false;
    }
    t.add_dims(v);
    if (__builtin_mul_overflow(n, uint64_t(v), &n)) {
      err = ".npy shape is too large";
      return false;
    }
  }
  StringRef data = bytes.drop_front(start + hlen);
  if (n > data.size() / width || data.size() != n * width) {
    err = ".npy holds " + std::to_string(data.size()) + " data bytes, its shape needs " +
          std::to_string(n * width);
    return false;
  }
  t.set_raw_data(data.str());
  return true;
}

} // namespace

bool wsc::parseTensorBytes(StringRef bytes, bool npy, onnx::TensorProto &tensor,
                           std::string &err) {
  if (npy)
    return parseNpy(bytes, tensor, err);
  if (bytes.size() > size_t(INT_MAX) || !tensor.ParseFromArray(bytes.data(), int(bytes.size()))) {
    err = "not an ONNX TensorProto (.pb) or .npy file";
    return false;
  }
  return true;
}

bool wsc::readTensorFile(StringRef path, onnx::TensorProto &tensor, std::string &err) {
  // A FIFO's open waits for a writer and /dev/zero never ends: only regular
  // files are read, of a bounded size.
  sys::fs::file_status status;
  if (!sys::fs::status(path, status)) {
    if (status.type() != sys::fs::file_type::regular_file) {
      err = path.str() + ": not a regular file";
      return false;
    }
    if (status.getSize() > uint64_t(INT_MAX)) {
      err = path.str() + ": larger than " + std::to_string(INT_MAX) + " bytes";
      return false;
    }
  }
  auto buffer = MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer) {
    err = "cannot read '" + path.str() + "': " + buffer.getError().message();
    return false;
  }
  if (parseTensorBytes((*buffer)->getBuffer(), path.ends_with(".npy"), tensor, err))
    return true;
  err = path.str() + ": " + err;
  return false;
}
