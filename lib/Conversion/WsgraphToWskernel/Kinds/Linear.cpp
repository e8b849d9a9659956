//===- Linear.cpp - the linear kernel kinds (linear, linear_gelu) ---------===//
//
// x W (+ bias) (then GELU, exact or tanh) (+ a residual) over [batch, tokens,
// K]: the weight is tiled over the rectangle, each row's partial sums run
// down the columns to a finishing row, and the result leaves in blocks.
//
//===----------------------------------------------------------------------===//
#include "Kind.h"
#include "NextToken.h"
#include "RotaryTables.h"

#include "wsc/Analysis/WeightData.h"
#include "wsc/format/SparseTile.h"
#include "wsgraph/WsgraphDialect.h"

using namespace mlir;
using namespace wsc;
using namespace wsc::lowering;
namespace wg = wsc::wsgraph;

// A linear_gelu's GELU form when it is the tanh one (absent: exact), which a
// resize needs again.
static constexpr StringLiteral kGeluAttr = "wskernel.gelu";
// A linear's ReLU after its bias.
static constexpr StringLiteral kReluAttr = "wskernel.relu";
// A generating program's LM head that picks the next token: "argmax" or
// "sample".
static constexpr StringLiteral kPicksNextAttr = "wskernel.picks_next";
// A linear that turns its result by rotary pairs (KernelPlan::turns).
static constexpr StringLiteral kTurnsAttr = "wskernel.turns";

/// The width for w columns whose blocks of an N-word result hold whole
/// pairs when the plan turns them (the widest no wider with an even block).
static int64_t pairedWidth(const KernelPlan &p, int64_t n, int64_t w) {
  if (!p.turns)
    return w;
  for (int64_t nb = ceilDiv(n, w);; ++nb)
    if (nb % 2 == 0 && ceilDiv(n, ceilDiv(n, nb)) % 2 == 0)
      return ceilDiv(n, nb);
}

namespace {

class LinearKind : public KernelKind {
public:
  Planned plan(Operation *op, PlanContext &ctx, KernelPlan &plan) const override;
  std::pair<int64_t, double> writeBody(Body &k, const KernelPlan &p, int64_t batch, int64_t tokens,
                                       const CostModel &cost) const override;
  LogicalResult resize(wk::KernelOp kernel, ArrayRef<LogicalInput> ins, KernelPlan &p,
                       int64_t batch, int64_t tokens, wafer::ArchAttr arch) const override;
  void annotate(wk::KernelOp kernel, const KernelPlan &p) const override;
  /// x in, the partial sums down, and an LM head's pick east.
  double chainCycles(const KernelPlan &p, int64_t n, int64_t tokens,
                     const CostModel &cost) const override {
    return linearChainCycles(p, n, cost) +
           (p.picksNext ? NextToken::chainCycles(p.w, cost, topKBitsOf(p, n, cost)) : 0);
  }

private:
  /// The bits a step of an LM head's top-k settles (0: none).
  static int64_t topKBitsOf(const KernelPlan &p, int64_t n, const CostModel &cost) {
    return p.topK ? NextToken::topKBitsFor(ceilDiv(n, p.w), p.w, cost) : 0;
  }
};

} // namespace

/// The pick of the next token from returned logits (a generating
/// program's), when the logits have no other user.
static Operation *nextTokenOf(Value logits) {
  Operation *next = nullptr;
  for (Operation *user : logits.getUsers()) {
    if (isa<func::ReturnOp>(user))
      continue;
    if (next || !NextToken::picks(user))
      return nullptr;
    next = user;
  }
  return next;
}


