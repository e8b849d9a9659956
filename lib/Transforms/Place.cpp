//===- Place.cpp - kernel rectangles on the wafer, around defects ---------===//
//
// Two phases per wafer, both deterministic:
//  1. A skyline packer takes kernels in pipeline (program) order. For each
//     it tries every column, drops the rectangle onto the skyline, lifts it
//     past defects, and keeps the spot with the lowest
//       (bottom row) + (stream-weighted mean distance to placed neighbours).
//     Rows therefore fill in a serpentine. When the skyline is full, a full
//     scan looks for any hole left over.
//  2. A fixed budget of random moves (toward neighbours, small shifts,
//     swaps) keeps every legal change that lowers the stream-weighted
//     distance.
// Legal means: inside the grid, disjoint, and no dead PE or dead link
// inside the rectangle (channels need every internal link).
//
//===----------------------------------------------------------------------===//
#include "wsc/Transforms/Passes.h"

#include "KernelGraph.h"
#include "wafer/Defects.h"

#include <deque>
#include <map>

namespace wsc {
#define GEN_PASS_DEF_WSCPLACE
#include "wsc/Transforms/Passes.h.inc"
} // namespace wsc

using namespace mlir;
using namespace wsc;

namespace {

using wskernel::KernelOp;

struct SplitMix {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, n).
  int64_t below(int64_t n) { return n <= 0 ? 0 : int64_t(next() % uint64_t(n)); }
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }
};

/// 2-D prefix sums over a W x H grid of counts.
struct Prefix {
  int64_t W = 0, H = 0;
  std::vector<int32_t> s;
  template <typename F>
  void build(int64_t width, int64_t height, F value) {
    W = width, H = height;
    s.assign((W + 1) * (H + 1), 0);
    for (int64_t y = 0; y < H; ++y)
      for (int64_t x = 0; x < W; ++x)
        s[(y + 1) * (W + 1) + x + 1] = int32_t(value(x, y)) + s[y * (W + 1) + x + 1] +
                                       s[(y + 1) * (W + 1) + x] - s[y * (W + 1) + x];
  }
  /// Sum over the inclusive rectangle; 0 when empty.
  int64_t sum(int64_t x0, int64_t y0, int64_t x1, int64_t y1) const {
    if (x1 < x0 || y1 < y0)
      return 0;
    return s[(y1 + 1) * (W + 1) + x1 + 1] - s[y0 * (W + 1) + x1 + 1] -
           s[(y1 + 1) * (W + 1) + x0] + s[y0 * (W + 1) + x0];
  }
  /// The largest row r in [y0, y1] whose part [x0, x1] sums non-zero, or -1.
  int64_t lastRow(int64_t x0, int64_t y0, int64_t x1, int64_t y1) const {
    if (sum(x0, y0, x1, y1) == 0)
      return -1;
    int64_t lo = y0, hi = y1; // invariant: sum(x0, lo, x1, y1) > 0
    while (lo < hi) {
      int64_t mid = (lo + hi + 1) / 2;
      if (sum(x0, mid, x1, y1) > 0)
        lo = mid;
      else
        hi = mid - 1;
    }
    return lo;
  }
};

struct Edge {
  int src, dst; // local kernel indices: producer, consumer
  double weight;
};

/// Placement of the kernels of one wafer.
class WaferPlacer {
public:
  WaferPlacer(int64_t wafer, int64_t W, int64_t H, const wafer::DefectGrid &defects,
              KernelGraph &graph, std::vector<int> members, std::vector<Edge> edges)
      : wafer(wafer), W(W), H(H), defects(defects), graph(graph), members(std::move(members)),
        edges(std::move(edges)) {
    n = this->members.size();
    x.resize(n), y.resize(n), h.resize(n), w.resize(n), fixed.resize(n), reserved.resize(n);
    incident.resize(n);
    for (int i = 0; i < n; ++i) {
      GraphKernel &k = graph.kernels[this->members[i]];
      h[i] = k.h, w[i] = k.w, x[i] = k.x, y[i] = k.y;
      fixed[i] = k.x >= 0;
    }
    for (auto [e, edge] : llvm::enumerate(this->edges)) {
      incident[edge.src].push_back(e);
      if (edge.dst != edge.src)
        incident[edge.dst].push_back(e);
    }
  }

