//===- KvCache.cpp - the keys and values attention kernels hold -----------===//
#include "wsc/Analysis/KvCache.h"

#include "wskernel/WskernelDialect.h"

using namespace mlir;

int64_t wsc::kvCacheBytes(func::FuncOp func) {
  auto tokens = func->getAttrOfType<IntegerAttr>("wskernel.tokens");
  int64_t batch = 1;
  for (BlockArgument arg : func.getArguments())
    if (auto t = dyn_cast<RankedTensorType>(arg.getType()); t && t.getRank() == 2) {
      batch = std::max<int64_t>(1, t.getDimSize(0));
      break;
    }
  int64_t positions = tokens ? tokens.getInt() / batch : 0;
  int64_t bytes = 0;
  func.walk([&](wskernel::KernelOp k) {
    // wskernel.attention_layout's word 9 is d, the words per head, and 16
    // the query heads each column scores.
    auto layout = k->getAttrOfType<DenseI64ArrayAttr>("wskernel.attention_layout");
    auto heads = k->getAttrOfType<IntegerAttr>("wskernel.heads");
    if (k.getKind() != "attention" || !layout || layout.size() <= 16 || !heads ||
        heads.getInt() <= 0 || layout[16] <= 0 || positions <= 0)
      return;
    int64_t columnHeads = heads.getInt() / layout[16];
    int64_t parts = std::max<int64_t>(1, k.getWidth() / std::max<int64_t>(1, columnHeads));
    int64_t tb = (positions + k.getHeight() - 1) / k.getHeight();
    // A folded or streamed block's attention keeps every layer's cache.
    int64_t layers = 1;
    if (auto l = k->getAttrOfType<IntegerAttr>(wskernel::kStreamedLayersAttr))
      layers = std::max<int64_t>(1, l.getInt());
    bytes += layers * k.getHeight() * k.getWidth() * 2 * tb * (layout[9] / parts) * 4;
  });
  return bytes;
}
