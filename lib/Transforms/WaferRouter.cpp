//===- WaferRouter.cpp - streams and channels through one wafer's routers --===//
//
// A color group is what one color carries on one wafer: a stream's tree
// there (from the producer's last PE, or from the edge PE it enters the
// wafer by, to every PE of every consumer on the wafer and to the edge PE
// it leaves by for the next wafer) or a channel (fixed neighbour hops
// inside one kernel). Per wafer:
//  1. Channels take their fixed hops. Streams grow trees: consumers in order
//     of distance, then the exit; each is joined to the nearest node of the
//     tree so far by A* over link costs (1 + history) * (1 + present *
//     overuse), and a consumer is then covered by a spread inside its
//     rectangle.
//  2. PathFinder: while a link carries more groups than there are colors, or
//     more words per token than the link budget, rip up the groups on
//     overused links, raise the history cost of those links and the weight
//     of present congestion, and reroute them.
//  3. Colors: DSATUR coloring of the conflict graph (groups that share a
//     directed link, a ramp, or an off-wafer link end; RouteColors.cpp). A group left
//     without a color is rerouted on each color in turn, with the links of
//     that color's groups closed, until one costs no more than its tree with
//     no link closed; failing that, its shared links get more history and it
//     is rerouted in the next round.
//
//===----------------------------------------------------------------------===//
#include "Router.h"
#include "wsc/Support/Progress.h"

#include "mlir/IR/Threading.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <deque>

using namespace mlir;
using namespace wsc;
using namespace wsc::route;

/// At most this many overused links let routing go past max-iterations
/// (extra-rounds).
static constexpr size_t kFewOverused = 100;
/// Rounds without a new fewest count of overused links before the streams
/// within kStallRadius PEs of them are rerouted as well.
static constexpr int64_t kStallRounds = 2;
static constexpr int64_t kStallRadius = 3;
/// How far past the bounding box of its tree on open links a repair's
/// tree on one color may go.
static constexpr int64_t kRepairMargin = 8;

std::string WaferRouter::describe(const Group &g) const {
  std::string s;
  llvm::raw_string_ostream os(s);
  StringRef name = graph.kernels[g.kernel].op.getName();
  if (g.isStream) {
    os << "stream '" << graph.streams[g.stream].port << "' of kernel '" << name << "'";
    if (g.fromWafer != wafer)
      os << " (from wafer " << g.fromWafer << ")";
  }
  else
    os << "channel '" << g.channel << "' of kernel '" << name << "'";
  return s;
}

