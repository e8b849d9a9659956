//===- WaferPlacer.cpp - one wafer's packings and improvement moves -------===//
//
// The packers and moves of --wsc-place (Placer.h); Place.cpp drives them.
//
//===----------------------------------------------------------------------===//
#include "Placer.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <optional>
#include <string>
#include <tuple>

using namespace mlir;
using namespace wsc;
using namespace wsc::place;

using wafer::SplitMix;

DeadCells::DeadCells(const wafer::DefectGrid &grid, int64_t width, int64_t height, bool transposed)
    : transposed(transposed) {
  W = transposed ? height : width;
  H = transposed ? width : height;
  pe.assign(W * H, 0);
  for (int64_t yy = 0; yy < height; ++yy)
    for (int64_t xx = 0; xx < width; ++xx)
      if (grid.peDead(xx, yy))
        pe[transposed ? xx * W + yy : yy * W + xx] = 1;
  // Transposed, (xx, yy) is the wafer's PE (yy, xx) and east is south.
  auto eastDead = [&](int64_t xx, int64_t yy) {
    return transposed ? xx + 1 < height && (grid.cell(yy, xx) >> wafer::South & 1)
                      : xx + 1 < width && (grid.cell(xx, yy) >> wafer::East & 1);
  };
  auto southDead = [&](int64_t xx, int64_t yy) {
    return transposed ? yy + 1 < width && (grid.cell(yy, xx) >> wafer::East & 1)
                      : yy + 1 < height && (grid.cell(xx, yy) >> wafer::South & 1);
  };
  east.build(W, H, [&](int64_t xx, int64_t yy) { return xx + 1 < W && eastDead(xx, yy); });
  south.build(W, H, [&](int64_t xx, int64_t yy) { return yy + 1 < H && southDead(xx, yy); });
}

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
        if (dead.pe[yy * W + xx])
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
  // `blocked` holds the obstacles before this call; the kernels reserved
  // here are checked against their rectangles, and added once at the end.
  std::vector<int> done;
  auto clearOfDone = [&](int64_t xx, int64_t yy, int i) {
    return llvm::none_of(done, [&](int j) {
      return xx < x[j] + w[j] && x[j] < xx + w[i] && yy < y[j] + h[j] && y[j] < yy + h[i];
    });
  };
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
        if (clearOfDone(xx, yy, i) && staticLegal(xx, yy, h[i], w[i]))
          bestX = xx, bestY = yy;
      }
    if (bestX < 0)
      continue; // left to the packer, which reports it if it cannot place it
    x[i] = bestX, y[i] = bestY;
    reserved[i] = true;
    paint(i, i);
    done.push_back(i);
  }
  if (!done.empty())
    buildBlocked([&](int o) { return true; });
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
  // Rings up to `reach` search the corners marked in a window of that
  // radius; the answer is final once its last ring is inside the window,
  // else the window doubles (holes are mostly near the pull).
  for (int64_t reach = 2 * (w[i] + h[i]) + 16;; reach *= 2) {
    HoleWindow window = markHoles(i, tx, ty, reach);
    if (!window.any && window.whole) {
      failedKernel = i;
      return false;
    }
    auto [bestX, bestY, lastRing] = bestInRings(i, tx, ty, window);
    if (bestX >= 0 && (lastRing <= reach || window.whole)) {
      x[i] = bestX, y[i] = bestY;
      paint(i, i);
      return true;
    }
    if (window.whole) {
      failedKernel = i;
      return false;
    }
  }
}

/// Marks the corners (c, r) within Chebyshev distance `reach` of (tx, ty)
/// where kernel i has h x w free live PEs, by one row-major pass over run
/// lengths (a failing attempt looks for many holes that do not exist).
WaferPlacer::HoleWindow WaferPlacer::markHoles(int i, int64_t tx, int64_t ty, int64_t reach) const {
  HoleWindow hw;
  hw.c0 = std::max<int64_t>(0, tx - reach), hw.c1 = std::min(W - w[i], tx + reach);
  hw.r0 = std::max<int64_t>(0, ty - reach), hw.r1 = std::min(H - h[i], ty + reach);
  hw.whole = hw.c0 == 0 && hw.r0 == 0 && hw.c1 == W - w[i] && hw.r1 == H - h[i];
  hw.width = hw.c1 - hw.c0 + 1;
  hw.spot.assign(hw.width * (hw.r1 - hw.r0 + 1), 0);
  int64_t x1 = hw.c1 + w[i] - 1, y1 = hw.r1 + h[i] - 1; // the cells a corner reaches
  std::vector<int64_t> up(x1 - hw.c0 + 1, 0);
  for (int64_t yy = hw.r0; yy <= y1; ++yy)
    for (int64_t xx = hw.c0, run = 0; xx <= x1; ++xx) {
      int64_t &u = up[xx - hw.c0];
      u = occ[yy * W + xx] < 0 && !dead.pe[yy * W + xx] ? u + 1 : 0;
      run = u >= h[i] ? run + 1 : 0;
      if (run >= w[i])
        hw.spot[(yy - h[i] + 1 - hw.r0) * hw.width + xx - w[i] + 1 - hw.c0] = hw.any = true;
    }
  return hw;
}

