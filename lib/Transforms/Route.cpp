//===- Route.cpp - streams and channels through the routers, with colors --===//
//
// --wsc-route, the driver:
//  1. RouteLinks.cpp plans the link rows of every stream that crosses
//     wafers (wafer i's east edge feeds wafer i+1's west edge).
//  2. WaferRouter.cpp routes and colors every wafer on its own: channels,
//     and one tree per stream per wafer it reaches (from its producer or
//     from the link it enters by, to its consumers there and to the link
//     it leaves by). A stream may have a different color on each wafer.
//  3. Here: the tables (`wafer.routes`, one per wafer), the links with the
//     colors at both ends (`wafer.links`), `wafer.colors` on every kernel
//     and `wafer.route_stats` on the module.
//
//===----------------------------------------------------------------------===//
#include "wsc/Arch/Arch.h"
#include "wsc/Transforms/Passes.h"

#include "Router.h"

#include "mlir/IR/Threading.h"

#include <cmath>

namespace wsc {
#define GEN_PASS_DEF_WSCROUTE
#include "wsc/Transforms/Passes.h.inc"
} // namespace wsc

using namespace mlir;
using namespace wsc;
using namespace wsc::route;

namespace {

struct RoutePass : wsc::impl::WscRouteBase<RoutePass> {
  using WscRouteBase::WscRouteBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    auto arch = wafer::getArch(module);
    if (failed(arch))
      return signalPassFailure();
    auto graph = KernelGraph::build(module, *arch);
    if (failed(graph))
      return signalPassFailure();
    for (wafer::RoutesOp old : llvm::make_early_inc_range(module.getOps<wafer::RoutesOp>()))
      old.erase();
    for (wafer::LinksOp old : llvm::make_early_inc_range(module.getOps<wafer::LinksOp>()))
      old.erase();

    LinkPlan plan;
    if (failed(planLinks(*graph, *arch, wafer::getDefects(module), plan)))
      return signalPassFailure();
    // Every wafer with a kernel, or that a stream passes through.
    std::set<int64_t> wafers;
    double slowest = 0;
    for (GraphKernel &k : graph->kernels) {
      wafers.insert(k.wafer);
      slowest = std::max(slowest, k.op.getCyclesPerToken().convertToDouble());
    }
    for (const auto &[key, row] : plan.exitRow)
      wafers.insert({key.second, plan.next(key.second)});
    double budget = linkBudget < 0 ? 0 : linkBudget > 0 ? double(linkBudget) : std::ceil(slowest);
    // No link carries more than every stream's words: past that, a budget
    // cannot be what fails.
    double allWords = 0;
    for (const GraphStream &s : graph->streams)
      allWords += double(s.size);

    Stats stats;
    std::vector<llvm::SmallVector<NamedAttribute>> colors(graph->kernels.size());
    std::map<std::pair<int, int64_t>, int> streamColor; // (stream, wafer) -> color
    Builder b(ctx);
    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    // One wafer's colors, table and figures into the module.
    auto addWafer = [&](int64_t waferIndex, const Stats &waferStats,
                        const std::vector<Group> &groups,
                        const std::vector<std::array<int32_t, 5>> &rows) {
      stats.merge(waferStats);
      for (const Group &g : groups) {
        auto c = b.getI64IntegerAttr(g.color);
        if (!g.isStream) {
          colors[g.kernel].push_back(b.getNamedAttr(g.channel, c));
          continue;
        }
        streamColor[{g.stream, waferIndex}] = g.color;
        if (g.srcIn == wafer::Ramp)
          colors[g.kernel].push_back(b.getNamedAttr(graph->streams[g.stream].port, c));
        // Consumer ports here take the color the stream has on this wafer.
        for (auto &[ck, port] : graph->streams[g.stream].consumers)
          if (graph->kernels[ck].wafer == waferIndex)
            colors[ck].push_back(b.getNamedAttr(port, c));
      }
      std::vector<int32_t> flat;
      flat.reserve(rows.size() * 5);
      int64_t routerColors = 0;
      for (size_t i = 0; i < rows.size(); ++i) {
        flat.insert(flat.end(), rows[i].begin(), rows[i].end());
        // Distinct colors of this PE: rows of a PE are contiguous, colors sorted.
        bool newPe = i == 0 || rows[i][0] != rows[i - 1][0] || rows[i][1] != rows[i - 1][1];
        if (newPe)
          routerColors = 0;
        if (newPe || rows[i][2] != rows[i - 1][2])
          stats.maxColorsPerRouter = std::max(stats.maxColorsPerRouter, ++routerColors);
      }
      stats.entries += rows.size();
      auto type = RankedTensorType::get({int64_t(rows.size()), 5}, b.getI32Type());
      wafer::RoutesOp::create(builder, module.getLoc(), waferIndex,
                              DenseIntElementsAttr::get(type, ArrayRef<int32_t>(flat)));
    };
    // Wafers route independently once the links are chosen: a batch of
    // them at a time in parallel, each into its own result, merged in wafer
    // order (the output does not depend on the threads; a batch bounds the
    // memory).
    struct WaferResult {
      Stats stats;
      std::vector<Group> groups;
      std::vector<std::array<int32_t, 5>> rows;
    };
    std::vector<int64_t> order(wafers.begin(), wafers.end());
    size_t batch = std::max<size_t>(1, ctx->isMultithreadingEnabled() ? ctx->getNumThreads() : 1);
    for (size_t first = 0; first < order.size(); first += batch) {
      size_t count = std::min(batch, order.size() - first);
      std::vector<WaferResult> results(count);
      ParallelDiagnosticHandler diagnostics(ctx);
      LogicalResult routed = failableParallelForEachN(ctx, 0, count, [&](size_t i) {
        diagnostics.setOrderIDForThread(i);
        wafer::DefectGrid defects = wafer::DefectGrid::forWafer(
            wafer::getDefects(module), arch->getWidth(), arch->getHeight(), order[first + i]);
        // When the links cannot carry the streams within the budget (the
        // slowest kernel's cycles per token), the links bound the throughput
        // instead: the budget grows until the wafer routes, and the figures
        // say so. Running out of colors is an error at any budget.
        LogicalResult ok = failure();
        for (double b = budget;; b *= 1.25) {
          WaferRouter router(order[first + i], *arch, defects, *graph, plan, maxIterations, b,
                             extraRounds);
          router.quietOverBudget = growBudget && b > 0 && b < std::max(16 * budget, allWords);
          router.parallel = count == 1; // else the wafers share the threads
          results[i].stats = Stats();
          ok = router.run(results[i].stats);
          if (succeeded(ok)) {
            results[i].stats.budget = b;
            results[i].rows = router.table();
            results[i].groups = router.takeGroups();
          }
          if (succeeded(ok) || !router.overBudget || !router.quietOverBudget)
            break;
        }
        diagnostics.eraseOrderIDForThread();
        return ok;
      });
      if (failed(routed))
        return signalPassFailure();
      for (auto [i, result] : llvm::enumerate(results))
        addWafer(order[first + i], result.stats, result.groups, result.rows);
    }