LogicalResult WaferRouter::buildGroups() {
  for (auto [ki, k] : llvm::enumerate(graph.kernels)) {
    if (k.wafer != wafer)
      continue;
    if (k.x < 0)
      return k.op.emitOpError("kernel '")
             << k.op.getName() << "' has no 'wafer.origin'; run --wsc-place first";
    Rect r = rectOf(ki);
    if (r.x1 >= W || r.y1 >= H)
      return k.op.emitOpError("kernel '")
             << k.op.getName() << "' leaves the " << W << "x" << H << " grid";
    for (int64_t y = r.y0; y <= r.y1; ++y)
      for (int64_t x = r.x0; x <= r.x1; ++x)
        if (defects.peDead(x, y))
          return k.op.emitOpError("kernel '")
                 << k.op.getName() << "' covers the dead PE (" << x << ", " << y << ")";
    // Channels: fixed hops.
    for (NamedAttribute ch : k.op.getChannels()) {
      Group g;
      g.isStream = false;
      g.kernel = ki;
      g.channel = ch.getName().str();
      for (const wskernel::ChannelHop &hop : wskernel::channelHops(k.op, g.channel)) {
        int64_t x = r.x0 + hop.px, y = r.y0 + hop.py;
        int dir = hop.dx > 0 ? wafer::East : hop.dx < 0 ? wafer::West
                : hop.dy > 0 ? wafer::South : wafer::North;
        if (defects.linkDead(x, y, dir))
          return k.op.emitOpError("channel '")
                 << g.channel << "' of kernel '" << k.op.getName() << "' needs the dead link "
                 << wafer::portLetter(dir) << " of PE (" << x << ", " << y << ")";
        g.entries.push_back({int32_t(node(x, y)), wafer::Ramp, uint8_t(1 << dir)});
        g.entries.push_back({int32_t(node(x + hop.dx, y + hop.dy)),
                             uint8_t(wafer::oppositeDir(dir)), uint8_t(1 << wafer::Ramp)});
        ++g.links;
        g.depth = 1;
      }
      groups.push_back(std::move(g));
    }
  }
  for (auto [si, s] : llvm::enumerate(graph.streams)) {
    // On this wafer: sent by its producer here, or entering over a link.
    int64_t from = graph.kernels[s.producer].wafer;
    int64_t entryRow = plan.entryRow(si, wafer);
    if (from != wafer && entryRow < 0)
      continue;
    Group g;
    g.kernel = s.producer;
    g.stream = si;
    g.demand = double(s.size);
    g.fromWafer = from;
    if (from == wafer) {
      Rect pr = rectOf(s.producer);
      g.src = node(pr.x0 + s.srcX, pr.y0 + s.srcY);
      g.srcIn = wafer::Ramp;
    } else {
      g.src = node(0, entryRow);
      g.srcIn = wafer::Link;
    }
    if (int64_t exitRow = plan.rowOf(si, wafer); exitRow >= 0) {
      g.exit = node(W - 1, exitRow);
      g.toWafer = plan.next(wafer);
    }
    // The receiving PEs of each consumer, box by box.
    for (auto [i, read] : llvm::enumerate(s.consumers)) {
      if (graph.kernels[read.first].wafer != wafer)
        continue;
      Rect k = rectOf(read.first);
      for (const wskernel::PeBox &b : s.boxes[i])
        g.targets.push_back({k.x0 + b.x0, k.y0 + b.y0, k.x0 + b.x1, k.y0 + b.y1});
    }
    if (g.targets.empty() && g.exit < 0)
      continue;
    // Nearest consumers first; each later one joins the tree where it is
    // closest, and the exit joins last.
    int64_t sx = g.src % W, sy = g.src / W;
    llvm::stable_sort(g.targets,
                      [&](const Rect &a, const Rect &b) { return a.dist(sx, sy) < b.dist(sx, sy); });
    groups.push_back(std::move(g));
  }
  return success();
}

void WaferRouter::treeAdd(Search &s, Group &g, int64_t n, int in, int depth) {
  s.inTree[n] = s.treeStamp;
  s.treeIndex[n] = g.entries.size();
  g.entries.push_back({int32_t(n), uint8_t(in), 0});
  s.treeDepth.push_back(depth);
}

void WaferRouter::treeLink(Search &s, Group &g, int64_t from, int dir, int64_t to) {
  int idx = s.treeIndex[from];
  g.entries[idx].mask |= 1 << dir;
  treeAdd(s, g, to, wafer::oppositeDir(dir), s.treeDepth[idx] + 1);
  ++g.links;
}

void WaferRouter::treeJoin(Search &s, Group &g, int64_t end) {
  // The search's parent directions lead from `end` back to the tree; the
  // links are added from the tree out.
  s.joinPath.clear();
  for (int64_t v = end; s.inTree[v] != s.treeStamp;) {
    int dir = s.parentDir[v];
    int64_t ux = v % W, uy = v / W;
    wafer::stepDir(ux, uy, wafer::oppositeDir(dir));
    v = node(ux, uy);
    s.joinPath.push_back({v, dir});
  }
  for (auto it = s.joinPath.rbegin(); it != s.joinPath.rend(); ++it) {
    int64_t tx = it->first % W, ty = it->first / W;
    wafer::stepDir(tx, ty, it->second);
    treeLink(s, g, it->first, it->second, node(tx, ty));
  }
}