  LogicalResult run(int64_t seed, int64_t moves);

private:
  KernelOp kernelOp(int i) { return graph.kernels[members[i]].op; }
  bool placed(int i) const { return x[i] >= 0; }
  double edgeCost(const Edge &e) const {
    int64_t sx = x[e.src] + w[e.src] - 1, sy = y[e.src] + h[e.src] - 1;
    int64_t dx = std::max<int64_t>({0, x[e.dst] - sx, sx - (x[e.dst] + w[e.dst] - 1)});
    int64_t dy = std::max<int64_t>({0, y[e.dst] - sy, sy - (y[e.dst] + h[e.dst] - 1)});
    return e.weight * double(dx + dy);
  }
  /// Cost of the edges of `i` whose other end is placed, and their weight.
  std::pair<double, double> localCost(int i) const {
    double cost = 0, weight = 0;
    for (int e : incident[i]) {
      const Edge &edge = edges[e];
      int other = edge.src == i ? edge.dst : edge.src;
      if (!placed(other))
        continue;
      cost += edgeCost(edge);
      weight += edge.weight;
    }
    return {cost, weight};
  }
  bool staticLegal(int64_t x0, int64_t y0, int64_t hh, int64_t ww) const {
    return x0 >= 0 && y0 >= 0 && x0 + ww <= W && y0 + hh <= H &&
           blocked.sum(x0, y0, x0 + ww - 1, y0 + hh - 1) == 0 &&
           deadEast.sum(x0, y0, x0 + ww - 2, y0 + hh - 1) == 0 &&
           deadSouth.sum(x0, y0, x0 + ww - 1, y0 + hh - 2) == 0;
  }
  /// The first row >= y0 where the rectangle clears every static obstacle.
  int64_t liftPastObstacles(int64_t x0, int64_t y0, int64_t hh, int64_t ww) const {
    while (y0 + hh <= H) {
      int64_t r = std::max({blocked.lastRow(x0, y0, x0 + ww - 1, y0 + hh - 1),
                            deadEast.lastRow(x0, y0, x0 + ww - 2, y0 + hh - 1),
                            deadSouth.lastRow(x0, y0, x0 + ww - 1, y0 + hh - 2)});
      if (r < 0)
        return y0;
      y0 = r + 1;
    }
    return -1;
  }
  /// No other kernel inside the rectangle (cells owned by `a` or `b` are fine).
  bool freeOf(int64_t x0, int64_t y0, int64_t hh, int64_t ww, int a, int b = -1) const {
    for (int64_t yy = y0; yy < y0 + hh; ++yy)
      for (int64_t xx = x0; xx < x0 + ww; ++xx) {
        int o = occ[yy * W + xx];
        if (o >= 0 && o != a && o != b)
          return false;
      }
    return true;
  }
  void paint(int i, int value) {
    for (int64_t yy = y[i]; yy < y[i] + h[i]; ++yy)
      std::fill(occ.begin() + yy * W + x[i], occ.begin() + yy * W + x[i] + w[i], value);
  }
  LogicalResult checkFixed();
  void buildBlocked();
  LogicalResult reserveLarge();
  LogicalResult pack();
  std::pair<int64_t, int64_t> bestInBand(int i, const std::vector<int64_t> &skyline, int64_t top,
                                         int64_t bandHeight, bool eastward, int64_t lo, int64_t hi,
                                         double &bestCost);
  int64_t bandHeightFor(int i, int64_t top) const;
  LogicalResult placeInHole(int i);
  void improve(int64_t seed, int64_t moves);