Planned LinearKind::plan(Operation *op, PlanContext &ctx, KernelPlan &plan) const {
  auto linear = dyn_cast<wg::LinearOp>(op);
  if (!linear)
    return Planned::NotThisKind;
  int64_t batch = ctx.batch, tokens = ctx.tokens;
  wafer::ArchAttr arch = ctx.arch;
  std::string st = ctx.storage;
  std::vector<KernelPlan> &plans = ctx.plans;
  llvm::DenseMap<Value, int> &produced = ctx.produced;
  llvm::DenseSet<Operation *> &absorbed = ctx.absorbed;
  if (!ctx.isActivation(linear.getInput()) || !isStatic(linear.getWeight()) ||
      (linear.getBias() && !isStatic(linear.getBias())))
    return Planned::NotThisKind;
  if (!ctx.streamOf(linear.getInput()))
    return Planned::Failed;
  plan.kind = "linear";
  plan.inputs = {linear.getInput()};
  Value out = linear.getResult();
  bool gelu = false;
  if (auto g = dyn_cast_or_null<wg::GeluOp>(singleUser(out))) {
    gelu = true;
    plan.geluTanh = g.isTanh();
    absorbed.insert(g);
    out = g.getResult();
    plan.anchor = g;
  } else if (auto r = dyn_cast_or_null<wg::ReluOp>(singleUser(out))) {
    plan.relu = true;
    absorbed.insert(r);
    out = r.getResult();
    plan.anchor = r;
  }
  // A residual add of another activation finishes in the last row.
  if (auto add = dyn_cast_or_null<wg::AddOp>(singleUser(out))) {
    Value other = add.getLhs() == out ? add.getRhs() : add.getLhs();
    if (add.getType() == linear.getType() && produced.count(other)) {
      plan.inputs.push_back(other);
      absorbed.insert(add);
      plan.anchor = add;
    }
  }
  plan.inputs.push_back(linear.getWeight());
  if (linear.getBias())
    plan.inputs.push_back(linear.getBias());
  auto wt = cast<RankedTensorType>(linear.getWeight().getType());
  int64_t k = wt.getDimSize(0), n = wt.getDimSize(1);
  // Name by role in a GPT block.
  std::string role = gelu || plan.relu ? "mlp_fc" : "linear";
  if (!gelu && llvm::any_of(linear->getUsers(), [](Operation *u) { return isa<wg::SplitOp>(u); }))
    role = "qkv";
  else if (auto from = produced.find(linear.getInput()); from != produced.end())
    role = plans[from->second].kind == "attention"     ? "attn_proj"
           : plans[from->second].kind == "linear_gelu" ||
                   plans[from->second].kind == "linear_glu" || plans[from->second].relu
               ? "mlp_proj"
               : role;
  bool head = llvm::any_of(out.getUsers(), [](Operation *u) { return isa<func::ReturnOp>(u); });
  plan.name = head ? "lm_head" : "l" + std::to_string(ctx.layer) + "." + role;
  plan.layer = head ? -1 : ctx.layer;
  plan.hostResult = head && out.hasOneUse();
  if (head && !gelu && ctx.generate)
    if (Operation *next = nextTokenOf(out)) {
      // The LM head picks the next token itself: one word leaves it, not V.
      absorbed.insert(next);
      plan.hostResult = plan.picksNext = plan.feedsBack = true;
      plan.inputs.push_back(NextToken::indices(op, cast<ShapedType>(out.getType()).getShape().back()));
      if (Value params = NextToken::paramsOf(next)) {
        plan.inputs.push_back(params);
        plan.samples = true;
        plan.topK = NextToken::takesTopK(params);
      }
    }
  bool host = plan.hostResult;
  plan.kind = gelu ? "linear_gelu" : "linear";
  bool residual = plan.inputs.size() > 1 && !isStatic(plan.inputs[1]);
  double density = weightDensity(linear.getWeight());
  plan.work = density * double(k) * double(n); // a sparse weight's work is its nonzeros
  plan.cycles = linearCycles(k, n, gelu, residual, batch * tokens, arch,
                             asyncColumnSums(tokens), density);
  plan.alone = linearCycles(k, n, gelu, residual, batch * tokens, arch, asyncColumnSums(tokens),
                            density, /*alone=*/true);
  plan.size = linearSizer(k, n, host, residual, batch, tokens, st, arch, plan.cycles, density);
  return Planned::Yes;
}

namespace {
/// A sparse tile's form: its gaps' width, the entries it is sized for and
/// the words it takes.
struct SparseForm {
  bool nibbles;
  int64_t entries, words;
  std::string storage(StringRef values) const {
    return wk::sparseStorage(entries, values, nibbles);
  }
};
} // namespace

/// The densest kb x nb tile's entries expected at `density` with gaps of
/// `g`: nonzeros three standard deviations over the mean, and the fillers of
/// longer gaps (q / (1 - q) a nonzero, q the chance of so long a run of
/// zeros; no more than a row has room for).
static int64_t expectedEntries(int64_t kb, int64_t nb, double density, format::SparseGaps g) {
  int64_t nonzeros = CostModel::densestTileEntries(kb * nb, density);
  double span = double(format::maxGap(g) + 1), q = std::pow(1.0 - density, span);
  double fillers = std::min(double(nonzeros) * q / (1.0 - q),
                            double(kb) * std::floor(double(nb - 1) / span));
  return nonzeros + int64_t(std::ceil(fillers));
}