template <typename Closed>
bool WaferRouter::reach(Search &s, Group &g, const Rect &R, Closed closed) {
  for (const Entry &e : g.entries)
    if (R.contains(e.node % W, e.node / W))
      return true;
  // A* from every tree node to the nearest PE of R.
  ++s.searchStamp;
  s.heap.clear();
  for (const Entry &e : g.entries) {
    s.seen[e.node] = s.searchStamp;
    s.gScore[e.node] = 0;
    s.parentDir[e.node] = 0;
    s.heap.push(float(R.dist(e.node % W, e.node / W)), {0, e.node});
  }
  int64_t target = -1;
  while (!s.heap.empty()) {
    Item it = s.heap.pop().second;
    if (it.g > s.gScore[it.n])
      continue;
    int64_t ux = it.n % W, uy = it.n / W;
    if (R.contains(ux, uy)) {
      target = it.n;
      break;
    }
    for (int dir = wafer::North; dir <= wafer::West; ++dir) {
      int64_t v = neighbour(it.n, dir);
      if (v < 0 || s.inTree[v] == s.treeStamp)
        continue;
      int32_t r = int32_t(it.n * kResPerPe + dir);
      if (closed(r))
        continue;
      float ng = it.g + float(linkCost(r, g.demand));
      if (s.seen[v] != s.searchStamp || ng < s.gScore[v]) {
        s.seen[v] = s.searchStamp;
        s.gScore[v] = ng;
        s.parentDir[v] = dir;
        s.heap.push(ng + float(R.dist(v % W, v / W)), {ng, int32_t(v)});
      }
    }
  }
  if (target < 0)
    return false;
  treeJoin(s, g, target);
  return true;
}

template <typename Closed>
void WaferRouter::spread(Search &s, Group &g, const Rect &R, Closed closed) {
  if (!negotiating) {
    std::deque<int64_t> queue;
    for (const Entry &e : g.entries)
      if (R.contains(e.node % W, e.node / W))
        queue.push_back(e.node);
    while (!queue.empty()) {
      int64_t u = queue.front();
      queue.pop_front();
      for (int dir = wafer::North; dir <= wafer::West; ++dir) {
        int64_t v = neighbour(u, dir);
        if (v < 0 || s.inTree[v] == s.treeStamp || !R.contains(v % W, v / W) ||
            closed(int32_t(u * kResPerPe + dir)))
          continue;
        treeLink(s, g, u, dir, v);
        queue.push_back(v);
      }
    }
    return;
  }
  // Cheapest paths from the tree to every PE of R, through R and, for a
  // stream that was over the words budget, a ring of one PE around it: a
  // stream whose entry PE's links are full (three blocks entering one
  // corner, each reaching all of R) can go round the outside and enter R
  // elsewhere. Only the paths to PEs of R join the tree. (The ring is other
  // kernels' room: every stream in it would cost their streams colors.)
  Rect E = R.grown(g.ring ? 1 : 0, W, H);
  ++s.searchStamp;
  s.heap.clear();
  for (const Entry &e : g.entries) {
    if (!E.contains(e.node % W, e.node / W))
      continue;
    s.seen[e.node] = s.searchStamp, s.gScore[e.node] = 0;
    s.heap.push(0, {0, e.node});
  }
  while (!s.heap.empty()) {
    Item it = s.heap.pop().second;
    if (it.g > s.gScore[it.n])
      continue;
    for (int dir = wafer::North; dir <= wafer::West; ++dir) {
      int64_t v = neighbour(it.n, dir);
      int32_t r = int32_t(it.n * kResPerPe + dir);
      if (v < 0 || s.inTree[v] == s.treeStamp || !E.contains(v % W, v / W) || closed(r))
        continue;
      float ng = it.g + float(linkCost(r, g.demand));
      if (s.seen[v] != s.searchStamp || ng < s.gScore[v]) {
        s.seen[v] = s.searchStamp, s.gScore[v] = ng, s.parentDir[v] = dir;
        s.heap.push(ng, {ng, int32_t(v)});
      }
    }
  }
  // Join each PE of R that the search reached by its path.
  for (int64_t y = R.y0; y <= R.y1; ++y)
    for (int64_t x = R.x0; x <= R.x1; ++x)
      if (s.seen[node(x, y)] == s.searchStamp)
        treeJoin(s, g, node(x, y));
}

