//===- LowerToKernels.cpp - fused wsgraph to per-core kernels -------------===//
//
// Plans one kernel per fused op (absorbing the head split and merge around
// attention, GELU and residual adds), partitions the kernels into wafer
// stages, sizes each within its wafer and SRAM, and builds them. Plans that
// become several pieces are split in SplitKernels.cpp; the sizers and the
// kernel writer live in KernelSizing.cpp (placement rebuilds kernels with
// them too); the bodies are written by KernelBodies.cpp.
//
//===----------------------------------------------------------------------===//
#include "KernelBody.h"
#include "Kinds/Generic.h"
#include "Kinds/Kind.h"
#include "wsc/Analysis/CostModel.h"
#include "wsc/Analysis/WeightData.h"
#include "wsc/Arch/Arch.h"
#include "wsc/Conversion/Passes.h"
#include "wsgraph/WsgraphDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/FormatVariadic.h"

#include <functional>

namespace wsc {
#define GEN_PASS_DEF_WSCLOWERTOKERNELS
#include "wsc/Conversion/Passes.h.inc"
} // namespace wsc

using namespace mlir;
using namespace wsc;
using namespace wsc::lowering;
namespace wg = wsc::wsgraph;

namespace {

struct LowerToKernelsPass : wsc::impl::WscLowerToKernelsBase<LowerToKernelsPass> {
  using WscLowerToKernelsBase::WscLowerToKernelsBase;
  void runOnOperation() override;
};

LogicalResult buildKernels(func::FuncOp func, std::vector<KernelPlan> &plans, int64_t batch,
                           int64_t tokens, const CostModel &cost);

/// A folded program's block: its output (the feeder's result) and the
/// stream that stands in for it in layer 0 (its producer's) reach the same
/// readers' ports. Null when the block has no feedback or several streams
/// come in.
std::pair<KernelPlan *, KernelPlan *> fedBackPair(std::vector<KernelPlan> &plans) {
  KernelPlan *feeder = nullptr, *standIn = nullptr;
  llvm::DenseSet<Value> fedFromOutside;
  for (KernelPlan &p : plans) {
    if (p.layers && p.feedsBack)
      feeder = &p;
    for (unsigned j : p.fedBack)
      if (p.layers)
        fedFromOutside.insert(p.inputs[j]);
  }
  int producers = 0;
  for (KernelPlan &p : plans)
    if (fedFromOutside.count(p.streamed()))
      standIn = &p, ++producers;
  if (!feeder || producers != 1 || fedFromOutside.size() != 1)
    return {nullptr, nullptr};
  return {feeder, standIn};
}

/// A folded program's block kernels hold every layer's tiles, and their
/// results leave in blocks as a pipelined program's do (a token waits for
/// no kernel's whole row to pass one PE). The block's output and its
/// stand-in in layer 0 come in on the same readers' ports, so they leave in
/// the same blocks (matchFedBackBlocks) when both are kinds that cut their
/// rows by columns (linear, embed); otherwise one stream each, as a
/// feedback port takes.
void blockFoldedStreams(std::vector<KernelPlan> &plans) {
  auto [feeder, standIn] = fedBackPair(plans);
  auto cutsByColumns = [](const KernelPlan *p) {
    return p && !p->hostResult && (p->kind == "linear" || p->kind == "embed");
  };
  bool inBlocks = cutsByColumns(feeder) && cutsByColumns(standIn);
  llvm::DenseSet<Value> fedFromOutside;
  for (const KernelPlan &p : plans)
    for (unsigned j : p.fedBack)
      fedFromOutside.insert(p.inputs[j]);
  for (KernelPlan &p : plans) {
    p.residentLayers = p.layers > 0;
    p.blocked = inBlocks || (!(p.layers && p.feedsBack) && !fedFromOutside.count(p.streamed()));
  }
}

/// Once the shapes are chosen: the stand-in takes the feeder's width, and
/// so its columns per block, on the fewest rows that hold it, while the
/// wafer's `capacity` holds every kernel; when their blocks still differ (or
/// either reorders its columns), both leave as one stream.
void matchFedBackBlocks(std::vector<KernelPlan> &plans, wafer::ArchAttr arch, double capacity) {
  auto [feeder, standIn] = fedBackPair(plans);
  if (!feeder || !feeder->blocked || !standIn->blocked)
    return;
  int64_t n = streamWords(feeder->streamed());
  if (standIn->w != feeder->w && standIn->size) {
    KernelPlan before = *standIn;
    standIn->minW = standIn->maxW = feeder->w;
    standIn->h = 1, standIn->w = int64_t(capacity);
    standIn->size(*standIn);
    double pes = 0;
    for (const KernelPlan &p : plans)
      pes += double(p.h * p.w);
    if (pes > capacity || resultBlocks(*standIn, n, arch) != resultBlocks(*feeder, n, arch))
      *standIn = std::move(before);
  }
  standIn->align = feeder->align;
  auto reorders = [](const KernelPlan *p) {
    return !p->colInterleave.empty() || !p->colPerm.empty();
  };
  if (resultBlocks(*standIn, n, arch) != resultBlocks(*feeder, n, arch) || reorders(feeder) ||
      reorders(standIn) || streamWords(standIn->streamed()) != n)
    feeder->blocked = standIn->blocked = false;
}

/// Contiguous stages [begin, end) of plans, one per wafer: `wafers` "auto"
/// takes the fewest wafers whose PE capacity holds every kernel's minimum,
/// a number forces that many. Within that count, the busiest stage's work
/// is as small as it can be (within 5%), then the fewest words cross.
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
  // prefix[i]: work of plans [0, i); crossing[i]: words per token of the
  // streams a cut before plan i crosses.
  SmallVector<double> prefix(n + 1, 0);
  for (size_t i = 0; i < n; ++i)
    prefix[i + 1] = prefix[i] + plans[i].work;
  llvm::DenseMap<Value, size_t> producer;
  for (size_t i = 0; i < n; ++i)
    producer[plans[i].streamed()] = i;
  // A stream crosses every cut between its producer and its last consumer.
  SmallVector<size_t> lastUse(n, 0);
  for (size_t j = 0; j < n; ++j)
    for (Value in : plans[j].inputs)
      if (auto it = producer.find(in); it != producer.end())
        lastUse[it->second] = std::max(lastUse[it->second], j);
  SmallVector<int64_t> crossing(n + 1, 0);
  for (size_t k = 0; k < n; ++k)
    for (size_t cut = k + 1; cut <= lastUse[k]; ++cut)
      crossing[cut] += streamWords(plans[k].streamed());
  // Two dynamic programs over cut positions, each stage within a wafer's
  // PEs: the least possible work of the busiest stage, then, among cuts
  // whose busiest stage is within 5% of it, the fewest stream words crossing.
  const double inf = std::numeric_limits<double>::infinity();
  size_t stagesWanted = size_t(count);
  auto fits = [&](size_t from, size_t to) { // plans [from, to) on one wafer
    double pes = 0;
    for (size_t i = from; i < to; ++i)
      pes += minPes[i];
    return pes <= capacity;
  };
  // first[i]: the first plan that can share a wafer with plans up to i - 1.
  SmallVector<size_t> first(n + 1, 0);
  for (size_t i = 1, from = 0; i <= n; ++i) {
    while (!fits(from, i))
      ++from;
    first[i] = from;
  }
  auto solve = [&](function_ref<double(size_t, size_t, double)> combine, double bound)
      -> std::pair<double, SmallVector<std::pair<size_t, size_t>>> {
    // best[k][i]: plans [0, i) on k stages; from[k][i]: where the last begins.
    std::vector<std::vector<double>> best(stagesWanted + 1, std::vector<double>(n + 1, inf));
    std::vector<std::vector<size_t>> from(stagesWanted + 1, std::vector<size_t>(n + 1, 0));
    best[0][0] = 0;
    for (size_t k = 1; k <= stagesWanted; ++k)
      for (size_t i = 1; i <= n; ++i)
        for (size_t j = first[i]; j < i; ++j) {
          if (best[k - 1][j] == inf || prefix[i] - prefix[j] > bound)
            continue;
          double v = combine(j, i, best[k - 1][j]);
          if (v < best[k][i])
            best[k][i] = v, from[k][i] = j;
        }
    SmallVector<std::pair<size_t, size_t>> cuts;
    if (best[stagesWanted][n] == inf)
      return {inf, cuts};
    for (size_t k = stagesWanted, i = n; k > 0; i = from[k][i], --k)
      cuts.insert(cuts.begin(), {from[k][i], i});
    return {best[stagesWanted][n], cuts};
  };
  auto [busiest, balanced] = solve(
      [&](size_t j, size_t i, double before) { return std::max(before, prefix[i] - prefix[j]); },
      inf);
  if (busiest == inf)
    return failure();
  auto [crossed, stages] = solve(
      [&](size_t j, size_t, double before) { return before + double(j ? crossing[j] : 0); },
      busiest * 1.05);
  if (crossed == inf)
    stages = balanced;
  return stages;
}

} // namespace