/// The sparse form of a kb x nb tile of `values` (f32, f16 or bf16) whose
/// densest holds `bytes` entries with 8-bit gaps and `nibbles` with 4-bit
/// ones: 4-bit gaps when they take fewer words for at most 2% more entries
/// (a filler costs a multiply-add, and a tile's cycles matter more than its
/// bytes). Nothing when the dense form takes no more words. (Counted, not
/// parsed from a storage string: the shape search asks for it often.)
static std::optional<SparseForm> chooseForm(StringRef values, int64_t kb, int64_t nb,
                                            int64_t bytes, int64_t nibbles) {
  auto v = values == "f32" ? format::SparseValues::Words : format::SparseValues::Halves;
  auto words = [&](int64_t entries, format::SparseGaps g) {
    return int64_t(format::sparseTileWords(uint64_t(kb), uint64_t(nb), uint64_t(entries), v, g));
  };
  SparseForm byteForm{false, bytes, words(bytes, format::SparseGaps::Bytes)};
  SparseForm nibbleForm{true, nibbles, words(nibbles, format::SparseGaps::Nibbles)};
  bool narrower = nibbleForm.words < byteForm.words && 50 * nibbles <= 51 * bytes;
  SparseForm form = narrower ? nibbleForm : byteForm;
  if (form.words >= int64_t(format::denseTileWords(uint64_t(kb), uint64_t(nb), v)))
    return std::nullopt;
  return form;
}

static std::optional<SparseForm> expectedForm(StringRef values, int64_t kb, int64_t nb,
                                              double density) {
  if (density >= 1.0)
    return std::nullopt;
  return chooseForm(values, kb, nb, expectedEntries(kb, nb, density, format::SparseGaps::Bytes),
                    expectedEntries(kb, nb, density, format::SparseGaps::Nibbles));
}

int64_t wsc::lowering::sparseTileEntries(StringRef storage, int64_t kb, int64_t nb,
                                         double density) {
  std::optional<SparseForm> form = expectedForm(storage, kb, nb, density);
  return form ? form->entries : -1;
}

int64_t wsc::lowering::weightTileWords(StringRef storage, int64_t kb, int64_t nb,
                                       double density) {
  std::optional<SparseForm> form = expectedForm(storage, kb, nb, density);
  return form ? form->words : wk::storageWords(storage, kb * nb);
}

Sizer wsc::lowering::linearSizer(int64_t k, int64_t n, bool host, bool residual, int64_t batch,
                                 int64_t tokens, StringRef storage, wafer::ArchAttr arch,
                                 std::function<double(const KernelPlan &)> cycles,
                                 double density) {
  std::string st = storage.str();
  auto tileWords = [=](int64_t h, int64_t w) {
    int64_t kb = ceilDiv(k, h), nb = ceilDiv(n, w);
    // Host results: the last row keeps every token's block, or each row its
    // share of the tokens.
    int64_t all = batch * tokens;
    int64_t kept = hostKeepsAll(all, nb) ? all * nb : ceilDiv(all, h) * nb;
    // (two partial sums, see asyncColumnSums)
    return kb + weightTileWords(st, kb, nb, density) + 3 * nb +
           (host ? kept + 2 * nb : 2 * nb) + (residual ? nb : 0);
  };
  return linearFamilySizer(k, n, host, batch, tokens, arch, tileWords, std::move(cycles),
                           density);
}

