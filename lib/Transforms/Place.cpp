//===- Place.cpp - kernel rectangles on the wafer, around defects ---------===//
//
// Per wafer, deterministic for a seed:
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
#include "wsc/Transforms/Passes.h"

#include "KernelGraph.h"
#include "wafer/Defects.h"
#include "wsc/Conversion/KernelSizing.h"

#include "mlir/IR/Threading.h"

#include <cstdio>
#include <deque>
#include <map>
#include <optional>

namespace wsc {
#define GEN_PASS_DEF_WSCPLACE
#include "wsc/Transforms/Passes.h.inc"
} // namespace wsc

using namespace mlir;
using namespace wsc;

namespace {

using wskernel::KernelOp;

using wafer::SplitMix;

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

/// Placement of the kernels of one wafer, possibly on the transposed wafer
/// (x and y, w and h, EAST and SOUTH swapped) so that bands run in columns.
class WaferPlacer {
public:
  WaferPlacer(int64_t wafer, int64_t width, int64_t height, const wafer::DefectGrid &grid,
              KernelGraph &graph, const std::vector<int> &members, const std::vector<Edge> &edges,
              bool transposed)
      : wafer(wafer), transposed(transposed), graph(graph), members(members), edges(edges) {
    W = transposed ? height : width;
    H = transposed ? width : height;
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
    deadPe.assign(W * H, 0);
    for (int64_t yy = 0; yy < height; ++yy)
      for (int64_t xx = 0; xx < width; ++xx)
        if (grid.peDead(xx, yy))
          deadPe[transposed ? xx * W + yy : yy * W + xx] = 1;
    // Dead links inside rectangles: east of (x, y), and south of (x, y).
    // Transposed, (xx, yy) is the wafer's PE (yy, xx) and east is south.
    auto eastDead = [&](int64_t xx, int64_t yy) {
      return transposed ? xx + 1 < height && (grid.cell(yy, xx) >> wafer::South & 1)
                        : xx + 1 < width && (grid.cell(xx, yy) >> wafer::East & 1);
    };
    auto southDead = [&](int64_t xx, int64_t yy) {
      return transposed ? yy + 1 < width && (grid.cell(yy, xx) >> wafer::East & 1)
                        : yy + 1 < height && (grid.cell(xx, yy) >> wafer::South & 1);
    };
    deadEast.build(W, H, [&](int64_t xx, int64_t yy) { return xx + 1 < W && eastDead(xx, yy); });
    deadSouth.build(W, H, [&](int64_t xx, int64_t yy) { return yy + 1 < H && southDead(xx, yy); });
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
  /// Static obstacles: dead PEs, plus the kernels `keep` accepts.
  template <typename Keep> void buildBlocked(Keep keep) {
    blocked.build(W, H, [&](int64_t xx, int64_t yy) {
      int o = occ[yy * W + xx];
      return deadPe[yy * W + xx] || (o >= 0 && keep(o));
    });
  }
  void reset();
  void reserveLarge();
  bool pack(int64_t minBand, int64_t holeBudget);
  bool placeInHole(int i);
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
  std::vector<uint8_t> deadPe;
  Prefix blocked, deadEast, deadSouth; // static obstacles; dead links inside rectangles
  std::vector<int> occ;                // kernel per cell, -1 when free
  std::vector<int64_t> sky;
  int failedKernel = -1;
};

LogicalResult WaferPlacer::checkFixed() {
  occ.assign(W * H, -1);
  for (int i = 0; i < n; ++i) {
    KernelOp op = kernelOp(i);
    if (h[i] > H || w[i] > W)
      return op.emitOpError("kernel '")
             << op.getName() << "' (grid [" << h[i] << ", " << w[i] << "]) does not fit the " << H
             << " rows x " << W << " columns of the wafer, and the lowering has no shape for "
             << "it within them";
    if (!fixed[i])
      continue;
    if (x[i] + w[i] > W || y[i] + h[i] > H)
      return op.emitOpError("kernel '") << op.getName() << "' at (" << x[i] << ", " << y[i]
                                        << ") leaves the " << W << "x" << H << " grid";
    for (int64_t yy = y[i]; yy < y[i] + h[i]; ++yy)
      for (int64_t xx = x[i]; xx < x[i] + w[i]; ++xx) {
        if (deadPe[yy * W + xx])
          return op.emitOpError("kernel '") << op.getName() << "' covers the dead PE (" << xx
                                            << ", " << yy << ") of wafer " << wafer;
        int o = occ[yy * W + xx];
        if (o >= 0)
          return op.emitOpError("kernel '")
                 << op.getName() << "' overlaps kernel '" << kernelOp(o).getName() << "' at PE ("
                 << xx << ", " << yy << ")";
        occ[yy * W + xx] = i;
      }
  }
  return success();
}

/// Only the pre-placed kernels stay.
void WaferPlacer::reset() {
  occ.assign(W * H, -1);
  for (int i = 0; i < n; ++i) {
    reserved[i] = false;
    if (fixed[i])
      paint(i, i);
    else
      x[i] = y[i] = -1;
  }
  buildBlocked([&](int o) { return true; });
  failedKernel = -1;
}

/// Kernels wider or taller than half the wafer do not share bands well:
/// they go first, against an edge (the top or left edge when they are in
/// the first half of the pipeline, the bottom or right edge otherwise), and
/// the bands then pack around them.
void WaferPlacer::reserveLarge() {
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
    buildBlocked([&](int o) { return true; });
  }
}

/// The best spot for kernel i in the band [top, top + bandHeight) whose
/// skyline is `sky`, between columns lo and hi; (-1, -1) when none.
std::pair<int64_t, int64_t> WaferPlacer::bestInBand(int i, int64_t top, int64_t bandHeight,
                                                    bool eastward, int64_t lo, int64_t hi) {
  // window[c] = max(sky[c .. c + w - 1]) by a monotone deque.
  std::vector<int64_t> window(W);
  std::deque<int64_t> dq;
  for (int64_t c = W - 1; c >= 0; --c) {
    while (!dq.empty() && sky[dq.back()] <= sky[c])
      dq.pop_back();
    dq.push_back(c);
    while (dq.front() >= c + w[i])
      dq.pop_front();
    window[c] = sky[dq.front()];
  }
  double bestCost = 0;
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
/// tallest of those that would fill its width, and at least `minBand`.
int64_t WaferPlacer::bandHeightFor(int i, int64_t top, int64_t minBand) const {
  int64_t height = std::max(h[i], minBand), width = 0;
  for (int j = i; j < n && width + w[j] <= W; ++j)
    if (!fixed[j] && !reserved[j])
      width += w[j], height = std::max(height, h[j]);
  return std::min(height, H - top);
}

bool WaferPlacer::pack(int64_t minBand, int64_t holeBudget) {
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
        auto [bx, by] = bestInBand(i, top, bandHeight, eastward, lo, hi);
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
        if (int64_t(holes.size()) >= holeBudget) {
          failedKernel = i;
          return false;
        }
        if (!placeInHole(i))
          return false;
        holes.push_back(i);
        raiseSky(top);
        break;
      }
      eastward = open ? !eastward : true;
      open = true;
      top = next;
      bandHeight = bandHeightFor(i, top, minBand);
      sky.assign(W, top);
      raiseSky(top);
      lastX0 = lastX1 = eastward ? 0 : W;
    }
  }
  return true;
}

