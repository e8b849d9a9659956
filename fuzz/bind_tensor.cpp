//===- bind_tensor.cpp - libFuzzer harness: the compiler's tensor reader --===//
//
// Bytes as a `--bind NAME=FILE` tensor, read both as .npy and as an ONNX
// TensorProto (.pb) by the compiler's reader (lib/Target/TensorFile.cpp).
// A .npy that reads must hold exactly the bytes its shape and type need.
//
//===----------------------------------------------------------------------===//
#include "OnnxModelFile.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  for (bool npy : {true, false}) {
    onnx::TensorProto tensor;
    std::string error;
    if (!wsc::parseTensorBytes(bytes, npy, tensor, error)) {
      if (error.empty())
        __builtin_trap(); // every refusal says why
      continue;
    }
    if (npy) {
      uint64_t n = 1;
      for (int64_t d : tensor.dims())
        n *= uint64_t(d);
      if (tensor.raw_data().size() > size || (n && tensor.raw_data().size() % n))
        __builtin_trap();
    }
  }
  return 0;
}
