//===- LowerPlaceRoute.cpp - lower, place and route, with fewer blocks on failure ===//
//
// How many streams a kernel's result may leave on is a trade: each block
// cuts the time its gather takes, but the blocks converge on the readers,
// whose routers have few colors, and whether they fit shows only once
// kernels are placed and routed (not monotonically: on wse3, GPT-3 13B
// routes with 20 blocks and not with 16). So the pipeline tries, and lowers
// again with fewer blocks when any stage fails.
//
// Likewise for the share of the wafer's PEs: more PEs make faster kernels,
// but whether they still pack without a kernel reshaped slower, and whether
// the links still carry the streams, shows only once placed and routed. A
// larger share is tried first when asked, and kept only when it succeeds
// without either.
//
//===----------------------------------------------------------------------===//
#include "wsc/Arch/Arch.h"
#include "wsc/Conversion/Passes.h"
#include "wsc/Pipeline/Pipeline.h"
#include "wsc/Support/Progress.h"
#include "wsc/Transforms/Passes.h"

#include "wskernel/WskernelDialect.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Threading.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FormatVariadic.h"

namespace wsc {
#define GEN_PASS_DEF_WSCLOWERPLACEROUTE
#include "wsc/Pipeline/Passes.h.inc"
} // namespace wsc

using namespace mlir;

namespace {
/// A strict try gives up after this many reshapes: the ones that pack take a
/// few (GPT-2-small at 0.8 of wse3: 2), and a share too large for the
/// wafer's packing negotiates on (at 0.85: 13 reshapes, 11 s).
constexpr int64_t kStrictReshapes = 6;
/// Routing rounds of a try that may be retried: GPT-2-small at 0.9 of wse3
/// (linears passing their column sums on async) routes in 11. A strict try
/// goes on for up to kStrictExtraRounds more while few links are over and
/// still improving (the router's extra-rounds): at 0.925 with 24 blocks, 57
/// links are over after 12 rounds, 3 after 24, none after 36.
constexpr int64_t kTrialRoutingRounds = 12;
constexpr int64_t kStrictExtraRounds = 28;

struct LowerPlaceRoutePass : wsc::impl::WscLowerPlaceRouteBase<LowerPlaceRoutePass> {
  using WscLowerPlaceRouteBase::WscLowerPlaceRouteBase;

  /// One try of the search: the lowering's `blocks` result blocks per
  /// kernel on `share` of each wafer's PEs, kernels at most `rows` tall (0:
  /// any). A strict try is on one wafer, reshapes no kernel into one slower
  /// than the slowest as lowered, and routes within `linkBudget` words per
  /// token a link (0: the slowest kernel's cycles). A try that may be
  /// retried routes for kTrialRoutingRounds: routes that fit take a few,
  /// and a try that does not fit should fail fast (GPT-3 XL at T=2048: 72 s
  /// at 40 rounds); the last routes as long as the router's default.
  struct Try {
    int64_t blocks;
    double share;
    bool strict = false;
    int64_t rows = 0;
    int64_t linkBudget = 0;
    bool last = false;
  };

  void addLowering(OpPassManager &pm, const Try &t) const {
    wsc::WscLowerToKernelsOptions lower;
    lower.wafers = t.strict ? std::string("1") : std::string(wafers);
    lower.precision = precision;
    lower.defectRate = defectRate;
    lower.utilization = t.share;
    lower.maxBlocks = t.blocks;
    lower.maxRows = t.rows;
    lower.weightStreaming = weightStreaming;
    lower.residentLayers = residentLayers;
    pm.addPass(wsc::createWscLowerToKernels(lower));
  }

  /// The passes after fusion for try `t`.
  void addStages(OpPassManager &pm, const Try &t) const {
    addPlacement(pm, t);
    addRouting(pm, t);
  }

  /// Lowering and placement for try `t`.
  void addPlacement(OpPassManager &pm, const Try &t) const {
    addLowering(pm, t);
    if (!defects.empty() || defectRate > 0) {
      wsc::WscDefectsOptions map;
      map.file = defects;
      map.rate = defectRate;
      map.seed = seed;
      pm.addPass(wsc::createWscDefects(map));
    }
    wsc::WscPlaceOptions place;
    place.seed = seed;
    if (t.strict)
      place.reshapeSlower = false, place.maxReshapes = kStrictReshapes;
    pm.addPass(wsc::createWscPlace(place));
  }