/// No band is left: look for a hole, in rings of growing distance around
/// the spot its placed neighbours pull it to; once one is found, a few more
/// rings may still hold a cheaper one.
bool WaferPlacer::placeInHole(int i) {
  Prefix taken;
  taken.build(W, H, [&](int64_t xx, int64_t yy) { return occ[yy * W + xx] >= 0; });
  auto legal = [&](int64_t c, int64_t r) {
    return staticLegal(c, r, h[i], w[i]) && !taken.sum(c, r, c + w[i] - 1, r + h[i] - 1);
  };
  // Most holes looked for in a failing attempt do not exist. A legal spot
  // needs h x w free live PEs: one row-major pass over run lengths says
  // whether there are any before the rings below are walked.
  std::vector<int64_t> up(W, 0);
  bool anyHole = false;
  for (int64_t yy = 0; yy < H && !anyHole; ++yy)
    for (int64_t xx = 0, run = 0; xx < W && !anyHole; ++xx) {
      up[xx] = occ[yy * W + xx] < 0 && !deadPe[yy * W + xx] ? up[xx] + 1 : 0;
      run = up[xx] >= h[i] ? run + 1 : 0;
      anyHole = run >= w[i];
    }
  if (!anyHole) {
    failedKernel = i;
    return false;
  }
  // The pull: producers' sending PEs and consumers' origins, by weight.
  double ax = 0, ay = 0, aw = 0;
  for (int e : incident[i]) {
    const Edge &edge = edges[e];
    int other = edge.src == i ? edge.dst : edge.src;
    if (!placed(other))
      continue;
    double px = edge.src == i ? x[other] - w[i] : x[other] + w[other] - 1;
    double py = edge.src == i ? y[other] - h[i] : y[other] + h[other] - 1;
    ax += edge.weight * px, ay += edge.weight * py, aw += edge.weight;
  }
  int64_t tx = aw > 0 ? std::clamp<int64_t>(int64_t(ax / aw), 0, W - w[i]) : 0;
  int64_t ty = aw > 0 ? std::clamp<int64_t>(int64_t(ay / aw), 0, H - h[i]) : 0;
  double bestCost = 0;
  int64_t bestX = -1, bestY = -1, stopAt = std::max(W, H);
  for (int64_t d = 0; d <= stopAt; ++d) {
    auto consider = [&](int64_t c, int64_t r) {
      if (c < 0 || r < 0 || c + w[i] > W || r + h[i] > H || !legal(c, r))
        return;
      x[i] = c, y[i] = r;
      auto [cost, weight] = localCost(i);
      double total = (weight > 0 ? cost / weight : 0) + 1e-6 * double(r * W + c);
      if (bestX < 0 || total < bestCost)
        bestCost = total, bestX = c, bestY = r;
    };
    for (int64_t k = -d; k <= d; ++k) {
      consider(tx + k, ty - d);
      if (d > 0)
        consider(tx + k, ty + d);
    }
    for (int64_t k = -d + 1; k <= d - 1; ++k) {
      consider(tx - d, ty + k);
      consider(tx + d, ty + k);
    }
    if (bestX >= 0)
      stopAt = std::min(stopAt, d + w[i] + h[i]);
  }
  x[i] = bestX, y[i] = bestY;
  if (bestX < 0) {
    failedKernel = i;
    return false;
  }
  paint(i, i);
  return true;
}

