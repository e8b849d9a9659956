//===- Attention.cpp - the attention kernel kind ----------------------------===//
//
// Causal self-attention with heads split over columns and tokens over rows:
// each PE scores its block of keys on its share of a head's dimensions, the
// scores all-reduced over the head's columns, partial softmaxes merged down
// each column. Its padding mask is AttentionMask.cpp's, its rotary tables'
// fit RotaryTables.cpp's; when q's and k's projections turn them instead,
// ProducersTurn.cpp moves the turning there.
//
//===----------------------------------------------------------------------===//
#include "AttentionMask.h"
#include "Kind.h"
#include "RotaryTables.h"

#include "wsgraph/WsgraphDialect.h"

#include <limits>

using namespace mlir;
using namespace wsc;
using namespace wsc::lowering;
namespace wg = wsc::wsgraph;

// What a resize needs again that the operands do not carry.
static constexpr StringLiteral kScaleAttr = "wskernel.scale";
static constexpr StringLiteral kFutureFillAttr = "wskernel.future_fill";
static constexpr StringLiteral kMaskStepsAttr = "wskernel.mask_steps";
/// The most words of a host's mask a PE holds whole.
static constexpr int64_t kHeldMaskWords = 2048;
static constexpr StringLiteral kHeadsAttr = "wskernel.heads";
static constexpr StringLiteral kLayoutAttr = "wskernel.attention_layout";

namespace {

class AttentionKind : public KernelKind {
public:
  Planned plan(Operation *op, PlanContext &ctx, KernelPlan &plan) const override;
  std::pair<int64_t, double> writeBody(Body &k, const KernelPlan &p, int64_t batch, int64_t tokens,
                                       const CostModel &cost) const override;
  LogicalResult resize(wk::KernelOp kernel, ArrayRef<LogicalInput> ins, KernelPlan &p,
                       int64_t batch, int64_t tokens, wafer::ArchAttr arch) const override;
  void annotate(wk::KernelOp kernel, const KernelPlan &p) const override;
  /// The partial softmaxes merged down the rows, one row after the other
  /// (each takes the larger max and the exponent of the difference before
  /// it passes on), then the finishing row's blocks.
  double chainCycles(const KernelPlan &p, int64_t n, int64_t tokens,
                     const CostModel &cost) const override {
    const AttentionLayout &a = p.attention;
    int64_t q = a.queries, columnHeads = std::max<int64_t>(1, a.columnHeads(p.heads));
    int64_t parts = std::max<int64_t>(1, p.w / columnHeads), ds = a.d / parts;
    // Generating, the scores' all-reduce waits for each relay's delivery
    // too (its cycles per token count the hops).
    double relays = p.tokenAtATime ? 2.0 * double(parts - 1) : 0.0;
    return relays * cost.delivery() +
           mergeChainCycles(cost, p.h, ceilDiv(tokens, p.h), ds, q, p.tokenAtATime) +
           cost.output(CostModel::Output::Blocks, n, q * ds, p.w, p.h,
                       blockColumns(p, n, cost.arch));
  }
  /// Down the rows, each merge of `queries` partials after their words and
  /// a hop, then the finishing row's words; a row before the token (about
  /// half of them over a sequence) takes its softmax and values after the
  /// partial arrives. Side by side (generating), each row's softmax ran
  /// before, and the rows above the middle one (mergeRow) merge toward it
  /// in a tree (MergeTree), those below toward the row under it, which
  /// joins them in: a level's partials travel 2^l rows, relayed, while the
  /// merges are the roots' (in the cycles per token); the longer travel is
  /// on the path.
  static double mergeChainCycles(const CostModel &cost, int64_t rows, int64_t tb, int64_t ds,
                                 int64_t queries, bool sideBySide) {
    double q = double(queries), words = cost.words(queries * (ds + 2));
    if (sideBySide && rows <= 1)
      return words;
    if (sideBySide) {
      auto travel = [&](int64_t far) { // 2^l rows a level, relayed
        int64_t levels = CostModel::treeLevels(far);
        return double((int64_t(1) << levels) - 1) * cost.relay() + double(levels) * words;
      };
      int64_t root = mergeRow(rows);
      return std::max(travel(root), travel(rows - 2 - root) + cost.relay() + words) + words;
    }
    double merge = cost.relay() + words + q * CostModel::mergeCycles(cost, ds, sideBySide) +
                   q * (2 * cost.vector(tb) + cost.transcendental(tb) + cost.matvec(tb, ds)) / 2;
    return double(rows - 1) * merge + words;
  }
  /// Generating, the row that merges the partials from above and below and
  /// finishes: the middle one.
  static int64_t mergeRow(int64_t rows) { return (rows - 1) / 2; }
  /// Generating, the merges of the trees above it and below it, and the
  /// join of the lower into it.
  static int64_t mergeLevels(int64_t rows) {
    return CostModel::treeLevels(mergeRow(rows)) +
           CostModel::treeLevels(rows - 2 - mergeRow(rows)) + 1;
  }



};

} // namespace

namespace {

/// Can a head's columns each take the same share of both halves of q and
/// k (every dimension turned, the second half's angles the first's)?
bool splitsHalves(const AttentionLayout &a) {
  return a.rotary >= 0 && a.rotaryHalves && a.rotaryDims == a.d;
}

/// Turning q (every row, each of a column's query heads) and a token's key
/// (its row): the angles, their cosines and sines, and rotate_half's
/// products over the R dimensions.
double rotaryCycles(const KernelPlan &p, int64_t ds, const CostModel &cost, int64_t queries) {
  if (p.attention.rotary < 0)
    return 0;
  int64_t r = std::min(ds, p.attention.rotaryDims);
  int64_t distinct = p.attention.rotaryHalves ? r / 2 : r; // angles computed
  // rotate_half's negated and copied halves, or adjacent pairs turned one
  // at a time (six products and sums of a word each).
  double turn = p.attention.rotaryPairs ? 6 * double(r / 2) * cost.vector(1) : 4 * cost.vector(r);
  return 2 * cost.vector(r) + cost.vector(distinct) + 2 * cost.transcendental(distinct) +
         (p.attention.rotaryHalves ? 2 * cost.vector(r / 2) : 0.0) + double(queries + 1) * turn;
}

/// Does a mask step select words (it needs scratch)?
bool selectsMask(const KernelPlan &p) {
  return llvm::any_of(p.maskSteps,
                      [](const MaskStep &s) { return StringRef(s.first).starts_with("fill_"); });
}

/// Prefetching the next token's words suits one stream read in one call;
/// with rotary, a key is turned in its slot as it arrives.
bool prefetches(const KernelPlan &p, int64_t tokens) {
  const AttentionLayout &a = p.attention;
  return attentionPrefetches(p, tokens) && a.rotary < 0 && a.q.input == a.k.input &&
         a.k.input == a.v.input && !p.futureFill;
}

} // namespace

