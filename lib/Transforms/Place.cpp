//===- Place.cpp - kernel rectangles on the wafer, around defects ---------===//
//
// The pass; each wafer's packings and moves are WaferPlacer's (Placer.h,
// WaferPlacer.cpp). Per wafer, deterministic for a seed:
//  1. Kernels wider or taller than half the wafer go first, against an edge
//     (top/left when early in the pipeline, bottom/right when late).
//  2. A band packer lays the others out in pipeline (program) order in a
//     serpentine of bands: east along the first band, west along the next.
//     Inside a band a skyline lets short kernels stack; each kernel takes
//     the spot nearest (stream-weighted) to the kernels it talks to, never
//     behind the previous kernel of the band. A band is as tall as the
//     tallest kernel of the next band-width of kernels, or a minimum height.
//     When no band is left, a full scan looks for any hole.
//  3. The packer runs for both orientations (row bands, and column bands on
//     the transposed wafer) and several minimum band heights; the packing
//     that places every kernel at the lowest stream-weighted distance wins.
//     When none places them all, a dense packing (each kernel at its lowest
//     legal spot), then free-rectangle packings (MaxRects: largest first,
//     into the free rectangle it leaves least of) are the last resorts
//     before the lowering reshapes a kernel.
//  4. A fixed budget of random moves (toward a neighbour, small shifts,
//     swaps) keeps every legal change that lowers the stream-weighted
//     distance.
// Legal means: inside the grid, disjoint, and no dead PE or dead link
// inside the rectangle (channels need every internal link). The distance of
// a stream is from its producer's last PE to the nearest PE of the consumer.
//
//===----------------------------------------------------------------------===//
#include "wsc/Arch/Arch.h"
#include "wsc/Transforms/Passes.h"

#include "Placer.h"

#include "mlir/IR/Threading.h"

#include <map>
#include <optional>

namespace wsc {
#define GEN_PASS_DEF_WSCPLACE
#include "wsc/Transforms/Passes.h.inc"
} // namespace wsc

using namespace mlir;
using namespace wsc;

namespace {

using namespace wsc::place;
using wskernel::resizeKernel;

struct PlacePass : wsc::impl::WscPlaceBase<PlacePass> {
  using WscPlaceBase::WscPlaceBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto arch = wafer::getArch(module);
    if (failed(arch))
      return signalPassFailure();
    auto graph = KernelGraph::build(module, *arch);
    if (failed(graph))
      return signalPassFailure();
    int64_t W = arch->getWidth(), H = arch->getHeight();
    wafer::DefectsAttr defectsAttr = wafer::getDefects(module);

    // Kernels per wafer, in program order, and their local indices.
    std::map<int64_t, std::vector<int>> byWafer;
    std::vector<int> local(graph->kernels.size());
    for (auto [i, k] : llvm::enumerate(graph->kernels)) {
      local[i] = byWafer[k.wafer].size();
      byWafer[k.wafer].push_back(i);
    }
    // Wafers are placed independently, in parallel; each writes only its
    // own kernels, so the result does not depend on the threads.
    std::vector<std::pair<int64_t, std::vector<int>>> wafers(byWafer.begin(), byWafer.end());
    ParallelDiagnosticHandler diagnostics(&getContext());
    LogicalResult placed =
        failableParallelForEachN(&getContext(), 0, wafers.size(), [&](size_t i) {
          diagnostics.setOrderIDForThread(i);
          LogicalResult ok = placeWafer(wafers[i].first, wafers[i].second, *graph, local, W, H,
                                        defectsAttr);
          diagnostics.eraseOrderIDForThread();
          return ok;
        });
    if (failed(placed))
      return signalPassFailure();
  }