bool WaferPlacer::attempt(int64_t minBand, int64_t holeBudget) {
  reset();
  reserveLarge();
  return pack(minBand, holeBudget);
}

bool WaferPlacer::attemptDense(bool tallestFirst) {
  reset();
  reserveLarge();
  std::vector<int> order;
  for (int i = 0; i < n; ++i)
    if (!placed(i))
      order.push_back(i);
  if (tallestFirst)
    llvm::stable_sort(order, [&](int a, int b) {
      return std::make_pair(h[a], w[a]) > std::make_pair(h[b], w[b]);
    });
  int64_t prevX = 0; // where the previous kernel ended: ties go near it
  for (int i : order) {
    int64_t bestX = -1, bestY = -1;
    for (int64_t xx = 0; xx + w[i] <= W; ++xx) {
      int64_t yy = liftPastObstacles(xx, 0, h[i], w[i]);
      if (yy >= 0 && (bestY < 0 || yy < bestY ||
                      (yy == bestY && std::abs(xx - prevX) < std::abs(bestX - prevX))))
        bestX = xx, bestY = yy;
    }
    if (bestX < 0) {
      failedKernel = i;
      return false;
    }
    x[i] = bestX, y[i] = bestY;
    prevX = bestX + w[i];
    paint(i, i);
    buildBlocked([&](int o) { return true; });
  }
  return true;
}