namespace {

/// How one of q, k and v reaches attention as [B, H, T, d] heads: a
/// transpose of [B, T, H, d] rows of an activation (read from `stream` at
/// base + h * stride), through a split of the activation (GPT-2's qkv), a
/// slice of its rows (NeoX's interleaved qkv) or neither (separate
/// projections); for k and v, repeated over `group` query heads each
/// (Llama's repeat_kv); for q and k, turned by a rotary op.
struct HeadSource {
  Value stream;
  int64_t base = 0, stride = 0, heads = 0, group = 1;
  wg::RotaryOp rotary;
  SmallVector<Operation *> ops; // what attention absorbs on the way
};

/// Peels repeat_kv: reshape([B, KVH * G, S, d]) of expand(unsqueeze(x, 2)).
Value peelRepeat(Value v, HeadSource &src) {
  auto reshape = v.getDefiningOp<wg::ReshapeOp>();
  auto expand = reshape ? reshape.getInput().getDefiningOp<wg::ExpandOp>() : wg::ExpandOp();
  auto unsqueeze =
      expand ? expand.getInput().getDefiningOp<wg::UnsqueezeOp>() : wg::UnsqueezeOp();
  if (!unsqueeze || unsqueeze.getAxes() != ArrayRef<int64_t>{2})
    return v;
  auto x = cast<RankedTensorType>(unsqueeze.getInput().getType());
  auto e = cast<RankedTensorType>(expand.getType());
  auto r = cast<RankedTensorType>(reshape.getType());
  if (x.getRank() != 4 || e.getRank() != 5 || r.getRank() != 4 ||
      e.getShape() != ArrayRef<int64_t>{x.getDimSize(0), x.getDimSize(1), e.getDimSize(2),
                                        x.getDimSize(2), x.getDimSize(3)} ||
      r.getDimSize(1) != x.getDimSize(1) * e.getDimSize(2))
    return v;
  src.group = e.getDimSize(2);
  src.ops.append({reshape, expand, unsqueeze});
  return unsqueeze.getInput();
}

/// The heads of one of q, k, v, or nothing if they are not in a form the
/// kind reads.
std::optional<HeadSource> headSource(Value v, bool keyOrValue, PlanContext &ctx) {
  HeadSource src;
  if (keyOrValue)
    v = peelRepeat(v, src);
  if (auto rotary = v.getDefiningOp<wg::RotaryOp>()) {
    src.rotary = rotary;
    src.ops.push_back(rotary);
    v = rotary.getInput();
  }
  auto t = v.getDefiningOp<wg::TransposeOp>();
  if (!t || t.getPerm() != ArrayRef<int64_t>{0, 2, 1, 3})
    return std::nullopt;
  src.ops.push_back(t);
  auto heads = cast<RankedTensorType>(t.getInput().getType()); // [B, T, H, d]
  src.heads = heads.getDimSize(2);
  int64_t d = heads.getDimSize(3);
  Value rows = t.getInput();
  if (auto slice = rows.getDefiningOp<wg::SliceOp>()) {
    // Slices of each head's row of a [B, T, H, n] view (NeoX), or a run of
    // whole heads of a [B, T, H', d] view (Falcon's q, k and v heads).
    auto in = cast<RankedTensorType>(slice.getInput().getType());
    ArrayRef<int64_t> off = slice.getOffsets(), str = slice.getStrides();
    if (in.getRank() != 4 || off[0] || off[1] || llvm::any_of(str, [](int64_t x) {
          return x != 1;
        }) || in.getShape().take_front(2) != heads.getShape().take_front(2))
      return std::nullopt;
    if (!off[2] && in.getDimSize(2) == heads.getDimSize(2))
      src.base = off[3], src.stride = in.getDimSize(3);
    else if (!off[3] && in.getDimSize(3) == d)
      src.base = off[2] * d, src.stride = d;
    else
      return std::nullopt;
    src.ops.push_back(slice);
    rows = slice.getInput();
  } else {
    src.stride = d;
  }
  auto view = rows.getDefiningOp<wg::ReshapeOp>();
  if (!view)
    return std::nullopt;
  src.ops.push_back(view);
  Value stream = view.getInput();
  if (auto split = stream.getDefiningOp<wg::SplitOp>()) {
    auto axis = wg::normalizeAxis(split.getAxis(), 3);
    if (succeeded(axis) && *axis == 2) {
      auto index = cast<OpResult>(stream).getResultNumber();
      for (unsigned i = 0; i < index; ++i)
        src.base += cast<ShapedType>(split.getResult(i).getType()).getDimSize(2);
      src.ops.push_back(split);
      stream = split.getInput();
    }
  }
  auto viewType = cast<RankedTensorType>(view.getType());
  if (!ctx.isActivation(stream) || viewType.getRank() != 4 ||
      viewType.getDimSize(0) != ctx.batch || viewType.getDimSize(1) != ctx.tokens)
    return std::nullopt;
  src.stream = stream;
  return src;
}

} // namespace