Sizer wsc::lowering::linearFamilySizer(int64_t k, int64_t n, bool host, int64_t batch,
                                       int64_t tokens, wafer::ArchAttr arch,
                                       std::function<int64_t(int64_t, int64_t)> tileWords,
                                       std::function<double(const KernelPlan &)> cycles,
                                       double density) {
  Sizer tiled = tiledSizer(k, n, arch, tileWords);
  Sizer squareish = [=](KernelPlan &p) {
    int64_t budget = p.h * p.w;
    tiled(p);
    // A result handed on in blocks, or kept on the last row for the host,
    // is finished by a row of its own (bias, GELU, residual, the gather)
    // while the rows above hold the tiles: the tiles take the budget less
    // that row.
    int64_t most = maxRows(p, arch);
    bool finishes = !host || hostKeepsAll(batch * tokens, ceilDiv(n, p.w));
    if (finishes && p.h >= 2 && most >= 3) {
      int64_t maxH = p.maxH, h = p.h, w = p.w;
      p.maxH = most - 1;
      p.h = 1, p.w = std::max<int64_t>(1, budget - p.w);
      tiled(p);
      p.maxH = maxH;
      // Tiles on one row leave no room for a finishing row: keep the shape
      // without one (fewer PEs for a larger budget would break the
      // balancing's search, which takes cycles to fall as budgets grow).
      if (p.h >= 2)
        p.h += 1;
      else
        p.h = h, p.w = w;
    }
    p.w = pairedWidth(p, n, p.w);
    if (p.align <= 0 || host)
      return;
    // Columns of a share that divides the unit (a little narrower, so the
    // tiles still fit), when the box and a quarter more PEs allow.
    int64_t nb = ceilDiv(n, p.w);
    for (int64_t share = std::min(nb, p.align); share >= 1; --share)
      if (p.align % share == 0 && (!p.turns || share % 2 == 0)) {
        int64_t w = pairedWidth(p, n, ceilDiv(n, share));
        if (w <= maxCols(p, arch) && 4 * p.h * w <= 5 * std::max(budget, p.h * p.w))
          p.w = w;
        return;
      }
  };
  if (!cycles)
    return squareish;
  int64_t sramWords = arch.getSramBytes() / 4;
  CostModel cost{arch};
  // The balancing asks for the same budgets again and again (GPT-1T: 10 s
  // of lowering without this); a plan's copies share it.
  using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, bool>;
  auto shapes = std::make_shared<std::map<Key, std::pair<int64_t, int64_t>>>();
  return [=](KernelPlan &p) {
    if (p.align > 0)
      return squareish(p); // aligned to its reader's unit: kept
    int64_t budget = p.h * p.w;
    Key key{budget, p.maxH, p.maxW, p.maxBlocks, p.blocked};
    if (auto it = shapes->find(key); it != shapes->end()) {
      std::tie(p.h, p.w) = it->second;
      return;
    }
    squareish(p);
    // Square-ish tiles are not always the fastest for their PEs: the tile's
    // rounding (kb x nb) decides. Each count of tile rows (one per kb), plus
    // a finishing row and a hand-on row, as wide as the budget allows. The
    // square-ish shape is a candidate within the budget; past it (grown
    // until the tiles fit SRAM, or rounded up), only when no other fits.
    // Generating, a token also waits for x along a row and the sums down
    // the columns (linearChainCycles' hops): a shape is taken by both.
    auto score = [&](const KernelPlan &q) {
      double hops = q.tokenAtATime ? double(q.w - 1) * double(arch.getHopCycles()) +
                                         double(q.h - 1) * cost.relay()
                                   : 0.0;
      return cycles(q) + hops;
    };
    int64_t maxH = maxRows(p, arch), maxW = maxCols(p, arch);
    int64_t squareH = p.h, squareW = p.w, bestH = 0, bestW = 0;
    double best = std::numeric_limits<double>::infinity();
    if (p.h * p.w <= budget)
      best = score(p), bestH = p.h, bestW = p.w;
    for (int64_t kb = k; kb >= 1;) {
      int64_t rows = ceilDiv(k, kb);
      for (int64_t h = rows; h <= rows + 2 && h <= maxH; ++h) {
        int64_t w = std::min({budget / h, maxW, n});
        if (w < 1)
          continue;
        w = pairedWidth(p, n, ceilDiv(n, ceilDiv(n, w)));
        // No row holds fewer than k / h rows of the weights: a shape whose
        // multiply-adds alone (a sparse tile's nonzeros at the least) take
        // longer than the best cannot beat it.
        if (density * cost.matvec(ceilDiv(k, h), ceilDiv(n, w)) > best)
          continue;
        // The tiles on all rows but the finishing one fit (the hand-on row's
        // are checked where it is chosen).
        if (4 * tileWords(std::max<int64_t>(1, h - (h >= 3 ? 1 : 0)), w) * tileCopies(p) +
                kHandOnRowCodeBytes >
            4 * sramWords)
          continue;
        p.h = h, p.w = w;
        double c = score(p);
        if (c < best || (c == best && h * w < bestH * bestW))
          best = c, bestH = h, bestW = w;
      }
      int64_t next = ceilDiv(k, rows + 1); // the next kb with more rows
      kb = next < kb ? next : kb - 1;
    }
    p.h = bestH ? bestH : squareH, p.w = bestH ? bestW : squareW;
    (*shapes)[key] = {p.h, p.w};
  };
}

/// The estimate of a linear K -> N: it receives its slice of x and its
/// block of the residual (taking the producers' blocks as aligned with
/// them: the written body counts the blocks it really touches).
std::function<double(const KernelPlan &)>
wsc::lowering::linearCycles(int64_t k, int64_t n, bool gelu, bool residual, int64_t tokens,
                            wafer::ArchAttr arch, bool asyncSums, double density, bool alone) {
  CostModel cost{arch, alone};
  return [=](const KernelPlan &p) {
    CostModel::Output out = outputOf(p, tokens, n);
    bool handOnRow = linearHandOnRow(p, k, n, gelu, residual, tokens, arch, asyncSums, density);
    int64_t rows = CostModel::tileRows(p.h, out, handOnRow), kb = ceilDiv(k, rows);
    int64_t entries = sparseTileEntries(p.storage, kb, ceilDiv(n, p.w), density);
    return cost.linear(k, n, p.h, p.w, gelu, out, kb, blockColumns(p, n, arch),
                       residual ? ceilDiv(n, p.w) : 0, handOnRow, streamsX(p.storage, entries),
                       asyncSums, entries, p.turns);
  };
}

