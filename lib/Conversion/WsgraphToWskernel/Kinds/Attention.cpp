//===- Attention.cpp - the attention kernel kind ----------------------------===//
//
// Causal self-attention with heads split over columns and tokens over rows:
// each PE scores its block of keys on its share of a head's dimensions, the
// scores all-reduced over the head's columns, partial softmaxes merged down
// each column.
//
//===----------------------------------------------------------------------===//
#include "Kind.h"

#include "wsgraph/WsgraphDialect.h"

using namespace mlir;
using namespace wsc;
using namespace wsc::lowering;
namespace wg = wsc::wsgraph;

// What a resize needs again that the operands do not carry.
static constexpr StringLiteral kScaleAttr = "wskernel.scale";
static constexpr StringLiteral kHeadsAttr = "wskernel.heads";

namespace {

class AttentionKind : public KernelKind {
public:
  Planned plan(Operation *op, PlanContext &ctx, KernelPlan &plan) const override;
  std::pair<int64_t, double> writeBody(Body &k, const KernelPlan &p, int64_t batch, int64_t tokens,
                                       const CostModel &cost) const override;
  LogicalResult resize(wk::KernelOp kernel, ArrayRef<LogicalInput> ins, KernelPlan &p,
                       int64_t batch, int64_t tokens, wafer::ArchAttr arch) const override;
  void annotate(wk::KernelOp kernel, const KernelPlan &p) const override;

private:
  /// Receives the padding mask's words for the row's keys into dst.
  static void receiveMaskRow(Body &k, int64_t dst, int64_t tb, int64_t tokens);
};

} // namespace

Planned AttentionKind::plan(Operation *op, PlanContext &ctx, KernelPlan &plan) const {
  auto attn = dyn_cast<wg::AttentionOp>(op);
  if (!attn)
    return Planned::NotThisKind;
  int64_t tokens = ctx.tokens;
  wafer::ArchAttr arch = ctx.arch;
  CostModel cost = ctx.cost;
  llvm::DenseMap<Value, int> &produced = ctx.produced;
  llvm::DenseSet<Operation *> &absorbed = ctx.absorbed;
  // q, k, v must be heads of one [B, T, 3C] activation; the result is
  // merged back into [B, T, C]. (Else the generic kind computes it.)
  SmallVector<Operation *> headOps;
  auto headsOf = [&](Value v, int64_t index) -> Value {
    auto t = v.getDefiningOp<wg::TransposeOp>();
    if (!t || t.getPerm() != ArrayRef<int64_t>{0, 2, 1, 3})
      return {};
    auto r = t.getInput().getDefiningOp<wg::ReshapeOp>();
    if (!r)
      return {};
    auto split = r.getInput().getDefiningOp<wg::SplitOp>();
    if (!split || split.getNumResults() != 3 || r.getInput() != split.getResult(index) ||
        *wg::normalizeAxis(split.getAxis(), 3) != 2)
      return {};
    headOps.append({t, r, split});
    return split.getInput();
  };
  Value qkv = headsOf(attn.getQuery(), 0);
  Value qkv2 = headsOf(attn.getKey(), 1), qkv3 = headsOf(attn.getValue(), 2);
  auto merge = dyn_cast_or_null<wg::TransposeOp>(singleUser(attn.getResult()));
  auto merged = merge ? dyn_cast_or_null<wg::ReshapeOp>(singleUser(merge.getResult()))
                      : wg::ReshapeOp();
  auto qt = attn.getQuery().getType();
  if (!qkv || qkv != qkv2 || qkv != qkv3 || !merge ||
      merge.getPerm() != ArrayRef<int64_t>{0, 2, 1, 3} || !merged ||
      !ctx.isActivation(merged.getResult()) || !attn.getCausal() ||
      qt.getDimSize(2) != tokens ||
      llvm::any_of(headOps, [&](Operation *h) { return !h->getResult(0).hasOneUse() ||
                                                     produced.count(h->getResult(0)); }))
    return Planned::NotThisKind;
  Value mask = attn.getMask();
  if (!ctx.streamOf(qkv) || (mask && !ctx.streamOf(mask)))
    return Planned::Failed;
  absorbed.insert(headOps.begin(), headOps.end());
  absorbed.insert(merge), absorbed.insert(merged);
  plan.anchor = merged;
  plan.kind = "attention";
  plan.name = "l" + std::to_string(ctx.layer) + ".attention";
  plan.layer = ctx.layer;
  plan.inputs = {qkv};
  if (mask)
    plan.inputs.push_back(mask);
  plan.scale = attn.getScale().convertToFloat();
  int64_t heads = qt.getDimSize(1), d = qt.getDimSize(3);
  plan.work = double(tokens) * d * heads;
  plan.heads = heads;
  plan.size = attentionSizer(tokens, heads, d, arch);
  plan.cycles = [=](const KernelPlan &p) {
    int64_t parts = p.w / heads;
    return cost.attention(tokens, d, heads, parts, p.h, outputOf(p), 3 * (d / parts),
                          blockColumns(p, d * heads, arch), attentionPrefetches(p, tokens));
  };
  return Planned::Yes;
}