Planned AttentionKind::plan(Operation *op, PlanContext &ctx, KernelPlan &plan) const {
  auto attn = dyn_cast<wg::AttentionOp>(op);
  if (!attn)
    return Planned::NotThisKind;
  int64_t tokens = ctx.tokens;
  wafer::ArchAttr arch = ctx.arch;
  CostModel cost = ctx.cost;
  // The result is merged back into [B, T, C]; q, k and v are heads of
  // activations. (Else the generic kind computes it.)
  auto merge = dyn_cast_or_null<wg::TransposeOp>(singleUser(attn.getResult()));
  auto merged = merge ? dyn_cast_or_null<wg::ReshapeOp>(singleUser(merge.getResult()))
                      : wg::ReshapeOp();
  auto qt = attn.getQuery().getType();
  if (!merge || merge.getPerm() != ArrayRef<int64_t>{0, 2, 1, 3} || !merged ||
      !ctx.isActivation(merged.getResult()) || !attn.getCausal() ||
      qt.getDimSize(2) != tokens || attn.getKey().getType().getDimSize(2) != tokens)
    return Planned::NotThisKind;
  std::optional<HeadSource> q = headSource(attn.getQuery(), false, ctx);
  std::optional<HeadSource> k = headSource(attn.getKey(), true, ctx);
  std::optional<HeadSource> v = headSource(attn.getValue(), true, ctx);
  int64_t heads = qt.getDimSize(1), d = qt.getDimSize(3);
  if (!q || !k || !v || q->group != 1 || k->group != v->group || q->heads != heads ||
      k->heads * k->group != heads || v->heads != k->heads || v->rotary ||
      attn.getValue().getType().getDimSize(3) != d)
    return Planned::NotThisKind;
  // Rotary turns q and k alike, by position, with tables the kernel computes.
  std::optional<RotaryTables> rotary;
  if (q->rotary || k->rotary) {
    if (!q->rotary || !k->rotary || q->rotary.getCos() != k->rotary.getCos() ||
        q->rotary.getSin() != k->rotary.getSin() ||
        q->rotary.getInterleaved() != k->rotary.getInterleaved() ||
        !(rotary = rotaryTables(q->rotary, tokens)))
      return Planned::NotThisKind;
  }
  // The ops on the way (one may serve q, k and v: GPT-2's split, NeoX's
  // view). Those that others use too (a cache's present keys, turned) stay,
  // with the ops before them, computed for those others: the kernel reads
  // the streams itself.
  llvm::SmallPtrSet<Operation *, 16> ways, kept;
  for (HeadSource *src : {&*q, &*k, &*v})
    ways.insert(src->ops.begin(), src->ops.end());
  SmallVector<Operation *> shared;
  for (Operation *w : ways)
    if (llvm::any_of(w->getUsers(),
                     [&](Operation *user) { return !ways.contains(user) && user != attn; }))
      shared.push_back(w);
  while (!shared.empty()) {
    Operation *w = shared.pop_back_val();
    if (kept.insert(w).second)
      for (Value operand : w->getOperands())
        if (Operation *def = operand.getDefiningOp(); def && ways.contains(def))
          shared.push_back(def);
  }
  if (llvm::any_of(ways, [&](Operation *w) { return ctx.produced.count(w->getResult(0)); }))
    return Planned::NotThisKind;
  Value mask = attn.getMask();
  if (mask && isStatic(mask))
    return Planned::NotThisKind; // a constant mask: the generic kind adds it
  // A future fill waits for the sequence's last key: not one token at a time.
  if (attn.getFutureFill() && ctx.generate)
    return Planned::NotThisKind;
  // Streams, in order of first use, then the mask, then the rotary table.
  plan.inputs.clear();
  auto inputOf = [&](Value stream) {
    auto at = llvm::find(plan.inputs, stream);
    if (at != plan.inputs.end())
      return int64_t(at - plan.inputs.begin());
    plan.inputs.push_back(stream);
    return int64_t(plan.inputs.size() - 1);
  };
  AttentionLayout &layout = plan.attention;
  layout.q = {inputOf(q->stream), q->base, q->stride};
  layout.k = {inputOf(k->stream), k->base, k->stride};
  layout.v = {inputOf(v->stream), v->base, v->stride};
  layout.group = k->group;
  layout.d = d;
  for (Value stream : plan.inputs)
    if (!ctx.streamOf(stream))
      return Planned::Failed;
  if (mask) {
    // A host's attention_mask small enough is held whole by every PE, the
    // ops that make the additive mask from it run as steps in the kernel.
    SmallVector<MaskStep> steps;
    Value source = peelMaskSteps(mask, steps);
    int64_t words = cast<ShapedType>(source.getType()).getNumElements();
    if (isa<BlockArgument>(source) && words <= kHeldMaskWords)
      mask = source, plan.maskSteps = steps, layout.maskHeld = words;
    else if (!ctx.streamOf(mask))
      return Planned::Failed;
    layout.mask = int64_t(plan.inputs.size());
    plan.inputs.push_back(mask);
  }
  if (rotary) {
    layout.rotary = int64_t(plan.inputs.size());
    layout.rotaryDims = q->rotary.getRotaryDims();
    layout.rotaryPairs = q->rotary.getInterleaved();
    int64_t half = layout.rotaryDims / 2;
    auto repeatsHalf = [&](int64_t i) {
      return rotary->freq[i] == rotary->freq[i + half] && rotary->amp[i] == rotary->amp[i + half];
    };
    layout.rotaryHalves =
        !layout.rotaryPairs && llvm::all_of(llvm::seq<int64_t>(0, half), repeatsHalf);
    plan.inputs.push_back(rotaryTableConstant(attn, *rotary));
  }
  for (Operation *w : ways)
    if (!kept.contains(w))
      ctx.absorbed.insert(w);
  ctx.absorbed.insert(merge), ctx.absorbed.insert(merged);
  plan.anchor = merged;
  plan.kind = "attention";
  plan.name = "l" + std::to_string(ctx.layer) + ".attention";
  plan.layer = ctx.layer;
  plan.scale = attn.getScale().convertToFloat();
  if (std::optional<APFloat> fill = attn.getFutureFill())
    plan.futureFill = fill->convertToFloat();
  plan.work = double(tokens) * d * heads;
  plan.heads = heads;
  plan.size = attentionSizer(tokens, heads, d, arch);
  plan.cycles = [=](const KernelPlan &p) {
    int64_t q = p.attention.queries, parts = p.w / p.attention.columnHeads(heads);
    return cost.attention(tokens, d, heads, parts, p.h, outputOf(p), (q + 2) * (d / parts),
                          blockColumns(p, d * heads, arch), prefetches(p, tokens), false, q) +
           rotaryCycles(p, d / parts, cost, q);
  };
  return Planned::Yes;
}

SmallVector<int64_t> wsc::lowering::sharedHeadsOrder(int64_t queries, int64_t d,
                                                     int64_t parts) {
  // Row px * queries * ds + j * ds + e of the view is query head j's
  // dimension px * ds + e.
  int64_t ds = d / parts;
  SmallVector<int64_t> order;
  for (int64_t px = 0; px < parts; ++px)
    for (int64_t j = 0; j < queries; ++j)
      for (int64_t e = 0; e < ds; ++e)
        order.push_back(j * d + px * ds + e);
  return order;
}