template <typename Closed> bool WaferRouter::routeStream(Search &s, Group &g, Closed closed) {
  g.entries.clear();
  g.res.clear();
  g.links = 0;
  g.depth = 0;
  ++s.treeStamp;
  s.treeDepth.clear();
  if (closed(int32_t(g.src * kResPerPe + (g.srcIn == wafer::Link ? kLinkIn : kRampIn))))
    return false;
  treeAdd(s, g, g.src, g.srcIn, 0);

  for (const Rect &R : g.targets) {
    if (!reach(s, g, R, closed))
      return false;
    spread(s, g, R, closed);
    for (int64_t y = R.y0; y <= R.y1; ++y)
      for (int64_t x = R.x0; x <= R.x1; ++x) {
        int64_t n = node(x, y);
        if (s.inTree[n] != s.treeStamp || closed(int32_t(n * kResPerPe + kRampOut)))
          return false;
        g.entries[s.treeIndex[n]].mask |= 1 << wafer::Ramp;
      }
  }
  // On to the next wafer: the exit PE forwards to LINK.
  if (g.exit >= 0) {
    Rect R{g.exit % W, g.exit / W, g.exit % W, g.exit / W};
    if (!reach(s, g, R, closed) || closed(int32_t(g.exit * kResPerPe + kLinkOut)))
      return false;
    g.entries[s.treeIndex[g.exit]].mask |= 1 << wafer::Link;
  }
  for (int d : s.treeDepth)
    g.depth = std::max(g.depth, d);
  return true;
}

/// Adds (+1) or removes (-1) the group's use of resources.
void WaferRouter::collectResources(Group &g) {
  // Each resource once, in the order the entries first use it (a stamp
  // per resource instead of sorting: groups are large).
  if (resSeen.size() != occ.size() || ++resStamp == 0)
    resSeen.assign(occ.size(), 0), resStamp = 1;
  g.res.clear();
  auto add = [&](int32_t r) {
    if (resSeen[r] != resStamp)
      resSeen[r] = resStamp, g.res.push_back(r);
  };
  for (const Entry &e : g.entries) {
    if (e.in == wafer::Ramp)
      add(e.node * kResPerPe + kRampIn);
    else if (e.in == wafer::Link)
      add(e.node * kResPerPe + kLinkIn);
    for (int p = 0; p <= wafer::Link; ++p)
      if (e.mask >> p & 1)
        add(e.node * kResPerPe + (p == wafer::Ramp ? kRampOut : p == wafer::Link ? kLinkOut : p));
  }
}

void WaferRouter::commit(Group &g, int delta) {
  if (delta > 0) {
    collectResources(g);
    committedEntries += int64_t(g.entries.size());
  }
  for (int32_t r : g.res) {
    occ[r] += delta;
    if (isMeshLink(r))
      load[r] += float(delta * g.demand);
  }
}

LogicalResult WaferRouter::routeOrFail(Group &g) {
  if (routeStream(searches[0], g, [](int32_t) { return false; })) {
    commit(g, +1);
    return success();
  }
  if (g.exit < 0 && g.srcIn == wafer::Ramp)
    return emitAt(g) << "cannot route " << describe(g)
                     << ": dead PEs or links cut its producer off from a consumer";
  // Which part is cut off: the consumers, or the exit to the next wafer.
  Group local = g;
  local.exit = -1;
  bool consumersOk = routeStream(searches[0], local, [](int32_t) { return false; });
  auto diag = emitAt(g) << "cannot route " << describe(g) << " on wafer " << wafer
                        << ": dead PEs or links cut ";
  if (g.srcIn == wafer::Link)
    diag << "its entry PE (" << g.src % W << ", " << g.src / W << ")";
  else
    diag << "its producer";
  if (!consumersOk)
    return diag << " off from a consumer";
  return diag << " off from its exit PE (" << g.exit % W << ", " << g.exit / W << ") to wafer "
              << g.toWafer;
}

void WaferRouter::inPairs(size_t n, llvm::function_ref<void(size_t)> work) {
  if (n > 1 && searches[1].seen.empty())
    searches[1].allocate(W * H);
  if (n > 1 && parallel)
    mlir::parallelFor(arch.getContext(), 0, n, work);
  else
    for (size_t i = 0; i < n; ++i)
      work(i);
}