Sizer wsc::lowering::attentionSizer(int64_t tokens, int64_t heads, int64_t d,
                                    wafer::ArchAttr arch) {
  int64_t sramWords = arch.getSramBytes() / 4;
  CostModel cost{arch};
  // Within the PE budget, the fewest cycles per token over rows (key
  // blocks per head: each row scans fewer keys per token) and columns per
  // head (each takes a share of d that divides it; its scores are
  // all-reduced over the head's columns); fewer PEs on a tie. The caches
  // and about 80 instructions (16 bytes each) must fit a PE.
  return [=](KernelPlan &p) {
    // An interleaved input fixes the columns per head (its unit is their
    // share of d).
    int64_t fixedParts = p.qkvUnit ? d / p.qkvUnit : 0;
    int64_t budget = std::max<int64_t>(heads, p.h * p.w);
    int64_t bestH = tokens, bestW = heads * std::max<int64_t>(1, fixedParts);
    double best = std::numeric_limits<double>::infinity();
    // Over the budget, the fewest PEs whose caches fit.
    int64_t smallH = bestH, smallW = bestW;
    for (int64_t parts = 1; parts <= d && heads * parts <= maxCols(p, arch); ++parts) {
      if (d % parts || (fixedParts && parts != fixedParts))
        continue;
      int64_t ds = d / parts, w = heads * parts;
      // Each distinct row count once, at its fewest keys per row: O(sqrt T).
      for (int64_t tb = 1, rows = tokens; tb <= tokens;
           tb = rows > 1 ? ceilDiv(tokens, rows - 1) : tokens + 1) {
        rows = ceilDiv(tokens, tb);
        // Caches, scores, q and the partials (the result's ds words come out
        // of the program's allowance; the built body is checked exactly).
        if (rows > maxRows(p, arch) || 2 * tb * ds + tb + 3 * ds + 12 + 80 * 4 > sramWords)
          continue;
        double cycles = cost.attention(tokens, d, heads, parts, rows, CostModel::Output::Blocks,
                                       3 * ds, blockColumns(p, w, d * heads, arch),
                                       attentionPrefetches(p, tokens));
        bool within = rows * w <= budget;
        if (within && (cycles < best || (cycles == best && rows * w < bestH * bestW)))
          best = cycles, bestH = rows, bestW = w;
        if (rows * w < smallH * smallW)
          smallH = rows, smallW = w;
      }
    }
    if (best == std::numeric_limits<double>::infinity())
      bestH = smallH, bestW = smallW;
    p.h = bestH, p.w = bestW;
  };
}

