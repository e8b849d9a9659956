//===- LowerToKernels.cpp - fused wsgraph to per-core kernels -------------===//
//
// Every kernel follows one dataflow skeleton, per token:
//   1. every PE receives the whole input vector (a multicast stream);
//   2. every PE computes a partial result block from its SRAM-resident tile;
//   3. partials are summed down each column ("col" channel, chain south);
//   4. the last row finishes its block (bias, GELU, residual, positions);
//   5. blocks are gathered west to east along the last row ("row" channel);
//   6. the last PE sends the whole output vector on "out0".
// Weights are tiled [rows per PE-row] x [columns per PE-column], padded with
// zeros, so every PE runs the same code with coordinate-affine addresses.
//
//===----------------------------------------------------------------------===//
#include "wsc/Analysis/CostModel.h"
#include "wsc/Conversion/Passes.h"
#include "wsgraph/WsgraphDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

#include <cmath>

namespace wsc {
#define GEN_PASS_DEF_WSCLOWERTOKERNELS
#include "wsc/Conversion/Passes.h.inc"
} // namespace wsc

using namespace mlir;
using namespace wsc;
namespace wg = wsc::wsgraph;
namespace wk = wsc::wskernel;

namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Estimated SRAM bytes one instruction of a kernel body takes.
constexpr int64_t kCodeBytesPerInstruction = 16;

/// Bump allocation of a PE's SRAM, in bytes.
struct Sram {
  int64_t next = 0;
  int64_t words(int64_t n) {
    int64_t at = next;
    next += 4 * n;
    return at;
  }
};

/// What one kernel needs before its body is written.
struct KernelPlan {
  std::string name, kind;
  int64_t h = 1, w = 1;
  SmallVector<Value> inputs; // streams, then tensors
  SmallVector<Type> results;
  Operation *anchor;          // the wsgraph op whose result the kernel replaces
  double work = 1;            // multiply-accumulates (or elements) per token
  float epsilon = 1e-5f;      // layer_norm
  float scale = 1.0f;         // attention
  bool hostResult = false;    // the result goes to the host, not to a stream
  int64_t stage = 0;          // the wafer it runs on
  std::function<void(KernelPlan &)> size; // picks h, w for a PE budget
};

/// Builds a kernel body with the skeleton's helpers.
class Body {
public:
  Body(OpBuilder &b, wk::KernelOp kernel, int64_t batch, int64_t tokens)
      : b(b), ctx(b.getContext()), h(kernel.getHeight()), w(kernel.getWidth()), batch(batch),
        tokens(tokens), topBlock(&kernel.getBody().front()) {}

  /// The kernel's own block, outside the token loops.
  Block *top() { return topBlock; }

  wk::AffAttr aff(int64_t base, ArrayRef<int64_t> loop = {}, int64_t px = 0, int64_t py = 0) {
    return wk::AffAttr::get(ctx, base, loop, px, py);
  }
  ArrayAttr pes(int64_t x0, int64_t x1, int64_t y0, int64_t y1) {
    return b.getArrayAttr({wk::PeRangeAttr::get(ctx, x0, x1, y0, y1)});
  }
  ArrayAttr all() { return nullptr; }
  ArrayAttr lastRow() { return pes(0, w - 1, h - 1, h - 1); }

  void recv(StringRef port, wk::AffAttr dst, wk::AffAttr n, StringRef combine = "copy",
            ArrayAttr when = nullptr, ArrayAttr guard = nullptr) {
    wk::RecvOp::create(b, loc(), port, dst, n, combine, when, guard);
  }
  /// Pops n words of a port that this PE does not need.
  void drop(StringRef port, wk::AffAttr n, ArrayAttr when = nullptr) {
    if (n.getBase() == 0 && n.getLoop().empty() && n.getPx() == 0 && n.getPy() == 0)
      return;
    recv(port, aff(0), n, "discard", when);
  }
  void send(StringRef port, wk::AffAttr src, wk::AffAttr n, ArrayAttr when = nullptr,
            ArrayAttr guard = nullptr) {
    wk::SendOp::create(b, loc(), port, src, n, when, guard);
  }
  ArrayAttr guards(ArrayRef<wk::AffAttr> conditions) {
    return b.getArrayAttr(SmallVector<Attribute>(conditions.begin(), conditions.end()));
  }

  /// Receives slice i (block words, the last one shorter) of an n-word vector,
  /// where i is the PE's row (byRow) or column, on the PEs `when` selects.
  void recvSlices(StringRef port, int64_t n, int64_t block, int64_t parts, int64_t dst, bool byRow,
                  ArrayAttr when = nullptr) {
    auto at = [&](int64_t base, int64_t perPart) {
      return byRow ? aff(base, {}, 0, perPart) : aff(base, {}, perPart, 0);
    };
    auto select = [&](int64_t lo, int64_t hi) -> ArrayAttr {
      ArrayAttr range = byRow ? pes(0, w - 1, lo, hi) : pes(lo, hi, 0, h - 1);
      if (!when)
        return range;
      // Intersect with `when` (a single range here).
      auto a = cast<wk::PeRangeAttr>(range[0]), c = cast<wk::PeRangeAttr>(when[0]);
      return b.getArrayAttr({wk::PeRangeAttr::get(
          ctx, std::max(a.getX0(), c.getX0()), std::min(a.getX1(), c.getX1()),
          std::max(a.getY0(), c.getY0()), std::min(a.getY1(), c.getY1()))});
    };
    if (parts > 1)
      recvPart(port, n, at(0, block), aff(block), aff(dst), select(0, parts - 2));
    int64_t last = n - (parts - 1) * block;
    recvPart(port, n, aff((parts - 1) * block), aff(last), aff(dst),
             select(parts - 1, parts - 1));
  }