  int64_t wafer, W, H;
  const wafer::DefectGrid &defects;
  KernelGraph &graph;
  std::vector<int> members;
  std::vector<Edge> edges;
  int n = 0;
  std::vector<int64_t> x, y, h, w;
  std::vector<bool> fixed;    // placed before this pass: never moves
  std::vector<bool> reserved; // placed ahead of the bands; may move later
  std::vector<llvm::SmallVector<int, 4>> incident;
  Prefix blocked, deadEast, deadSouth; // static: dead PEs and fixed kernels; dead links
  std::vector<int> occ;                // kernel per cell, -1 when free
  std::vector<int64_t> sky;
};

void WaferPlacer::buildBlocked() {
  blocked.build(W, H, [&](int64_t xx, int64_t yy) {
    return defects.peDead(xx, yy) || occ[yy * W + xx] >= 0;
  });
}

/// Kernels wider or taller than half the wafer do not share bands well:
/// they go first, against an edge (the top or left edge when they are in
/// the first half of the pipeline, the bottom or right edge otherwise), and
/// the bands then pack around them.
LogicalResult WaferPlacer::reserveLarge() {
  bool any = false;
  for (int i = 0; i < n; ++i) {
    bool wide = 2 * w[i] > W, tall = 2 * h[i] > H;
    if (fixed[i] || (!wide && !tall))
      continue;
    bool early = 2 * i < n;
    // Scan away from the chosen edge; the first legal spot wins.
    int64_t bestX = -1, bestY = -1;
    for (int64_t a = 0; a <= (wide ? H - h[i] : W - w[i]) && bestX < 0; ++a)
      for (int64_t b = 0; b <= (wide ? W - w[i] : H - h[i]) && bestX < 0; ++b) {
        int64_t yy = wide ? (early ? a : H - h[i] - a) : b;
        int64_t xx = wide ? b : (early ? a : W - w[i] - a);
        if (staticLegal(xx, yy, h[i], w[i]))
          bestX = xx, bestY = yy;
      }
    if (bestX < 0)
      continue; // left to the packer, which reports it if it cannot place it
    x[i] = bestX, y[i] = bestY;
    reserved[i] = true;
    paint(i, i);
    buildBlocked();
    any = true;
  }
  (void)any;
  return success();
}

LogicalResult WaferPlacer::checkFixed() {
  occ.assign(W * H, -1);
  for (int i = 0; i < n; ++i) {
    KernelOp op = kernelOp(i);
    if (h[i] > H || w[i] > W)
      return op.emitOpError("kernel '")
             << op.getName() << "' (grid [" << h[i] << ", " << w[i] << "]) does not fit the "
             << H << " rows x " << W << " columns of the wafer; placement never shrinks or "
             << "reshapes a kernel";
    if (!fixed[i])
      continue;
    if (x[i] + w[i] > W || y[i] + h[i] > H)
      return op.emitOpError("kernel '") << op.getName() << "' at (" << x[i] << ", " << y[i]
                                        << ") leaves the " << W << "x" << H << " grid";
    for (int64_t yy = y[i]; yy < y[i] + h[i]; ++yy)
      for (int64_t xx = x[i]; xx < x[i] + w[i]; ++xx) {
        if (defects.peDead(xx, yy))
          return op.emitOpError("kernel '") << op.getName() << "' covers the dead PE (" << xx
                                            << ", " << yy << ") of wafer " << wafer;
        int o = occ[yy * W + xx];
        if (o >= 0)
          return op.emitOpError("kernel '") << op.getName() << "' overlaps kernel '"
                                            << kernelOp(o).getName() << "' at PE (" << xx << ", "
                                            << yy << ")";
        occ[yy * W + xx] = i;
      }
  }
  buildBlocked();
  deadEast.build(W, H, [&](int64_t xx, int64_t yy) {
    return xx + 1 < W && (defects.cell(xx, yy) >> wafer::East & 1);
  });
  deadSouth.build(W, H, [&](int64_t xx, int64_t yy) {
    return yy + 1 < H && (defects.cell(xx, yy) >> wafer::South & 1);
  });
  return success();
}