/// PE budgets for plans [first, last) of one wafer: the least cycles per
/// token T that all estimated kernels reach together within `capacity`
/// PEs (binary search on T; each kernel takes the smallest budget that
/// reaches T, or its fastest). Kernels without an estimate get PEs in
/// proportion to their work, as do all when the estimated ones fit anyway.
/// Budgets up to this many PEs are searched one by one (balanceStage).
constexpr int64_t kScannedBudget = 64;

/// What sizing a plan depends on, but for its weights' values: plans alike
/// (a model's layers) take the same shape at the same budget. A plan whose
/// weights are sparse (their zeros set the densest tile) is like no other.
static llvm::hash_code sizingKey(const KernelPlan &p, int64_t minPes, size_t index) {
  auto sparse = [](Value v) {
    Operation *def = v.getDefiningOp();
    return def && (def->hasAttr(kPruneAttr) || def->hasAttr(kDensityAttr) ||
                   def->hasAttr(kMaskFileAttr));
  };
  if (llvm::any_of(p.inputs, sparse))
    return llvm::hash_combine(-1, index);
  auto bits = [](double x) { return llvm::bit_cast<uint64_t>(x); };
  llvm::hash_code key = llvm::hash_combine(
      p.kind, bits(p.work), minPes, p.maxH, p.maxW, p.maxBlocks, p.storage, p.layers, p.heads,
      p.blocked, p.align, p.hostResult, p.rowLo, p.rowHi, p.chained, bits(p.epsilon), p.geluTanh,
      p.gateActivation, bits(p.scale), bits(p.futureFill.value_or(0.0f)),
      p.futureFill.has_value(), p.qkvUnit, p.turns, p.weightRowBase, p.colLo, p.colHi,
      p.writesIntoPrevious);
  key = llvm::hash_combine(key, llvm::hash_combine_range(p.colInterleave),
                           llvm::hash_combine_range(p.colPerm), llvm::hash_combine_range(p.rowPerm),
                           llvm::hash_combine_range(p.operandInput),
                           llvm::hash_combine_range(p.attention.flat()));
  for (auto [step, c] : p.maskSteps)
    key = llvm::hash_combine(key, step, bits(c));
  for (Value v : p.inputs)
    key = llvm::hash_combine(key, v.getType().getAsOpaquePointer());
  Operation *anchor = p.anchor;
  key = llvm::hash_combine(key, anchor->getName().getAsOpaquePointer(), p.result,
                           anchor->getAttrDictionary().getAsOpaquePointer());
  for (Type t : anchor->getOperandTypes())
    key = llvm::hash_combine(key, t.getAsOpaquePointer());
  for (Type t : anchor->getResultTypes())
    key = llvm::hash_combine(key, t.getAsOpaquePointer());
  return key;
}