  /// Receives only elements [first, first + count) of an n-word vector on a
  /// port into dst, on the PEs `when` selects; `first` and `count` may depend
  /// on the coordinate. The rest of the vector is discarded.
  void recvPart(StringRef port, int64_t n, wk::AffAttr first, wk::AffAttr count, wk::AffAttr dst,
                ArrayAttr when = nullptr) {
    drop(port, first, when);
    recv(port, dst, count, "copy", when);
    // n - first - count, as an affine of the same terms.
    drop(port,
         aff(n - first.getBase() - count.getBase(), {}, -first.getPx() - count.getPx(),
             -first.getPy() - count.getPy()),
         when);
  }
  void vector(StringRef kind, wk::AffAttr dst, wk::AffAttr lhs, wk::AffAttr rhs, wk::AffAttr n,
              ArrayAttr when = nullptr, ArrayAttr guard = nullptr) {
    wk::VectorOp::create(b, loc(), kind, dst, lhs, rhs, n, when, guard);
  }
  void scalar(StringRef kind, wk::AffAttr dst, wk::AffAttr lhs, wk::AffAttr s, wk::AffAttr n,
              ArrayAttr when = nullptr, ArrayAttr guard = nullptr) {
    wk::ScalarOp::create(b, loc(), kind, dst, lhs, s, n, when, guard);
  }
  void imm(StringRef kind, wk::AffAttr dst, wk::AffAttr src, float value, wk::AffAttr n,
           ArrayAttr when = nullptr, ArrayAttr guard = nullptr) {
    wk::ImmOp::create(b, loc(), b.getStringAttr(kind), dst, src, b.getF32FloatAttr(value), n,
                      when, guard);
  }
  void unary(StringRef kind, wk::AffAttr dst, wk::AffAttr src, wk::AffAttr n,
             ArrayAttr when = nullptr, ArrayAttr guard = nullptr) {
    wk::UnaryOp::create(b, loc(), kind, dst, src, n, when, guard);
  }
  void reduce(StringRef kind, wk::AffAttr dst, wk::AffAttr src, wk::AffAttr n,
              ArrayAttr when = nullptr, ArrayAttr guard = nullptr) {
    wk::ReduceOp::create(b, loc(), kind, dst, src, n, when, guard);
  }
  void matvec(wk::AffAttr dst, wk::AffAttr m, wk::AffAttr v, wk::AffAttr rows, wk::AffAttr cols,
              bool transposed, ArrayAttr when = nullptr, ArrayAttr guard = nullptr) {
    wk::MatvecOp::create(b, loc(), dst, m, v, rows, cols, transposed, false, when, guard);
  }
  OpBuilder &builder() { return b; }
  void gather(wk::AffAttr dst, wk::AffAttr table, wk::AffAttr index, wk::AffAttr rows,
              wk::AffAttr cols, wk::AffAttr rowLo) {
    wk::GatherOp::create(b, loc(), dst, table, index, rows, cols, rowLo, nullptr, nullptr);
  }
  void initTile(int64_t source, int64_t offset, int64_t rows, int64_t cols,
                ArrayRef<int64_t> rowOrigin, ArrayRef<int64_t> colOrigin) {
    wk::InitTileOp::create(b, loc(), source, offset, rows, cols,
                           b.getDenseI64ArrayAttr(rowOrigin), b.getDenseI64ArrayAttr(colOrigin));
  }

  /// Opens the batch (outer) and token (inner) loops; index 0 is the token.
  void tokenLoops() {
    auto outer = wk::LoopOp::create(b, loc(), batch);
    b.setInsertionPointToStart(&outer.getBody().emplaceBlock());
    auto inner = wk::LoopOp::create(b, loc(), tokens);
    b.setInsertionPointToStart(&inner.getBody().emplaceBlock());
  }

  /// Steps 3 to 6: column reduction of `part` (nb words), a last-row
  /// epilogue, the last-row gather into `gather` and the send of n words.
  void reduceGatherSend(int64_t part, int64_t nb, int64_t n, int64_t gather,
                        function_ref<void()> epilogue, bool reduceColumns = true,
                        bool gatherRow = true) {
    if (h > 1 && reduceColumns) {
      recv("col", aff(part), aff(nb), "add", pes(0, w - 1, 1, h - 1));
      send("col", aff(part), aff(nb), pes(0, w - 1, 0, h - 2));
    }
    epilogue();
    if (!gatherRow)
      return;
    if (w == 1) {
      send("out0", aff(part), aff(n), lastRow());
      return;
    }
    // Blocks travel east along the last row one at a time, so no PE holds
    // more than one block: in step i, the PEs east of i pass block i on and
    // PE i sends its own; the last PE streams every block out as it comes.
    auto loop = wk::LoopOp::create(b, loc(), w - 1);
    OpBuilder::InsertionGuard inLoop(b);
    b.setInsertionPointToStart(&loop.getBody().emplaceBlock());
    wk::AffAttr eastOfStep = aff(-1, {-1}, 1);  // px - i - 1 >= 0
    wk::AffAttr atOrEast = aff(0, {-1}, 1);     // px - i >= 0
    wk::AffAttr atOrWest = aff(0, {1}, -1);     // i - px >= 0
    recv("row", aff(gather), aff(nb), "copy", lastRow(), guards({eastOfStep}));
    send("row", aff(gather), aff(nb), pes(0, w - 2, h - 1, h - 1), guards({eastOfStep}));
    send("out0", aff(gather), aff(nb), pes(w - 1, w - 1, h - 1, h - 1));
    send("row", aff(part), aff(nb), pes(0, w - 2, h - 1, h - 1), guards({atOrEast, atOrWest}));
    b.setInsertionPointAfter(loop);
    send("out0", aff(part), aff(n - (w - 1) * nb), pes(w - 1, w - 1, h - 1, h - 1));
  }

private:
  Location loc() { return b.getUnknownLoc(); }
  OpBuilder &b;
  MLIRContext *ctx;
  int64_t h, w, batch, tokens;
  Block *topBlock;
};

struct LowerToKernelsPass : wsc::impl::WscLowerToKernelsBase<LowerToKernelsPass> {
  using WscLowerToKernelsBase::WscLowerToKernelsBase;
  void runOnOperation() override;
};

LogicalResult buildKernels(func::FuncOp func, std::vector<KernelPlan> &plans, int64_t batch,
                           int64_t tokens, const CostModel &cost);

