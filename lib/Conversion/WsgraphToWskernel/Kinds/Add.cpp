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
  plan.work = double(ctx.width(add.getResult()));
  plan.size = addSizer();
  return Planned::Yes;
}

Sizer wsc::lowering::addSizer() {
  return [](KernelPlan &p) { p.h = 1, p.w = 1; };
}

std::pair<int64_t, double> AddKind::writeBody(Body &k, const KernelPlan &p, int64_t batch,
                                   int64_t tokens, const CostModel &cost) const {
  Sram sram;
  int64_t c = k.words(0);
  int64_t a = sram.words(c), b = sram.words(c);
  k.tokenLoops();
  int64_t in = k.recvAll(0, k.aff(a)) + k.recvAll(1, k.aff(b));
  k.vector("add", k.aff(a), k.aff(a), k.aff(b), k.aff(c));
  k.send("out0", k.aff(a), k.aff(c));
  k.outBlocks.push_back(c);
  return {sram.next, cost.words(in) + cost.vector(c) + cost.words(c)};
}

const KernelKind &wsc::lowering::addKind() {
  static const AddKind kind;
  return kind;
}