/// The best spot for kernel i in the band whose skyline is `sky`: the
/// lowest cost, or bestX = -1.
std::pair<int64_t, int64_t> WaferPlacer::bestInBand(int i, const std::vector<int64_t> &skyline,
                                                    int64_t top, int64_t bandHeight,
                                                    bool eastward, int64_t lo, int64_t hi,
                                                    double &bestCost) {
  // window[c] = max(skyline[c .. c + w - 1]) by a monotone deque.
  std::vector<int64_t> window(W);
  std::deque<int64_t> dq;
  for (int64_t c = W - 1; c >= 0; --c) {
    while (!dq.empty() && skyline[dq.back()] <= skyline[c])
      dq.pop_back();
    dq.push_back(c);
    while (dq.front() >= c + w[i])
      dq.pop_front();
    window[c] = skyline[dq.front()];
  }
  int64_t bestX = -1, bestY = -1;
  for (int64_t c = std::max<int64_t>(0, lo); c + w[i] <= std::min(W, hi); ++c) {
    int64_t r = liftPastObstacles(c, window[c], h[i], w[i]);
    if (r < 0 || r + h[i] > top + bandHeight)
      continue;
    x[i] = c, y[i] = r;
    auto [cost, weight] = localCost(i);
    // Close to the kernels it talks to; then high in the band, then early
    // in the band's direction.
    double total = (weight > 0 ? cost / weight : 0) + 1e-3 * double(r - top) +
                   1e-6 * double(eastward ? c : W - c);
    if (bestX < 0 || total < bestCost)
      bestCost = total, bestX = c, bestY = r;
  }
  x[i] = -1, y[i] = -1;
  return {bestX, bestY};
}

/// The height of a band opened at `top` for kernels i, i+1, ...: the
/// tallest of those that would fill its width.
int64_t WaferPlacer::bandHeightFor(int i, int64_t top) const {
  int64_t height = h[i], width = 0;
  for (int j = i; j < n && width + w[j] <= W; ++j)
    if (!fixed[j] && !reserved[j])
      width += w[j], height = std::max(height, h[j]);
  return std::min(height, H - top);
}

LogicalResult WaferPlacer::pack() {
  // Kernels that went into holes: the band skyline must stay clear of them.
  std::vector<int> holes;
  auto raiseSky = [&](int64_t top) {
    for (int j : holes)
      if (y[j] + h[j] > top)
        for (int64_t c = x[j]; c < x[j] + w[j]; ++c)
          sky[c] = std::max(sky[c], y[j] + h[j]);
  };
  int64_t top = 0, bandHeight = 0; // the current band: rows [top, top + bandHeight)
  bool open = false, eastward = true;
  int64_t lastX0 = 0, lastX1 = W; // columns of the previous kernel in the band
  for (int i = 0; i < n; ++i) {
    if (fixed[i] || reserved[i])
      continue;
    while (true) {
      if (open) {
        // Never go back behind the previous kernel: the band is a cursor.
        int64_t lo = eastward ? lastX0 - w[i] + 1 : 0;
        int64_t hi = eastward ? W : lastX1;
        double cost = 0;
        auto [bx, by] = bestInBand(i, sky, top, bandHeight, eastward, lo, hi, cost);
        if (bx >= 0) {
          x[i] = bx, y[i] = by;
          paint(i, i);
          for (int64_t c = x[i]; c < x[i] + w[i]; ++c)
            sky[c] = y[i] + h[i];
          lastX0 = x[i], lastX1 = x[i] + w[i];
          break;
        }
      }
      // Open the next band, in the other direction (the serpentine).
      int64_t next = open ? top + bandHeight : 0;
      if (next + h[i] > H) {
        if (failed(placeInHole(i)))
          return failure();
        holes.push_back(i);
        raiseSky(top);
        break;
      }
      eastward = open ? !eastward : true;
      open = true;
      top = next;
      bandHeight = bandHeightFor(i, top);
      sky.assign(W, top);
      raiseSky(top);
      lastX0 = eastward ? 0 : W;
      lastX1 = eastward ? 0 : W;
    }
  }
  return success();
}