  LogicalResult placeWafer(int64_t waferIndex, const std::vector<int> &members,
                           KernelGraph &graph, const std::vector<int> &local, int64_t W,
                           int64_t H, wafer::DefectsAttr defectsAttr) {
    std::vector<Edge> edges;
    for (const GraphStream &s : graph.streams) {
      if (graph.kernels[s.producer].wafer != waferIndex)
        continue;
      int last = -1;
      for (auto [c, operand] : s.consumers) {
        if (c == last || graph.kernels[c].wafer != waferIndex || c == s.producer)
          continue;
        last = c;
        edges.push_back({local[s.producer], local[c], double(std::max<int64_t>(1, s.size))});
      }
    }
    wafer::DefectGrid defects = wafer::DefectGrid::forWafer(defectsAttr, W, H, waferIndex);
    auto refresh = [&](GraphKernel &k) { k.h = k.op.getHeight(), k.w = k.op.getWidth(); };
    // Without reshape-slower, no new shape may be slower than the wafer's
    // slowest kernel as lowered: the pipeline keeps its pace.
    double maxCycles = 0;
    if (!reshapeSlower)
      for (int k : members)
        maxCycles = std::max(maxCycles, graph.kernels[k].op.getCyclesPerToken().convertToDouble());
    // A kernel larger than the wafer: the lowering's shape within it.
    for (int k : members) {
      GraphKernel &kernel = graph.kernels[k];
      if (kernel.x < 0 && (kernel.h > H || kernel.w > W) &&
          succeeded(resizeKernel(kernel.op, kernel.h * kernel.w, H, W, maxCycles)))
        refresh(kernel);
    }
    // Pack; when no packing holds every kernel, the lowering reshapes
    // one (negotiate) and packing starts again.
    int64_t rounds = 0,
            maxRounds = maxReshapes >= 0 ? int64_t(maxReshapes) : 4 * int64_t(members.size()) + 16;
    // The rectangles free of defects and pre-placed kernels: a kernel with
    // no shape inside one of them fails at once, not after every round.
    std::vector<std::pair<int64_t, int64_t>> cleanBoxes;
    DeadCells deadRows(defects, W, H, false), deadCols(defects, W, H, true);
    auto placerFor = [&](bool transposed) {
      return WaferPlacer(waferIndex, transposed ? deadCols : deadRows, graph, members, edges);
    };
    for (;; ++rounds) {
      WaferPlacer rows = placerFor(false);
      if (failed(rows.checkFixed()))
        return failure();
      if (rounds == 0)
        cleanBoxes = rows.freeBoxes();
      // Row bands and column bands, with bands as tall as their kernels
      // need or at least 1/6, 1/4 or 1/3 of the wafer: the cheapest full
      // packing.
      WaferPlacer cols = placerFor(true);
      (void)cols.checkFixed();
      int64_t holeBudget = std::max<int64_t>(8, members.size() / 20);
      std::vector<std::pair<bool, int64_t>> bands; // (column bands, minimum band)
      for (bool transposed : {false, true}) {
        int64_t side = transposed ? W : H;
        for (int64_t minBand : {int64_t(0), side / 6, side / 4, side / 3})
          bands.push_back({transposed, minBand});
      }
      auto [best, bestCost] = cheapest(
          bands.size(), [&](size_t i) { return bands[i].first; },
          [&](size_t i, WaferPlacer &p) { return p.attempt(bands[i].second, holeBudget); },
          placerFor);
      // Last resorts: row bands, with as many hole scans as it takes; else
      // the cheapest dense packing (either orientation, either order).
      if (!best && rows.attempt(0, INT64_MAX))
        best = rows.origins();
      if (!best)
        for (bool tallestFirst : {false, true})
          for (WaferPlacer *p : {&rows, &cols}) {
            if (!p->attemptDense(tallestFirst))
              continue;
            double cost = p->totalCost();
            if (!best || cost < bestCost)
              best = p->origins(), bestCost = cost;
          }
      // Tighter still, when no kernel may be reshaped slower: free-rectangle
      // packings in several orders and fits (GPT-2-small at 0.925 and 0.95
      // of wse3 packs only so); the improvement moves below then pull
      // producers and consumers together. They scatter the pipeline more
      // than bands do: where a reshape is allowed, one reshaped kernel in
      // bands routes better (GPT-2-small at utilization=0.9: kernels at 180
      // against links at 218). (On placers of their own: when they fail
      // too, the negotiation below reads what the last dense packing left.)
      using Order = WaferPlacer::FitOrder;
      using Fit = WaferPlacer::Fit;
      if (!best && !reshapeSlower) {
        std::vector<std::tuple<Order, Fit, bool>> fits;
        for (Order order : {Order::Area, Order::LongSide, Order::Width, Order::Height})
          for (Fit fit : {Fit::ShortSide, Fit::Lowest, Fit::Area})
            for (bool transposed : {false, true})
              fits.push_back({order, fit, transposed});
        std::tie(best, bestCost) = cheapest(
            fits.size(), [&](size_t i) { return std::get<2>(fits[i]); },
            [&](size_t i, WaferPlacer &p) {
              return p.attemptMaxRects(std::get<0>(fits[i]), std::get<1>(fits[i]));
            },
            placerFor);
      }
      if (best) {
        rows.adopt(*best);
        rows.improve(seed, moves < 0
                               ? std::min<int64_t>(200 * int64_t(members.size()), 400000)
                               : int64_t(moves));
        rows.write();
        break;
      }
      int resized =
          rounds < maxRounds ? negotiate(rows, graph, members, cleanBoxes, W, H, maxCycles) : -1;
      if (resized < 0) {
        rows.placeError(rounds >= maxRounds && maxReshapes >= 0 ? rounds : -1, maxCycles);
        return failure();
      }
      refresh(graph.kernels[resized]);
    }
    return success();
  }