void wsc::lowering::orderSharedHeads(std::vector<KernelPlan> &plans, int64_t rows) {
  for (KernelPlan &attention : plans) {
    AttentionLayout &a = attention.attention;
    if (attention.kind != "attention" || a.group == 1 || a.parts)
      continue;
    // Its one reader, a whole linear taking it as x, reads the heads in
    // the columns' order; else one column a key/value head, scoring the
    // whole group, keeps them in order.
    Value stream = attention.streamed();
    auto reads = [&](const KernelPlan &q) { return llvm::is_contained(q.inputs, stream); };
    auto first = llvm::find_if(plans, reads);
    KernelPlan *reader = llvm::count_if(plans, reads) == 1 ? &*first : nullptr;
    int64_t parts = attention.w / a.columnHeads(attention.heads);
    bool inOrder = a.queries == 1 || parts == 1;
    if (inOrder || (reader && isWholeLinear(*reader) && reader->inputs[0] == stream &&
                    reader->rowPerm.empty())) {
      if (!inOrder)
        reader->rowPerm = sharedHeadsOrder(a.queries, a.d, parts);
      a.parts = parts;
    } else {
      int64_t budget = attention.h * attention.w;
      a.queries = a.group, a.parts = 1;
      attention.size(attention); // within the same PEs
      // When a column's whole key/value head does not fit the wafer's rows
      // (every layer's cache in weight streaming), a column scores one query
      // head instead, the key/value head held once for each: in order too.
      if (attention.h > std::min(attention.maxH, rows)) {
        a.queries = 1, a.parts = 0, a.queriesFixed = true;
        attention.h = 1, attention.w = budget;
        attention.size(attention);
        a.parts = attention.w / a.columnHeads(attention.heads);
      }
    }
  }
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
    // rotate_half's pairs (i, i + R/2) lie in one column when it holds the
    // whole head, or, when every dimension turns with angles repeated by
    // halves, when it holds the same share of both halves.
    // A grouped-query attention's columns, once its reader takes their
    // order, keep theirs; until then each column scores any divisor of
    // the group of query heads (fewer: its key/value head held on more
    // columns), the most on a tie.
    AttentionLayout &a = p.attention;
    bool rotary = a.rotary >= 0, halves = rotary && splitsHalves(a);
    int64_t fixedParts = a.parts        ? a.parts
                         : p.qkvUnit    ? d / p.qkvUnit
                         : rotary && !halves ? 1
                                             : 0;
    bool fixedQueries = a.parts || a.queriesFixed;
    int64_t bestQ = std::max<int64_t>(1, fixedQueries ? a.queries : a.group);
    int64_t columnHeads = heads / bestQ;
    int64_t budget = std::max<int64_t>(columnHeads, p.h * p.w);
    // A generating program in weight streaming keeps every layer's cache
    // past the body's data, beside the slot the body laid out.
    int64_t caches = p.tokenAtATime && p.layers ? p.layers + 1 : 1;
    int64_t bestH = tokens, bestW = columnHeads * std::max<int64_t>(1, fixedParts);
    double best = std::numeric_limits<double>::infinity();
    // Over the budget, the fewest PEs whose caches fit.
    int64_t smallH = bestH, smallW = bestW, smallQ = bestQ;
    // The (query heads a column, columns a head) to try.
    auto allowed = [&](int64_t q) { return fixedQueries ? q == a.queries : a.group % q == 0; };
    SmallVector<std::pair<int64_t, int64_t>> layouts;
    for (int64_t q = bestQ; q >= 1; --q)
      for (int64_t parts = 1; allowed(q) && parts <= d && heads / q * parts <= maxCols(p, arch);
           ++parts)
        if (!(d % parts || (fixedParts && parts != fixedParts) || (halves && (d / 2) % parts)))
          layouts.push_back({q, parts});
    for (auto [q, parts] : layouts) {
      int64_t ds = d / parts, w = heads / q * parts;
      // Each distinct row count once, at its fewest keys per row: O(sqrt T).
      for (int64_t tb = 1, rows = tokens; tb <= tokens;
           tb = rows > 1 ? ceilDiv(tokens, rows - 1) : tokens + 1) {
        rows = ceilDiv(tokens, tb);
        // Caches, scores, q and the partials of each query head (the
        // result's words come out of the program's allowance; the built
        // body is checked exactly), a padding mask's row, rotary's table
        // and vectors and its program.
        int64_t rc = halves ? ds : a.rotaryDims;
        int64_t extra = (a.mask >= 0 ? tb + a.maskHeld + (selectsMask(p) ? 3 * tb : 0) : 0) +
                        (rotary ? 2 * a.rotaryDims + 3 * rc + 1 + 12 * 4 : 0) +
                        (p.futureFill ? q * (tokens - 1) * ds : 0); // every token's q
        // A merge tree's level: a merge (a loop of q), a send and a relay,
        // about 16 instructions of 4 words.
        int64_t treeCode = p.tokenAtATime ? 16 * 4 * AttentionKind::mergeLevels(rows) : 0;
        if (rows > maxRows(p, arch) ||
            2 * tb * ds * caches + q * (tb + 3 * ds + 4) + 8 + 80 * 4 + treeCode + extra >
                sramWords)
          continue;
        double cycles = cost.attention(tokens, d, heads, parts, rows, CostModel::Output::Blocks,
                                       (q + 2) * ds, blockColumns(p, w, d * heads, arch),
                                       prefetches(p, tokens), false, q) +
                        rotaryCycles(p, ds, cost, q);
        // A decode step waits for the merges too.
        if (p.tokenAtATime)
          cycles += AttentionKind::mergeChainCycles(cost, rows, tb, ds, q, true);
        bool within = rows * w <= budget;
        if (within && (cycles < best || (cycles == best && rows * w < bestH * bestW)))
          best = cycles, bestH = rows, bestW = w, bestQ = q;
        if (rows * w < smallH * smallW)
          smallH = rows, smallW = w, smallQ = q;
      }
    }
    if (best == std::numeric_limits<double>::infinity())
      bestH = smallH, bestW = smallW, bestQ = smallQ;
    p.h = bestH, p.w = bestW, a.queries = bestQ;
  };
}

