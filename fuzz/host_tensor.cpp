//===- host_tensor.cpp - libFuzzer harness: wsc-run's .npy and .pb readers -===//
//
// Bytes as a tensor file, read both as .npy and as an ONNX TensorProto
// (.pb) by the runtime's readers (wsc-run --input), then range-checked and
// written back as .npy when they read.
//
//===----------------------------------------------------------------------===//
#include "wsc/runtime/HostArray.h"

#include <cstddef>
#include <cstdint>
#include <string>

using namespace wsc::runtime;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string bytes(reinterpret_cast<const char *>(data), size);
  for (bool npy : {true, false}) {
    Expected<HostArray> a = npy ? parseNpy(bytes, "fuzz.npy") : parseOnnxTensor(bytes, "fuzz.pb");
    if (!a)
      continue;
    (void)checkIntegerRange(*a, "fuzz");
    // The .npy reader takes dimensions of at most 18 digits.
    bool npyDims = true;
    for (int64_t d : a->shape)
      npyDims = npyDims && d < 1000000000000000000;
    if (!npyDims)
      continue;
    std::string round = encodeNpy(*a);
    Expected<HostArray> again = parseNpy(round, "round.npy");
    // What encodeNpy writes must read back (bf16 is written as f32: numpy has no bf16).
    if (!again || again->shape != a->shape ||
        (again->dtype != a->dtype && a->dtype != DType::BF16))
      __builtin_trap();
  }
  return 0;
}