std::pair<int64_t, double> AttentionKind::writeBody(Body &k, const KernelPlan &p, int64_t batch,
                                         int64_t tokens, const CostModel &cost) const {
  Sram sram;
  int64_t h = p.h, w = p.w;
  CostModel::Output out = k.output;
  int64_t g = k.group;
  // Head hd runs on columns [hd*parts, hd*parts + parts): column px takes
  // dimensions [px*ds, px*ds + ds) of q, k and v (ds = d / parts, so the
  // offsets are affine in px). Row py holds the keys and values of tokens
  // [py*tb, py*tb + tb). Each row scores its block on its dimensions,
  // all-reduces the scores over the head's columns, takes a partial
  // softmax (max m, sum s, weighted values o); partials merge down each
  // column and the last row divides o by s. Guards pick the rows by the
  // token index t (loop index 0): "own" holds t, "past" lies wholly
  // before t, "future" lies wholly after it.
  int64_t c3 = k.words(0), c = c3 / 3, heads = p.heads, d = c / heads, rows = h;
  int64_t parts = w / heads, ds = d / parts;
  int64_t tb = ceilDiv(tokens, rows);
  int64_t q = sram.words(ds), keys = sram.words(tb * ds), vals = sram.words(tb * ds);
  int64_t scores = sram.words(tb), acc = sram.words(ds + 2), up = sram.words(ds + 2);
  // The last row's result: its blocks leave on the async engine while the
  // next token is scored.
  int64_t tmp = sram.words(2), result = sram.words(ds);
  int64_t m = acc, sum = acc + 4, o = acc + 8; // acc = [m, s, o[ds]]
  // A padding mask [B, S]: each row takes its block of keys' words once per
  // sequence (its routers' filters cut them) and adds them to the scores.
  bool masked = k.isStream(1);
  int64_t maskRow = masked ? sram.words(tb) : 0;
  k.openLoop(batch);
  if (masked)
    receiveMaskRow(k, maskRow, tb, tokens);
  k.openLoop(tokens);
  // Row-relative token position r = t - py*tb; own: 0 <= r <= tb-1.
  wk::AffAttr notBefore = k.aff(0, {1, 0}, 0, -tb);       // r >= 0
  wk::AffAttr notAfter = k.aff(tb - 1, {-1, 0}, 0, tb);   // tb-1-r >= 0
  wk::AffAttr beforeRow = k.aff(-1, {-1, 0}, 0, tb);      // t < py*tb
  wk::AffAttr afterRow = k.aff(-tb, {1, 0}, 0, -tb);      // t >= py*tb + tb
  ArrayAttr own = k.guards({notBefore, notAfter});
  ArrayAttr seen = k.guards({notBefore});                  // own or past
  ArrayAttr future = k.guards({beforeRow});
  wk::AffAttr slot = k.aff(0, {4 * ds, 0}, 0, -4 * tb * ds); // r * ds words, in bytes
  ArrayAttr past = k.guards({afterRow});
  // [q | k | v] of token t + ahead: column px takes its share of q, k and
  // v; the row that holds that token keeps its key and value in its slot,
  // the others drop them.
  auto qkvRanges = [&](int64_t ahead) {
    ArrayAttr holds =
        k.guards({k.aff(ahead, {1, 0}, 0, -tb), k.aff(tb - 1 - ahead, {-1, 0}, 0, tb)});
    SmallVector<ArrayAttr, 2> others = {k.guards({k.aff(-1 - ahead, {-1, 0}, 0, tb)}),
                                        k.guards({k.aff(ahead - tb, {1, 0}, 0, -tb)})};
    auto cacheSlot = [&](int64_t cache) {
      return k.aff(cache + slot.getBase() + 4 * ds * ahead, slot.getLoop(), 0, slot.getPy());
    };
    // In order, q, k and v of column px start at px*ds, c + px*ds and 2c +
    // px*ds. Interleaved by the producer ([3, ds]; the sizer keeps ds),
    // they follow one another from 3ds*px: one window of its blocks.
    SmallVector<Body::Range, 3> ranges = {{0, c, k.aff(q)},
                                          {c, 2 * c, cacheSlot(keys), holds, others},
                                          {2 * c, 3 * c, cacheSlot(vals), holds, others}};
    if (p.qkvUnit) {
      assert(p.qkvUnit == ds && "the sizer keeps an interleaved input's columns");
      for (auto [i, r] : llvm::enumerate(ranges))
        r.base = int64_t(i) * ds, r.end = c3, r.width = ds;
    }
    return ranges;
  };
  int64_t step = p.qkvUnit ? 3 * ds : ds;
  // With `prefetch`, token t+1's words come on the async engines once
  // token t's scores have used q (none after a sequence's last token):
  // the core receives only a sequence's first token.
  bool prefetch = attentionPrefetches(p, tokens);
  ArrayAttr first = prefetch ? k.guards({k.aff(0, {-1, 0})}) : nullptr; // t == 0
  int64_t in = k.recvRanges(0, qkvRanges(0), step, w, /*byRow=*/false, nullptr, std::nullopt,
                            first);
  // Partial scores over the block; summed over the head's columns (a sum
  // chain east, the total back west, inside each head); slots after t
  // score -inf.
  k.matvec(k.aff(scores), k.aff(keys), k.aff(q), k.aff(tb), k.aff(ds), false, nullptr, seen);
  if (prefetch)
    k.recvRanges(0, qkvRanges(1), step, w, /*byRow=*/false, nullptr, std::nullopt,
                 k.guards({k.aff(tokens - 2, {-1, 0})}), /*async=*/true);
  if (parts > 1) {
    auto columns = [&](int64_t from, int64_t to) { // of every head, all rows
      SmallVector<Attribute> r;
      for (int64_t hd = 0; hd < heads; ++hd)
        r.push_back(wk::PeRangeAttr::get(k.builder().getContext(), hd * parts + from,
                                         hd * parts + to, 0, h - 1));
      return k.builder().getArrayAttr(r);
    };
    ArrayAttr notFirst = columns(1, parts - 1), notLast = columns(0, parts - 2);
    k.recv("row", k.aff(scores), k.aff(tb), "add", notFirst, seen);
    k.send("row", k.aff(scores), k.aff(tb), notLast, seen);
    k.recv("back", k.aff(scores), k.aff(tb), "copy", notLast, seen);
    k.send("back", k.aff(scores), k.aff(tb), notFirst, seen);
  }
  k.imm("fill", k.aff(scores + 4, {4, 0}, 0, -4 * tb), k.aff(0),
        -std::numeric_limits<float>::infinity(), k.aff(tb - 1, {-1, 0}, 0, tb), nullptr, own);
  k.imm("mul", k.aff(scores), k.aff(scores), p.scale, k.aff(tb), nullptr, seen);
  if (masked)
    k.vector("add", k.aff(scores), k.aff(scores), k.aff(maskRow), k.aff(tb), nullptr, seen);
  k.reduce("max", k.aff(m), k.aff(scores), k.aff(tb), nullptr, seen);
  // A row wholly in the future contributes nothing: m = -inf, s = 0, o = 0.
  k.imm("fill", k.aff(m), k.aff(0), -std::numeric_limits<float>::infinity(), k.aff(1), nullptr,
        future);
  // The partial (m', s', o') of the rows above comes first: the row's
  // exponents are taken against M = max(m, m') directly, so only the one
  // from above is rescaled, s + s' e^(m'-M) and o + o' e^(m'-M) in one
  // multiply-add pass. Row 0 always holds token 0, so m' is finite.
  ArrayAttr below = rows > 1 ? k.pes(0, w - 1, 1, h - 1) : nullptr;
  if (rows > 1) {
    k.recv("col", k.aff(up), k.aff(ds + 2), "copy", below);
    k.vector("max", k.aff(m), k.aff(m), k.aff(up), k.aff(1), below);
  }
  k.scalar("sub", k.aff(scores), k.aff(scores), k.aff(m), k.aff(tb), nullptr, seen);
  k.unary("exp", k.aff(scores), k.aff(scores), k.aff(tb), nullptr, seen);
  k.reduce("sum", k.aff(sum), k.aff(scores), k.aff(tb), nullptr, seen);
  // Prefetching, the row holding t weighs its values up to t only: the
  // next token's may be arriving in the slot after it.
  if (prefetch) {
    k.matvec(k.aff(o), k.aff(vals), k.aff(scores), k.aff(1, {1, 0}, 0, -tb), k.aff(ds), true,
             nullptr, own);
    k.matvec(k.aff(o), k.aff(vals), k.aff(scores), k.aff(tb), k.aff(ds), true, nullptr, past);
  } else {
    k.matvec(k.aff(o), k.aff(vals), k.aff(scores), k.aff(tb), k.aff(ds), true, nullptr, seen);
  }
  k.imm("fill", k.aff(sum), k.aff(0), 0.0f, k.aff(ds + 1), nullptr, future);
  if (rows > 1) {
    int64_t scale = tmp;
    k.vector("sub", k.aff(scale), k.aff(up), k.aff(m), k.aff(1), below);
    k.unary("exp", k.aff(scale), k.aff(scale), k.aff(1), below);
    k.matvec(k.aff(sum), k.aff(up + 4), k.aff(scale), k.aff(1), k.aff(ds + 1), true, below,
             nullptr, "f32", /*accumulate=*/true);
    // On the async engine: the next token touches acc after its scores.
    k.send("col", k.aff(acc), k.aff(ds + 2), k.pes(0, w - 1, 0, h - 2), nullptr, /*async=*/true);
  }
  // o / s as o * rsqrt(s)^2: one transcendental instead of ds divisions.
  k.unary("rsqrt", k.aff(tmp), k.aff(sum), k.aff(1), k.lastRow());
  k.vector("mul", k.aff(tmp), k.aff(tmp), k.aff(tmp), k.aff(1), k.lastRow());
  k.scalar("mul", k.aff(result), k.aff(o), k.aff(tmp), k.aff(ds), k.lastRow());
  k.sendGroups(k.aff(result), ds, c, h - 1, /*async=*/true);
  double maskCycles = masked ? cost.vector(tb) + cost.words(tb) / double(tokens) : 0;
  return {sram.next,
          cost.attention(tokens, d, heads, parts, rows, out, in, g, prefetch) + maskCycles};
}

