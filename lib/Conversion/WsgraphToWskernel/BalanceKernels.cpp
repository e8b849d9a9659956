//===- BalanceKernels.cpp - kernels' wafers and PE budgets ----------------===//
//
// Before kernels are built: which wafer each planned kernel goes to
// (contiguous stages), and how many PEs each takes within its wafer, by
// throughput (every kernel's cycles per token as even as the PEs allow) or,
// for a generating program, by one token's path through all of them.
//
//===----------------------------------------------------------------------===//
#include "KernelBody.h"
#include "Kinds/Kind.h"
#include "wsc/Analysis/CostModel.h"
#include "wsc/Analysis/WeightData.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/bit.h"

#include <cmath>

using namespace mlir;
using namespace wsc;
using namespace wsc::lowering;

FailureOr<SmallVector<std::pair<size_t, size_t>>>
wsc::lowering::partitionStages(const std::vector<KernelPlan> &plans, ArrayRef<int64_t> minPes,
                               double capacity, StringRef wafers) {
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

/// Budgets up to this many PEs are searched one by one (balanceStage).
static constexpr int64_t kScannedBudget = 64;

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
      p.blocked, p.align, p.hostResult, p.rowLo, p.rowHi, p.chained, bits(p.epsilon), p.geluTanh, p.relu,
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
  // The finishing stage a token alone waits for (KernelPlan::alone) is
  // left out: it shrinks as a linear widens, but the wider rows lengthen
  // the hand-overs more than the estimate counts, and budgets drawn by it
  // made the emulated decode slower.
  auto alone = std::exchange(p.alone, nullptr);
  auto restore = llvm::make_scope_exit([&] { p.alone = alone; });
  for (int64_t b = least;; b = std::min(most, std::max(b + 1, b * 27 / 25))) {
    p.h = 1, p.w = b;
    p.size(p);
    double chain = kind ? kind->chainCycles(p, n, tokens, cost) : 0.0;
    curve.push_back({b, passes * (p.cycles(p) + chain)});
    if (b >= most)
      return curve;
  }
}

// A token passes every kernel in turn, so the PEs go where they shorten
// its path most: a price per PE is bisected until the budgets that minimise
// latency plus price fit the wafer.
void wsc::lowering::spendOnLatency(std::vector<KernelPlan> &plans, ArrayRef<int64_t> minPes,
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

SmallVector<int64_t> wsc::lowering::balanceStage(std::vector<KernelPlan> &plans,
                                                 ArrayRef<int64_t> minPes, size_t first,
                                                 size_t last, double capacity, int64_t maxPes) {
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