  /// Routing and its check for try `t`, on a placed module.
  void addRouting(OpPassManager &pm, const Try &t) const {
    wsc::WscRouteOptions route;
    if (!t.last)
      route.maxIterations = kTrialRoutingRounds;
    if (t.strict) {
      route.extraRounds = kStrictExtraRounds;
      route.growBudget = false;
      route.linkBudget = t.linkBudget;
    }
    pm.addPass(wsc::createWscRoute(route));
    pm.addPass(wsc::createWscVerifyRoutes());
  }

  /// What an attempt's kernels came out as: the most results (blocks) of
  /// one, the most cycles per token, the most rows, and a hash of every
  /// kernel's rectangle.
  struct Kernels {
    int64_t most = 0;
    double pace = 0;
    int64_t tallest = 0;
    llvm::hash_code shapes = llvm::hash_value(0);
  };

  /// A strict try the survey found, by its pace.
  struct Strict {
    double pace, share;
    int64_t blocks, rows;
    size_t band; // the cap's position in rowCaps; uncapped after them all
  };
  /// The distinct lowerings of one share: with each cap on rows (0 first:
  /// as tall as they need) and each count of blocks. `lowers` is false when
  /// the share does not lower at all: no smaller share is worth lowering.
  struct ShareSurvey {
    SmallVector<Strict> tries;
    bool lowers = true;
  };
  ShareSurvey survey(double share, ArrayRef<int64_t> rowCaps, ArrayRef<int64_t> counts) {
    ShareSurvey out;
    SmallVector<std::pair<int64_t, llvm::hash_code>> seen; // (blocks, shapes)
    int64_t tallest = 0;                                   // of the kernels as tall as they need
    for (auto [band, rows] : llvm::enumerate(rowCaps)) {
      if (rows > 0 && rows >= tallest)
        continue; // no kernel reaches this cap: the same lowering
      for (size_t i = 0; i < counts.size(); ++i) {
        FailureOr<Kernels> k = lowerCopy({counts[i], share, /*strict=*/true, rows});
        if (failed(k)) {
          // More than a wafer, or no lowering at this share: a smaller
          // share has fewer PEs (GPT-1T: 10 s a share). (Capped rows may
          // not hold a kernel that the full height does.)
          if (rows == 0 && i == 0)
            out.lowers = false;
          break;
        }
        if (rows == 0)
          tallest = std::max(tallest, k->tallest);
        // Fewer blocks would change no kernel: the same lowering (under
        // the usual count, when a block per color changed nothing).
        bool same = i + 1 < counts.size() && k->most <= counts[i + 1];
        if (same && i == 0)
          continue;
        bool again = llvm::is_contained(seen, std::make_pair(counts[i], k->shapes));
        seen.push_back({counts[i], k->shapes});
        if (!again)
          out.tries.push_back({k->pace, share, counts[i], rows, rows > 0 ? band : rowCaps.size()});
        if (same)
          break;
      }
      if (!out.lowers)
        break;
    }
    return out;
  }

  /// A copy of the module through the passes `add` makes (a pass manager of
  /// its own, so copies run side by side); null when a pass fails.
  OwningOpRef<ModuleOp> runOnCopy(llvm::function_ref<void(OpPassManager &)> add,
                                  bool verify = true) {
    OwningOpRef<ModuleOp> copy = getOperation().clone();
    PassManager pm(&getContext());
    pm.enableVerifier(verify);
    add(pm);
    if (failed(pm.run(*copy)))
      return nullptr;
    return copy;
  }

  /// While it lives, errors are dropped (the copies' failures are expected:
  /// a try that does not lower or place is skipped); other diagnostics pass on.
  ScopedDiagnosticHandler dropErrors() {
    return ScopedDiagnosticHandler(&getContext(), [](Diagnostic &d) {
      return success(d.getSeverity() == DiagnosticSeverity::Error);
    });
  }

  /// Lowers a copy of the module for try `t` (thrown away, so unverified):
  /// what its kernels come out as.
  FailureOr<Kernels> lowerCopy(const Try &t) {
    OwningOpRef<ModuleOp> copy =
        runOnCopy([&](OpPassManager &pm) { addLowering(pm, t); }, /*verify=*/false);
    if (!copy)
      return failure();
    return kernelsOf(*copy);
  }

  /// The try as progress shows it.
  static std::string describe(const Try &t) {
    std::string text = llvm::formatv("share {0:F3}, {1} blocks", t.share, t.blocks).str();
    if (t.rows > 0)
      text += llvm::formatv(", rows <= {0}", t.rows).str();
    if (t.linkBudget > 0)
      text += llvm::formatv(", links <= {0}", t.linkBudget).str();
    return text;
  }

