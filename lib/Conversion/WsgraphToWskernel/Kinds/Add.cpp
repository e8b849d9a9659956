//===- Add.cpp - the residual add kernel kind -------------------------------===//
//
// The sum of two [batch, tokens, C] activations on one PE (a residual add
// that no linear took).
//
//===----------------------------------------------------------------------===//
#include "Kind.h"

#include "wsgraph/WsgraphDialect.h"

using namespace mlir;
using namespace wsc;
using namespace wsc::lowering;
namespace wg = wsc::wsgraph;

namespace {

class AddKind : public KernelKind {
public:
  Planned plan(Operation *op, PlanContext &ctx, KernelPlan &plan) const override;
  std::pair<int64_t, double> writeBody(Body &k, const KernelPlan &p, int64_t batch, int64_t tokens,
                                       const CostModel &cost) const override;
  LogicalResult resize(wk::KernelOp kernel, ArrayRef<LogicalInput> ins, KernelPlan &p,
                       int64_t batch, int64_t tokens, wafer::ArchAttr arch) const override {
    int64_t c = streamWordsOf(ins, 0);
    if (c <= 0)
      return failure();
    p.size = addSizer(c, arch);
    return success();
  }
};

} // namespace

Planned AddKind::plan(Operation *op, PlanContext &ctx, KernelPlan &plan) const {
  auto add = dyn_cast<wg::AddOp>(op);
  if (!add)
    return Planned::NotThisKind;
  if (!ctx.isActivation(add.getResult()) || add.getLhs().getType() != add.getType() ||
      add.getRhs().getType() != add.getType() || isStatic(add.getLhs()) ||
      isStatic(add.getRhs()) || isa<BlockArgument>(add.getLhs()) ||
      isa<BlockArgument>(add.getRhs()))
    return Planned::NotThisKind;
  if (!ctx.streamOf(add.getLhs()) || !ctx.streamOf(add.getRhs()))
    return Planned::Failed;
  plan.kind = "add";
  plan.name = "l" + std::to_string(ctx.layer) + ".add";
  plan.layer = ctx.layer;
  plan.inputs = {add.getLhs(), add.getRhs()};
  int64_t c = ctx.width(add.getResult());
  plan.work = double(c);
  plan.size = addSizer(c, ctx.arch);
  CostModel cost = ctx.cost;
  plan.cycles = [=](const KernelPlan &p) { return addCycles(c, p.w, cost); };
  return Planned::Yes;
}

/// Column px adds block px of both vectors and sends it on: the words in
/// and out fall with the width.
double wsc::lowering::addCycles(int64_t c, int64_t w, const CostModel &cost) {
  int64_t cb = ceilDiv(c, w);
  return cost.words(2 * cb) + cost.vector(cb) + cost.words(cb);
}

Sizer wsc::lowering::addSizer(int64_t c, wafer::ArchAttr arch) {
  return [=](KernelPlan &p) {
    int64_t w = std::clamp<int64_t>(p.h * p.w, 1, std::min(c, maxCols(p, arch)));
    p.h = 1, p.w = ceilDiv(c, ceilDiv(c, w)); // no column of padding only
  };
}

std::pair<int64_t, double> AddKind::writeBody(Body &k, const KernelPlan &p, int64_t batch,
                                   int64_t tokens, const CostModel &cost) const {
  Sram sram;
  int64_t c = k.words(0), w = p.w, cb = ceilDiv(c, w);
  int64_t a = sram.words(cb), b = sram.words(cb);
  k.tokenLoops();
  int64_t in = k.recvRange(0, 0, cb, w, c, k.aff(a), /*byRow=*/false) +
               k.recvRange(1, 0, cb, w, c, k.aff(b), /*byRow=*/false);
  k.vector("add", k.aff(a), k.aff(a), k.aff(b), k.aff(cb));
  k.sendGroups(k.aff(a), cb, c, 0);
  return {sram.next, cost.words(in) + cost.vector(cb) + cost.words(cb)};
}

const KernelKind &wsc::lowering::addKind() {
  static const AddKind kind;
  return kind;
}
