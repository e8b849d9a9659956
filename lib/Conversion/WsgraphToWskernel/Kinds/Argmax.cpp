//===- Argmax.cpp - the argmax kernel kind ---------------------------------===//
//
// Greedy decoding's next token: the argmax of each token's logits [V], on a
// row of PEs that each take a slice of the vocabulary, find its largest
// logit and the first index holding it, and pass the better (max, index)
// pair east. The last PE keeps the token ids for the host and, in a
// generating program, sends each one back to the embedding.
//
//===----------------------------------------------------------------------===//
#include "Kind.h"

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

double argmaxCycles(int64_t v, int64_t w, const CostModel &cost) {
  int64_t vb = ceilDiv(v, w);
  // Receive, subtract the max, compare, select, two reductions; the pair
  // from the west, its comparison and selection, and the pair sent on.
  return cost.words(vb) + 3 * cost.vector(vb) + 2 * cost.vector(vb) +
         (w > 1 ? cost.forwarded(2) + 3 * cost.vector(2) : 0.0) + cost.vector(1);
}

/// The global index of every logit, as floats (exact below 2^24).
Value indexTable(Operation *at, int64_t v) {
  OpBuilder b(at);
  SmallVector<float> index(v);
  for (int64_t i = 0; i < v; ++i)
    index[i] = float(i);
  auto type = RankedTensorType::get({v}, b.getF32Type());
  return wg::ConstantOp::create(b, at->getLoc(), DenseElementsAttr::get(type, ArrayRef(index)));
}

int64_t vocabOf(wg::ArgMaxOp op) { return op.getInput().getType().getShape().back(); }

} // namespace

Planned ArgmaxKind::plan(Operation *op, PlanContext &ctx, KernelPlan &plan) const {
  auto argmax = dyn_cast<wg::ArgMaxOp>(op);
  if (!argmax || !ctx.isActivation(argmax.getInput()) || argmax.getKeepdims() ||
      argmax.getSelectLastIndex() || *wg::normalizeAxis(argmax.getAxis(), 3) != 2 ||
      vocabOf(argmax) >= (int64_t(1) << 24))
    return Planned::NotThisKind;
  if (!ctx.streamOf(argmax.getInput()))
    return Planned::Failed;
  int64_t vocab = vocabOf(argmax);
  plan.kind = "argmax";
  plan.name = "argmax";
  plan.inputs = {argmax.getInput(), indexTable(op, vocab)};
  plan.hostResult = true;
  plan.feedsBack = ctx.generate;
  plan.work = double(vocab);
  plan.size = argmaxSizer(vocab, ctx.arch);
  CostModel cost = ctx.cost;
  plan.cycles = [=](const KernelPlan &p) { return argmaxCycles(vocab, p.w, cost); };
  return Planned::Yes;
}

std::pair<int64_t, double> ArgmaxKind::writeBody(Body &k, const KernelPlan &p, int64_t batch,
                                                 int64_t tokens, const CostModel &cost) const {
  Sram sram;
  int64_t w = p.w, v = k.words(0), vb = ceilDiv(v, w);
  int64_t part = sram.words(vb), index = sram.words(vb), zeros = sram.words(vb);
  int64_t never = sram.words(vb), picked = sram.words(vb);
  // [max, index] of this slice, then of the slices west of it.
  int64_t pair = sram.words(2), west = sram.words(2), better = sram.words(2);
  int64_t kept = sram.words(batch * tokens);
  OpBuilder &b = k.builder();
  Location loc = b.getUnknownLoc();
  k.initTile(k.operand(1), index, 1, vb, {0, 0}, {0, vb});
  // Past the vocabulary (the last slice's padding) nothing is picked.
  k.imm("fill", k.aff(never), k.aff(0), std::numeric_limits<float>::infinity(), k.aff(vb));
  k.imm("fill", k.aff(part), k.aff(0), -std::numeric_limits<float>::infinity(), k.aff(vb));
  wk::HostOutputOp::create(b, loc, 0, kept, batch, tokens, b.getDenseI64ArrayAttr({0, 0}),
                           b.getDenseI64ArrayAttr({0, 0}), k.pes(w - 1, w - 1, 0, 0));
  k.tokenLoops();
  int64_t in = k.recvRange(0, 0, vb, w, v, k.aff(part), /*byRow=*/false);
  // The first index of the slice's max: x - max is 0 exactly there.
  k.reduce("max", k.aff(pair), k.aff(part), k.aff(vb));
  k.scalar("sub", k.aff(picked), k.aff(part), k.aff(pair), k.aff(vb));
  k.vector("eq", k.aff(picked), k.aff(picked), k.aff(zeros), k.aff(vb));
  wk::SelectOp::create(b, loc, k.aff(picked), k.aff(picked), k.aff(index), k.aff(never),
                       k.aff(vb), nullptr, nullptr);
  k.reduce("min", k.aff(pair + 4), k.aff(picked), k.aff(vb));
  if (w > 1) {
    // The west pair wins ties: its indices are smaller.
    ArrayAttr notFirst = k.pes(1, w - 1, 0, 0);
    k.recv("row", k.aff(west), k.aff(2), "copy", notFirst);
    k.vector("ge", k.aff(better), k.aff(west), k.aff(pair), k.aff(1), notFirst);
    k.unary("copy", k.aff(better + 4), k.aff(better), k.aff(1), notFirst);
    wk::SelectOp::create(b, loc, k.aff(pair), k.aff(better), k.aff(west), k.aff(pair), k.aff(2),
                         notFirst, nullptr);
    k.send("row", k.aff(pair), k.aff(2), k.pes(0, w - 2, 0, 0));
  }
  ArrayAttr last = k.pes(w - 1, w - 1, 0, 0);
  wk::AffAttr slot = k.aff(kept, {4, 4 * tokens});
  k.unary("to_int", slot, k.aff(pair + 4), k.aff(1), last);
  // The next position's token, while the sequence has one.
  if (p.feedsBack && tokens > 1)
    k.send("fb", slot, k.aff(1), last, k.guards({k.aff(tokens - 2, {-1, 0})}));
  return {sram.next, argmaxCycles(v, w, cost) + cost.words(in - vb)};
}

LogicalResult ArgmaxKind::resize(wk::KernelOp kernel, ArrayRef<LogicalInput> ins, KernelPlan &p,
                                 int64_t batch, int64_t tokens, wafer::ArchAttr arch) const {
  int64_t v = streamWordsOf(ins, 0);
  if (v <= 0)
    return failure();
  p.size = argmaxSizer(v, arch);
  return success();
}

const KernelKind &wsc::lowering::argmaxKind() {
  static const ArgmaxKind kind;
  return kind;
}