bool WaferPlacer::attemptMaxRects(FitOrder order, Fit fit) {
  reset(); // `blocked` keeps the defects and pre-placed kernels only
  struct Box {
    int64_t x, y, w, h;
  };
  std::vector<Box> boxes = {{0, 0, W, H}};
  // Cuts the placed rectangle out of every free one: the up-to-four
  // maximal rectangles around it replace each one it overlaps, and those
  // inside another are dropped.
  auto cut = [&](int64_t x0, int64_t y0, int64_t ww, int64_t hh) {
    std::vector<Box> next;
    for (const Box &b : boxes) {
      if (x0 >= b.x + b.w || x0 + ww <= b.x || y0 >= b.y + b.h || y0 + hh <= b.y) {
        next.push_back(b);
        continue;
      }
      if (x0 > b.x)
        next.push_back({b.x, b.y, x0 - b.x, b.h});
      if (x0 + ww < b.x + b.w)
        next.push_back({x0 + ww, b.y, b.x + b.w - x0 - ww, b.h});
      if (y0 > b.y)
        next.push_back({b.x, b.y, b.w, y0 - b.y});
      if (y0 + hh < b.y + b.h)
        next.push_back({b.x, y0 + hh, b.w, b.y + b.h - y0 - hh});
    }
    auto inside = [](const Box &a, const Box &b) {
      return b.x <= a.x && b.y <= a.y && a.x + a.w <= b.x + b.w && a.y + a.h <= b.y + b.h;
    };
    boxes.clear();
    for (size_t i = 0; i < next.size(); ++i) {
      bool dropped = false;
      for (size_t j = 0; j < next.size() && !dropped; ++j)
        dropped = j != i && inside(next[i], next[j]) &&
                  (!inside(next[j], next[i]) || j < i); // equal boxes: keep the first
      if (!dropped)
        boxes.push_back(next[i]);
    }
  };
  for (int i = 0; i < n; ++i)
    if (fixed[i])
      cut(x[i], y[i], w[i], h[i]);
  // Small kernels (a layer norm's row) go last, each into the hole nearest
  // where its producers and consumers pull it: by size they would all fill
  // the same last hole, and every layer's streams would meet there.
  std::vector<int> todo, small;
  for (int i = 0; i < n; ++i)
    if (!placed(i))
      (1000 * h[i] * w[i] < W * H ? small : todo).push_back(i);
  llvm::stable_sort(todo, [&](int a, int b) {
    auto key = [&](int i) -> std::pair<int64_t, int64_t> {
      switch (order) {
      case FitOrder::Area:
        return {h[i] * w[i], std::max(h[i], w[i])};
      case FitOrder::LongSide:
        return {std::max(h[i], w[i]), std::min(h[i], w[i])};
      case FitOrder::Width:
        return {w[i], h[i]};
      case FitOrder::Height:
        return {h[i], w[i]};
      }
      return {0, 0};
    };
    return key(a) > key(b);
  });
  for (int i : todo) {
    std::optional<std::tuple<int64_t, int64_t, int64_t, int64_t>> best; // score, tie, x, y
    for (const Box &b : boxes) {
      if (w[i] > b.w || h[i] > b.h)
        continue;
      // Lifted past dead PEs and links, still inside the box.
      int64_t yy = liftPastObstacles(b.x, b.y, h[i], w[i]);
      if (yy < 0 || yy + h[i] > b.y + b.h)
        continue;
      int64_t shortLeft = std::min(b.w - w[i], b.h - h[i]);
      int64_t longLeft = std::max(b.w - w[i], b.h - h[i]);
      std::tuple<int64_t, int64_t, int64_t, int64_t> score =
          fit == Fit::ShortSide ? std::make_tuple(shortLeft, longLeft, b.x, yy)
          : fit == Fit::Area    ? std::make_tuple(b.w * b.h - w[i] * h[i], shortLeft, b.x, yy)
                                : std::make_tuple(yy + h[i], b.x, b.x, yy);
      if (!best || score < *best)
        best = score;
    }
    if (!best) {
      failedKernel = i;
      return false;
    }
    x[i] = std::get<2>(*best), y[i] = std::get<3>(*best);
    paint(i, i);
    cut(x[i], y[i], w[i], h[i]);
    // The small kernels it feeds, next to it while there is room.
    for (int e : incident[i]) {
      int j = edges[e].dst;
      if (edges[e].src != i || placed(j) || !llvm::is_contained(small, j))
        continue;
      if (!placeInHole(j))
        return false;
      cut(x[j], y[j], w[j], h[j]);
    }
  }
  for (int i : small)
    if (!placed(i) && !placeInHole(i))
      return false;
  return true;
}

