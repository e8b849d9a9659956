//===- KvCache.h - the keys and values attention kernels hold ---*- C++ -*-===//
#ifndef WSC_ANALYSIS_KVCACHE_H
#define WSC_ANALYSIS_KVCACHE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace wsc {

/// Bytes of keys and values the attention kernels of a lowered function
/// hold for one sequence: each PE 2 * tb * ds words (tb of its row's
/// positions, ds of its head's dimensions; a key/value head shared by
/// several query heads is held by each of their columns).
int64_t kvCacheBytes(mlir::func::FuncOp func);

} // namespace wsc

#endif // WSC_ANALYSIS_KVCACHE_H