LogicalResult WaferRouter::reroute(const std::vector<int> &todo,
                                   llvm::function_ref<bool(const Group &)> ringWhen) {
  for (int gi : todo) {
    Group &g = groups[gi];
    g.ring |= ringWhen(g);
    ripUp(g);
    if (failed(routeOrFail(g)))
      return failure();
  }
  return success();
}

std::vector<int32_t> WaferRouter::overused() const {
  std::vector<int32_t> over;
  for (int32_t r = 0, e = int32_t(occ.size()); r < e; ++r) {
    if (!isMeshLink(r) || !occ[r])
      continue;
    if (occ[r] > K || (budget > 0 && load[r] > budget * (1 + 1e-9)))
      over.push_back(r);
  }
  return over;
}

/// Tries to reroute uncolored stream `gi` on one color, with the links of
/// that color's groups closed. Keeps the cheapest success.
bool WaferRouter::repair(int gi) {
  Group &g = groups[gi];
  if (!g.isStream)
    return false;
  ripUp(g);
  auto treeCost = [&](const Group &t) {
    double cost = 0;
    for (const Entry &e : t.entries)
      for (int p = wafer::North; p <= wafer::West; ++p)
        if (e.mask >> p & 1)
          cost += linkCost(e.node * kResPerPe + p, g.demand);
    return cost;
  };
  // The tree with no link closed: a color whose tree costs no more has
  // nothing to gain from the colors after it.
  Group open = g;
  bool opened = routeStream(searches[0], open, [](int32_t) { return false; });
  double unconstrained = opened ? treeCost(open) : 0;
  // A color's tree stays near the open one: where it would have to go far
  // round, another color does better, and a search that cannot finish
  // ends at the box instead of visiting the whole wafer.
  Rect box{0, 0, W - 1, H - 1};
  if (opened) {
    box = {W, H, -1, -1};
    for (const Entry &e : open.entries)
      box = {std::min(box.x0, e.node % W), std::min(box.y0, e.node / W),
             std::max(box.x1, e.node % W), std::max(box.y1, e.node / W)};
    box = box.grown(kRepairMargin, W, H);
  }
  // Colors in the order of how few of that tree's resources they already
  // hold: the freest usually routes nearly as cheaply as the open tree,
  // and each color tried is a whole reroute. A color that holds none of
  // them takes the open tree as it is.
  collectResources(open);
  std::vector<std::pair<int64_t, int>> order;
  for (int c = 0; c < K; ++c) {
    uint64_t bit = uint64_t(1) << c;
    order.push_back({llvm::count_if(open.res, [&](int32_t r) { return colorMask[r] & bit; }), c});
  }
  llvm::stable_sort(order);
  if (opened && order.front().first == 0) {
    g = std::move(open);
    return keepRepair(g, order.front().second);
  }
  // Two colors are tried at a time and judged in order, as one at a time
  // would: the first that costs little enough ends the search.
  Group best;
  double bestCost = 0;
  int bestColor = -1;
  for (size_t k = 0; k < order.size(); k += 2) {
    size_t n = std::min<size_t>(2, order.size() - k);
    Group trials[2] = {g, g};
    bool routed[2] = {false, false};
    inPairs(n, [&](size_t i) {
      uint64_t bit = uint64_t(1) << order[k + i].second;
      routed[i] = routeStream(searches[i], trials[i], [&](int32_t r) {
        return (colorMask[r] & bit) || !box.contains(r / kResPerPe % W, r / kResPerPe / W);
      });
    });
    bool enough = false;
    for (size_t i = 0; i < n && !enough; ++i) {
      if (!routed[i])
        continue;
      double cost = treeCost(trials[i]);
      if (bestColor < 0 || cost < bestCost)
        best = std::move(trials[i]), bestCost = cost, bestColor = order[k + i].second;
      enough = bestCost <= unconstrained * kRepairSlack;
    }
    if (enough)
      break;
  }
  if (bestColor < 0) {
    (void)routeOrFail(g); // put it back: it stays uncolored
    return false;
  }
  g = std::move(best);
  return keepRepair(g, bestColor);
}

bool WaferRouter::keepRepair(Group &g, int color) {
  g.color = color;
  commit(g, +1);
  for (int32_t r : g.res)
    colorMask[r] |= uint64_t(1) << color;
  return true;
}