void WaferPlacer::placeError(int64_t gaveUp, double maxCycles) {
  int i = failedKernel;
  int64_t freePes = 0;
  for (int64_t c = 0; c < W * H; ++c)
    freePes += occ[c] < 0 && !deadPe[c];
  KernelOp op = kernelOp(i);
  int64_t hh = transposed ? w[i] : h[i], ww = transposed ? h[i] : w[i];
  InFlightDiagnostic diag = op.emitOpError("cannot place kernel '")
                            << op.getName() << "' (grid [" << hh << ", " << ww << "]) on wafer "
                            << wafer << ": no free rectangle of " << hh << " rows x " << ww
                            << " columns without defects is left (" << freePes << " of " << W * H
                            << " PEs free)";
  if (gaveUp >= 0) {
    diag << " after " << gaveUp << " reshapes (max-reshapes=" << gaveUp << ")";
    return;
  }
  diag << ", and the lowering has no shape for it in the free space, nor a "
          "smaller one for the other kernels of the wafer (their tiles must fit SRAM)";
  if (maxCycles > 0) {
    char cycles[32];
    std::snprintf(cycles, sizeof cycles, "%g", maxCycles);
    // (A std::string: the diagnostic keeps a copy; the buffer dies here.)
    diag << ", nor one as fast as the wafer's slowest kernel (" << std::string(cycles)
         << " cycles per token; reshape-slower=false)";
  }
}

std::vector<std::pair<int64_t, int64_t>> WaferPlacer::freeBoxes() const {
  // Maximal rectangles of the histogram of free cells, row by row:
  // widest[hh] = the widest free rectangle of height hh.
  std::vector<int64_t> up(W, 0), widest(H + 1, 0);
  for (int64_t yy = 0; yy < H; ++yy) {
    for (int64_t xx = 0; xx < W; ++xx) {
      // A dead link out of a cell blocks it (a little more than needed).
      bool free = occ[yy * W + xx] < 0 && !deadPe[yy * W + xx] &&
                  !deadEast.sum(xx, yy, xx, yy) && !deadSouth.sum(xx, yy, xx, yy);
      up[xx] = free ? up[xx] + 1 : 0;
    }
    std::vector<int64_t> stack; // columns of increasing height
    for (int64_t xx = 0; xx <= W; ++xx) {
      int64_t height = xx < W ? up[xx] : 0;
      while (!stack.empty() && up[stack.back()] >= height) {
        int64_t top = up[stack.back()];
        stack.pop_back();
        int64_t left = stack.empty() ? 0 : stack.back() + 1;
        widest[top] = std::max(widest[top], xx - left);
      }
      stack.push_back(xx);
    }
  }
  std::vector<std::pair<int64_t, int64_t>> boxes;
  int64_t best = 0;
  for (int64_t hh = H; hh >= 1; --hh)
    if (widest[hh] > best) {
      best = widest[hh];
      boxes.push_back({hh, best});
    }
  llvm::stable_sort(boxes, [](auto a, auto b) { return a.first * a.second > b.first * b.second; });
  if (transposed)
    for (auto &box : boxes)
      std::swap(box.first, box.second);
  return boxes;
}

