//===- Router.h - the router's pieces, shared by the files of --wsc-route -*- C++ -*-===//
//
// --wsc-route is four files: RouteLinks.cpp plans where streams cross
// wafers (which link row each uses), WaferRouter.cpp routes one wafer and
// RouteColors.cpp colors it, and Route.cpp drives them and writes the IR.
// RadixHeap.h is the searches' queue. Internal to lib/Transforms; the
// route checker shares none of it.
//
// Resources are numbered 8 per PE: 0 ramp in (sent by the core), 1-4 the
// link leaving in direction N, E, S, W, 5 ramp out (delivered to the core),
// 6 the off-wafer link leaving (LINK in an out mask), 7 the off-wafer link
// arriving (an entry whose input is LINK).
//
//===----------------------------------------------------------------------===//
#ifndef WSC_LIB_TRANSFORMS_ROUTER_H
#define WSC_LIB_TRANSFORMS_ROUTER_H

#include "KernelGraph.h"
#include "RadixHeap.h"
#include "wsc/Arch/Defects.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <array>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace wsc::route {

constexpr int kResPerPe = 8;
/// A color's tree is taken in repair once it costs at most this much more
/// than the tree with every link open.
constexpr double kRepairSlack = 1.25;
/// The present-congestion factor when rip-up and reroute begins (the first
/// routes use 0.5); it grows by 1.8 a round. Lower converges in more
/// rounds, higher sticks on the last few links (GPT-2-small's winning try:
/// 27 rounds from 2, 18 from 4, 14 from 8, 6 from 12, 12 from 16; from 24
/// it fails with 133 links over).
constexpr double kNegotiationPresent = 12.0;
constexpr int kRampIn = 0, kRampOut = 5, kLinkOut = 6, kLinkIn = 7;

/// Is resource `r` a PE-to-PE link of the mesh (N, E, S or W)?
inline bool isMeshLink(int32_t r) {
  int k = r % kResPerPe;
  return k >= wafer::North && k <= wafer::West;
}

struct Entry {
  int32_t node;
  uint8_t in;
  uint8_t mask;
};

struct Rect {
  int64_t x0, y0, x1, y1; // inclusive
  bool contains(int64_t x, int64_t y) const { return x >= x0 && x <= x1 && y >= y0 && y <= y1; }
  int64_t dist(int64_t x, int64_t y) const {
    return std::max<int64_t>({0, x0 - x, x - x1}) + std::max<int64_t>({0, y0 - y, y - y1});
  }
  /// This rect grown by `m` on every side, within a W x H grid.
  Rect grown(int64_t m, int64_t W, int64_t H) const {
    return {std::max<int64_t>(0, x0 - m), std::max<int64_t>(0, y0 - m),
            std::min<int64_t>(W - 1, x1 + m), std::min<int64_t>(H - 1, y1 + m)};
  }
};

/// What one color carries on one wafer: a stream's tree there (from the
/// producer, or from the link it enters by) or a channel.
struct Group {
  bool isStream = true;
  int kernel = -1;     // producer, or the channel's kernel
  int stream = -1;     // stream: index in KernelGraph::streams
  std::string channel; // channel: its name
  double demand = 0;   // words per token on each link
  int32_t src = -1;    // stream: the PE where it starts on this wafer
  uint8_t srcIn = 0;   // RAMP (sent by the producer) or LINK (entering the wafer)
  int32_t exit = -1;   // stream: the edge PE it leaves the wafer by, or -1
  int64_t fromWafer = -1, toWafer = -1; // for messages: producer's wafer, next wafer
  std::vector<Rect> targets; // stream: the PEs of each consumer that receive it
  std::vector<Entry> entries;
  std::vector<int32_t> res; // resources used, each once (unsorted)
  int64_t links = 0;        // PE-to-PE hops
  int depth = 0;            // longest source-to-PE path, in hops
  bool ring = false;        // spreads through a ring around its boxes (was over the budget)
  int color = -1;
};


/// Summary figures, summed or maxed over wafers.
struct Stats {
  int64_t totalLength = 0, maxLength = 0, maxColorsPerRouter = 0, entries = 0, groups = 0,
          iterations = 0;
  double maxLinkLoad = 0, loadSum = 0;
  int64_t loadedLinks = 0;
  std::set<int> colors;
  double budget = 0; // the largest link budget a wafer was routed within (0: none)