LogicalResult WaferRouter::fail(const std::vector<int32_t> &over,
                                const std::vector<int> &uncolored) {
  // The group to blame: the uncolored one, or the one on most overused links.
  int blame = -1;
  std::vector<int32_t> region = over;
  if (!over.empty()) {
    // The worst links, the stream on most of them, and its part of them.
    auto excess = [&](int32_t r) {
      return std::max(double(occ[r]) - double(K),
                      budget > 0 ? (load[r] - budget) / std::max(1.0, budget) : 0.0);
    };
    double worst = 0;
    for (int32_t r : over)
      worst = std::max(worst, excess(r));
    std::vector<int32_t> worstLinks;
    for (int32_t r : over)
      if (excess(r) >= worst * 0.999)
        worstLinks.push_back(r);
    llvm::sort(worstLinks);
    auto isWorst = [&](int32_t r) {
      return std::binary_search(worstLinks.begin(), worstLinks.end(), r);
    };
    std::vector<int> count(groups.size(), 0);
    for (auto [gi, g] : llvm::enumerate(groups))
      for (int32_t r : g.res)
        count[gi] += isWorst(r);
    for (size_t gi = 0; gi < groups.size(); ++gi)
      if (groups[gi].isStream && (blame < 0 || count[gi] > count[blame]))
        blame = gi;
    region.clear();
    for (int32_t r : groups[blame].res)
      if (isWorst(r))
        region.push_back(r);
    if (region.empty())
      region = worstLinks;
  } else {
    blame = uncolored.front();
    for (int gi : uncolored)
      if (groups[gi].isStream) {
        blame = gi;
        break;
      }
    for (int32_t r : groups[blame].res)
      if (occ[r] > 1 && isMeshLink(r))
        region.push_back(r);
    if (region.empty())
      region = groups[blame].res;
  }
  int64_t x0 = W, y0 = H, x1 = -1, y1 = -1;
  for (int32_t r : region) {
    int64_t n = r / kResPerPe, x = n % W, y = n / W;
    int64_t nx = x, ny = y;
    if (r % kResPerPe >= wafer::North && r % kResPerPe <= wafer::West)
      wafer::stepDir(nx, ny, r % kResPerPe);
    x0 = std::min({x0, x, nx}), x1 = std::max({x1, x, nx});
    y0 = std::min({y0, y, ny}), y1 = std::max({y1, y, ny});
  }
  const Group &g = groups[blame];
  overBudget = budget > 0 && llvm::all_of(over, [&](int32_t r) { return occ[r] <= K; }) &&
               !over.empty();
  if (overBudget && quietOverBudget)
    return failure();
  auto diag = emitAt(g) << "cannot route " << describe(g) << " on wafer " << wafer << ": ";
  if (!over.empty()) {
    diag << over.size() << (over.size() == 1 ? " link stays" : " links stay") << " over capacity ("
         << K << " colors";
    if (budget > 0)
      diag << ", " << int64_t(budget) << " words per token";
    diag << ")";
  } else {
    diag << "its routes conflict with groups that take all " << K << " colors";
  }
  diag << " after " << rounds << " rounds; most congested region x " << x0 << ".." << x1
       << ", y " << y0 << ".." << y1;
  return failure();
}