namespace {

/// A column's query heads, one after the other in a loop when there are
/// several (its index is loop index 0 inside, the token's one further out).
struct HeadLoop {
  Body &k;
  int64_t count;
  /// `a` (as outside the loop) at the head's buffer, `stride` bytes a head.
  wk::AffAttr at(wk::AffAttr a, int64_t stride = 0) const {
    if (count == 1)
      return a;
    SmallVector<int64_t> loop = {stride};
    llvm::append_range(loop, a.getLoop());
    return k.aff(a.getBase(), loop, a.getPx(), a.getPy());
  }
  ArrayAttr guards(ArrayAttr g) const {
    if (count == 1 || !g)
      return g;
    SmallVector<wk::AffAttr> lifted;
    for (Attribute a : g)
      lifted.push_back(at(cast<wk::AffAttr>(a)));
    return k.guards(lifted);
  }
  void run(function_ref<void()> body) const {
    if (count == 1)
      return body();
    k.loop(count, body);
  }
};

/// Turns the `pairs` adjacent pairs (a, b) = (x[2i], x[2i+1]) at x as
/// x * cos + rotate_every_two(x) * sin rounds them: a cos_a - b sin_a and
/// b cos_b + a sin_b, with each element's own angle; `products` holds two
/// scratch words.
void turnPairs(Body &k, wk::AffAttr x, ArrayAttr guard, int64_t cosines, int64_t sines,
               int64_t products, int64_t pairs) {
  HeadLoop pair{k, pairs};
  ArrayAttr when = pair.guards(guard);
  pair.run([&] {
    wk::AffAttr a = pair.at(x, 8), b = pair.at(k.shifted(x, 4), 8);
    wk::AffAttr cosA = pair.at(k.aff(cosines), 8), cosB = pair.at(k.aff(cosines + 4), 8);
    wk::AffAttr sinA = pair.at(k.aff(sines), 8), sinB = pair.at(k.aff(sines + 4), 8);
    wk::AffAttr as = k.aff(products), bs = k.aff(products + 4), one = k.aff(1);
    k.vector("mul", as, a, sinB, one, nullptr, when);
    k.vector("mul", bs, b, sinA, one, nullptr, when);
    k.vector("mul", a, a, cosA, one, nullptr, when);
    k.vector("sub", a, a, bs, one, nullptr, when);
    k.vector("mul", b, b, cosB, one, nullptr, when);
    k.vector("add", b, b, as, one, nullptr, when);
  });
}

/// Where one query head's partial softmax works (bytes): its tb scores and
/// its partial [m, s, o[ds]] (a head's are 4 tb and 4 (ds + 2) bytes on),
/// the partial from above, the mask's row (-1: none), two scratch words and
/// the values.
struct PartialBuffers {
  int64_t scores, acc, up, maskRow, tmp, vals, tb, ds;
};
/// Which rows a token's steps run on (see writeBody): own, seen, past, future.
struct TokenRows {
  ArrayAttr own, seen, past, future;
};

/// One query head's partial softmax over its row's block of keys, weighed
/// values and (pipelined) the merge of the partial from above, which the
/// rows `below` received.
void partialSoftmax(Body &k, const HeadLoop &each, const KernelPlan &p, const PartialBuffers &b,
                    int64_t tokens, TokenRows rows, ArrayAttr below, bool prefetch) {
  int64_t tb = b.tb, ds = b.ds, h = k.kernel().getHeight();
  int64_t scoreStep = 4 * tb, accStep = 4 * (ds + 2);
  auto scores = [&](int64_t words, ArrayRef<int64_t> loop = {}, int64_t py = 0) {
    return each.at(k.aff(b.scores + 4 * words, loop, 0, py), scoreStep);
  };
  auto partial = [&](int64_t at, int64_t base) { return each.at(k.aff(at + base), accStep); };
  wk::AffAttr m = partial(b.acc, 0), sum = partial(b.acc, 4), o = partial(b.acc, 8);
  wk::AffAttr n = k.aff(tb);
  ArrayAttr own = each.guards(rows.own), seen = each.guards(rows.seen);
  ArrayAttr past = each.guards(rows.past), future = each.guards(rows.future);
  bool deferred = p.futureFill.has_value(), sideBySide = p.tokenAtATime;
  constexpr float minusInf = -std::numeric_limits<float>::infinity();
  float fill = deferred ? *p.futureFill : minusInf;
  k.imm("fill", scores(1, {4, 0}, -4 * tb), k.aff(0), fill, each.at(k.aff(tb - 1, {-1, 0}, 0, tb)),
        nullptr, own);
  if (deferred)
    k.imm("fill", scores(0), k.aff(0), fill, n, nullptr, future);
  if (b.maskRow >= 0)
    k.vector("add", scores(0), scores(0), k.aff(b.maskRow), n, nullptr, seen);
  // The last row's slots past the sequence hold no key.
  int64_t lastKeys = std::max<int64_t>(0, tokens - (h - 1) * tb);
  if (deferred && lastKeys < tb)
    k.imm("fill", scores(lastKeys), k.aff(0), minusInf, k.aff(tb - lastKeys), k.lastRow());
  k.reduce("max", m, scores(0), n, nullptr, seen);
  // A padding mask may leave a row no key: its max is kept finite, so that
  // its exponents are 0 (-inf less a finite max), never NaN.
  if (b.maskRow >= 0) {
    k.imm("fill", k.aff(b.tmp + 4), k.aff(0), std::numeric_limits<float>::lowest(), k.aff(1),
          nullptr, seen);
    k.vector("max", m, m, k.aff(b.tmp + 4), k.aff(1), nullptr, seen);
  }
  if (!deferred)
    k.imm("fill", m, k.aff(0), minusInf, k.aff(1), nullptr, future);
  wk::AffAttr up = partial(b.up, 0);
  bool pipelined = below && !sideBySide;
  if (pipelined) {
    k.recv("col", up, k.aff(ds + 2), "copy", below);
    k.vector("max", m, m, up, k.aff(1), below);
  }
  k.scalar("sub", scores(0), scores(0), m, n, nullptr, seen);
  k.unary("exp", scores(0), scores(0), n, nullptr, seen);
  k.reduce("sum", sum, scores(0), n, nullptr, seen);
  // Prefetching, the row holding t weighs its values up to t only: the
  // next token's may be arriving in the slot after it.
  if (prefetch) {
    k.matvec(o, k.aff(b.vals), scores(0), each.at(k.aff(1, {1, 0}, 0, -tb)), k.aff(ds), true,
             nullptr, own);
    k.matvec(o, k.aff(b.vals), scores(0), n, k.aff(ds), true, nullptr, past);
  } else {
    k.matvec(o, k.aff(b.vals), scores(0), n, k.aff(ds), true, nullptr, seen);
  }
  if (!deferred)
    k.imm("fill", sum, k.aff(0), 0.0f, k.aff(ds + 1), nullptr, future);
  if (!pipelined)
    return;
  // s + s' e^(m'-M), o + o' e^(m'-M) in one multiply-add pass.
  k.vector("sub", k.aff(b.tmp), up, m, k.aff(1), below);
  k.unary("exp", k.aff(b.tmp), k.aff(b.tmp), k.aff(1), below);
  k.matvec(sum, partial(b.up, 4), k.aff(b.tmp), k.aff(1), k.aff(ds + 1), true, below, nullptr,
           "f32", /*accumulate=*/true);
}

/// Generating, a row merges the partial from above after its own: M =
/// max(m, m'), (s, o) e^(m-M), then the other's added (a row wholly in the
/// future has m = -inf: its e^(m-M) is 0). The partial comes on `port`.
/// Merging up from the bottom, both may be wholly in the future: M is at
/// least the lowest float (a third word at tmp), so e^(m-M) is 0, not NaN.
void mergeSideBySide(Body &k, StringRef port, wk::AffAttr acc, wk::AffAttr up, int64_t tmp,
                     int64_t ds, ArrayAttr below, bool bothMayBeEmpty) {
  wk::AffAttr scale = k.aff(tmp), most = k.aff(tmp + 4), one = k.aff(1);
  k.recv(port, up, k.aff(ds + 2), "copy", below);
  k.vector("max", most, acc, up, one, below);
  if (bothMayBeEmpty) {
    wk::AffAttr lowest = k.aff(tmp + 8);
    k.imm("fill", lowest, lowest, std::numeric_limits<float>::lowest(), one, below);
    k.vector("max", most, most, lowest, one, below);
  }
  k.vector("sub", scale, acc, most, one, below);
  k.unary("exp", scale, scale, one, below);
  k.scalar("mul", k.shifted(acc, 4), k.shifted(acc, 4), scale, k.aff(ds + 1), below);
  k.vector("sub", scale, up, most, one, below);
  k.unary("copy", acc, most, one, below);
  k.unary("exp", scale, scale, one, below);
  k.matvec(k.shifted(acc, 4), k.shifted(up, 4), scale, one, k.aff(ds + 1), true, below, nullptr,
           "f32", /*accumulate=*/true);
}

/// Generating, the partials of the rows on one side of a root row merge
/// toward it in a tree: at level l the row at distance i = m 2^(l+1) + 2^l
/// sends its partial (its subtree's) to the one at m 2^(l+1), which merges
/// it, and the rows between relay it on (passing the words through). Every
/// message runs on one channel toward the root, each row taking its levels
/// in order, so the words reach each core in the order it takes them. The
/// rows above the finishing row are its tree; those below are the tree of
/// the row under it, which then hands its total on (join): the two trees
/// merge side by side.
struct MergeTree {
  Body &k;
  const HeadLoop &each;
  int64_t w, acc, up, tmp, accStep, words, ds;

  /// The rows at distance `far` and less from `root` on the side that
  /// sends on `port` ("col": above it, sending south; "north": below).
  void build(StringRef port, int64_t root, int64_t far) {
    int64_t dir = port == "col" ? -1 : 1; // a row at distance i is root + dir * i
    for (int64_t span = 1; span <= far; span *= 2) {
      SmallVector<int64_t> receivers, senders, relays;
      for (int64_t i = 0; i <= far; ++i) {
        int64_t at = i % (2 * span), sender = i - at + span;
        if (at == 0 && i + span <= far)
          receivers.push_back(root + dir * i);
        else if (at == span)
          senders.push_back(root + dir * i);
        else if (at > 0 && at < span && sender <= far)
          relays.push_back(root + dir * i);
      }
      each.run([&] {
        mergeSideBySide(k, port, each.at(k.aff(acc), accStep), each.at(k.aff(up), accStep), tmp,
                        ds, rowsOf(receivers), /*bothMayBeEmpty=*/true);
      });
      k.send(port, k.aff(acc), k.aff(words), rowsOf(senders), nullptr, /*async=*/true);
      if (!relays.empty())
        k.relay(port, port, k.aff(0), k.aff(words), "discard", rowsOf(relays), nullptr,
                /*async=*/true);
    }
  }