    // The links: [src_wafer, W-1, y, color there, next wafer, 0, y, color there].
    std::vector<std::array<int32_t, 8>> links;
    std::map<std::pair<int64_t, int64_t>, int64_t> perLink; // (wafer, row) -> streams
    int32_t east = int32_t(arch->getWidth() - 1);
    for (const auto &[key, row] : plan.exitRow) {
      auto [stream, from] = key;
      int64_t to = plan.next(from);
      links.push_back({int32_t(from), east, int32_t(row), int32_t(streamColor.at({stream, from})),
                       int32_t(to), 0, int32_t(row), int32_t(streamColor.at({stream, to}))});
      ++perLink[{from, row}];
    }
    int64_t maxPerLink = 0;
    for (const auto &[key, n] : perLink)
      maxPerLink = std::max(maxPerLink, n);
    if (!links.empty()) {
      llvm::sort(links);
      std::vector<int32_t> flat;
      for (const auto &l : links)
        flat.insert(flat.end(), l.begin(), l.end());
      auto type = RankedTensorType::get({int64_t(links.size()), 8}, b.getI32Type());
      wafer::LinksOp::create(builder, module.getLoc(),
                             DenseIntElementsAttr::get(type, ArrayRef<int32_t>(flat)));
    }

    for (auto [i, k] : llvm::enumerate(graph->kernels)) {
      auto &list = colors[i];
      llvm::sort(list, [](NamedAttribute a, NamedAttribute c) {
        return a.getName().strref() < c.getName().strref();
      });
      list.erase(std::unique(list.begin(), list.end()), list.end());
      k.op->setAttr(wafer::kColorsAttrName, b.getDictionaryAttr(list));
    }
    stats.colors.erase(-1);
    SmallVector<NamedAttribute> figures = {
        b.getNamedAttr("total_length", b.getI64IntegerAttr(stats.totalLength)),
        b.getNamedAttr("max_length", b.getI64IntegerAttr(stats.maxLength)),
        b.getNamedAttr("max_colors_per_router", b.getI64IntegerAttr(stats.maxColorsPerRouter)),
        b.getNamedAttr("colors_used", b.getI64IntegerAttr(stats.colors.size())),
        b.getNamedAttr("max_link_load", b.getF64FloatAttr(stats.maxLinkLoad)),
        b.getNamedAttr(
            "mean_link_load",
            b.getF64FloatAttr(stats.loadedLinks ? stats.loadSum / stats.loadedLinks : 0.0)),
        b.getNamedAttr("link_budget",
                       b.getI64IntegerAttr(stats.budget > 0 ? int64_t(stats.budget) : -1)),
        b.getNamedAttr("groups", b.getI64IntegerAttr(stats.groups)),
        b.getNamedAttr("entries", b.getI64IntegerAttr(stats.entries)),
        b.getNamedAttr("iterations", b.getI64IntegerAttr(stats.iterations)),
        b.getNamedAttr("cross_wafer_streams", b.getI64IntegerAttr(plan.crossingStreams)),
        b.getNamedAttr("wafer_links", b.getI64IntegerAttr(perLink.size())),
        b.getNamedAttr("link_crossings", b.getI64IntegerAttr(links.size())),
        b.getNamedAttr("max_colors_per_link", b.getI64IntegerAttr(maxPerLink)),
    };
    module->setAttr(wafer::kRouteStatsAttrName, b.getDictionaryAttr(figures));
  }
};

} // namespace
