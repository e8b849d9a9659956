//===- Generic.h - the generic kernel kind -----------------------*- C++ -*-===//
//
// Any wsgraph op the importer accepts, on one PE: the path that makes every
// graph compile; fused kinds are the fast path beside it.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_LIB_CONVERSION_KINDS_GENERIC_H
#define WSC_LIB_CONVERSION_KINDS_GENERIC_H

#include "../KernelBody.h"

namespace wsc::lowering {

/// Does the generic kind compute `op`?
bool hasGenericKernel(Operation *op);
/// Result rows that a chunk of `op`'s generic kernel must keep together
/// (rows are runs of the result's last dimension); 0 when it cannot be split.
int64_t chunkGranularity(Operation *op, unsigned result);
/// The words of an operand of `total` words that a chunk holds: words
/// [first, first + count) of every `period` words (a period of `total`: one
/// range). A strided read, such as a transpose's column, is periodic.
struct Window {
  int64_t first, count, period;
  static Window whole(int64_t total) { return {0, total, total}; }
  int64_t words(int64_t total) const { return total / period * count; }
  /// Where the chunk holds word `flat` of the operand.
  int64_t at(int64_t flat) const { return flat / period * count + flat % period - first; }
};
/// The window of each operand of `op` that rows [r0, r1) of result `result` read.
SmallVector<Window> operandWindows(Operation *op, unsigned result, int64_t r0, int64_t r1);
/// The row ranges of result `result` that `op`'s generic kernels compute:
/// one chunk when it fits a PE of `sramWords` words (or cannot be split).
SmallVector<std::pair<int64_t, int64_t>> chunkRows(Operation *op, unsigned result,
                                                   int64_t sramWords);
/// The plan of a generic kernel for result `result` of `op`.
KernelPlan planGeneric(Operation *op, unsigned result, StringRef name);

} // namespace wsc::lowering

#endif // WSC_LIB_CONVERSION_KINDS_GENERIC_H