  using Origins = std::vector<std::pair<int64_t, int64_t>>;
  /// Packs with each of `n` ways (`transposed(i)`: on column bands), each
  /// on a placer of its own and in parallel; the cheapest full packing and
  /// its cost, the earliest on a tie, so the threads change nothing.
  template <typename Transposed, typename Attempt, typename PlacerFor>
  std::pair<std::optional<Origins>, double> cheapest(size_t n, Transposed transposed,
                                                     Attempt attempt, PlacerFor placerFor) {
    std::vector<std::optional<std::pair<double, Origins>>> packed(n);
    parallelFor(&getContext(), 0, n, [&](size_t i) {
      WaferPlacer p = placerFor(transposed(i));
      (void)p.checkFixed(); // checked on the row placer already
      if (attempt(i, p))
        packed[i] = std::make_pair(p.totalCost(), p.origins());
    });
    std::optional<Origins> best;
    double bestCost = 0;
    for (auto &result : packed)
      if (result && (!best || result->first < bestCost))
        best = std::move(result->second), bestCost = result->first;
    return {best, bestCost};
  }

  /// Asks the lowering for room after `rows` failed to place a kernel:
  /// first a shape of that kernel inside one of the free rectangles left,
  /// largest first; else a smaller shape (3/4 of the PEs) of the largest
  /// kernel of the wafer that has one. Returns the kernel it reshaped (a
  /// global index), or -1, also when the kernel fits none of `cleanBoxes`
  /// (the empty wafer's) in any shape: no reshaping of others can help.
  int negotiate(WaferPlacer &rows, KernelGraph &graph, const std::vector<int> &members,
                const std::vector<std::pair<int64_t, int64_t>> &cleanBoxes, int64_t W,
                int64_t H, double maxCycles) {
    int stuck = members[rows.failed()];
    GraphKernel &kernel = graph.kernels[stuck];
    auto fitsSome = [&](const std::vector<std::pair<int64_t, int64_t>> &boxes) {
      return llvm::any_of(boxes, [&](auto box) {
        return box.first >= kernel.h && box.second >= kernel.w;
      });
    };
    // A shape of the stuck kernel inside one of the first 16 boxes.
    auto intoSomeBox = [&](const std::vector<std::pair<int64_t, int64_t>> &boxes) {
      for (auto [bh, bw] : ArrayRef(boxes).take_front(16))
        if (succeeded(resizeKernel(kernel.op, std::min(kernel.h * kernel.w, bh * bw), bh, bw,
                                   maxCycles)))
          return true;
      return false;
    };
    if (!fitsSome(cleanBoxes))
      return intoSomeBox(cleanBoxes) ? stuck : -1;
    if (intoSomeBox(rows.freeBoxes()))
      return stuck;
    std::vector<int> bySize;
    for (int k : members)
      if (graph.kernels[k].x < 0)
        bySize.push_back(k);
    llvm::stable_sort(bySize, [&](int a, int b) {
      return graph.kernels[a].h * graph.kernels[a].w > graph.kernels[b].h * graph.kernels[b].w;
    });
    for (int k : bySize) {
      GraphKernel &big = graph.kernels[k];
      if (succeeded(resizeKernel(big.op, big.h * big.w * 3 / 4, H, W, maxCycles)))
        return k;
    }
    return -1;
  }
};

} // namespace
