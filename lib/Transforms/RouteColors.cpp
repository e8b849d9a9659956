//===- RouteColors.cpp - colors for the routed groups of one wafer --------===//
//
// Part of --wsc-route (Router.h): after negotiation, each group on a wafer
// takes a color no group it shares a resource with has. The repair of the
// groups left over reroutes them, and lives with the routing in
// WaferRouter.cpp.
//
//===----------------------------------------------------------------------===//
#include "Router.h"

#include "llvm/ADT/STLExtras.h"

#include <set>
#include <tuple>

using namespace wsc::route;

/// DSATUR over the conflict graph; returns true when every group has a color.
bool WaferRouter::color(std::vector<int> &uncolored) {
  int n = groups.size();
  std::vector<std::pair<int32_t, int32_t>> uses; // (resource, group)
  // Only resources shared by two groups make edges (every group is
  // committed here, so occ counts them); most are used by one.
  for (int gi = 0; gi < n; ++gi)
    for (int32_t r : groups[gi].res)
      if (occ[r] > 1)
        uses.push_back({r, gi});
  llvm::sort(uses);
  std::vector<std::vector<int32_t>> adj(n);
  for (size_t i = 0; i < uses.size();) {
    size_t j = i;
    while (j < uses.size() && uses[j].first == uses[i].first)
      ++j;
    for (size_t a = i; a < j; ++a)
      for (size_t b = a + 1; b < j; ++b) {
        adj[uses[a].second].push_back(uses[b].second);
        adj[uses[b].second].push_back(uses[a].second);
      }
    i = j;
  }
  for (auto &a : adj) {
    llvm::sort(a);
    a.erase(std::unique(a.begin(), a.end()), a.end());
  }
  std::vector<uint64_t> taken(n, 0);
  std::vector<int> sat(n, 0);
  // Channels first (their hops are fixed, so no repair can move them out
  // of the way: a column chain shares links with every stream spread
  // along its columns), then the highest saturation, the highest degree
  // and the earliest group.
  auto key = [&](int gi) {
    return std::make_tuple(groups[gi].isStream, -sat[gi], -int(adj[gi].size()), gi);
  };
  std::set<std::tuple<bool, int, int, int>> ready;
  for (int gi = 0; gi < n; ++gi) {
    groups[gi].color = -1;
    ready.insert(key(gi));
  }
  uncolored.clear();
  while (!ready.empty()) {
    int gi = std::get<3>(*ready.begin());
    ready.erase(ready.begin());
    int c = 0;
    while (c < K && (taken[gi] >> c & 1))
      ++c;
    if (c == K) {
      uncolored.push_back(gi);
      continue;
    }
    groups[gi].color = c;
    for (int32_t o : adj[gi]) {
      if (groups[o].color >= 0 || (taken[o] >> c & 1))
        continue;
      auto it = ready.find(key(o));
      if (it == ready.end())
        continue; // already given up on
      ready.erase(it);
      taken[o] |= uint64_t(1) << c;
      ++sat[o];
      ready.insert(key(o));
    }
  }
  return uncolored.empty();
}