  /// Runs `pm` on the module, holding back its errors. On failure the
  /// module is as it was, `errors` has the errors and `out` what the
  /// kernels of the attempt came out as.
  LogicalResult attempt(OpPassManager &pm, SmallVectorImpl<Diagnostic> &errors, Kernels &out) {
    ModuleOp module = getOperation();
    OwningOpRef<ModuleOp> backup = module.clone();
    LogicalResult result = success();
    {
      ScopedDiagnosticHandler hold(&getContext(), [&](Diagnostic &d) {
        if (d.getSeverity() != DiagnosticSeverity::Error)
          return failure(); // not handled here: passes on
        errors.push_back(std::move(d));
        return success();
      });
      result = runPipeline(pm, module);
    }
    if (succeeded(result))
      return success();
    out = kernelsOf(module);
    putBack(backup);
    return result;
  }

  static Kernels kernelsOf(ModuleOp module) {
    Kernels out;
    module.walk([&](wsc::wskernel::KernelOp k) {
      out.most = std::max<int64_t>(out.most, k->getNumResults());
      out.pace = std::max(out.pace, k.getCyclesPerToken().convertToDouble());
      out.tallest = std::max(out.tallest, k.getHeight());
      out.shapes = llvm::hash_combine(out.shapes, k.getHeight(), k.getWidth());
    });
    return out;
  }