/// The skyline is full: scan every position against the real occupancy.
LogicalResult WaferPlacer::placeInHole(int i) {
  Prefix taken;
  taken.build(W, H, [&](int64_t xx, int64_t yy) { return occ[yy * W + xx] >= 0; });
  double bestCost = 0;
  int64_t bestX = -1, bestY = -1;
  for (int64_t r = 0; r + h[i] <= H; ++r)
    for (int64_t c = 0; c + w[i] <= W; ++c) {
      if (!staticLegal(c, r, h[i], w[i]) || taken.sum(c, r, c + w[i] - 1, r + h[i] - 1))
        continue;
      x[i] = c, y[i] = r;
      auto [cost, weight] = localCost(i);
      double total = weight > 0 ? cost / weight : double(r + c);
      if (bestX < 0 || total < bestCost)
        bestCost = total, bestX = c, bestY = r;
    }
  x[i] = bestX, y[i] = bestY;
  if (bestX >= 0) {
    paint(i, i);
    return success();
  }
  int64_t freePes = 0;
  for (int64_t yy = 0; yy < H; ++yy)
    for (int64_t xx = 0; xx < W; ++xx)
      freePes += occ[yy * W + xx] < 0 && !defects.peDead(xx, yy);
  KernelOp op = kernelOp(i);
  return op.emitOpError("cannot place kernel '")
         << op.getName() << "' (grid [" << h[i] << ", " << w[i] << "]) on wafer " << wafer
         << ": no free rectangle of " << h[i] << " rows x " << w[i]
         << " columns without defects is left (" << freePes << " of " << W * H
         << " PEs free); placement never shrinks or reshapes a kernel";
}

