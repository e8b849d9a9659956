//===- Embed.cpp - the embedding kernel kind --------------------------------===//
//
// A token embedding (times a scalar when the lookup's only user scales it,
// Gemma's sqrt(hidden); with positions when the next user adds them): the
// table is tiled over the rectangle, each PE looks up its rows' part of
// every token's row, and the column sums leave as blocks.
//
//===----------------------------------------------------------------------===//
#include "Kind.h"

#include "wsgraph/WsgraphDialect.h"

using namespace mlir;
using namespace wsc;
using namespace wsc::lowering;
namespace wg = wsc::wsgraph;

namespace {

class EmbedKind : public KernelKind {
public:
  Planned plan(Operation *op, PlanContext &ctx, KernelPlan &plan) const override;
  std::pair<int64_t, double> writeBody(Body &k, const KernelPlan &p, int64_t batch, int64_t tokens,
                                       const CostModel &cost) const override;
  LogicalResult resize(wk::KernelOp kernel, ArrayRef<LogicalInput> ins, KernelPlan &p,
                       int64_t batch, int64_t tokens, wafer::ArchAttr arch) const override;
  void annotate(wk::KernelOp kernel, const KernelPlan &p) const override;

private:
  static void takeFedBackToken(Body &k, int64_t idx, int64_t fed, int64_t tokens);
};

/// The lookup's scale (absent: 1), which a resize needs again.
constexpr StringLiteral kEmbedScaleAttr = "wskernel.scale";

} // namespace

Planned EmbedKind::plan(Operation *op, PlanContext &ctx, KernelPlan &plan) const {
  auto gather = dyn_cast<wg::GatherOp>(op);
  if (!gather)
    return Planned::NotThisKind;
  int64_t batch = ctx.batch, tokens = ctx.tokens;
  wafer::ArchAttr arch = ctx.arch;
  CostModel cost = ctx.cost;
  std::string st = ctx.storage;
  llvm::DenseSet<Operation *> &absorbed = ctx.absorbed;
  // Token embedding, with positions when the only user adds a [T, C] weight.
  Value table = gather.getData();
  auto tt = cast<RankedTensorType>(table.getType());
  if (!ctx.haveTokens || !isStatic(table) || tt.getRank() != 2 || gather.getAxis() != 0 ||
      !isa<BlockArgument>(gather.getIndices()) || !ctx.isActivation(gather.getResult()))
    return Planned::NotThisKind;
  plan.kind = "embed";
  plan.name = "embed";
  plan.inputs = {gather.getIndices(), table};
  Value out = gather.getResult();
  if (auto mul = dyn_cast_or_null<wg::MulOp>(singleUser(out))) {
    Value by = mul.getLhs() == out ? mul.getRhs() : mul.getLhs();
    std::optional<double> s = wg::splatValue(by);
    if (s && cast<ShapedType>(by.getType()).getNumElements() == 1 &&
        mul.getType() == gather.getType()) {
      plan.scale = float(*s);
      absorbed.insert(mul);
      plan.anchor = mul;
      out = mul.getResult();
    }
  }
  if (auto add = dyn_cast_or_null<wg::AddOp>(singleUser(out))) {
    Value pos = add.getLhs() == out ? add.getRhs() : add.getLhs();
    // The same positions for every sequence: broadcast over the batch.
    if (auto expand = pos.getDefiningOp<wg::ExpandOp>())
      pos = expand.getInput();
    if (auto reshape = pos.getDefiningOp<wg::ReshapeOp>())
      pos = isStatic(reshape.getInput()) ? reshape.getInput() : pos;
    auto pt = cast<RankedTensorType>(pos.getType());
    if (isStatic(pos) && pt.getNumElements() == tokens * tt.getDimSize(1) &&
        add.getType() == out.getType()) {
      plan.inputs.push_back(pos);
      absorbed.insert(add);
      plan.anchor = add;
    }
  }
  int64_t v = tt.getDimSize(0), c = tt.getDimSize(1);
  // Generating, the tokens come back from the argmax on port fb0.
  if (ctx.generate)
    plan.fedBack = {0};
  plan.work = double(v) * c / 64; // a lookup touches one row; weigh by storage
  bool positions = plan.inputs.size() > 2;
  plan.size = embedSizer(v, c, positions, /*chained=*/false, batch, tokens, st, arch);
  plan.cycles = [=](const KernelPlan &p) {
    return cost.embed(v, c, p.h, p.w, positions, outputOf(p), 0, blockColumns(p, c, arch));
  };
  return Planned::Yes;
}

