//===- Argmax.cpp - the argmax kernel kind ---------------------------------===//
//
// A generating program's next token: the argmax of each token's logits [V]
// (or a sample's noisy scores), on a row of PEs that each take a slice of
// the vocabulary, find its largest score and the first index holding it,
// and pass the better (max, index) pair east. The last PE keeps the token
// ids for the host and, in a generating program, sends each one back to the
// embedding.
//
//===----------------------------------------------------------------------===//
#include "Kind.h"
#include "NextToken.h"

#include "wsgraph/WsgraphDialect.h"

using namespace mlir;
using namespace wsc;
using namespace wsc::lowering;
namespace wg = wsc::wsgraph;

namespace {

class ArgmaxKind : public KernelKind {
public:
  Planned plan(Operation *op, PlanContext &ctx, KernelPlan &plan) const override;
  std::pair<int64_t, double> writeBody(Body &k, const KernelPlan &p, int64_t batch, int64_t tokens,
                                       const CostModel &cost) const override;
  LogicalResult resize(wk::KernelOp kernel, ArrayRef<LogicalInput> ins, KernelPlan &p,
                       int64_t batch, int64_t tokens, wafer::ArchAttr arch) const override;
  /// The pair's chain east.
  double chainCycles(const KernelPlan &p, int64_t n, int64_t tokens,
                     const CostModel &cost) const override {
    int64_t v = cast<ShapedType>(p.inputs[1].getType()).getShape().back(); // the indices
    return NextToken::chainCycles(
        p.w, cost, p.topK ? NextToken::topKBitsFor(ceilDiv(v, p.w), p.w, cost) : 0);
  }
};

/// One row of PEs, about sqrt(V) of them: a slice's scan and the chain
/// east take about as long each.
Sizer argmaxSizer(int64_t v, wafer::ArchAttr arch) {
  return [=](KernelPlan &p) {
    int64_t w = int64_t(std::ceil(std::sqrt(double(v))));
    p.h = 1;
    p.w = std::clamp<int64_t>(w, 1, std::min(v, maxCols(p, arch)));
  };
}

/// The bits a top-k step settles on the plan's w PEs (0: no top-k).
int64_t topKBitsOf(bool topK, int64_t v, int64_t w, const CostModel &cost) {
  return topK ? NextToken::topKBitsFor(ceilDiv(v, w), w, cost) : 0;
}

double argmaxCycles(int64_t v, int64_t w, bool samples, bool topK, const CostModel &cost) {
  int64_t vb = ceilDiv(v, w);
  return cost.words(vb) + NextToken::cycles(vb, w, cost, samples, topKBitsOf(topK, v, w, cost));
}

} // namespace

Planned ArgmaxKind::plan(Operation *op, PlanContext &ctx, KernelPlan &plan) const {
  if (!NextToken::picks(op))
    return Planned::NotThisKind;
  Value logits = op->getOperand(0);
  int64_t vocab = cast<ShapedType>(logits.getType()).getShape().back();
  if (!ctx.isActivation(logits) || vocab >= (int64_t(1) << 24))
    return Planned::NotThisKind;
  if (!ctx.streamOf(logits))
    return Planned::Failed;
  plan.kind = "argmax";
  plan.name = "argmax";
  plan.inputs = {logits, NextToken::indices(op, vocab)};
  if (Value params = NextToken::paramsOf(op)) {
    plan.inputs.push_back(params);
    plan.samples = true;
    plan.topK = NextToken::takesTopK(params);
  }
  plan.hostResult = true;
  plan.feedsBack = ctx.generate;
  plan.work = double(vocab);
  plan.size = argmaxSizer(vocab, ctx.arch);
  CostModel cost = ctx.cost;
  bool samples = plan.samples, topK = plan.topK;
  plan.cycles = [=](const KernelPlan &p) {
    return argmaxCycles(vocab, p.w, samples, topK, cost);
  };
  return Planned::Yes;
}

std::pair<int64_t, double> ArgmaxKind::writeBody(Body &k, const KernelPlan &p, int64_t batch,
                                                 int64_t tokens, const CostModel &cost) const {
  Sram sram;
  int64_t w = p.w, v = k.words(0), vb = ceilDiv(v, w);
  int64_t part = sram.words(vb);
  NextToken next = NextToken::allocate(k, sram, 1, vb, batch * tokens,
                                       p.samples ? std::optional<unsigned>(2) : std::nullopt,
                                       topKBitsOf(p.topK, v, w, cost));
  next.keepForHost(k, 0, batch, tokens);
  k.tokenLoops();
  int64_t in = k.recvRange(0, 0, vb, w, v, k.aff(part), /*byRow=*/false);
  next.pick(k, part, vb, v, tokens, /*parity=*/false, p.feedsBack);
  return {sram.next, argmaxCycles(v, w, p.samples, p.topK, cost) + cost.words(in - vb)};
}

LogicalResult ArgmaxKind::resize(wk::KernelOp kernel, ArrayRef<LogicalInput> ins, KernelPlan &p,
                                 int64_t batch, int64_t tokens, wafer::ArchAttr arch) const {
  int64_t v = streamWordsOf(ins, 0);
  if (v <= 0)
    return failure();
  p.size = argmaxSizer(v, arch);
  p.samples = ins.size() > 2;
  p.topK = p.samples && NextToken::takesTopK(p.inputs[2]);
  return success();
}

const KernelKind &wsc::lowering::argmaxKind() {
  static const ArgmaxKind kind;
  return kind;
}