/// A plan's latency at budgets from `least` to `most`, 8% apart: its
/// cycles and chains (once a layer in a block) at the shape it takes.
using LatencyCurve = SmallVector<std::pair<int64_t, double>>;
static LatencyCurve latencyCurve(KernelPlan &p, int64_t least, int64_t most, int64_t tokens,
                                 const CostModel &cost) {
  const KernelKind *kind = kernelKind(p.kind);
  int64_t n = p.hostResult ? 0 : streamWords(p.streamed());
  double passes = double(std::max<int64_t>(1, p.layers));
  LatencyCurve curve;
  for (int64_t b = least;; b = std::min(most, std::max(b + 1, b * 27 / 25))) {
    p.h = 1, p.w = b;
    p.size(p);
    double chain = kind ? kind->chainCycles(p, n, tokens, cost) : 0.0;
    curve.push_back({b, passes * (p.cycles(p) + chain)});
    if (b >= most)
      return curve;
  }
}

/// A generating program's budgets: a token passes every kernel in turn, so
/// the PEs go where they shorten its path most. Each kernel's latency at a
/// budget is its cycles and its chains (once a layer in a block); a price
/// per PE is bisected until the budgets that minimise latency plus price
/// fit the wafer (budgets on a grid 8% apart); kernels without estimates
/// keep theirs.
static void spendOnLatency(std::vector<KernelPlan> &plans, ArrayRef<int64_t> minPes,
                           size_t first, size_t last, double capacity, int64_t maxPes,
                           int64_t tokens, wafer::ArchAttr arch,
                           SmallVectorImpl<int64_t> &budgets) {
  CostModel cost{arch};
  double room = capacity;
  for (size_t i = first; i < last; ++i)
    if (!plans[i].cycles)
      room -= double(budgets[i - first]);
  int64_t most = std::max<int64_t>(1, std::min<int64_t>(maxPes, int64_t(capacity)));
  // Each kernel's curve, once for plans alike (sizingKey).
  std::vector<LatencyCurve> curves;
  SmallVector<int> curveOf(last - first, -1);
  llvm::DenseMap<llvm::hash_code, int> curveOfKey;
  for (size_t i = first; i < last; ++i) {
    KernelPlan &p = plans[i];
    if (!p.cycles)
      continue;
    auto [it, fresh] = curveOfKey.try_emplace(sizingKey(p, minPes[i], i), int(curves.size()));
    curveOf[i - first] = it->second;
    if (!fresh)
      continue;
    curves.push_back(latencyCurve(p, std::min(minPes[i], most), most, tokens, cost));
  }
  auto spend = [&](double price, SmallVectorImpl<int64_t> *out) {
    double used = 0;
    for (size_t i = first; i < last; ++i) {
      if (curveOf[i - first] < 0)
        continue;
      auto best = llvm::min_element(curves[curveOf[i - first]], [&](auto &a, auto &b) {
        return a.second + price * double(a.first) < b.second + price * double(b.first);
      });
      used += double(best->first);
      if (out)
        (*out)[i - first] = best->first;
    }
    return used;
  };
  double lo = 1e-6, hi = 1e9; // cycles a PE is worth
  if (spend(hi, nullptr) > room)
    return; // the minimax budgets stay
  for (int step = 0; step < 60; ++step) {
    double mid = std::sqrt(lo * hi);
    (spend(mid, nullptr) <= room ? hi : lo) = mid;
  }
  spend(hi, &budgets);
}