void WaferPlacer::adopt(const std::vector<std::pair<int64_t, int64_t>> &origins) {
  occ.assign(W * H, -1);
  for (int i = 0; i < n; ++i) {
    reserved[i] = false;
    std::tie(x[i], y[i]) = origins[i];
    if (transposed)
      std::swap(x[i], y[i]);
    paint(i, i);
  }
  // Only defects and pre-placed kernels are static now.
  buildBlocked([&](int o) { return bool(fixed[o]); });
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
      bool ok = after < before && staticLegal(nx, ny, h[i], w[i]) && freeOf(nx, ny, h[i], w[i], i);
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

void WaferPlacer::write() {
  Builder b(graph.kernels[members[0]].op->getContext());
  for (auto [i, o] : llvm::enumerate(origins())) {
    GraphKernel &k = graph.kernels[members[i]];
    k.x = o.first, k.y = o.second;
    if (!fixed[i])
      k.op->setAttr(wafer::kOriginAttrName, b.getDenseI64ArrayAttr({wafer, k.x, k.y}));
  }
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
    for (;; ++rounds) {
      WaferPlacer rows(waferIndex, W, H, defects, graph, members, edges, false);
      if (failed(rows.checkFixed()))
        return failure();
      if (rounds == 0)
        cleanBoxes = rows.freeBoxes();
      // Row bands and column bands, with bands as tall as their kernels
      // need or at least 1/6, 1/4 or 1/3 of the wafer: the cheapest full
      // packing.
      WaferPlacer cols(waferIndex, W, H, defects, graph, members, edges, true);
      (void)cols.checkFixed();
      std::optional<std::vector<std::pair<int64_t, int64_t>>> best;
      double bestCost = 0;
      int64_t holeBudget = std::max<int64_t>(8, members.size() / 20);
      for (WaferPlacer *p : {&rows, &cols}) {
        int64_t side = p == &rows ? H : W;
        for (int64_t minBand : {int64_t(0), side / 6, side / 4, side / 3}) {
          if (!p->attempt(minBand, holeBudget))
            continue;
          double cost = p->totalCost();
          if (!best || cost < bestCost)
            best = p->origins(), bestCost = cost;
        }
      }
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
        WaferPlacer rowsFit(waferIndex, W, H, defects, graph, members, edges, false);
        WaferPlacer colsFit(waferIndex, W, H, defects, graph, members, edges, true);
        (void)rowsFit.checkFixed(), (void)colsFit.checkFixed();
        for (Order order : {Order::Area, Order::LongSide, Order::Width, Order::Height})
          for (Fit fit : {Fit::ShortSide, Fit::Lowest, Fit::Area})
            for (WaferPlacer *p : {&rowsFit, &colsFit}) {
              if (!p->attemptMaxRects(order, fit))
                continue;
              double cost = p->totalCost();
              if (!best || cost < bestCost)
                best = p->origins(), bestCost = cost;
            }
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
    if (!fitsSome(cleanBoxes)) {
      for (size_t b = 0; b < std::min<size_t>(cleanBoxes.size(), 16); ++b) {
        auto [bh, bw] = cleanBoxes[b];
        if (succeeded(
                resizeKernel(kernel.op, std::min(kernel.h * kernel.w, bh * bw), bh, bw, maxCycles)))
          return stuck;
      }
      return -1;
    }
    std::vector<std::pair<int64_t, int64_t>> boxes = rows.freeBoxes();
    if (boxes.size() > 16)
      boxes.resize(16);
    for (auto [bh, bw] : boxes)
      if (succeeded(
              resizeKernel(kernel.op, std::min(kernel.h * kernel.w, bh * bw), bh, bw, maxCycles)))
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
