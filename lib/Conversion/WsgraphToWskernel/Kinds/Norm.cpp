//===- Norm.cpp - the normalization kernel kinds (layer_norm, rms_norm) ----===//
//
// A layer norm or an RMS norm (Llama's RMSNorm) over the last dimension of
// [batch, tokens, C]: each PE normalizes its block of C on one row of PEs,
// the statistics all-reduced along the row. The layer norm takes the mean
// and then the variance (two all-reduces, as torch computes them); the RMS
// norm only the sum of squares, and does not centre.
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

class NormKind : public KernelKind {
public:
  /// `center`: a layer norm (subtract the mean, an optional bias), else an RMS norm.
  explicit NormKind(bool center) : center(center) {}
  Planned plan(Operation *op, PlanContext &ctx, KernelPlan &plan) const override;
  std::pair<int64_t, double> writeBody(Body &k, const KernelPlan &p, int64_t batch, int64_t tokens,
                                       const CostModel &cost) const override;
  LogicalResult resize(wk::KernelOp kernel, ArrayRef<LogicalInput> ins, KernelPlan &p,
                       int64_t batch, int64_t tokens, wafer::ArchAttr arch) const override;
  void annotate(wk::KernelOp kernel, const KernelPlan &p) const override;
  /// The result's blocks leave after the token's statistics, not beside them.
  double chainCycles(const KernelPlan &p, int64_t n, int64_t tokens,
                     const CostModel &cost) const override {
    // One token alone also waits for each relay's delivery on its
    // all-reduces' round trips (its cycles per token count the hops).
    double relays = p.tokenAtATime ? (center ? 4.0 : 2.0) * double(p.w - 1) : 0.0;
    return relays * cost.delivery() +
           cost.output(CostModel::Output::Blocks, n, ceilDiv(n, p.w), p.w, 1,
                       blockColumns(p, n, cost.arch));
  }

private:
  bool center;
};

/// The estimate of a norm of C on w PEs.
double cycles(const CostModel &cost, bool center, int64_t c, int64_t w, CostModel::Output out,
              int64_t in, int64_t group, int64_t step) {
  return center ? cost.layerNorm(c, w, out, in, group, step)
                : cost.rmsNorm(c, w, out, in, group, step);
}

} // namespace

Planned NormKind::plan(Operation *op, PlanContext &ctx, KernelPlan &plan) const {
  if (center ? !isa<wg::LayerNormOp>(op) : !isa<wg::RmsNormOp>(op))
    return Planned::NotThisKind;
  Value input = op->getOperand(0), scale = op->getOperand(1);
  Value bias = op->getNumOperands() > 2 ? op->getOperand(2) : Value();
  int64_t tokens = ctx.tokens;
  wafer::ArchAttr arch = ctx.arch;
  CostModel cost = ctx.cost;
  // The kind reads x as a stream of token blocks, which the host's inputs
  // are not: a norm of a function argument stays generic.
  if (!ctx.isActivation(input) || isa<BlockArgument>(input) || !isStatic(scale) ||
      (bias && !isStatic(bias)) ||
      cast<RankedTensorType>(scale.getType()).getRank() != 1 ||
      *wg::normalizeAxis(op->getAttrOfType<IntegerAttr>("axis").getInt(), 3) != 2 ||
      op->getNumResults() != 1)
    return Planned::NotThisKind;
  if (!ctx.streamOf(input))
    return Planned::Failed;
  plan.kind = center ? "layer_norm" : "rms_norm";
  plan.name = "l" + std::to_string(ctx.layer) + (center ? ".ln" : ".rms");
  plan.layer = ctx.layer;
  // The norm before the LM head.
  if (llvm::any_of(op->getUsers(), [&](Operation *u) {
        auto l = dyn_cast<wg::LinearOp>(u);
        return l && llvm::any_of(l->getUsers(),
                                 [](Operation *v) { return isa<func::ReturnOp>(v); });
      }))
    plan.name = center ? "ln_f" : "rms_f", plan.layer = -1;
  plan.inputs = {input, scale};
  plan.epsilon = op->getAttrOfType<FloatAttr>("epsilon").getValueAsDouble();
  if (bias)
    plan.inputs.push_back(bias);
  int64_t c = ctx.width(input);
  plan.work = double(c);
  plan.size = normSizer(c, tokens, arch, center);
  bool centered = center;
  plan.cycles = [=](const KernelPlan &p) {
    return cycles(cost, centered, c, p.w, outputOf(p), ceilDiv(c, p.w), blockColumns(p, c, arch),
                  p.tokenAtATime ? 1 : layerNormTokens(tokens));
  };
  return Planned::Yes;
}