static SmallVector<int64_t> balanceStage(std::vector<KernelPlan> &plans,
                                         ArrayRef<int64_t> minPes, size_t first, size_t last,
                                         double capacity, int64_t maxPes) {
  double stageWork = 0;
  for (size_t i = first; i < last; ++i)
    stageWork += plans[i].work;
  SmallVector<int64_t> budgets;
  for (size_t i = first; i < last; ++i) {
    int64_t pes = std::max<int64_t>(1, int64_t(capacity * plans[i].work / stageWork));
    budgets.push_back(std::max(std::min(pes, maxPes), minPes[i]));
  }
  double rest = capacity;
  for (size_t i = first; i < last; ++i)
    if (!plans[i].cycles)
      rest -= double(budgets[i - first]);
  int64_t most = std::max<int64_t>(1, std::min<int64_t>(maxPes, int64_t(capacity)));
  // Each bisection step searches every kernel's budgets again, mostly the
  // same ones, and sizing a shape is the lowering's main cost: the cycles
  // at a budget are kept, once for all plans alike. (Every plan is sized
  // again at its budget afterwards.)
  llvm::DenseMap<llvm::hash_code, size_t> classOfKey;
  SmallVector<size_t> classOf;
  for (size_t i = first; i < last; ++i)
    classOf.push_back(
        classOfKey.try_emplace(sizingKey(plans[i], minPes[i], i), classOfKey.size()).first->second);
  std::vector<llvm::DenseMap<int64_t, double>> known(classOfKey.size());
  auto cyclesAt = [&](size_t i, int64_t budget) {
    auto [it, fresh] = known[classOf[i - first]].try_emplace(budget, 0.0);
    if (fresh) {
      KernelPlan &p = plans[i];
      p.h = 1, p.w = budget;
      p.size(p);
      it->second = p.cycles(p);
    }
    return it->second;
  };
  // The smallest budget in [minPes, most] whose shape reaches T (or `most`).
  auto budgetFor = [&](size_t i, double T) {
    int64_t lo = std::min(minPes[i], most), hi = most;
    if (cyclesAt(i, hi) > T)
      return hi;
    // Few PEs take shapes that jump (a row more or less of tiles), so their
    // cycles need not fall as the budget grows: scanned one by one.
    for (; lo <= std::min<int64_t>(hi, kScannedBudget); ++lo)
      if (cyclesAt(i, lo) <= T)
        return lo;
    while (lo < hi) {
      int64_t mid = lo + (hi - lo) / 2;
      if (cyclesAt(i, mid) <= T)
        hi = mid;
      else
        lo = mid + 1;
    }
    return lo;
  };
  auto fits = [&](double T, SmallVectorImpl<int64_t> *out) {
    double used = 0;
    for (size_t i = first; i < last; ++i) {
      if (!plans[i].cycles)
        continue;
      int64_t b = budgetFor(i, T);
      used += double(b);
      if (out)
        (*out)[i - first] = b;
    }
    return used <= rest;
  };
  // Every kernel at its smallest budget reaches the slowest of them.
  double lo = 0, hi = 0;
  for (size_t i = first; i < last; ++i)
    if (plans[i].cycles)
      hi = std::max(hi, cyclesAt(i, std::min(minPes[i], most)));
  if (hi == 0 || !fits(hi, nullptr))
    return budgets; // nothing estimated, or no room beside the others
  for (int step = 0; step < 30 && hi - lo > 0.5; ++step) {
    double mid = (lo + hi) / 2;
    (fits(mid, nullptr) ? hi : lo) = mid;
  }
  fits(hi, &budgets);
  return budgets;
}

void LowerToKernelsPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto archOr = wafer::getArch(module);
  if (failed(archOr))
    return signalPassFailure();
  wafer::ArchAttr arch = *archOr;
  CostModel cost{arch};
  // Weight matrices and tables are held at the storage precision.
  std::string st = precision == "fp16" ? "f16" : precision == "bf16" ? "bf16" : "f32";
  if (st == "f32" && precision != "fp32") {
    module.emitError() << "precision '" << precision << "' is not one of fp32, fp16, bf16";
    return signalPassFailure();
  }
  // (Negated so that NaN fails too: it would make every budget search spin.)
  if (!(utilization > 0 && utilization <= 1) || !(defectRate >= 0 && defectRate < 1)) {
    module.emitError() << "--wsc-lower-to-kernels: utilization=" << double(utilization)
                       << " must be in (0, 1] and defect-rate=" << double(defectRate)
                       << " in [0, 1)";
    return signalPassFailure();
  }

  for (auto func : llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
    if (func.isExternal())
      continue;
    // Token geometry from the first [B, T] integer input; a graph without
    // one has no activations for the fused kinds and runs on generic ones.
    auto [batch, tokens] = tokenGeometry(func);
    bool haveTokens = batch > 0;
    if (!haveTokens)
      batch = tokens = 1;
    for (Type t : func.getArgumentTypes())
      if (auto rt = dyn_cast<RankedTensorType>(t); !rt || !rt.hasStaticShape()) {
        func.emitError("input of type ") << t << " has no static shape; bind it with "
                                            "--input-shape NAME=DxD...";
        return signalPassFailure();
      }
    OpBuilder b(func.getContext());
    // Plans, in program order; `produced` maps a wsgraph activation to the
    // plan that streams it.
    std::vector<KernelPlan> plans;
    llvm::DenseMap<Value, int> produced;
    llvm::DenseSet<Operation *> absorbed;
    llvm::DenseSet<Operation *> deferred; // ops planned when a kernel needs them
    bool failedLowering = false;
    auto fail = [&](Operation *op, const Twine &msg) {
      op->emitError() << msg;
      failedLowering = true;
    };
    // Generic kernels: one per result of an op that no fused kind takes.
    std::function<bool(Value)> ensureProduced;
    auto planGenericFor = [&](Operation *op) -> bool {
      if (!hasGenericKernel(op)) {
        fail(op, "'" + op->getName().getStringRef() +
                     "' is not supported by wsc-lower-to-kernels (no kernel implements it)");
        return false;
      }
      for (Value v : op->getOperands()) {
        auto t = dyn_cast<RankedTensorType>(v.getType());
        if (!t || !t.hasStaticShape() || t.getNumElements() == 0) {
          fail(op, "operand of type " + llvm::formatv("{0}", v.getType()).str() +
                       " is not a static non-empty tensor; the generic kernel needs one");
          return false;
        }
        if (!isStatic(v) && !isa<BlockArgument>(v) && !ensureProduced(v))
          return false;
      }
      for (OpResult r : op->getResults()) {
        if (r.use_empty() && op->getNumResults() > 1)
          continue;
        auto t = cast<RankedTensorType>(r.getType());
        if (!t.hasStaticShape() || t.getNumElements() == 0) {
          fail(op, "result is not a static non-empty tensor; the generic kernel needs one");
          return false;
        }
        std::string name = op->getName().stripDialect().str();
        if (op->getNumResults() > 1)
          name += "." + std::to_string(r.getResultNumber());
        // Too large for one PE: chunks of rows, each passing the ones
        // before it on (a key value stands for a chunk's stream).
        auto chunks = chunkRows(op, r.getResultNumber(), arch.getSramBytes() / 4);
        Value previous;
        for (auto [c, rows] : llvm::enumerate(chunks)) {
          bool last = c + 1 == chunks.size();
          KernelPlan plan = planGeneric(
              op, r.getResultNumber(), chunks.size() > 1 ? name + ".c" + std::to_string(c) : name);
          plan.rowLo = rows.first, plan.rowHi = chunks.size() > 1 ? rows.second : 0;
          if (previous) {
            plan.inputs.push_back(previous);
            plan.chained = true;
          }
          if (!last) {
            OpBuilder keys(op);
            plan.partialKey = wg::ConstantOp::create(
                keys, op->getLoc(), DenseIntElementsAttr::get(
                    RankedTensorType::get({1}, keys.getI32Type()), int32_t(c)));
            previous = plan.partialKey;
          }
          plan.storage = "f32";
          plan.maxBlocks = maxBlocks;
          plan.work /= double(chunks.size());
          if (last)
            produced[r] = plans.size();
          plans.push_back(std::move(plan));
        }
      }
      return true;
    };
    // A value some kernel must stream: a deferred op (one no fused kind
    // took) becomes a generic kernel when first needed.
    ensureProduced = [&](Value v) -> bool {
      if (produced.count(v))
        return true;
      Operation *def = v.getDefiningOp();
      if (def && deferred.contains(def) && !absorbed.count(def) && !failedLowering) {
        absorbed.insert(def);
        if (auto rotary = dyn_cast<wg::RotaryOp>(def)) {
          // No attention took it whole: its elementwise and movement ops.
          Operation *next = def->getNextNode();
          OpBuilder after(next);
          Value same = rotary.decompose(after);
          for (Operation *op = def->getNextNode(); op != next; op = op->getNextNode())
            deferred.insert(op);
          // Users see the decomposition's stream (kernels find their inputs'
          // producers by value).
          v.replaceAllUsesWith(same);
          return ensureProduced(same);
        }
        return planGenericFor(def);
      }
      if (!failedLowering && def)
        fail(def, "'" + def->getName().getStringRef() + "' produces no stream for its users");
      return false;
    };
    PlanContext ctx{batch, tokens, haveTokens, arch, cost, st, plans, produced, absorbed};
    ctx.generate = func->hasAttr("wsgraph.generate");
    int residuals = 0;
    ctx.streamOf = ensureProduced;
    for (Operation &opRef : func.getBody().front()) {
      Operation *op = &opRef;
      if (absorbed.count(op) || isa<wg::WeightOp, wg::ConstantOp, func::ReturnOp>(op))
        continue;
      // Head split and merge around attention are claimed when the attention
      // op is reached; what no attention takes is planned when needed.
      if (isa<wg::SplitOp, wg::ReshapeOp, wg::TransposeOp, wg::SliceOp, wg::RotaryOp>(op)) {
        deferred.insert(op);
        continue;
      }
      KernelPlan plan;
      plan.anchor = op;
      plan.blocked = !weightStreaming;
      Planned planned = Planned::NotThisKind;
      for (const KernelKind *kind : fusedKinds())
        if ((planned = kind->plan(op, ctx, plan)) != Planned::NotThisKind)
          break;
      if (planned == Planned::Failed)
        continue;
      if (planned == Planned::NotThisKind) {
        // A generic kernel, made when a kernel or a result needs its value:
        // an op whose users fused kinds absorb makes none.
        deferred.insert(op);
        continue;
      }
      // A block ends with its second residual add (after the attention's
      // projection, then after the MLP's), whatever the MLP's form; with a
      // parallel residual (NeoX), the MLP's projection adds the attention's
      // and an add kernel the block's input.
      bool residualAdd = plan.kind == "add" || (plan.kind == "linear" && plan.inputs.size() > 1 &&
                                                !isStatic(plan.inputs[1]));
      if (residualAdd && ++residuals % 2 == 0)
        ++ctx.layer;
      plan.storage = st;
      plan.maxBlocks = maxBlocks;
      plan.tokenAtATime = ctx.generate;
      Value result = plan.anchor->getResult(0);
      produced[result] = plans.size();
      plans.push_back(std::move(plan));
    }
    // What the function returns, from ops no kernel has taken yet.
    // (The next token an LM head picks is its second result.)
    for (Value v : func.getBody().front().getTerminator()->getOperands())
      if (!failedLowering && !isStatic(v) && !isa<BlockArgument>(v) &&
          !(v.getDefiningOp<wg::ArgMaxOp>() && absorbed.count(v.getDefiningOp())))
        ensureProduced(v);
    // A generating program hands each token on before the next comes back:
    // a generic kernel, which holds the whole sequence, would wait for ever.
    if (ctx.generate)
      for (const KernelPlan &p : plans)
        if (p.kind == "generic") {
          fail(p.anchor, "a generating program needs kernels that take one token at a time; '" +
                             p.anchor->getName().getStringRef() +
                             "' runs on a generic kernel, which takes the whole sequence");
          break;
        }
    if (failedLowering)
      return signalPassFailure();
    if (plans.empty()) { // the results are inputs or constants: output kernels only
      func->setAttr("wskernel.tokens", OpBuilder(func).getI64IntegerAttr(batch * tokens));
      if (failed(buildKernels(func, plans, batch, tokens, cost)))
        return signalPassFailure();
      continue;
    }
    int64_t layers = 0;
    if (weightStreaming) {
      if (wafers != "auto" && wafers != "1") {
        func.emitError() << "mode=weight-streaming runs on one wafer, but wafers=" << wafers;
        return signalPassFailure();
      }
      if (failed(foldLayerPlans(func, plans, layers)))
        return signalPassFailure();
      if (residentLayers)
        blockFoldedStreams(plans);
    }

    // With dead PEs about, a rectangle of area A holds A * rate of them on
    // average; keep that well under one so placement finds room.
    int64_t maxPes = defectRate > 0 ? std::max<int64_t>(1, int64_t(0.3 / defectRate))
                                    : std::numeric_limits<int64_t>::max();
    // Partition into wafers, then size each stage's kernels within its wafer.
    double capacity = utilization * double(arch.getWidth()) * double(arch.getHeight());
    if (!weightStreaming)
      splitWideHostLinears(plans, capacity, batch, tokens, arch);
    if (defectRate > 0 && !weightStreaming &&
        failed(splitForDefects(plans, maxPes, defectRate, batch, tokens, arch)))
      return signalPassFailure();
    // Before sizing: where q and k are turned changes both kernels' cycles.
    turnInProducers(plans);

    SmallVector<int64_t> minPes;
    for (auto &p : plans) {
      if (maxRows > 0)
        p.maxH = maxRows;
      if (p.kind == "attention" && attentionQueries > 0 &&
          p.attention.group % attentionQueries == 0)
        p.attention.queries = attentionQueries, p.attention.queriesFixed = true;
      p.h = 1, p.w = 1;
      p.size(p);
      minPes.push_back(p.h * p.w);
      if (double(minPes.back()) > capacity) {
        p.anchor->emitError() << "kernel '" << p.name << "' needs at least " << minPes.back()
                              << " PEs to hold its weights, more than one wafer offers ("
                              << int64_t(capacity) << ")"
                              << (weightStreaming ? "" : "; use mode=weight-streaming");
        return signalPassFailure();
      }
    }
    auto stages = partitionStages(plans, minPes, capacity, weightStreaming ? StringRef("1") : StringRef(wafers));
    if (failed(stages)) {
      if (weightStreaming && residentLayers)
        func.emitError() << "mode=folded: one transformer block holding every layer's weights, "
                         << "with the embedding and the head, does not fit a wafer of arch '"
                         << arch.getName() << "'";
      else if (weightStreaming)
        func.emitError() << "mode=weight-streaming: one transformer block with the embedding "
                         << "and the head does not fit a wafer of arch '" << arch.getName() << "'";
      else
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
    for (auto [stage, range] : llvm::enumerate(*stages)) {
      SmallVector<int64_t> budgets =
          balanceStage(plans, minPes, range.first, range.second, capacity, maxPes);
      // (Weight streaming's pace is its loads, which more PEs only pad.)
      if (plans[range.first].tokenAtATime && (!weightStreaming || residentLayers))
        spendOnLatency(plans, minPes, range.first, range.second, capacity, maxPes, tokens, arch,
                       budgets);
      for (size_t i = range.first; i < range.second; ++i) {
        KernelPlan &p = plans[i];
        p.stage = stage;
        p.h = 1, p.w = budgets[i - range.first];
        p.size(p);
      }
    }
    orderSharedHeads(plans, arch.getHeight());
    if (residentLayers)
      matchFedBackBlocks(plans, arch, capacity);
    // Attention's producer cuts blocks of what one attention column takes
    // of a head, now that the columns per head are chosen.
    for (KernelPlan &attention : plans) {
      // One stream split in thirds (GPT-2's qkv) or in per-head thirds
      // (NeoX's) is interleaved.
      const AttentionLayout &in = attention.attention;
      int64_t d = in.d, c = attention.heads * d;
      bool thirds = in.k.base == c && in.v.base == 2 * c && in.q.stride == d &&
                    in.k.stride == d && in.v.stride == d;
      bool perHead = in.k.base == d && in.v.base == 2 * d && in.q.stride == 3 * d &&
                     in.k.stride == 3 * d && in.v.stride == 3 * d;
      if (attention.kind != "attention" || attention.heads <= 0 || in.group != 1 ||
          in.rotary >= 0 || in.q.input || in.k.input || in.v.input || in.q.base ||
          !(thirds || perHead))
        continue;
      // (Plans were split around defects since `produced` was filled.)
      auto from = llvm::find_if(
          plans, [&](const KernelPlan &q) { return q.streamed() == attention.inputs[0]; });
      if (from == plans.end())
        continue;
      KernelPlan &q = *from;
      int64_t ds = d / (attention.w / attention.heads); // one attention column's share
      if (q.turns && ds % 2)
        continue; // the shares would split its rotary pairs
      // Kept only when the aligned shape is no slower. (Blocks of whole
      // heads are not asked for: their q, k and v blocks cover the same
      // attention columns, and three 128-word streams on every link there
      // bound GPT-2-small at 438 cycles per token; see docs/cost-model.md.)
      KernelPlan before = q;
      q.align = ds;
      q.h = 1, q.w = before.h * before.w;
      q.size(q);
      if (q.cycles && q.cycles(q) > before.cycles(before))
        q = std::move(before);
      // A whole linear (not a piece, not weight streaming) interleaves its
      // columns by attention column: each column's q, k and v leave side by
      // side (in order they come from three thirds of the producer and
      // cross on their way).
      if (isWholeLinear(q)) {
        if (thirds)
          q.colInterleave = {3, ds};
        else
          interleaveHeadByColumn(q, d, ds);
        attention.qkvUnit = ds;
      }
    }
    // Tokens per run, for throughput figures downstream.
    func->setAttr("wskernel.tokens", OpBuilder(func).getI64IntegerAttr(batch * tokens));
    if (maxBlocks > 0) // resizing must cut the same blocks
      func->setAttr(kMaxBlocksAttr, OpBuilder(func).getI64IntegerAttr(maxBlocks));
    if (layers)
      func->setAttr(wk::kStreamedLayersAttr, OpBuilder(func).getI64IntegerAttr(layers));
    if (layers && residentLayers)
      func->setAttr(wk::kResidentLayersAttr, UnitAttr::get(func.getContext()));
    if (failed(buildKernels(func, plans, batch, tokens, cost)))
      return signalPassFailure();
  }
}