  /// Puts the module back as `backup` holds it.
  void putBack(OwningOpRef<ModuleOp> &backup) {
    ModuleOp module = getOperation();
    module.getBodyRegion().getBlocks().clear();
    module.getBodyRegion().takeBody(backup->getBodyRegion());
    module->setAttrs((*backup)->getAttrDictionary());
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::scope_exit searched([] { wsc::progress::setTry(0, 0, ""); });
    // Fractions out of range, NaN included, would make no try fit (and NaN
    // made the tries run for ever).
    auto outside = [&](StringRef name, double value, bool zeroOk) {
      if ((zeroOk ? value >= 0 : value > 0) && value <= 1)
        return false;
      emitError(module.getLoc()) << "--wsc-lower-place-route: " << name << "="
                                 << llvm::formatv("{0}", value) << " is not in "
                                 << (zeroOk ? "[0, 1]" : "(0, 1]");
      return true;
    };
    if (outside("utilization", utilization, true) || outside("defect-rate", defectRate, true) ||
        llvm::any_of(tryUtilization,
                     [&](double share) { return outside("try-utilization", share, false); }))
      return signalPassFailure();
    auto arch = wsc::wafer::getArch(module);
    if (failed(arch))
      return signalPassFailure();
    // By default five sixths of the colors, then half, then a quarter.
    int64_t colors = arch->getColors();
    SmallVector<int64_t> tries(maxBlocks.begin(), maxBlocks.end());
    if (tries.empty())
      tries = {std::max<int64_t>(1, colors * 5 / 6), std::max<int64_t>(1, colors / 2),
               std::max<int64_t>(1, colors / 4)};
    if (weightStreaming) // one stream per result anyway
      tries.resize(1);
    for (int64_t &n : tries)
      n = n > 0 ? n : std::max<int64_t>(1, colors / 2);
    // Strictly first: the larger shares and `utilization`, each with a
    // block per color and every count above. What succeeds runs at its
    // lowering's pace (no kernel reshaped slower, links within it), so the
    // tries go by that pace, fastest first (lowering alone is cheap), and
    // the first success is the best of them; a lenient try with as many
    // blocks on fewer PEs would not beat it.
    if (!weightStreaming && !tryUtilization.empty() && (wafers == "auto" || wafers == "1")) {
      SmallVector<double> shares;
      for (double share : tryUtilization)
        if (share > utilization)
          shares.push_back(share);
      shares.push_back(utilization);
      SmallVector<int64_t> counts = {colors};
      for (int64_t n : tries)
        if (n < counts.back())
          counts.push_back(n);
      // Kernels as tall as they need (rows 0, first: when that does not
      // lower, no smaller share is worth lowering, and it tells which caps
      // some kernel reaches), then at most height / N rows tall for each
      // band count N.
      SmallVector<int64_t> rowCaps = {0};
      for (int64_t n : tryBands)
        if (n > 1 && arch->getHeight() / n > 0)
          rowCaps.push_back(arch->getHeight() / n);
      // The shares are surveyed side by side (each on copies of the
      // module), and taken in order up to the first that does not lower.
      SmallVector<ShareSurvey> surveys(shares.size());
      wsc::progress::setStage("wsc-lower-to-kernels"); // the survey lowers copies
      {
        ScopedDiagnosticHandler drop = dropErrors();
        parallelFor(&getContext(), 0, shares.size(),
                    [&](size_t i) { surveys[i] = survey(shares[i], rowCaps, counts); });
      }
      SmallVector<Strict> order;
      for (ShareSurvey &survey : surveys) {
        order.append(survey.tries);
        if (!survey.lowers)
          break;
      }
      // Fastest first; on a tie, the smaller share, banded first (bands
      // route better than free rectangles: GPT-2-small at 0.95 of wse3
      // packs with kernels of at most 97 rows in bands and routes, as
      // lowered it packs only in free rectangles and does not route), then
      // fewer blocks (fewer streams: GPT-3 1.3B at 0.925 of wse3 routes
      // with 20 in 7 s, and with 24 is still a link over after 40 rounds, 5
      // minutes; GPT-2-small at 0.925 routes with both, in 14 and 36
      // rounds).
      llvm::stable_sort(order, [](const Strict &a, const Strict &b) {
        return std::make_tuple(a.pace, a.share, a.band, a.blocks) <
               std::make_tuple(b.pace, b.share, b.band, b.blocks);
      });
      // A try's links carry at most its pace; when that does not route,
      // up to the next try's pace if slower: within that it still beats
      // every try after it (its bound is the slower of its kernels and its
      // busiest link). Tries of one pace but the last keep their own: a
      // later one may route within it.
      // The budget changes only the routing: a try that does not place is
      // not placed again, and one that does is routed from its placement.
      // Placed two at a time, each on a copy of the module (most tries that
      // fail do not pack: GPT-2-small's first eight), then routed in order.
      std::vector<OwningOpRef<ModuleOp>> placed(order.size());
      for (size_t i = 0; i < order.size(); ++i) {
        const Strict &t = order[i];
        Try strict{t.blocks, t.share, /*strict=*/true, t.rows};
        if (i % 2 == 0) {
          wsc::progress::setTry(i + 1, order.size(), describe(strict));
          wsc::progress::setStage("wsc-place");
          ScopedDiagnosticHandler drop = dropErrors();
          parallelFor(&getContext(), i, std::min(i + 2, order.size()), [&](size_t j) {
            Try t{order[j].blocks, order[j].share, /*strict=*/true, order[j].rows};
            placed[j] = runOnCopy([&](OpPassManager &pm) { addPlacement(pm, t); });
          });
        }
        if (!placed[i])
          continue;
        int64_t relaxed = 0;
        if (i + 1 < order.size() && std::ceil(order[i + 1].pace) > std::ceil(t.pace))
          relaxed = int64_t(std::ceil(order[i + 1].pace));
        OwningOpRef<ModuleOp> unplaced = module.clone();
        putBack(placed[i]);
        SmallVector<Diagnostic> dropped;
        Kernels k;
        for (int64_t budget : {int64_t(0), relaxed}) {
          strict.linkBudget = budget;
          OpPassManager routing(ModuleOp::getOperationName());
          addRouting(routing, strict);
          wsc::progress::setTry(i + 1, order.size(), describe(strict));
          if (succeeded(attempt(routing, dropped, k)))
            return;
          if (!relaxed)
            break;
        }
        putBack(unplaced);
      }
    }
    for (size_t i = 0; i < tries.size(); ++i) {
      bool last = i + 1 == tries.size();
      Try lenient{tries[i], utilization, /*strict=*/false, 0, 0, last};
      OpPassManager pm(ModuleOp::getOperationName());
      addStages(pm, lenient);
      wsc::progress::setTry(i + 1, tries.size(), describe(lenient));
      if (last) {
        if (failed(runPipeline(pm, module)))
          signalPassFailure();
        return;
      }
      // Errors of an attempt that may be retried are held back.
      SmallVector<Diagnostic> errors;
      Kernels k;
      if (succeeded(attempt(pm, errors, k)))
        return;
      // Retry only when the next count changes some kernel's blocks.
      if (k.most <= tries[i + 1]) {
        for (Diagnostic &d : errors)
          getContext().getDiagEngine().emit(std::move(d));
        return signalPassFailure();
      }
    }
  }
};
} // namespace
