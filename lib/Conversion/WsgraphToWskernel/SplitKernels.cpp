//===- SplitKernels.cpp - planned kernels split into pieces ---------------===//
//
// Before kernels are sized, some plans become several: a host-read linear
// too wide for the arch's columns splits into column pieces, and under a
// defect map a kernel whose weights need more PEs than a clean rectangle
// offers splits into pieces over weight rows or output columns
// (docs/defects.md).
//
//===----------------------------------------------------------------------===//
#include "KernelBody.h"
#include "wsc/Analysis/WeightData.h"
#include "wsgraph/WsgraphDialect.h"

#include <cmath>

using namespace mlir;
using namespace wsc;
using namespace wsc::lowering;
namespace wg = wsc::wsgraph;

namespace {

/// The size of equal pieces of `total` (rows or columns), as few pieces as
/// `fits` allows (it must hold for every size below one it holds for), or 0
/// when even size 1 does not fit. A binary search: a split may have
/// thousands of pieces.
int64_t evenPieceSize(int64_t total, function_ref<bool(int64_t)> fits) {
  if (!fits(1))
    return 0;
  int64_t lo = 1, hi = total; // fits(lo); the answer is in [lo, hi]
  while (lo < hi) {
    int64_t mid = lo + (hi - lo + 1) / 2;
    if (fits(mid))
      lo = mid;
    else
      hi = mid - 1;
  }
  return ceilDiv(total, ceilDiv(total, lo)); // the same pieces, evened out
}

bool hasBias(const KernelPlan &p) {
  return cast<RankedTensorType>(p.inputs.back().getType()).getRank() == 1;
}

/// K and the output columns of a host-read linear (or of its column piece).
std::pair<int64_t, int64_t> hostLinearShape(const KernelPlan &p) {
  Value w = hasBias(p) ? p.inputs[p.inputs.size() - 2] : p.inputs.back();
  auto wt = cast<RankedTensorType>(w.getType());
  return {wt.getDimSize(0), p.colHi ? p.colHi - p.colLo : wt.getDimSize(1)};
}

/// Appends `p`, a host-read linear without residual, as `pieces` kernels
/// over even ranges of its output columns: each keeps and computes columns
/// [colLo, colHi) of the whole result, every piece after the first writing
/// into the one before's.
void appendColumnPieces(const KernelPlan &p, int64_t pieces, int64_t batch, int64_t tokens,
                        wafer::ArchAttr arch, std::vector<KernelPlan> &out) {
  auto [k, n] = hostLinearShape(p);
  int64_t per = ceilDiv(n, pieces);
  for (int64_t i = 0, lo = 0; lo < n; ++i, lo += per) {
    KernelPlan q = p;
    q.name = p.name + ".c" + std::to_string(i);
    q.colLo = p.colLo + lo, q.colHi = q.colLo + std::min(per, n - lo);
    int64_t cols = q.colHi - q.colLo;
    q.work = p.work * double(cols) / double(n);
    q.cycles = linearCycles(k, cols, p.kind == "linear_gelu", false, batch * tokens, arch,
                            asyncColumnSums(tokens));
    q.alone = linearCycles(k, cols, p.kind == "linear_gelu", false, batch * tokens, arch,
                           asyncColumnSums(tokens), 1.0, /*alone=*/true);
    q.size = linearSizer(k, cols, true, false, batch, tokens, p.storage, arch, q.cycles);
    q.writesIntoPrevious = p.writesIntoPrevious || i > 0;
    out.push_back(std::move(q));
  }
}

} // namespace


/// Splits each host-read linear whose tiles, at its share of `capacity`
/// PEs, would be much wider than tall because the arch is too narrow for
/// its columns (GPT's LM head: 768 x 50257 on 762 columns puts 2 x 66
/// weights on a PE, and its column sums and host relays cost two words per
/// 2 multiply-adds). Column pieces stacked on the wafer get square tiles.
void wsc::lowering::splitWideHostLinears(std::vector<KernelPlan> &plans, double capacity,
                                         int64_t batch, int64_t tokens, wafer::ArchAttr arch) {
  double total = 0;
  for (const KernelPlan &p : plans)
    total += p.work;
  std::vector<KernelPlan> split;
  for (KernelPlan &p : plans) {
    bool linear = p.kind == "linear" || p.kind == "linear_gelu";
    // (An LM head that picks the next token keeps its columns whole: the
    // argmax runs along its last row.)
    if (!p.hostResult || !linear || p.picksNext ||
        p.inputs.size() != (hasBias(p) ? 3u : 2u) || total <= 0) {
      split.push_back(std::move(p));
      continue;
    }
    auto [k, n] = hostLinearShape(p);
    // The columns of square tiles on its share of the PEs.
    double share = capacity * p.work / total;
    double squareCols = std::sqrt(share * double(n) / double(k));
    int64_t pieces = std::min<int64_t>(n, int64_t(std::ceil(squareCols / double(arch.getWidth()))));
    if (pieces <= 1) {
      split.push_back(std::move(p));
      continue;
    }
    appendColumnPieces(p, pieces, batch, tokens, arch, split);
  }
  plans = std::move(split);
}