  /// Adds another wafer's figures.
  void merge(const Stats &o) {
    totalLength += o.totalLength, entries += o.entries, groups += o.groups;
    maxLength = std::max(maxLength, o.maxLength);
    maxColorsPerRouter = std::max(maxColorsPerRouter, o.maxColorsPerRouter);
    iterations = std::max(iterations, o.iterations);
    maxLinkLoad = std::max(maxLinkLoad, o.maxLinkLoad);
    budget = std::max(budget, o.budget);
    loadSum += o.loadSum, loadedLinks += o.loadedLinks;
    colors.insert(o.colors.begin(), o.colors.end());
  }
};

/// Where streams cross wafers. Wafer i's east edge is joined to wafer i+1's
/// west edge, one link per row: PE (W-1, y) of wafer i to PE (0, y) of
/// wafer i+1; the last wafer's east edge is joined to wafer 0's west edge
/// (a ring), which only a generating program's fed-back token takes. A
/// stream whose consumers sit on later wafers leaves each wafer from its
/// producer's up to the one before its last consumer's by one row.
struct LinkPlan {
  /// (stream index, wafer) -> the row of the link it takes to the next wafer.
  std::map<std::pair<int, int64_t>, int64_t> exitRow;
  /// Streams with a consumer on another wafer.
  int64_t crossingStreams = 0;
  /// The last wafer with a kernel.
  int64_t lastWafer = 0;

  int64_t rowOf(int stream, int64_t wafer) const {
    auto it = exitRow.find({stream, wafer});
    return it == exitRow.end() ? -1 : it->second;
  }
  /// The wafer the links leaving `wafer` arrive at.
  int64_t next(int64_t wafer) const { return wafer == lastWafer ? 0 : wafer + 1; }
  /// The row of the link `stream` arrives at `wafer` on, or -1.
  int64_t entryRow(int stream, int64_t wafer) const {
    if (wafer > 0)
      return rowOf(stream, wafer - 1);
    return lastWafer > 0 ? rowOf(stream, lastWafer) : -1;
  }
};

/// Chooses a link row for every stream at every wafer boundary it crosses:
/// the row nearest the tree on the wafer it leaves and the consumers on the
/// wafer it enters, avoiding dead edge PEs, dead links and links that
/// already carry as many streams as there are colors, with a penalty for
/// rows already in use. Errors name the stream and the wafers.
mlir::LogicalResult planLinks(KernelGraph &graph, wafer::ArchAttr arch,
                              wafer::DefectsAttr defects, LinkPlan &plan);

/// Routes and colors one wafer (see WaferRouter.cpp).
class WaferRouter {
public:
  WaferRouter(int64_t wafer, wafer::ArchAttr arch, const wafer::DefectGrid &defects,
              KernelGraph &graph, const LinkPlan &plan, int64_t maxIterations, double budget,
              int64_t extraRounds = 0)
      : wafer(wafer), arch(arch), W(arch.getWidth()), H(arch.getHeight()), K(arch.getColors()),
        defects(defects), graph(graph), plan(plan), maxIterations(maxIterations),
        extraRounds(extraRounds), budget(budget) {}

  mlir::LogicalResult run(Stats &stats);
  /// After a failed run: whether links stayed over the budget (rather than
  /// colors running out), and whether that failure was left unreported.
  bool overBudget = false;
  bool quietOverBudget = false;
  /// Repair trials run two at a time, on two threads.
  bool parallel = false;
  /// The table rows [x, y, color, in, mask], sorted by (y, x, color, in).
  std::vector<std::array<int32_t, 5>> table() const;
  const std::vector<Group> &getGroups() const { return groups; }
  std::vector<Group> takeGroups() { return std::move(groups); }

private:
  int64_t node(int64_t x, int64_t y) const { return y * W + x; }
  Rect rectOf(int k) const {
    const GraphKernel &g = graph.kernels[k];
    return {g.x, g.y, g.x + g.w - 1, g.y + g.h - 1};
  }
  /// The live neighbour of `n` in `dir`, or -1.
  int64_t neighbour(int64_t n, int dir) const {
    int64_t x = n % W, y = n / W;
    if (defects.linkDead(x, y, dir))
      return -1;
    wafer::stepDir(x, y, dir);
    return defects.peDead(x, y) ? -1 : node(x, y);
  }
  double linkCost(int32_t r, double demand) const {
    double over = std::max(0.0, double(occ[r]) + 1 - double(K));
    if (budget > 0)
      over += std::max(0.0, load[r] + demand - budget) / std::max(1.0, demand);
    return (1.0 + hist[r]) * (1.0 + present * over);
  }
  std::string describe(const Group &g) const;
  mlir::InFlightDiagnostic emitAt(const Group &g) const {
    return graph.kernels[g.kernel].op.emitOpError();
  }

