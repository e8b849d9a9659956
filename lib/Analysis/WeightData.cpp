//===- WeightData.cpp - the values of a model's weights -------------------===//
#include "wsc/Analysis/WeightData.h"

#include "wsgraph/WsgraphDialect.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

using namespace mlir;
namespace wg = wsc::wsgraph;

static FailureOr<std::vector<uint32_t>> readFile(wg::WeightOp weight, Operation *user) {
  if (weight.isElided())
    return user->emitError("weight '") << weight.getName() << "' is elided", failure();
  StringRef path = *weight.getFile();
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!file)
    return user->emitError("weight '") << weight.getName() << "': cannot read '" << path
                                       << "': " << file.getError().message(),
           failure();
  uint64_t offset = weight.getOffset(), size = uint64_t(weight.getByteSize());
  if (offset > (*file)->getBufferSize() || size > (*file)->getBufferSize() - offset)
    return user->emitError("weight '") << weight.getName() << "': bytes past the end of '"
                                       << path << "'",
           failure();
  std::vector<uint32_t> bits(size / 4);
  std::memcpy(bits.data(), (*file)->getBufferStart() + offset, bits.size() * 4);
  return bits;
}

FailureOr<std::vector<uint32_t>> wsc::readF32Weight(Value v, Operation *user) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  Operation *def = v.getDefiningOp();
  if (!type || !type.getElementType().isF32() || !def)
    return user->emitError("not a static f32 tensor"), failure();
  FailureOr<std::vector<uint32_t>> bits = failure();
  if (auto weight = dyn_cast<wg::WeightOp>(def)) {
    bits = readFile(weight, user);
  } else if (auto constant = dyn_cast<wg::ConstantOp>(def)) {
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    if (!dense)
      return user->emitError("constant is not a dense literal"), failure();
    std::vector<uint32_t> words;
    words.reserve(type.getNumElements());
    for (const APFloat &f : dense.getValues<APFloat>())
      words.push_back(uint32_t(f.bitcastToAPInt().getZExtValue()));
    bits = std::move(words);
  } else {
    return user->emitError("not a wsgraph.weight or wsgraph.constant"), failure();
  }
  if (succeeded(bits))
    if (auto prune = def->getAttrOfType<FloatAttr>(kPruneAttr))
      pruneByMagnitude(*bits, prune.getValueAsDouble());
  return bits;
}

void wsc::pruneByMagnitude(MutableArrayRef<uint32_t> bits, double fraction) {
  size_t count = size_t(std::floor(std::clamp(fraction, 0.0, 1.0) * double(bits.size())));
  if (!count)
    return;
  // |x| as its bits without the sign: ordered as the magnitudes (NaNs last).
  auto magnitude = [&](size_t i) { return bits[i] & 0x7FFFFFFFu; };
  std::vector<size_t> order(bits.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::nth_element(order.begin(), order.begin() + (count - 1), order.end(),
                   [&](size_t a, size_t b) {
                     return std::make_pair(magnitude(a), a) < std::make_pair(magnitude(b), b);
                   });
  for (size_t i = 0; i < count; ++i)
    bits[order[i]] = 0;
}

double wsc::weightDensity(Value v) {
  if (Operation *def = v.getDefiningOp())
    if (auto density = def->getAttrOfType<FloatAttr>(kDensityAttr))
      return density.getValueAsDouble();
  return 1.0;
}