bool wsc::lowering::linearHandOnRow(const KernelPlan &p, int64_t k, int64_t n, bool gelu,
                                    bool residual, int64_t tokens, wafer::ArchAttr arch,
                                    bool asyncSums, double density) {
  CostModel::Output out = outputOf(p, tokens, n);
  if (out != CostModel::Output::Blocks || !CostModel::finishingRow(p.h, out) || p.h < 4)
    return false;
  // The tiles on one row fewer must still fit, with room for the program.
  int64_t nb = ceilDiv(n, p.w), kb = ceilDiv(k, CostModel::tileRows(p.h, out, true));
  int64_t words = kb + weightTileWords(p.storage, kb, nb, density) + (asyncSums ? 6 : 5) * nb;
  if (4 * words * tileCopies(p) + kHandOnRowCodeBytes > int64_t(arch.getSramBytes()))
    return false;
  CostModel cost{arch};
  int64_t group = blockColumns(p, n, arch), last = residual ? nb : 0;
  int64_t kbFewer = ceilDiv(k, CostModel::tileRows(p.h, out, false));
  int64_t entries = sparseTileEntries(p.storage, kb, nb, density);
  int64_t entriesFewer = sparseTileEntries(p.storage, kbFewer, nb, density);
  return cost.linear(k, n, p.h, p.w, gelu, out, kb, group, last, true, streamsX(p.storage, entries),
                     asyncSums, entries, p.turns) <
         cost.linear(k, n, p.h, p.w, gelu, out, kbFewer, group, last, false,
                     streamsX(p.storage, entriesFewer), asyncSums, entriesFewer, p.turns);
}

/// The most entries (nonzeros and the fillers of longer gaps, as
/// format::countEntries counts them) of any kb x nb tile of a matrix weight
/// with 8-bit gaps and with 4-bit ones (its columns [lo, hi) when hi > 0,
/// seen through `interleave`, `perm` and `rowPerm` as init_tile sees them),
/// or nothing when its values are not at hand.
static std::optional<std::pair<int64_t, int64_t>>
densestTile(Value weight, int64_t kb, int64_t nb, int64_t lo, int64_t hi,
            ArrayRef<int64_t> interleave, ArrayRef<int64_t> perm, ArrayRef<int64_t> rowPerm) {
  auto w = weight.getDefiningOp<wg::WeightOp>();
  if ((!w && !weight.getDefiningOp<wg::ConstantOp>()) || (w && w.isElided()))
    return std::nullopt;
  FailureOr<std::vector<uint32_t>> bits = readF32Weight(weight, weight.getDefiningOp());
  if (failed(bits))
    return std::nullopt;
  ArrayRef<int64_t> shape = cast<RankedTensorType>(weight.getType()).getShape();
  int64_t rows = shape[0], cols = shape[1];
  if (!hi || hi > cols)
    lo = std::min(lo, cols), hi = cols;
  int64_t across = ceilDiv(hi - lo, nb);
  size_t tiles = size_t(ceilDiv(rows, kb) * across);
  std::vector<int64_t> bytes(tiles, 0), nibbles(tiles, 0);
  std::vector<uint64_t> next(static_cast<size_t>(across), 0); // per tile: where a gap of 0 lands
  for (int64_t r = 0; r < rows; ++r) {
    std::fill(next.begin(), next.end(), 0);
    for (int64_t c = lo; c < hi; ++c) {
      int64_t from = wk::permutedIndex(wk::interleavedColumn(c, interleave, cols), perm);
      if (from < 0 || from >= cols)
        continue;
      int64_t row = wk::permutedIndex(r, rowPerm);
      if (!(*bits)[size_t(row * cols + from)])
        continue;
      uint64_t j = uint64_t((c - lo) % nb), &at = next[size_t((c - lo) / nb)];
      size_t tile = size_t(r / kb * across + (c - lo) / nb);
      bytes[tile] += 1 + format::fillersBefore(at, j, format::SparseGaps::Bytes);
      nibbles[tile] += 1 + format::fillersBefore(at, j, format::SparseGaps::Nibbles);
      at = j + 1;
    }
  }
  if (!tiles)
    return std::pair<int64_t, int64_t>{0, 0};
  return std::pair{*std::max_element(bytes.begin(), bytes.end()),
                   *std::max_element(nibbles.begin(), nibbles.end())};
}