/// Splits each linear and embedding whose weights alone need more than
/// `maxPes` PEs into a chain of pieces over weight rows (docs/defects.md).
LogicalResult wsc::lowering::splitForDefects(std::vector<KernelPlan> &plans, int64_t maxPes,
                                             double defectRate, int64_t batch, int64_t tokens,
                                             wafer::ArchAttr arch) {
  std::vector<KernelPlan> split;
  for (KernelPlan &p : plans) {
    bool linear = p.kind == "linear" || p.kind == "linear_gelu";
    p.h = 1, p.w = 1;
    if (linear || p.kind == "embed")
      p.size(p);
    if (p.h * p.w <= maxPes) {
      split.push_back(std::move(p));
      continue;
    }
    if (p.hostResult && linear) {
      // A host-read result splits by output columns (docs/defects.md).
      if (p.inputs.size() != (hasBias(p) ? 3u : 2u))
        return p.anchor->emitError() << "kernel '" << p.name
                                     << "' cannot be split by columns: it adds a residual";
      auto [k, n] = hostLinearShape(p);
      auto fitsCap = [&](int64_t cols) {
        KernelPlan probe = p;
        probe.h = 1, probe.w = 1;
        linearSizer(k, cols, true, false, batch, tokens, p.storage, arch)(probe);
        return probe.h * probe.w <= maxPes;
      };
      int64_t per = evenPieceSize(n, fitsCap);
      if (!per)
        return p.anchor->emitError()
               << "kernel '" << p.name << "' needs more than the " << maxPes
               << " PEs a defect rate of " << defectRate
               << " leaves clean even for one output column";
      appendColumnPieces(p, ceilDiv(n, per), batch, tokens, arch, split);
      continue;
    }
    if (p.hostResult) {
      split.push_back(std::move(p));
      continue;
    }
    auto cannot = [&](const Twine &why) {
      return p.anchor->emitError()
             << "kernel '" << p.name << "' needs at least " << p.h * p.w
             << " PEs, more than the " << maxPes << " a defect rate of " << defectRate
             << " leaves clean, and cannot be split: " << why;
    };
    // Operands: linear {x, [residual], W, [bias]}; embed {ids, table, [positions]}.
    bool residual = linear && p.inputs.size() > 1 && !isStatic(p.inputs[1]);
    size_t at = residual ? 2 : 1;
    auto weight = p.inputs[at].getDefiningOp<wg::WeightOp>();
    if (!weight)
      return cannot("its weight is not a stored weight");
    if ((p.kind == "linear_gelu" || p.relu) && residual)
      return cannot("a residual after the activation needs the whole sum first");
    auto type = cast<RankedTensorType>(weight.getType());
    int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
    bool positions = !linear && p.inputs.size() > 2;
    auto sizer = [&](int64_t pieceRows, bool first) {
      return linear ? linearSizer(pieceRows, cols, false, residual || !first, batch, tokens,
                                  p.storage, arch)
                    : embedSizer(pieceRows, cols, positions && first, !first, batch, tokens,
                                 p.storage, arch);
    };
    // The most rows per piece whose every piece fits maxPes.
    int64_t per = evenPieceSize(rows, [&](int64_t perPiece) {
      KernelPlan probe = p;
      probe.h = 1, probe.w = 1;
      probe.size = sizer(perPiece, /*first=*/false);
      probe.size(probe);
      KernelPlan probeFirst = probe;
      probeFirst.h = 1, probeFirst.w = 1;
      sizer(perPiece, /*first=*/true)(probeFirst);
      return std::max(probe.h * probe.w, probeFirst.h * probeFirst.w) <= maxPes;
    });
    if (!per)
      return cannot("even one weight row per piece needs more");
    if (failed(fixPruneCut(weight, p.anchor)))
      return failure();
    int64_t pieces = ceilDiv(rows, per);
    OpBuilder b(weight->getContext());
    b.setInsertionPointAfter(weight);
    for (int64_t i = 0; i < pieces; ++i) {
      int64_t lo = i * per, hi = std::min(rows, lo + per);
      bool first = i == 0, last = i + 1 == pieces;
      KernelPlan q = p;
      q.name = p.name + ".p" + std::to_string(i);
      q.weightRowBase = lo;
      q.work = p.work * double(hi - lo) / double(rows);
      q.size = sizer(hi - lo, first);
      wg::WeightOp sliced = wg::sliceWeightRows(b, weight, lo, hi);
      keepAlterations(weight, sliced, lo * weight.getElementStrides()[0]);
      Value slice = sliced.getResult();
      q.partialKey = last ? Value() : slice;
      // The first piece takes the real residual (sums commute; GELU was
      // ruled out above); later ones the partial sum; the last the bias,
      // GELU and positions go to the first piece.
      q.inputs = {p.inputs[0]};
      if (first && residual)
        q.inputs.push_back(p.inputs[1]);
      if (!first)
        q.inputs.push_back(split.back().partialKey);
      q.inputs.push_back(slice);
      if (linear && last && p.inputs.size() > at + 1)
        q.inputs.push_back(p.inputs[at + 1]);
      if (positions && first)
        q.inputs.push_back(p.inputs[2]);
      if (linear && !last)
        q.kind = "linear", q.relu = false;
      split.push_back(std::move(q));
    }
  }
  plans = std::move(split);
  return success();
}