Sizer wsc::lowering::embedSizer(int64_t v, int64_t c, bool positions, bool chained, int64_t batch,
                                int64_t tokens, StringRef storage, wafer::ArchAttr arch) {
  std::string st = storage.str();
  int64_t sramWords = arch.getSramBytes() / 4;
  auto words = [=](int64_t h, int64_t w) {
    int64_t vb = ceilDiv(v, h), cb = ceilDiv(c, w);
    int64_t tb = ceilDiv(tokens, h);
    return batch * tokens + wk::storageWords(st, vb * cb) +
           (positions ? wk::storageWords(st, tb * cb) + cb + 1 : 0) + (chained ? 3 : 2) * cb;
  };
  Sizer tiled = tiledSizer(v, c, arch, words);
  CostModel cost{arch};
  // Its program (about 20 instructions) must fit beside the table.
  int64_t dataWords = sramWords - 32 * kCodeBytesPerInstruction / 4;
  // Each column passes its share of the row down and hands it on, so the
  // cycles follow the width; rows only hold the table. Within the budget,
  // the width that takes the fewest cycles per token, on the fewest rows
  // whose table slices fit; the tiled shape when none fits.
  return [=](KernelPlan &p) {
    int64_t budget = p.h * p.w, most = std::min(v, maxRows(p, arch));
    int64_t bestH = 0, bestW = 0;
    double best = 0;
    for (int64_t w = std::max<int64_t>(1, p.minW); w <= std::min(c, maxCols(p, arch)); ++w) {
      if (w != ceilDiv(c, ceilDiv(c, w)))
        continue; // the same columns as a narrower grid, one of them padding
      if (words(most, w) > dataWords)
        continue;
      int64_t lo = 1, hi = most; // the fewest rows that fit
      while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (words(mid, w) <= dataWords)
          hi = mid;
        else
          lo = mid + 1;
      }
      int64_t h = ceilDiv(v, ceilDiv(v, lo));
      if (h * w > budget)
        continue;
      double cycles = cost.embed(v, c, h, w, positions, CostModel::Output::Blocks, 0,
                                 blockColumns(p, w, c, arch));
      if (!bestW || cycles < best || (cycles == best && h * w < bestH * bestW))
        best = cycles, bestH = h, bestW = w;
    }
    if (!bestW)
      return tiled(p);
    p.h = bestH, p.w = bestW;
  };
}