  /// Row `from`'s partial merged into the neighbouring row `into`'s.
  void join(StringRef port, int64_t from, int64_t into) {
    each.run([&] {
      mergeSideBySide(k, port, each.at(k.aff(acc), accStep), each.at(k.aff(up), accStep), tmp, ds,
                      rowsOf({into}), /*bothMayBeEmpty=*/true);
    });
    k.send(port, k.aff(acc), k.aff(words), rowsOf({from}), nullptr, /*async=*/true);
  }

  /// The PEs of the given rows, whole rows, consecutive rows as one range.
  ArrayAttr rowsOf(SmallVector<int64_t> rows) const {
    llvm::sort(rows);
    SmallVector<Attribute> ranges;
    for (size_t i = 0; i < rows.size();) {
      size_t j = i;
      while (j + 1 < rows.size() && rows[j + 1] == rows[j] + 1)
        ++j;
      ranges.push_back(wk::PeRangeAttr::get(k.builder().getContext(), 0, w - 1, rows[i], rows[j]));
      i = j + 1;
    }
    return k.builder().getArrayAttr(ranges);
  }
};

} // namespace

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
  // before t, "future" lies wholly after it. Shared (grouped-query), head
  // hd is a key/value head and each column scores its `nq` query heads,
  // one after the other in a loop (each with its own q, scores and
  // partial), sharing the all-reduces and the messages.
  const AttentionLayout &layout = p.attention;
  int64_t heads = p.heads, d = layout.d, c = heads * d, c3 = 3 * c, rows = h;
  int64_t nq = layout.queries, columnHeads = layout.columnHeads(heads);
  int64_t parts = w / columnHeads, ds = d / parts;
  int64_t tb = ceilDiv(tokens, rows);
  HeadLoop each{k, nq};
  // With a future fill every query scores every key: the kernel takes the
  // sequence's q, k and v first (each row keeps every q), then answers
  // each token in turn.
  bool deferred = p.futureFill.has_value();
  int64_t q = sram.words(nq * (deferred ? tokens * ds : ds));
  int64_t keys = sram.words(tb * ds), vals = sram.words(tb * ds);
  k.layerState.push_back({keys, 8 * tb * ds}); // the cache: keys, then values
  int64_t scores = sram.words(nq * tb), acc = sram.words(nq * (ds + 2));
  int64_t up = sram.words(nq * (ds + 2));
  // The last row's result: its blocks leave on the async engine while the
  // next token is scored.
  int64_t tmp = sram.words(p.tokenAtATime ? 3 : 2), result = sram.words(nq * ds);
  int64_t sum = acc + 4, o = acc + 8; // acc = nq x [m, s, o[ds]]
  // A query head's strides, in bytes.
  int64_t qStep = 4 * (deferred ? tokens * ds : ds), scoreStep = 4 * tb, accStep = 4 * (ds + 2);
  // A padding mask [B, S]: each row takes its block of keys' words once per
  // sequence (its routers' filters cut them) and adds them to the scores.
  bool masked = layout.mask >= 0;
  int64_t maskRow = masked ? sram.words(tb) : 0;
  int64_t maskAll = layout.maskHeld ? sram.words(layout.maskHeld) : 0;
  int64_t maskScratch = masked && selectsMask(p) ? sram.words(3 * tb) : 0;
  if (layout.maskHeld)
    wk::HostInputOp::create(k.builder(), k.builder().getUnknownLoc(),
                            k.operand(unsigned(layout.mask)), maskAll, nullptr, nullptr);
  bool rotary = layout.rotary >= 0;
  int64_t r = layout.rotaryDims;
  // Frequencies and amplitudes, the position as a float, the angles'
  // cosines and sines, and rotate_half of a vector.
  int64_t rc = rotary && splitsHalves(layout) ? ds : r; // the words a column turns
  int64_t rotTable = rotary ? sram.words(2 * r) : 0, position = rotary ? sram.words(1) : 0;
  int64_t cosines = rotary ? sram.words(rc) : 0, sines = rotary ? sram.words(rc) : 0;
  int64_t turned = rotary ? sram.words(rc) : 0;
  if (rotary)
    k.layerState.push_back({position, 4}); // counts the tokens seen
  if (rotary)
    k.initTile(k.operand(unsigned(layout.rotary)), rotTable, 2, r, {0, 0}, {0, 0});
  k.openLoop(batch);
  if (masked) {
    if (layout.maskHeld)
      copyMaskRow(k, maskAll, maskRow, tb, tokens);
    else
      receiveMaskRow(k, unsigned(layout.mask), maskRow, tb, tokens);
    applyMaskSteps(k, p.maskSteps, maskRow, maskScratch, tb);
  }
  if (rotary)
    k.imm("fill", k.aff(position), k.aff(0), -1.0f, k.aff(1));
  // Row-relative token position r = t - py*tb; own: 0 <= r <= tb-1.
  wk::AffAttr notBefore = k.aff(0, {1, 0}, 0, -tb);       // r >= 0
  wk::AffAttr notAfter = k.aff(tb - 1, {-1, 0}, 0, tb);   // tb-1-r >= 0
  wk::AffAttr beforeRow = k.aff(-1, {-1, 0}, 0, tb);      // t < py*tb
  wk::AffAttr afterRow = k.aff(-tb, {1, 0}, 0, -tb);      // t >= py*tb + tb
  ArrayAttr own = k.guards({notBefore, notAfter});
  ArrayAttr seen = deferred ? nullptr : k.guards({notBefore}); // own or past
  wk::AffAttr qAt = deferred ? k.aff(q, {4 * ds, 0}) : k.aff(q); // token t's q
  ArrayAttr future = k.guards({beforeRow});
  wk::AffAttr slot = k.aff(0, {4 * ds, 0}, 0, -4 * tb * ds); // r * ds words, in bytes
  ArrayAttr past = k.guards({afterRow});
  auto cacheSlot = [&](int64_t cache, int64_t ahead) {
    return k.shifted(slot, cache + 4 * ds * ahead);
  };
  // q, k and v of token t + ahead: column c = head * parts + px takes
  // dimensions [px*ds, px*ds + ds) of its head's (a key/value head serves
  // `group` query heads, each column `queries` of them); the row
  // that holds that token keeps its key and value in its slot, the others
  // drop them. Ranges per input stream.
  auto qkvRanges = [&](int64_t ahead) {
    ArrayAttr holds =
        k.guards({k.aff(ahead, {1, 0}, 0, -tb), k.aff(tb - 1 - ahead, {-1, 0}, 0, tb)});
    SmallVector<ArrayAttr, 2> others = {k.guards({k.aff(-1 - ahead, {-1, 0}, 0, tb)}),
                                        k.guards({k.aff(ahead - tb, {1, 0}, 0, -tb)})};
    // Column col reads head (col / parts / per) * times + j of the input,
    // and its share of it.
    using Start = std::function<int64_t(int64_t)>;
    auto headAt = [=](HeadsIn in, int64_t per, int64_t times, int64_t j) -> Start {
      return [=](int64_t col) { return in.base + ((col / parts / per) * times + j) * in.stride; };
    };
    auto share = [=](Start head) -> Start {
      return [=](int64_t col) { return head(col) + (col % parts) * ds; };
    };
    int64_t repeat = layout.copies(); // column heads a key/value head is held by
    constexpr int64_t all = std::numeric_limits<int64_t>::max();
    SmallVector<std::pair<int64_t, Body::Range>, 5> ranges;
    // Turned by halves, q and k of column px are its share of each half.
    auto halvesOf = [&](HeadsIn in, Start head, wk::AffAttr dst, ArrayAttr keep,
                        SmallVector<ArrayAttr, 2> otherwise) {
      if (!(rotary && splitsHalves(layout) && parts > 1))
        return ranges.push_back({in.input, {0, all, dst, keep, otherwise, ds, share(head)}});
      for (int64_t half : {0, 1}) {
        auto start = [=](int64_t col) {
          return head(col) + half * (d / 2) + (col % parts) * (ds / 2);
        };
        ranges.push_back(
            {in.input, {0, all, k.shifted(dst, half * 2 * ds), keep, otherwise, ds / 2, start}});
      }
    };
    for (int64_t j = 0; j < nq; ++j)
      halvesOf(layout.q, headAt(layout.q, 1, nq, j), k.shifted(qAt, qStep * j), nullptr, {});
    halvesOf(layout.k, headAt(layout.k, repeat, 1, 0), cacheSlot(keys, ahead), holds, others);
    ranges.push_back({layout.v.input, {0, all, cacheSlot(vals, ahead), holds, others, ds,
                                       share(headAt(layout.v, repeat, 1, 0))}});
    // Interleaved by the producer ([3, ds]; the sizer keeps ds), column
    // c's q, k and v follow one another from 3ds*c: one window of its blocks.
    if (p.qkvUnit) {
      assert(p.qkvUnit == ds && "the sizer keeps an interleaved input's columns");
      for (auto [i, r] : llvm::enumerate(ranges))
        r.second = {int64_t(i) * ds, c3, r.second.dst, r.second.keep, r.second.otherwise, ds};
    }
    return ranges;
  };
  int64_t step = p.qkvUnit ? 3 * ds : ds;
  // Receives each input's ranges in one call.
  auto receive = [&](int64_t ahead, ArrayAttr guard, bool async) {
    auto ranges = qkvRanges(ahead);
    int64_t most = 0;
    for (int64_t input = 0; input < 3; ++input) {
      SmallVector<Body::Range, 5> mine;
      for (auto &[in, range] : ranges)
        if (in == input)
          mine.push_back(range);
      // Ranges of halves move by ds/2 words a column.
      bool byHalves = llvm::all_of(mine, [&](const Body::Range &r) { return r.width * 2 == ds; });
      if (!mine.empty())
        most += k.recvRanges(unsigned(input), mine, byHalves && !p.qkvUnit ? ds / 2 : step, w,
                             /*byRow=*/false, nullptr, std::nullopt, guard, async);
    }
    return most;
  };
  // With `prefetch`, token t+1's words come on the async engines once
  // token t's scores have used q (none after a sequence's last token):
  // the core receives only a sequence's first token.
  bool prefetch = prefetches(p, tokens);
  ArrayAttr first = prefetch ? k.guards({k.aff(0, {-1, 0})}) : nullptr; // t == 0
  int64_t in = 0;
  auto takeToken = [&] {
    in = receive(0, first, false);
    if (!rotary)
      return;
    // Angles t * f as torch rounds them, then q and the key of token t
    // (in its row's slot) turned: x * cos + rotate_half(x) * sin.
    k.imm("add", k.aff(position), k.aff(position), 1.0f, k.aff(1));
    // Column px of a head turns rc words: the whole rotated part, or its
    // share of each half (px * rc/2 on of both). With repeated halves the
    // first half's angles serve both. Its table window starts at px * rc/2:
    // with several columns per head, one multiply per head's columns.
    int64_t angles = layout.rotaryHalves ? rc / 2 : rc;
    auto tableWindow = [&](int64_t row, auto emit) {
      int64_t at = rotTable + 4 * r * row;
      if (!splitsHalves(layout) || parts == 1)
        return emit(k.aff(at), ArrayAttr());
      for (int64_t hd = 0; hd < columnHeads; ++hd)
        emit(k.aff(at - 4 * hd * parts * (rc / 2), {}, 4 * (rc / 2), 0),
             k.pes(hd * parts, hd * parts + parts - 1, 0, h - 1));
    };
    tableWindow(0, [&](wk::AffAttr freqs, ArrayAttr when) {
      k.scalar("mul", k.aff(cosines), freqs, k.aff(position), k.aff(angles), when);
    });
    k.unary("sin", k.aff(sines), k.aff(cosines), k.aff(angles));
    k.unary("cos", k.aff(cosines), k.aff(cosines), k.aff(angles));
    tableWindow(1, [&](wk::AffAttr amps, ArrayAttr when) {
      k.vector("mul", k.aff(cosines), k.aff(cosines), amps, k.aff(angles), when);
      k.vector("mul", k.aff(sines), k.aff(sines), amps, k.aff(angles), when);
    });
    if (layout.rotaryHalves) {
      k.unary("copy", k.aff(sines + 2 * rc), k.aff(sines), k.aff(rc / 2));
      k.unary("copy", k.aff(cosines + 2 * rc), k.aff(cosines), k.aff(rc / 2));
    }
    auto turn = [&](wk::AffAttr x, ArrayAttr guard) {
      if (layout.rotaryPairs)
        return turnPairs(k, x, guard, cosines, sines, turned, rc / 2);
      k.unary("neg", k.aff(turned), k.shifted(x, 4 * (rc / 2)), k.aff(rc / 2), nullptr, guard);
      k.unary("copy", k.aff(turned + 2 * rc), x, k.aff(rc / 2), nullptr, guard);
      k.vector("mul", x, x, k.aff(cosines), k.aff(rc), nullptr, guard);
      k.vector("mul", k.aff(turned), k.aff(turned), k.aff(sines), k.aff(rc), nullptr, guard);
      k.vector("add", x, x, k.aff(turned), k.aff(rc), nullptr, guard);
    };
    each.run([&] { turn(each.at(qAt, qStep), each.guards(seen)); });
    turn(cacheSlot(keys, 0), own);
  };
  if (deferred)
    k.loop(tokens, takeToken);
  k.openLoop(tokens);
  if (!deferred)
    takeToken();
  // Partial scores over the block; summed over the head's columns (a sum
  // chain east, the total back west, inside each head); slots after t
  // score -inf.
  each.run([&] {
    k.matvec(each.at(k.aff(scores), scoreStep), k.aff(keys), each.at(qAt, qStep), k.aff(tb),
             k.aff(ds), false, nullptr, each.guards(seen));
  });
  if (prefetch)
    receive(1, k.guards({k.aff(tokens - 2, {-1, 0})}), /*async=*/true);
  if (parts > 1) {
    auto columns = [&](int64_t from, int64_t to) { // of every head, all rows
      SmallVector<Attribute> r;
      for (int64_t hd = 0; hd < columnHeads; ++hd)
        r.push_back(wk::PeRangeAttr::get(k.builder().getContext(), hd * parts + from,
                                         hd * parts + to, 0, h - 1));
      return k.builder().getArrayAttr(r);
    };
    // The columns between a head's ends add (or take) the scores and pass
    // them on as they come (Norm's all-reduce).
    ArrayAttr first = columns(0, 0), last = columns(parts - 1, parts - 1);
    wk::AffAttr n = k.aff(nq * tb);
    k.send("row", k.aff(scores), n, first, seen);
    if (parts > 2)
      k.relay("row", "row", k.aff(scores), n, "add", columns(1, parts - 2), seen);
    k.recv("row", k.aff(scores), n, "add", last, seen);
    k.send("back", k.aff(scores), n, last, seen);
    if (parts > 2)
      k.relay("back", "back", k.aff(scores), n, "copy", columns(1, parts - 2), seen);
    k.recv("back", k.aff(scores), n, "copy", first, seen);
  }
  k.imm("mul", k.aff(scores), k.aff(scores), p.scale, k.aff(nq * tb), nullptr, seen);
  // A row wholly in the future contributes nothing: m = -inf, s = 0, o = 0.
  // (With a future fill it weighs its keys too; row 0's m is finite.)
  // Pipelined, a row takes the partial (m', s', o') of the rows above first
  // and exponentiates against M = max(m, m') directly, so only the one from
  // above is rescaled: s + s' e^(m'-M), o + o' e^(m'-M) in one multiply-add
  // pass. Generating, every row takes its own partial first, so that one
  // token's rows work side by side and only the merges run down the column
  // (a decode step waits for them alone). Row 0 always holds token 0, so
  // m' is finite.
  bool sideBySide = p.tokenAtATime;
  ArrayAttr below = rows > 1 ? k.pes(0, w - 1, 1, h - 1) : nullptr;
  PartialBuffers partial{scores, acc, up, masked ? maskRow : -1, tmp, vals, tb, ds};
  each.run([&] {
    partialSoftmax(k, each, p, partial, tokens, {own, seen, past, future}, below, prefetch);
  });
  // Generating, each half's partials merge in a tree toward the middle
  // row, which finishes: a token waits for log2(h) merges, not h / 2.
  // (Sends on the async engine: the next token touches acc after its
  // scores.)
  int64_t finishing = sideBySide && rows > 1 ? AttentionKind::mergeRow(h) : h - 1;
  if (rows > 1 && sideBySide) {
    MergeTree tree{k, each, w, acc, up, tmp, accStep, nq * (ds + 2), ds};
    tree.build("col", finishing, finishing);
    tree.build("north", finishing + 1, h - 2 - finishing);
    tree.join("north", finishing + 1, finishing);
  } else if (rows > 1) {
    k.send("col", k.aff(acc), k.aff(nq * (ds + 2)), k.pes(0, w - 1, 0, h - 2), nullptr,
           /*async=*/true);
  }
  ArrayAttr finishRow = k.pes(0, w - 1, finishing, finishing);
  // o / s as o * rsqrt(s)^2: one transcendental instead of ds divisions.
  each.run([&] {
    k.unary("rsqrt", k.aff(tmp), each.at(k.aff(sum), accStep), k.aff(1), finishRow);
    k.vector("mul", k.aff(tmp), k.aff(tmp), k.aff(tmp), k.aff(1), finishRow);
    k.scalar("mul", each.at(k.aff(result), 4 * ds), each.at(k.aff(o), accStep), k.aff(tmp),
             k.aff(ds), finishRow);
  });
  k.sendGroups(k.aff(result), nq * ds, c, finishing, /*async=*/true);
  // (The mask added to the scores, its words once a sequence, the max kept finite.)
  double maskCycles =
      masked ? double(nq) * (cost.vector(tb) + 2 * cost.vector(1)) + cost.words(tb) / double(tokens)
             : 0;
  return {sram.next,
          cost.attention(tokens, d, heads, parts, rows, out, in, g, prefetch, sideBySide, nq) +
              maskCycles + rotaryCycles(p, ds, cost, nq)};
}