Sizer wsc::lowering::normSizer(int64_t c, int64_t tokens, wafer::ArchAttr arch, bool center) {
  int64_t sramWords = arch.getSramBytes() / 4;
  CostModel cost{arch};
  // The width within the PE budget that takes the fewest cycles per token:
  // more PEs share the vector, but the all-reduces' round trips grow. Its
  // buffers (a group of tokens' x and results) and code must fit a PE.
  return [=](KernelPlan &p) {
    int64_t step = p.tokenAtATime ? 1 : layerNormTokens(tokens);
    // As the body holds them: a group's x and results, its statistics, the
    // scale (and bias).
    auto words = [&](int64_t w) {
      int64_t cb = ceilDiv(c, w);
      return 2 * step * cb + step + (center ? 2 : 1) * cb * tileCopies(p);
    };
    // Past the budget when fewer PEs cannot hold a group of tokens (the
    // balancing asks for the fewest PEs first: it must see this width).
    int64_t widest = std::max<int64_t>(1, std::min(c, maxCols(p, arch))), fits = 1;
    while (fits < widest && words(fits) + 512 > sramWords)
      ++fits;
    int64_t most = std::max(fits, std::min(p.h * p.w, widest));
    int64_t best = most;
    double bestCycles = 0;
    for (int64_t w = fits; w <= most; ++w) {
      int64_t cb = ceilDiv(c, w);
      double est = cycles(cost, center, c, w, CostModel::Output::Blocks, cb,
                          blockColumns(p, w, c, arch), step);
      if (best == most || est < bestCycles)
        best = w, bestCycles = est;
    }
    p.h = 1, p.w = ceilDiv(c, ceilDiv(c, best));
  };
}

std::pair<int64_t, double> NormKind::writeBody(Body &k, const KernelPlan &p, int64_t batch,
                                               int64_t tokens, const CostModel &cost) const {
  Sram sram;
  int64_t w = p.w;
  // PE px normalizes block px of x. Each statistic is all-reduced over the
  // row: sums run east on "row", the last PE's total comes back west on
  // "back". A group of `step` tokens shares each all-reduce's round trip.
  int64_t c = k.words(0), cb = ceilDiv(c, w);
  int64_t step = p.tokenAtATime ? 1 : layerNormTokens(tokens);
  bool bias = p.inputs.size() > 2;
  int64_t x = sram.words(step * cb), stat = sram.words(step);
  int64_t gamma = sram.words(cb), beta = bias ? sram.words(cb) : 0;
  // Token j of the group finishes into part + j*cb: its blocks leave on
  // the async engine while the next token is scaled.
  int64_t part = sram.words(step * cb);
  k.initTile(k.operand(1), gamma, 1, cb, {0, 0}, {0, cb});
  if (bias)
    k.initTile(k.operand(2), beta, 1, cb, {0, 0}, {0, cb});
  k.tokenLoops(step);
  auto allReduce = [&] { k.rowAllReduce(stat, step, 0); };
  // Token j of the group: its x at x + j*cb, its statistic at stat + j.
  wk::AffAttr xj = k.aff(x, {4 * cb}), sj = k.aff(stat, {4});
  int64_t in = 0;
  k.loop(step, [&] {
    // The last PE's block may be shorter: the words past it stay zero.
    in = k.recvRange(0, 0, cb, w, c, xj, /*byRow=*/false);
    if (center)
      k.reduce("sum", sj, xj, k.aff(cb));
    else
      k.matvec(sj, xj, xj, k.aff(1), k.aff(cb), false);
  });
  allReduce();
  if (center) {
    // Padding words are not part of x: zero them again after centring.
    int64_t last = c - (w - 1) * cb;
    k.loop(step, [&] {
      k.imm("mul", sj, sj, 1.0f / float(c), k.aff(1));
      k.scalar("sub", xj, xj, sj, k.aff(cb));
      if (last < cb)
        k.imm("fill", k.aff(x + 4 * last, {4 * cb}), k.aff(0), 0.0f, k.aff(cb - last),
              k.pes(w - 1, w - 1, 0, 0));
      k.matvec(sj, xj, xj, k.aff(1), k.aff(cb), false);
    });
    allReduce();
  }
  k.loop(step, [&] {
    k.imm("mul", sj, sj, 1.0f / float(c), k.aff(1));
    k.imm("add", sj, sj, p.epsilon, k.aff(1));
    k.unary("rsqrt", sj, sj, k.aff(1));
    wk::AffAttr pj = k.aff(part, {4 * cb});
    k.scalar("mul", pj, xj, sj, k.aff(cb));
    k.vector("mul", pj, pj, k.aff(gamma), k.aff(cb));
    if (bias)
      k.vector("add", pj, pj, k.aff(beta), k.aff(cb));
    k.sendGroups(pj, cb, c, 0, /*async=*/true);
  });
  return {sram.next, cycles(cost, center, c, w, k.output, in, k.group, step)};
}

LogicalResult NormKind::resize(wk::KernelOp kernel, ArrayRef<LogicalInput> ins, KernelPlan &p,
                               int64_t batch, int64_t tokens, wafer::ArchAttr arch) const {
  auto epsilon = kernel->getAttrOfType<FloatAttr>(kEpsilonAttr);
  if (!epsilon || !streamWordsOf(ins, 0))
    return failure();
  p.epsilon = epsilon.getValueAsDouble();
  p.size = normSizer(streamWordsOf(ins, 0), tokens, arch, center);
  return success();
}

void NormKind::annotate(wk::KernelOp kernel, const KernelPlan &p) const {
  kernel->setAttr(kEpsilonAttr, FloatAttr::get(Float32Type::get(kernel.getContext()), p.epsilon));
}

const KernelKind &wsc::lowering::layerNormKind() {
  static const NormKind kind(/*center=*/true);
  return kind;
}

const KernelKind &wsc::lowering::rmsNormKind() {
  static const NormKind kind(/*center=*/false);
  return kind;
}
