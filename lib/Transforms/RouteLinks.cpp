//===- RouteLinks.cpp - which link each stream takes between wafers -------===//
//
// Wafers form a ring: wafer i's east edge is joined to wafer i+1's west
// edge, one link per row (PE (W-1, y) of wafer i to PE (0, y) of wafer
// i+1), and the last wafer's to wafer 0's. Streams flow forward, but for
// one from the last wafer to wafer 0 only (a generating program's fed-back
// token), which takes the ring's link. A stream produced on wafer A whose last
// consumer is on wafer B > A crosses the boundaries A, A+1, ..., B-1; at
// each one it takes the row that is cheapest by
//   distance from its tree on the wafer it leaves to (W-1, y)
//   + distance from (0, y) to the nearest consumer on the wafer it enters
//     (or, passing through, the rows to the next wafer that has one)
//   + 2 per stream already on that link,
// over the rows whose two edge PEs and link are alive, whose edge PEs have a
// live neighbour, and whose link carries fewer streams than there are colors
// (each stream on a link needs its own color at both ends). Streams are
// planned in program order, so the plan is deterministic.
//
//===----------------------------------------------------------------------===//
#include "Router.h"

using namespace mlir;
using namespace wsc;
using namespace wsc::route;

LogicalResult wsc::route::planLinks(KernelGraph &graph, wafer::ArchAttr arch,
                                    wafer::DefectsAttr defectsAttr, LinkPlan &plan) {
  int64_t W = arch.getWidth(), H = arch.getHeight(), K = arch.getColors();
  std::map<int64_t, wafer::DefectGrid> grids;
  auto grid = [&](int64_t w) -> const wafer::DefectGrid & {
    auto it = grids.find(w);
    if (it == grids.end())
      it = grids.emplace(w, wafer::DefectGrid::forWafer(defectsAttr, W, H, w)).first;
    return it->second;
  };
  // An edge PE with no live neighbour cannot pass a stream on.
  auto connected = [&](const wafer::DefectGrid &g, int64_t x, int64_t y) {
    for (int dir = wafer::North; dir <= wafer::West; ++dir) {
      int64_t nx = x, ny = y;
      wafer::stepDir(nx, ny, dir);
      if (!g.linkDead(x, y, dir) && !g.peDead(nx, ny))
        return true;
    }
    return false;
  };
  std::map<std::pair<int64_t, int64_t>, int64_t> onLink; // (wafer, row) -> streams
  for (GraphKernel &k : graph.kernels)
    plan.lastWafer = std::max(plan.lastWafer, k.wafer);

  for (auto [si, s] : llvm::enumerate(graph.streams)) {
    GraphKernel &p = graph.kernels[s.producer];
    int64_t from = p.wafer, last = from;
    std::map<int64_t, SmallVector<Rect, 2>> consumersOn;
    // Back from the last wafer to wafer 0 alone: over the ring's link.
    bool back = llvm::any_of(s.consumers, [&](const auto &read) {
      return graph.kernels[read.first].wafer < from;
    });
    for (auto [i, read] : llvm::enumerate(s.consumers)) {
      GraphKernel &k = graph.kernels[read.first];
      if (back && (from != plan.lastWafer || k.wafer != 0))
        return p.op.emitOpError("stream '")
               << s.port << "' of kernel '" << p.op.getName() << "' on wafer " << from
               << " is read by kernel '" << k.op.getName() << "' on wafer " << k.wafer
               << ": streams between wafers flow forward (wafer i's east edge feeds wafer "
                  "i + 1's west edge), or from the last wafer to wafer 0 alone";
      if (k.x < 0)
        return k.op.emitOpError("kernel '")
               << k.op.getName() << "' has no 'wafer.origin'; run --wsc-place first";
      for (const wskernel::PeBox &box : s.boxes[i])
        consumersOn[k.wafer].push_back({k.x + box.x0, k.y + box.y0, k.x + box.x1, k.y + box.y1});
      last = std::max(last, k.wafer);
    }
    if (back)
      last = from + 1; // one boundary: the last wafer's to wafer 0
    if (last == from)
      continue;
    if (p.x < 0)
      return p.op.emitOpError("kernel '")
             << p.op.getName() << "' has no 'wafer.origin'; run --wsc-place first";
    ++plan.crossingStreams;
    // Where the stream's tree already is on the wafer it leaves.
    SmallVector<Rect, 4> tree = {{p.x + s.srcX, p.y + s.srcY, p.x + s.srcX, p.y + s.srcY}};
    if (auto it = consumersOn.find(from); it != consumersOn.end())
      llvm::append_range(tree, it->second);
    for (int64_t b = from; b < last; ++b) {
      int64_t to = plan.next(b);
      const wafer::DefectGrid &out = grid(b), &in = grid(to);
      // The next wafer with consumers (wafer 0, going back).
      auto next = back ? consumersOn.find(0) : consumersOn.upper_bound(b);
      bool direct = next->first == to;
      int64_t best = -1, dead = 0, full = 0;
      double bestCost = 0;
      for (int64_t y = 0; y < H; ++y) {
        if (out.peDead(W - 1, y) || in.peDead(0, y) || out.offWaferLinkDead(W - 1, y) ||
            in.offWaferLinkDead(0, y) || !connected(out, W - 1, y) || !connected(in, 0, y)) {
          ++dead;
          continue;
        }
        auto it = onLink.find({b, y});
        int64_t used = it == onLink.end() ? 0 : it->second;
        if (used >= K) {
          ++full;
          continue;
        }
        int64_t leave = INT64_MAX, enter = INT64_MAX;
        for (const Rect &r : tree)
          leave = std::min(leave, r.dist(W - 1, y));
        for (const Rect &r : next->second)
          enter = std::min(enter, direct ? r.dist(0, y) : std::max<int64_t>({0, r.y0 - y, y - r.y1}));
        double cost = double(leave + enter) + 2.0 * double(used);
        if (best < 0 || cost < bestCost)
          best = y, bestCost = cost;
      }
      if (best < 0)
        return p.op.emitOpError("cannot route stream '")
               << s.port << "' of kernel '" << p.op.getName() << "' from wafer " << from
               << " to wafer " << (back ? 0 : last) << ": no link from wafer " << b << " to wafer " << to
               << " is left (of " << H << (H == 1 ? " row, " : " rows, ") << dead
               << " dead or cut off at an edge PE or the link, " << full
               << " full: a link carries one stream per color, " << K << ")";
      plan.exitRow[{int(si), b}] = best;
      ++onLink[{b, best}];
      tree = {{0, best, 0, best}};
      if (auto it = consumersOn.find(to); it != consumersOn.end())
        llvm::append_range(tree, it->second);
    }
  }
  return success();
}