LogicalResult AttentionKind::resize(wk::KernelOp kernel, ArrayRef<LogicalInput> ins, KernelPlan &p,
                                    int64_t batch, int64_t tokens, wafer::ArchAttr arch) const {
  auto scale = kernel->getAttrOfType<FloatAttr>(kScaleAttr);
  auto headsAttr = kernel->getAttrOfType<IntegerAttr>(kHeadsAttr);
  auto flat = kernel->getAttrOfType<DenseI64ArrayAttr>(kLayoutAttr);
  std::optional<AttentionLayout> layout =
      flat ? AttentionLayout::fromFlat(flat.asArrayRef()) : std::nullopt;
  int64_t heads = headsAttr ? headsAttr.getInt() : 0;
  if (!scale || heads <= 0 || !layout || layout->d <= 0)
    return failure();
  p.scale = scale.getValueAsDouble();
  if (auto fill = kernel->getAttrOfType<FloatAttr>(kFutureFillAttr))
    p.futureFill = float(fill.getValueAsDouble());
  if (auto steps = kernel->getAttrOfType<ArrayAttr>(kMaskStepsAttr))
    for (Attribute step : steps) {
      auto pair = dyn_cast<ArrayAttr>(step);
      auto kind = pair && pair.size() == 2 ? dyn_cast<StringAttr>(pair[0]) : StringAttr();
      auto value = kind ? dyn_cast<FloatAttr>(pair[1]) : FloatAttr();
      if (!value)
        return failure();
      p.maskSteps.push_back({kind.str(), float(value.getValueAsDouble())});
    }
  p.heads = heads;
  p.attention = *layout;
  p.size = attentionSizer(tokens, heads, layout->d, arch);
  return success();
}

void AttentionKind::annotate(wk::KernelOp kernel, const KernelPlan &p) const {
  Builder b(kernel.getContext());
  kernel->setAttr(kScaleAttr, b.getF32FloatAttr(p.scale));
  if (p.futureFill)
    kernel->setAttr(kFutureFillAttr, b.getF32FloatAttr(*p.futureFill));
  SmallVector<Attribute> steps;
  for (const auto &[step, value] : p.maskSteps)
    steps.push_back(b.getArrayAttr({b.getStringAttr(step), b.getF32FloatAttr(value)}));
  if (!steps.empty())
    kernel->setAttr(kMaskStepsAttr, b.getArrayAttr(steps));
  kernel->setAttr(kHeadsAttr, b.getI64IntegerAttr(p.heads));
  kernel->setAttr(kLayoutAttr, b.getDenseI64ArrayAttr(p.attention.flat()));
}

const KernelKind &wsc::lowering::attentionKind() {
  static const AttentionKind kind;
  return kind;
}
