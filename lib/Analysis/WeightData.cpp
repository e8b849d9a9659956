//===- WeightData.cpp - the values of a model's weights -------------------===//
#include "wsc/Analysis/WeightData.h"

#include "wsgraph/WsgraphDialect.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <array>
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

/// Zeroes the elements of `bits` whose mask element (kMaskFileAttr) is zero.
static LogicalResult applyMask(Operation *def, MutableArrayRef<uint32_t> bits, Operation *user) {
  auto path = def->getAttrOfType<StringAttr>(wsc::kMaskFileAttr);
  auto offset = def->getAttrOfType<IntegerAttr>(wsc::kMaskOffsetAttr);
  auto width = def->getAttrOfType<IntegerAttr>(wsc::kMaskElementBytesAttr);
  if (!path || !offset || !width || width.getInt() <= 0 || offset.getInt() < 0)
    return user->emitError("a sparsity mask needs its file, offset and element bytes");
  auto file = llvm::MemoryBuffer::getFile(path.getValue(), /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false);
  if (!file)
    return user->emitError("sparsity mask: cannot read '")
           << path.getValue() << "': " << file.getError().message();
  uint64_t at = uint64_t(offset.getInt()), each = uint64_t(width.getInt());
  if (at > (*file)->getBufferSize() || bits.size() * each > (*file)->getBufferSize() - at)
    return user->emitError("sparsity mask: bytes past the end of '") << path.getValue() << "'";
  wsc::zeroMasked(bits, (*file)->getBufferStart() + at, each);
  return success();
}

void wsc::zeroMasked(MutableArrayRef<uint32_t> bits, const char *mask, uint64_t elementBytes) {
  for (size_t i = 0; i < bits.size(); ++i)
    if (std::all_of(mask + i * elementBytes, mask + (i + 1) * elementBytes,
                    [](char c) { return c == 0; }))
      bits[i] = 0;
}

/// A weight's or constant's elements in its file's order, masked.
static FailureOr<std::vector<uint32_t>> readMasked(Operation *def, RankedTensorType type,
                                                   Operation *user) {
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
  if (succeeded(bits) && def->hasAttr(wsc::kMaskFileAttr) && failed(applyMask(def, *bits, user)))
    return failure();
  return bits;
}

/// |x| as its bits without the sign: ordered as the magnitudes (NaNs last).
static uint32_t magnitude(uint32_t bits) { return bits & 0x7FFFFFFFu; }

/// The cut of pruning the floor(fraction * size) smallest magnitudes, of
/// equal ones the lower index first: [magnitude bits, ties] (kPruneCutAttr).
static std::array<int64_t, 2> magnitudeCut(ArrayRef<uint32_t> bits, double fraction) {
  size_t count = size_t(std::floor(std::clamp(fraction, 0.0, 1.0) * double(bits.size())));
  if (!count)
    return {0, 0};
  std::vector<size_t> order(bits.size());
  std::iota(order.begin(), order.end(), size_t(0));
  auto key = [&](size_t i) { return std::make_pair(magnitude(bits[i]), i); };
  std::nth_element(order.begin(), order.begin() + (count - 1), order.end(),
                   [&](size_t a, size_t b) { return key(a) < key(b); });
  size_t last = order[count - 1];
  return {int64_t(magnitude(bits[last])), int64_t(last) + 1};
}

/// Zeroes the elements a cut prunes; element i of `bits` is `first + i` of
/// the matrix the cut was made in.
static void zeroBelowCut(MutableArrayRef<uint32_t> bits, std::array<int64_t, 2> cut,
                         int64_t first) {
  for (size_t i = 0; i < bits.size(); ++i) {
    int64_t m = magnitude(bits[i]);
    if (m < cut[0] || (m == cut[0] && first + int64_t(i) < cut[1]))
      bits[i] = 0;
  }
}

FailureOr<std::vector<uint32_t>> wsc::readF32Weight(Value v, Operation *user) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  Operation *def = v.getDefiningOp();
  if (!type || !type.getElementType().isF32() || !def)
    return user->emitError("not a static f32 tensor"), failure();
  FailureOr<std::vector<uint32_t>> bits = readMasked(def, type, user);
  if (failed(bits))
    return bits;
  if (auto cut = def->getAttrOfType<DenseI64ArrayAttr>(kPruneCutAttr); cut && cut.size() == 3)
    zeroBelowCut(*bits, {cut[0], cut[1]}, cut[2]);
  else if (auto prune = def->getAttrOfType<FloatAttr>(kPruneAttr))
    pruneByMagnitude(*bits, prune.getValueAsDouble());
  // A view's mask and pruning are the file's, in the file's order; its
  // elements then come in its own.
  if (auto weight = dyn_cast<wg::WeightOp>(def); weight && weight.getStrides()) {
    std::vector<uint32_t> ordered(size_t(type.getNumElements()));
    for (size_t i = 0; i < ordered.size(); ++i)
      ordered[i] = (*bits)[size_t(weight.fileElement(int64_t(i)))];
    *bits = std::move(ordered);
  }
  // -0.0 is a zero weight too (torch's w * mask makes one of every negative
  // weight it drops); as +0.0 the sparse layout leaves it out.
  for (uint32_t &w : *bits)
    if (w == 0x80000000u)
      w = 0;
  return bits;
}

void wsc::pruneByMagnitude(MutableArrayRef<uint32_t> bits, double fraction) {
  zeroBelowCut(bits, magnitudeCut(bits, fraction), 0);
}

LogicalResult wsc::fixPruneCut(Operation *weight, Operation *user) {
  auto prune = weight->getAttrOfType<FloatAttr>(kPruneAttr);
  auto stored = dyn_cast<wg::WeightOp>(weight);
  if (!prune || weight->hasAttr(kPruneCutAttr) || (stored && stored.isElided()))
    return success();
  auto type = cast<RankedTensorType>(weight->getResult(0).getType());
  FailureOr<std::vector<uint32_t>> bits = readMasked(weight, type, user);
  if (failed(bits))
    return failure();
  auto [below, ties] = magnitudeCut(*bits, prune.getValueAsDouble());
  weight->setAttr(kPruneCutAttr, Builder(weight->getContext()).getDenseI64ArrayAttr({below, ties, 0}));
  return success();
}

void wsc::keepAlterations(Operation *whole, Operation *part, int64_t first) {
  for (StringRef name : {kMaskFileAttr, kMaskElementBytesAttr, kDensityAttr, kPruneAttr})
    if (Attribute a = whole->getAttr(name))
      part->setAttr(name, a);
  Builder b(part->getContext());
  if (auto offset = whole->getAttrOfType<IntegerAttr>(kMaskOffsetAttr)) {
    auto width = whole->getAttrOfType<IntegerAttr>(kMaskElementBytesAttr);
    part->setAttr(kMaskOffsetAttr,
                  b.getI64IntegerAttr(offset.getInt() + first * (width ? width.getInt() : 0)));
  }
  if (auto cut = whole->getAttrOfType<DenseI64ArrayAttr>(kPruneCutAttr); cut && cut.size() == 3)
    part->setAttr(kPruneCutAttr, b.getDenseI64ArrayAttr({cut[0], cut[1], cut[2] + first}));
}

double wsc::weightDensity(Value v) {
  if (Operation *def = v.getDefiningOp())
    if (auto density = def->getAttrOfType<FloatAttr>(kDensityAttr))
      return density.getValueAsDouble();
  return 1.0;
}