std::string wsc::lowering::tileStorage(const KernelPlan &p, unsigned first, int64_t kb,
                                       int64_t nb, int64_t &entries) {
  entries = -1;
  Value weight = p.inputs[first];
  double density = weightDensity(weight);
  if (density >= 1.0)
    return p.storage;
  SmallVector<Value> layers = {weight};
  size_t statics = size_t(llvm::count_if(p.inputs, isStatic));
  size_t role = first - (p.inputs.size() - statics);
  for (size_t at = role; statics && at < p.laterWeights.size(); at += statics)
    layers.push_back(p.laterWeights[at]);
  // The densest tile over every layer, with each width of gaps.
  int64_t bytes = 0, nibbles = 0;
  for (Value v : layers) {
    double density = weightDensity(v);
    if (density >= 1.0)
      return p.storage;
    auto densest =
        densestTile(v, kb, nb, p.colLo, p.colHi, p.colInterleave, p.colPerm, p.rowPerm);
    bytes = std::max(bytes, densest ? densest->first
                                    : expectedEntries(kb, nb, density, format::SparseGaps::Bytes));
    nibbles = std::max(nibbles, densest ? densest->second
                                        : expectedEntries(kb, nb, density,
                                                          format::SparseGaps::Nibbles));
  }
  std::optional<SparseForm> form = chooseForm(p.storage, kb, nb, bytes, nibbles);
  if (!form)
    return p.storage;
  entries = form->entries;
  return form->storage(p.storage);
}

