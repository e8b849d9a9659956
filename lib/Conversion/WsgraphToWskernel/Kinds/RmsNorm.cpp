//===- RmsNorm.cpp - the RMS norm kernel kind -------------------------------===//
//
// An RMS norm over the last dimension of [batch, tokens, C] (Llama's
// RMSNorm): each PE scales its block of C, the sum of squares all-reduced
// along the row. The layer norm's row layout and blocks, with one
// all-reduce instead of two and no centring.
//
//===----------------------------------------------------------------------===//
#include "Kind.h"

#include "wsgraph/WsgraphDialect.h"

using namespace mlir;
using namespace wsc;
using namespace wsc::lowering;
namespace wg = wsc::wsgraph;

// The epsilon a resize needs again (the operands do not carry it).
static constexpr StringLiteral kEpsilonAttr = "wskernel.epsilon";

namespace {

class RmsNormKind : public KernelKind {
public:
  Planned plan(Operation *op, PlanContext &ctx, KernelPlan &plan) const override;
  std::pair<int64_t, double> writeBody(Body &k, const KernelPlan &p, int64_t batch, int64_t tokens,
                                       const CostModel &cost) const override;
  LogicalResult resize(wk::KernelOp kernel, ArrayRef<LogicalInput> ins, KernelPlan &p,
                       int64_t batch, int64_t tokens, wafer::ArchAttr arch) const override;
  void annotate(wk::KernelOp kernel, const KernelPlan &p) const override;
};

/// The width within the PE budget that takes the fewest cycles per token:
/// more PEs share the vector, but the all-reduce's round trip grows. Its
/// buffers (a step of tokens' x and results) and code must fit a PE.
Sizer rmsNormSizer(int64_t c, int64_t tokens, wafer::ArchAttr arch) {
  int64_t sramWords = arch.getSramBytes() / 4;
  CostModel cost{arch};
  int64_t step = layerNormTokens(tokens);
  return [=](KernelPlan &p) {
    int64_t most = std::max<int64_t>(1, std::min({p.h * p.w, c, maxCols(p, arch)}));
    int64_t best = most;
    double bestCycles = 0;
    for (int64_t w = 1; w <= most; ++w) {
      int64_t cb = ceilDiv(c, w);
      if ((2 * step + 1) * cb + step + 512 > sramWords && w < most)
        continue;
      double cycles = cost.rmsNorm(c, w, CostModel::Output::Blocks, cb,
                                   blockColumns(p, w, c, arch), step);
      if (best == most || cycles < bestCycles)
        best = w, bestCycles = cycles;
    }
    p.h = 1, p.w = ceilDiv(c, ceilDiv(c, best));
  };
}

} // namespace

Planned RmsNormKind::plan(Operation *op, PlanContext &ctx, KernelPlan &plan) const {
  auto norm = dyn_cast<wg::RmsNormOp>(op);
  if (!norm)
    return Planned::NotThisKind;
  int64_t tokens = ctx.tokens;
  wafer::ArchAttr arch = ctx.arch;
  CostModel cost = ctx.cost;
  if (!ctx.isActivation(norm.getInput()) || !isStatic(norm.getScale()) ||
      cast<RankedTensorType>(norm.getScale().getType()).getRank() != 1 ||
      *wg::normalizeAxis(norm.getAxis(), 3) != 2)
    return Planned::NotThisKind;
  if (!ctx.streamOf(norm.getInput()))
    return Planned::Failed;
  plan.kind = "rms_norm";
  plan.name = "l" + std::to_string(ctx.layer) + ".rms";
  plan.layer = ctx.layer;
  // The norm before the LM head.
  if (llvm::any_of(norm->getUsers(), [&](Operation *u) {
        auto l = dyn_cast<wg::LinearOp>(u);
        return l && llvm::any_of(l->getUsers(),
                                 [](Operation *v) { return isa<func::ReturnOp>(v); });
      }))
    plan.name = "rms_f", plan.layer = -1;
  plan.inputs = {norm.getInput(), norm.getScale()};
  plan.epsilon = norm.getEpsilon().convertToFloat();
  int64_t c = ctx.width(norm.getInput());
  plan.work = double(c);
  plan.size = rmsNormSizer(c, tokens, arch);
  plan.cycles = [=](const KernelPlan &p) {
    return cost.rmsNorm(c, p.w, outputOf(p), ceilDiv(c, p.w), blockColumns(p, c, arch),
                        layerNormTokens(tokens));
  };
  return Planned::Yes;
}

