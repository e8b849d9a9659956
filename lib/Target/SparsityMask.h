//===- SparsityMask.h - weights masked by a given mask ----------*- C++ -*-===//
//
// --sparsity-mask=FILE: an ONNX file whose initializers are named like the
// model's weights, each of its weight's shape, one element per weight
// element in raw data of any numeric or bool type. A weight element whose
// mask element is zero reads as zero (Sparse-IFT's and SPDF's masks, one
// boolean per weight); the sparsity pass then finds those zeros.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_LIB_TARGET_SPARSITYMASK_H
#define WSC_LIB_TARGET_SPARSITYMASK_H

#include "OnnxModelFile.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

namespace wsc {

class SparsityMasks {
public:
  /// Reads the masks' file; false with a message (no "error:") otherwise.
  bool load(const std::string &path, std::string &error);
  /// Masks the imported weight `name` (a wsgraph.weight, or a constant,
  /// whose values are replaced) when the file has a mask of that name; the
  /// op is returned, or a replacement constant. False with a message when
  /// the mask does not fit the weight.
  bool apply(const std::string &name, mlir::Operation *&def, std::string &error);
  /// The masks no weight of the model took, by name.
  std::vector<std::string> unused() const;

private:
  OnnxModelFile file;
  llvm::StringMap<int> index;
  llvm::StringSet<> used;
};

} // namespace wsc

#endif // WSC_LIB_TARGET_SPARSITYMASK_H