std::pair<int64_t, double> LinearKind::writeBody(Body &k, const KernelPlan &p, int64_t batch,
                                                  int64_t tokens, const CostModel &cost) const {
  Sram sram;
  int64_t h = p.h, w = p.w;
  auto dim = [&](int i, int d) { return cast<ShapedType>(k.type(i)).getDimSize(d); };
  CostModel::Output out = k.output;
  int64_t g = k.group;
  bool residual = p.inputs.size() > 1 && k.isStream(1);
  int first = residual ? 2 : 1;
  // A column piece computes columns [colLo, colHi) of the weight.
  SmallVector<int64_t, 2> window;
  if (p.colHi)
    window = {p.colLo, p.colHi};
  int64_t kdim = dim(first, 0), n = p.colHi ? p.colHi - p.colLo : dim(first, 1);
  bool bias =
      static_cast<int>(p.inputs.size()) >
      first + 1 + (p.picksNext ? 1 : 0) + (p.samples ? 1 : 0) + (p.turns ? 1 : 0);
  // With a finishing row, the tiles are on rows 0..h-2 (the last row's
  // tile rows lie past K: zeros it never reads); with a hand-on row below
  // it, on rows 0..h-3.
  bool finishing = CostModel::finishingRow(h, out);
  bool asyncSums = finishing && asyncColumnSums(tokens);
  bool handOnRow = linearHandOnRow(p, kdim, n, p.kind == "linear_gelu", residual, tokens,
                                   cost.arch, asyncColumnSums(tokens), weightDensity(p.inputs[first]));
  int64_t tileRows = CostModel::tileRows(h, out, handOnRow);
  int64_t fin = handOnRow ? h - 2 : h - 1; // the row that finishes
  ArrayAttr finRow = k.pes(0, w - 1, fin, fin);
  int64_t kb = ceilDiv(kdim, tileRows), nb = ceilDiv(n, w);
  int64_t entries;
  std::string storage = tileStorage(p, unsigned(first), kb, nb, entries);
  bool streamed = streamsX(p.storage, entries);
  int64_t x = streamed ? 0 : sram.words(kb);
  int64_t weight = sram.words(wk::tileWords(storage, kb, nb));
  int64_t b = bias ? sram.words(nb) : 0, r = residual ? sram.words(nb) : 0;
  // With async column sums, the weight rows' partial of token t is at
  // part + 4 nb (t mod 2): the engine passes one on while the core
  // computes the other (idx[0] of the parity loop).
  int64_t part = sram.words(asyncSums ? 2 * nb : nb);
  wk::AffAttr rowPart = asyncSums ? k.aff(part, {4 * nb}) : k.aff(part);
  k.initTile(k.operand(first), weight, kb, nb, {kb, 0}, {0, nb}, storage, window,
             p.colInterleave, p.colPerm, p.rowPerm);
  if (bias)
    k.initTile(k.operand(first + 1), b, 1, nb, {0, 0}, {0, nb}, "f32", window, p.colInterleave,
               p.colPerm);
  if (p.turns && nb % 2) { // the sizer keeps whole pairs in a block
    k.kernel().emitOpError("turns rotary pairs, but its blocks of ") << nb << " words split them";
    return {-1, 0.0};
  }
  std::optional<PairTurn> turn;
  if (p.turns)
    turn = PairTurn::allocate(k, sram, unsigned(p.inputs.size() - 1), nb);
  k.tokenLoops(asyncSums ? 2 : 1);
  if (asyncSums)
    k.openLoop(2);
  // Token t is loop index 0, or 2 i1 + i0 inside the parity loop.
  ArrayAttr firstToken = k.guards({asyncSums ? k.aff(0, {-1, -2}) : k.aff(0, {-1})});
  // Each PE row takes its kb-slice of x; the last slice may be shorter.
  // A piece of a split weight uses x[weightRowBase, weightRowBase + kdim).
  // An f32 or sparse tile takes each piece of the slice (a block of x holds it)
  // straight into its rows' multiply-adds; a dense 16-bit one stores x first.
  int64_t base = p.weightRowBase, in;
  if (streamed) {
    in = k.recvRanges(0, {Body::Range{base, base + kdim, rowPart}}, kb, tileRows,
                      /*byRow=*/true, nullptr, Body::Product{weight, nb, storage, kb});
    // Tile rows past K (kb rounds up) take no x: their partial is zero.
    int64_t holding = ceilDiv(kdim, kb);
    if (holding < tileRows)
      k.imm("fill", rowPart, k.aff(0), 0.0f, k.aff(nb), k.pes(0, w - 1, holding, tileRows - 1));
  } else {
    in = k.recvRange(0, base, kb, tileRows, base + kdim, k.aff(x), /*byRow=*/true);
  }
  // Only the last row adds the residual: its block of it.
  int64_t inLast =
      residual ? k.recvRange(1, 0, nb, w, n, k.aff(r), /*byRow=*/false, finRow) : 0;
  if (!streamed)
    k.matvec(rowPart, k.aff(weight), k.aff(x), k.aff(kb), k.aff(nb), true,
             finishing ? k.pes(0, w - 1, 0, tileRows - 1) : nullptr, nullptr, storage);
  // A piece of a split weight after the first adds the partial sum of the
  // pieces before it, ahead of the bias and GELU; a real residual follows them.
  bool partialSum = residual && p.weightRowBase > 0;
  auto epilogue = [&] {
    if (partialSum)
      k.vector("add", k.aff(part), k.aff(part), k.aff(r), k.aff(nb), finRow);
    if (bias)
      k.vector("add", k.aff(part), k.aff(part), k.aff(b), k.aff(nb), finRow);
    if (p.kind == "linear_gelu")
      k.unary(p.geluTanh ? "gelu_tanh" : "gelu", k.aff(part), k.aff(part), k.aff(nb), finRow);
    if (p.relu)
      k.unary("relu", k.aff(part), k.aff(part), k.aff(nb), finRow);
    if (residual && !partialSum)
      k.vector("add", k.aff(part), k.aff(part), k.aff(r), k.aff(nb), finRow);
    if (turn)
      turn->apply(k, part, finRow, firstToken);
  };
  if (!p.hostResult) {
    k.reduceGatherSend(k.aff(part), nb, n, epilogue, true, true, finishing, handOnRow,
                       asyncSums ? rowPart : nullptr);
  } else {
    // The host reads the blocks where they are kept, no gather. When they
    // all fit (HostKept) the last row keeps every token's block; else row
    // py keeps tokens g in [py*tb, py*tb + tb), g = b*T + t: the last row
    // finishes each token's block and keeps it or sends it north ("up")
    // to its row, and the rows in between pass it on. A last row that
    // keeps them all holds no tiles when it finishes (`finishing`).
    bool lastKeeps = out == CostModel::Output::HostKept && h > 1;
    int64_t all = batch * tokens, tb = lastKeeps ? all : ceilDiv(all, h);
    int64_t kept = sram.words(tb * nb), relay = h > 1 && !lastKeeps ? sram.words(nb) : 0;
    // Token t of batch b is t = 2 i1 + i0 inside the parity loop, which
    // only a last row that keeps every token has (the guards below are
    // for rows that keep some).
    assert((!asyncSums || lastKeeps) && "async sums finish on a row that keeps all");
    SmallVector<int64_t, 3> byToken = {4 * nb, 4 * nb * tokens};
    if (asyncSums)
      byToken = {4 * nb, 8 * nb, 4 * nb * tokens};
    wk::AffAttr slot = k.aff(kept, byToken, 0, lastKeeps ? 0 : -4 * nb * tb);
    ArrayAttr mine = k.guards({k.aff(0, {1, tokens}, 0, -tb),             // g >= py*tb
                               k.aff(tb - 1, {-1, -tokens}, 0, tb)});     // g < py*tb + tb
    ArrayAttr above = k.guards({k.aff(-1, {-1, -tokens}, 0, tb)});       // g < py*tb
    ArrayAttr upper = k.pes(0, w - 1, 0, h - 2);
    std::optional<NextToken> next;
    if (p.picksNext) {
      // The indices, then a sample's [temperature, seed], are the last inputs.
      unsigned last = unsigned(p.inputs.size() - 1);
      next = NextToken::allocate(k, sram, last - p.samples, nb, batch * tokens,
                                 p.samples ? std::optional<unsigned>(last) : std::nullopt,
                                 topKBitsOf(p, n, cost));
    }
    k.reduceGatherSend(k.aff(part), nb, n, [&] {
      epilogue();
      if (next)
        next->pick(k, part, nb, n, tokens, asyncSums);
      k.unary("copy", slot, k.aff(part), k.aff(nb), k.lastRow(),
              h > 1 && !lastKeeps ? mine : nullptr);
      if (h == 1 || lastKeeps)
        return;
      k.send("up", k.aff(part), k.aff(nb), k.lastRow(), above);
      k.recv("up", slot, k.aff(nb), "copy", upper, mine);
      k.relay("up", "up", k.aff(relay), k.aff(nb), "copy", upper, above);
    }, true, /*gatherRow=*/false, finishing, false, asyncSums ? rowPart : nullptr);
    OpBuilder::InsertionGuard guard(k.builder());
    k.builder().setInsertionPointToStart(k.top());
    wk::HostOutputOp::create(k.builder(), k.builder().getUnknownLoc(), 0, kept, tb, nb,
                             k.builder().getDenseI64ArrayAttr({lastKeeps ? 0 : tb, 0}),
                             k.builder().getDenseI64ArrayAttr({0, nb}),
                             lastKeeps ? k.lastRow() : nullptr,
                             k.builder().getDenseI64ArrayAttr(window));
    if (next)
      next->keepForHost(k, 1, batch, tokens);
  }
  double pickCycles =
      p.picksNext ? NextToken::cycles(nb, w, cost, p.samples, topKBitsOf(p, n, cost)) : 0.0;
  return {sram.next, cost.linear(kdim, n, h, w, p.kind == "linear_gelu", out, in, g, inLast,
                                 handOnRow, streamed, asyncSums, entries, p.turns) +
                         pickCycles + (p.relu ? cost.vector(nb) : 0.0)};
}

