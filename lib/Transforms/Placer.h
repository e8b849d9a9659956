//===- Placer.h - one wafer's packings and moves, for --wsc-place -*- C++ -*-===//
//
// --wsc-place is two files: WaferPlacer.cpp packs one wafer's kernels
// (bands, lowest spots, free rectangles) and improves the packing by
// moves; Place.cpp drives it per wafer, negotiates shapes with the
// lowering when no packing holds every kernel, and writes the origins.
// Internal to lib/Transforms.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_LIB_TRANSFORMS_PLACER_H
#define WSC_LIB_TRANSFORMS_PLACER_H

#include "KernelGraph.h"
#include "wsc/Arch/Defects.h"

#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

namespace wsc::place {

using mlir::LogicalResult;
using wskernel::KernelOp;

/// 2-D prefix sums over a W x H grid of counts.
struct Prefix {
  int64_t W = 0, H = 0;
  std::vector<int32_t> s;
  template <typename F> void build(int64_t width, int64_t height, F value) {
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
    return s[(y1 + 1) * (W + 1) + x1 + 1] - s[y0 * (W + 1) + x1 + 1] - s[(y1 + 1) * (W + 1) + x0] +
           s[y0 * (W + 1) + x0];
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

/// A wafer's dead PEs, and its dead links inside rectangles (east of (x, y)
/// and south of (x, y)), possibly on the transposed wafer: what every
/// placer of one orientation shares.
struct DeadCells {
  DeadCells(const wafer::DefectGrid &grid, int64_t width, int64_t height, bool transposed);
  bool transposed;
  int64_t W, H;
  std::vector<uint8_t> pe;
  Prefix east, south;
};

/// Placement of the kernels of one wafer, possibly on the transposed wafer
/// (x and y, w and h, EAST and SOUTH swapped) so that bands run in columns.
class WaferPlacer {
public:
  WaferPlacer(int64_t wafer, const DeadCells &dead, KernelGraph &graph,
              const std::vector<int> &members, const std::vector<Edge> &edges)
      : wafer(wafer), transposed(dead.transposed), graph(graph), members(members), edges(edges),
        dead(dead) {
    W = dead.W;
    H = dead.H;
    n = members.size();
    x.resize(n), y.resize(n), h.resize(n), w.resize(n), fixed.resize(n), reserved.resize(n);
    incident.resize(n);
    for (int i = 0; i < n; ++i) {
      GraphKernel &k = graph.kernels[members[i]];
      h[i] = k.h, w[i] = k.w, x[i] = k.x, y[i] = k.y;
      if (transposed)
        std::swap(h[i], w[i]), std::swap(x[i], y[i]);
      fixed[i] = k.x >= 0;
    }
    for (auto [e, edge] : llvm::enumerate(edges)) {
      incident[edge.src].push_back(e);
      if (edge.dst != edge.src)
        incident[edge.dst].push_back(e);
    }
  }

  /// Checks the pre-placed kernels; errors name the kernel (call untransposed).
  LogicalResult checkFixed();
  /// One packing attempt from scratch, giving up when more than
  /// `holeBudget` kernels need the (slow) hole scan; on failure
  /// `failedKernel` is set.
  bool attempt(int64_t minBand, int64_t holeBudget);
  /// Packs densely, for when no band packing holds every kernel: each
  /// kernel at its lowest (then westmost) legal spot, in pipeline order or
  /// (`tallestFirst`) by height.
  bool attemptDense(bool tallestFirst);
  /// Orders and fits of attemptMaxRects.
  enum class FitOrder { Area, LongSide, Width, Height };
  enum class Fit { ShortSide, Area, Lowest };
  /// Packs by free rectangles (MaxRects): kernels in `order`, each at the
  /// corner of the free rectangle that `fit` scores best (least short or
  /// area leftover, or lowest), for the tight shares where bands and the
  /// lowest-spot packing leave holes no kernel fits.
  bool attemptMaxRects(FitOrder order, Fit fit);
  /// Starts from given origins (untransposed), for the improvement moves.
  void adopt(const std::vector<std::pair<int64_t, int64_t>> &origins);
  void improve(int64_t seed, int64_t moves);
  /// Origins in untransposed coordinates.
  std::vector<std::pair<int64_t, int64_t>> origins() const {
    std::vector<std::pair<int64_t, int64_t>> o(n);
    for (int i = 0; i < n; ++i)
      o[i] = transposed ? std::make_pair(y[i], x[i]) : std::make_pair(x[i], y[i]);
    return o;
  }
  double totalCost() const {
    double c = 0;
    for (const Edge &e : edges)
      c += edgeCost(e);
    return c;
  }
  /// The kernel the last attempt could not place, or -1.
  int failed() const { return failedKernel; }
  /// Free rectangles left by the last attempt (no kernel, dead PE or dead
  /// link inside): for each height, the widest, largest area first.
  std::vector<std::pair<int64_t, int64_t>> freeBoxes() const;
  /// `gaveUp`: placement stopped after that many reshapes (max-reshapes);
  /// `maxCycles` > 0: reshapes were held to that pace (reshape-slower=false).
  void placeError(int64_t gaveUp, double maxCycles);
  void write();

private:
  KernelOp kernelOp(int i) { return graph.kernels[members[i]].op; }
  bool placed(int i) const { return x[i] >= 0; }
  double edgeCost(const Edge &e) const {
    int64_t sx = x[e.src] + w[e.src] - 1, sy = y[e.src] + h[e.src] - 1;
    int64_t dx = std::max<int64_t>({0, x[e.dst] - sx, sx - (x[e.dst] + w[e.dst] - 1)});
    int64_t dy = std::max<int64_t>({0, y[e.dst] - sy, sy - (y[e.dst] + h[e.dst] - 1)});
    return e.weight * double(dx + dy);
  }
  /// edgeCost along one axis (columns or rows) with kernel i at `pos` on it.
  double axisCost(const Edge &e, int i, bool columns, int64_t pos) const {
    auto at = [&](int k) { return k == i ? pos : columns ? x[k] : y[k]; };
    auto extent = [&](int k) { return columns ? w[k] : h[k]; };
    int64_t sender = at(e.src) + extent(e.src) - 1, lo = at(e.dst), hi = lo + extent(e.dst) - 1;
    return e.weight * double(std::max<int64_t>({0, lo - sender, sender - hi}));
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
           dead.east.sum(x0, y0, x0 + ww - 2, y0 + hh - 1) == 0 &&
           dead.south.sum(x0, y0, x0 + ww - 1, y0 + hh - 2) == 0;
  }
  /// The first row >= y0 where the rectangle clears every static obstacle.
  int64_t liftPastObstacles(int64_t x0, int64_t y0, int64_t hh, int64_t ww) const {
    while (y0 + hh <= H) {
      int64_t r = std::max({blocked.lastRow(x0, y0, x0 + ww - 1, y0 + hh - 1),
                            dead.east.lastRow(x0, y0, x0 + ww - 2, y0 + hh - 1),
                            dead.south.lastRow(x0, y0, x0 + ww - 1, y0 + hh - 2)});
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
  /// Static obstacles: dead PEs, plus the kernels `keep` accepts.
  template <typename Keep> void buildBlocked(Keep keep) {
    blocked.build(W, H, [&](int64_t xx, int64_t yy) {
      int o = occ[yy * W + xx];
      return dead.pe[yy * W + xx] || (o >= 0 && keep(o));
    });
  }
  void reset();
  void reserveLarge();
  bool pack(int64_t minBand, int64_t holeBudget);
  bool placeInHole(int i);
  /// Corners of kernel i's free spots in a window around a point.
  struct HoleWindow {
    int64_t c0 = 0, c1 = -1, r0 = 0, r1 = -1, width = 0;
    bool whole = false, any = false;
    std::vector<uint8_t> spot;
  };
  HoleWindow markHoles(int i, int64_t tx, int64_t ty, int64_t reach) const;
  std::tuple<int64_t, int64_t, int64_t> bestInRings(int i, int64_t tx, int64_t ty,
                                                    const HoleWindow &hw);
  std::pair<int64_t, int64_t> lowestSpot(int i, int64_t prevX) const;
  std::pair<int64_t, int64_t> bestInBand(int i, int64_t top, int64_t bandHeight, bool eastward,
                                         int64_t lo, int64_t hi);
  int64_t bandHeightFor(int i, int64_t top, int64_t minBand) const;

  int64_t wafer;
  bool transposed;
  KernelGraph &graph;
  const std::vector<int> &members;
  const std::vector<Edge> &edges;
  int64_t W, H;
  int n = 0;
  std::vector<int64_t> x, y, h, w;
  std::vector<bool> fixed;    // placed before this pass: never moves
  std::vector<bool> reserved; // placed ahead of the bands
  std::vector<llvm::SmallVector<int, 4>> incident;
  const DeadCells &dead;
  Prefix blocked;                      // static obstacles
  std::vector<int> occ;                // kernel per cell, -1 when free
  std::vector<int64_t> sky;
  int failedKernel = -1;
};

} // namespace wsc::place

#endif // WSC_LIB_TRANSFORMS_PLACER_H