std::pair<int64_t, double> EmbedKind::writeBody(Body &k, const KernelPlan &p, int64_t batch,
                                     int64_t tokens, const CostModel &cost) const {
  Sram sram;
  int64_t h = p.h, w = p.w;
  auto dim = [&](int i, int d) { return cast<ShapedType>(k.type(i)).getDimSize(d); };
  CostModel::Output out = k.output;
  int64_t g = k.group;
  // A piece of a split table (rows weightRowBase and on) after the first
  // adds the partial sum of the piece before it, streamed in on in1.
  bool chained = k.isStream(1);
  int at = chained ? 2 : 1;
  int64_t v = dim(at, 0), c = dim(at, 1);
  int64_t vb = ceilDiv(v, h), cb = ceilDiv(c, w), tb = ceilDiv(tokens, h);
  bool positions = static_cast<int>(p.inputs.size()) > at + 1;
  StringRef st = p.storage;
  int64_t idx = sram.words(batch * tokens), table = sram.words(wk::storageWords(st, vb * cb));
  // Positions are a second table, spread over the rows like the first:
  // row py holds positions [py*tb, py*tb + tb) and looks up row t - py*tb,
  // through an index word that stays zero.
  int64_t pos = positions ? sram.words(wk::storageWords(st, tb * cb)) : 0;
  int64_t zero = positions ? sram.words(1) : 0;
  int64_t posPart = positions ? sram.words(cb) : 0;
  int64_t part = sram.words(cb);
  int64_t partial = chained ? sram.words(cb) : 0;
  // Generating: the token fed back, and whether the host gave none.
  int64_t fed = p.fedBack.empty() ? 0 : sram.words(3); // [token, host gave none, 0]
  wk::HostInputOp::create(k.builder(), k.builder().getUnknownLoc(), k.operand(0), idx, nullptr,
                          nullptr);
  k.initTile(k.operand(at), table, vb, cb, {vb, 0}, {0, cb}, st);
  if (positions)
    k.initTile(k.operand(at + 1), pos, tb, cb, {tb, 0}, {0, cb}, st);
  k.tokenLoops();
  if (!p.fedBack.empty())
    takeFedBackToken(k, idx, fed, tokens);
  // Only the last row adds the partial sum: its block of it.
  int64_t in = chained ? k.recvRange(1, 0, cb, w, c, k.aff(partial), /*byRow=*/false, k.lastRow())
                       : 0;
  k.gather(k.aff(part), k.aff(table), k.aff(idx, {4, 4 * tokens}), k.aff(vb), k.aff(cb),
           k.aff(p.weightRowBase, {}, 0, vb), st);
  // Scaled as looked up: a piece's zeros for ids outside its rows stay zero.
  bool scaled = p.scale != 1.0f;
  if (scaled)
    k.imm("mul", k.aff(part), k.aff(part), p.scale, k.aff(cb));
  if (positions) {
    k.gather(k.aff(posPart), k.aff(pos), k.aff(zero), k.aff(tb), k.aff(cb),
             k.aff(0, {-1, 0}, 0, tb), st);
    k.vector("add", k.aff(part), k.aff(part), k.aff(posPart), k.aff(cb));
  }
  k.reduceGatherSend(k.aff(part), cb, c, [&] {
    if (chained)
      k.vector("add", k.aff(part), k.aff(part), k.aff(partial), k.aff(cb), k.lastRow());
  });
  return {sram.next,
          cost.embed(v, c, h, w, positions, out, in, g) + (chained ? cost.vector(cb) : 0.0) +
              (scaled ? cost.vector(cb) : 0.0)};
}

void EmbedKind::takeFedBackToken(Body &k, int64_t idx, int64_t fed, int64_t tokens) {
  // Position t >= 1 takes the argmax of position t - 1 where the host's id
  // is negative (no prompt token there). Every PE looks it up.
  ArrayAttr notFirst = k.guards({k.aff(-1, {1, 0})});
  wk::AffAttr id = k.aff(idx, {4, 4 * tokens});
  OpBuilder &b = k.builder();
  Location loc = b.getUnknownLoc();
  k.recv("fb0", k.aff(fed), k.aff(1), "copy", nullptr, notFirst);
  wk::VectorOp::create(b, loc, "lt", k.aff(fed + 4), id, k.aff(fed + 8), k.aff(1), nullptr,
                       notFirst, "i32");
  wk::SelectOp::create(b, loc, id, k.aff(fed + 4), k.aff(fed), id, k.aff(1), nullptr, notFirst);
}

LogicalResult EmbedKind::resize(wk::KernelOp kernel, ArrayRef<LogicalInput> ins, KernelPlan &p,
                                int64_t batch, int64_t tokens, wafer::ArchAttr arch) const {
  bool chained = streamWordsOf(ins, 1) > 0;
  size_t at = chained ? 2 : 1;
  ArrayRef<int64_t> table = matrixShape(p, at);
  if (table.empty())
    return failure();
  p.size = embedSizer(table[0], table[1], p.inputs.size() > at + 1, chained, batch, tokens,
                      p.storage, arch);
  if (auto s = kernel->getAttrOfType<FloatAttr>(kEmbedScaleAttr))
    p.scale = float(s.getValueAsDouble());
  return success();
}

void EmbedKind::annotate(wk::KernelOp kernel, const KernelPlan &p) const {
  if (p.scale != 1.0f)
    kernel->setAttr(kEmbedScaleAttr, FloatAttr::get(Float32Type::get(kernel.getContext()), p.scale));
}
const KernelKind &wsc::lowering::embedKind() {
  static const EmbedKind kind;
  return kind;
}