void WaferPlacer::improve(int64_t seed, int64_t moves) {
  std::vector<int> movable;
  for (int i = 0; i < n; ++i)
    if (!fixed[i])
      movable.push_back(i);
  if (movable.empty())
    return;
  SplitMix rng{uint64_t(seed) * 0x2545f4914f6cdd1dULL + uint64_t(wafer) + 17};
  // Cost of the edges incident to `a` and `b`, each edge once.
  auto pairCost = [&](int a, int b) {
    double cost = 0;
    for (int e : incident[a])
      cost += edgeCost(edges[e]);
    if (b >= 0)
      for (int e : incident[b]) {
        const Edge &edge = edges[e];
        if (edge.src != a && edge.dst != a)
          cost += edgeCost(edge);
      }
    return cost;
  };
  for (int64_t m = 0; m < moves; ++m) {
    int i = movable[rng.below(movable.size())];
    double kind = rng.uniform();
    if (kind < 0.7) {
      // Shift: toward a neighbour, or a small random step.
      int64_t nx = x[i], ny = y[i];
      if (kind < 0.4 && !incident[i].empty()) {
        const Edge &e = edges[incident[i][rng.below(incident[i].size())]];
        int other = e.src == i ? e.dst : e.src;
        // Producers want their last PE just west of or above the consumer.
        if (e.src == i) {
          nx = x[other] - w[i] + (rng.below(2) ? 0 : w[other] / 2);
          ny = y[other] - h[i] + (rng.below(2) ? 0 : h[other] / 2);
        } else {
          nx = x[other] + w[other] - (rng.below(2) ? 0 : w[i] / 2);
          ny = y[other] + h[other] - (rng.below(2) ? 0 : h[i] / 2);
        }
        int64_t r = 1 + rng.below(4);
        nx += rng.below(2 * r + 1) - r;
        ny += rng.below(2 * r + 1) - r;
      } else {
        int64_t r = 1 + rng.below(8);
        nx += rng.below(2 * r + 1) - r;
        ny += rng.below(2 * r + 1) - r;
      }
      nx = std::clamp<int64_t>(nx, 0, W - w[i]);
      ny = std::clamp<int64_t>(ny, 0, H - h[i]);
      if (nx == x[i] && ny == y[i])
        continue;
      int64_t ox = x[i], oy = y[i];
      double before = pairCost(i, -1);
      x[i] = nx, y[i] = ny;
      double after = pairCost(i, -1);
      bool ok = after < before && staticLegal(nx, ny, h[i], w[i]) &&
                freeOf(nx, ny, h[i], w[i], i);
      x[i] = ox, y[i] = oy;
      if (!ok)
        continue;
      paint(i, -1);
      x[i] = nx, y[i] = ny;
      paint(i, i);
    } else {
      // Swap origins with another movable kernel.
      int j = movable[rng.below(movable.size())];
      if (j == i)
        continue;
      double before = pairCost(i, j);
      std::swap(x[i], x[j]);
      std::swap(y[i], y[j]);
      double after = pairCost(i, j);
      bool ok = after < before;
      if (ok && (h[i] != h[j] || w[i] != w[j])) {
        bool disjoint = x[i] + w[i] <= x[j] || x[j] + w[j] <= x[i] || y[i] + h[i] <= y[j] ||
                        y[j] + h[j] <= y[i];
        ok = disjoint && staticLegal(x[i], y[i], h[i], w[i]) &&
             staticLegal(x[j], y[j], h[j], w[j]) && freeOf(x[i], y[i], h[i], w[i], i, j) &&
             freeOf(x[j], y[j], h[j], w[j], i, j);
      }
      std::swap(x[i], x[j]);
      std::swap(y[i], y[j]);
      if (!ok)
        continue;
      paint(i, -1);
      paint(j, -1);
      std::swap(x[i], x[j]);
      std::swap(y[i], y[j]);
      paint(i, i);
      paint(j, j);
    }
  }
}

LogicalResult WaferPlacer::run(int64_t seed, int64_t moves) {
  if (failed(checkFixed()) || failed(reserveLarge()) || failed(pack()))
    return failure();
  if (moves < 0)
    moves = std::min<int64_t>(200 * int64_t(n), 400000);
  // From now on only defects and pre-placed kernels are static.
  blocked.build(W, H, [&](int64_t xx, int64_t yy) {
    int o = occ[yy * W + xx];
    return defects.peDead(xx, yy) || (o >= 0 && fixed[o]);
  });
  improve(seed, moves);
  Builder b(kernelOp(0)->getContext());
  for (int i = 0; i < n; ++i) {
    GraphKernel &k = graph.kernels[members[i]];
    k.x = x[i], k.y = y[i];
    if (!fixed[i])
      k.op->setAttr(wafer::kOriginAttrName, b.getDenseI64ArrayAttr({wafer, x[i], y[i]}));
  }
  return success();
}

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
    for (auto &[waferIndex, members] : byWafer) {
      std::vector<Edge> edges;
      for (const GraphStream &s : graph->streams) {
        if (graph->kernels[s.producer].wafer != waferIndex)
          continue;
        int last = -1;
        for (auto [c, operand] : s.consumers) {
          if (c == last || graph->kernels[c].wafer != waferIndex || c == s.producer)
            continue;
          last = c;
          edges.push_back({local[s.producer], local[c], double(std::max<int64_t>(1, s.size))});
        }
      }
      wafer::DefectGrid defects = wafer::DefectGrid::forWafer(defectsAttr, W, H, waferIndex);
      WaferPlacer placer(waferIndex, W, H, defects, *graph, members, std::move(edges));
      if (failed(placer.run(seed, moves)))
        return signalPassFailure();
    }
  }
};

} // namespace