LogicalResult LinearKind::resize(wk::KernelOp kernel, ArrayRef<LogicalInput> ins, KernelPlan &p,
                                 int64_t batch, int64_t tokens, wafer::ArchAttr arch) const {
  bool residual = streamWordsOf(ins, 1) > 0;
  ArrayRef<int64_t> weight = matrixShape(p, residual ? 2 : 1);
  if (weight.empty() || !streamWordsOf(ins, 0) || p.weightRowBase + weight[0] > streamWordsOf(ins, 0))
    return failure();
  int64_t n = p.colHi ? p.colHi - p.colLo : weight[1];
  if (auto form = kernel->getAttrOfType<StringAttr>(kGeluAttr))
    p.geluTanh = form.getValue() == "tanh";
  p.picksNext = kernel->hasAttr(kPicksNextAttr);
  StringRef picks = p.picksNext ? kernel->getAttrOfType<StringAttr>(kPicksNextAttr).getValue() : "";
  p.samples = picks == "sample" || picks == "sample_top_k";
  p.topK = picks == "sample_top_k";
  p.turns = kernel->hasAttr(kTurnsAttr);
  p.relu = kernel->hasAttr(kReluAttr);
  double density = weightDensity(p.inputs[residual ? 2 : 1]);
  bool gelu = p.kind == "linear_gelu";
  p.cycles = linearCycles(weight[0], n, gelu, residual, batch * tokens, arch,
                          asyncColumnSums(tokens), density);
  p.alone = linearCycles(weight[0], n, gelu, residual, batch * tokens, arch,
                         asyncColumnSums(tokens), density, /*alone=*/true);
  p.size = linearSizer(weight[0], n, p.hostResult, residual, batch, tokens, p.storage, arch,
                       p.cycles, density);
  return success();
}

void LinearKind::annotate(wk::KernelOp kernel, const KernelPlan &p) const {
  if (p.picksNext)
    kernel->setAttr(kPicksNextAttr,
                    StringAttr::get(kernel.getContext(), p.topK      ? "sample_top_k"
                                                         : p.samples ? "sample"
                                                                     : "argmax"));
  if (p.turns)
    kernel->setAttr(kTurnsAttr, UnitAttr::get(kernel.getContext()));
  if (p.kind == "linear_gelu" && p.geluTanh)
    kernel->setAttr(kGeluAttr, StringAttr::get(kernel.getContext(), "tanh"));
  if (p.relu)
    kernel->setAttr(kReluAttr, UnitAttr::get(kernel.getContext()));
}

const KernelKind &wsc::lowering::linearKind() {
  static const LinearKind kind;
  return kind;
}