void AttentionKind::receiveMaskRow(Body &k, int64_t dst, int64_t tb, int64_t tokens) {
  // Row py's keys are tokens [py*tb, py*tb + tb); the last row's may be fewer.
  int64_t h = k.kernel().getHeight(), w = k.kernel().getWidth();
  int64_t last = tokens - (h - 1) * tb;
  OpBuilder &b = k.builder();
  auto filter = [&](StringRef port, wk::AffAttr first, int64_t count, ArrayAttr when) {
    OpBuilder::InsertionGuard guard(b); // filters are the kernel's, outside its loops
    b.setInsertionPointToStart(k.top());
    wk::FilterOp::create(b, b.getUnknownLoc(), port, first, k.aff(count), when, nullptr);
  };
  for (const InBlock &block : k.input(1).blocks) {
    assert(block.offset == 0 && block.size == tokens && "a mask row is one block");
    if (h > 1)
      filter(block.port, k.aff(0, {}, 0, tb), tb, k.pes(0, w - 1, 0, h - 2));
    if (h > 1)
      k.recv(block.port, k.aff(dst), k.aff(tb), "copy", k.pes(0, w - 1, 0, h - 2));
    if (last <= 0)
      continue; // the last row holds no keys
    filter(block.port, k.aff((h - 1) * tb), last, k.pes(0, w - 1, h - 1, h - 1));
    k.recv(block.port, k.aff(dst), k.aff(last), "copy", k.pes(0, w - 1, h - 1, h - 1));
  }
}

LogicalResult AttentionKind::resize(wk::KernelOp kernel, ArrayRef<LogicalInput> ins, KernelPlan &p,
                                    int64_t batch, int64_t tokens, wafer::ArchAttr arch) const {
  auto scale = kernel->getAttrOfType<FloatAttr>(kScaleAttr);
  auto headsAttr = kernel->getAttrOfType<IntegerAttr>(kHeadsAttr);
  int64_t heads = headsAttr ? headsAttr.getInt() : 0, c3 = streamWordsOf(ins, 0);
  if (!scale || heads <= 0 || !c3 || c3 % (3 * heads))
    return failure();
  p.scale = scale.getValueAsDouble();
  p.heads = heads;
  p.size = attentionSizer(tokens, heads, c3 / 3 / heads, arch);
  return success();
}

void AttentionKind::annotate(wk::KernelOp kernel, const KernelPlan &p) const {
  Builder b(kernel.getContext());
  kernel->setAttr(kScaleAttr, b.getF32FloatAttr(p.scale));
  kernel->setAttr(kHeadsAttr, b.getI64IntegerAttr(p.heads));
}

const KernelKind &wsc::lowering::attentionKind() {
  static const AttentionKind kind;
  return kind;
}
