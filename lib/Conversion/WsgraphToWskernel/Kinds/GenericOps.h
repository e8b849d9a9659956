//===- GenericOps.h - what the generic kind's plan and body share -*- C++ -*-===//
//
// Private to Kinds/Generic.cpp (the body) and Kinds/GenericPlan.cpp (which
// ops, in how many chunks): the ops by name, index tables over shapes, and
// where a data-movement op takes each result word from.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_LIB_CONVERSION_KINDS_GENERICOPS_H
#define WSC_LIB_CONVERSION_KINDS_GENERICOPS_H

#include "Generic.h"

#include "llvm/ADT/StringMap.h"

#include <functional>

namespace wsc::lowering::generic {

/// Elementwise ops and reductions by name: the runtime kind they become.
const llvm::StringMap<StringRef> &unaryKinds();
const llvm::StringMap<StringRef> &binaryKinds();
const llvm::StringMap<StringRef> &reduceKinds();
/// The runtime kind of elementwise op `op` (empty if it is none): unaryKinds
/// by name, except a gelu's form, which its `approximate` decides
/// ("gelu_tanh" for the tanh form).
StringRef unaryKindOf(Operation *op);
/// Ops whose result is their operand's words in the same order.
bool keepsOrder(Operation *op);

inline RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }
inline int64_t wordsOf(Value v) { return tensorType(v).getNumElements(); }
/// How the PE holds a tensor's elements: f32 words, or i32 for integers and booleans.
inline StringRef elemOf(Value v) {
  return isa<FloatType>(tensorType(v).getElementType()) ? "f32" : "i32";
}
SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape);
/// A table over the multi-indices of `shape` whose flat (row-major) index
/// is in [lo, hi) (hi < 0: to the end).
SmallVector<int32_t> tableOver(ArrayRef<int64_t> shape,
                               function_ref<int64_t(ArrayRef<int64_t>)> at, int64_t lo = 0,
                               int64_t hi = -1);
/// Flat index in `in` (right-aligned, size-1 dimensions broadcast) of a
/// multi-index of the broadcast shape.
int64_t broadcastIndex(ArrayRef<int64_t> in, ArrayRef<int64_t> idx);
/// Where a data-movement op takes each result word from: operand and flat
/// index in it (-1: the word is zero); null for other ops.
using MovementSource = std::function<std::pair<unsigned, int64_t>(ArrayRef<int64_t>)>;
MovementSource movementSource(Operation *o, unsigned result);

} // namespace wsc::lowering::generic

#endif // WSC_LIB_CONVERSION_KINDS_GENERICOPS_H
