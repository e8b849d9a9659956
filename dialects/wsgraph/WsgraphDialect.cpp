//===- WsgraphDialect.cpp - wsgraph dialect registration ------------------===//
#include "wsgraph/WsgraphDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstring>

using namespace mlir;
using namespace wsc::wsgraph;

#include "wsgraph/WsgraphDialect.cpp.inc"

void WsgraphDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "wsgraph/WsgraphOps.cpp.inc"
      >();
}

Operation *WsgraphDialect::materializeConstant(OpBuilder &builder, Attribute value, Type type,
                                               Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, type, elements);
}

WeightOp wsc::wsgraph::sliceWeightRows(OpBuilder &b, WeightOp weight, int64_t first,
                                       int64_t end) {
  auto type = cast<RankedTensorType>(weight.getType());
  int64_t rowBytes = weight.getElementStrides()[0] * ((type.getElementTypeBitWidth() + 7) / 8);
  SmallVector<int64_t> shape(type.getShape());
  shape[0] = end - first;
  return WeightOp::create(
      b, weight.getLoc(), RankedTensorType::get(shape, type.getElementType()),
      b.getStringAttr(weight.getName() + "[" + std::to_string(first) + ":" + std::to_string(end) +
                      "]"),
      weight.getFileAttr(),
      b.getI64IntegerAttr(weight.getOffset() + (weight.isElided() ? 0 : first * rowBytes)),
      weight.getStridesAttr());
}

std::optional<double> wsc::wsgraph::splatValue(Value v) {
  // getConstantElements returns a constant's value whatever its size (the
  // limit is for weights), so a non-splat constant must be rejected here.
  DenseElementsAttr dense = getConstantElements(v, 1);
  if (!dense || !dense.isSplat())
    return std::nullopt;
  if (isa<FloatType>(dense.getElementType()))
    return (*dense.getValues<APFloat>().begin()).convertToDouble();
  return double((*dense.getValues<APInt>().begin()).getSExtValue());
}

DenseElementsAttr wsc::wsgraph::getConstantElements(Value value, int64_t maxElements) {
  Operation *def = value.getDefiningOp();
  if (!def)
    return {};
  if (auto constant = dyn_cast<ConstantOp>(def))
    return dyn_cast<DenseElementsAttr>(constant.getValue());
  auto weight = dyn_cast<WeightOp>(def);
  if (!weight || weight.isElided())
    return {};
  auto type = cast<RankedTensorType>(weight.getType());
  if (!type.hasStaticShape() || type.getNumElements() > maxElements ||
      type.getElementType().isInteger(1))
    return {};
  // getFileSlice zero-fills what lies past the end of the file: a weight the
  // file is too short for must not read as zeros.
  uint64_t fileSize;
  if (llvm::sys::fs::file_size(*weight.getFile(), fileSize) ||
      weight.getOffset() + weight.getByteSize() > fileSize)
    return {};
  auto buffer = llvm::MemoryBuffer::getFileSlice(*weight.getFile(), weight.getByteSize(),
                                                 weight.getOffset(), /*IsVolatile=*/false);
  if (!buffer)
    return {};
  ArrayRef<char> bytes((*buffer)->getBufferStart(), (*buffer)->getBufferSize());
  if (static_cast<int64_t>(bytes.size()) != weight.getByteSize())
    return {};
  if (!weight.getStrides())
    return DenseElementsAttr::getFromRawBuffer(type, bytes);
  // A view: its elements in row-major order.
  int64_t each = (type.getElementTypeBitWidth() + 7) / 8;
  std::vector<char> ordered(size_t(type.getNumElements() * each));
  for (int64_t i = 0; i < type.getNumElements(); ++i)
    std::memcpy(&ordered[size_t(i * each)], bytes.data() + weight.fileElement(i) * each,
                size_t(each));
  return DenseElementsAttr::getFromRawBuffer(type, ordered);
}