/// The cheapest marked spot of kernel i in rings around (tx, ty), searched
/// until w + h rings past the first one found, and that last ring; (-1, -1)
/// when the window holds none.
std::tuple<int64_t, int64_t, int64_t> WaferPlacer::bestInRings(int i, int64_t tx, int64_t ty,
                                                               const HoleWindow &hw) {
  auto legal = [&](int64_t c, int64_t r) {
    return c >= hw.c0 && c <= hw.c1 && r >= hw.r0 && r <= hw.r1 &&
           hw.spot[(r - hw.r0) * hw.width + c - hw.c0] && staticLegal(c, r, h[i], w[i]);
  };
  // localCost by axis: an edge costs weight x (dx + dy), dx following the
  // column and dy the row; integers, so the sums are exact in any order.
  std::vector<double> byColumn(hw.width, 0), byRow(hw.r1 - hw.r0 + 1, 0);
  double weight = 0;
  for (int e : incident[i]) {
    const Edge &edge = edges[e];
    if (!placed(edge.src == i ? edge.dst : edge.src))
      continue;
    weight += edge.weight;
    for (int64_t c = hw.c0; c <= hw.c1; ++c)
      byColumn[c - hw.c0] += axisCost(edge, i, /*columns=*/true, c);
    for (int64_t r = hw.r0; r <= hw.r1; ++r)
      byRow[r - hw.r0] += axisCost(edge, i, /*columns=*/false, r);
  }
  double bestCost = 0;
  int64_t bestX = -1, bestY = -1, stopAt = std::max(W, H);
  int64_t last = std::max({tx - hw.c0, hw.c1 - tx, ty - hw.r0, hw.r1 - ty});
  for (int64_t d = 0; d <= std::min(stopAt, last); ++d) {
    auto consider = [&](int64_t c, int64_t r) {
      if (!legal(c, r))
        return;
      double cost = byColumn[c - hw.c0] + byRow[r - hw.r0];
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
  return {bestX, bestY, stopAt};
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
    auto [bestX, bestY] = lowestSpot(i, prevX);
    if (bestX < 0) {
      failedKernel = i;
      return false;
    }
    x[i] = bestX, y[i] = bestY;
    prevX = bestX + w[i];
    paint(i, i);
  }
  buildBlocked([&](int o) { return true; });
  return true;
}

/// The lowest legal spot of kernel i, nearest column `prevX` on a tie (the
/// westmost of equals); (-1, -1) when none. Rows are scanned top down with
/// the free run above each cell, so the scan stops at the first row that
/// holds a spot, and no obstacle sums are rebuilt as kernels are painted.
std::pair<int64_t, int64_t> WaferPlacer::lowestSpot(int i, int64_t prevX) const {
  std::vector<int64_t> up(W, 0);
  for (int64_t yy = 0; yy < H; ++yy) {
    int64_t bestX = -1, r = yy - h[i] + 1;
    for (int64_t xx = 0, run = 0; xx < W; ++xx) {
      up[xx] = occ[yy * W + xx] < 0 && !dead.pe[yy * W + xx] ? up[xx] + 1 : 0;
      run = up[xx] >= h[i] ? run + 1 : 0;
      int64_t c = xx - w[i] + 1;
      if (run < w[i] || (bestX >= 0 && std::abs(c - prevX) >= std::abs(bestX - prevX)))
        continue;
      if (dead.east.sum(c, r, xx - 1, yy) == 0 && dead.south.sum(c, r, xx, yy - 1) == 0)
        bestX = c;
    }
    if (bestX >= 0)
      return {bestX, r};
  }
  return {-1, -1};
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
  auto isSmall = [&](int i) { return 1000 * h[i] * w[i] < W * H; };
  std::vector<int> todo, small;
  for (int i = 0; i < n; ++i)
    if (!placed(i))
      (isSmall(i) ? small : todo).push_back(i);
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
      if (edges[e].src != i || placed(j) || !isSmall(j))
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
    freePes += occ[c] < 0 && !dead.pe[c];
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
      bool free = occ[yy * W + xx] < 0 && !dead.pe[yy * W + xx] && !dead.east.sum(xx, yy, xx, yy) &&
                  !dead.south.sum(xx, yy, xx, yy);
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