std::pair<int64_t, double> RmsNormKind::writeBody(Body &k, const KernelPlan &p, int64_t batch,
                                                  int64_t tokens, const CostModel &cost) const {
  Sram sram;
  int64_t w = p.w;
  CostModel::Output out = k.output;
  int64_t g = k.group;
  // PE px scales block px of x. Its sum of squares is all-reduced over the
  // row: sums run east on "row", the last PE's total comes back west on
  // "back". A group of `step` tokens shares the round trip.
  int64_t c = k.words(0), cb = ceilDiv(c, w), step = layerNormTokens(tokens);
  int64_t x = sram.words(step * cb), stat = sram.words(step), gamma = sram.words(cb);
  // Token j of the group finishes into part + j*cb: its blocks leave on
  // the async engine while the next token is scaled.
  int64_t part = sram.words(step * cb);
  k.initTile(k.operand(1), gamma, 1, cb, {0, 0}, {0, cb});
  k.tokenLoops(step);
  // Token j of the group: its x at x + j*cb, its statistic at stat + j.
  wk::AffAttr xj = k.aff(x, {4 * cb}), sj = k.aff(stat, {4});
  int64_t in = 0;
  k.loop(step, [&] {
    // The last PE's block may be shorter: the words past it stay zero, and
    // add nothing to the sum of squares.
    in = k.recvRange(0, 0, cb, w, c, xj, /*byRow=*/false);
    k.matvec(sj, xj, xj, k.aff(1), k.aff(cb), false);
  });
  if (w > 1) {
    k.recv("row", k.aff(stat), k.aff(step), "add", k.pes(1, w - 1, 0, 0));
    k.send("row", k.aff(stat), k.aff(step), k.pes(0, w - 2, 0, 0));
    k.recv("back", k.aff(stat), k.aff(step), "copy", k.pes(0, w - 2, 0, 0));
    k.send("back", k.aff(stat), k.aff(step), k.pes(1, w - 1, 0, 0));
  }
  k.loop(step, [&] {
    k.imm("mul", sj, sj, 1.0f / float(c), k.aff(1));
    k.imm("add", sj, sj, p.epsilon, k.aff(1));
    k.unary("rsqrt", sj, sj, k.aff(1));
    wk::AffAttr pj = k.aff(part, {4 * cb});
    k.scalar("mul", pj, xj, sj, k.aff(cb));
    k.vector("mul", pj, pj, k.aff(gamma), k.aff(cb));
    k.sendGroups(pj, cb, c, 0, /*async=*/true);
  });
  return {sram.next, cost.rmsNorm(c, w, out, in, g, step)};
}

LogicalResult RmsNormKind::resize(wk::KernelOp kernel, ArrayRef<LogicalInput> ins, KernelPlan &p,
                                  int64_t batch, int64_t tokens, wafer::ArchAttr arch) const {
  auto epsilon = kernel->getAttrOfType<FloatAttr>(kEpsilonAttr);
  if (!epsilon || !streamWordsOf(ins, 0))
    return failure();
  p.epsilon = epsilon.getValueAsDouble();
  p.size = rmsNormSizer(streamWordsOf(ins, 0), tokens, arch);
  return success();
}

void RmsNormKind::annotate(wk::KernelOp kernel, const KernelPlan &p) const {
  kernel->setAttr(kEpsilonAttr, FloatAttr::get(Float32Type::get(kernel.getContext()), p.epsilon));
}

const KernelKind &wsc::lowering::rmsNormKind() {
  static const RmsNormKind kind;
  return kind;
}
