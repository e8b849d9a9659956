//===- OnnxModelFile.h - read an ONNX file without copying weights -*- C++ -*-===//
#ifndef WSC_LIB_TARGET_ONNXMODELFILE_H
#define WSC_LIB_TARGET_ONNXMODELFILE_H

#include "onnx/onnx_pb.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <string>
#include <vector>

namespace wsc {

/// Where the raw bytes of one initializer are.
struct TensorBytes {
  std::string file;  // empty when the bytes are in the TensorProto itself
  uint64_t offset = 0;
  uint64_t length = 0;
};

/// An ONNX model parsed with the raw_data of its initializers left in the
/// (memory-mapped) file: the parsed proto holds only structure, and
/// `initializerBytes[i]` says where initializer i's bytes are.
/// Reads a tensor from a .npy file (by its extension) or an ONNX TensorProto
/// (.pb), as raw data; false with a message naming the file otherwise.
/// The file must be a regular file (or standard input) of at most 2 GiB.
bool readTensorFile(llvm::StringRef path, onnx::TensorProto &tensor, std::string &err);
/// The same for bytes in memory: a .npy when `npy`, else a TensorProto; the
/// message names no file.
bool parseTensorBytes(llvm::StringRef bytes, bool npy, onnx::TensorProto &tensor,
                      std::string &err);

struct OnnxModelFile {
  std::string path;
  std::unique_ptr<llvm::MemoryBuffer> buffer;
  onnx::ModelProto model;
  std::vector<TensorBytes> initializerBytes;
};

/// Loads `path`. On failure returns false and sets `error` (without "error:").
bool loadOnnxModelFile(const std::string &path, OnnxModelFile &out, std::string &error);

} // namespace wsc

#endif // WSC_LIB_TARGET_ONNXMODELFILE_H