  mlir::LogicalResult buildGroups();
  /// A search's open nodes: the cost so far and the PE, by estimated total.
  struct Item {
    float g;
    int32_t n;
  };
  /// A* and tree scratch, stamped so that nothing is cleared per search:
  /// one per thread that routes.
  struct Search {
    std::vector<float> gScore;
    std::vector<uint32_t> seen, inTree;
    std::vector<int32_t> treeIndex;
    std::vector<uint8_t> parentDir;
    std::vector<int> treeDepth;                    // per entry of the group being routed
    std::vector<std::pair<int64_t, int>> joinPath; // treeJoin's
    uint32_t searchStamp = 0, treeStamp = 0;
    RadixHeap<Item> heap;

    void allocate(int64_t nodes) {
      gScore.assign(nodes, 0);
      seen.assign(nodes, 0);
      inTree.assign(nodes, 0);
      treeIndex.assign(nodes, 0);
      parentDir.assign(nodes, 0);
    }
  };
  /// Routes stream `g`; `closed(r)` marks resources it may not use.
  template <typename Closed> bool routeStream(Search &s, Group &g, Closed closed);
  /// Joins the nearest PE of `R` to the tree of `g` by A*; false when cut off.
  template <typename Closed> bool reach(Search &s, Group &g, const Rect &R, Closed closed);
  /// Joins the PEs of `R` to the tree of `g` from the tree inside it (and
  /// for a ring group, around it): breadth-first, or once congestion is
  /// negotiated, cheapest-first over link costs.
  template <typename Closed> void spread(Search &s, Group &g, const Rect &R, Closed closed);
  void treeAdd(Search &s, Group &g, int64_t n, int in, int depth);
  void treeLink(Search &s, Group &g, int64_t from, int dir, int64_t to);
  /// Adds the path the last search found from the tree to `end`.
  void treeJoin(Search &s, Group &g, int64_t end);
  /// Fills `g.res` from its entries.
  void collectResources(Group &g);
  void commit(Group &g, int delta);

  void ripUp(Group &g) {
    commit(g, -1);
    g.entries.clear();
    g.res.clear();
  }
  mlir::LogicalResult routeOrFail(Group &g);
  /// Runs work(0 .. n-1), n <= 2, each on searches[i]: on two threads when
  /// `parallel`. The routes never depend on which.
  void inPairs(size_t n, llvm::function_ref<void(size_t)> work);
  /// Rips up and reroutes streams `todo` in turn, each spreading by the
  /// ring from then on if `ringWhen` it is rerouted.
  mlir::LogicalResult reroute(const std::vector<int> &todo,
                              llvm::function_ref<bool(const Group &)> ringWhen);
  /// Commits repaired stream `g` on `color`.
  bool keepRepair(Group &g, int color);
  std::vector<int32_t> overused() const;
  bool color(std::vector<int> &uncolored);
  bool repair(int gi);
  mlir::LogicalResult fail(const std::vector<int32_t> &over, const std::vector<int> &uncolored);

  int64_t wafer;
  wafer::ArchAttr arch;
  int64_t W, H, K;
  const wafer::DefectGrid &defects;
  KernelGraph &graph;
  const LinkPlan &plan;
  int64_t maxIterations;
  /// Rounds past maxIterations while the overused links keep falling.
  int64_t extraRounds;
  int64_t rounds = 0;           ///< rounds run, for the error
  int64_t committedEntries = 0; ///< router entries of every route committed (work done)
  double budget;
  double present = 0.5;
  bool negotiating = false; // spread inside consumers by cost, not breadth-first

  std::vector<Group> groups;
  std::vector<uint16_t> occ;
  // commit()'s dedupe: resource r was added to the group of stamp resSeen[r].
  std::vector<uint32_t> resSeen;
  uint32_t resStamp = 0;
  std::vector<float> load, hist;
  std::vector<uint64_t> colorMask; // during repair: colors present on each resource
  /// The first routes the main thread's; a pair of reroutes or of repair
  /// trials one each (the second allocated when first used).
  Search searches[2];
};

} // namespace wsc::route

#endif // WSC_LIB_TRANSFORMS_ROUTER_H