LogicalResult WaferRouter::run(Stats &stats) {
  if (failed(buildGroups()))
    return failure();
  int64_t nodes = W * H;
  occ.assign(nodes * kResPerPe, 0);
  load.assign(nodes * kResPerPe, 0);
  hist.assign(nodes * kResPerPe, 0);
  searches[0].allocate(nodes);

  for (Group &g : groups) {
    if (!g.isStream)
      commit(g, +1);
    else if (failed(routeOrFail(g)))
      return failure();
  }
  // Ramps are fixed by placement, and link ends by the link plan: more
  // groups than colors there is final.
  int32_t worst = -1;
  for (int32_t r = 0, e = int32_t(occ.size()); r < e; ++r) {
    int k = r % kResPerPe;
    if ((k == kRampIn || k == kRampOut) && occ[r] > K && (worst < 0 || occ[r] > occ[worst]))
      worst = r;
    if ((k == kLinkIn || k == kLinkOut) && occ[r] > K)
      for (const Group &g : groups)
        if (llvm::is_contained(g.res, r))
          return emitAt(g) << "cannot route " << describe(g) << ": " << occ[r] << " streams "
                           << (k == kLinkIn ? "enter wafer " : "leave wafer ") << wafer
                           << " by the link of PE (" << r / kResPerPe % W << ", "
                           << r / kResPerPe / W << "), but arch '" << arch.getName() << "' has "
                           << K << " colors";
  }
  if (worst >= 0) {
    int64_t n = worst / kResPerPe;
    for (auto [ki, kk] : llvm::enumerate(graph.kernels))
      if (kk.wafer == wafer && rectOf(ki).contains(n % W, n / W))
        return kk.op.emitOpError("kernel '")
               << kk.op.getName() << "' needs " << occ[worst] << " colors "
               << (worst % kResPerPe == kRampIn ? "sent from" : "delivered to") << " its PE ("
               << n % W << ", " << n / W << ") (streams and channels), but arch '" << arch.getName()
               << "' has " << K;
  }

  std::vector<int> uncolored;
  std::vector<int32_t> over;
  int64_t iter = 0;
  bool done = false;
  // Past maxIterations, rounds go on while few links are over, the fewest
  // so far fell within 12 rounds, and the rounds past it have routed less
  // than a quarter of what the first ones did (router entries committed,
  // the initial routes included): PathFinder's tail is noisy but converges,
  // and when few streams move a round is cheap (GPT-2-small at 0.925 of
  // wse3: 21 links over after 12 rounds, 2 after 19, 1 after 29, none after
  // 36; GPT-3 1.3B at 0.925 with 24 blocks moved big trees every round and
  // stayed a link over for 28 more rounds, 5 minutes).
  size_t fewest = SIZE_MAX;
  int64_t fewestAt = 0, routedBefore = 0;
  // Negotiation starts from a present cost well above the first routes':
  // most of what is over then is links inside consumers carrying more
  // than the budget, which a weak push spreads only over many rounds.
  present = kNegotiationPresent;
  for (; !done; ++iter) {
    progress::setRound(iter + 1);
    over = overused();
    if (over.size() < fewest)
      fewest = over.size(), fewestAt = iter;
    if (iter == maxIterations)
      routedBefore = committedEntries;
    if (iter >= maxIterations &&
        (iter >= maxIterations + extraRounds || over.size() > kFewOverused ||
         iter - fewestAt >= 12 || 4 * (committedEntries - routedBefore) > routedBefore))
      break;
    if (!over.empty()) {
      // PathFinder: history on overused links, stronger present cost, reroute.
      std::vector<char> bad(occ.size(), 0);
      for (int32_t r : over) {
        double excess = std::max(0.0, double(occ[r]) - double(K));
        if (budget > 0)
          excess += std::max(0.0, (load[r] - budget) / budget);
        hist[r] += float(1.0 + excess);
        bad[r] = 1;
      }
      present = std::min(present * 1.8, 1e6);
      negotiating = true;
      // Stalled on a few links (the last of a cut a little short of the
      // demand across it, passed back and forth between two streams): the
      // streams near them are rerouted too, so that those not on the
      // overused links make room.
      std::vector<char> near = bad;
      if (iter - fewestAt >= kStallRounds && over.size() <= kFewOverused)
        for (int32_t r : over) {
          int64_t x = r / kResPerPe % W, y = r / kResPerPe / W;
          Rect box = Rect{x, y, x, y}.grown(kStallRadius, W, H);
          for (int64_t ny = box.y0; ny <= box.y1; ++ny)
            for (int64_t nx = box.x0; nx <= box.x1; ++nx)
              for (int dir = wafer::North; dir <= wafer::West; ++dir)
                near[node(nx, ny) * kResPerPe + dir] = 1;
        }
      std::vector<int> todo;
      for (auto [gi, g] : llvm::enumerate(groups))
        if (g.isStream && llvm::any_of(g.res, [&](int32_t r) { return near[r]; }))
          todo.push_back(gi);
      // Over the words budget (not the colors) as it is rerouted: may
      // spread by the ring.
      auto overBudget = [&](const Group &g) {
        return budget > 0 && llvm::any_of(g.res, [&](int32_t r) {
                 return bad[r] && load[r] > budget * (1 + 1e-9);
               });
      };
      if (failed(reroute(todo, overBudget)))
        return failure();
      continue;
    }
    if (color(uncolored)) {
      done = true;
      break;
    }
    // Repair: reroute each uncolored stream on a color that has room.
    colorMask.assign(occ.size(), 0);
    for (Group &g : groups)
      if (g.color >= 0)
        for (int32_t r : g.res)
          colorMask[r] |= uint64_t(1) << g.color;
    std::vector<int> still;
    for (int gi : uncolored)
      if (!repair(gi))
        still.push_back(gi);
    colorMask.clear();
    colorMask.shrink_to_fit();
    uncolored = still;
    if (uncolored.empty() && overused().empty()) {
      done = true;
      break;
    }
    // Push the rest apart: history on every shared link of theirs (and of
    // the streams that share a channel's links), then reroute them.
    std::vector<char> rip(groups.size(), 0);
    for (int gi : uncolored) {
      for (int32_t r : groups[gi].res)
        if (occ[r] > 1 && isMeshLink(r))
          hist[r] += 2.0f;
      if (groups[gi].isStream) {
        rip[gi] = 1;
      } else {
        std::vector<int32_t> mine = groups[gi].res;
        for (auto [oi, o] : llvm::enumerate(groups))
          if (o.isStream && llvm::any_of(o.res, [&](int32_t r) {
                return std::binary_search(mine.begin(), mine.end(), r);
              }))
            rip[oi] = 1;
      }
    }
    present = std::min(present * 1.8, 1e6);
    negotiating = true;
    std::vector<int> todo;
    for (size_t gi = 0; gi < groups.size(); ++gi)
      if (rip[gi])
        todo.push_back(gi);
    if (failed(reroute(todo, [](const Group &) { return false; })))
      return failure();
  }
  rounds = iter;
  if (!done) {
    over = overused();
    if (!over.empty() || !color(uncolored))
      return fail(over, uncolored);
  }

  // Figures.
  stats.iterations = std::max(stats.iterations, iter + 1);
  stats.groups += groups.size();
  for (const Group &g : groups) {
    stats.totalLength += g.links;
    if (g.isStream)
      stats.maxLength = std::max<int64_t>(stats.maxLength, g.depth);
    stats.colors.insert(g.color);
  }
  for (int32_t r = 0, e = int32_t(occ.size()); r < e; ++r) {
    if (!isMeshLink(r) || !occ[r])
      continue;
    stats.maxLinkLoad = std::max(stats.maxLinkLoad, double(load[r]));
    stats.loadSum += load[r];
    ++stats.loadedLinks;
  }
  return success();
}

std::vector<std::array<int32_t, 5>> WaferRouter::table() const {
  // Counting sort by PE (node = y * W + x is the (y, x) order), then the
  // few rows of each PE by (color, in).
  std::vector<int32_t> start(W * H + 1, 0);
  size_t n = 0;
  for (const Group &g : groups)
    for (const Entry &e : g.entries)
      ++start[e.node + 1], ++n;
  for (int64_t c = 0; c < W * H; ++c)
    start[c + 1] += start[c];
  std::vector<std::array<int32_t, 5>> rows(n);
  for (const Group &g : groups)
    for (const Entry &e : g.entries)
      rows[start[e.node]++] = {int32_t(e.node % W), int32_t(e.node / W), int32_t(g.color), e.in,
                               e.mask};
  auto byColorIn = [](const auto &a, const auto &b) {
    return std::make_pair(a[2], a[3]) < std::make_pair(b[2], b[3]);
  };
  // start[c] now ends PE c's rows (and begins PE c + 1's).
  for (int64_t c = 0, from = 0; c < W * H; from = start[c++])
    if (start[c] - from > 1)
      std::sort(rows.begin() + from, rows.begin() + start[c], byColorIn);
  return rows;
}