namespace {

LogicalResult buildKernels(func::FuncOp func, std::vector<KernelPlan> &plans, int64_t batch,
                           int64_t tokens, const CostModel &cost) {
  MLIRContext *ctx = func.getContext();
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  OpBuilder b(ret);
  Type f32 = b.getF32Type();
  // Each streamed value: the kernel results that carry its blocks.
  llvm::DenseMap<Value, SmallVector<Value>> streams;
  llvm::StringMap<int> names;
  auto streamType = [&](Value v) { return wk::StreamType::get(ctx, streamWords(v), f32); };
  auto uniqueName = [&](StringRef name) {
    int n = names[name]++;
    return n == 0 ? name.str() : (name + "_" + Twine(n + 1)).str();
  };
  Value previousHostPiece;
  auto emit = [&](KernelPlan &p, TypeRange resultTypes) -> FailureOr<SmallVector<Value>> {
    SmallVector<Value> operands;
    for (Value in : p.inputs) {
      if (auto it = streams.find(in); it != streams.end())
        llvm::append_range(operands, it->second);
      else
        operands.push_back(in);
    }
    llvm::append_range(operands, p.laterWeights);
    // A column piece writes into the previous piece's host result.
    int64_t writesInto = -1;
    if (p.writesIntoPrevious) {
      writesInto = int64_t(operands.size());
      operands.push_back(previousHostPiece);
    }
    auto kernel = wk::KernelOp::create(
        b, p.anchor->getLoc(), resultTypes, b.getStringAttr(uniqueName(p.name)),
        b.getStringAttr(p.kind), b.getDenseI64ArrayAttr({p.h, p.w}), b.getI64IntegerAttr(0),
        b.getF64FloatAttr(0), b.getDictionaryAttr({}), /*feedback=*/nullptr, operands);
    if (writesInto >= 0)
      kernel->setAttr(wk::kWritesIntoAttr, b.getI64IntegerAttr(writesInto));
    SmallVector<int64_t> blocks;
    int64_t bytes = writeKernel(kernel, p, batch, tokens, cost, &blocks);
    if (bytes < 0)
      return failure();
    // The sizers estimate code bytes; when the written body (with its
    // layer loop, say) is a little over, a bigger grid may still fit.
    for (int grow = 0; grow < 8 && bytes > cost.arch.getSramBytes() && p.size; ++grow) {
      int64_t h = p.h, w = p.w;
      p.w = (p.h * p.w) * 5 / 4 + 1, p.h = 1;
      p.size(p);
      if (p.h * p.w <= h * w) {
        p.h = h, p.w = w;
        break;
      }
      bytes = writeKernel(kernel, p, batch, tokens, cost, &blocks);
    }
    // A blocked result is one stream per block: the kernel again with
    // those results, and the body moved over.
    if (blocks.size() > 1) {
      SmallVector<Type> types;
      for (int64_t size : blocks)
        types.push_back(wk::StreamType::get(ctx, size, b.getF32Type()));
      auto blocked = wk::KernelOp::create(
          b, kernel.getLoc(), types, kernel.getNameAttr(), kernel.getKindAttr(),
          kernel.getGridAttr(), kernel.getSramBytesPerPeAttr(), kernel.getCyclesPerTokenAttr(),
          kernel.getChannelsAttr(), kernel.getFeedbackAttr(), kernel.getInputs());
      blocked->setDiscardableAttrs(kernel->getDiscardableAttrDictionary());
      blocked.getBody().takeBody(kernel.getBody());
      kernel.erase();
      kernel = blocked;
    }
    if (bytes > cost.arch.getSramBytes())
      return kernel.emitError("kernel '")
             << kernel.getName() << "' (" << p.kind << " on " << p.h << "x" << p.w
             << " PEs) needs " << bytes << " bytes of SRAM per PE, but a PE of arch '"
             << cost.arch.getName() << "' has " << cost.arch.getSramBytes()
             << (p.layers ? "; one transformer block on one wafer cannot hold what this kernel "
                            "keeps for every layer (its tiles when folded, its keys and values "
                            "when generating)"
                          : "; a layer this large needs more wafers or weight streaming (wafers=N "
                            "or mode=weight-streaming)");
    return SmallVector<Value>(kernel.getResults());
  };
  // What comes back: to the block's kernels, the block's output (weight
  // streaming); to the others, the next token (generation).
  std::string blockFeeder, tokenFeeder;
  for (KernelPlan &p : plans)
    if (p.feedsBack)
      (p.layers ? blockFeeder : tokenFeeder) = p.name; // names of block kernels are unique
  for (KernelPlan &p : plans) {
    Value result = p.anchor->getResult(p.result);
    SmallVector<Type, 2> types = {p.hostResult ? result.getType() : Type(streamType(result))};
    // An LM head that picks the next token returns it too.
    wg::ArgMaxOp next;
    if (p.picksNext)
      for (Operation *user : result.getUsers())
        if ((next = dyn_cast<wg::ArgMaxOp>(user)))
          break;
    if (next)
      types.push_back(next.getType());
    auto out = emit(p, types);
    if (failed(out))
      return failure();
    if (next)
      next.getResult().replaceUsesWithIf((*out)[1], [](OpOperand &use) {
        return isa<func::ReturnOp>(use.getOwner());
      });
    if (!p.fedBack.empty()) {
      auto kernel = out->front().getDefiningOp<wk::KernelOp>();
      SmallVector<LogicalInput> ins = logicalInputs(kernel);
      SmallVector<NamedAttribute> fb;
      for (unsigned j : p.fedBack)
        for (const std::string &port : ins[j].ports()) // each block comes back
          fb.push_back(b.getNamedAttr("fb" + port.substr(2),
                                      b.getStringAttr(p.layers ? blockFeeder : tokenFeeder)));
      kernel.setFeedbackAttr(b.getDictionaryAttr(fb));
    }
    if (p.hostResult) {
      // The function returns the last column piece's result.
      Value returned = p.writesIntoPrevious ? previousHostPiece : result;
      returned.replaceUsesWithIf(out->front(),
                                 [](OpOperand &use) { return isa<func::ReturnOp>(use.getOwner()); });
      previousHostPiece = out->front();
    }
    else
      streams[p.streamed()] = *out;
  }
  // The block's output comes back in the blocks its stand-in sent.
  if (auto [feeder, standIn] = fedBackPair(plans); feeder && feeder->blocked) {
    auto sizes = [&](const KernelPlan *p) {
      return llvm::to_vector(llvm::map_range(streams[p->streamed()], [](Value v) {
        return cast<wk::StreamType>(v.getType()).getSize();
      }));
    };
    if (sizes(feeder) != sizes(standIn))
      return func.emitError("kernel '")
             << feeder->name << "' feeds back other blocks than kernel '" << standIn->name
             << "' sends in layer 0, on the same ports";
  }
  // Host outputs: a one-PE kernel per returned activation.
  for (OpOperand &operand : ret->getOpOperands()) {
    Value v = operand.get();
    if (v.getDefiningOp<wk::KernelOp>())
      continue;
    // A result that is an input or a constant is held by its output kernel.
    bool held = isStatic(v) || isa<BlockArgument>(v);
    if (!streams.count(v) && !held)
      return ret.emitError("result ") << operand.getOperandNumber()
                                      << " is not computed by any kernel";
    KernelPlan sink;
    sink.name = "output";
    sink.kind = "output";
    sink.inputs = {v};
    sink.anchor = ret;
    sink.stage = plans.empty() ? 0 : plans.back().stage;
    // A returned stream too large for one PE is kept by a column of PEs.
    auto type = cast<ShapedType>(v.getType());
    int64_t rows = type.getNumElements() / streamWords(v);
    int64_t budget = cost.arch.getSramBytes() * 4 / 5;
    // Rows too wide for one PE (a generating program's logits) are kept by
    // a row of PEs, each a slice of every row.
    int64_t words = streamWords(v);
    if (streams.count(v) && 4 * type.getNumElements() > budget)
      sink.h = std::min(rows, ceilDiv(4 * type.getNumElements(), budget));
    if (streams.count(v) && sink.h == rows && 4 * words > budget)
      sink.h = 1, sink.w = std::min(words, ceilDiv(4 * type.getNumElements(), budget));
    auto out = emit(sink, TypeRange{v.getType()});
    if (failed(out))
      return failure();
    operand.set(out->front());
  }
  // Drop the wsgraph ops the kernels replaced.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(func.getBody().front())))
    if (op.getDialect() && isa<wg::WsgraphDialect>(op.getDialect()) && op.use_empty())
      op.erase();
  return success();
}

} // namespace