/// Contiguous stages [begin, end) of plans, one per wafer: `wafers` "auto"
/// takes the fewest wafers whose PE capacity holds every kernel's minimum,
/// a number forces that many. Within that count, stages balance work.
FailureOr<SmallVector<std::pair<size_t, size_t>>>
partitionStages(const std::vector<KernelPlan> &plans, ArrayRef<int64_t> minPes, double capacity,
                StringRef wafers) {
  size_t n = plans.size();
  // Fewest stages by first fit in program order.
  int64_t fewest = 1;
  double used = 0;
  for (int64_t m : minPes) {
    if (used + m > capacity)
      ++fewest, used = 0;
    used += m;
  }
  int64_t count = fewest;
  if (wafers != "auto") {
    if (wafers.getAsInteger(10, count) || count < fewest || count <= 0 || size_t(count) > n)
      return failure();
  }
  // Cut near each equal share of work, at the position (within a window of
  // a quarter share) where the fewest stream words cross, never overfilling
  // a wafer. crossing[i] = words per token of streams cut by a cut before i.
  double total = 0;
  SmallVector<double> prefix(n + 1, 0);
  for (size_t i = 0; i < n; ++i)
    prefix[i + 1] = prefix[i] + plans[i].work;
  total = prefix[n];
  llvm::DenseMap<Value, size_t> producer;
  for (size_t i = 0; i < n; ++i)
    producer[plans[i].anchor->getResult(0)] = i;
  // A stream crosses every cut between its producer and its last consumer.
  SmallVector<size_t> lastUse(n, 0);
  for (size_t j = 0; j < n; ++j)
    for (Value in : plans[j].inputs)
      if (auto it = producer.find(in); it != producer.end())
        lastUse[it->second] = std::max(lastUse[it->second], j);
  SmallVector<int64_t> crossing(n + 1, 0);
  for (size_t k = 0; k < n; ++k)
    for (size_t cut = k + 1; cut <= lastUse[k]; ++cut)
      crossing[cut] += cast<RankedTensorType>(plans[k].anchor->getResult(0).getType()).getDimSize(2);
  SmallVector<std::pair<size_t, size_t>> stages;
  size_t begin = 0;
  for (int64_t stage = 0; stage + 1 < count; ++stage) {
    double share = total * double(stage + 1) / double(count);
    double window = total / double(count) / 4;
    size_t best = 0;
    double pes = 0;
    for (size_t cut = begin + 1; cut + (count - stage - 1) <= n; ++cut) {
      pes += minPes[cut - 1];
      if (pes > capacity)
        break;
      auto better = [&](size_t a, size_t b) {
        if (!b)
          return true;
        bool aw = std::abs(prefix[a] - share) <= window, bw = std::abs(prefix[b] - share) <= window;
        if (aw != bw)
          return aw;
        if (aw && crossing[a] != crossing[b])
          return crossing[a] < crossing[b];
        return std::abs(prefix[a] - share) < std::abs(prefix[b] - share);
      };
      if (better(cut, best))
        best = cut;
    }
    if (!best)
      break; // fall back to first fit below
    stages.push_back({begin, best});
    begin = best;
  }
  double lastPes = 0;
  for (size_t i = begin; i < n; ++i)
    lastPes += minPes[i];
  if (lastPes > capacity) {
    // Balancing overfilled the last wafer: first fit is always feasible
    // with the fewest wafers.
    if (count != fewest)
      return failure();
    stages.clear();
    begin = 0;
    double used = 0;
    for (size_t i = 0; i < n; ++i) {
      if (used + minPes[i] > capacity) {
        stages.push_back({begin, i});
        begin = i, used = 0;
      }
      used += minPes[i];
    }
  }
  if (begin < n)
    stages.push_back({begin, n});
  if (int64_t(stages.size()) != count)
    return failure();
  return stages;
}

/// The channels dictionary of a kernel on h x w PEs.
DictionaryAttr channelsFor(Builder &b, int64_t h, int64_t w) {
  SmallVector<NamedAttribute> c;
  if (h > 1)
    c.push_back(b.getNamedAttr("col", b.getStringAttr("col_chain")));
  if (w > 1)
    c.push_back(b.getNamedAttr("row", b.getStringAttr("row_chain")));
  return b.getDictionaryAttr(c);
}

/// Is `v` known before the model runs (a weight or a literal)?
bool isStatic(Value v) {
  return v.getDefiningOp<wg::WeightOp>() || v.getDefiningOp<wg::ConstantOp>();
}

/// Splits `pes` PEs into h x w with h/w close to rows/cols, h <= rows, w <= cols.
std::pair<int64_t, int64_t> shapeGrid(int64_t pes, int64_t rows, int64_t cols, int64_t maxH,
                                      int64_t maxW) {
  double ratio = double(rows) / double(cols);
  int64_t h = std::max<int64_t>(1, std::llround(std::sqrt(double(pes) * ratio)));
  h = std::min({h, rows, maxH});
  int64_t w = std::min({std::max<int64_t>(1, pes / h), cols, maxW});
  // When the columns run out, give the rest of the budget to rows.
  h = std::min({std::max(h, ceilDiv(pes, w)), rows, maxH});
  // No all-padding rows or columns: each one holds part of the data.
  h = ceilDiv(rows, ceilDiv(rows, h));
  w = ceilDiv(cols, ceilDiv(cols, w));
  return {h, w};
}

/// Grows a grid from `pes` PEs until `words(h, w)` fits a PE's SRAM or the
/// grid cannot grow; the caller reports what still does not fit.
std::pair<int64_t, int64_t> fitGrid(int64_t pes, int64_t rows, int64_t cols, int64_t maxH,
                                    int64_t maxW, int64_t sramWords,
                                    function_ref<int64_t(int64_t, int64_t)> words) {
  pes = std::max<int64_t>(1, pes);
  for (;;) {
    auto [h, w] = shapeGrid(pes, rows, cols, maxH, maxW);
    bool full = h == std::min(rows, maxH) && w == std::min(cols, maxW);
    if (words(h, w) <= sramWords || full)
      return {h, w};
    pes = pes * 5 / 4 + 1;
  }
}

} // namespace

void LowerToKernelsPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto archOr = wafer::getArch(module);
  if (failed(archOr))
    return signalPassFailure();
  wafer::ArchAttr arch = *archOr;
  CostModel cost{arch};
  const int64_t sramWords = arch.getSramBytes() / 4;

  for (auto func : llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
    if (func.isExternal())
      continue;
    // Token geometry from the first [B, T] integer input.
    int64_t batch = 0, tokens = 0;
    for (BlockArgument arg : func.getArguments()) {
      auto t = dyn_cast<RankedTensorType>(arg.getType());
      if (t && t.getRank() == 2 && isa<IntegerType>(t.getElementType()) && t.hasStaticShape()) {
        batch = t.getDimSize(0), tokens = t.getDimSize(1);
        break;
      }
    }
    if (!batch) {
      func.emitError("wsc-lower-to-kernels expects a [batch, tokens] integer input of static "
                     "shape (the token ids)");
      return signalPassFailure();
    }
    auto isActivation = [&](Value v) {
      auto t = dyn_cast<RankedTensorType>(v.getType());
      return t && t.getRank() == 3 && t.getDimSize(0) == batch && t.getDimSize(1) == tokens;
    };
    auto width = [](Value v) { return cast<RankedTensorType>(v.getType()).getDimSize(2); };

    OpBuilder b(func.getContext());
    // Plans, in program order; `produced` maps a wsgraph activation to the
    // plan that streams it.
    std::vector<KernelPlan> plans;
    llvm::DenseMap<Value, int> produced;
    llvm::DenseSet<Operation *> absorbed;
    SmallVector<Operation *> deferred;
    bool failedLowering = false;
    auto fail = [&](Operation *op, const Twine &msg) {
      op->emitError() << msg;
      failedLowering = true;
    };
    auto streamOf = [&](Value v, Operation *user) -> bool {
      if (produced.count(v))
        return true;
      fail(user, "operand is not produced by a kernel (unsupported producer '" +
                     (v.getDefiningOp() ? v.getDefiningOp()->getName().getStringRef()
                                        : StringRef("argument")) +
                     "')");
      return false;
    };
    auto singleUser = [](Value v) -> Operation * {
      return v.hasOneUse() ? *v.getUsers().begin() : nullptr;
    };

    int layer = 0;
    for (Operation &opRef : func.getBody().front()) {
      Operation *op = &opRef;
      if (absorbed.count(op) || isa<wg::WeightOp, wg::ConstantOp, func::ReturnOp>(op))
        continue;
      // Head split and merge around attention are claimed when the attention
      // op is reached; anything unclaimed is reported at the end.
      if (isa<wg::SplitOp, wg::ReshapeOp, wg::TransposeOp>(op)) {
        deferred.push_back(op);
        continue;
      }
      KernelPlan plan;
      plan.anchor = op;
      if (auto gather = dyn_cast<wg::GatherOp>(op)) {
        // Token embedding, with positions when the only user adds a [T, C] weight.
        Value table = gather.getData();
        auto tt = cast<RankedTensorType>(table.getType());
        if (!isStatic(table) || tt.getRank() != 2 || gather.getAxis() != 0 ||
            !isa<BlockArgument>(gather.getIndices())) {
          fail(op, "only an embedding lookup of a 2-D weight by the token ids is supported");
          continue;
        }
        plan.kind = "embed";
        plan.name = "embed";
        plan.inputs = {gather.getIndices(), table};
        Value out = gather.getResult();
        if (auto add = dyn_cast_or_null<wg::AddOp>(singleUser(gather.getResult()))) {
          Value pos = add.getLhs() == out ? add.getRhs() : add.getLhs();
          if (auto reshape = pos.getDefiningOp<wg::ReshapeOp>())
            pos = isStatic(reshape.getInput()) ? reshape.getInput() : pos;
          auto pt = cast<RankedTensorType>(pos.getType());
          if (isStatic(pos) && pt.getNumElements() == tokens * tt.getDimSize(1) &&
              add.getType() == gather.getType()) {
            plan.inputs.push_back(pos);
            absorbed.insert(add);
            plan.anchor = add;
          }
        }
        int64_t v = tt.getDimSize(0), c = tt.getDimSize(1);
        plan.work = double(v) * c / 64; // a lookup touches one row; weigh by storage
        bool positions = plan.inputs.size() > 2;
        plan.size = [=](KernelPlan &p) {
          std::tie(p.h, p.w) = fitGrid(p.h * p.w, v, c, arch.getHeight(), arch.getWidth(),
                                       sramWords, [&](int64_t h, int64_t w) {
                                         int64_t vb = ceilDiv(v, h), cb = ceilDiv(c, w);
                                         return batch * tokens + vb * cb +
                                                (positions ? tokens * cb : 0) + 2 * cb;
                                       });
        };
      } else if (auto ln = dyn_cast<wg::LayerNormOp>(op)) {
        if (!isActivation(ln.getInput()) || !isStatic(ln.getScale()) ||
            (ln.getBias() && !isStatic(ln.getBias())) ||
            cast<RankedTensorType>(ln.getScale().getType()).getRank() != 1) {
          fail(op, "layer_norm must normalize the last dimension of a [batch, tokens, C] "
                   "activation with static scale and bias");
          continue;
        }
        if (!streamOf(ln.getInput(), op))
          continue;
        plan.kind = "layer_norm";
        plan.name = "l" + std::to_string(layer) + ".ln";
        if (llvm::any_of(ln->getUsers(), [&](Operation *u) {
              auto l = dyn_cast<wg::LinearOp>(u);
              return l && llvm::any_of(l->getUsers(),
                                       [](Operation *v) { return isa<func::ReturnOp>(v); });
            }))
          plan.name = "ln_f";
        plan.inputs = {ln.getInput(), ln.getScale()};
        plan.epsilon = ln.getEpsilon().convertToFloat();
        if (ln.getBias())
          plan.inputs.push_back(ln.getBias());
        int64_t c = width(ln.getInput());
        plan.work = double(c);
        // Up to 4 PEs; wide vectors take more, so that the streamed form's
        // six cb-word buffers (and its code) fit a PE.
        plan.size = [=](KernelPlan &p) {
          int64_t w = std::max<int64_t>(std::min<int64_t>(4, c),
                                        ceilDiv(6 * c, std::max<int64_t>(1, sramWords - 1024)));
          p.h = 1, p.w = ceilDiv(c, ceilDiv(c, std::min(w, arch.getWidth())));
        };
      } else if (auto linear = dyn_cast<wg::LinearOp>(op)) {
        if (!isActivation(linear.getInput()) || !isStatic(linear.getWeight()) ||
            (linear.getBias() && !isStatic(linear.getBias()))) {
          fail(op, "linear needs a [batch, tokens, K] activation and static weight and bias");
          continue;
        }
        if (!streamOf(linear.getInput(), op))
          continue;
        plan.kind = "linear";
        plan.inputs = {linear.getInput()};
        Value out = linear.getResult();
        bool gelu = false;
        if (auto g = dyn_cast_or_null<wg::GeluOp>(singleUser(out))) {
          gelu = true;
          absorbed.insert(g);
          out = g.getResult();
          plan.anchor = g;
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
        std::string role = gelu ? "mlp_fc" : "linear";
        if (!gelu && llvm::any_of(linear->getUsers(), [](Operation *u) { return isa<wg::SplitOp>(u); }))
          role = "qkv";
        else if (auto from = produced.find(linear.getInput()); from != produced.end())
          role = plans[from->second].kind == "attention"     ? "attn_proj"
                 : plans[from->second].kind == "linear_gelu" ? "mlp_proj"
                                                              : role;
        bool head = llvm::any_of(out.getUsers(), [](Operation *u) { return isa<func::ReturnOp>(u); });
        plan.name = head ? "lm_head" : "l" + std::to_string(layer) + "." + role;
        plan.hostResult = head && out.hasOneUse();
        bool host = plan.hostResult;
        plan.kind = gelu ? "linear_gelu" : "linear";
        plan.work = double(k) * n;
        bool residual = plan.inputs.size() > 1 && !isStatic(plan.inputs[1]);
        plan.size = [=](KernelPlan &p) {
          std::tie(p.h, p.w) = fitGrid(p.h * p.w, k, n, arch.getHeight(), arch.getWidth(),
                                       sramWords, [&](int64_t h, int64_t w) {
                                         int64_t kb = ceilDiv(k, h), nb = ceilDiv(n, w);
                                         return kb + kb * nb + 3 * nb +
                                                (host ? batch * tokens * nb : nb) +
                                                (residual ? nb : 0);
                                       });
        };
      } else if (auto attn = dyn_cast<wg::AttentionOp>(op)) {
        // q, k, v must be heads of one [B, T, 3C] activation; the result is
        // merged back into [B, T, C].
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
          absorbed.insert(t), absorbed.insert(r), absorbed.insert(split);
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
            !isActivation(merged.getResult()) || !attn.getCausal() ||
            qt.getDimSize(2) != tokens) {
          fail(op, "attention must be causal self-attention over heads split from one [batch, "
                   "tokens, 3C] activation and merged back to [batch, tokens, C]");
          continue;
        }
        if (!streamOf(qkv, op))
          continue;
        absorbed.insert(merge), absorbed.insert(merged);
        plan.anchor = merged;
        plan.kind = "attention";
        plan.name = "l" + std::to_string(layer) + ".attention";
        plan.inputs = {qkv};
        plan.scale = attn.getScale().convertToFloat();
        int64_t heads = qt.getDimSize(1), d = qt.getDimSize(3);
        plan.work = double(tokens) * d * heads;
        // Key blocks per head: enough rows for the caches to fit, more when
        // the PE budget allows (each row scans fewer keys per token).
        plan.size = [=](KernelPlan &p) {
          int64_t budgetRows = std::max<int64_t>(1, p.h * p.w / heads);
          for (int64_t rows = 1; rows <= tokens; ++rows) {
            int64_t tb = ceilDiv(tokens, rows);
            // Data words plus about 60 instructions of code (16 bytes each).
            int64_t words = 2 * tb * d + tb + 3 * d + 8 + 60 * 4;
            if (words <= sramWords && rows >= std::min(budgetRows, tokens)) {
              p.h = ceilDiv(tokens, tb), p.w = heads;
              return;
            }
          }
          p.h = tokens, p.w = heads;
        };
      } else if (auto add = dyn_cast<wg::AddOp>(op)) {
        if (!isActivation(add.getResult()) || add.getLhs().getType() != add.getType() ||
            add.getRhs().getType() != add.getType()) {
          fail(op, "add must join two [batch, tokens, C] activations");
          continue;
        }
        if (!streamOf(add.getLhs(), op) || !streamOf(add.getRhs(), op))
          continue;
        plan.kind = "add";
        plan.name = "l" + std::to_string(layer) + ".add";
        plan.inputs = {add.getLhs(), add.getRhs()};
        plan.work = double(width(add.getResult()));
        plan.size = [](KernelPlan &p) { p.h = 1, p.w = 1; };
      } else {
        fail(op, "'" + op->getName().getStringRef() +
                     "' is not supported by wsc-lower-to-kernels (no kernel implements it)");
        continue;
      }
      // A block ends with the residual add that follows its MLP.
      if (plan.kind == "linear" && plan.inputs.size() > 1 && !isStatic(plan.inputs[1]) &&
          plans.size() >= 2 && plans.back().kind == "linear_gelu")
        ++layer;
      Value result = plan.anchor->getResult(0);
      produced[result] = plans.size();
      plans.push_back(std::move(plan));
    }
    for (Operation *op : deferred)
      if (!absorbed.count(op))
        fail(op, "'" + op->getName().getStringRef() +
                     "' is only supported as the head split or merge around attention");
    if (failedLowering)
      return signalPassFailure();

    // Partition into wafers, then size each stage's kernels within its wafer.
    double capacity = utilization * double(arch.getWidth()) * double(arch.getHeight());
    SmallVector<int64_t> minPes;
    for (auto &p : plans) {
      p.h = 1, p.w = 1;
      p.size(p);
      minPes.push_back(p.h * p.w);
      if (double(minPes.back()) > capacity) {
        p.anchor->emitError() << "kernel '" << p.name << "' needs at least " << minPes.back()
                              << " PEs to hold its weights, more than one wafer offers ("
                              << int64_t(capacity) << "); use mode=weight-streaming";
        return signalPassFailure();
      }
    }
    auto stages = partitionStages(plans, minPes, capacity, wafers);
    if (failed(stages)) {
      func.emitError() << "wafers=" << wafers << " is not a number of wafers, or the model "
                       << "does not fit that many wafers of arch '" << arch.getName() << "'";
      return signalPassFailure();
    }
    if (int64_t(stages->size()) > arch.getMaxWafers()) {
      func.emitError() << "the model needs " << stages->size() << " wafers but arch '"
                       << arch.getName() << "' joins at most " << arch.getMaxWafers()
                       << "; use mode=weight-streaming";
      return signalPassFailure();
    }
    // With dead PEs about, a rectangle of area A holds A * rate of them on
    // average; keep that well under one so placement finds room.
    int64_t maxPes = defectRate > 0 ? std::max<int64_t>(1, int64_t(0.3 / defectRate))
                                    : std::numeric_limits<int64_t>::max();
    for (auto [stage, range] : llvm::enumerate(*stages)) {
      double stageWork = 0;
      for (size_t i = range.first; i < range.second; ++i)
        stageWork += plans[i].work;
      for (size_t i = range.first; i < range.second; ++i) {
        KernelPlan &p = plans[i];
        p.stage = stage;
        int64_t pes = std::max<int64_t>(1, int64_t(capacity * p.work / stageWork));
        p.h = 1, p.w = std::max(std::min(pes, maxPes), minPes[i]);
        p.size(p);
      }
    }
    // Tokens per run, for throughput figures downstream.
    func->setAttr("wskernel.tokens", OpBuilder(func).getI64IntegerAttr(batch * tokens));
    if (failed(buildKernels(func, plans, batch, tokens, cost)))
      return signalPassFailure();
  }
}

