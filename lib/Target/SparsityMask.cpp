//===- SparsityMask.cpp - weights masked by a given mask ------------------===//
#include "SparsityMask.h"

#include "wsc/Analysis/WeightData.h"
#include "wsgraph/WsgraphDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace wsc;
namespace wg = wsc::wsgraph;

/// Bytes of one element of an ONNX data type with a raw form, 0 for others.
static int64_t elementBytes(int32_t type) {
  switch (type) {
  case onnx::TensorProto::BOOL:
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::INT8:
    return 1;
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::UINT16:
    return 2;
  case onnx::TensorProto::FLOAT:
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::UINT32:
    return 4;
  case onnx::TensorProto::DOUBLE:
  case onnx::TensorProto::INT64:
  case onnx::TensorProto::UINT64:
    return 8;
  default:
    return 0;
  }
}

bool SparsityMasks::load(const std::string &path, std::string &error) {
  if (!loadOnnxModelFile(path, file, error))
    return false;
  for (int i = 0; i < file.model.graph().initializer_size(); ++i)
    index[file.model.graph().initializer(i).name()] = i;
  return true;
}

bool SparsityMasks::apply(const std::string &name, Operation *&def, std::string &error) {
  auto it = index.find(name);
  if (it == index.end())
    return true;
  used.insert(name);
  const onnx::TensorProto &mask = file.model.graph().initializer(it->second);
  const TensorBytes &bytes = file.initializerBytes[size_t(it->second)];
  auto type = cast<RankedTensorType>(def->getResult(0).getType());
  std::string what = "--sparsity-mask " + file.path + ": mask '" + name + "'";
  if (!type.getElementType().isF32()) {
    error = what + " masks a weight of element type other than f32";
    return false;
  }
  if (!llvm::equal(mask.dims(), type.getShape())) {
    error = what + " is not of its weight's shape";
    return false;
  }
  int64_t each = elementBytes(mask.data_type());
  if (!each || bytes.file.empty() || bytes.length != uint64_t(each * type.getNumElements())) {
    error = what + " must hold one element per weight element as raw data of a numeric or "
                   "bool type";
    return false;
  }
  if (auto weight = dyn_cast<wg::WeightOp>(def)) {
    Builder b(def->getContext());
    def->setAttr(kMaskFileAttr, b.getStringAttr(bytes.file));
    def->setAttr(kMaskOffsetAttr, b.getI64IntegerAttr(int64_t(bytes.offset)));
    def->setAttr(kMaskElementBytesAttr, b.getI64IntegerAttr(each));
    return true;
  }
  // A literal: its values with the masked elements zero.
  auto constant = cast<wg::ConstantOp>(def);
  auto dense = cast<DenseElementsAttr>(constant.getValue());
  std::vector<uint32_t> bits;
  for (const APFloat &f : dense.getValues<APFloat>())
    bits.push_back(uint32_t(f.bitcastToAPInt().getZExtValue()));
  zeroMasked(bits, file.buffer->getBufferStart() + bytes.offset, uint64_t(each));
  SmallVector<APFloat> values;
  for (uint32_t w : bits)
    values.push_back(APFloat(APFloat::IEEEsingle(), APInt(32, w)));
  constant.setValueAttr(DenseElementsAttr::get(type, values));
  return true;
}

std::vector<std::string> SparsityMasks::unused() const {
  std::vector<std::string> names;
  for (const auto &entry : index)
    if (!used.contains(entry.getKey()))
      names.push_back(entry.getKey().str());
  llvm::sort(names);
  return names;
}