namespace {

/// Writes the body of one planned kernel; returns the SRAM bytes per PE and
/// the estimated cycles per token.
std::pair<int64_t, double> writeBody(Body &k, const KernelPlan &p, ArrayRef<Type> inTypes,
                                     int64_t batch, int64_t tokens, const CostModel &cost) {
  Sram sram;
  int64_t h = p.h, w = p.w;
  auto dim = [&](int i, int d) { return cast<ShapedType>(inTypes[i]).getDimSize(d); };
  auto streamSize = [&](int i) { return cast<wk::StreamType>(inTypes[i]).getSize(); };

  if (p.kind == "embed") {
    int64_t v = dim(1, 0), c = dim(1, 1);
    int64_t vb = ceilDiv(v, h), cb = ceilDiv(c, w);
    bool positions = p.inputs.size() > 2;
    int64_t idx = sram.words(batch * tokens), table = sram.words(vb * cb);
    int64_t pos = positions ? sram.words(tokens * cb) : 0;
    int64_t part = sram.words(cb), gather = sram.words(cb);
    wk::HostInputOp::create(k.builder(), k.builder().getUnknownLoc(), 0, idx, nullptr);
    k.initTile(1, table, vb, cb, {vb, 0}, {0, cb});
    if (positions)
      k.initTile(2, pos, tokens, cb, {0, 0}, {0, cb});
    k.tokenLoops();
    k.gather(k.aff(part), k.aff(table), k.aff(idx, {4, 4 * tokens}), k.aff(vb), k.aff(cb),
             k.aff(0, {}, 0, vb));
    k.reduceGatherSend(part, cb, c, gather, [&] {
      if (positions)
        k.vector("add", k.aff(part), k.aff(part), k.aff(pos, {4 * cb, 0}), k.aff(cb), k.lastRow());
    });
    return {sram.next, cost.embed(v, c, h, w)};
  }
  if (p.kind == "layer_norm") {
    int64_t c = streamSize(0), cb = ceilDiv(c, w);
    bool bias = p.inputs.size() > 2;
    // Two-pass statistics on the whole vector when it fits beside the rest;
    // otherwise one pass over cb-word chunks: var = E[x^2] - mean^2.
    bool whole = c + 6 * cb + 1024 <= cost.arch.getSramBytes() / 4;
    int64_t x = whole ? sram.words(w * cb) : 0;
    int64_t mean = sram.words(1), var = sram.words(1); // adjacent: summed as a pair
    int64_t gamma = sram.words(cb), beta = bias ? sram.words(cb) : 0;
    int64_t part = sram.words(cb), gather = sram.words(cb);
    k.initTile(1, gamma, 1, cb, {0, 0}, {0, cb});
    if (bias)
      k.initTile(2, beta, 1, cb, {0, 0}, {0, cb});
    k.tokenLoops();
    wk::AffAttr block; // this PE's block of x - mean
    if (whole) {
      // x is centred in place; the variance is x . x, a 1 x c matvec.
      k.recv("in0", k.aff(x), k.aff(c));
      k.reduce("sum", k.aff(mean), k.aff(x), k.aff(c));
      k.imm("mul", k.aff(mean), k.aff(mean), 1.0f / float(c), k.aff(1));
      k.scalar("sub", k.aff(x), k.aff(x), k.aff(mean), k.aff(c));
      k.matvec(k.aff(var), k.aff(x), k.aff(x), k.aff(1), k.aff(c), false);
      k.imm("mul", k.aff(var), k.aff(var), 1.0f / float(c), k.aff(1));
      block = k.aff(x, {}, 4 * cb);
    } else {
      int64_t chunk = sram.words(cb), mine = sram.words(cb), t = sram.words(2);
      k.imm("fill", k.aff(mean), k.aff(0), 0.0f, k.aff(2)); // mean, var hold the sums
      auto accumulate = [&](int64_t n) {
        k.reduce("sum", k.aff(t), k.aff(chunk), k.aff(n));
        k.matvec(k.aff(t + 4), k.aff(chunk), k.aff(chunk), k.aff(1), k.aff(n), false);
        k.vector("add", k.aff(mean), k.aff(mean), k.aff(t), k.aff(2));
      };
      if (w > 1) {
        auto loop = wk::LoopOp::create(k.builder(), k.builder().getUnknownLoc(), w - 1);
        OpBuilder::InsertionGuard inLoop(k.builder());
        k.builder().setInsertionPointToStart(&loop.getBody().emplaceBlock());
        k.recv("in0", k.aff(chunk), k.aff(cb));
        accumulate(cb);
        // Chunk i is this PE's block when i == px.
        k.unary("copy", k.aff(mine), k.aff(chunk), k.aff(cb), nullptr,
                k.guards({k.aff(0, {1}, -1), k.aff(0, {-1}, 1)}));
      }
      int64_t last = c - (w - 1) * cb;
      k.recv("in0", k.aff(chunk), k.aff(last));
      accumulate(last);
      k.unary("copy", k.aff(mine), k.aff(chunk), k.aff(last), k.pes(w - 1, w - 1, 0, 0));
      k.imm("mul", k.aff(mean), k.aff(mean), 1.0f / float(c), k.aff(2));
      k.vector("mul", k.aff(t), k.aff(mean), k.aff(mean), k.aff(1));
      k.vector("sub", k.aff(var), k.aff(var), k.aff(t), k.aff(1));
      k.scalar("sub", k.aff(mine), k.aff(mine), k.aff(mean), k.aff(cb));
      block = k.aff(mine);
    }
    k.imm("add", k.aff(var), k.aff(var), p.epsilon, k.aff(1));
    k.unary("rsqrt", k.aff(var), k.aff(var), k.aff(1));
    k.scalar("mul", k.aff(part), block, k.aff(var), k.aff(cb));
    k.vector("mul", k.aff(part), k.aff(part), k.aff(gamma), k.aff(cb));
    if (bias)
      k.vector("add", k.aff(part), k.aff(part), k.aff(beta), k.aff(cb));
    k.reduceGatherSend(part, cb, c, gather, [] {});
    return {sram.next, cost.layerNorm(c, w)};
  }
  if (p.kind == "linear" || p.kind == "linear_gelu") {
    bool residual = p.inputs.size() > 1 && isa<wk::StreamType>(inTypes[1]);
    int first = residual ? 2 : 1;
    int64_t kdim = dim(first, 0), n = dim(first, 1);
    bool bias = static_cast<int>(p.inputs.size()) > first + 1;
    int64_t kb = ceilDiv(kdim, h), nb = ceilDiv(n, w);
    int64_t x = sram.words(kb), weight = sram.words(kb * nb);
    int64_t b = bias ? sram.words(nb) : 0, r = residual ? sram.words(nb) : 0;
    int64_t part = sram.words(nb), gather = p.hostResult ? -1 : sram.words(nb);
    k.initTile(first, weight, kb, nb, {kb, 0}, {0, nb});
    if (bias)
      k.initTile(first + 1, b, 1, nb, {0, 0}, {0, nb});
    k.tokenLoops();
    // Each PE row keeps its kb-slice of x; the last slice may be shorter.
    k.recvSlices("in0", kdim, kb, h, x, /*byRow=*/true);
    if (residual) {
      // Only the last row adds the residual: its block of it.
      if (h > 1)
        k.drop("in1", k.aff(n), k.pes(0, w - 1, 0, h - 2));
      k.recvSlices("in1", n, nb, w, r, /*byRow=*/false, k.lastRow());
    }
    k.matvec(k.aff(part), k.aff(weight), k.aff(x), k.aff(kb), k.aff(nb), true);
    auto epilogue = [&] {
      if (bias)
        k.vector("add", k.aff(part), k.aff(part), k.aff(b), k.aff(nb), k.lastRow());
      if (p.kind == "linear_gelu")
        k.unary("gelu", k.aff(part), k.aff(part), k.aff(nb), k.lastRow());
      if (residual)
        k.vector("add", k.aff(part), k.aff(part), k.aff(r), k.aff(nb), k.lastRow());
    };
    if (!p.hostResult) {
      k.reduceGatherSend(part, nb, n, gather, epilogue);
    } else {
      // The host reads each last-row PE's block of every token: no gather.
      int64_t out = sram.words(batch * tokens * nb);
      k.reduceGatherSend(part, nb, n, -1, [&] {
        epilogue();
        k.unary("copy", k.aff(out, {4 * nb, 4 * nb * tokens}), k.aff(part), k.aff(nb),
                k.lastRow());
      }, true, /*gatherRow=*/false);
      OpBuilder::InsertionGuard guard(k.builder());
      k.builder().setInsertionPointToStart(k.top());
      wk::HostOutputOp::create(k.builder(), k.builder().getUnknownLoc(), 0, out, batch * tokens,
                               nb, k.builder().getDenseI64ArrayAttr({0, 0}),
                               k.builder().getDenseI64ArrayAttr({0, nb}), k.lastRow());
    }
    return {sram.next, cost.linear(kdim, n, h, w, p.kind == "linear_gelu", !p.hostResult)};
  }
  if (p.kind == "attention") {
    // Column px is head px; row py holds the keys and values of tokens
    // [py*tb, py*tb + tb). Each row computes a partial softmax over its block
    // (max m, sum s, weighted values o); partials merge down the column and
    // the last row divides o by s. Guards pick the rows by the token index t
    // (loop index 0): "own" holds t, "past" lies wholly before t, "future"
    // lies wholly after it.
    int64_t c3 = streamSize(0), c = c3 / 3, heads = w, d = c / heads, rows = h;
    int64_t tb = ceilDiv(tokens, rows);
    int64_t q = sram.words(d), keys = sram.words(tb * d), vals = sram.words(tb * d);
    int64_t scores = sram.words(tb), acc = sram.words(d + 2), up = sram.words(d + 2);
    int64_t tmp = sram.words(2), gather = sram.words(d);
    int64_t m = acc, sum = acc + 4, o = acc + 8; // acc = [m, s, o[d]]
    k.tokenLoops();
    // Row-relative token position r = t - py*tb; own: 0 <= r <= tb-1.
    wk::AffAttr notBefore = k.aff(0, {1, 0}, 0, -tb);       // r >= 0
    wk::AffAttr notAfter = k.aff(tb - 1, {-1, 0}, 0, tb);   // tb-1-r >= 0
    wk::AffAttr beforeRow = k.aff(-1, {-1, 0}, 0, tb);      // t < py*tb
    wk::AffAttr afterRow = k.aff(-tb, {1, 0}, 0, -tb);      // t >= py*tb + tb
    ArrayAttr own = k.guards({notBefore, notAfter});
    ArrayAttr seen = k.guards({notBefore});                  // own or past
    ArrayAttr future = k.guards({beforeRow});
    wk::AffAttr slot = k.aff(0, {4 * d, 0}, 0, -4 * tb * d); // r * d words, in bytes
    // [q | k | v]: keep q[px]; k[px] and v[px] go into this token's slot on its row.
    k.drop("in0", k.aff(0, {}, d));
    k.recv("in0", k.aff(q), k.aff(d));
    k.drop("in0", k.aff(c - d));
    auto keepOnOwnRow = [&](int64_t cache) {
      k.recv("in0", k.aff(cache + slot.getBase(), slot.getLoop(), 0, slot.getPy()), k.aff(d),
             "copy", nullptr, own);
      k.recv("in0", k.aff(0), k.aff(d), "discard", nullptr, future);
      k.recv("in0", k.aff(0), k.aff(d), "discard", nullptr, k.guards({afterRow}));
    };
    keepOnOwnRow(keys);
    k.drop("in0", k.aff(c - d));
    keepOnOwnRow(vals);
    k.drop("in0", k.aff(c - d, {}, -d));
    // Partial softmax over the block; slots after t score -inf.
    k.matvec(k.aff(scores), k.aff(keys), k.aff(q), k.aff(tb), k.aff(d), false, nullptr, seen);
    k.imm("fill", k.aff(scores + 4, {4, 0}, 0, -4 * tb), k.aff(0),
          -std::numeric_limits<float>::infinity(), k.aff(tb - 1, {-1, 0}, 0, tb), nullptr, own);
    k.imm("mul", k.aff(scores), k.aff(scores), p.scale, k.aff(tb), nullptr, seen);
    k.reduce("max", k.aff(m), k.aff(scores), k.aff(tb), nullptr, seen);
    k.scalar("sub", k.aff(scores), k.aff(scores), k.aff(m), k.aff(tb), nullptr, seen);
    k.unary("exp", k.aff(scores), k.aff(scores), k.aff(tb), nullptr, seen);
    k.reduce("sum", k.aff(sum), k.aff(scores), k.aff(tb), nullptr, seen);
    k.matvec(k.aff(o), k.aff(vals), k.aff(scores), k.aff(tb), k.aff(d), true, nullptr, seen);
    // A row wholly in the future contributes nothing: m = -inf, s = 0, o = 0.
    k.imm("fill", k.aff(m), k.aff(0), -std::numeric_limits<float>::infinity(), k.aff(1), nullptr,
          future);
    k.imm("fill", k.aff(sum), k.aff(0), 0.0f, k.aff(d + 1), nullptr, future);
    if (rows > 1) {
      // Merge (m', s', o') from the row above: M = max(m, m');
      // s = s e^(m-M) + s' e^(m'-M); o = o e^(m-M) + o' e^(m'-M). Row 0
      // always holds token 0, so M is finite from there on.
      ArrayAttr below = k.pes(0, w - 1, 1, h - 1);
      int64_t mm = tmp, scale = tmp + 4;
      k.recv("col", k.aff(up), k.aff(d + 2), "copy", below);
      k.vector("max", k.aff(mm), k.aff(m), k.aff(up), k.aff(1), below);
      k.vector("sub", k.aff(scale), k.aff(m), k.aff(mm), k.aff(1), below);
      k.unary("exp", k.aff(scale), k.aff(scale), k.aff(1), below);
      k.scalar("mul", k.aff(sum), k.aff(sum), k.aff(scale), k.aff(d + 1), below);
      k.vector("sub", k.aff(scale), k.aff(up), k.aff(mm), k.aff(1), below);
      k.unary("exp", k.aff(scale), k.aff(scale), k.aff(1), below);
      k.scalar("mul", k.aff(up + 4), k.aff(up + 4), k.aff(scale), k.aff(d + 1), below);
      k.vector("add", k.aff(sum), k.aff(sum), k.aff(up + 4), k.aff(d + 1), below);
      k.unary("copy", k.aff(m), k.aff(mm), k.aff(1), below);
      k.send("col", k.aff(acc), k.aff(d + 2), k.pes(0, w - 1, 0, h - 2));
    }
    k.scalar("div", k.aff(o), k.aff(o), k.aff(sum), k.aff(d), k.lastRow());
    k.reduceGatherSend(o, d, c, gather, [] {}, /*reduceColumns=*/false);
    return {sram.next, cost.attention(tokens, d, heads, rows)};
  }
  if (p.kind == "add") {
    int64_t c = streamSize(0);
    int64_t a = sram.words(c), b = sram.words(c);
    k.tokenLoops();
    k.recv("in0", k.aff(a), k.aff(c));
    k.recv("in1", k.aff(b), k.aff(c));
    k.vector("add", k.aff(a), k.aff(a), k.aff(b), k.aff(c));
    k.send("out0", k.aff(a), k.aff(c));
    return {sram.next, cost.words(2 * c) + cost.vector(c) + cost.words(c)};
  }
  // The host output: every token's vector lands in this PE's SRAM.
  int64_t n = streamSize(0);
  int64_t out = sram.words(batch * tokens * n);
  wk::HostOutputOp::create(k.builder(), k.builder().getUnknownLoc(), 0, out, batch * tokens, n,
                           k.builder().getDenseI64ArrayAttr({0, 0}),
                           k.builder().getDenseI64ArrayAttr({0, 0}), nullptr);
  k.tokenLoops();
  k.recv("in0", k.aff(out, {4 * n, 4 * n * tokens}), k.aff(n));
  return {sram.next, cost.words(n)};
}

LogicalResult buildKernels(func::FuncOp func, std::vector<KernelPlan> &plans, int64_t batch,
                           int64_t tokens, const CostModel &cost) {
  MLIRContext *ctx = func.getContext();
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  OpBuilder b(ret);
  Type f32 = b.getF32Type();
  llvm::DenseMap<Value, Value> streams;
  llvm::StringMap<int> names;
  auto streamType = [&](Value v) {
    return wk::StreamType::get(ctx, cast<RankedTensorType>(v.getType()).getDimSize(2), f32);
  };
  auto uniqueName = [&](StringRef name) {
    int n = names[name]++;
    return n == 0 ? name.str() : (name + "_" + Twine(n + 1)).str();
  };
  auto emit = [&](KernelPlan &p, Type resultType) -> FailureOr<Value> {
    SmallVector<Value> operands;
    for (Value in : p.inputs)
      operands.push_back(streams.count(in) ? streams.lookup(in) : in);
    auto kernel = wk::KernelOp::create(
        b, p.anchor->getLoc(), TypeRange{resultType}, b.getStringAttr(uniqueName(p.name)),
        b.getStringAttr(p.kind),
        b.getDenseI64ArrayAttr({p.h, p.w}), b.getI64IntegerAttr(0), b.getF64FloatAttr(0),
        channelsFor(b, p.h, p.w), operands);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&kernel.getBody().emplaceBlock());
    Body body(b, kernel, batch, tokens);
    SmallVector<Type> types(ValueRange(operands).getTypes());
    auto [dataBytes, cycles] = writeBody(body, p, types, batch, tokens, cost);
    // The program lives in SRAM too: about 16 bytes per instruction.
    int64_t instructions = 0;
    kernel.getBody().walk([&](Operation *op) {
      if (isa<wk::LoopOp>(op))
        instructions += 2; // LOOP and END
      else if (!isa<wk::InitTileOp, wk::HostInputOp, wk::HostOutputOp, wk::KernelOp>(op))
        ++instructions;
    });
    int64_t bytes = dataBytes + kCodeBytesPerInstruction * instructions;
    kernel.setSramBytesPerPeAttr(b.getI64IntegerAttr(bytes));
    kernel->setAttr("wafer.stage", b.getI64IntegerAttr(p.stage));
    kernel.setCyclesPerTokenAttr(b.getF64FloatAttr(cycles));
    if (bytes > cost.arch.getSramBytes())
      return kernel.emitError("kernel '")
             << kernel.getName() << "' (" << p.kind << " on " << p.h << "x" << p.w
             << " PEs) needs " << bytes << " bytes of SRAM per PE, but a PE of arch '"
             << cost.arch.getName() << "' has " << cost.arch.getSramBytes()
             << "; a layer this large needs more wafers or weight streaming (wafers=N or "
                "mode=weight-streaming)";
    return kernel.getResult(0);
  };
  for (KernelPlan &p : plans) {
    Value result = p.anchor->getResult(0);
    auto out = emit(p, p.hostResult ? result.getType() : Type(streamType(result)));
    if (failed(out))
      return failure();
    if (p.hostResult)
      result.replaceUsesWithIf(*out, [](OpOperand &use) { return isa<func::ReturnOp>(use.getOwner()); });
    else
      streams[result] = *out;
  }
  // Host outputs: a one-PE kernel per returned activation.
  for (OpOperand &operand : ret->getOpOperands()) {
    Value v = operand.get();
    if (v.getDefiningOp<wk::KernelOp>())
      continue;
    if (!streams.count(v))
      return ret.emitError("returned value is not produced by a kernel");
    KernelPlan sink;
    sink.name = "output";
    sink.kind = "output";
    sink.inputs = {v};
    sink.anchor = ret;
    sink.stage = plans.empty() ? 0 : plans.back().stage;
    auto out = emit(sink, v.getType());
    if (failed(out))
      return failure();
    operand.set(*out);
  }
  // Drop the wsgraph ops the kernels replaced.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(func.getBody().front())))
    if (op.getDialect() && isa<wg::WsgraphDialect>(op.getDialect()) && op.use_empty())
      op.erase();
  return success();
}

} // namespace
